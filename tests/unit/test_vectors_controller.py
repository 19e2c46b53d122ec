"""Every line of controller-sample.jsonl (the real Kubernetes controller helpers run by Go) is one
case: :func:`decide` must give upstream's earliest time, most recent time, none/few/many, error,
decision, Job name, scheduled-timestamp annotation, new lastScheduleTime, requeue and events, the
same three without the deadline, and the exact missed-run list (``exact_*``)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from cronctl.schedule import Decision, decide, parse
from cronctl.schedule.controller import MISSED_LIST_LIMIT
from cronctl.timeutil import parse_rfc3339

VECTORS = Path(__file__).resolve().parents[1] / "data" / "vectors" / "controller-sample.jsonl"
LINES: list[dict[str, Any]] = [json.loads(x) for x in VECTORS.read_text().splitlines() if x.strip()]
CASES = [pytest.param(c, id=f"{i:02d}-{c['group']}-{c['expr']!r}-{c.get('note', '')}")
         for i, c in enumerate(LINES)]


def _t(s: str | None) -> datetime | None:
    return None if s is None else parse_rfc3339(s)


def _decide(case: dict[str, Any]) -> Decision:
    return decide(case["expr"], time_zone=case.get("tz"), name=case["name"],
                  created=parse_rfc3339(case["creationTimestamp"]),
                  last_schedule=_t(case.get("lastScheduleTime")),
                  starting_deadline=case.get("startingDeadlineSeconds"),
                  now=parse_rfc3339(case["now"]), controller_tz=case.get("controller_local_tz"))


def test_the_vector_file_is_complete() -> None:
    assert len(LINES) == 50


@pytest.mark.parametrize("case", CASES)
def test_decision_matches_upstream(case: dict[str, Any]) -> None:
    d = _decide(case)
    assert d.decision == case["decision"]
    assert list(d.events) == (case.get("events") or [])
    assert d.parsed_spec == case["parsed_spec"]
    if "earliest_time" in case:
        assert d.earliest == _t(case["earliest_time"])
        assert d.most_recent == _t(case.get("most_recent"))
        assert d.missed == case["missed"]
        assert d.error == case.get("mrst_error")
        assert (d.missed == "many") == case["too_many"]
    if "next_schedule_time" in case:  # nextScheduleTime's answer (deadline applied)
        assert d.most_recent == _t(case["next_schedule_time"])
    if "too_late" in case:
        assert (d.decision == "missed-deadline") == case["too_late"]


@pytest.mark.parametrize("case", [c for c in CASES if "earliest_time_nodeadline" in c.values[0]])
def test_the_same_without_the_deadline_matches_upstream(case: dict[str, Any]) -> None:
    d = _decide(case)
    assert d.earliest_nodeadline == _t(case["earliest_time_nodeadline"])
    assert d.most_recent_nodeadline == _t(case.get("most_recent_nodeadline"))
    assert d.missed_nodeadline == case["missed_nodeadline"]
    assert d.error_nodeadline == case.get("mrst_error_nodeadline")


@pytest.mark.parametrize("case", CASES)
def test_job_name_annotation_and_new_last_schedule_match_upstream(case: dict[str, Any]) -> None:
    d = _decide(case)
    assert d.job_name == case.get("job_name")
    assert d.scheduled_timestamp == case.get("scheduled_timestamp_annotation")
    assert d.new_last_schedule == _t(case.get("new_lastScheduleTime"))
    if case.get("job_name_via_getJobName"):
        assert d.job_name == case["job_name_via_getJobName"]


@pytest.mark.parametrize("case", CASES)
def test_requeue_matches_upstream(case: dict[str, Any]) -> None:
    d = _decide(case)
    assert d.requeue_after_ns == case.get("requeue_after_ns")
    assert d.next_wakeup == _t(case.get("requeue_at"))


@pytest.mark.parametrize("case", [c for c in CASES if "exact_missed_count" in c.values[0]])
def test_exact_missed_runs_match_the_one_by_one_walk(case: dict[str, Any]) -> None:
    d = _decide(case)
    if case["exact_missed_count"] > MISSED_LIST_LIMIT:
        # the listing stops at the cap and says so; the run the controller starts is still exact
        assert d.missed_truncated and len(d.missed_runs) == d.missed_count == MISSED_LIST_LIMIT
        assert d.most_recent in (None, _t(case.get("exact_most_recent")))
        return
    assert len(d.missed_runs) == case["exact_missed_count"] == d.missed_count
    assert (d.missed_runs[-1] if d.missed_runs else None) == _t(case.get("exact_most_recent"))
    if d.most_recent is None:
        assert d.never_made_up == d.deadline_dropped + d.missed_runs
        assert d.estimate_skipped == _t(case.get("exact_most_recent"))
    else:
        assert d.most_recent == d.missed_runs[-1]
        assert d.never_made_up == d.deadline_dropped + d.missed_runs[:-1]
        assert d.estimate_skipped is None


@pytest.mark.parametrize("case", [c for c in CASES if c.values[0].get("next_after_now")])
def test_next_after_now_matches_upstream(case: dict[str, Any]) -> None:
    sched = parse(case["expr"], case.get("tz"), local_zone=case.get("controller_local_tz") or "UTC")
    got = sched.next_after(parse_rfc3339(case["now"]))
    want = case["next_after_now"]
    assert got == (None if want.startswith("0001-") else parse_rfc3339(want))
