"""A run-manual process killed (SIGKILL) after each step: status explains, restore finishes.

Uses the test-only hook ``CRONCTL_TEST_KILL_AFTER_STEP=<step>`` (cronctl/cli/runtime.py): the
process SIGKILLs itself right after that step, so no cleanup code of ours can run — the same as
``kill -9`` or a lost laptop at that moment.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cluster_support import (create_cronjob, cronctl, owned_jobs, read_cronjob, read_job, record_annotations,
                             run_record, terminal, wait_for)

pytestmark = pytest.mark.cluster


@pytest.mark.parametrize("step,suspended_before", [
    ("suspended", False), ("verified", False), ("job-made", False), ("created", False), ("created", True),
    ("finished", False), ("restored", False),
])
def test_a_run_killed_after_a_step_is_explained_by_status_and_finished_by_restore(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path, step: str, suspended_before: bool) -> None:
    # killed after "created", the Job must outlive two cronctl starts (status, restore) on a loaded machine
    # job-made: the Job exists, the record on the CronJob still says "verified"
    in_flight = step in ("job-made", "created")
    cj = create_cronjob(k8s, namespace, "killed", duration=45 if in_flight else 12, suspend=suspended_before,
                        schedule="0 0 1 1 *")  # yearly: the controller itself creates nothing meanwhile
    r = cronctl(["run-manual", "killed", "-n", namespace, "--yes", "--settle", "1s"], kubeconfig, run_dir=tmp_path,
                CRONCTL_TEST_KILL_AFTER_STEP=step)
    assert r.returncode == -9, (r.returncode, r.stderr)

    local = run_record(tmp_path)  # the local record survives the kill, up to the last step
    assert local["steps"][-1]["step"] == {"job-made": "verified"}.get(step, step) or step == "finished"
    after_kill = read_cronjob(k8s, namespace, "killed")
    status = cronctl(["status", "killed", "-n", namespace, "-o", "json"], kubeconfig)
    assert status.returncode == 0, status.stderr
    s = json.loads(status.stdout)

    if step == "restored":
        assert record_annotations(after_kill) == {}
        assert after_kill["spec"]["suspend"] is suspended_before
        assert s["record"] is None
        rs = cronctl(["restore", "killed", "-n", namespace, "--yes"], kubeconfig)
        assert rs.returncode == 0 and "nothing to restore" in rs.stdout
        return

    assert after_kill["spec"]["suspend"] is True
    assert s["record"]["run_id"] == local["run_id"]
    assert s["record"]["original_suspend"] is suspended_before
    assert f"manual run {local['run_id']}" in s["explanation"]
    if step in ("suspended", "verified"):
        assert s["record"]["step"] == step
        assert "was never created" in s["explanation"]
        assert read_job(k8s, namespace, "killed-manual") is None
    elif in_flight:
        assert s["record"]["step"] == ("verified" if step == "job-made" else "created")
        assert "still running" in s["explanation"] and s["unfinished"] == ["killed-manual"]
        if not suspended_before:
            # un-suspending now would let a scheduled Job start beside it: refused, nothing changed
            rs = cronctl(["restore", "killed", "-n", namespace, "--yes"], kubeconfig)
            assert rs.returncode == 3 and "killed-manual" in rs.stderr
            assert read_cronjob(k8s, namespace, "killed")["spec"]["suspend"] is True
        wait_for("the manual Job to finish", lambda: terminal(read_job(k8s, namespace, "killed-manual") or {}), 120)
    else:  # finished: the Job completed and logs were saved, the restore never happened
        assert "only the restore is left" in s["explanation"]
        assert local.get("logs"), local

    rs = cronctl(["restore", "killed", "-n", namespace, "--yes"], kubeconfig)
    assert rs.returncode == 0, rs.stderr
    final = read_cronjob(k8s, namespace, "killed")
    assert final["spec"]["suspend"] is suspended_before
    assert record_annotations(final) == {}
    # nothing lost: the manual Job (if it was created) is still there with its outcome
    names = [j["metadata"]["name"] for j in owned_jobs(k8s, namespace, cj)]
    assert names == ([] if step in ("suspended", "verified") else ["killed-manual"])
