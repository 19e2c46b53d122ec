"""The slot history (cronctl/history.py): every verdict from hand-made evidence shaped like the
API's objects, the JSON Schema, and the CLI on a dump (`--fail-on`, exit 8).

The evidence here is written by hand to pin each rule; tests/cluster/test_history_live.py
produces the same verdicts with the real controller."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from builders import (T, cronjob, event, job, job_already_active, saw_completed, scheduled, slotname, successful_create,
                      successful_delete, z)
from cronctl.history import LOST, VERDICTS, Options, fail_on, slot_history

UTC = timezone.utc
ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "cronctl" / "data" / "history.schema.json").read_text())


def judge(cj: dict[str, Any], jobs: list[dict[str, Any]], events: list[dict[str, Any]] | None = None, *,
          now: datetime, since: datetime | None = None) -> dict[str, Any]:
    h = slot_history(cj, jobs, events or [], Options(now=now, since=since))
    jsonschema.validate({"now": z(now), "missing": [], "cronjobs": [h]}, SCHEMA)
    return h


def verdicts(h: dict[str, Any]) -> dict[str, str]:
    return {r["slot"][11:16]: r["verdict"] for r in h["slots"]}


def row(h: dict[str, Any], hhmm: str) -> dict[str, Any]:
    return next(r for r in h["slots"] if r["slot"][11:16] == hhmm and r["verdict"] != "dst-skipped")


# --- verdicts ---------------------------------------------------------------------------------

def test_forbid_refused_slot_is_skipped_and_the_waiting_one_ran_late() -> None:
    a = job(slotname(T(10, 0)), slot=T(10, 0), created=T(10, 0, 1), done=T(10, 2, 30))
    b = job(slotname(T(10, 2)), slot=T(10, 2), created=T(10, 2, 31), done=T(10, 2, 50))
    evs = [event("JobAlreadyActive", "Not starting job because prior execution is running and concurrency "
                 "policy is Forbid", T(10, 1, 0), T(10, 2, 0))]
    h = judge(cronjob(policy="Forbid", last=T(10, 2)), [a, b], evs, now=T(10, 2, 55))
    v = verdicts(h)
    assert (v["10:00"], v["10:01"], v["10:02"], v["10:03"]) == ("ran", "skipped-forbid", "ran-late", "due")
    assert slotname(T(10, 0)) in row(h, "10:01")["reason"]
    assert f"Forbid waited for {slotname(T(10, 0))}" in row(h, "10:02")["reason"]
    assert row(h, "10:02")["start_delay_seconds"] == 32


def test_with_allow_an_active_job_explains_nothing() -> None:
    a = job(slotname(T(10, 0)), slot=T(10, 0), created=T(10, 0, 1), done=T(10, 2, 30))
    h = judge(cronjob(last=T(10, 0)), [a], now=T(10, 1, 30))
    assert row(h, "10:01")["verdict"] != "skipped-forbid"


def test_two_jobs_for_one_slot_are_a_duplicate_and_a_slot_named_manual_run_alone_ran() -> None:
    sched = scheduled(T(10, 0))
    claim = job("cj-fix", created=T(10, 5), done=T(10, 6), manual=True, occurrence=T(10, 0), operator="alice")
    slot_named = job(slotname(T(10, 1)), slot=T(10, 1), created=T(10, 7), done=T(10, 8), manual=True,
                     operator="bob")
    h = judge(cronjob(last=T(10, 2)), [sched, claim, slot_named, scheduled(T(10, 2))], now=T(10, 2, 40))
    d = row(h, "10:00")
    assert d["verdict"] == "duplicate" and set(d["jobs"]) == {slotname(T(10, 0)), "cj-fix"}
    assert {x["stands_by"] for x in d["job_details"]} == {"scheduled", "occurrence"}
    m = row(h, "10:01")
    assert m["verdict"] == "ran" and "manually by bob" in m["reason"] and "slot-named" in m["reason"]
    assert h["manual_runs"] == []  # both manual Jobs stand for a slot
    assert fail_on([h], {"duplicate"}) == [f"ns/cj {z(T(10, 0))} duplicate"]


def test_a_manual_run_for_no_slot_is_listed_and_named_beside_the_slot_it_overlapped() -> None:
    s = job(slotname(T(10, 0)), slot=T(10, 0), created=T(10, 0, 1))  # still running
    manual = job("cj-manual", created=T(10, 0, 30), done=T(10, 1, 30), manual=True, operator="carol")
    h = judge(cronjob(policy="Forbid", last=T(10, 0)), [s, manual], now=T(10, 0, 50))
    assert [m["job"] for m in h["manual_runs"]] == ["cj-manual"]
    assert h["manual_runs"][0]["operator"] == "carol" and h["manual_runs"][0]["overlaps"] == [slotname(T(10, 0))]
    r = row(h, "10:00")
    assert r["verdict"] == "running" and r["manual_beside"] == ["cj-manual"]
    assert "Forbid does not see manual Jobs" in r["reason"]


def test_suspended_now_every_slot_since_the_suspend_write_is_missed_suspended() -> None:
    h = judge(cronjob(suspend=True, last=T(10, 0), suspend_written=T(10, 0, 30)), [scheduled(T(10, 0))],
              now=T(10, 4, 30))
    v = verdicts(h)
    assert v["10:00"] == "ran" and all(v[f"10:0{i}"] == "missed-suspended" for i in range(1, 5))
    assert "kubectl-patch" in row(h, "10:02")["reason"]
    assert "suspended" in row(h, "10:05")["reason"]  # the next slot: due, but it will not run


def _suspended_when_unknown(**kw: Any) -> dict[str, Any]:
    """Suspended now by kubectl-patch, but managedFields keeps no time for the write (older servers,
    a dump that lost it): the start of the suspension is unknown."""
    cj = cronjob("*/10 * * * *", suspend=True, last=T(10, 10), **kw)
    cj["metadata"]["managedFields"] = [{"manager": "kubectl-patch", "operation": "Update",
                                        "fieldsV1": {"f:spec": {"f:suspend": {}}}}]
    return cj


def test_a_suspend_of_unknown_start_covers_only_the_slots_after_the_controllers_last_job() -> None:
    # partial evidence (issue 27 item 4): the controller created Jobs at 10:00 and 10:10, so it was
    # not suspended then; only the later slots can be blamed on the suspension. Before, every slot
    # since the CronJob's creation without a Job (09:50 here) was called missed-suspended.
    jobs = [scheduled(T(9, 40)), scheduled(T(10, 0)), scheduled(T(10, 10))]
    h = judge(_suspended_when_unknown(), jobs, now=T(11, 0, 30))
    v = verdicts(h)
    assert v["09:50"] == "missed" and "suspend" not in row(h, "09:50")["reason"]
    assert [v[f"1{m}"] for m in ("0:20", "0:30", "0:40", "0:50", "1:00")] == ["missed-suspended"] * 5
    reason = row(h, "10:20")["reason"]
    assert "kubectl-patch" in reason and "when is not recorded" in reason
    assert f"after {z(T(10, 10, 1))}, when the controller created {slotname(T(10, 10))}" in reason


def test_an_active_job_under_forbid_and_a_suspend_of_unknown_start_are_both_said() -> None:
    # 10:10's Job still runs under Forbid: for 10:20 on, Forbid refuses a new Job, unless the CronJob
    # was suspended first; the evidence does not say which, so the row says both
    c = T(10, 10, 1)
    hung = job(slotname(T(10, 10)), slot=T(10, 10), created=c)
    h = judge(_suspended_when_unknown(policy="Forbid"), [scheduled(T(10, 0)), hung], now=T(10, 40, 30))
    v = verdicts(h)
    assert v["10:10"] == "running" and [v["10:20"], v["10:30"], v["10:40"]] == ["skipped-forbid"] * 3
    reason = row(h, "10:30")["reason"]
    assert f"{slotname(T(10, 10))} was active" in reason and "Forbid" in reason
    assert "suspended by then" in reason and "kubectl-patch" in reason
    # with Allow the active Job is no cause: the suspension alone
    h = judge(_suspended_when_unknown(policy="Allow"), [scheduled(T(10, 0)), hung], now=T(10, 40, 30))
    assert verdicts(h)["10:30"] == "missed-suspended"


def test_after_un_suspend_the_catch_up_ran_late_and_the_slots_before_it_were_missed_suspended() -> None:
    catch = job(slotname(T(10, 8)), slot=T(10, 8), created=T(10, 8, 40), done=T(10, 9))
    h = judge(cronjob(last=T(10, 8), suspend_written=T(10, 8, 39)), [scheduled(T(10, 0)), catch],
              now=T(10, 8, 50))
    v = verdicts(h)
    assert [v[f"10:0{i}"] for i in range(1, 8)] == ["missed-suspended"] * 7
    assert v["10:08"] == "ran-late" and "un-suspended" in row(h, "10:08")["reason"]
    assert "only the latest missed slot" in row(h, "10:03")["reason"]
    assert len(fail_on([h], {"lost"})) == 7


def test_a_catch_up_still_running_explains_the_gap_before_it_too() -> None:
    catch = job(slotname(T(10, 8)), slot=T(10, 8), created=T(10, 8, 40))  # not finished
    h = judge(cronjob(last=T(10, 8), suspend_written=T(10, 8, 39)), [scheduled(T(10, 0)), catch], now=T(10, 8, 45))
    assert verdicts(h)["10:05"] == "missed-suspended"
    assert row(h, "10:08")["verdict"] == "running" and "un-suspended" in row(h, "10:08")["reason"]


def test_runs_the_deadline_drops_are_missed_deadline() -> None:
    # the example: */10 Moscow, last run 11:00Z, now 11:35Z, startingDeadlineSeconds 120
    h = judge(cronjob("*/10 * * * *", tz="Europe/Moscow", deadline=120, last=T(11, 0), created=T(0, 0, day=1)),
              [scheduled(T(11, 0))], now=T(11, 35))
    v = verdicts(h)
    assert (v["11:10"], v["11:20"], v["11:30"]) == ("missed-deadline",) * 3
    assert "startingDeadlineSeconds=120" in row(h, "11:20")["reason"]
    assert row(h, "11:10")["slot_local"] == "2026-12-02T14:10:00+03:00"


def test_an_un_suspend_too_late_for_the_deadline_loses_every_slot_to_the_suspension() -> None:
    # suspended after 10:00, un-suspended at 10:05:30 with startingDeadlineSeconds 10: no catch-up
    h = judge(cronjob(deadline=10, last=T(10, 0), suspend_written=T(10, 5, 30)),
              [scheduled(T(10, 0)), scheduled(T(10, 6))], now=T(10, 6, 20))
    v = verdicts(h)
    assert [v[f"10:0{i}"] for i in range(1, 6)] == ["missed-suspended"] * 5 and v["10:06"] == "ran"
    assert "older than startingDeadlineSeconds=10" in row(h, "10:05")["reason"]


def test_a_slot_given_up_with_catch_up_none_moments_ago_is_missed_not_due() -> None:
    # paused over 10:05 and 10:06, resumed at 10:06:05 with --catch-up none (lastScheduleTime = 10:06)
    c = cronjob(policy="Forbid", last=T(10, 6), suspend_written=T(10, 6, 5))
    h = judge(c, [scheduled(T(10, 4))], now=T(10, 6, 8))
    v = verdicts(h)
    assert (v["10:05"], v["10:06"], v["10:07"]) == ("missed-suspended", "missed-suspended", "due")
    assert "without a Job (cronctl --catch-up none" in row(h, "10:06")["reason"]


def test_a_gap_closed_by_too_many_missed_times_is_missed_too_many() -> None:
    catch = job(slotname(T(10, 5)), slot=T(10, 5), created=T(10, 5, 30), done=T(10, 6))
    evs = [event("TooManyMissedTimes", "too many missed start times", T(10, 5, 30), etype="Warning")]
    h = judge(cronjob(last=T(10, 5)), [scheduled(T(10, 0)), catch], evs, now=T(10, 5, 50))
    assert verdicts(h)["10:03"] == "missed-too-many"


def test_a_gap_without_a_cause_in_the_evidence_is_missed_and_says_what_it_suggests() -> None:
    h = judge(cronjob(last=T(10, 3)), [scheduled(T(10, 0)), scheduled(T(10, 3))], now=T(10, 3, 30))
    r = row(h, "10:01")
    assert r["verdict"] == "missed" and "controller was down" in r["reason"]
    assert "missed" in LOST


def test_a_catch_up_without_a_known_cause_names_both_causes() -> None:
    catch = job(slotname(T(10, 4)), slot=T(10, 4), created=T(10, 4, 50), done=T(10, 5))
    h = judge(cronjob(last=T(10, 4)), [scheduled(T(10, 0)), catch], now=T(10, 4, 55))
    assert "cannot tell which" in row(h, "10:02")["reason"] and "suspended" in row(h, "10:02")["reason"]
    assert "cannot tell which" in row(h, "10:04")["reason"]


def test_a_deleted_job_still_named_by_its_event_ran() -> None:
    gone = slotname(T(10, 0))
    evs = [event("SuccessfulCreate", f"Created job {gone}", T(10, 0, 1))]
    h = judge(cronjob(last=T(10, 1)), [scheduled(T(10, 1))], evs, now=T(10, 1, 30))
    r = row(h, "10:00")
    assert r["verdict"] == "ran" and r["jobs"] == [gone] and r["job_details"][0]["exists"] is False
    assert "deleted since" in r["reason"]


def _runs(cj: dict[str, Any], *runs: dict[str, Any]) -> dict[str, Any]:
    """The CronJob with cronctl.dev/runs as cronctl's restore writes it (shape written out by hand)."""
    full = [{"run_id": "r", "operator": "alice", "reason": "", "job_name": "", "occurrence": "",
             "suspended_at": "", "restored_at": "", "last_step": "succeeded", "original_suspend": False,
             "restored_to": False, **r} for r in runs]
    cj["metadata"]["annotations"] = {"cronctl.dev/runs": json.dumps(full)}
    return cj


