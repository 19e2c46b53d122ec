"""Pure parts of the procedures: the restore prediction, status explanations, duration flags,
and the exit code of an unreachable API server."""

from __future__ import annotations

import functools
from datetime import datetime, timezone
from pathlib import Path

import pytest

import builders
from conftest import RunCli
from cronctl import model
from cronctl.cli.durations import SETTLE, TIMEOUT
from cronctl.errors import BadInput, BadUsage
from cronctl.procedure.predict import predict
from cronctl.procedure.status import explain_record

UTC = timezone.utc
NOW = datetime(2026, 12, 2, 12, 2, 30, tzinfo=UTC)


# this file's CronJob: sync (uid u), every minute, suspended, last scheduled at 12:00
cj = functools.partial(builders.cronjob, name="sync", uid="u", created="2026-12-01T00:00:00Z", annotations={},
                       suspend=True, last="2026-12-02T12:00:00Z")


def test_unsuspending_after_missed_minutes_predicts_one_catch_up_for_the_latest() -> None:
    p = predict(cj(), NOW, suspended=False)
    latest = datetime(2026, 12, 2, 12, 2, tzinfo=UTC)
    assert p.decision == "create" and p.catch_up_for == latest
    assert p.job_name == f"sync-{int(latest.timestamp()) // 60}"
    assert p.never_made_up == 1  # 12:01 is never run
    assert "a catch-up Job for 2026-12-02T12:02:00Z will start right away" in p.text


def test_a_deadline_shorter_than_the_age_of_the_latest_miss_predicts_no_catch_up() -> None:
    p = predict(cj(deadline=20), NOW, suspended=False)  # 12:02:00 is 30 s old
    assert p.decision != "create" and p.catch_up_for is None
    assert p.text.startswith("no catch-up Job; the next run is at 2026-12-02T12:03:00Z")
    # 12:01 and 12:02 are both older than 20 s: lost for good, and said so
    assert p.deadline_dropped == (datetime(2026, 12, 2, 12, 1, tzinfo=UTC), datetime(2026, 12, 2, 12, 2, tzinfo=UTC))
    assert p.never_made_up == 2
    assert "2 missed run(s) will never be made up, 2 of them dropped by startingDeadlineSeconds=20" in p.text


def test_forbid_with_an_active_job_predicts_the_slot_waits_not_a_job_due_now() -> None:
    c = cj(suspend=False)
    c["spec"]["concurrencyPolicy"] = "Forbid"
    c["status"]["active"] = [{"name": "sync-29937120", "namespace": "ns"}]
    p = predict(c, NOW, suspended=False, unsuspending=False)
    assert p.decision == "forbid-active" and p.waiting_for == ("sync-29937120",)
    assert "is due now" not in p.text and "waits for sync-29937120" in p.text
    assert p.as_dict()["waiting_for"] == ["sync-29937120"]
    c["spec"]["concurrencyPolicy"] = "Replace"
    r = predict(c, NOW, suspended=False, unsuspending=False)
    assert r.decision == "create" and r.replaces == ("sync-29937120",)
    assert "Replace deletes sync-29937120 first" in r.text


def test_staying_suspended_predicts_nothing_at_all() -> None:
    p = predict(cj(), NOW, suspended=True)
    assert p.decision == "suspended" and "stays suspended" in p.text


def test_a_cronjob_suspended_now_is_not_said_to_have_been_suspended_before_a_run() -> None:
    # status of a CronJob someone suspended with kubectl, no run at all: it used to say "(it was
    # suspended before the run)"
    p = predict(cj(), NOW, suspended=True, unsuspending=False)
    assert p.decision == "suspended" and "before the run" not in p.text and "is suspended" in p.text


def _record(step: str, note: str = "") -> model.RunRecord:
    return model.RunRecord(run_id="r1", original_suspend=False, operator="alice", reason="", job_name="sync-manual",
                           step=step, started="2026-12-02T12:00:00Z", note=note)


