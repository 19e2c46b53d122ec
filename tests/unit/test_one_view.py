"""One view of a CronJob and its Jobs (issue 13, item 1): every command reads the controller's inputs,
the Job records, their intervals, timestamps and history limits in one place, so the commands agree.

Each test here was a disagreement between commands before that place existed.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

import builders
from builders import job
from cronctl import model
from cronctl.bundle.analyse import Options as BundleOptions, analyse_cronjob
from cronctl.errors import BadInput
from cronctl.cli.explain import explanation_doc
from cronctl.explain import explain_object
from cronctl.history import Options as HistoryOptions, history_horizon, slot_history
from cronctl.procedure.predict import expected_duration, history_limit_removal, predict
from cronctl.runbooks import runbook_context
from fake_cluster import FakeCluster

UTC = timezone.utc
NOW = datetime(2026, 12, 2, 11, 35, tzinfo=UTC)
DEADLINE_WORDS = "spec.startingDeadlineSeconds: expected an integer, got a string ('30')"


# this file's CronJob: */10, last scheduled at 11:00; no spec.suspend
cronjob = functools.partial(builders.cronjob, schedule="*/10 * * * *", created="2026-12-01T00:00:00Z", suspend=None,
                            last="2026-12-02T11:00:00Z")


# --- a field of the wrong type: one decision, every command ------------------------------------------

def test_the_view_reads_a_wrong_type_as_unset_and_names_it_as_a_file_check_would() -> None:
    cj = cronjob(startingDeadlineSeconds="30")
    v = model.cronjob_view(cj)
    assert v.starting_deadline is None and v.problem == DEADLINE_WORDS
    with pytest.raises(BadInput) as e:
        model.check_typed(cj)
    assert e.value.message == v.problem
    with pytest.raises(BadInput, match="startingDeadlineSeconds"):
        v.decide(NOW)


@pytest.mark.parametrize("spec, words", [
    ({"suspend": "false"}, "spec.suspend: expected a boolean, got a string ('false')"),
    ({"timeZone": 3}, "spec.timeZone: expected a string, got an integer (3)"),
    ({"successfulJobsHistoryLimit": "5"}, "spec.successfulJobsHistoryLimit: expected an integer, got a string ('5')"),
    ({"concurrencyPolicy": ["Forbid"]}, "spec.concurrencyPolicy: expected a string, got a list"),
])
def test_every_controller_input_of_the_wrong_type_is_named(spec: dict[str, Any], words: str) -> None:
    v = model.cronjob_view(cronjob(**spec))
    assert v.problem == words
    assert v.suspended is False  # a string "false" is never "suspended"


def test_a_cronjob_as_the_api_serves_it_has_no_problem() -> None:
    v = model.cronjob_view(cronjob(startingDeadlineSeconds=30, suspend=True, concurrencyPolicy="Forbid"))
    assert (v.problem, v.starting_deadline, v.suspended, v.policy) == (None, 30, True, "Forbid")
    assert v.created == datetime(2026, 12, 1, tzinfo=UTC) and v.last_schedule == datetime(2026, 12, 2, 11, tzinfo=UTC)


def test_explain_refuses_a_string_deadline_naming_the_field() -> None:
    # before: explain exited 5 with its own words, the bundle crashed, status and the runbook guessed
    with pytest.raises(BadInput, match=r"cronjob ns/cj: spec\.startingDeadlineSeconds: expected an integer"):
        explain_object(cronjob(startingDeadlineSeconds="30"), after=None, now=NOW)


def test_status_says_the_controller_decision_is_an_error_not_no_unmet() -> None:
    p = predict(cronjob(startingDeadlineSeconds="30"), NOW, suspended=False)
    assert p.decision == "error" and p.error == DEADLINE_WORDS


def test_the_runbook_says_the_same_error_instead_of_create() -> None:
    ctx = runbook_context(cronjob(startingDeadlineSeconds="30"), NOW)
    assert ctx["unsuspend"]["decision"] == f"error: {DEADLINE_WORDS}"
    assert ctx["unsuspend"]["would_start"] is None


def test_the_bundle_names_the_field_instead_of_crashing_with_a_type_error() -> None:
    out = analyse_cronjob(cronjob(startingDeadlineSeconds="30"), [job("cj-29936880", created="2026-12-02T11:00:00Z")],
                          [], [], BundleOptions(now=NOW))
    assert out["schedule"]["error"] == DEADLINE_WORDS
    assert out["schedule"]["decision"] is None and out["occurrences"] == []
    assert [j["name"] for j in out["jobs"]] == ["cj-29936880"]  # the rest of the evidence is still there


def test_history_names_the_field_for_that_cronjob() -> None:
    out = slot_history(cronjob(startingDeadlineSeconds="30"), [], [], HistoryOptions(now=NOW))
    assert out["error"] == DEADLINE_WORDS and out["slots"] == []


def test_a_valid_deadline_gives_every_command_the_same_decision() -> None:
    cj = cronjob(startingDeadlineSeconds=30)
    want = model.cronjob_view(cj).decide(NOW)
    assert predict(cj, NOW, suspended=False).decision == want.decision
    assert runbook_context(cj, NOW)["unsuspend"]["decision"] == want.decision
    assert analyse_cronjob(cj, [], [], [], BundleOptions(now=NOW))["schedule"]["decision"]["decision"] == want.decision
    assert explanation_doc(explain_object(cj, after=None, now=NOW))["controller"]["decision"] == want.decision


# --- one interval and overlap rule -------------------------------------------------------------------

def _status_pairs(jobs: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(a, b) for a, b, _s, _e in model.overlaps(model.job_record(j, "cj", NOW) for j in jobs)]


def _bundle_pairs(jobs: list[dict[str, Any]]) -> list[tuple[str, str]]:
    groups = analyse_cronjob(cronjob(), jobs, [], [], BundleOptions(now=NOW))["overlaps"]
    assert all(o["job_count"] == 2 for o in groups)  # the cases below: pairs, one group each
    return [(o["jobs"][0]["name"], o["jobs"][1]["name"]) for o in groups]


def test_a_job_that_started_at_now_overlaps_the_other_running_job_in_status_and_bundle() -> None:
    # before: status gave it the interval [now, now) and no overlap; the bundle one through the current second
    jobs = [job("a", created="2026-12-02T11:00:00Z"), job("b", created="2026-12-02T11:35:00Z")]
    assert _status_pairs(jobs) == _bundle_pairs(jobs) == [("a", "b")]
    r = model.job_record(jobs[1], "cj", NOW)
    assert (r.start, r.end, r.running) == (NOW, NOW + timedelta(seconds=1), True)


def test_a_failed_job_without_end_times_overlaps_nothing_in_status_and_bundle() -> None:
    # before: status ran it until now (overlapping the later Job); the bundle gave it no interval
    jobs = [job("failed", created="2026-12-02T11:00:00Z", outcome="Failed"),
            job("later", created="2026-12-02T11:10:00Z")]
    assert _status_pairs(jobs) == _bundle_pairs(jobs) == []
    r = model.job_record(jobs[0], "cj", NOW)
    assert r.start == r.end and not r.running


def test_a_job_that_ended_when_the_next_began_does_not_overlap_it() -> None:
    jobs = [job("a", created="2026-12-02T11:00:00Z", outcome="Complete", done="2026-12-02T11:10:00Z"),
            job("b", created="2026-12-02T11:10:00Z", outcome="Complete", done="2026-12-02T11:12:00Z")]
    assert _status_pairs(jobs) == _bundle_pairs(jobs) == []


def test_history_and_the_bundle_pair_a_manual_job_with_the_scheduled_one_by_the_same_rule() -> None:
    # before: history's own test paired a Job without an interval (a Failed one without end times) with the
    # scheduled Job it fell inside; the bundle's sweep did not
    manual = job("by-hand", created="2026-12-02T11:05:00Z", outcome="Failed")
    manual["metadata"]["annotations"] = {model.INSTANTIATE: "manual"}
    sched = job("cj-29936880", created="2026-12-02T11:00:00Z")
    sched["metadata"]["annotations"] = {model.SCHEDULED_TS: "2026-12-02T11:00:00Z"}
    h = slot_history(cronjob(), [manual, sched], [], HistoryOptions(now=NOW))
    row = next(r for r in h["slots"] if r["slot"] == "2026-12-02T11:00:00Z")
    assert row["manual_beside"] == [] and _bundle_pairs([manual, sched]) == []


# --- one lenient timestamp reader --------------------------------------------------------------------

@pytest.mark.parametrize("value", [None, "", "yesterday", 5, "2026-12-02T11:00:00", ["2026-12-02T11:00:00Z"]])
def test_a_garbled_timestamp_in_the_evidence_counts_as_absent(value: Any) -> None:
    assert model.when(value) is None


def test_a_timestamp_with_any_offset_is_read_in_utc() -> None:
    assert model.when("2026-12-02T12:00:00+01:00") == datetime(2026, 12, 2, 11, tzinfo=UTC)


def test_a_garbled_job_time_is_absent_for_status_and_bundle_alike() -> None:
    j = job("a", start="not a time", created="2026-12-02T11:00:00Z")
    r = model.job_record(j, "cj", NOW)
    assert r.started is None and r.start == datetime(2026, 12, 2, 11, tzinfo=UTC)
    out = analyse_cronjob(cronjob(), [j], [], [], BundleOptions(now=NOW))
    assert out["jobs"][0]["started"] is None and out["jobs"][0]["created"] == "2026-12-02T11:00:00Z"


# --- one reader of the history limits ----------------------------------------------------------------

@pytest.mark.parametrize("spec, ok, failed", [
    ({}, 3, 1), ({"successfulJobsHistoryLimit": 0, "failedJobsHistoryLimit": 5}, 0, 5),
    ({"successfulJobsHistoryLimit": -2}, 0, 1), ({"successfulJobsHistoryLimit": None}, 3, 1),
])
def test_the_history_limits_are_read_once_with_their_defaults(spec: dict[str, Any], ok: int, failed: int) -> None:
    cj = cronjob(**spec)
    limits = model.cronjob_view(cj).history
    assert (limits.successful, limits.failed) == (ok, failed)
    _text, info = history_limit_removal(cj, NOW)  # run-manual's plan
    assert (info["successful_jobs_history_limit"], info["failed_jobs_history_limit"]) == (ok, failed)
    bundle = analyse_cronjob(cj, [], [], [], BundleOptions(now=NOW))["spec"]
    assert (bundle["successful_jobs_history_limit"], bundle["failed_jobs_history_limit"]) == (ok, failed)


def test_a_negative_limit_keeps_nothing_for_the_plan_and_for_history_alike() -> None:
    # before: run-manual's plan took a negative limit as the default, history as 0
    cj = cronjob(failedJobsHistoryLimit=-1)
    _text, info = history_limit_removal(cj, NOW)
    assert info["failed_jobs_history_limit"] == 0
    assert history_horizon([], model.cronjob_view(cj).history, None, NOW) == NOW


def test_a_limit_is_shown_with_default_when_it_is_not_set() -> None:
    limits = model.cronjob_view(cronjob(successfulJobsHistoryLimit=5)).history
    assert limits.shown("Complete") == "successfulJobsHistoryLimit=5"
    assert limits.shown("Failed") == "failedJobsHistoryLimit=1 (default)"


def test_the_view_does_not_change_the_object() -> None:
    cj = cronjob(startingDeadlineSeconds="30")
    before = copy.deepcopy(cj)
    model.cronjob_view(cj)
    assert cj == before


# --- one duration rule: status, history and the bundle print the same run time -------------------

def test_status_history_and_the_bundle_give_one_job_the_same_duration() -> None:
    # status used startTime only and ran a Job finished at an unknown time to now; history and the
    # bundle counted from creation, the bundle to now as well: three numbers for one Job before
    from cronctl.cli.status import status_doc
    from cronctl.procedure.status import collect_status

    manual = {"cronjob.kubernetes.io/instantiate": "manual"}
    jobs = [job("done", created="2026-12-02T11:00:05Z", outcome="Complete", done="2026-12-02T11:03:05Z"),
            job("failed", created="2026-12-02T11:10:02Z", outcome="Failed"),  # no completionTime, no time
            job("never-started", created="2026-12-02T11:20:00Z", start=None),  # running, no startTime: from creation
            job("running", created="2026-12-02T11:30:01Z")]
    jobs[1]["status"]["conditions"][0]["lastTransitionTime"] = "2026-12-02T11:12:02Z"
    for j in jobs:
        j["metadata"]["annotations"] = dict(manual)  # manual: history lists each one with its duration
    finished_unknown = job("gone-time", created="2026-12-02T11:25:00Z", outcome="Complete")
    finished_unknown["metadata"]["annotations"] = dict(manual)
    jobs.append(finished_unknown)
    want = {"done": 180, "failed": 120, "never-started": 900, "running": 299, "gone-time": None}

    status = status_doc(collect_status(FakeCluster(cronjob(), jobs), "cj", NOW))  # type: ignore[arg-type]  # -o json
    got_status = {r["name"]: (int(r["duration_seconds"]) if r["duration_seconds"] is not None else None)
                  for r in status["jobs"]}
    hist = slot_history(cronjob(), jobs, [], HistoryOptions(now=NOW))
    got_history = {r["job"]: r["duration_seconds"] for r in hist["manual_runs"]}
    bundle = analyse_cronjob(cronjob(), jobs, [], [], BundleOptions(now=NOW))
    got_bundle = {j["name"]: j["duration_seconds"] for j in bundle["jobs"]}
    assert got_status == got_history == got_bundle == want


# --- the Job template's bits: one reader (issue 24) ----------------------------------------------------

def test_the_job_templates_ttl_deadline_and_account_are_read_by_the_view_and_used_by_every_command() -> None:
    # before: the plan, history's horizon, the gone-Job words, alerts, the recorder's metrics and the
    # runbook each dug them out of spec.jobTemplate on their own
    cj = cronjob(job_template={"spec": {"ttlSecondsAfterFinished": 100, "activeDeadlineSeconds": 600,
                                        "template": {"spec": {"serviceAccount": "old-sa"}}}})
    v = model.cronjob_view(cj)
    assert (v.job_ttl, v.job_active_deadline, v.service_account, v.problem) == (100, 600, "old-sa", None)
    _text, info = history_limit_removal(cj, NOW)
    assert info["ttl_seconds_after_finished"] == 100
    assert expected_duration(cj, [], NOW) == (600.0, "activeDeadlineSeconds (an upper bound)")
    assert history_horizon([], v.history, v.job_ttl, NOW) == NOW  # a TTL can remove any finished Job
    assert runbook_context(cj, NOW)["service_account"] == "old-sa"


@pytest.mark.parametrize("template", [
    {"spec": {"ttlSecondsAfterFinished": "100", "activeDeadlineSeconds": True,
              "template": {"spec": {"serviceAccountName": 7}}}},
    {"spec": "not a mapping"}, "not a mapping", {"spec": {"template": {"spec": {"serviceAccountName": ""}}}},
])
def test_a_job_template_bit_of_the_wrong_type_reads_as_unset_and_is_no_controller_problem(template: Any) -> None:
    v = model.cronjob_view(cronjob(job_template=template))
    assert (v.job_ttl, v.job_active_deadline, v.service_account) == (None, None, None)
    assert v.problem is None  # not a controller input: status and the plan still predict
    assert v.decide(NOW).decision == model.cronjob_view(cronjob()).decide(NOW).decision


# --- explain's controller inputs are the view (issue 24) --------------------------------------------------

def test_explain_decides_with_the_view_and_the_flags_given_lay_over_the_objects_own() -> None:
    from cronctl.explain import explain_schedule, given

    cj = cronjob(concurrencyPolicy="Forbid", startingDeadlineSeconds=600, status={
        "lastScheduleTime": "2026-12-02T11:00:00Z", "active": [{"name": "cj-29936820"}]})
    view = model.cronjob_view(cj)
    want = view.decide(NOW)
    got = explanation_doc(explain_object(cj, after=None, now=NOW))["controller"]
    assert (got["decision"], got["concurrencyPolicy"], got["active"]) == (want.decision, "Forbid", ["cj-29936820"])
    assert (got["decision"], got["waitingFor"]) == ("forbid-active", ["cj-29936820"])  # 11:30 waits for 11:00's Job
    # --concurrency-policy Replace over the object: the rest stays the object's
    over = explanation_doc(explain_object(cj, after=None, now=NOW,
                                          overrides=given(NOW, concurrency_policy="Replace")))["controller"]
    replaced = dataclasses.replace(view, concurrency_policy="Replace").decide(NOW)
    assert (over["decision"], over["concurrencyPolicy"], over["replaces"]) == (replaced.decision, "Replace",
                                                                             list(replaced.replaces))
    assert (over["decision"], over["replaces"]) == ("create", ["cj-29936820"])
    # a bare schedule with the same inputs as flags decides the same as the object
    bare = explanation_doc(explain_schedule("*/10 * * * *", time_zone=None, after=NOW, controller=given(
        NOW, created=view.created, last_schedule=view.last_schedule, starting_deadline=600,
        concurrency_policy="Forbid", active=view.active, name="cj")))["controller"]
    assert {k: bare[k] for k in ("decision", "mostRecent", "jobName", "waitingFor")} == \
        {k: got[k] for k in ("decision", "mostRecent", "jobName", "waitingFor")}
