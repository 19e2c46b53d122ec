"""The engine's one walk (``SpecWalker.next``) on sparse schedules, on zones whose offset changes at
midnight, and on schedules that never fire: fixed answers (checked against the spec.go oracle in
tests/robfig_oracle.py, which the property tests compare with the walk on random cases), and the
pieces the walk's jumps rest on."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from robfig_oracle import robfig_chain

from cronctl.schedule import parse
from cronctl.schedule.walk import SpecWalker, days_from_civil, get_zone
from cronctl.timeutil import parse_rfc3339, rfc3339_z

UTC = timezone.utc


def _runs(expr: str, zone: str, start: str, n: int) -> list[str | None]:
    s = parse(expr, zone)
    got: list[str | None] = [rfc3339_z(r) for r in s.runs(parse_rfc3339(start), n)]
    return got + [None] * (n - len(got))


def _oracle(expr: str, zone: str, start: str, n: int) -> list[str | None]:
    return [None if u is None else rfc3339_z(datetime.fromtimestamp(u, UTC))
            for u in robfig_chain(parse(expr, zone), parse_rfc3339(start), n)]


CASES = [
    # (expr, zone, start, runs, why)
    ("0 0 29 2 *", "Europe/Berlin", "2026-01-01T00:00:00Z",
     ["2028-02-28T23:00:00Z", "2032-02-28T23:00:00Z", "2036-02-28T23:00:00Z", "2040-02-28T23:00:00Z"],
     "a leap day: whole years without a run are jumped"),
    ("0 0 29 2 *", "Europe/Berlin", "2095-03-01T00:00:00Z", ["2096-02-28T23:00:00Z", None],
     "2100 is no leap year: from 2096 the next leap day (2104) is past the five-year limit"),
    ("0 0 30 2 *", "Europe/Berlin", "2026-01-01T00:00:00Z", [None], "never fires: gives up"),
    ("0 0 31 4,6,9,11 *", "America/New_York", "2026-01-01T00:00:00Z", [None], "never fires"),
    ("0 0 31 4 *", "Asia/Beirut", "1992-01-01T00:00:00Z", ["1992-05-30T21:00:00Z"],
     "April has no 31st, yet robfig runs on May 31st 1992: May 1st's midnight did not exist, the"
     " day walk turned back to April 30 23:00 and went on into May without passing a 1st"),
    ("0 0 1 JAN *", "America/New_York", "2026-01-01T00:00:00Z",
     ["2026-01-01T05:00:00Z", "2027-01-01T05:00:00Z", "2028-01-01T05:00:00Z"], "yearly, names"),
    ("0 12 31 * *", "Australia/Lord_Howe", "2026-01-01T00:00:00Z",
     ["2026-01-31T01:00:00Z", "2026-03-31T01:00:00Z", "2026-05-31T01:30:00Z",
      "2026-07-31T01:30:00Z", "2026-08-31T01:30:00Z"], "the 31st across a 30-minute change"),
    ("0 0 * * SUN", "America/Santiago", "2026-09-01T00:00:00Z",
     ["2026-09-13T03:00:00Z", "2026-09-20T03:00:00Z", "2026-09-27T03:00:00Z"],
     "Sunday 2026-09-06 00:00 is in Santiago's gap: robfig's day walk moves to 01:00 and goes on"
     " to the next Sunday"),
    ("0 0 * * 0", "America/Havana", "2026-03-01T00:00:00Z",
     ["2026-03-01T05:00:00Z", "2026-03-15T04:00:00Z", "2026-03-22T04:00:00Z"],
     "Havana's clocks skip Sunday 2026-03-08's midnight: no run that week"),
    ("0 0 * * *", "Asia/Amman", "1996-09-18T21:00:00Z",
     ["1996-09-19T21:00:00Z", "1996-09-19T22:00:00Z"],
     "Amman's 1996-09-20 midnight happens twice: the hour walk reaches the first, runs there,"
     " then takes the second"),
    ("59,8 3-10 10/25 5 *", "Africa/Casablanca", "2008-05-31T09:14:28Z",
     ["2008-06-10T02:08:00Z", "2009-05-10T03:08:00Z"],
     "2008-06-01 00:00 did not exist: the day walk turns back to May 31 23:00, so it never sees"
     " a 1st, never checks the month again and runs on June 10"),
    ("39 * * 3/8 1/4", "America/Asuncion", "1994-09-29T10:59:36Z",
     ["1994-12-02T03:39:00Z", "1995-03-03T04:39:00Z"],
     "the month walk lands on 23:00 of the previous day after 1994-10-01's skipped midnight and"
     " carries that into November's day walk, which leaves November the same way"),
]


@pytest.mark.parametrize(("expr", "zone", "start", "want", "why"), CASES,
                         ids=[f"{c[0]}-{c[1]}-{c[2][:10]}" for c in CASES])
def test_sparse_and_midnight_cases(expr: str, zone: str, start: str, want: list[str | None],
                                   why: str) -> None:
    assert _runs(expr, zone, start, len(want)) == want, why
    assert _oracle(expr, zone, start, len(want)) == want, why


def test_the_names_and_numbers_walk_alike() -> None:
    start = "2026-01-01T00:00:00Z"
    assert _runs("0 0 * * SUN", "Europe/Berlin", start, 60) == _runs("0 0 * * 0", "Europe/Berlin", start, 60)
    assert _runs("0 0 1 JAN *", "Europe/Berlin", start, 8) == _runs("0 0 1 1 *", "Europe/Berlin", start, 8)


def test_production_has_one_walk() -> None:
    # the line-by-line port of spec.go lives in tests/robfig_oracle.py only (issue 13)
    assert not hasattr(SpecWalker, "next_exact") and not hasattr(SpecWalker, "_next_jumping")


@pytest.mark.parametrize(("zone", "wall", "exists"), [
    ("America/New_York", "2026-03-08T02:30:00", False),  # spring-forward gap
    ("America/New_York", "2026-11-01T01:30:00", True),  # fold: twice, still kept
    ("America/Santiago", "2026-09-06T00:00:00", False),  # midnight gap
    ("America/Havana", "2026-03-08T00:00:00", False),
    ("Australia/Lord_Howe", "2026-10-04T02:15:00", False),  # 30-minute gap
    ("Europe/Berlin", "2026-03-29T00:00:00", True),  # the change is at 02:00
])
def test_walls_exist_finds_the_wall_times_time_date_moves(zone: str, wall: str, exists: bool) -> None:
    z = get_zone(zone)
    t = datetime.fromisoformat(wall)
    day = days_from_civil(t.year, t.month, t.day)
    tod = t.hour * 3600 + t.minute * 60
    assert z.walls_exist(day - 1, day, tod) is exists
    assert z.walls_exist(day - 40, day + 40, tod) is exists
    assert z.walls_exist(day, day + 40, tod)  # the day itself is not in (d0, d1]