@pytest.mark.parametrize("step,job,expect", [
    ("suspended", None, "was never created"),
    ("verified", None, "was never created"),
    ("created", None, "does not exist"),
    ("created", "running", "still running"),
    ("created", "Complete", "only the restore is left"),
    ("failed", "Failed", "FAILED"),
    ("failed", "Failed", "--retry"),
    ("interrupted", None, "the run stopped (interrupted) before creating it"),
    ("timeout", None, "the run stopped (timeout) before creating it"),
])
def test_status_explains_every_state_a_run_can_leave(step: str, job: str | None, expect: str) -> None:
    ended = {} if job == "running" else {"outcome": job, "done": "2026-12-02T12:01:00Z"}
    j = None if job is None else builders.job("sync-manual", owner=cj(), **ended)
    text = explain_record(cj(), _record(step), j, NOW)
    assert expect in text
    assert "held by manual run r1 of alice" in text and "(2m30s ago)" in text
    assert "cronctl restore sync -n ns" in text


def test_status_explains_a_suspend_that_cronctl_did_not_make() -> None:
    assert "someone suspended it by other means" in explain_record(cj(), None, None, NOW)
    assert "schedules it normally" in explain_record(cj(suspend=False), None, None, NOW)


@pytest.mark.parametrize("text,seconds", [("15", 15), ("15s", 15), ("2m", 120), ("1h30m", 5400),
                                          ("500ms", 0.5), ("2.5s", 2.5)])
def test_duration_flags_read_like_kubectls(text: str, seconds: float) -> None:
    assert SETTLE.seconds(text) == seconds


@pytest.mark.parametrize("text", ["", "soon", "5x", "1h 5m", "m5"])
def test_bad_durations_name_the_flag(text: str) -> None:
    # a bad value of a duration flag is a usage error (exit 2), malformed or out of range alike
    with pytest.raises(BadUsage, match="--timeout"):
        TIMEOUT.seconds(text)


def test_an_unreachable_api_server_is_one_line_and_exit_7(tmp_path: Path, run_cli: RunCli) -> None:
    kc = tmp_path / "kc"
    kc.write_text("apiVersion: v1\nkind: Config\ncurrent-context: x\n"
                  "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"
                  "contexts: [{name: x, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {token: t}}]\n")
    for cmd in (["run-manual", "x", "--yes"], ["status", "x"], ["restore", "x", "--yes"]):
        r = run_cli(*cmd, "--kubeconfig", str(kc))
        assert r.exit_code == 7, (cmd, r.stderr)
        assert "cannot reach the API server at https://127.0.0.1:1: connection refused" in r.stderr
        assert "Traceback" not in r.stderr and r.stdout == ""


def test_a_missing_kubeconfig_is_bad_input_exit_5(tmp_path: Path, run_cli: RunCli) -> None:
    r = run_cli("status", "x", "--kubeconfig", str(tmp_path / "none"))
    assert r.exit_code == 5 and "does not exist" in r.stderr


def test_status_warns_about_a_manual_job_running_beside_an_unsuspended_cronjob() -> None:
    loose = {"metadata": {"name": "sync-fix", "annotations": {"cronjob.kubernetes.io/instantiate": "manual"}},
             "status": {}}
    text = explain_record(cj(suspend=False), None, None, NOW, [loose])
    assert "manual Job sync-fix runs" in text and "scheduled Jobs can start beside it" in text


def test_for_a_running_cronjob_the_next_move_is_worded_as_due_not_catch_up() -> None:
    p = predict(cj(suspend=False), NOW, suspended=False, unsuspending=False)
    assert p.text.startswith("a Job for 2026-12-02T12:02:00Z is due now")
    p = predict(cj(deadline=20, suspend=False), NOW, suspended=False, unsuspending=False)
    assert p.text.startswith("nothing is due now; the next run is at 2026-12-02T12:03:00Z")