def test_a_slot_named_run_whose_job_the_history_limit_deleted_still_ran_by_cronctl_s_runs() -> None:
    # a slot-named manual run for 10:02, its Job and events gone: only cronctl.dev/runs remembers it
    cj = _runs(cronjob(last=T(10, 5), ok_limit=1),
               {"run_id": "r7", "job_name": slotname(T(10, 2)), "occurrence": z(T(10, 2)),
                "suspended_at": z(T(10, 2, 10)), "restored_at": z(T(10, 2, 50)), "last_step": "succeeded"})
    h = judge(cj, [scheduled(T(10, 3)), scheduled(T(10, 4)), scheduled(T(10, 5))], now=T(10, 5, 30))
    r = row(h, "10:02")
    assert r["verdict"] == "ran" and r["jobs"] == [slotname(T(10, 2))]
    assert r["job_details"][0]["stands_by"] == "cronctl-runs" and r["job_details"][0]["exists"] is False
    assert "alice" in r["reason"] and "deleted since" in r["reason"]
    assert fail_on([h], {"lost"}) == []


def test_a_run_that_stopped_before_making_its_job_stands_for_nothing() -> None:
    cj = _runs(cronjob(last=T(10, 5)),
               {"run_id": "r8", "job_name": slotname(T(10, 2)), "occurrence": z(T(10, 2)),
                "suspended_at": z(T(10, 1, 10)), "restored_at": z(T(10, 1, 20)), "last_step": "aborted"})
    h = judge(cj, [scheduled(T(10, t)) for t in (1, 3, 4, 5)], now=T(10, 5, 30))
    assert row(h, "10:02")["verdict"] != "ran" and row(h, "10:02")["job_details"] == []


