"""Schedules in plain English: one row per case, expected sentences written by hand from docs/SEMANTICS.md.

The day rule (docs/SEMANTICS.md §2) is the point of most rows: robfig ORs day-of-month and
day-of-week when neither has the star bit, ANDs them otherwise; Atlas always ANDs.
"""

from __future__ import annotations

import pytest

from cronctl.schedule.atlas import parse_atlas
from cronctl.schedule.describe import describe, go_duration

LOCAL = "in the controller's local zone (UTC)"

ROBFIG = [
    # The OR rule and its star-bit exceptions (vectors group syntax)
    ("0 0 13 * 5", None, f"at 00:00 on day 13 of the month, or on Fridays, {LOCAL}"),
    ("0 0 13 * FRI", None, f"at 00:00 on day 13 of the month, or on Fridays, {LOCAL}"),
    ("0 0 1-7 * 1", None, f"at 00:00 on days 1 through 7 of the month, or on Mondays, {LOCAL}"),
    ("0 0 */2 * 1", None, f"at 00:00 on every 2nd day of the month from day 1, or on Mondays, {LOCAL}"),
    ("0 0 */1 * 1", None, f"at 00:00 on Mondays, {LOCAL}"),
    ("0 0 ? * 1", None, f"at 00:00 on Mondays, {LOCAL}"),
    ("0 0 1 * */1", None, f"at 00:00 on day 1 of the month, {LOCAL}"),
    ("0 0 15 * */2", None,
     f"at 00:00 on day 15 of the month, or on Sundays, Tuesdays, Thursdays and Saturdays, {LOCAL}"),
    ("0 0 1-31 * 1", None, "at 00:00 every day (on days 1 through 31 of the month, or on Mondays: robfig/cron "
                           f"matches a day when EITHER field matches), {LOCAL}"),
    # Steps
    ("*/15 * * * *", None, f"every 15 minutes, {LOCAL}"),
    ("5/15 * * * *", None, f"every 15 minutes from minute 5 of every hour, {LOCAL}"),
    ("0 1/2 * * *", None, f"every 2 hours from 01:00, {LOCAL}"),
    ("0 */2 * * *", None, f"every 2 hours from 00:00, {LOCAL}"),
    ("*/10 9-17 * * 1-5", "Europe/Berlin",
     "every 10 minutes from 09:00 through 17:50 on weekdays (Monday through Friday), in Europe/Berlin"),
    ("30 6-16/4 * * 1-5", None, f"at 06:30, 10:30 and 14:30 on weekdays (Monday through Friday), {LOCAL}"),
    # Lists, ranges, single values
    ("* * * * *", None, f"every minute, {LOCAL}"),
    ("5 * * * *", None, f"every hour at minute 5, {LOCAL}"),
    ("0,30 * * * *", None, f"every 30 minutes, {LOCAL}"),
    ("5,35 * * * *", None, f"at minutes 5 and 35 of every hour, {LOCAL}"),
    ("0-10 * * * *", None, f"at minutes 0 through 10 of every hour, {LOCAL}"),
    ("*/30 9-17 * * *", None, f"every 30 minutes from 09:00 through 17:30, {LOCAL}"),
    ("23 0-20/2 * * *", None, f"every 2 hours from 00:23 through 20:23, {LOCAL}"),
    ("1-4/2,50 */5 * * *", None, f"at minutes 1, 3 and 50 during hours 00, 05, 10, 15 and 20, {LOCAL}"),
    ("5 0 * 8 *", None, f"at 00:05 every day in August, {LOCAL}"),
    ("*/15 * * 8 *", None, f"every 15 minutes in August, {LOCAL}"),
    ("0 0,12 1 */3 *", None, f"at 00:00 and 12:00 on day 1 of the month in January, April, July and October, {LOCAL}"),
    ("0 12 29 2 1", None, f"at 12:00 on day 29 of the month, or on Mondays in February, {LOCAL}"),
    ("0 9-17 * * *", None, f"every hour from 09:00 through 17:00, {LOCAL}"),
    ("0 8,12,18 * * *", None, f"at 08:00, 12:00 and 18:00 every day, {LOCAL}"),
    ("1,2,3 4,5 * * *", None, f"at 04:01, 04:02, 04:03, 05:01, 05:02 and 05:03 every day, {LOCAL}"),
    ("30 2 * * *", "America/New_York", "at 02:30 every day, in America/New_York"),
    ("0 0 * * 0,6", None, f"at 00:00 on weekends (Saturday and Sunday), {LOCAL}"),
    # Names
    ("0 9 * * MON-FRI", "Europe/Berlin", "at 09:00 on weekdays (Monday through Friday), in Europe/Berlin"),
    ("0 0 * feb-apr sat", None, f"at 00:00 on Saturdays in February through April, {LOCAL}"),
    ("0 0 1 Dec *", None, f"at 00:00 on December 1, {LOCAL}"),
    # Descriptors and @every
    ("@daily", None, f"at 00:00 every day, {LOCAL}"),
    ("@hourly", None, f"every hour, on the hour, {LOCAL}"),
    ("@weekly", None, f"at 00:00 on Sundays, {LOCAL}"),
    ("@monthly", None, f"at 00:00 on day 1 of the month, {LOCAL}"),
    ("@yearly", "Asia/Kolkata", "at 00:00 on January 1, in Asia/Kolkata"),
    ("@every 1h30m", None, "every 1h30m, counted from the last run, ignoring time zones"),
    ("@every 90s", "America/New_York", "every 1m30s, counted from the last run, ignoring time zones"),
    # Dates that never or only sometimes exist (robfig does not check dates)
    ("0 0 30 2 *", None, "day 30 of February never exists: this schedule never fires"),
    ("0 0 31 4,6,9,11 *", None,
     "day 31 of April, June, September and November never exists: this schedule never fires"),
    ("0 0 30,31 2 *", None, "days 30 and 31 of February never exist: this schedule never fires"),
    ("0 0 29 2 *", None, f"at 00:00 on February 29 (leap years only), {LOCAL}"),
    ("0 0 31 * *", None, f"at 00:00 on day 31 of the month (months without a day 31 are skipped), {LOCAL}"),
    ("0 0 , * *", None, "the day-of-month field has no values (only commas): this schedule never fires"),
    # The zone
    ("TZ=Europe/Berlin 0 9 * * *", None, "at 09:00 every day, in Europe/Berlin (from the TZ= prefix in the "
                                         "schedule, which wins over spec.timeZone)"),
    ("CRON_TZ=Asia/Tokyo 0 9 * * *", "Europe/Berlin", "at 09:00 every day, in Asia/Tokyo (from the TZ= prefix "
                                                      "in the schedule, which wins over spec.timeZone)"),
    ("0 9 * * *", "UTC", "at 09:00 every day, in UTC"),
]


