"""The Atlas dialect of seed 000: strict numeric fields, AND rule, one-year horizon, earliest-due backlog.

Expected values come from the seed text (its fixture: 09:00 UTC vs 07:00 UTC for
Europe/Belgrade on 2026-10-13; two earliest missed minutes under a limit of two) and from the
calendar (Friday the 13ths of 2026: Feb 13, Mar 13, Nov 13), not from this code.
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from cronctl.errors import ExitCode, ScheduleError
from cronctl.schedule.atlas import DEFAULT_MISSED_LIMIT, parse_atlas

UTC = timezone.utc


def z(s: str) -> datetime:
    return datetime.fromisoformat(s.replace("Z", "+00:00"))


def test_the_seed_fixture_nine_in_the_morning_differs_between_utc_and_belgrade() -> None:
    base = z("2026-10-12T12:00:00Z")
    assert parse_atlas("0 9 * * *", "UTC").next_after(base) == z("2026-10-13T09:00:00Z")
    # Belgrade is CEST (+02:00) on 2026-10-13.
    assert parse_atlas("0 9 * * *", "Europe/Belgrade").next_after(base) == z("2026-10-13T07:00:00Z")


def test_a_missing_timezone_means_utc() -> None:
    assert parse_atlas("0 9 * * *").zone == "UTC"
    assert parse_atlas("0 9 * * *", "").zone == "UTC"


def test_day_of_month_and_weekday_must_both_match() -> None:
    # robfig would run on every Friday OR the 13th (2026-01-02 first); Atlas only on Friday the 13th.
    runs = parse_atlas("0 0 13 * 5").runs(z("2026-01-01T00:00:00Z"), 3)
    assert runs == [z("2026-02-13T00:00:00Z"), z("2026-03-13T00:00:00Z"), z("2026-11-13T00:00:00Z")]


def test_steps_ranges_and_lists_are_accepted() -> None:
    s = parse_atlas("*/20 8-10,14 1-31/10 1,6 1-5")
    assert s.minutes == (0, 20, 40)
    assert s.hours == (8, 9, 10, 14)
    assert s.days_of_month == (1, 11, 21, 31)
    assert s.months == (1, 6)
    assert s.days_of_week == (1, 2, 3, 4, 5)


def test_the_search_starts_at_the_minute_after_the_truncated_instant() -> None:
    s = parse_atlas("* * * * *")
    assert s.next_after(z("2026-01-01T00:00:30Z")) == z("2026-01-01T00:01:00Z")
    assert s.next_after(z("2026-01-01T00:00:00Z")) == z("2026-01-01T00:01:00Z")
    assert parse_atlas("0 9 * * *").next_after(z("2026-01-01T09:00:00Z")) == z("2026-01-02T09:00:00Z")


def test_the_search_gives_up_after_one_year() -> None:
    # Feb 29 2028 is more than a year after 2026-06-01: Atlas returns the zero time (robfig,
    # with its 5-year horizon, would find it).
    leap = parse_atlas("0 0 29 2 *")
    assert leap.next_after(z("2026-06-01T00:00:00Z")) is None
    assert leap.next_after(z("2027-06-01T00:00:00Z")) == z("2028-02-29T00:00:00Z")
    assert parse_atlas("0 0 30 2 *").next_after(z("2026-01-01T00:00:00Z")) is None


def test_the_due_list_is_the_earliest_occurrences_up_to_the_missed_limit() -> None:
    # Seed exercise 3: a three-minute delay with limit two creates the two earliest minutes.
    s = parse_atlas("* * * * *")
    due = s.due(z("2026-01-01T00:00:00Z"), z("2026-01-01T00:03:00Z"), 2)
    assert due == [z("2026-01-01T00:01:00Z"), z("2026-01-01T00:02:00Z")]


@pytest.mark.parametrize("limit", [None, 0, -5])
def test_an_unset_or_non_positive_missed_limit_means_100(limit: int | None) -> None:
    s = parse_atlas("* * * * *")
    due = s.due(z("2026-01-01T00:00:00Z"), z("2026-01-01T03:00:00Z"), limit)
    assert DEFAULT_MISSED_LIMIT == 100
    assert len(due) == 100
    assert due[0] == z("2026-01-01T00:01:00Z")
    assert due[-1] == z("2026-01-01T01:40:00Z")


def test_the_due_list_includes_now_and_excludes_the_base() -> None:
    s = parse_atlas("0 * * * *")
    assert s.due(z("2026-01-01T00:00:00Z"), z("2026-01-01T02:00:00Z")) == [
        z("2026-01-01T01:00:00Z"), z("2026-01-01T02:00:00Z")]


def test_a_spring_forward_gap_skips_the_run() -> None:
    # America/New_York 2026-03-08: 02:00 EST -> 03:00 EDT at 07:00Z; 02:30 does not exist.
    runs = parse_atlas("30 2 * * *", "America/New_York").runs(z("2026-03-07T00:00:00Z"), 2)
    assert runs == [z("2026-03-07T07:30:00Z"), z("2026-03-09T06:30:00Z")]


def test_a_fall_back_fold_runs_twice() -> None:
    # America/New_York 2026-11-01: 02:00 EDT -> 01:00 EST at 06:00Z; 01:30 exists twice.
    runs = parse_atlas("30 1 * * *", "America/New_York").runs(z("2026-10-31T12:00:00Z"), 3)
    assert runs == [z("2026-11-01T05:30:00Z"), z("2026-11-01T06:30:00Z"), z("2026-11-02T06:30:00Z")]


@pytest.mark.parametrize(
    ("expr", "fragment"),
    [
        ("0 9 * * MON", "weekday 'MON'"),
        ("0 0 1 JAN *", "month 'JAN'"),
        ("0 0 ? * 1", "day-of-month '?'"),
        ("@daily", "descriptors"),
        ("@every 1h", "descriptors"),
        ("0 0 * * * *", "expected exactly 5 fields, found 6"),
        ("0 0 * *", "expected exactly 5 fields, found 4"),
        ("TZ=UTC 0 0 * * *", "expected exactly 5 fields, found 6"),
        ("60 * * * *", "minute '60'"),
        ("* 24 * * *", "above maximum (23)"),
        ("* * 0 * *", "below minimum (1)"),
        ("* * * 13 *", "above maximum (12)"),
        ("* * * * 7", "weekday '7'"),
        ("*/0 * * * *", "must be positive"),
        ("5/15 * * * *", "a step needs '*' or a range"),
        ("1,,2 * * * *", "empty list item"),
        ("+5 * * * *", "is not a number"),
        ("-1 * * * *", "minute '-1'"),
        ("10-5 * * * *", "range start after end"),
        ("0 0 L * *", "is not a number"),
        ("", "empty schedule"),
    ],
)
def test_anything_beyond_strict_numeric_five_fields_is_a_schedule_error(expr: str, fragment: str) -> None:
    with pytest.raises(ScheduleError) as e:
        parse_atlas(expr)
    assert fragment in str(e.value)
    assert e.value.exit_code == ExitCode.BAD_INPUT


def test_an_unknown_zone_is_a_schedule_error_naming_it() -> None:
    with pytest.raises(ScheduleError, match="unknown time zone 'Mars/Base'"):
        parse_atlas("0 9 * * *", "Mars/Base")


def test_a_search_running_past_year_9999_finds_nothing_instead_of_crashing() -> None:
    assert parse_atlas("0 0 * * *").next_after(z("9999-12-31T12:00:00Z")) is None