def test_slots_lost_while_a_finished_cronctl_run_held_the_cronjob_name_that_run() -> None:
    # run r9 held the CronJob 10:00:30 to 10:03:30; its restore's catch-up ran 10:03 late; the
    # manual Job and every event are gone, and nothing else says who suspended it
    catch = job(slotname(T(10, 3)), slot=T(10, 3), created=T(10, 3, 31), done=T(10, 3, 50))
    cj = _runs(cronjob(last=T(10, 3)),
               {"run_id": "r9", "operator": "bob", "suspended_at": z(T(10, 0, 30)), "restored_at": z(T(10, 3, 30)),
                "job_name": "cj-manual"})
    h = judge(cj, [scheduled(T(10, 0)), catch], now=T(10, 3, 55))
    assert (verdicts(h)["10:01"], verdicts(h)["10:02"]) == ("missed-suspended", "missed-suspended")
    assert "r9" in row(h, "10:01")["reason"] and "bob" in row(h, "10:01")["reason"]
    assert "r9" in row(h, "10:03")["reason"]  # the late catch-up: when r9 restored it


def _attempt(name: str, t: datetime, created: datetime, outcome: str, retry_of: str | None) -> dict[str, Any]:
    j = job(name, created=created, done=created + timedelta(seconds=5), outcome=outcome, manual=True,
            occurrence=t, operator="alice")
    if retry_of:
        j["metadata"]["annotations"]["cronctl.dev/retry-of"] = retry_of
    return j


