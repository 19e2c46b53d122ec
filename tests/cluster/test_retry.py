"""run-manual --retry on the real control plane: a failing Job retried twice under one suspension,
the attempts linked, the slot judged as run once (after two failed attempts)."""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from cluster_support import (RUNS_ANNOTATION, create_cronjob, cronctl, read_cronjob, read_job,
                             record_annotations, terminal)

pytestmark = [pytest.mark.cluster, pytest.mark.compat]  # run on every supported version


def _set_exit_code(k8s: Any, ns: str, name: str, code: int) -> None:
    k8s.batch.patch_namespaced_cron_job(name, ns, {"spec": {"jobTemplate": {"spec": {"template": {"metadata": {
        "annotations": {"sim.cronctl.dev/exit-code": str(code)}}}}}}})


def test_a_failed_run_is_retried_twice_without_un_suspending_and_the_slot_ran_once(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path) -> None:
    # suspended from the start, so the controller itself makes no Job; the run stands for the latest slot
    create_cronjob(k8s, namespace, "payout", schedule="*/1 * * * *", suspend=True, exit_code=3, duration=1)
    # the latest slot must come after the creation (history judges from the creation on)
    time.sleep(62 - datetime.now(timezone.utc).second)
    r1 = cronctl(["run-manual", "payout", "-n", namespace, "--yes", "--settle", "1s", "--occurrence", "latest",
                  "--reason", "INC-9 payout", "-o", "json"], kubeconfig, run_dir=tmp_path / "1")
    assert r1.returncode == 1, r1.stderr
    first = json.loads(r1.stdout)
    slot_job = first["job_name"]
    assert "exit code 3" in r1.stderr and "--retry" in r1.stderr  # says the code and the way on
    assert any(e["exit_code"] == 3 for e in first["exit_codes"])
    cj = read_cronjob(k8s, namespace, "payout")
    assert cj["spec"]["suspend"] is True and record_annotations(cj)["cronctl.dev/step"] == "failed"
    assert "exit code 3" in record_annotations(cj)["cronctl.dev/note"]
    s = json.loads(cronctl(["status", "payout", "-n", namespace, "-o", "json"], kubeconfig).stdout)
    assert "--retry" in s["explanation"] and "FAILED" in s["explanation"]

    # attempt 2 fails again: the same record chain, the CronJob never un-suspended
    r2 = cronctl(["run-manual", "payout", "-n", namespace, "--yes", "--settle", "1s", "--retry", "-o", "json"],
                 kubeconfig, run_dir=tmp_path / "2")
    assert r2.returncode == 1, r2.stderr
    second = json.loads(r2.stdout)
    assert second["job_name"] == f"{slot_job}-r2" and second["retry_of"] == {
        "run_id": first["run_id"], "job": slot_job, "attempt": 2}
    assert second["occurrence"] == first["occurrence"] and second["reason"] == "INC-9 payout"
    cj = read_cronjob(k8s, namespace, "payout")
    assert cj["spec"]["suspend"] is True and record_annotations(cj)["cronctl.dev/run-id"] == second["run_id"]
    assert record_annotations(cj)["cronctl.dev/original-suspend"] == "true"  # the first run's value, kept
    job2 = read_job(k8s, namespace, f"{slot_job}-r2")
    assert job2 is not None and job2["metadata"]["annotations"]["cronctl.dev/retry-of"] == slot_job

    # the fix is deployed; attempt 3 succeeds, marks the slot done and restores the first run's value
    _set_exit_code(k8s, namespace, "payout", 0)
    r3 = cronctl(["run-manual", "payout", "-n", namespace, "--yes", "--settle", "1s", "--retry", "-o", "json"],
                 kubeconfig, run_dir=tmp_path / "3")
    assert r3.returncode == 0, r3.stderr
    third = json.loads(r3.stdout)
    assert third["job_name"] == f"{slot_job}-r3" and third["retry_of"]["job"] == f"{slot_job}-r2"
    assert terminal(read_job(k8s, namespace, f"{slot_job}-r3") or {}) == "Complete"
    cj = read_cronjob(k8s, namespace, "payout")
    assert cj["spec"]["suspend"] is True and record_annotations(cj) == {}
    assert cj["status"]["lastScheduleTime"] == first["occurrence"]
    runs = json.loads(cj["metadata"]["annotations"][RUNS_ANNOTATION])
    assert [(x["run_id"], x["last_step"]) for x in runs] == [
        (first["run_id"], "failed"), (second["run_id"], "failed"), (third["run_id"], "succeeded")]

    # a fourth --retry has nothing to retry
    r4 = cronctl(["run-manual", "payout", "-n", namespace, "--yes", "--retry"], kubeconfig, run_dir=tmp_path / "4")
    assert r4.returncode == 3 and "no run record" in r4.stderr

    # history: the slot ran once, after two failed attempts; not a duplicate
    h = json.loads(cronctl(["history", "payout", "-n", namespace, "-o", "json"], kubeconfig).stdout)
    (row,) = [x for x in h["cronjobs"][0]["slots"] if x["slot"] == first["occurrence"]]
    assert row["verdict"] == "ran" and "2 failed attempt(s)" in row["reason"], row
    assert row["jobs"] == [slot_job, f"{slot_job}-r2", f"{slot_job}-r3"]
