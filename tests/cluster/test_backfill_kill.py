"""A backfill SIGKILLed at each step before its first slot is done (the test-only hook, as
`kill -9` would): `status` explains the state, a second backfill is refused while the record holds
the CronJob, `restore` finishes, and the same command then runs every slot exactly once (a slot
whose Job was already created is skipped, not run twice). The kill after a slot is done is in
test_backfill.py (compat); these run on the default version only."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from cluster_support import (cronctl, cronjob_body, list_jobs, minute_floor, read_cronjob, run_record, sleep_until,
                             terminal, wait_for)

pytestmark = [pytest.mark.cluster]
UTC = timezone.utc


def z(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def jobs_by_slot(k8s: Any, ns: str) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for j in list_jobs(k8s, ns):
        at = (j["metadata"].get("annotations") or {}).get("cronctl.dev/occurrence")
        if at:
            out.setdefault(at, []).append(j)
    return out


@pytest.mark.parametrize("step", ["suspended", "verified", "created"])
def test_a_backfill_killed_at_each_step_is_explained_finished_by_restore_and_resumed_by_the_same_command(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path, step: str) -> None:
    # suspended from the start: the controller makes no Job; two slots pass
    k8s.batch.create_namespaced_cron_job(namespace, cronjob_body("k", schedule="*/1 * * * *", policy="Forbid",
                                                                duration=1, suspend=True))
    created = datetime.strptime(read_cronjob(k8s, namespace, "k")["metadata"]["creationTimestamp"],
                                "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    slots = [minute_floor(created) + timedelta(minutes=i) for i in (1, 2)]
    sleep_until(slots[-1] + timedelta(seconds=3))
    span = ["--from", z(slots[0]), "--to", z(slots[-1])]
    r = cronctl(["backfill", "k", "-n", namespace, *span, "--yes", "--settle", "1s"], kubeconfig,
                run_dir=tmp_path / "a", CRONCTL_TEST_KILL_AFTER_STEP=step)
    assert r.returncode == -9, (r.returncode, r.stderr)
    cj = read_cronjob(k8s, namespace, "k")
    ann = cj["metadata"]["annotations"]
    assert cj["spec"]["suspend"] is True and ann.get("cronctl.dev/step") == step, ann
    s = cronctl(["status", "k", "-n", namespace, "-o", "json"], kubeconfig)
    assert s.returncode == 0, s.stderr
    assert json.loads(s.stdout)["record"]["step"] == step
    r = cronctl(["backfill", "k", "-n", namespace, *span, "--yes"], kubeconfig, run_dir=tmp_path / "b")
    assert r.returncode == 3 and "held by run" in r.stderr, r.stderr
    made = jobs_by_slot(k8s, namespace)
    assert list(made) == ([z(slots[0])] if step == "created" else []), list(made)
    if made:  # a Job created before the kill runs to its end on its own
        wait_for("the Job created before the kill to finish",
                 lambda: all(terminal(j) for j in list_jobs(k8s, namespace)) or None, 90)
    r = cronctl(["restore", "k", "-n", namespace, "--yes"], kubeconfig)
    assert r.returncode == 0, r.stderr
    assert read_cronjob(k8s, namespace, "k")["spec"]["suspend"] is True  # suspended before the backfill
    r = cronctl(["backfill", "k", "-n", namespace, *span, "--yes", "--settle", "1s"], kubeconfig,
                run_dir=tmp_path / "c")
    assert r.returncode == 0, r.stderr
    rec = run_record(tmp_path / "c")
    ran_before = [z(slots[0])] if step == "created" else []
    assert rec["done"] == [z(t) for t in slots if z(t) not in ran_before], rec["done"]
    assert [x["slot"] for x in rec["skipped"]] == ran_before
    after = jobs_by_slot(k8s, namespace)
    assert sorted(after) == [z(t) for t in slots] and all(len(v) == 1 for v in after.values()), after