def test_failed_attempts_run_again_with_retry_are_attempts_not_a_duplicate() -> None:
    s = slotname(T(10, 2))
    jobs = [_attempt(s, T(10, 2), T(10, 2, 10), "Failed", None),
            _attempt(f"{s}-r2", T(10, 2), T(10, 2, 30), "Failed", s),
            _attempt(f"{s}-r3", T(10, 2), T(10, 2, 50), "Complete", f"{s}-r2")]
    h = judge(cronjob(last=T(10, 3)), jobs + [scheduled(T(10, 3))], now=T(10, 3, 30))
    r = row(h, "10:02")
    assert r["verdict"] == "ran" and r["jobs"] == [s, f"{s}-r2", f"{s}-r3"]
    assert "2 failed attempt(s)" in r["reason"] and f"{s}-r2" in r["reason"]


def test_a_second_run_beside_a_retried_one_is_still_a_duplicate() -> None:
    s = slotname(T(10, 2))
    jobs = [_attempt(s, T(10, 2), T(10, 2, 10), "Failed", None),
            _attempt(f"{s}-r2", T(10, 2), T(10, 2, 30), "Complete", s),
            _attempt("by-hand", T(10, 2), T(10, 2, 40), "Complete", None)]  # not linked: a second run
    h = judge(cronjob(last=T(10, 3)), jobs + [scheduled(T(10, 3))], now=T(10, 3, 30))
    assert row(h, "10:02")["verdict"] == "duplicate"


# --- Jobs that are gone: evidence before verdicts (issue 10 item 5) ---------------------------

def _forbid_restore_catch_up() -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]], str]:
    """The issue's incident, as the objects showed it at 16:39:30: a */1 Forbid CronJob "orders-fast"
    was suspended by cronctl run-manual (manual Job 16:24:40-16:27:50), restored at 16:28:50; the
    controller's catch-up for 16:28, orders-fast-29937148 (16:28 = minute 29937148 since the epoch),
    was created at 16:28:55, ran to 16:29:30 (so 16:29 was refused: JobAlreadyActive), and the
    history limit (3) deleted it at 16:33:30. Only 16:37-16:39 are kept."""
    name = "orders-fast"

    def sched(m: int) -> dict[str, Any]:
        t = T(16, m)
        return job(f"{name}-{int(t.timestamp()) // 60}", slot=t, created=t + timedelta(seconds=1),
                   done=t + timedelta(seconds=20), cj=name)

    catch = "orders-fast-29937148"
    assert datetime.fromtimestamp(29937148 * 60, UTC) == T(16, 28)
    manual = job("orders-fast-manual", created=T(16, 24, 40), done=T(16, 27, 50), manual=True, operator="alice",
                 cj=name)
    cj = cronjob(name=name, policy="Forbid", last=T(16, 39), suspend_written=T(16, 28, 50), ok_limit=3,
                 created=T(16, 0), last_ok=T(16, 39, 20))

    evs = [successful_create(catch, T(16, 28, 55), name=name), job_already_active(T(16, 29, 0), name=name),
           saw_completed(catch, T(16, 29, 31), name=name), successful_delete(catch, T(16, 33, 30), name=name)]
    return cj, [sched(37), sched(38), sched(39), manual], evs, catch


def test_a_catch_up_the_history_limit_deleted_ran_late_and_is_not_lost() -> None:
    cj, jobs, evs, catch = _forbid_restore_catch_up()
    h = judge(cj, jobs, evs, now=T(16, 39, 30), since=T(16, 27, 30))
    r = row(h, "16:28")
    assert (r["verdict"], r["jobs"]) == ("ran-late", [catch])
    d = r["job_details"][0]
    assert (d["exists"], d["stands_by"], d["outcome"], d["created"]) == (False, "event", "Complete", z(T(16, 28, 55)))
    assert d["removed_by"] == "history-limit"
    assert d["known_from"] == ["CronJob/SuccessfulCreate", "CronJob/SawCompletedJob", "CronJob/SuccessfulDelete"]
    assert "history limit at 2026-12-02T16:33:30Z" in r["reason"] and "successfulJobsHistoryLimit=3" in r["reason"]
    assert "un-suspended" in r["reason"]  # the cause of the lateness is still told
    assert row(h, "16:29")["verdict"] == "skipped-forbid"  # the catch-up ran over it: that one is lost
    assert f"ns/orders-fast {z(T(16, 28))}" not in " ".join(fail_on([h], {"lost"}))
    # the SuccessfulCreate expired first: the later events still say the Job ran (not when it was created)
    h = judge(cj, jobs, evs[1:], now=T(16, 39, 30), since=T(16, 27, 30))
    r = row(h, "16:28")
    assert (r["verdict"], r["jobs"]) == ("ran", [catch]) and "when it was created is not known" in r["reason"]


def test_a_gone_job_named_only_by_its_end_and_its_deletion_ran() -> None:
    # the SuccessfulCreate event expired (or was folded into a combined event naming a later Job)
    gone = slotname(T(10, 0))
    evs = [event("SawCompletedJob", f"Saw completed job: {gone}, condition: Failed", T(10, 0, 30)),
           event("BackoffLimitExceeded", "Job has reached the specified backoff limit", T(10, 0, 29),
                 kind="Job", name=gone, etype="Warning"),
           event("SuccessfulDelete", f"Deleted job {gone}", T(10, 1, 40))]
    h = judge(cronjob(last=T(10, 1)), [scheduled(T(10, 1), outcome="Failed")], evs, now=T(10, 1, 50))
    r = row(h, "10:00")
    assert r["verdict"] == "ran" and r["jobs"] == [gone]
    d = r["job_details"][0]
    assert (d["outcome"], d["failure_reason"], d["created"]) == ("Failed", "BackoffLimitExceeded", None)
    # Failed: the failed limit (default 1) deleted it
    assert d["removed_by"] == "history-limit" and "failedJobsHistoryLimit=1 (default)" in d["removed"]
    assert "Failed: BackoffLimitExceeded" in r["reason"] and "when it was created is not known" in r["reason"]
    assert "Job/BackoffLimitExceeded" in d["known_from"]


