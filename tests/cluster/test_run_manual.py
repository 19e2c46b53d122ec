"""run-manual on the real control plane: the Job it makes, the outcomes and their exit codes."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest
import yaml

from cluster_support import (create_cronjob, cronctl, cronctl_env, list_jobs, on_a_terminal, owned_jobs,
                             read_cronjob, read_job, record_annotations, run_kubectl, run_record, start_cronctl,
                             terminal, wait_for)

pytestmark = [pytest.mark.cluster, pytest.mark.compat]  # run on every supported version


def test_a_successful_run_creates_kubectls_job_saves_logs_and_restores_suspend(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path) -> None:
    cj = create_cronjob(k8s, namespace, "orders", duration=4, log="synced 12 orders")
    r = cronctl(["run-manual", "orders", "-n", namespace, "--yes", "--settle", "2s", "--reason", "catch up",
                 "--occurrence", "2026-12-02T14:10:00+03:00", "--ad-hoc-occurrence", "-o", "json"], kubeconfig, run_dir=tmp_path)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["outcome"] == "succeeded" and out["exit_code"] == 0

    job = read_job(k8s, namespace, "orders-manual")
    assert job is not None and terminal(job) == "Complete"
    m = job["metadata"]
    tmpl = cj["spec"]["jobTemplate"]
    # docs/SEMANTICS.md §5: kubectl create job --from=cronjob: instantiate=manual + template annotations
    assert m["annotations"]["cronjob.kubernetes.io/instantiate"] == "manual"
    assert m["annotations"]["team"] == "integrations"
    assert "batch.kubernetes.io/cronjob-scheduled-timestamp" not in m["annotations"]
    assert {k: m["labels"][k] for k in ("app", "tier")} == tmpl["metadata"]["labels"]
    assert m["ownerReferences"] == [{"apiVersion": "batch/v1", "kind": "CronJob", "name": "orders",
                                     "uid": cj["metadata"]["uid"], "controller": True}]
    # cronctl's own annotations
    assert m["annotations"]["cronctl.dev/run-id"] == out["run_id"]
    assert m["annotations"]["cronctl.dev/operator"] == out["operator"] != "unknown"
    assert m["annotations"]["cronctl.dev/reason"] == "catch up"
    assert m["annotations"]["cronctl.dev/occurrence"] == "2026-12-02T11:10:00Z"
    pod_spec = job["spec"]["template"]["spec"]
    for c in pod_spec["initContainers"] + pod_spec["containers"]:
        assert {"name": "CRONCTL_OCCURRENCE", "value": "2026-12-02T11:10:00Z"} in c["env"], c["name"]
    assert {"name": "MODE", "value": "sync"} in pod_spec["containers"][0]["env"]
    assert job["spec"]["backoffLimit"] == tmpl["spec"]["backoffLimit"]

    after = read_cronjob(k8s, namespace, "orders")
    assert after["spec"]["suspend"] is False
    assert record_annotations(after) == {}

    rec = run_record(tmp_path)
    assert rec == out
    run_dir = Path(rec["run_dir"])
    assert stat.S_IMODE(run_dir.stat().st_mode) == 0o700
    assert stat.S_IMODE((run_dir / "record.json").stat().st_mode) == 0o600
    logs = {(x["container"], x["previous"]): run_dir / x["file"] for x in rec["logs"]}
    assert set(logs) == {("prepare", False), ("main", False)}
    assert "synced 12 orders" in logs[("main", False)].read_text()
    for p in logs.values():
        assert stat.S_IMODE(p.stat().st_mode) == 0o600
        assert stat.S_IMODE(p.parent.stat().st_mode) == 0o700
    assert [s["step"] for s in rec["steps"]] == ["suspended", "verified", "created", "restored"]
    # measured: the suspension lasts the Job's run time plus the settle delay plus a little
    assert rec["suspended_beyond_job_seconds"] <= 2 + 5, rec["suspended_beyond_job_seconds"]
    # the wait watches: a handful of requests, not one per second of a polling loop
    assert rec["api_requests"] <= 40, rec["api_requests"]
    print(f"\nMEASURE suspended_beyond_job_seconds={rec['suspended_beyond_job_seconds']} "
          f"api_requests={rec['api_requests']} job={rec['job']}")


def test_a_failing_job_exits_1_stays_suspended_and_keeps_the_logs_of_both_attempts(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path) -> None:
    create_cronjob(k8s, namespace, "billing", duration=1, exit_code=1, backoff=1, log="upstream said 502")
    r = cronctl(["run-manual", "billing", "-n", namespace, "--yes", "--settle", "1s"], kubeconfig, run_dir=tmp_path)
    assert r.returncode == 1, r.stderr
    assert "failed" in r.stderr and "cronctl restore billing" in r.stderr and "cronctl bundle billing" in r.stderr

    cj = read_cronjob(k8s, namespace, "billing")
    assert cj["spec"]["suspend"] is True
    ann = record_annotations(cj)
    assert ann["cronctl.dev/step"] == "failed" and ann["cronctl.dev/original-suspend"] == "false"

    rec = run_record(tmp_path)
    assert rec["outcome"] == "failed" and rec["exit_code"] == 1
    main_logs = [x for x in rec["logs"] if x["container"] == "main"]
    assert len({x["pod"] for x in main_logs}) == 2, rec["logs"]  # backoffLimit 1: two pods
    for x in main_logs:
        assert "upstream said 502" in (Path(rec["run_dir"]) / x["file"]).read_text()

    st = cronctl(["status", "billing", "-n", namespace, "-o", "json"], kubeconfig)
    assert st.returncode == 0, st.stderr
    s = json.loads(st.stdout)
    assert s["record"]["step"] == "failed" and "FAILED" in s["explanation"]
    assert [j["outcome"] for j in s["jobs"]] == ["Failed"]

    rs = cronctl(["restore", "billing", "-n", namespace, "--yes"], kubeconfig)
    assert rs.returncode == 0, rs.stderr
    cj = read_cronjob(k8s, namespace, "billing")
    assert cj["spec"]["suspend"] is False and record_annotations(cj) == {}
    assert read_job(k8s, namespace, "billing-manual") is not None  # nothing deleted


def test_a_cronjob_suspended_before_the_run_stays_suspended_after_success(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path) -> None:
    create_cronjob(k8s, namespace, "paused", suspend=True, duration=1)
    r = cronctl(["run-manual", "paused", "-n", namespace, "--yes", "--settle", "1s"], kubeconfig, run_dir=tmp_path)
    assert r.returncode == 0, r.stderr
    cj = read_cronjob(k8s, namespace, "paused")
    assert cj["spec"]["suspend"] is True
    assert record_annotations(cj) == {}
    rec = run_record(tmp_path)
    assert rec["original_suspend"] is True and rec["restored_suspend"] is True
    assert "stays suspended" in rec["prediction"]["text"]


def test_dry_run_prints_the_job_and_changes_nothing(kubeconfig: str, namespace: str, k8s: Any,
                                                    tmp_path: Path) -> None:
    before = create_cronjob(k8s, namespace, "dry")
    r = cronctl(["run-manual", "dry", "-n", namespace, "--dry-run", "--occurrence", "2026-01-01T00:00:00Z",
                 "--ad-hoc-occurrence"],
                kubeconfig, run_dir=tmp_path)
    assert r.returncode == 0, r.stderr
    job = yaml.safe_load(r.stdout)
    assert job["kind"] == "Job" and job["metadata"]["name"] == "dry-manual"
    assert job["metadata"]["ownerReferences"][0]["uid"] == before["metadata"]["uid"]
    after = read_cronjob(k8s, namespace, "dry")
    assert after["spec"] == before["spec"] and record_annotations(after) == {}
    assert list_jobs(k8s, namespace) == []
    assert list(tmp_path.iterdir()) == []


def test_without_a_terminal_and_without_yes_it_refuses_and_changes_nothing(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path) -> None:
    create_cronjob(k8s, namespace, "ask")
    r = cronctl(["run-manual", "ask", "-n", namespace], kubeconfig, run_dir=tmp_path)
    assert r.returncode == 3
    assert "--yes" in r.stderr and "Traceback" not in r.stderr
    cj = read_cronjob(k8s, namespace, "ask")
    assert cj["spec"]["suspend"] is False and record_annotations(cj) == {}
    assert list_jobs(k8s, namespace) == []


def test_an_existing_job_of_that_name_stops_the_run_before_anything_changes(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path) -> None:
    create_cronjob(k8s, namespace, "named")
    k8s.batch.create_namespaced_job(namespace, {
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "named-manual"},
        "spec": {"template": {"spec": {"restartPolicy": "Never",
                                       "containers": [{"name": "c", "image": "busybox:1.36"}]}}}})
    r = cronctl(["run-manual", "named", "-n", namespace, "--yes", "--settle", "1s"], kubeconfig, run_dir=tmp_path)
    assert r.returncode == 3, r.stderr
    assert "named-manual already exists" in r.stderr
    cj = read_cronjob(k8s, namespace, "named")
    assert cj["spec"]["suspend"] is False and record_annotations(cj) == {}
    assert [j["metadata"]["name"] for j in list_jobs(k8s, namespace)] == ["named-manual"]


def _start_child(k8s: Any, ns: str, cj: dict[str, Any], name: str, duration: float) -> None:
    """A Job owned by the CronJob, as kubectl create job --from makes it (so it is not in .status.active)."""
    body = {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "annotations": {"cronjob.kubernetes.io/instantiate": "manual"},
                         "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob", "name": cj["metadata"]["name"],
                                              "uid": cj["metadata"]["uid"], "controller": True}]},
            "spec": {"backoffLimit": 0, "template": {
                "metadata": {"annotations": {"sim.cronctl.dev/duration-seconds": str(duration)}},
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox:1.36"}]}}}}
    k8s.batch.create_namespaced_job(ns, body)
    wait_for(f"job {name} to start", lambda: (read_job(k8s, ns, name) or {}).get("status", {}).get("active"), 30)


def test_an_unfinished_child_refuses_the_run_before_the_suspend(kubeconfig: str, namespace: str, k8s: Any,
                                                                 tmp_path: Path) -> None:
    # issue 10: --yes with a running child Job suspended and un-suspended before refusing (exit 3
    # promises nothing changed); the plan's read of the Jobs refuses it before any write now
    cj = create_cronjob(k8s, namespace, "busy", duration=1)
    _start_child(k8s, namespace, cj, "busy-fix", 60)
    r = cronctl(["run-manual", "busy", "-n", namespace, "--yes", "--settle", "1s"], kubeconfig, run_dir=tmp_path)
    assert r.returncode == 3, r.stderr
    assert "busy-fix" in r.stderr and "--wait-active" in r.stderr and "nothing was changed" in r.stderr
    after = read_cronjob(k8s, namespace, "busy")
    assert after["spec"]["suspend"] is False and record_annotations(after) == {}
    assert all(m.get("manager") != "cronctl" for m in after["metadata"].get("managedFields") or [])  # no write
    assert read_job(k8s, namespace, "busy-manual") is None
    assert list(tmp_path.iterdir()) == []  # not even a run directory


def test_wait_active_waits_for_the_running_child_then_runs(kubeconfig: str, namespace: str, k8s: Any,
                                                           tmp_path: Path) -> None:
    cj = create_cronjob(k8s, namespace, "later", duration=1)
    # long enough that cronctl starts (seconds on a loaded CI machine) while it still runs
    _start_child(k8s, namespace, cj, "later-fix", 20)
    r = cronctl(["run-manual", "later", "-n", namespace, "--yes", "--settle", "1s", "--wait-active",
                 "--timeout", "2m"], kubeconfig, run_dir=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "waiting for running Jobs to finish: later-fix" in r.stderr
    fix, manual = read_job(k8s, namespace, "later-fix"), read_job(k8s, namespace, "later-manual")
    assert fix and manual and terminal(fix) == "Complete" and terminal(manual) == "Complete"
    assert manual["status"]["startTime"] >= fix["status"]["completionTime"]


def test_a_timeout_exits_4_and_leaves_a_state_status_explains_and_restore_refuses_until_it_ends(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path) -> None:
    # runs past the timeout, the status and the first restore even on a loaded CI machine
    create_cronjob(k8s, namespace, "slow", duration=60)
    r = cronctl(["run-manual", "slow", "-n", namespace, "--yes", "--settle", "1s", "--timeout", "8s"], kubeconfig,
                run_dir=tmp_path)
    assert r.returncode == 4, r.stderr
    assert "cronctl status slow" in r.stderr
    cj = read_cronjob(k8s, namespace, "slow")
    assert cj["spec"]["suspend"] is True and record_annotations(cj)["cronctl.dev/step"] == "timeout"

    s = json.loads(cronctl(["status", "slow", "-n", namespace, "-o", "json"], kubeconfig).stdout)
    assert s["unfinished"] == ["slow-manual"] and "still running" in s["explanation"]

    rs = cronctl(["restore", "slow", "-n", namespace, "--yes"], kubeconfig)
    assert rs.returncode == 3 and "slow-manual" in rs.stderr and "still running" in rs.stderr
    assert read_cronjob(k8s, namespace, "slow")["spec"]["suspend"] is True

    wait_for("slow-manual to finish", lambda: terminal(read_job(k8s, namespace, "slow-manual") or {}), 120)
    rs = cronctl(["restore", "slow", "-n", namespace, "--yes"], kubeconfig)
    assert rs.returncode == 0, rs.stderr
    cj = read_cronjob(k8s, namespace, "slow")
    assert cj["spec"]["suspend"] is False and record_annotations(cj) == {}


def test_two_runs_started_at_the_same_moment_create_exactly_one_job(kubeconfig: str, namespace: str, k8s: Any,
                                                                    tmp_path: Path) -> None:
    cj = create_cronjob(k8s, namespace, "twice", duration=4)
    procs = [start_cronctl(["run-manual", "twice", "-n", namespace, "--yes", "--settle", "2s"], kubeconfig,
                           env=cronctl_env(tmp_path / f"p{i}")) for i in range(2)]
    results = [(p.wait(timeout=120), p.communicate()) for p in procs]
    codes = sorted(code for code, _ in results)
    assert codes == [0, 3], results
    loser = next(err for code, (_o, err) in results if code == 3)
    assert "is held by run" in loser and "nothing was changed" in loser
    jobs = owned_jobs(k8s, namespace, cj)
    assert [j["metadata"]["name"] for j in jobs] == ["twice-manual"]
    after = read_cronjob(k8s, namespace, "twice")
    assert after["spec"]["suspend"] is False and record_annotations(after) == {}


def test_a_second_run_while_one_holds_the_lock_is_refused_with_the_holders_name(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path) -> None:
    create_cronjob(k8s, namespace, "held", duration=30)  # holds the lock while the second run is tried
    first = start_cronctl(["run-manual", "held", "-n", namespace, "--yes", "--settle", "1s", "--reason", "first"],
                          kubeconfig, env=cronctl_env(tmp_path / "a"))
    try:
        wait_for("the first run's Job", lambda: read_job(k8s, namespace, "held-manual"), 30)
        # the first run writes step=created just after its Job exists; snapshot its record only then,
        # so that what the second run is checked against is not still moving
        wait_for("the first run's step=created",
                 lambda: record_annotations(read_cronjob(k8s, namespace, "held")).get("cronctl.dev/step") == "created",
                 30)
        holder = record_annotations(read_cronjob(k8s, namespace, "held"))
        second = cronctl(["run-manual", "held", "-n", namespace, "--yes", "--job-name", "held-again"], kubeconfig,
                         run_dir=tmp_path / "b")
        assert second.returncode == 3
        assert f"held by run {holder['cronctl.dev/run-id']} of {holder['cronctl.dev/operator']}" in second.stderr
        assert holder["cronctl.dev/started"] in second.stderr
        assert read_job(k8s, namespace, "held-again") is None
        assert record_annotations(read_cronjob(k8s, namespace, "held")) == holder
    finally:
        code = first.wait(timeout=120)
    assert code == 0, first.communicate()


def test_a_missing_cronjob_exits_6_and_bad_occurrence_exits_5(kubeconfig: str, namespace: str) -> None:
    r = cronctl(["run-manual", "nope", "-n", namespace, "--yes"], kubeconfig)
    assert r.returncode == 6 and f"cronjob {namespace}/nope not found" in r.stderr
    r = cronctl(["run-manual", "nope", "-n", namespace, "--yes", "--occurrence", "yesterday"], kubeconfig)
    assert r.returncode == 5 and "--occurrence" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_ctrl_c_while_waiting_exits_130_records_it_and_changes_nothing_else(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path, sig: str) -> None:
    import signal
    import time

    create_cronjob(k8s, namespace, "stopme", duration=30, schedule="0 0 1 1 *")
    p = start_cronctl(["run-manual", "stopme", "-n", namespace, "--yes", "--settle", "1s"], kubeconfig,
                      env=cronctl_env(tmp_path))
    try:
        wait_for("the manual Job", lambda: read_job(k8s, namespace, "stopme-manual"), 30)
        time.sleep(1)  # inside the wait
        p.send_signal(getattr(signal, sig))
        _out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 130, err
    assert "cronctl restore stopme" in err and "Traceback" not in err
    cj = read_cronjob(k8s, namespace, "stopme")
    assert cj["spec"]["suspend"] is True
    assert record_annotations(cj)["cronctl.dev/step"] == "interrupted"
    job = read_job(k8s, namespace, "stopme-manual")
    assert job is not None and terminal(job) is None  # still running: nothing was stopped or deleted
    assert run_record(tmp_path)["outcome"] == "interrupted"


def test_a_job_the_api_server_refuses_puts_suspend_back_and_says_why(kubeconfig: str, namespace: str, k8s: Any,
                                                                     tmp_path: Path) -> None:
    # RBAC allows the create (preflight passes); a ResourceQuota of zero Jobs makes admission refuse it.
    create_cronjob(k8s, namespace, "quota")
    k8s.core.create_namespaced_resource_quota(namespace, {"metadata": {"name": "no-jobs"},
                                                          "spec": {"hard": {"count/jobs.batch": "0"}}})
    wait_for("the quota to be counted",
             lambda: (json.loads(k8s.core.read_namespaced_resource_quota("no-jobs", namespace,
                                                                         _preload_content=False).data)
                      .get("status") or {}).get("hard"), 30)
    r = cronctl(["run-manual", "quota", "-n", namespace, "--yes", "--settle", "1s"], kubeconfig, run_dir=tmp_path)
    assert r.returncode == 3, r.stderr
    assert "exceeded quota" in r.stderr and f"cronctl suspended cronjob {namespace}/quota at " in r.stderr
    assert "and set suspend back to false at " in r.stderr and "nothing else changed, nothing created" in r.stderr
    cj = read_cronjob(k8s, namespace, "quota")
    # the record is gone; its account stays in cronctl.dev/runs (the audit trail)
    assert cj["spec"]["suspend"] is False and set(record_annotations(cj)) <= {"cronctl.dev/runs"}
    assert run_record(tmp_path)["step"] == "aborted"


def test_wait_active_that_runs_out_of_time_sets_suspend_back_and_exits_4(kubeconfig: str, namespace: str,
                                                                          k8s: Any, tmp_path: Path) -> None:
    cj = create_cronjob(k8s, namespace, "toolong", duration=1)
    _start_child(k8s, namespace, cj, "toolong-fix", 60)
    r = cronctl(["run-manual", "toolong", "-n", namespace, "--yes", "--settle", "1s", "--wait-active",
                 "--timeout", "4s"], kubeconfig, run_dir=tmp_path)
    assert r.returncode == 4, r.stderr
    assert "toolong-fix" in r.stderr and "nothing created" in r.stderr
    after = read_cronjob(k8s, namespace, "toolong")
    assert after["spec"]["suspend"] is False and record_annotations(after) == {}
    assert read_job(k8s, namespace, "toolong-manual") is None


def test_the_job_is_field_for_field_what_kubectl_create_job_from_cronjob_makes(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path) -> None:
    create_cronjob(k8s, namespace, "same")
    theirs = json.loads(run_kubectl(kubeconfig, "-n", namespace, "create", "job", "same-manual",
                                    "--from=cronjob/same", "--dry-run=client", "-o", "json").stdout)
    r = cronctl(["run-manual", "same", "-n", namespace, "--dry-run", "-o", "json"], kubeconfig, run_dir=tmp_path)
    assert r.returncode == 0, r.stderr
    ours = json.loads(r.stdout)
    added = {k: v for k, v in ours["metadata"]["annotations"].items() if k.startswith("cronctl.dev/")}
    assert set(added) == {"cronctl.dev/run-id", "cronctl.dev/operator"}
    for k in added:
        del ours["metadata"]["annotations"][k]
    theirs.pop("status", None)
    theirs["metadata"].pop("creationTimestamp", None)
    theirs["spec"]["template"]["metadata"].pop("creationTimestamp", None)
    assert ours == theirs


def test_on_a_terminal_it_asks_first_and_no_changes_nothing(kubeconfig: str, namespace: str, k8s: Any,
                                                             tmp_path: Path) -> None:
    create_cronjob(k8s, namespace, "asked")
    code, raw = on_a_terminal(["run-manual", "asked", "-n", namespace, "--settle", "1s"], kubeconfig,
                              cwd=tmp_path, run_dir=tmp_path, answers=["n"])
    screen = raw.decode("utf-8", "replace")
    assert code == 3, screen
    assert "Suspend" in screen and "not confirmed; nothing was changed" in screen
    cj = read_cronjob(k8s, namespace, "asked")
    assert cj["spec"]["suspend"] is False and record_annotations(cj) == {}
    assert list_jobs(k8s, namespace) == []


def test_on_a_terminal_yes_runs_it_with_live_progress(kubeconfig: str, namespace: str, k8s: Any,
                                                      tmp_path: Path) -> None:
    create_cronjob(k8s, namespace, "live", duration=5, log="working on batch 7")
    code, raw = on_a_terminal(["run-manual", "live", "-n", namespace, "--settle", "1s"], kubeconfig,
                              cwd=tmp_path, run_dir=tmp_path, answers=["y"])
    screen = raw.decode("utf-8", "replace")
    assert code == 0, screen
    assert "elapsed" in screen and "pods" in screen  # the live status line
    assert "Running=1" in screen or "Succeeded=1" in screen
    assert read_cronjob(k8s, namespace, "live")["spec"]["suspend"] is False
