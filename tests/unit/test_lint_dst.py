"""The DST rules (CJ006 gap / CJ007 repeat) with real zones, two years ahead of NOW.

Transition instants, derived by hand from the tz rules (US: second Sunday of March 02:00 local /
first Sunday of November 02:00; EU: last Sunday of March/October at 01:00 UTC; Lord Howe: first
Sunday of October 02:00 -> 02:30, first Sunday of April 02:00 -> 01:30):
  America/New_York  2027-03-14T07:00Z gap 02:00-03:00   2027-11-07T06:00Z fold 01:00-02:00
                    2028-03-12T07:00Z gap               2028-11-05T06:00Z fold
  Europe/Berlin     2027-03-28T01:00Z gap 02:00-03:00   2027-10-31T01:00Z fold 02:00-03:00
                    2028-03-26T01:00Z gap               2028-10-29T01:00Z fold
  Australia/Lord_Howe 2027-10-03 gap 02:00-02:30        2028-10-01 gap
The window is NOW 2026-12-02T12:00Z + 731 days = 2028-12-02 (2028 is a leap year).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from builders import manifest
from cronctl.lint.rules import RULES_BY_ID, zone_transitions

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=timezone.utc)
Z = timezone.utc


def messages(rule: str, schedule: str, zone: str | None) -> list[str]:
    return [h.message for h in RULES_BY_ID[rule].check(manifest("x", schedule, zone, containers=[]), NOW)]


def test_new_york_transitions_are_found_to_the_second() -> None:
    trs = zone_transitions("America/New_York", NOW, NOW + timedelta(days=731))
    assert [(t.at, t.kind == "gap") for t in trs] == [
        (datetime(2027, 3, 14, 7, tzinfo=Z), True), (datetime(2027, 11, 7, 6, tzinfo=Z), False),
        (datetime(2028, 3, 12, 7, tzinfo=Z), True), (datetime(2028, 11, 5, 6, tzinfo=Z), False),
    ]


def test_it_names_the_skipped_spring_forward_runs_of_0230_new_york() -> None:
    [msg] = messages("CJ006", "30 2 * * *", "America/New_York")
    assert "2027-03-14 02:30" in msg and "2028-03-12 02:30" in msg and "skipped" in msg
    assert "02:00->03:00" in msg
    # 02:30 is outside the 01:00-02:00 repeat, so it never runs twice
    assert messages("CJ007", "30 2 * * *", "America/New_York") == []


def test_it_names_the_doubled_fall_back_runs_of_0130_new_york_with_both_instants() -> None:
    [msg] = messages("CJ007", "30 1 * * *", "America/New_York")
    assert "2027-11-07 01:30 happens twice" in msg
    assert "2027-11-07T05:30:00Z (EDT) and 2027-11-07T06:30:00Z (EST)" in msg
    assert "2028-11-05T05:30:00Z (EDT) and 2028-11-05T06:30:00Z (EST)" in msg
    assert messages("CJ006", "30 1 * * *", "America/New_York") == []


def test_0230_berlin_is_both_skipped_in_march_and_doubled_in_october() -> None:
    [gap] = messages("CJ006", "30 2 * * *", "Europe/Berlin")
    assert "2027-03-28 02:30" in gap and "2028-03-26 02:30" in gap
    [fold] = messages("CJ007", "30 2 * * *", "Europe/Berlin")
    assert "2027-10-31T00:30:00Z (CEST) and 2027-10-31T01:30:00Z (CET)" in fold
    assert "2028-10-29" in fold


def test_a_date_bound_schedule_hits_only_the_year_whose_transition_it_matches() -> None:
    [msg] = messages("CJ006", "30 2 14 3 *", "America/New_York")
    assert "2027-03-14" in msg and "2028" not in msg


def test_lord_howe_half_hour_gap_skips_0215_but_not_0245() -> None:
    [msg] = messages("CJ006", "15 2 * * *", "Australia/Lord_Howe")
    assert "2027-10-03 02:15" in msg and "2028-10-01 02:15" in msg and "02:00->02:30" in msg
    assert messages("CJ006", "45 2 * * *", "Australia/Lord_Howe") == []


@pytest.mark.parametrize(("schedule", "zone"), [
    ("0 * * * *", "America/New_York"),      # every real hour: a transition only relabels runs
    ("*/15 * * * *", "America/New_York"),
    ("30 2 * * 1", "America/New_York"),     # Mondays; US transitions are on Sundays
    ("30 3 * * *", "America/New_York"),     # after the gap, outside the repeat
    ("30 2 * * *", "Etc/UTC"),
    ("30 2 * * *", None),                   # controller's zone (UTC)
    ("30 2 * * *", "Asia/Kolkata"),         # no DST
    ("@every 1h", "America/New_York"),      # @every ignores zones
])
def test_schedules_that_dst_cannot_touch_have_no_dst_findings(schedule: str, zone: str | None) -> None:
    assert messages("CJ006", schedule, zone) == [] and messages("CJ007", schedule, zone) == []


# From docs/SEMANTICS.md §3 (checked there against the real Go code): zones that change at midnight
# skip 00:00/00:30 runs on the change day; Santiago's 0 23 runs twice on 2026-04-04; Lord Howe's
# 30-minute fold doubles 01:45 on 2026-04-05; 0 1 in Santiago runs as normal.
EARLY_2026 = datetime(2026, 1, 2, 12, tzinfo=timezone.utc)


@pytest.mark.parametrize(("rule", "schedule", "zone", "needle"), [
    ("CJ006", "0 0 * * *", "America/Santiago", "2026-09-06 00:00"),
    ("CJ006", "0 0 * * 0", "America/Santiago", "2026-09-06 00:00"),  # weekly Sunday midnight
    ("CJ006", "30 0 * * *", "America/Havana", "2026-03-08 00:30"),
    ("CJ007", "0 23 * * *", "America/Santiago", "2026-04-04 23:00 happens twice"),
    ("CJ007", "45 1 * * *", "Australia/Lord_Howe", "2026-04-05 01:45 happens twice"),
])
def test_midnight_and_half_hour_zones_match_the_semantics(rule: str, schedule: str, zone: str, needle: str) -> None:
    [msg] = [h.message for h in RULES_BY_ID[rule].check(manifest("x", schedule, zone, containers=[]), EARLY_2026)]
    assert needle in msg


def test_one_am_in_santiago_is_untouched_by_the_midnight_change() -> None:
    for rule in ("CJ006", "CJ007"):
        assert RULES_BY_ID[rule].check(manifest("x", "0 1 * * *", "America/Santiago", containers=[]), EARLY_2026) == []
