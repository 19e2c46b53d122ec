"""`cronctl wait`: re-attach to a manual run whose process is gone, on the real control plane.
The run-manual process is SIGKILLed right after it created the Job (the test-only hook, as kill -9
would); `wait` follows the Job to its end, saves the logs and finishes the run: restored after
success, left suspended with step=failed after a failure. Ctrl-C (SIGINT) while waiting, for
run-manual and for wait, says the Job is still running and keeps the logs so far."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from cluster_support import cronctl, cronjob_body, read_cronjob, record_annotations, start_cronctl, wait_for

pytestmark = [pytest.mark.cluster]


def test_wait_follows_a_run_whose_process_died_and_restores_after_success(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path) -> None:
    k8s.batch.create_namespaced_cron_job(namespace, cronjob_body("orphan", duration=45, log="line from the job"))
    r = cronctl(["run-manual", "orphan", "-n", namespace, "--yes", "--settle", "1s"], kubeconfig,
                run_dir=tmp_path / "a", CRONCTL_TEST_KILL_AFTER_STEP="created")
    assert r.returncode == -9, (r.returncode, r.stderr)
    run_id = record_annotations(read_cronjob(k8s, namespace, "orphan"))["cronctl.dev/run-id"]
    r = cronctl(["wait", "orphan", "-n", namespace, "-o", "json"], kubeconfig, run_dir=tmp_path / "w")
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert rec["kind"] == "wait" and rec["run_id"] == run_id and rec["outcome"] == "succeeded", rec
    assert "is still running" in r.stderr
    logs = [Path(rec["run_dir"]) / x["file"] for x in rec["logs"]]
    assert logs and any("line from the job" in p.read_text() for p in logs), rec["logs"]
    cj = read_cronjob(k8s, namespace, "orphan")
    assert cj["spec"]["suspend"] is False and not record_annotations(cj)
    # nothing holds it any more
    r = cronctl(["wait", "orphan", "-n", namespace], kubeconfig, run_dir=tmp_path / "w2")
    assert r.returncode == 3 and "nothing to wait for" in r.stderr


def test_wait_leaves_a_failed_run_suspended_and_refuses_a_run_whose_job_was_never_created(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path) -> None:
    k8s.batch.create_namespaced_cron_job(namespace, cronjob_body("bad", duration=3, exit_code=2))
    r = cronctl(["run-manual", "bad", "-n", namespace, "--yes", "--settle", "1s"], kubeconfig,
                run_dir=tmp_path / "a", CRONCTL_TEST_KILL_AFTER_STEP="created")
    assert r.returncode == -9, r.stderr
    r = cronctl(["wait", "bad", "-n", namespace, "-o", "json"], kubeconfig, run_dir=tmp_path / "w")
    assert r.returncode == 1, r.stderr
    assert json.loads(r.stdout)["outcome"] == "failed"
    cj = read_cronjob(k8s, namespace, "bad")
    assert cj["spec"]["suspend"] is True and record_annotations(cj)["cronctl.dev/step"] == "failed"
    k8s.batch.create_namespaced_cron_job(namespace, cronjob_body("early", duration=3))
    r = cronctl(["run-manual", "early", "-n", namespace, "--yes", "--settle", "1s"], kubeconfig,
                run_dir=tmp_path / "b", CRONCTL_TEST_KILL_AFTER_STEP="suspended")
    assert r.returncode == -9, r.stderr
    before = read_cronjob(k8s, namespace, "early")
    r = cronctl(["wait", "early", "-n", namespace], kubeconfig, run_dir=tmp_path / "w3")
    assert r.returncode == 3 and "was never created" in r.stderr and "cronctl restore" in r.stderr, r.stderr
    assert read_cronjob(k8s, namespace, "early")["metadata"]["resourceVersion"] == \
        before["metadata"]["resourceVersion"]


def sigint_after(args: list[str], kubeconfig: str, run_dir: Path, marker: str) -> subprocess.CompletedProcess[str]:
    """Start cronctl, send SIGINT once ``marker`` is on its stderr (as Ctrl-C would), collect it."""
    p = start_cronctl(args, kubeconfig, run_dir=run_dir)
    assert p.stderr is not None
    seen = []
    deadline = time.monotonic() + 120
    for line in p.stderr:
        seen.append(line)
        if marker in line:
            time.sleep(2)
            p.send_signal(signal.SIGINT)
            break
        assert time.monotonic() < deadline, "".join(seen)
    out, rest = p.communicate(timeout=60)
    return subprocess.CompletedProcess(args, p.returncode, out, "".join(seen) + rest)


def test_ctrl_c_says_the_job_is_still_running_and_wait_picks_it_up(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path) -> None:
    k8s.batch.create_namespaced_cron_job(namespace, cronjob_body("slow", duration=40, log="early line"))
    r = sigint_after(["run-manual", "slow", "-n", namespace, "--yes", "--settle", "1s"], kubeconfig,
                     tmp_path / "a", "created Job")
    assert r.returncode == 130, (r.returncode, r.stderr)
    assert "is still running" in r.stderr and "cronctl wait slow" in r.stderr, r.stderr
    # said once: the error line (stdout used to repeat it as "interrupted: interrupted: ...")
    assert (r.stdout + r.stderr).count("is still running") == 1 and "interrupted: interrupted" not in r.stdout, \
        (r.stdout, r.stderr)
    assert "run record: " in r.stdout
    assert read_cronjob(k8s, namespace, "slow")["spec"]["suspend"] is True
    saved = list((tmp_path / "a").glob("*/logs/*/main.log"))
    assert saved and "early line" in saved[0].read_text(), saved
    # wait, interrupted in turn: still running, nothing changed, the logs so far kept
    r = sigint_after(["wait", "slow", "-n", namespace], kubeconfig, tmp_path / "w", "is still running")
    assert r.returncode == 130 and "is still running" in r.stderr, r.stderr
    assert read_cronjob(k8s, namespace, "slow")["spec"]["suspend"] is True
    # and wait again, to the end
    r = cronctl(["wait", "slow", "-n", namespace, "-o", "json"], kubeconfig, run_dir=tmp_path / "w2")
    assert r.returncode == 0, r.stderr
    wait_for("the restore", lambda: read_cronjob(k8s, namespace, "slow")["spec"]["suspend"] is False or None, 10)
