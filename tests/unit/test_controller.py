"""The controller model beyond the vectors: suspend, TZ in the schedule, unknown zones, the
estimate's silent skips, the deadline window, Job names and annotations (docs/SEMANTICS.md §4)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from cronctl.errors import ScheduleError
from cronctl.schedule import decide, job_name
from cronctl.schedule.controller import scheduled_timestamp_annotation

UTC = timezone.utc


def _z(s: str) -> datetime:
    return datetime.fromisoformat(s.replace("Z", "+00:00"))


def _d(expr: str, *, tz: str | None = None, last: str | None = None, now: str,
       created: str = "2026-01-01T00:00:00Z", deadline: int | None = None,
       suspended: bool = False, local: str | None = None):  # type: ignore[no-untyped-def]
    return decide(expr, time_zone=tz, name="cj", created=_z(created),
                  last_schedule=None if last is None else _z(last), starting_deadline=deadline,
                  now=_z(now), suspended=suspended, controller_tz=local)


def test_job_name_is_name_dash_unix_minutes() -> None:
    assert job_name("mycronjob", _z("2026-01-01T01:00:00Z")) == "mycronjob-29453820"
    assert job_name("x", _z("2026-01-01T01:00:59Z")) == "x-29453820"


def test_annotation_is_utc_z_without_time_zone_and_offset_with_one() -> None:
    t = _z("2026-07-01T13:00:00Z")
    assert scheduled_timestamp_annotation(t, None) == "2026-07-01T13:00:00Z"
    assert scheduled_timestamp_annotation(t, "America/New_York") == "2026-07-01T09:00:00-04:00"
    assert scheduled_timestamp_annotation(t, "Asia/Kolkata") == "2026-07-01T18:30:00+05:30"
    # Go's RFC3339 prints Z for any zero offset, even in a named zone
    assert scheduled_timestamp_annotation(_z("2026-01-10T03:00:00Z"), "Europe/London") == \
        "2026-01-10T03:00:00Z"


def test_suspended_computes_nothing_and_does_not_requeue() -> None:
    d = _d("0 * * * *", last="2026-01-01T10:00:00Z", now="2026-01-01T13:30:00Z", suspended=True)
    assert d.decision == "suspended"
    assert (d.most_recent, d.job_name, d.next_wakeup, d.events) == (None, None, None, ())
    assert len(d.missed_runs) == 3  # what is being missed while suspended


def test_unsuspending_starts_only_the_most_recent_missed_run() -> None:
    d = _d("10 * * * *", last="2026-01-01T00:10:00Z", now="2026-01-01T14:30:00Z")
    assert d.decision == "create" and d.most_recent == _z("2026-01-01T14:10:00Z")
    assert len(d.missed_runs) == 14 and len(d.never_made_up) == 13
    assert d.missed == "few"


def test_the_estimate_skips_friday_for_weekday_schedules_resumed_on_saturday() -> None:
    d = _d("0 9 * * 1-5", last="2026-01-07T09:00:00Z", now="2026-01-10T12:00:00Z")
    assert d.decision == "no-unmet" and d.most_recent is None
    assert d.missed_runs == (_z("2026-01-08T09:00:00Z"), _z("2026-01-09T09:00:00Z"))
    assert d.never_made_up == d.missed_runs
    assert d.estimate_skipped == _z("2026-01-09T09:00:00Z")


def test_the_estimate_finds_nothing_after_a_new_york_fall_back() -> None:
    d = _d("30 1 * * *", tz="America/New_York", last="2026-10-31T05:30:00Z",
           now="2026-11-20T06:00:00Z")
    assert d.most_recent is None and d.missed == "many"
    assert d.estimate_skipped == _z("2026-11-19T06:30:00Z")
    assert d.events == ()  # TooManyMissedTimes is only recorded when a time is found


def test_deadline_zero_never_starts_anything() -> None:
    d = _d("* * * * *", last="2026-01-01T00:00:00Z", now="2026-01-01T00:05:00Z", deadline=0)
    assert d.decision == "no-unmet" and d.missed_runs == ()
    assert len(d.deadline_dropped) == 5
    assert d.never_made_up == d.deadline_dropped  # all five are lost, and said so


def test_deadline_drops_old_runs_without_an_event() -> None:
    d = _d("0 * * * *", last="2026-01-01T10:00:00Z", now="2026-01-05T07:00:30Z", deadline=61)
    assert d.decision == "create" and d.most_recent == _z("2026-01-05T07:00:00Z")
    assert d.missed_nodeadline == "few" and d.missed == "none"
    assert len(d.deadline_dropped) == 92
    assert len(d.never_made_up) == 92 and d.most_recent not in d.never_made_up
    assert all(not e.startswith("Warning MissSchedule") for e in d.events)


def test_tz_in_schedule_warns_every_sync_and_the_prefix_wins() -> None:
    d = _d("TZ=Asia/Tokyo 0 9 * * *", tz="America/New_York", last="2026-03-08T00:00:00Z",
           now="2026-03-10T12:00:00Z")
    assert d.events[0].startswith('Warning UnsupportedSchedule: CRON_TZ or TZ used in schedule '
                                  '"TZ=Asia/Tokyo 0 9 * * *" is not officially supported')
    assert d.most_recent == _z("2026-03-10T00:00:00Z")  # 09:00 Tokyo, not New York
    # the annotation follows spec.timeZone, not the prefix
    assert d.scheduled_timestamp == "2026-03-09T20:00:00-04:00"


def test_unknown_time_zone_stops_without_requeue() -> None:
    d = _d("0 * * * *", tz="Mars/Base", now="2026-03-10T12:00:00Z")
    assert d.decision == "unknown-time-zone" and d.next_wakeup is None
    assert d.events == ('Warning UnknownTimeZone: invalid timeZone: "Mars/Base": unknown time zone Mars/Base',)


def test_unparseable_schedule_stops_without_requeue() -> None:
    d = _d("0 0 32 * *", now="2026-03-10T12:00:00Z")
    assert d.decision == "unparseable-schedule" and d.next_wakeup is None
    assert d.events == ('Warning UnparseableSchedule: unparseable schedule: "0 0 32 * *" : '
                        'end of range (32) above maximum (31): 32',)


def test_never_firing_schedule_is_invalid_schedule() -> None:
    d = _d("0 0 30 2 *", now="2026-03-10T12:00:00Z")
    assert d.decision == "invalid-schedule" and d.next_wakeup is None
    assert d.error == "time difference between two schedules is less than 1 second"


def test_requeue_after_create_is_next_run_plus_100ms() -> None:
    d = _d("*/5 * * * *", now="2026-01-01T00:05:00.250000Z")
    assert d.decision == "create"
    assert d.next_wakeup == _z("2026-01-01T00:10:00.100000Z")
    assert d.requeue_after_ns == (4 * 60 + 59) * 10**9 + 850_000_000


def test_controller_local_zone_drives_schedules_without_time_zone() -> None:
    d = _d("0 2 * * *", last="2026-03-08T00:00:00Z", now="2026-03-10T12:00:00Z",
           local="Asia/Kolkata")
    assert d.most_recent == _z("2026-03-09T20:30:00Z")
    assert d.scheduled_timestamp == "2026-03-09T20:30:00Z"


def test_many_missed_still_creates_with_a_warning() -> None:
    d = _d("0 * * * *", now="2026-01-05T05:00:00Z")
    assert d.decision == "create" and d.missed == "many" and d.estimate_n == 101
    assert d.events[0].startswith("Warning TooManyMissedTimes")


def test_naive_datetimes_are_refused_clearly() -> None:
    with pytest.raises(ScheduleError):
        decide("0 * * * *", time_zone=None, name="x", created=datetime(2026, 1, 1),
               last_schedule=None, starting_deadline=None, now=_z("2026-01-02T00:00:00Z"))


def test_the_issue_example_names_the_three_runs_the_deadline_drops() -> None:
    # */10 in Moscow, last run 11:00Z, now 11:35Z, deadline 120 s: 11:10, 11:20 and 11:30 are lost
    d = _d("*/10 * * * *", tz="Europe/Moscow", last="2026-12-02T11:00:00Z",
           now="2026-12-02T11:35:00Z", deadline=120)
    assert d.decision == "no-unmet"
    want = tuple(_z(f"2026-12-02T11:{m}:00Z") for m in ("10", "20", "30"))
    assert d.deadline_dropped == want and d.never_made_up == want


def test_forbid_with_an_active_job_refuses_and_the_slot_waits() -> None:
    kw = dict(name="cj", created=_z("2026-01-01T00:00:00Z"), last_schedule=_z("2026-01-01T16:19:00Z"),
              starting_deadline=None, now=_z("2026-01-01T16:20:05Z"), time_zone=None)
    d = decide("*/1 * * * *", concurrency_policy="Forbid", active=["cj-29437459"], **kw)
    assert d.decision == "forbid-active" and d.most_recent == _z("2026-01-01T16:20:00Z")
    assert d.waiting_for == ("cj-29437459",) and d.new_last_schedule is None
    assert d.events == ("Normal JobAlreadyActive: Not starting job because prior execution is "
                        "running and concurrency policy is Forbid",)
    assert d.never_made_up == ()  # 16:20 waits: a later sync may still start it
    allow = decide("*/1 * * * *", concurrency_policy="Allow", active=["cj-29437459"], **kw)
    assert allow.decision == "create" and allow.replaces == ()
    idle = decide("*/1 * * * *", concurrency_policy="Forbid", active=[], **kw)
    assert idle.decision == "create"


def test_replace_deletes_every_active_job_before_creating() -> None:
    d = decide("*/1 * * * *", time_zone=None, name="cj", created=_z("2026-01-01T00:00:00Z"),
               last_schedule=_z("2026-01-01T16:19:00Z"), starting_deadline=None,
               now=_z("2026-01-01T16:20:05Z"), concurrency_policy="Replace", active=["a", "b"])
    assert d.decision == "create" and d.replaces == ("a", "b")
    assert d.events[:2] == ("Normal SuccessfulDelete: Deleted job a",
                            "Normal SuccessfulDelete: Deleted job b")
    assert d.events[-1] == f"Normal SuccessfulCreate: Created job {d.job_name}"


def test_a_slot_whose_job_name_is_active_counts_as_processed() -> None:
    now = _z("2026-01-01T16:20:05Z")
    name = job_name("cj", _z("2026-01-01T16:20:00Z"))
    d = decide("*/1 * * * *", time_zone=None, name="cj", created=_z("2026-01-01T00:00:00Z"),
               last_schedule=_z("2026-01-01T16:19:00Z"), starting_deadline=None, now=now,
               concurrency_policy="Forbid", active=[name])
    assert d.decision == "already-processed" and d.events == ()
