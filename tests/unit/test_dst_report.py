"""The DST report: which run will not happen, which happens twice, with the transition instants.

Transition instants are the zones' real rules for 2026 (tzdata), written here by hand:
- America/New_York: 2026-03-08 02:00 EST -> 03:00 EDT = 07:00:00Z; 2026-11-01 02:00 EDT -> 01:00 EST = 06:00:00Z
- Europe/Berlin:    2026-03-29 02:00 CET -> 03:00 CEST = 01:00:00Z; 2026-10-25 03:00 CEST -> 02:00 CET = 01:00:00Z
- Australia/Lord_Howe (30-minute DST): 2026-10-04 02:00 +10:30 -> 02:30 +11 = 2026-10-03T15:30:00Z;
  2026-04-05 02:00 +11 -> 01:30 +10:30 = 2026-04-04T15:00:00Z
- America/Santiago (changes at midnight): 2026-09-06 00:00 -04 -> 01:00 -03 = 04:00:00Z;
  2026-04-05 00:00 -03 -> 2026-04-04 23:00 -04 = 2026-04-05T03:00:00Z
Which runs are skipped or doubled follows docs/SEMANTICS.md §3 (vectors groups dst, dst-edge, dst-midnight).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from cronctl.schedule.atlas import parse_atlas
from cronctl.schedule.dst import dst_events, transitions

UTC = timezone.utc


def z(s: str) -> datetime:
    return datetime.fromisoformat(s.replace("Z", "+00:00"))


def _robfig(expr: str, tz: str | None):  # type: ignore[no-untyped-def]
    from cronctl.schedule import parse

    return parse(expr, tz)


@pytest.mark.parametrize(
    ("zone", "year_start", "expected"),
    [
        ("America/New_York", "2026-01-01T00:00:00Z", [("2026-03-08T07:00:00Z", -5, -4), ("2026-11-01T06:00:00Z", -4, -5)]),
        ("Europe/Berlin", "2026-01-01T00:00:00Z", [("2026-03-29T01:00:00Z", 1, 2), ("2026-10-25T01:00:00Z", 2, 1)]),
        ("Australia/Lord_Howe", "2026-01-01T00:00:00Z", [("2026-04-04T15:00:00Z", 11, 10.5), ("2026-10-03T15:30:00Z", 10.5, 11)]),
        ("America/Santiago", "2026-01-01T00:00:00Z", [("2026-04-05T03:00:00Z", -3, -4), ("2026-09-06T04:00:00Z", -4, -3)]),
        ("Asia/Kolkata", "2026-01-01T00:00:00Z", []),
        ("UTC", "2026-01-01T00:00:00Z", []),
    ],
)
def test_transitions_are_found_to_the_second(zone: str, year_start: str, expected: list[tuple[str, float, float]]) -> None:
    start = z(year_start)
    found = transitions(zone, start, start + timedelta(days=365))
    assert [(t.at, t.offset_before, t.offset_after) for t in found] == [
        (z(at), timedelta(hours=a), timedelta(hours=b)) for at, a, b in expected]


# (dialect, expr, zone, after, runs to take, kind, transition, skipped wall times, repeated (wall, utc1, utc2))
CASES = [
    ("robfig", "30 2 * * *", "America/New_York", "2026-03-07T00:00:00Z", 3, "gap", "2026-03-08T07:00:00Z",
     ["02:30"], []),
    ("robfig", "0 2 * * *", "Europe/Berlin", "2026-03-28T00:00:00Z", 3, "gap", "2026-03-29T01:00:00Z", ["02:00"], []),
    ("robfig", "*/15 * * * *", "America/New_York", "2026-03-08T06:00:00Z", 8, "gap", "2026-03-08T07:00:00Z",
     ["02:00", "02:15", "02:30", "02:45"], []),
    ("robfig", "15 2 * * *", "Australia/Lord_Howe", "2026-10-02T00:00:00Z", 3, "gap", "2026-10-03T15:30:00Z",
     ["02:15"], []),
    ("robfig", "@daily", "America/Santiago", "2026-09-04T12:00:00Z", 3, "gap", "2026-09-06T04:00:00Z", ["00:00"], []),
    ("robfig", "30 1 * * *", "America/New_York", "2026-10-31T12:00:00Z", 3, "fold", "2026-11-01T06:00:00Z", [],
     [("01:30", "2026-11-01T05:30:00Z", "2026-11-01T06:30:00Z")]),
    ("robfig", "30 2 * * *", "Europe/Berlin", "2026-10-24T12:00:00Z", 3, "fold", "2026-10-25T01:00:00Z", [],
     [("02:30", "2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z")]),
    ("robfig", "45 1 * * *", "Australia/Lord_Howe", "2026-04-03T12:00:00Z", 3, "fold", "2026-04-04T15:00:00Z", [],
     [("01:45", "2026-04-04T14:45:00Z", "2026-04-04T15:15:00Z")]),
    ("robfig", "0 23 * * *", "America/Santiago", "2026-04-03T12:00:00Z", 3, "fold", "2026-04-05T03:00:00Z", [],
     [("23:00", "2026-04-05T02:00:00Z", "2026-04-05T03:00:00Z")]),
    ("atlas", "30 2 * * *", "America/New_York", "2026-03-07T00:00:00Z", 3, "gap", "2026-03-08T07:00:00Z",
     ["02:30"], []),
    ("atlas", "30 1 * * *", "America/New_York", "2026-10-31T12:00:00Z", 3, "fold", "2026-11-01T06:00:00Z", [],
     [("01:30", "2026-11-01T05:30:00Z", "2026-11-01T06:30:00Z")]),
]


@pytest.mark.parametrize(("dialect", "expr", "zone", "after", "n", "kind", "at", "skipped", "repeated"), CASES)
def test_it_names_the_run_that_is_skipped_or_doubled(dialect: str, expr: str, zone: str, after: str, n: int,
                                                     kind: str, at: str, skipped: list[str],
                                                     repeated: list[tuple[str, str, str]]) -> None:
    s = parse_atlas(expr, zone) if dialect == "atlas" else _robfig(expr, zone)
    runs = s.runs(z(after), n)
    events = dst_events(s, z(after), runs, and_rule=dialect == "atlas")
    assert len(events) == 1
    e = events[0]
    assert e.kind == kind
    assert e.transition.at == z(at)
    assert [f"{w:%H:%M}" for w in e.skipped] == skipped
    assert [(f"{w:%H:%M}", a, b) for w, a, b in e.repeated] == [(w, z(a), z(b)) for w, a, b in repeated]
    # The doubled instants are really among the runs; the skipped wall times are not.
    for _, a, b in e.repeated:
        assert a in runs and b in runs


def test_the_message_says_skipped_not_moved_and_gives_the_instant() -> None:
    s = parse_atlas("30 2 * * *", "America/New_York")
    after = z("2026-03-07T00:00:00Z")
    [e] = dst_events(s, after, s.runs(after, 3), and_rule=True)
    assert e.message() == ("2026-03-08: clocks in America/New_York jump from 02:00 EST to 03:00 EDT "
                           "(at 2026-03-08T07:00:00Z): the run at 02:30 will not happen (skipped, not moved later)")


def test_the_fold_message_gives_both_instants() -> None:
    s = parse_atlas("30 1 * * *", "America/New_York")
    after = z("2026-10-31T12:00:00Z")
    [e] = dst_events(s, after, s.runs(after, 3), and_rule=True)
    assert "the run at 01:30 happens twice, at 05:30Z (EDT) and 06:30Z (EST)" in e.message()


def test_a_transition_that_moves_no_run_is_not_reported() -> None:
    # 09:00 is far from the 02:00 change: the day is 23 hours long but every run happens once.
    s = parse_atlas("0 9 * * *", "America/New_York")
    after = z("2026-03-01T00:00:00Z")
    runs = s.runs(after, 14)
    assert runs[-1] > z("2026-03-08T07:00:00Z")
    assert dst_events(s, after, runs, and_rule=True) == []


def test_a_transition_after_the_last_listed_run_is_not_reported() -> None:
    s = parse_atlas("30 2 * * *", "America/New_York")
    after = z("2026-03-01T00:00:00Z")
    runs = s.runs(after, 3)  # 03-01 .. 03-03, before the 03-08 gap
    assert dst_events(s, after, runs, and_rule=True) == []


def test_a_fixed_offset_zone_has_nothing_to_report() -> None:
    s = parse_atlas("30 2 * * *", "Asia/Kolkata")
    after = z("2026-01-01T00:00:00Z")
    assert dst_events(s, after, s.runs(after, 400), and_rule=True) == []


def test_every_ignores_time_zones_so_nothing_is_reported() -> None:
    s = _robfig("@every 1h", "America/New_York")
    after = z("2026-03-08T05:00:00Z")
    assert dst_events(s, after, s.runs(after, 5)) == []


def test_the_robfig_or_rule_is_used_for_the_days() -> None:
    # 0 2 13 * 0: the 13th OR Sundays. 2026-03-08 is a Sunday (gap day in New York): skipped.
    s = _robfig("0 2 13 * 0", "America/New_York")
    after = z("2026-03-07T00:00:00Z")
    [e] = dst_events(s, after, s.runs(after, 2))
    assert e.kind == "gap" and [f"{w:%Y-%m-%d %H:%M}" for w in e.skipped] == ["2026-03-08 02:00"]
    # Under the Atlas AND rule the same fields name only Sunday the 13th: nothing on 03-08.
    a = parse_atlas("0 2 13 * 0", "America/New_York")
    assert dst_events(a, after, a.runs(after, 2), and_rule=True) == []


# --- property: the report agrees with the engine's own runs ------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

# Windows that open 2 days before a 2026 transition of each zone (instants in the module docstring).
WINDOWS = [("America/New_York", "2026-03-06T07:00:00Z"), ("America/New_York", "2026-10-30T06:00:00Z"),
           ("Europe/Berlin", "2026-03-27T01:00:00Z"), ("Europe/Berlin", "2026-10-23T01:00:00Z"),
           ("Australia/Lord_Howe", "2026-10-01T15:30:00Z"), ("Australia/Lord_Howe", "2026-04-02T15:00:00Z"),
           ("America/Santiago", "2026-09-04T04:00:00Z"), ("America/Santiago", "2026-04-03T03:00:00Z")]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(WINDOWS), st.sampled_from(["0", "30", "15,45", "*/20", "0-2"]),
       st.sampled_from(["*", "0", "1", "2", "23", "0-3", "*/2", "1,2"]))
def test_every_doubled_run_is_reported_and_every_reported_double_is_run(
        window: tuple[str, str], minute: str, hour: str) -> None:
    zone, start = window
    s = _robfig(f"{minute} {hour} * * *", zone)
    after = z(start)
    runs = s.runs(after, 400)
    runs = [r for r in runs if r <= after + timedelta(days=4)]
    if not runs:
        return
    events = dst_events(s, after, runs)
    reported = {(a, b) for e in events for _, a, b in e.repeated}
    for a, b in reported:
        assert a in runs and b in runs
    tz = ZoneInfo(zone)
    walls: dict[datetime, list[datetime]] = {}
    for r in runs:
        walls.setdefault(r.astimezone(tz).replace(tzinfo=None), []).append(r)
    doubled = {tuple(v) for v in walls.values() if len(v) == 2}
    assert doubled == reported
    skipped = {w for e in events for w in e.skipped}
    assert not skipped & set(walls)


def test_transitions_near_the_limits_of_datetime_do_not_crash() -> None:
    assert transitions("America/New_York", z("0001-01-01T00:00:00Z"), z("0001-03-01T00:00:00Z")) == []
    assert transitions("America/New_York", z("9999-12-01T00:00:00Z"), z("9999-12-31T23:59:00Z")) == []
    assert transitions("Not/AZone", z("2026-01-01T00:00:00Z"), z("2027-01-01T00:00:00Z")) == []


@pytest.mark.parametrize(("expr", "zone", "after", "n", "extra", "transition"), [
    # spec.go steps hours/minutes in real time across an offset change (worked out by hand from
    # spec.go in tests/unit/test_dst_tables.py): Santiago's skipped Sunday midnight makes a
    # Saturday-only schedule run on Sunday 01:00 -03; Lord Howe's 30-minute jump makes
    # '*/5 1 * * *' run at 02:30 +11.
    ("0 1 * * 6", "America/Santiago", "2026-09-05T00:00:00Z", 3, "2026-09-06T04:00:00Z", "2026-09-06T04:00:00Z"),
    ("*/5 1 * * *", "Australia/Lord_Howe", "2026-10-03T15:20:00Z", 4, "2026-10-03T15:30:00Z", "2026-10-03T15:30:00Z"),
])
def test_a_run_at_a_time_the_schedule_does_not_name_is_pointed_out(
        expr: str, zone: str, after: str, n: int, extra: str, transition: str) -> None:
    s = _robfig(expr, zone)
    runs = s.runs(z(after), n)
    assert z(extra) in runs
    [e] = dst_events(s, z(after), runs)
    assert e.extra == (z(extra),)
    assert e.transition.at == z(transition)
    assert "a time the schedule does not name" in e.message()


def test_a_named_run_that_robfigs_walk_never_lands_on_is_reported_as_lost() -> None:
    # Australia/Lord_Howe falls back 30 minutes at 2026-04-04T15:00:00Z (02:00 +11 -> 01:30 +10:30).
    # Upstream vector (next-sample, group dst): `0 3 * * *` after 2026-04-04T11:00Z runs first at
    # 2026-04-05T16:30Z (Apr 6 03:00); Apr 5 03:00 +10:30 = 2026-04-04T16:30Z exists once on the
    # wall clock, is named by the fields, and is never run.
    s = _robfig("0 3 * * *", "Australia/Lord_Howe")
    after = z("2026-04-03T12:00:00Z")
    runs = s.runs(after, 3)
    assert z("2026-04-04T16:30:00Z") not in runs
    (event,) = dst_events(s, after, runs)
    assert event.kind == "fold" and event.transition.at == z("2026-04-04T15:00:00Z")
    assert event.lost == (z("2026-04-04T16:30:00Z"),)
    assert event.skipped == () and event.repeated == () and event.extra == ()
    assert "never runs at Sun 2026-04-05 03:00" in event.message()


def test_a_walk_without_deviations_reports_nothing_lost() -> None:
    # New York's fall-back is a whole hour: `0 3 * * *` keeps its 03:00 run on 2026-11-01 (08:00Z).
    s = _robfig("0 3 * * *", "America/New_York")
    after = z("2026-10-30T00:00:00Z")
    runs = s.runs(after, 4)
    assert z("2026-11-01T08:00:00Z") in runs
    assert dst_events(s, after, runs) == []