@pytest.mark.parametrize(("expr", "tz", "expected"), ROBFIG)
def test_it_describes_the_robfig_schedule_in_plain_english(expr: str, tz: str | None, expected: str) -> None:
    from cronctl.schedule import parse

    assert describe(parse(expr, tz), tz) == expected


ATLAS = [
    ("0 0 13 * 5", "at 00:00 on day 13 of the month, if it is a Friday, in UTC"),
    ("0 9 * * 1-5", "at 09:00 on weekdays (Monday through Friday), in UTC"),
    ("0 0 1-7 * 1", "at 00:00 on days 1 through 7 of the month, if it is a Monday, in UTC"),
    ("0 0 1 * 1,3", "at 00:00 on day 1 of the month, if it is a Monday or Wednesday, in UTC"),
    ("0 0 30 2 *", "day 30 of February never exists: this schedule never fires"),
    ("0 0 30 2 1", "day 30 of February never exists: this schedule never fires"),
]


@pytest.mark.parametrize(("expr", "expected"), ATLAS)
def test_it_describes_the_atlas_and_rule(expr: str, expected: str) -> None:
    assert describe(parse_atlas(expr), "UTC", and_rule=True) == expected


@pytest.mark.parametrize(("seconds", "text"), [(5400, "1h30m"), (90, "1m30s"), (1, "1s"), (86400, "24h"),
                                               (3601, "1h1s")])
def test_durations_are_written_the_go_way_without_zero_parts(seconds: int, text: str) -> None:
    from datetime import timedelta

    assert go_duration(timedelta(seconds=seconds)) == text


# --- properties -------------------------------------------------------------------------------

from datetime import datetime, timezone  # noqa: E402

from hypothesis import example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from cronctl.schedule.describe import never_fires_reason  # noqa: E402


def _item(lo: int, hi: int) -> st.SearchStrategy[str]:
    n = st.integers(lo, hi)
    return st.one_of(st.just("*"), n.map(str), st.tuples(n, n).map(lambda p: f"{min(p)}-{max(p)}"),
                     st.tuples(n, st.integers(1, hi - lo + 1)).map(lambda p: f"{p[0]}/{p[1]}"))


def _field(lo: int, hi: int) -> st.SearchStrategy[str]:
    return st.lists(_item(lo, hi), min_size=1, max_size=3).map(",".join)


EXPRS = st.tuples(_field(0, 59), _field(0, 23), _field(1, 31), _field(1, 12), _field(0, 6)).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(EXPRS)
@example("0 0 30 2 *")
@example("0 0 30-31 2,4 *")
@example("0 0 31 4,6,9,11 *")
@example("0 0 31 2 1")  # OR rule: Mondays in February rescue it
@example("0 0 */1 2 *")
@example("0 0 29 2 *")
def test_it_says_never_fires_exactly_when_the_engine_finds_no_run(expr: str) -> None:
    from cronctl.schedule import parse

    s = parse(expr, None)
    text = describe(s, None)
    assert text  # never raises, never empty
    fires = s.next_after(datetime(2026, 1, 1, tzinfo=timezone.utc)) is not None
    assert (never_fires_reason(s) is None) == fires, text