def test_a_combined_event_names_the_job_of_its_latest_occurrence() -> None:
    # client-go folds the 11th similar event in ten minutes into one, keeping the latest message
    gone = slotname(T(10, 20))
    evs = [event("SuccessfulCreate", f"(combined from similar events): Created job {gone}", T(10, 5, 1),
                 T(10, 20, 1))]
    h = judge(cronjob(last=T(10, 21)), [scheduled(T(10, 21))], evs, now=T(10, 21, 30), since=T(10, 19, 30))
    r = row(h, "10:20")
    assert r["verdict"] == "ran" and r["job_details"][0]["created"] == z(T(10, 20, 1))


def test_what_removed_a_gone_job_without_a_delete_event() -> None:
    gone = slotname(T(10, 0))
    created = [event("SuccessfulCreate", f"Created job {gone}", T(10, 0, 1))]
    # a TTL deletes without an event
    h = judge(cronjob(last=T(10, 1), ttl=30), [scheduled(T(10, 1))], created, now=T(10, 1, 50))
    d = row(h, "10:00")["job_details"][0]
    assert d["removed_by"] == "ttl-after-finished" and "ttlSecondsAfterFinished=30" in d["removed"]
    # gone while it was in .status.active: not the controller's cleanup
    missing = created + [event("MissingJob", f"Active job went missing: {gone}", T(10, 0, 40))]
    d = row(judge(cronjob(last=T(10, 1)), [scheduled(T(10, 1))], missing, now=T(10, 1, 50)), "10:00")["job_details"][0]
    assert d["removed_by"] == "deleted-while-running" and "a person or another client" in d["removed"]
    # one succeeded Job is kept and the limit is 3: the limit did not delete it
    d = row(judge(cronjob(last=T(10, 1)), [scheduled(T(10, 1))], created, now=T(10, 1, 50)), "10:00")["job_details"][0]
    assert d["removed_by"] == "unknown" and "do not explain it" in d["removed"] and "1 succeeded of 3" in d["removed"]
    # three kept of three: the limit may have, its event may have expired
    jobs = [scheduled(T(10, m)) for m in (1, 2, 3)]
    d = row(judge(cronjob(last=T(10, 3)), jobs, created, now=T(10, 3, 50)), "10:00")["job_details"][0]
    assert d["removed_by"] == "unknown" and "SuccessfulDelete event expired" in d["removed"]


def test_a_deletion_without_the_outcome_names_both_history_limits() -> None:
    gone = slotname(T(10, 0))
    evs = [event("SuccessfulCreate", f"Created job {gone}", T(10, 0, 1)),
           event("SuccessfulDelete", f"Deleted job {gone}", T(10, 1, 30))]
    d = row(judge(cronjob(last=T(10, 1), ok_limit=0), [scheduled(T(10, 1))], evs, now=T(10, 1, 50)),
            "10:00")["job_details"][0]
    assert d["removed_by"] == "history-limit"
    assert "successfulJobsHistoryLimit=0 or failedJobsHistoryLimit=1 (default)" in d["removed"]


def test_a_failed_job_s_reason_is_in_its_slot_s_reason() -> None:
    failed = job(slotname(T(10, 0)), slot=T(10, 0), created=T(10, 0, 1), done=T(10, 0, 40), outcome="Failed",
                 why="DeadlineExceeded")
    h = judge(cronjob(last=T(10, 0)), [failed], now=T(10, 0, 50))
    r = row(h, "10:00")
    assert r["verdict"] == "ran" and r["reason"] == "Failed: DeadlineExceeded"
    assert r["job_details"][0]["failure_reason"] == "DeadlineExceeded"


def test_last_successful_time_moved_by_a_manual_job_is_told() -> None:
    s1 = scheduled(T(10, 0))  # completes 10:00:21
    manual = job("cj-manual", created=T(10, 0, 30), done=T(10, 0, 45), manual=True, operator="alice")
    h = judge(cronjob(last=T(10, 0), last_ok=T(10, 0, 45)), [s1, manual], now=T(10, 0, 50))
    note = [n for n in h["notes"] if "lastSuccessfulTime" in n]
    assert note and "2026-12-02T10:00:45Z comes from the manual Job cj-manual" in note[0]
    assert "cronctl run-manual r1 of alice" in note[0]
    assert f"the last scheduled success was 2026-12-02T10:00:21Z ({slotname(T(10, 0))})" in note[0]
    # the scheduled Job's own completion: nothing to say
    h = judge(cronjob(last=T(10, 0), last_ok=T(10, 0, 21)), [s1, manual], now=T(10, 0, 50))
    assert not [n for n in h["notes"] if "lastSuccessfulTime" in n]


def test_older_than_what_history_limits_keep_is_evidence_gone() -> None:
    h = judge(cronjob(last=T(10, 5), ok_limit=1), [scheduled(T(10, 5))], now=T(10, 5, 30), since=T(10, 2, 30))
    v = verdicts(h)
    assert (v["10:03"], v["10:04"], v["10:05"]) == ("evidence-gone", "evidence-gone", "ran")
    assert fail_on([h], {"lost"}) == []  # it probably ran: not counted as lost


def test_a_slot_that_just_passed_is_due_and_the_next_one_too() -> None:
    h = judge(cronjob(last=T(10, 0)), [scheduled(T(10, 0))], now=T(10, 1, 4))
    v = verdicts(h)
    assert v["10:01"] == "due" and v["10:02"] == "due"