def test_the_run_directory_and_everything_in_it_is_private(tmp_path: Path) -> None:
    import stat

    from cronctl.procedure.base import RunDir

    d = RunDir.create(str(tmp_path / "runs"), "sync", "abc123")
    assert d.path == tmp_path / "runs" / "sync-abc123"
    f = d.write_text("logs/pod-1/main.log", "line\n")
    d.write_json("record.json", {"a": 1})
    for p in (d.path, d.path / "logs", d.path / "logs" / "pod-1"):
        assert stat.S_IMODE(p.stat().st_mode) == 0o700, p
    for p in (f, d.path / "record.json"):
        assert stat.S_IMODE(p.stat().st_mode) == 0o600, p
    assert not list(d.path.rglob("*.tmp"))  # written by rename, nothing half-written left
    with pytest.raises(BadInput, match="cannot create run directory"):
        RunDir.create(str(tmp_path / "runs"), "sync", "abc123")  # never reuses (overwrites) a run


# -- when the history limit deletes the manual Job (the plan's "manual Job kept" row) -----------
def test_with_default_limits_the_manual_job_goes_after_three_newer_successes() -> None:
    from cronctl.procedure.predict import history_limit_removal

    text, info = history_limit_removal(cj(), NOW)
    # */1, now 12:02:30: the next slots are 12:03, 12:04, 12:05; the third newer success is 12:05's
    assert info["successful_jobs_history_limit"] == 3 and info["earliest_if_succeeded"] == "2026-12-02T12:05:00Z"
    assert "3 newer Job(s)" in text and "1 newer Job(s) of this CronJob have failed" in text
    assert "run directory" in text


def test_a_zero_limit_deletes_it_at_once_and_a_ttl_is_named() -> None:
    from cronctl.procedure.predict import history_limit_removal

    c = cj()
    c["spec"].update(successfulJobsHistoryLimit=0, failedJobsHistoryLimit=2)
    c["spec"]["jobTemplate"]["spec"]["ttlSecondsAfterFinished"] = 600
    text, info = history_limit_removal(c, NOW)
    assert "next sync after it succeeded" in text and info["earliest_if_succeeded"] is None
    assert "2 newer Job(s) of this CronJob have failed; the earliest is the Job for 2026-12-02T12:04:00Z" in text
    assert "ttlSecondsAfterFinished=600" in text and info["ttl_seconds_after_finished"] == 600


@pytest.mark.parametrize("base,attempt,want", [
    ("sync-manual", 2, "sync-manual-r2"),
    ("a" * 63, 12, "a" * 59 + "-r12"),
    ("x-" * 31 + "y", 3, ("x-" * 31)[:60].rstrip("-") + "-r3"),
])
def test_a_retry_s_job_name_is_derived_and_stays_a_dns_label(base: str, attempt: int, want: str) -> None:
    from cronctl.procedure.run_manual import retry_job_name
    from cronctl.procedure.steps.preflight import _DNS_LABEL

    name = retry_job_name(base, attempt)
    assert name == want and len(name) <= 63 and _DNS_LABEL.match(name)


def test_the_expected_run_time_is_the_median_of_recent_successes_else_the_deadline_else_unknown() -> None:
    from cronctl.procedure.predict import expected_duration

    sync = cj()
    jobs = [builders.job("a", owner=sync, start="2026-12-02T11:00:00Z", done="2026-12-02T11:00:30Z"),   # 30 s
            builders.job("b", owner=sync, start="2026-12-02T11:10:00Z", done="2026-12-02T11:12:00Z"),   # 120 s
            builders.job("c", owner=sync, start="2026-12-02T11:20:00Z", done="2026-12-02T11:20:50Z"),   # 50 s
            builders.job("d", owner=sync, start="2026-12-02T11:30:00Z", done="2026-12-02T11:59:00Z",
                         outcome="Failed")]  # not a success
    assert expected_duration(cj(), jobs, NOW) == (50.0, "the median of the last 3 successful Job(s)")
    assert expected_duration(cj(), jobs, NOW, 7.0) == (7.0, "--expected-duration")
    c = cj()
    c["spec"]["jobTemplate"]["spec"]["activeDeadlineSeconds"] = 600
    assert expected_duration(c, [], NOW)[0] == 600.0
    secs, how = expected_duration(cj(), [], NOW)
    assert secs is None and "unknown" in how
