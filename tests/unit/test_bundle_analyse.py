"""The pure incident analysis: verdicts per scheduled time, overlaps, suspended periods.

Expectations are worked out by hand from the objects (comments give the arithmetic).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import builders
from builders import (UID, T, job, job_already_active, saw_completed, successful_create, successful_delete,
                      unexpected_job, z)
from cronctl import model
from cronctl.bundle.analyse import Options, analyse_cronjob
from cronctl.events import event_view, events_for
from cronctl.bundle.dump import load_dump
from cronctl.bundle.render import timeline

UTC = timezone.utc
DUMP = Path(__file__).parent.parent / "golden" / "bundle" / "incident-004.dump.yaml"


def cronjob(schedule: str = "*/5 * * * *", **kw: Any) -> dict[str, Any]:
    """The CronJob of these scenarios (builders.cronjob): */5, Forbid, created at 10:00, unless the test
    says otherwise."""
    return builders.cronjob(schedule, **{"created": T(10, 0), "policy": "Forbid", "containers": [], **kw})


def verdicts(a: dict[str, Any]) -> list[tuple[str, str]]:
    return [(o["expected"][11:16], o["verdict"]) for o in a["occurrences"]]


# --- the incident of docs/BACKGROUND.md §4.4 (tests/golden/bundle/incident-004.dump.yaml) ---------------------

def _incident() -> dict[str, Any]:
    raw = load_dump(str(DUMP), namespace=None, now=T(11, 35), collected_at=T(11, 40))
    return analyse_cronjob(raw.cronjobs[0], raw.jobs, raw.pods, raw.events, Options(now=T(11, 35)))


def test_the_seed_004_incident_gets_one_verdict_per_scheduled_time() -> None:
    a = _incident()
    # */10 in Europe/Moscow (whole-hour offset) from the creation at 09:55Z to now 11:35Z:
    # 10:00 ... 11:30, ten times. 10:20 has no Job (controller down); 10:30 was created 3m5s late;
    # 10:50 waited for the long 10:40 Job (JobAlreadyActive) and was created 91 s late; the manual
    # Job ran 11:02:11-11:28:20, during the 11:00, 11:10 and 11:20 Jobs.
    # The verdicts are cronctl history's: the scheduled 11:00-11:20 runs each ran once (one Job
    # stands for each slot); the manual Job beside them is named on each, and in the overlaps.
    assert verdicts(a) == [("10:00", "ran"), ("10:10", "ran"), ("10:20", "missed"), ("10:30", "ran-late"),
                           ("10:40", "ran"), ("10:50", "ran-late"), ("11:00", "ran"),
                           ("11:10", "ran"), ("11:20", "ran"), ("11:30", "running")]
    occ = {o["expected"][11:16]: o for o in a["occurrences"]}
    assert occ["10:30"]["delay_seconds"] == 186  # started 3m6s after the slot (created 3m5s)
    assert occ["10:50"]["delay_seconds"] == 92 and "Forbid waited for mp-orders-sync-29936800" in occ["10:50"]["reason"]
    assert occ["11:10"]["manual_overlap"] == ["mp-orders-sync-fix"]
    assert occ["11:10"]["expected_local"] == "2026-12-02T14:10:00+03:00"
    assert (occ["11:10"]["created"], occ["11:10"]["started"], occ["11:10"]["completed"]) == (
        "2026-12-02T11:10:00Z", "2026-12-02T11:10:01Z", "2026-12-02T11:13:30Z")
    counts = {v: n for v, n in a["verdict_counts"].items() if n}
    assert counts == {"ran": 6, "ran-late": 2, "missed": 1, "running": 1}
    assert "Forbid does not see manual Jobs" in occ["11:10"]["reason"]


def test_the_seed_004_overlaps_are_the_manual_job_against_three_scheduled_ones() -> None:
    a = _incident()
    got = [(*(n["name"] for n in o["jobs"]), o["start"][11:19], o["end"][11:19], o["seconds"]) for o in a["overlaps"]]
    assert all(o["job_count"] == o["peak"] == 2 and o["manual_beside_scheduled"] for o in a["overlaps"])
    assert got == [
        ("mp-orders-sync-29936820", "mp-orders-sync-fix", "11:02:11", "11:03:10", 59),
        ("mp-orders-sync-fix", "mp-orders-sync-29936830", "11:10:01", "11:13:30", 209),
        ("mp-orders-sync-fix", "mp-orders-sync-29936840", "11:20:02", "11:23:40", 218),
    ]
    assert any("Forbid did not prevent" in n for n in a["notes"])


def test_the_seed_004_events_keep_unexpectedjob_highlighted_and_drop_other_objects() -> None:
    a = _incident()
    assert a["event_counts"]["UnexpectedJob"] == 9 and a["event_counts"]["JobAlreadyActive"] == 5
    highlighted = {e["reason"] for e in a["events"] if e["highlight"]}
    assert highlighted == {"UnexpectedJob", "JobAlreadyActive"}
    assert not any(e["object_name"].startswith("other-job") for e in a["events"])
    assert len(a["jobs"]) == 10 and "other-job" not in {j["name"] for j in a["jobs"]}


def test_the_seed_004_gap_is_explained_as_an_inferred_suspension_or_downtime() -> None:
    a = _incident()
    assert [(p["start"], p["end"], p["lost"], p["inferred"]) for p in a["suspended_periods"]] == [
        ("2026-12-02T10:20:00Z", "2026-12-02T10:33:05Z", 1, True)]
    lost = [o for o in a["occurrences"] if o["verdict"] == "missed"][0]
    assert "caught up only the latest slot (2026-12-02T10:30:00Z)" in lost["reason"]
    assert "cannot tell which" in lost["reason"]


def test_the_seed_004_schedule_record_has_base_now_checkpoint_and_active_ids() -> None:
    a = _incident()
    s = a["schedule"]
    assert (s["zone"], s["base"], s["base_source"], s["now"]) == (
        "Europe/Moscow", "2026-12-02T11:30:00Z", "status.lastScheduleTime", "2026-12-02T11:35:00Z")
    assert s["due"] == [] and s["decision"]["decision"] == "no-unmet"
    assert s["next_runs"][:2] == ["2026-12-02T11:40:00Z", "2026-12-02T11:50:00Z"]
    ck = a["checkpoint"]
    assert (ck["last_schedule_time"], ck["last_successful_time"]) == ("2026-12-02T11:30:00Z", "2026-12-02T11:28:20Z")
    # 11:28:20 is when the manual Job mp-orders-sync-fix ended (it ran 11:02:11-11:28:20), not a
    # scheduled one: the 11:20 Job, the last scheduled success, ended at 11:23:40
    src = ck["last_successful_from"]
    assert (src["job"], src["origin"], src["from_manual"]) == ("mp-orders-sync-fix", "manual", True)
    assert (src["last_scheduled_success"], src["last_scheduled_success_job"]) == (
        "2026-12-02T11:23:40Z", "mp-orders-sync-29936840")
    assert any(n.startswith("lastSuccessfulTime 2026-12-02T11:28:20Z comes from the manual Job mp-orders-sync-fix")
               for n in a["notes"])
    assert a["active"]["from_status"] == ["mp-orders-sync-29936850"]
    assert a["active"]["unfinished_children"] == ["mp-orders-sync-29936850"]


# --- small hand-made cases -------------------------------------------------------------------

def test_a_currently_suspended_cronjob_loses_every_time_since_it_was_suspended() -> None:
    managed = [{"manager": "kubectl-patch", "operation": "Update", "time": z(T(10, 7)),
                "fieldsV1": {"f:spec": {"f:suspend": {}}}}]
    cj = cronjob(suspend=True, last=T(10, 5), managed=managed)
    jobs = [job("cj-a", slot=T(10, 0), created=T(10, 0), done=T(10, 1)),
            job("cj-b", slot=T(10, 5), created=T(10, 5), done=T(10, 6))]
    a = analyse_cronjob(cj, jobs, [], [], Options(now=T(10, 31)))
    # */5 from creation 10:00 (exclusive) to 10:31: 10:05 ran; 10:10..10:30 lost (5 times)
    assert verdicts(a) == [("10:05", "ran"), ("10:10", "missed-suspended"), ("10:15", "missed-suspended"),
                           ("10:20", "missed-suspended"), ("10:25", "missed-suspended"), ("10:30", "missed-suspended")]
    assert all("kubectl-patch" in o["reason"] for o in a["occurrences"][1:])
    p = a["suspended_periods"][0]
    assert (p["start"], p["end"], p["lost"], p["inferred"]) == ("2026-12-02T10:07:00Z", None, 5, False)
    assert "kubectl-patch" in p["source"]
    assert a["schedule"]["decision"]["decision"] == "suspended"
    # unsuspending would start only 10:30 (the most recent); 10:10-10:25 are never made up
    assert a["never_made_up"] == [z(T(10, 10)), z(T(10, 15)), z(T(10, 20)), z(T(10, 25))]
    assert a["schedule"]["due"] == [z(T(10, m)) for m in (10, 15, 20, 25, 30)]


def test_a_finished_cronctl_run_is_a_known_suspended_period_with_who_and_why_after_its_job_is_gone() -> None:
    import json

    # run r5 of alice held the CronJob 10:08 to 10:22 (10:10, 10:15, 10:20 passed); the restore's
    # catch-up for 10:20 ran late at 10:22:01. Its manual Job, record and events are all gone.
    cj = cronjob(last=T(10, 20))
    cj["metadata"]["annotations"] = {"cronctl.dev/runs": json.dumps([{
        "run_id": "r5", "operator": "alice", "reason": "INC-7 reprocess", "job_name": "cj-manual",
        "occurrence": "", "suspended_at": z(T(10, 8)), "restored_at": z(T(10, 22)), "last_step": "succeeded",
        "original_suspend": False, "restored_to": False}])}
    jobs = [job("cj-a", slot=T(10, 5), created=T(10, 5), done=T(10, 6)),
            job("cj-c", slot=T(10, 20), created=T(10, 22, 1), done=T(10, 23))]
    a = analyse_cronjob(cj, jobs, [], [], Options(now=T(10, 24)))
    assert verdicts(a) == [("10:05", "ran"), ("10:10", "missed-suspended"), ("10:15", "missed-suspended"),
                           ("10:20", "ran-late")]
    (p,) = a["suspended_periods"]  # the known period only: no second, inferred one for the same gap
    assert (p["start"], p["end"], p["lost"], p["inferred"]) == (z(T(10, 8)), z(T(10, 22)), 2, False)
    assert "alice" in p["source"] and "INC-7 reprocess" in p["source"] and "r5" in p["source"]


def test_two_scheduled_jobs_for_one_time_are_a_duplicate() -> None:
    cj = cronjob(last=T(10, 5))
    jobs = [job("cj-29936885", slot=T(10, 5), created=T(10, 5), done=T(10, 6)),
            job("cj-copy", slot=T(10, 5), created=T(10, 5, 30), done=T(10, 6))]
    a = analyse_cronjob(cj, jobs, [], [], Options(now=T(10, 7)))
    assert verdicts(a) == [("10:05", "duplicate")]
    assert a["occurrences"][0]["reason"] == "2 Jobs stand for this slot: cj-29936885 (scheduled); cj-copy (scheduled)"
    assert a["occurrences"][0]["jobs"] == ["cj-29936885", "cj-copy"]


def test_a_cronctl_manual_run_for_a_time_that_also_ran_is_a_duplicate_and_alone_is_a_run() -> None:
    cj = cronjob(last=T(10, 5))
    claim = {"cronctl.dev/occurrence": z(T(10, 5)), "cronctl.dev/run-id": "r1"}
    manual = job("cj-manual", slot=None, created=T(10, 20), done=T(10, 21), manual=True, annotations=claim)
    sched = job("cj-29936885", slot=T(10, 5), created=T(10, 5), done=T(10, 6))
    both = analyse_cronjob(cj, [sched, manual], [], [], Options(now=T(10, 22)))
    assert verdicts(both)[0] == ("10:05", "duplicate")
    assert "cj-manual (manual, occurrence)" in both["occurrences"][0]["reason"]
    alone = analyse_cronjob(cj, [manual], [], [], Options(now=T(10, 22)))
    assert verdicts(alone)[0] == ("10:05", "ran")
    assert alone["occurrences"][0]["reason"].startswith("run manually as cj-manual (occurrence)")


def test_a_time_that_passed_moments_ago_without_a_job_is_due_not_lost() -> None:
    a = analyse_cronjob(cronjob(), [], [], [], Options(now=T(10, 5, 4)))
    assert verdicts(a) == [("10:05", "due")]


def test_a_time_older_than_every_kept_job_is_evidence_gone_when_history_limits_may_have_deleted_it() -> None:
    cj = cronjob(created=T(9, 0), last=T(10, 15), successfulJobsHistoryLimit=2)
    jobs = [job("cj-1", slot=T(10, 10), created=T(10, 10), done=T(10, 11)),
            job("cj-2", slot=T(10, 15), created=T(10, 15), done=T(10, 16))]
    a = analyse_cronjob(cj, jobs, [], [], Options(now=T(10, 17)))
    # the window reaches back to the oldest kept Job (10:10) minus 1 s... and 24 h of window
    # is cut at the creation (09:00), so 09:05 .. 10:05 are judged: 2 successful Jobs kept with a
    # limit of 2 means older ones may have been deleted.
    v = dict(verdicts(a))
    assert v["09:05"] == "evidence-gone" and v["10:05"] == "evidence-gone"
    assert v["10:10"] == "ran" and v["10:15"] == "ran"
    # with room left under the limit nothing was deleted by history cleanup: those times are lost
    b = analyse_cronjob(cronjob(created=T(9, 0), last=T(10, 15), successfulJobsHistoryLimit=5), jobs, [], [],
                        Options(now=T(10, 17)))
    assert dict(verdicts(b))["10:05"] == "missed"


def test_only_the_latest_times_are_judged_when_there_are_too_many() -> None:
    cj = cronjob("* * * * *", created=T(0, 0))
    a = analyse_cronjob(cj, [], [], [], Options(now=T(10, 0, 30), max_occurrences=10))
    assert [o["expected"][11:16] for o in a["occurrences"]] == [f"09:{m}" for m in range(51, 60)] + ["10:00"]
    assert a["window"]["truncated"] is True
    assert any("only the last 10" in n for n in a["notes"])


def test_a_schedule_the_engine_rejects_is_reported_and_nothing_is_judged() -> None:
    a = analyse_cronjob(cronjob("0 0 32 * *"), [], [], [], Options(now=T(11, 0)))
    assert "day-of-month" in (a["schedule"]["error"] or "")
    assert a["occurrences"] == [] and a["schedule"]["decision"] is None


def test_a_running_manual_job_shows_as_unfinished_and_not_in_status_active() -> None:
    cj = cronjob(last=T(10, 5))
    cj["status"]["active"] = [{"name": "cj-29936885"}]
    jobs = [job("cj-29936885", slot=T(10, 5), created=T(10, 5)),
            job("cj-fix", slot=None, created=T(10, 6), manual=True)]
    a = analyse_cronjob(cj, jobs, [], [], Options(now=T(10, 8)))
    assert a["active"] == {"from_status": ["cj-29936885"], "unfinished_children": ["cj-29936885", "cj-fix"],
                           "not_in_status": ["cj-fix"], "stale_in_status": []}
    # both still running: the interval runs through the current second (now + 1 s)
    assert a["overlaps"][0]["ongoing"] is True and a["overlaps"][0]["end"] == z(T(10, 8, 1))


# --- overlaps and events, alone -----------------------------------------------------------------

def _rec(name: str, start: datetime, end: datetime) -> model.JobRecord:
    return model.JobRecord(name=name, uid=name, origin="scheduled", scheduled_for=None, claims=None, created=start,
                           started=start, completed=end, outcome="Complete", start=start, end=end, running=False)


def find_overlaps(ivs: list[tuple[str, datetime, datetime]]) -> list[tuple[str, str, datetime, datetime]]:
    return model.overlaps(_rec(n, s, e) for n, s, e in ivs)


def test_intervals_that_only_touch_do_not_overlap_and_nested_ones_do() -> None:
    got = find_overlaps([("a", T(10, 0), T(10, 10)), ("b", T(10, 10), T(10, 20)),
                         ("c", T(10, 2), T(10, 4)), ("d", T(10, 15), T(10, 15))])
    assert got == [("a", "c", T(10, 2), T(10, 4))]


def test_three_intervals_sharing_time_give_three_pairs() -> None:
    got = find_overlaps([("a", T(10, 0), T(10, 30)), ("b", T(10, 5), T(10, 20)), ("c", T(10, 10), T(10, 40))])
    assert [(x, y, s.minute, e.minute) for x, y, s, e in got] == [
        ("a", "b", 5, 20), ("a", "c", 10, 30), ("b", "c", 10, 20)]


def test_events_of_deleted_jobs_and_pods_are_kept_by_name() -> None:
    cj = cronjob()
    evs: list[dict[str, Any]] = [
        {"metadata": {"name": "e1"}, "involvedObject": {"kind": "Job", "name": "cj-29936885", "uid": "gone"},
         "reason": "Completed", "message": "Job completed", "lastTimestamp": z(T(10, 6))},
        {"metadata": {"name": "e2"}, "involvedObject": {"kind": "Pod", "name": "cj-29936885-ab1cd", "uid": "gone2"},
         "reason": "Scheduled", "message": "m", "lastTimestamp": z(T(10, 5))},
        {"metadata": {"name": "e3"}, "involvedObject": {"kind": "Job", "name": "cjx-29936885", "uid": "x"},
         "reason": "Completed", "message": "other CronJob", "lastTimestamp": z(T(10, 6))},
        {"metadata": {"name": "e4"}, "involvedObject": {"kind": "CronJob", "name": "cj", "uid": UID},
         "reason": "UnexpectedJob", "type": "Warning", "message": "m", "count": 3,
         "firstTimestamp": z(T(10, 1)), "lastTimestamp": z(T(10, 3))},
    ]
    got = events_for(evs, cj, set(), set(), set(), set())
    assert [(e["name"], e["matched_by"]) for e in got] == [("e4", "uid"), ("e2", "name"), ("e1", "name")]
    assert got[0]["highlight"] and got[0]["warning"] and got[0]["count"] == 3


def test_an_events_k8s_io_event_reads_like_a_core_one() -> None:
    ev = {"metadata": {"name": "e"}, "regarding": {"kind": "CronJob", "name": "cj", "uid": "u"},
          "reason": "JobAlreadyActive", "note": "Not starting job", "type": "Normal",
          "series": {"count": 4, "lastObservedTime": "2026-12-02T10:05:00.123456Z"},
          "eventTime": "2026-12-02T10:01:00.000000Z", "reportingController": "cronjob-controller"}
    v = event_view(ev)
    assert (v["message"], v["count"], v["first"], v["last"], v["source"], v["highlight"]) == (
        "Not starting job", 4, "2026-12-02T10:01:00Z", "2026-12-02T10:05:00Z", "cronjob-controller", True)


def test_a_time_that_just_passed_while_suspended_is_missed_not_due() -> None:
    a = analyse_cronjob(cronjob(suspend=True), [], [], [], Options(now=T(10, 5, 4)))
    assert verdicts(a) == [("10:05", "missed-suspended")]


def test_a_job_that_started_in_the_second_of_now_overlaps_a_running_manual_job() -> None:
    # found on the real cluster: the bundle was taken within the second the scheduled Job started
    cj = cronjob("* * * * *", last=T(10, 1))
    jobs = [job("cj-fix", slot=None, created=T(10, 0, 25), manual=True),  # started 10:00:26
            job("cj-29936881", slot=T(10, 1), created=T(10, 0, 59))]  # started 10:01:00
    a = analyse_cronjob(cj, jobs, [], [], Options(now=T(10, 1, 0)))
    assert [(*(n["name"] for n in o["jobs"]), o["seconds"]) for o in a["overlaps"]] == [("cj-fix", "cj-29936881", 1)]
    occ = {o["expected"][11:16]: o for o in a["occurrences"]}
    assert occ["10:01"]["verdict"] == "running" and occ["10:01"]["manual_overlap"] == ["cj-fix"]
    # and the report draws it: its bars are the intervals the overlap was found on (CI saw the
    # drawing drop it when the bars ended at now and the overlap one second later)
    tl = timeline(a)
    assert len(tl["overlaps"]) == 1 and tl["overlaps"][0]["h"] == 2 * 22


def test_a_suspension_by_cronctl_run_manual_is_explained_by_its_run_record() -> None:
    cj = cronjob(suspend=True, last=T(10, 5))
    cj["metadata"]["annotations"] = {
        "cronctl.dev/run-id": "r-42", "cronctl.dev/operator": "alice", "cronctl.dev/reason": "catch up after 503",
        "cronctl.dev/step": "waiting", "cronctl.dev/started": z(T(10, 12)), "cronctl.dev/original-suspend": "false"}
    a = analyse_cronjob(cj, [job("cj-b", slot=T(10, 5), created=T(10, 5), done=T(10, 6))], [], [],
                        Options(now=T(10, 21)))
    p = a["suspended_periods"][0]
    assert p["start"] == z(T(10, 12)) and p["lost"] == 2  # 10:15 and 10:20; at 10:10 it was not suspended yet
    assert "cronctl run-manual r-42 (operator alice, reason: catch up after 503, step waiting)" in p["source"]
    assert dict(verdicts(a))["10:15"] == "missed-suspended" and dict(verdicts(a))["10:10"] == "missed"
    assert "cronctl run-manual r-42 of alice" in a["occurrences"][2]["reason"]


def test_a_time_older_than_the_kept_failed_job_is_evidence_gone_when_the_failed_limit_is_reached() -> None:
    # failedJobsHistoryLimit 1 (default) and one failed Job kept (10:15): a failed Job for 10:10
    # may have been deleted by the cleanup, although 10:10 is newer than the kept 10:05 success
    cj = cronjob(created=T(10, 0), last=T(10, 15))
    jobs = [job("cj-a", slot=T(10, 5), created=T(10, 5), done=T(10, 6)),
            job("cj-c", slot=T(10, 15), created=T(10, 15), done=T(10, 16), outcome="Failed")]
    a = analyse_cronjob(cj, jobs, [], [], Options(now=T(10, 17)))
    assert verdicts(a) == [("10:05", "ran"), ("10:10", "evidence-gone"), ("10:15", "ran")]
    assert "failedJobsHistoryLimit" in a["occurrences"][1]["reason"]


def test_a_ttl_after_finished_makes_every_missing_time_evidence_gone() -> None:
    cj = cronjob(created=T(10, 0), last=T(10, 15))
    cj["spec"]["jobTemplate"]["spec"]["ttlSecondsAfterFinished"] = 60
    a = analyse_cronjob(cj, [], [], [], Options(now=T(10, 17)))
    assert [v for _, v in verdicts(a)] == ["evidence-gone"] * 3



# --- evidence before verdicts: gone Jobs, failure reasons, images (issue 10 item 5) ------------

def test_a_slot_whose_job_the_history_limit_deleted_ran_and_the_bundle_says_what_removed_it() -> None:
    # */5 Forbid, successfulJobsHistoryLimit 1: the 10:05 Job was deleted when 10:10 completed
    # (10:10:41); its SuccessfulCreate, SawCompletedJob and SuccessfulDelete events remain
    gone = "cj-29936765"  # 10:05 = minute 29936765 since the epoch
    assert datetime.fromtimestamp(29936765 * 60, UTC) == T(10, 5)
    cj = cronjob(last=T(10, 10), successfulJobsHistoryLimit=1)
    kept = job("cj-29936770", slot=T(10, 10), created=T(10, 10, 1), done=T(10, 10, 40))
    evs = [successful_create(gone, T(10, 5, 1)), saw_completed(gone, T(10, 5, 31)),
           job_already_active(T(10, 10, 0)), successful_delete(gone, T(10, 10, 41))]
    a = analyse_cronjob(cj, [kept], [], evs, Options(now=T(10, 11)))
    occ = {o["expected"][11:16]: o for o in a["occurrences"]}
    assert (occ["10:05"]["verdict"], occ["10:05"]["jobs"], occ["10:05"]["jobs_gone"]) == ("ran", [gone], [gone])
    assert "history limit at 2026-12-02T10:10:41Z" in occ["10:05"]["reason"]
    assert occ["10:10"]["jobs_gone"] == []
    assert a["lost_history"] == [] and a["verdict_counts"]["ran"] == 2
    [g] = a["removed_jobs"]
    assert g == {"name": gone, "origin": "scheduled", "scheduled_for": z(T(10, 5)), "occurrence": z(T(10, 5)),
                 "created": z(T(10, 5, 1)), "finished": z(T(10, 5, 31)), "outcome": "Complete",
                 "failure_reason": None, "failure_message": None, "deleted": z(T(10, 10, 41)),
                 "removed_by": "history-limit",
                 "removed": "deleted by the CronJob controller's history limit at 2026-12-02T10:10:41Z "
                            "(SuccessfulDelete; successfulJobsHistoryLimit=1)",
                 "known_from": ["CronJob/SuccessfulCreate", "CronJob/SawCompletedJob", "CronJob/SuccessfulDelete"]}


def test_a_gone_manual_job_is_listed_with_what_removed_it_but_stands_for_no_slot() -> None:
    evs = [unexpected_job("cj-fix", T(10, 2)), successful_delete("cj-fix", T(10, 6, 1))]
    a = analyse_cronjob(cronjob(last=T(10, 5)), [job("cj-29936885", slot=T(10, 5), created=T(10, 5), done=T(10, 6))],
                        [], evs, Options(now=T(10, 7)))
    [g] = a["removed_jobs"]
    assert (g["name"], g["origin"], g["scheduled_for"], g["occurrence"], g["removed_by"]) == (
        "cj-fix", "manual", None, None, "history-limit")
    assert all(o["jobs_gone"] == [] for o in a["occurrences"])


def test_each_job_says_why_it_failed_and_a_failing_one_says_it_is_not_final() -> None:
    failed = job("cj-29936885", slot=T(10, 5), created=T(10, 5), done=T(10, 6), outcome="Failed")
    failed["status"]["conditions"] = [
        {"type": "FailureTarget", "status": "True", "reason": "DeadlineExceeded",
         "message": "Job was active longer than specified deadline", "lastTransitionTime": z(T(10, 5, 59))},
        {"type": "Failed", "status": "True", "reason": "DeadlineExceeded",
         "message": "Job was active longer than specified deadline", "lastTransitionTime": z(T(10, 6))}]
    failing = job("cj-29936890", slot=T(10, 10), created=T(10, 10))
    failing["status"]["conditions"] = [
        {"type": "FailureTarget", "status": "True", "reason": "PodFailurePolicy",
         "message": "Container main for pod ns/p failed with exit code 42 matching FailJob rule at index 0",
         "lastTransitionTime": z(T(10, 10, 30))}]
    ok = job("cj-29936895", slot=T(10, 15), created=T(10, 15), done=T(10, 16))
    a = analyse_cronjob(cronjob(last=T(10, 15)), [failed, failing, ok], [], [], Options(now=T(10, 17)))
    by = {j["name"]: j["failure"] for j in a["jobs"]}
    assert by["cj-29936885"] == {"reason": "DeadlineExceeded", "message": "Job was active longer than specified "
                                 "deadline", "at": z(T(10, 6)), "final": True}
    assert by["cj-29936890"] is not None and (by["cj-29936890"]["reason"], by["cj-29936890"]["final"]) == (
        "PodFailurePolicy", False)
    assert by["cj-29936895"] is None
    assert {o["expected"][11:16]: o["reason"] for o in a["occurrences"]}["10:05"] == "Failed: DeadlineExceeded"


def test_each_container_shows_its_image_digest_and_how_it_ended() -> None:
    j = job("cj-29936885", slot=T(10, 5), created=T(10, 5), done=T(10, 6), outcome="Failed")
    pod = {"metadata": {"name": "cj-29936885-abcde", "uid": "p1", "creationTimestamp": z(T(10, 5, 1)),
                        "ownerReferences": [{"kind": "Job", "name": j["metadata"]["name"], "uid": j["metadata"]["uid"],
                                             "controller": True}]},
           "spec": {"nodeName": "n1"},
           "status": {"phase": "Failed", "reason": "DeadlineExceeded", "message": "Pod was active too long",
                      "initContainerStatuses": [{"name": "migrate", "image": "reg.example/migrate:7",
                                                 "imageID": "reg.example/migrate@sha256:" + "a" * 64, "restartCount": 0,
                                                 "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}],
                      "containerStatuses": [{"name": "main", "image": "reg.example/app:1.2", "imageID": "",
                                             "restartCount": 1,
                                             "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}},
                                             "state": {"terminated": {"exitCode": 143, "signal": 15, "reason": "Error",
                                                                      "message": "shutting down"}}}]}}
    a = analyse_cronjob(cronjob(last=T(10, 5)), [j], [pod], [], Options(now=T(10, 7)))
    p = a["jobs"][0]["pods"][0]
    assert (p["reason"], p["message"]) == ("DeadlineExceeded", "Pod was active too long")
    init, main = p["containers"]
    assert (init["init"], init["image"], init["image_id"]) == (True, "reg.example/migrate:7",
                                                              "reg.example/migrate@sha256:" + "a" * 64)
    # an empty imageID (not pulled yet) is no digest
    assert (main["image"], main["image_id"], main["exit_code"], main["signal"], main["message"]) == (
        "reg.example/app:1.2", None, 143, 15, "shutting down")
    assert (main["restarts"], main["last_exit_code"], main["last_reason"]) == (1, 137, "OOMKilled")


def test_a_job_condition_message_is_masked_in_the_bundle() -> None:
    from cronctl.bundle.assemble import build_bundle
    from cronctl.lint.engine import findings_as_data
    from cronctl.bundle.raw import RawData

    j = job("cj-29936885", slot=T(10, 5), created=T(10, 5), done=T(10, 6), outcome="Failed")
    j["status"]["conditions"][0].update(reason="PodFailurePolicy",
                                        message="rule matched: curl https://bot:s3cr3t-pw@api.example/x")
    raw = RawData(namespace="ns", source="dump", now=T(10, 7), now_source="--now", collected_at=T(10, 7),
                  cronjobs=[cronjob(last=T(10, 5))], jobs=[j], pods=[], events=[])
    doc = build_bundle(raw, None, Options(now=T(10, 7)), lint=findings_as_data).doc
    msg = doc["cronjobs"][0]["jobs"][0]["failure"]["message"]
    assert "s3cr3t-pw" not in msg and msg == "rule matched: curl https://<redacted:1>@api.example/x"


_interval = st.tuples(st.integers(0, 200), st.integers(0, 60))


@settings(max_examples=300, deadline=None)
@given(st.lists(_interval, max_size=25))
def test_the_overlap_sweep_finds_exactly_the_pairs_a_brute_force_check_finds(spans: list[tuple[int, int]]) -> None:
    ivs = [(f"j{i}", T(10, 0) + timedelta(seconds=s), T(10, 0) + timedelta(seconds=s + d))
           for i, (s, d) in enumerate(spans)]
    got = {frozenset((a, b)): (s, e) for a, b, s, e in find_overlaps(ivs)}
    want = {}
    for i, (a, s1, e1) in enumerate(ivs):
        for b, s2, e2 in ivs[i + 1:]:
            if max(s1, s2) < min(e1, e2):
                want[frozenset((a, b))] = (max(s1, s2), min(e1, e2))
            # the pairwise rule of a record says the same as the sweep
            assert _rec(a, s1, e1).overlaps(_rec(b, s2, e2)) == (frozenset((a, b)) in want)
    assert got == want


def test_with_too_many_weekday_times_the_latest_ones_are_judged_up_to_now() -> None:
    # 09:00 on weekdays since 2026-01-01; now is Wednesday 2026-12-02 10:00Z
    cj = cronjob("0 9 * * 1-5", created=datetime(2026, 1, 1, tzinfo=UTC))
    a = analyse_cronjob(cj, [], [], [], Options(now=T(10, 0), window=timedelta(days=400), max_occurrences=7))
    got = [o["expected"] for o in a["occurrences"]]
    # the last 7 weekdays up to Wed 2 Dec: Tue 24 Nov .. Wed 2 Dec (skipping 28/29 Nov)
    assert got == [f"2026-{d}T09:00:00Z" for d in ("11-24", "11-25", "11-26", "11-27", "11-30", "12-01", "12-02")]
    assert a["window"]["truncated"] is True


def test_a_container_state_key_the_api_does_not_know_is_no_state_and_no_crash() -> None:
    # found by tests/property/test_file_fuzz.py: `state: {0: 1}` in a hand-made dump was an internal error
    from cronctl.model import pod_view as _pod  # the bundle's pods are the one pod view

    pod = {"metadata": {"name": "p"}, "status": {"containerStatuses": [
        {"name": "main", "state": {0: 1}}, {"name": "side", "state": {"terminated": {"exitCode": 2}}}]}}
    views = {c.name: c for c in _pod(pod).containers}
    assert views["main"].state is None and views["main"].exit_code is None
    assert views["side"].state == "terminated" and views["side"].exit_code == 2