def test_the_controller_s_pending_catch_up_is_due_and_forbid_waits() -> None:
    h = judge(cronjob(last=T(10, 0)), [scheduled(T(10, 0))], now=T(10, 1, 40))
    assert row(h, "10:01")["verdict"] == "due" and "next sync" in row(h, "10:01")["reason"]
    run = job(slotname(T(10, 0)), slot=T(10, 0), created=T(10, 0, 1))
    h = judge(cronjob(policy="Forbid", last=T(10, 0), active=[slotname(T(10, 0))]), [run], now=T(10, 1, 40))
    assert row(h, "10:00")["verdict"] == "running"
    assert row(h, "10:01")["verdict"] == "skipped-forbid" or "waits for" in row(h, "10:01")["reason"]


def test_dst_spring_forward_has_a_skipped_row_and_fall_back_a_doubled_run() -> None:
    spring = cronjob("30 2 * * *", tz="Europe/Berlin", created=datetime(2026, 3, 27, tzinfo=UTC))
    h = judge(spring, [], now=datetime(2026, 3, 30, 12, tzinfo=UTC), since=datetime(2026, 3, 28, 12, tzinfo=UTC))
    skipped = [r for r in h["slots"] if r["verdict"] == "dst-skipped"]
    assert len(skipped) == 1 and skipped[0]["slot_local"].startswith("2026-03-29T02:30")
    assert "does not exist" in skipped[0]["reason"]
    fall = cronjob("30 2 * * *", tz="Europe/Berlin", created=datetime(2026, 10, 20, tzinfo=UTC),
                   last=datetime(2026, 10, 25, 1, 30, tzinfo=UTC))
    first, second = datetime(2026, 10, 25, 0, 30, tzinfo=UTC), datetime(2026, 10, 25, 1, 30, tzinfo=UTC)
    h = judge(fall, [scheduled(first), scheduled(second)], now=datetime(2026, 10, 25, 2, tzinfo=UTC),
              since=datetime(2026, 10, 24, 12, tzinfo=UTC))
    v = {r["slot"]: r["verdict"] for r in h["slots"]}
    assert v[z(first)] == "ran" and v[z(second)] == "dst-doubled"
    assert fail_on([h], {"duplicate"}) == [f"ns/cj {z(second)} dst-doubled"]


def test_the_window_reaches_back_to_the_oldest_evidence_at_most_seven_days() -> None:
    h = judge(cronjob(last=T(10, 5), created=T(0, 0, day=1)), [scheduled(T(10, 3)), scheduled(T(10, 5))],
              now=T(10, 5, 30))
    assert h["window"]["limited_by"] == "evidence" and h["slots"][0]["slot"] == z(T(10, 3))
    old = cronjob("0 * * * *", created=datetime(2026, 1, 1, tzinfo=UTC))
    h = judge(old, [], now=T(10, 0, 30))
    assert h["window"]["limited_by"] == "7 days" and h["window"]["since"] == "2026-11-25T10:00:30Z"
    judged = [r for r in h["slots"] if r["verdict"] != "due"]
    # 10:00 passed 30 s ago: the controller starts it at its next sync (due), every older one is lost
    assert judged[0]["slot"] == "2026-11-25T11:00:00Z" and judged[-1]["slot"] == z(T(9, 0)) and len(judged) == 167
    assert judged[-1]["reason"].startswith("no Job since status.lastScheduleTime (never set)")
    assert next(r for r in h["slots"] if r["slot"] == z(T(10, 0)))["verdict"] == "due"
    assert {r["verdict"] for r in judged} == {"missed"}  # never scheduled at all: lastScheduleTime is unset


def test_a_bad_schedule_is_an_error_not_a_crash() -> None:
    h = judge(cronjob("61 * * * *"), [], now=T(10, 0))
    assert h["error"] and h["slots"] == []
    h = judge(cronjob(deadline=-5), [], now=T(10, 0))  # the API refuses it; an old object may have it
    assert "startingDeadlineSeconds" in h["error"] and h["slots"] == []


def test_every_verdict_is_documented_on_the_history_page() -> None:
    section = (ROOT / "docs" / "commands" / "history.md").read_text()
    assert section.startswith("# cronctl history\n")
    for v in VERDICTS:
        assert f"`{v}`" in section, v


# --- the CLI on a dump -------------------------------------------------------------------------

