"""cronctl claim in pods of the real control plane: an Allow CronJob's Job and a `kubectl create job
--from` for the same occurrence make one effect, and the second Job completes as a refused duplicate.

The pods run on the pod simulator's **exec mode** (``sim.cronctl.dev/exec: "true"``): the
container's command (``cronctl claim ... -- sh -c ...``) runs as a real process on this host with the
pod's environment (the downward API values included), and its exit code and output are the pod's.
That is not a kubelet (no image, no isolation): docs/commands/claim.md says so.
"""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from cluster_support import (create_cronjob, cronctl, early_in_a_minute, read_job, run_kubectl, slot_job_name,
                             terminal, wait_for, wait_for_slot_job)

pytestmark = [pytest.mark.cluster]


def claim_container(kubeconfig: str, ledger: str, effects: Path) -> dict[str, Any]:
    """A container whose command is cronctl claim around a one-line effect (the token it ran with)."""
    script = f'echo "$CRONCTL_OCCURRENCE $CRONCTL_FENCING_TOKEN $CRONCTL_ATTEMPT" >> {effects}; sleep 4'
    return {"name": "main", "image": "registry.example/billing:1",
            "command": [sys.executable, "-m", "cronctl", "claim", "--ledger", ledger, "--wait",
                        "--manual-occurrence", "latest", "--", "sh", "-c", script],
            "env": [{"name": "KUBECONFIG", "value": kubeconfig},  # the pod's ServiceAccount, on a real node
                    {"name": "CRONCTL_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
                    {"name": "CRONCTL_JOB_NAME", "valueFrom": {"fieldRef": {
                        "fieldPath": "metadata.labels['batch.kubernetes.io/job-name']"}}},
                    {"name": "CRONCTL_POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]}


def test_an_allow_cronjob_and_a_manual_job_for_one_occurrence_make_one_effect(
        k8s: Any, kubeconfig: str, namespace: str, tmp_path: Path) -> None:
    ledger = f"sqlite:///{tmp_path / 'ledger.sqlite'}"
    effects = tmp_path / "effects"
    template = {"spec": {"backoffLimit": 0, "template": {
        "metadata": {"annotations": {"sim.cronctl.dev/exec": "true"}},
        "spec": {"restartPolicy": "Never", "containers": [claim_container(kubeconfig, ledger, effects)]}}}}
    start = early_in_a_minute(lo=1, hi=40)
    create_cronjob(k8s, namespace, "billing", schedule="*/1 * * * *", policy="Allow", job_template=template)
    slot = start + timedelta(minutes=1)
    job = wait_for_slot_job(k8s, namespace, "billing", slot, timeout=120) or {}
    # no third Job: the controller stops; a manual Job of a suspended CronJob still runs
    k8s.batch.patch_namespaced_cron_job("billing", namespace, {"spec": {"suspend": True}})
    run_kubectl(kubeconfig, "-n", namespace, "create", "job", "billing-by-hand", "--from=cronjob/billing")
    done = {n: wait_for(f"job {n} to finish", lambda n=n: terminal(read_job(k8s, namespace, n) or {}), timeout=150)
            for n in (job["metadata"]["name"], "billing-by-hand")}
    assert done == {slot_job_name("billing", slot): "Complete", "billing-by-hand": "Complete"}
    occ = slot.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert effects.read_text().splitlines() == [f"{occ} 1 1"]  # one effect, by token 1
    # either pod may claim first (two interpreters starting at once): one ran COMMAND, the other
    # waited (--wait) and was refused as a duplicate, exit 0
    scheduled_job = slot_job_name("billing", slot)
    logs = {n: run_kubectl(kubeconfig, "-n", namespace, "logs", f"job/{n}").stdout
            for n in (scheduled_job, "billing-by-hand")}
    refused = [n for n, text in logs.items() if "refused as a duplicate, COMMAND not run" in text]
    assert len(refused) == 1 and "already done by job" in logs[refused[0]], logs
    [ran] = [n for n in logs if n not in refused]
    assert "claimed as attempt 1, fencing token 1" in logs[ran], logs
    from cronctl.ledger import claimstore, store

    led = store.open_ledger(ledger)
    try:
        [row] = claimstore.rows(led, [f"{namespace}/billing"])
    finally:
        led.close()
    assert (row["status"], row["attempt"], row["refusals"]) == ("done", 1, 1)
    assert row["holder_job"] == f"{namespace}/{ran}"
    assert row["last_refused_by"].startswith(f"job {namespace}/{refused[0]} pod {refused[0]}-")

    # the readers: the slot's two Jobs are one effect, beside the Job verdict
    import json

    h = cronctl(["history", "billing", "-n", namespace, "--ledger", ledger, "--since", "10m", "-o", "json"],
                kubeconfig)
    assert h.returncode == 0, h.stderr
    hist = json.loads(h.stdout)["cronjobs"][0]
    [slot_row] = [r for r in hist["slots"] if r["slot"] == occ]
    # the judge sees the controller's Job for the slot and the kubectl one as a manual run beside it ...
    assert slot_row["jobs"] == [scheduled_job] and "billing-by-hand" in [m["job"] for m in hist["manual_runs"]]
    # ... and the ledger says the two were one effect
    assert slot_row["effect"]["effect"] == "refused-duplicate" and slot_row["effect"]["refusals"] == 1
    st = cronctl(["status", "billing", "-n", namespace, "--ledger", ledger, "-o", "json"], kubeconfig)
    assert st.returncode == 0, st.stderr
    assert [r["effect"]["effect"] for r in json.loads(st.stdout)["recent_slots"] if r["slot"] == occ] == [
        "refused-duplicate"]
    rc = cronctl(["reconcile", "billing", "-n", namespace, "--ledger", ledger, "--since", "10m", "-o", "json"],
                 kubeconfig)
    assert rc.returncode in (0, 8), rc.stderr
    gaps = json.loads(rc.stdout)["gaps"]
    assert occ not in [g["occurrence"] for g in gaps] and {g["effect"] for g in gaps} <= {"none"}
