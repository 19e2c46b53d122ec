"""The Atlas dialect (docs/BACKGROUND.md §2.2): strict numeric fields, AND rule, one-year horizon, earliest-due backlog.

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


# --- property: the fast walk equals the seed's minute-by-minute walk ---------------------------

from datetime import timedelta  # noqa: E402
from zoneinfo import ZoneInfo  # noqa: E402

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def _naive_next(s, after: datetime, limit_minutes: int) -> datetime | None:  # type: ignore[no-untyped-def]
    """The Atlas Next (docs/BACKGROUND.md §2.2), literally: truncate, +1 minute, then one absolute minute at a time."""
    tz = ZoneInfo(s.zone)
    t = after.astimezone(UTC).replace(second=0, microsecond=0) + timedelta(minutes=1)
    for _ in range(limit_minutes):
        if s.matches(t.astimezone(tz)):
            return t
        t += timedelta(minutes=1)
    return None


# Starts a day before 2026 transitions (New York, Lord Howe 30-minute DST, Santiago at midnight)
# and before St. John's 2010 changes, which happened at 00:01 local (not on an hour boundary:
# the case where a compressed walk could jump over a matching minute).
STARTS = ["2026-03-07T06:59:30Z", "2026-10-31T06:00:00Z", "2026-10-02T15:00:00Z", "2026-04-03T14:45:00Z",
          "2026-09-05T04:00:00Z", "2026-04-04T03:00:00Z", "2026-01-01T00:00:00Z",
          "2010-03-13T03:00:00Z", "2010-11-06T02:00:00Z"]
ZONES = ["America/New_York", "Australia/Lord_Howe", "America/Santiago", "America/St_Johns", "UTC"]


def test_a_change_off_the_hour_does_not_make_the_walk_jump_over_a_match() -> None:
    # America/St_Johns 2010-03-14: 00:01 NST (-03:30) -> 01:01 NDT (-02:30) at 03:31:00Z.
    # From 23:59 Saturday: 00:00 (hour 0), then 01:01 NDT, the first minute of hour 1.
    s = parse_atlas("* 1 * * *", "America/St_Johns")
    assert s.next_after(z("2010-03-14T03:29:00Z")) == z("2010-03-14T03:31:00Z")


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(STARTS), st.sampled_from(ZONES),
       st.sampled_from(["*", "0", "30", "*/15", "1-4", "59", "0,30,45"]),
       st.sampled_from(["*", "0", "1", "2", "23", "0-3", "*/5"]),
       st.sampled_from(["*", "1-31/2", "4,5,6", "13"]), st.sampled_from(["*", "0", "6", "1-5"]))
def test_the_fast_walk_finds_what_the_minute_by_minute_walk_finds(
        start: str, zone: str, minute: str, hour: str, dom: str, dow: str) -> None:
    s = parse_atlas(f"{minute} {hour} {dom} * {dow}", zone)
    t = z(start)
    for _ in range(5):  # five consecutive runs over three days at most
        naive = _naive_next(s, t, 3 * 24 * 60)
        fast = s.next_after(t)
        if naive is None:
            assert fast is None or fast > t + timedelta(days=3)
            return
        assert fast == naive
        t = naive
