"""DST tables for New York, Berlin, Lord Howe and Santiago (2026), worked out by hand from
spec.go's rules (docs/SEMANTICS.md §3): a spring-forward gap skips the run, a fall-back fold runs it
twice, hours and minutes are stepped in real time.

Transition instants (tzdata 2025b; checked against zoneinfo in test_transition_instants):
- America/New_York:    2026-03-08 07:00Z (02:00 EST -> 03:00 EDT), 2026-11-01 06:00Z (02:00 EDT -> 01:00 EST)
- Europe/Berlin:       2026-03-29 01:00Z (02:00 CET -> 03:00 CEST), 2026-10-25 01:00Z (03:00 CEST -> 02:00 CET)
- Australia/Lord_Howe: 2026-04-04 15:00Z (02:00 +11 -> 01:30 +10:30), 2026-10-03 15:30Z (02:00 +10:30 -> 02:30 +11)
- America/Santiago:    2026-04-05 03:00Z (24:00 -03 -> 23:00 -04 on Apr 4), 2026-09-06 04:00Z (00:00 -04 -> 01:00 -03)
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from robfig_oracle import robfig_next

from cronctl.schedule import parse

UTC = timezone.utc


def _z(s: str) -> datetime:
    return datetime.fromisoformat(s.replace("Z", "+00:00"))


TRANSITIONS = [
    ("America/New_York", "2026-03-08T07:00:00Z", -5, -4),
    ("America/New_York", "2026-11-01T06:00:00Z", -4, -5),
    ("Europe/Berlin", "2026-03-29T01:00:00Z", 1, 2),
    ("Europe/Berlin", "2026-10-25T01:00:00Z", 2, 1),
    ("Australia/Lord_Howe", "2026-04-04T15:00:00Z", 11, 10.5),
    ("Australia/Lord_Howe", "2026-10-03T15:30:00Z", 10.5, 11),
    ("America/Santiago", "2026-04-05T03:00:00Z", -3, -4),
    ("America/Santiago", "2026-09-06T04:00:00Z", -4, -3),
]


@pytest.mark.parametrize(("zone", "instant", "before", "after"), TRANSITIONS)
def test_transition_instants(zone: str, instant: str, before: float, after: float) -> None:
    t = _z(instant)
    z = ZoneInfo(zone)
    off_before = (t - timedelta(seconds=1)).astimezone(z).utcoffset()
    off_after = t.astimezone(z).utcoffset()
    assert off_before is not None and off_after is not None
    assert off_before.total_seconds() == before * 3600
    assert off_after.total_seconds() == after * 3600


# (zone, schedule, start, expected runs in UTC, what it shows)
TABLE = [
    # --- New York ---------------------------------------------------------------------------
    ("America/New_York", "30 2 * * *", "2026-03-07T00:00:00Z",
     ["2026-03-07T07:30:00Z", "2026-03-09T06:30:00Z", "2026-03-10T06:30:00Z"],
     "02:30 does not exist on Mar 8: that run is skipped, not moved"),
    ("America/New_York", "0 * * * *", "2026-03-08T05:30:00Z",
     ["2026-03-08T06:00:00Z", "2026-03-08T07:00:00Z", "2026-03-08T08:00:00Z"],
     "hourly: 01:00 EST then 03:00 EDT, one real hour apart"),
    ("America/New_York", "*/15 * * * *", "2026-03-08T06:40:00Z",
     ["2026-03-08T06:45:00Z", "2026-03-08T07:00:00Z", "2026-03-08T07:15:00Z"],
     "every 15 min: 01:45 EST then 03:00 EDT"),
    ("America/New_York", "30 1 * * *", "2026-10-31T12:00:00Z",
     ["2026-11-01T05:30:00Z", "2026-11-01T06:30:00Z", "2026-11-02T06:30:00Z"],
     "01:30 happens twice on Nov 1: EDT and EST"),
    ("America/New_York", "0 * * * *", "2026-11-01T04:30:00Z",
     ["2026-11-01T05:00:00Z", "2026-11-01T06:00:00Z", "2026-11-01T07:00:00Z"],
     "hourly: 01:00 EDT, 01:00 EST, 02:00 EST"),
    ("America/New_York", "0 2 * * *", "2026-10-31T12:00:00Z",
     ["2026-11-01T07:00:00Z", "2026-11-02T07:00:00Z"],
     "02:00 exists once on the fall-back day (EST)"),
    # --- Berlin -----------------------------------------------------------------------------
    ("Europe/Berlin", "0 2 * * *", "2026-03-28T00:00:00Z",
     ["2026-03-28T01:00:00Z", "2026-03-30T00:00:00Z"],
     "02:00 does not exist on Mar 29: skipped"),
    ("Europe/Berlin", "30 2 * * *", "2026-10-24T12:00:00Z",
     ["2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z", "2026-10-26T01:30:00Z"],
     "02:30 twice on Oct 25: CEST then CET"),
    # --- Lord Howe (30-minute DST) ------------------------------------------------------------
    ("Australia/Lord_Howe", "0 2 * * *", "2026-10-02T12:00:00Z",
     ["2026-10-02T15:30:00Z", "2026-10-04T15:00:00Z"],
     "02:00-02:29 does not exist on Oct 4: 02:00 skipped"),
    ("Australia/Lord_Howe", "15 2 * * *", "2026-10-02T12:00:00Z",
     ["2026-10-02T15:45:00Z", "2026-10-04T15:15:00Z"],
     "02:15 skipped on Oct 4 too"),
    ("Australia/Lord_Howe", "45 2 * * *", "2026-10-02T12:00:00Z",
     ["2026-10-02T16:15:00Z", "2026-10-03T15:45:00Z", "2026-10-04T15:45:00Z"],
     "02:45 exists on Oct 4 (+11)"),
    ("Australia/Lord_Howe", "30 1 * * *", "2026-04-04T00:00:00Z",
     ["2026-04-04T14:30:00Z", "2026-04-04T15:00:00Z", "2026-04-05T15:00:00Z"],
     "01:30 twice on Apr 5, 30 minutes apart (+11 then +10:30)"),
    ("Australia/Lord_Howe", "45 1 * * *", "2026-04-04T00:00:00Z",
     ["2026-04-04T14:45:00Z", "2026-04-04T15:15:00Z", "2026-04-05T15:15:00Z"],
     "01:45 twice on Apr 5"),
    ("Australia/Lord_Howe", "0 3 * * *", "2026-04-04T11:00:00Z",
     ["2026-04-05T16:30:00Z", "2026-04-06T16:30:00Z"],
     "upstream quirk (vector-confirmed): after the 30-minute fall-back the hour walk steps real "
     "hours from 01:00 +11 and lands on 01:30, 02:30, 03:30 +10:30, so 03:00 on Apr 5 is skipped"),
    ("Australia/Lord_Howe", "0 0 * * *", "2026-04-04T12:00:00Z",
     ["2026-04-04T13:00:00Z", "2026-04-06T13:30:00Z"],
     "the same misalignment carries the walk from Apr 5 00:00 to 00:30 on Apr 6: Apr 6's "
     "midnight run is skipped too"),
    # --- Santiago (changes at midnight) ----------------------------------------------------------
    ("America/Santiago", "0 23 * * *", "2026-04-04T12:00:00Z",
     ["2026-04-05T02:00:00Z", "2026-04-05T03:00:00Z", "2026-04-06T03:00:00Z"],
     "23:00 twice on Apr 4 (-03 then -04)"),
    ("America/Santiago", "0 0 * * *", "2026-09-05T00:00:00Z",
     ["2026-09-05T04:00:00Z", "2026-09-07T03:00:00Z"],
     "midnight does not exist on Sep 6: skipped"),
    ("America/Santiago", "0 1 * * *", "2026-09-05T00:00:00Z",
     ["2026-09-05T05:00:00Z", "2026-09-06T04:00:00Z", "2026-09-07T04:00:00Z"],
     "01:00 runs as normal on Sep 6"),
    ("America/Santiago", "0 1 * * 6", "2026-09-05T00:00:00Z",
     ["2026-09-05T05:00:00Z", "2026-09-06T04:00:00Z", "2026-09-12T04:00:00Z"],
     "upstream quirk (spec.go hour loop): stepping from Sat 23:00 -04 lands on Sun 01:00 -03, "
     "hour 1 is not 0 so the day is not re-checked: a Saturday-only schedule runs on Sunday"),
]


@pytest.mark.parametrize(("zone", "expr", "start", "want", "why"), TABLE,
                         ids=[f"{t[0]}-{t[1]}-{t[2][:10]}" for t in TABLE])
def test_dst_table(zone: str, expr: str, start: str, want: list[str], why: str) -> None:
    sched = parse(expr, zone)
    got = sched.runs(_z(start), len(want))
    assert got == [_z(w) for w in want], why


@pytest.mark.parametrize(("zone", "expr", "start", "want", "why"), TABLE,
                         ids=[f"{t[0]}-{t[1]}-{t[2][:10]}" for t in TABLE])
def test_dst_table_with_the_spec_go_oracle(zone: str, expr: str, start: str,
                                                 want: list[str], why: str) -> None:
    walker = parse(expr, zone)._walker
    u: int | None = int(_z(start).timestamp())
    got = []
    for _ in want:
        assert u is not None
        u = robfig_next(walker, u)
        got.append(u)
    assert got == [int(_z(w).timestamp()) for w in want], why


def test_the_same_schedule_without_a_zone_ignores_new_york_dst() -> None:
    sched = parse("30 2 * * *")
    assert sched.runs(_z("2026-03-07T00:00:00Z"), 3) == [
        _z("2026-03-07T02:30:00Z"), _z("2026-03-08T02:30:00Z"), _z("2026-03-09T02:30:00Z")]


def test_a_tz_prefix_in_the_schedule_wins_over_time_zone() -> None:
    sched = parse("TZ=Europe/Berlin 0 2 * * *", "America/New_York")
    assert sched.zone == "Europe/Berlin" and sched.zone_from_prefix
    assert sched.next_after(_z("2026-03-28T00:00:00Z")) == _z("2026-03-28T01:00:00Z")


def test_every_ignores_zones_and_dst() -> None:
    sched = parse("@every 1h", "America/New_York")
    assert sched.runs(_z("2026-03-08T05:30:00Z"), 3) == [
        _z("2026-03-08T06:30:00Z"), _z("2026-03-08T07:30:00Z"), _z("2026-03-08T08:30:00Z")]


@pytest.mark.parametrize("zone", ["America/New_York", "Australia/Lord_Howe", "America/Santiago",
                                  "Europe/Dublin", "Asia/Kolkata"])
def test_zone_tables_agree_with_zoneinfo_in_both_build_modes(zone: str) -> None:
    from cronctl.schedule.walk import Zone

    explicit = Zone(zone, ZoneInfo(zone))  # from the TZif transitions (+ footer sampling)
    sampled = Zone(zone, ZoneInfo(zone))
    sampled._loaded = True  # as when zoneinfo's private TZif reader is unavailable: 3-hour sampling
    z = ZoneInfo(zone)
    start = int(_z("2025-06-01T00:00:00Z").timestamp())
    for u in range(start, start + 3 * 366 * 86400, 3 * 3600 + 7):
        want = datetime.fromtimestamp(u, z).utcoffset()
        assert want is not None
        assert explicit.offset(u) == sampled.offset(u) == int(want.total_seconds()), u
    far = int(_z("2045-03-01T00:00:00Z").timestamp())  # past fat TZif data: the POSIX footer
    for u in range(far, far + 366 * 86400, 3 * 3600 + 7):
        want = datetime.fromtimestamp(u, z).utcoffset()
        assert want is not None
        assert explicit.offset(u) == int(want.total_seconds()), u


def test_matches_points_out_the_runs_upstream_makes_at_times_the_fields_do_not_name() -> None:
    sat = parse("0 1 * * 6", "America/Santiago")
    runs = sat.runs(_z("2026-09-05T00:00:00Z"), 3)
    assert [sat.matches(r) for r in runs] == [True, False, True]  # the Sunday 01:00 run
    hourly = parse("*/5 1 * * *", "Australia/Lord_Howe")
    # spring forward 02:00 +10:30 -> 02:30 +11: the minute walk from 01:55 lands on 02:30
    r = hourly.next_after(_z("2026-10-03T15:25:00Z"))
    assert r == _z("2026-10-03T15:30:00Z") and not hourly.matches(r)
    assert parse("@every 1h").matches(_z("2026-01-01T00:00:01Z"))


DEVIATIONS = [
    ("Australia/Lord_Howe", "0 3 * * *", "2026-04-01", "2026-04-20", ["2026-04-04T16:30:00Z"], []),
    ("Australia/Lord_Howe", "0 0 * * *", "2026-04-01", "2026-04-20", ["2026-04-05T13:30:00Z"], []),
    ("America/Santiago", "0 1 * * 6", "2026-09-01", "2026-09-20", [], ["2026-09-06T04:00:00Z"]),
    ("America/New_York", "30 2 * * *", "2026-03-01", "2026-12-20", [], []),  # the gap is normal DST
    ("America/New_York", "30 1 * * *", "2026-10-25", "2026-11-10", [], []),  # so is the fold
    ("Europe/Berlin", "0 * * * *", "2026-01-01", "2027-01-01", [], []),
]


@pytest.mark.parametrize(("zone", "expr", "a", "b", "skipped", "extra"), DEVIATIONS,
                         ids=[f"{d[0]}-{d[1]}" for d in DEVIATIONS])
def test_wall_clock_deviations_name_the_runs_upstream_loses_or_adds(
        zone: str, expr: str, a: str, b: str, skipped: list[str], extra: list[str]) -> None:
    s = parse(expr, zone)
    got = s.wall_clock_deviations(_z(a + "T00:00:00Z"), _z(b + "T00:00:00Z"))
    assert got == (tuple(_z(x) for x in skipped), tuple(_z(x) for x in extra))
    for t in got[0]:
        assert s.matches(t) and t not in s.runs_between(_z(a + "T00:00:00Z"), _z(b + "T00:00:00Z"))
    for t in got[1]:
        assert not s.matches(t)
