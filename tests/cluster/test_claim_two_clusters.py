"""Two clusters, one effect: the same CronJob in two local control planes, both claiming against one
PostgreSQL ledger, performs each occurrence's effect once; with one control plane stopped, the
other still performs every occurrence. Pods run on the pod simulator's exec mode (the container's
command as a real process with the pod's environment: docs/commands/claim.md says so)."""

from __future__ import annotations

import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from cluster_support import (create_cronjob, early_in_a_minute, private_control_plane, read_job, slot_job_name,
                             terminal, wait_for, wait_for_slot_job)

pytestmark = [pytest.mark.cluster]


def template(kubeconfig: str, ledger: str, effects: Path, who: str) -> dict[str, Any]:
    script = f'echo "$CRONCTL_OCCURRENCE {who}" >> {effects}; sleep 2'
    return {"spec": {"backoffLimit": 0, "template": {
        "metadata": {"annotations": {"sim.cronctl.dev/exec": "true"}},
        "spec": {"restartPolicy": "Never", "containers": [{
            "name": "main", "image": "registry.example/billing:1",
            "command": [sys.executable, "-m", "cronctl", "claim", "--ledger", ledger, "--workflow", "dr/billing",
                        "--wait", "--", "sh", "-c", script],
            "env": [{"name": "KUBECONFIG", "value": kubeconfig},
                    {"name": "CRONCTL_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
                    {"name": "CRONCTL_JOB_NAME", "valueFrom": {"fieldRef": {
                        "fieldPath": "metadata.labels['batch.kubernetes.io/job-name']"}}}]}]}}}}


def finished(k8s: Any, ns: str, slot: datetime) -> str | None:
    return terminal(read_job(k8s, ns, slot_job_name("billing", slot)) or {})


def test_the_same_cronjob_in_two_clusters_makes_each_occurrence_once_and_survives_losing_one(
        k8s: Any, kubeconfig: str, namespace: str, postgres_url: str, tmp_path: Path) -> None:
    effects = tmp_path / "effects"
    with private_control_plane("cronctl-claim-dr-") as (info, k8s_b):
        k8s_b.core.create_namespace({"metadata": {"name": namespace}})
        wait_for("the default ServiceAccount in the second cluster",
                 lambda: any(a.metadata.name == "default" for a in k8s_b.core.list_namespaced_service_account(
                     namespace).items), timeout=60)
        start = early_in_a_minute(lo=1, hi=40)
        create_cronjob(k8s, namespace, "billing", schedule="*/1 * * * *", policy="Allow",
                       job_template=template(kubeconfig, postgres_url, effects, "a"))
        create_cronjob(k8s_b, namespace, "billing", schedule="*/1 * * * *", policy="Allow",
                       job_template=template(str(info.kubeconfig), postgres_url, effects, "b"))
        both = [start + timedelta(minutes=m) for m in (1, 2)]
        for slot in both:
            for c in (k8s, k8s_b):
                wait_for_slot_job(c, namespace, "billing", slot, timeout=150)
                wait_for(f"slot {slot:%H:%M} to finish", lambda c=c, slot=slot: finished(c, namespace, slot),
                         timeout=150)
    # the second control plane is gone; the first goes on alone
    alone = both[-1] + timedelta(minutes=1)
    wait_for_slot_job(k8s, namespace, "billing", alone, timeout=150)
    assert wait_for("the slot run by one cluster alone", lambda: finished(k8s, namespace, alone), timeout=150) == \
        "Complete"
    k8s.batch.patch_namespaced_cron_job("billing", namespace, {"spec": {"suspend": True}})
    time.sleep(1)
    got = [line.split() for line in effects.read_text().splitlines()]
    by_slot: dict[str, list[str]] = {}
    for occ, who in got:
        by_slot.setdefault(occ, []).append(who)
    z = [t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ") for t in (*both, alone)]
    assert all(len(by_slot.get(t, [])) == 1 for t in z), by_slot  # every occurrence once
    assert by_slot[z[-1]] == ["a"]