def _dump(tmp_path: Path, objs: list[dict[str, Any]]) -> str:
    p = tmp_path / "dump.yaml"
    p.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objs}))
    return str(p)


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    from cronctl.cli import main

    rc = main(["history", *args])
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def test_cli_from_a_dump_fails_on_lost_with_exit_8_and_prints_valid_json(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    catch = job(slotname(T(10, 8)), slot=T(10, 8), created=T(10, 8, 40), done=T(10, 9))
    path = _dump(tmp_path, [cronjob(last=T(10, 8), suspend_written=T(10, 8, 39)), scheduled(T(10, 0)), catch])
    now = z(T(10, 8, 50))
    rc, out, err = _cli(capsys, "--from-dump", path, "--now", now, "-o", "json")
    assert rc == 0, err
    doc = json.loads(out)
    jsonschema.validate(doc, SCHEMA)
    assert doc["cronjobs"][0]["counts"]["missed-suspended"] == 7
    rc, out, err = _cli(capsys, "--from-dump", path, "--now", now, "--fail-on", "lost")
    assert rc == 8 and "missed-suspended" in out and "7 slot(s) fail --fail-on" in err
    rc, _, _ = _cli(capsys, "--from-dump", path, "--now", now, "--fail-on", "duplicate")
    assert rc == 0
    rc, _, err = _cli(capsys, "nope", "--from-dump", path)
    assert rc == 6 and "no CronJob nope" in err
    rc, _, err = _cli(capsys, "--from-dump", path, "--since", "soon")
    assert rc == 2 and "--since" in err and "Traceback" not in err


@pytest.mark.parametrize("args", [["-A", "-n", "x"], ["cj", "-A"]])
def test_cli_refuses_contradicting_sources(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = _cli(capsys, *args)
    assert rc == 2 and err


# --- the text table (cronctl/cli/layout.py) ---------------------------------------------------------

LONG = ("the Job was deleted since: deleted by the CronJob controller's history limit at 2026-12-04T14:33:06Z "
        "(SuccessfulDelete; successfulJobsHistoryLimit=3); it ran, as CronJob/SuccessfulCreate, "
        "Job/SuccessfulCreate, CronJob/SawCompletedJob show")
HEADS = ["slot", "utc", "verdict", "outcome", "job(s)", "delay", "took"]


def _table() -> list[Any]:
    from cronctl.cli.history import slot_row

    return [slot_row(["2026-12-04 15:31", "14:31Z", "ran", "succeeded", "0s", "6s"], ["settle-29939911"], LONG),
            slot_row(["2026-12-04 15:32", "14:32Z", "duplicate", "succeeded", "0s", "6s"],
                     ["settle-29939912", "settle-manual-long-name"], "two Jobs stand for the slot"),
            slot_row(["2026-12-04 15:33", "14:33Z", "due", "-", "-", "-"], ["-"], "")]


def _lines(rows: list[Any], width: int | None) -> tuple[list[Any], list[int]]:
    from cronctl.cli.layout import lay_out

    return lay_out(HEADS, "reason", rows, width)


@pytest.mark.parametrize("width", [None, 200, 120, 80, 60])
def test_the_slot_table_never_breaks_a_job_name_and_keeps_every_word_of_the_reason(width: int | None) -> None:
    lines, starts = _lines(_table(), width)
    text = [x.text for x in lines]
    for name in ("settle-29939911", "settle-29939912", "settle-manual-long-name"):
        assert sum(t.count(name) for t in text) == 1, (name, text)
    if width is not None:  # no reason line passes the edge; cells are never cut: at 80 and 60 they are
        # wider than the terminal alone (84 columns, with the outcome and a 23-character Job name)
        fits = [x.text for x in lines if width > 84 or x.kind == "under"]
        assert fits and all(len(t) <= width for t in fits), [t for t in fits if len(t) > width]
    # the reason's words, in order, after the row's cells
    first = next(i for i, t in enumerate(text) if "14:31Z" in t)
    nxt = next(i for i, t in enumerate(text) if "14:32Z" in t)
    assert " ".join(text[first:nxt]).split()[-len(LONG.split()):] == LONG.split()
    # each row's verdict starts where the header's verdict column does
    at = starts[HEADS.index("verdict")]
    assert at == text[0].index("verdict")
    assert [x.text[at:].split(" ", 1)[0] for x in lines if x.kind == "row"] == ["ran", "duplicate", "due"]


def test_the_slot_table_is_one_line_per_slot_for_grep_and_wraps_on_a_narrow_terminal() -> None:
    piped = [x.text for x in _lines(_table(), None)[0]]
    row = next(t for t in piped if "14:31Z" in t)
    assert "settle-29939911" in row and row.endswith(LONG)  # grep 14:31Z shows the whole verdict
    assert piped[0].split() == HEADS + ["reason"]
    narrow = [x.text for x in _lines(_table(), 80)[0]]
    assert "reason" not in narrow[0]  # no room beside the row: the reason goes under it, indented
    under = narrow[narrow.index(next(t for t in narrow if "14:31Z" in t)) + 1]
    assert under.startswith("    the Job was deleted")
    wide = [x.text for x in _lines(_table(), 120)[0]]
    assert wide[0].split()[-1] == "reason"  # room beside the row: the reason wraps in its own column
    at = wide[0].index("reason")
    i = wide.index(next(t for t in wide if "14:31Z" in t))
    assert wide[i][at:].startswith("the Job was deleted") and not wide[i].endswith(LONG)
    assert wide[i + 1][:at].strip() == "" and wide[i + 1][at] != " "


def test_notes_go_under_the_row_when_piped_and_are_marked_to_be_shown_dim() -> None:
    from cronctl.cli.layout import Row, lay_out

    rows = [Row([["warning"], ["CJ014"], ["ns/cj"]], "spec.jobTemplate.spec.activeDeadlineSeconds is not set",
                ["why: a hung run holds its slot", "fix: set it"])]
    for width in (None, 80, 200):
        lines, _ = lay_out(["SEVERITY", "RULE", "CRONJOB"], "FINDING", rows, width)
        notes = [x.text[x.note_at:] for x in lines if x.note_at is not None]
        assert notes == ["why: a hung run holds its slot", "fix: set it"], (width, lines)
        assert any("spec.jobTemplate.spec.activeDeadlineSeconds" in x.text and x.note_at is None for x in lines)
    piped, _ = lay_out(["SEVERITY", "RULE", "CRONJOB"], "FINDING", rows, None)
    assert [x.kind for x in piped] == ["head", "row", "under", "under"]


def test_the_slot_table_shows_escapes_in_names_and_reasons_as_text() -> None:
    from cronctl.cli.history import slot_row

    rows = [slot_row(["2026-12-04 15:31", "14:31Z", "manual", "succeeded", "-", "6s"], ["x\x1b]52;c;Y\x07"],
                     "manual run by mallory\x1b[2J\u202e")]
    text = "\n".join(x.text for x in _lines(rows, None)[0])
    assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text
    assert "\\x1b]52;c;Y" in text and "mallory\\x1b[2J" in text


def test_a_manual_run_is_shown_at_its_local_time_in_the_cronjobs_zone(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    manual = job("cj-manual", created=T(10, 0, 30), done=T(10, 1, 30), manual=True, operator="carol")
    path = _dump(tmp_path, [cronjob(tz="Asia/Kolkata", last=T(10, 0)), scheduled(T(10, 0)), manual])
    rc, out, err = _cli(capsys, "--from-dump", path, "--now", z(T(10, 1, 50)), "-o", "json")
    assert rc == 0, err
    m = json.loads(out)["cronjobs"][0]["manual_runs"][0]
    assert m["created_local"] == "2026-12-02T15:30:30+05:30"
    rc, out, err = _cli(capsys, "--from-dump", path, "--now", z(T(10, 1, 50)))
    line = next(t for t in out.splitlines() if "cj-manual" in t)
    assert line.startswith("2026-12-02 15:30  10:00Z  manual"), line


def test_a_window_with_more_slots_than_max_slots_shows_the_latest_ones() -> None:
    # an every-minute CronJob over 30 days: 43,200 slots, 20,000 shown: the 20,000 before now
    now = T(10, 0, 30)
    h = slot_history(cronjob(created=now - timedelta(days=40)), [], [],
                     Options(now=now, since=now - timedelta(days=30), max_slots=20_000))
    past = [r["slot"] for r in h["slots"][:-1]]  # the last row is the next slot, 10:01
    assert h["slots"][-1]["slot"] == "2026-12-02T10:01:00Z"
    assert len(past) == 20_000
    assert past[-1] == "2026-12-02T10:00:00Z"
    assert past[0] == (T(10, 0) - timedelta(minutes=19_999)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert "only the latest 20000 slots are shown (use --since)" in h["notes"]


def test_a_finished_pause_is_named_with_its_reason_on_the_slots_it_cost_and_on_the_catch_up(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 34 item 3, offline: what resume keeps on the CronJob (cronctl.dev/pauses) outlives the
    pause's annotations; history and the bundle read it (tests/cluster/test_suspend_evidence.py: live
    and from the ledger, with the recorder running)."""
    pauses = json.dumps([{"by": "alice", "at": z(T(10, 2, 30)), "reason": "db migration 4711",
                          "until": z(T(11, 2, 30)), "resumed_by": "bob", "resumed_at": z(T(10, 5, 25))}])
    catch = job(slotname(T(10, 5)), slot=T(10, 5), created=T(10, 5, 26), done=T(10, 5, 40))
    path = _dump(tmp_path, [cronjob(last=T(10, 5), suspend_written=T(10, 5, 25),
                                    annotations={"cronctl.dev/pauses": pauses}),
                            scheduled(T(10, 0)), scheduled(T(10, 1)), scheduled(T(10, 2)), catch])
    rc, out, err = _cli(capsys, "--from-dump", path, "--now", z(T(10, 6, 10)), "-o", "json")
    assert rc == 0, err
    rows = {r["slot"]: r for r in json.loads(out)["cronjobs"][0]["slots"]}
    words = f"paused by alice at {z(T(10, 2, 30))} until {z(T(11, 2, 30))}: db migration 4711; resumed by bob at " \
            f"{z(T(10, 5, 25))}"
    for lost in (T(10, 3), T(10, 4)):
        assert rows[z(lost)]["verdict"] == "missed-suspended" and rows[z(lost)]["reason"] == f"suspended ({words})"
    assert rows[z(T(10, 5))]["verdict"] == "ran-late"
    assert rows[z(T(10, 5))]["reason"] == ("created 26s after the slot: the catch-up the controller starts when the "
                                           f"CronJob is un-suspended: cronctl resume of the pause ({words})")

    from cronctl.cli import main

    assert main(["bundle", "--from-dump", path, "--now", z(T(10, 6, 10)), "--out", str(tmp_path / "b")]) == 0
    capsys.readouterr()
    (cj,) = json.loads((tmp_path / "b" / "bundle.json").read_text())["cronjobs"]
    assert [(p["start"], p["end"], p["source"], p["lost"]) for p in cj["suspended_periods"] if not p["inferred"]] \
        == [(z(T(10, 2, 30)), z(T(10, 5, 25)), f"{words} (kept in cronctl.dev/pauses)", 2)]
    assert "db migration 4711" in (tmp_path / "b" / "report.html").read_text()


def test_the_example_dump_reads_offline_with_its_pause_and_catch_up(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 34 item 13: examples/dump.yaml (kubectl get cronjobs,jobs,pods,events -o yaml of the local
    control plane: a manual run, a pause across a slot, its resume's late catch-up) is what the docs'
    `history --from-dump` and `bundle --from-dump` examples read."""
    dump = str(ROOT / "examples" / "dump.yaml")
    rc, out, err = _cli(capsys, "--from-dump", dump, "orders-sync", "-o", "json")
    assert rc == 0, err
    doc = json.loads(out)
    jsonschema.validate(doc, SCHEMA)
    (cj,) = doc["cronjobs"]
    late = [s for s in cj["slots"] if s["verdict"] == "ran-late"]
    assert len(late) == 1 and "cronctl resume of the pause" in late[0]["reason"] \
        and "payment provider outage INC-4711" in late[0]["reason"], late
    assert [m["reason"] for m in cj["manual_runs"]] == ["replay after the 503 outage"]
    rc, _, err = _cli(capsys, "--from-dump", dump, "order-sync")
    assert rc == 6 and err.strip().endswith("did you mean orders-sync? (it holds: orders-sync)"), err

    from cronctl.cli import main

    assert main(["bundle", "--from-dump", dump, "--out", str(tmp_path / "b")]) == 0
    capsys.readouterr()
    (b,) = json.loads((tmp_path / "b" / "bundle.json").read_text())["cronjobs"]
    assert [p["source"] for p in b["suspended_periods"] if "INC-4711" in p["source"]], b["suspended_periods"]
