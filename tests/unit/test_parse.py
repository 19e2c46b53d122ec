"""The parser reproduces robfig/cron v3.0.1 ParseStandard: what it accepts, what it means, and a
clear one-line error (naming field and value) for everything it rejects."""

from __future__ import annotations

from datetime import timedelta
from itertools import product

import pytest

from cronctl.errors import ScheduleError
from cronctl.schedule import parse
from cronctl.schedule.parse import CronParseError, go_parse_duration

FIELDS = ["minute", "hour", "day-of-month", "month", "day-of-week"]


def _in_field(i: int, item: str) -> str:
    parts = ["*"] * 5
    parts[i] = item
    return " ".join(parts)


# ----------------------------------------------------------------------------- accepted syntax

MEANINGS = [
    ("*/15 * * * *", "minutes", (0, 15, 30, 45)),
    ("5/15 * * * *", "minutes", (5, 20, 35, 50)),
    ("0-59/60 * * * *", "minutes", (0,)),
    ("+5 * * * *", "minutes", (5,)),
    ("05 * * * *", "minutes", (5,)),
    (",5 * * * *", "minutes", (5,)),
    ("5,,10 * * * *", "minutes", (5, 10)),
    ("*-5 * * * *", "minutes", tuple(range(60))),
    ("?-5 * * * *", "minutes", tuple(range(60))),
    ("0 * * JAN/3 *", "months", (1, 4, 7, 10)),
    ("0 * * jan-MAR *", "months", (1, 2, 3)),
    ("0 * * * tue/2", "days_of_week", (2, 4, 6)),
    ("0 * * * SUN,sat", "days_of_week", (0, 6)),
    ("0 6-16/4 * * *", "hours", (6, 10, 14)),
    ("0 ? * * *", "hours", tuple(range(24))),
    ("0 0 ? * *", "days_of_month", tuple(range(1, 32))),
    (", * * * *", "minutes", ()),
    ("0\t0  *\n* *", "hours", (0,)),
]


@pytest.mark.parametrize(("expr", "attr", "values"), MEANINGS)
def test_accepted_syntax_means_what_robfig_means(expr: str, attr: str, values: tuple[int, ...]) -> None:
    assert getattr(parse(expr), attr) == values


STAR_BITS = [
    ("0 0 * * 1", True, False),
    ("0 0 ? * 1", True, False),
    ("0 0 */1 * 1", True, False),
    ("0 0 */2 * 1", False, False),
    ("0 0 ?/3 * 1", False, False),
    ("0 0 1-31 * 1", False, False),
    ("0 0 1/1 * 1", False, False),
    ("0 0 1 * */1", False, True),
    ("0 0 15 * */2", False, False),
    ("0 0 1 * 0-6", False, False),
    ("@weekly", True, False),
    ("@monthly", False, True),
    ("@yearly", False, True),
    ("@daily", True, True),
]


@pytest.mark.parametrize(("expr", "dom_star", "dow_star"), STAR_BITS)
def test_star_bits_follow_robfig(expr: str, dom_star: bool, dow_star: bool) -> None:
    s = parse(expr)
    assert (s.dom_star, s.dow_star) == (dom_star, dow_star)


@pytest.mark.parametrize(("expr", "descriptor", "minutes", "hours"), [
    ("@yearly", "@yearly", (0,), (0,)), ("@annually", "@annually", (0,), (0,)),
    ("@monthly", "@monthly", (0,), (0,)), ("@weekly", "@weekly", (0,), (0,)),
    ("@daily", "@daily", (0,), (0,)), ("@midnight", "@midnight", (0,), (0,)),
    ("@hourly", "@hourly", (0,), tuple(range(24))),
    ("TZ=UTC @daily", "@daily", (0,), (0,)),
])
def test_descriptors(expr: str, descriptor: str, minutes: tuple[int, ...], hours: tuple[int, ...]) -> None:
    s = parse(expr)
    assert (s.descriptor, s.minutes, s.hours, s.every) == (descriptor, minutes, hours, None)


@pytest.mark.parametrize(("expr", "seconds"), [
    ("@every 90m", 5400), ("@every 1h30m", 5400), ("@every 1500ms", 1), ("@every 0", 1),
    ("@every -5s", 1), ("@every 500ms", 1), ("@every 1.5h", 5400), ("@every 2µs", 1),
    ("@every 61999ms", 61), ("@every +10s", 10), ("@every 1h0m0.9s", 3600),
])
def test_every_rounds_as_robfig(expr: str, seconds: int) -> None:
    s = parse(expr)
    assert s.every == timedelta(seconds=seconds)
    assert s.descriptor == "@every"


@pytest.mark.parametrize(("text", "ns"), [
    ("1h", 3_600_000_000_000), ("1.5s", 1_500_000_000), (".5s", 500_000_000),
    ("1.s", 1_000_000_000), ("3us", 3000), ("3\u03bcs", 3000), ("-1m", -60_000_000_000),
    ("9223372036854775807ns", (1 << 63) - 1),
])
def test_go_duration_parsing(text: str, ns: int) -> None:
    assert go_parse_duration(text) == ns


@pytest.mark.parametrize(("tz_expr", "zone", "from_prefix"), [
    ("TZ=Europe/Berlin 0 * * * *", "Europe/Berlin", True),
    ("CRON_TZ=Asia/Tokyo 0 * * * *", "Asia/Tokyo", True),
    ("TZ= 0 * * * *", "UTC", True),
    ("TZ=Local 0 * * * *", "UTC", True),
    ("TZ=UTC   0 * * * *  ", "UTC", True),
])
def test_tz_prefix(tz_expr: str, zone: str, from_prefix: bool) -> None:
    s = parse(tz_expr)
    assert (s.zone, s.zone_from_prefix) == (zone, from_prefix)


def test_time_zone_argument_becomes_the_zone() -> None:
    s = parse("0 9 * * *", "Asia/Kolkata")
    assert (s.zone, s.zone_from_prefix, s.expr) == ("Asia/Kolkata", False, "0 9 * * *")
    assert parse("0 9 * * *").zone == "UTC"
    assert parse("0 9 * * *", "").zone == "UTC"
    assert parse("TZ=Local 0 9 * * *", local_zone="Asia/Kolkata").zone == "Asia/Kolkata"


def test_parse_imports_nothing_heavy() -> None:
    import subprocess
    import sys

    code = ("import sys; from cronctl.schedule import parse; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('yaml','kubernetes','jinja2','typer','rich','click')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ----------------------------------------------------------------------------- rejected syntax

# (field index, bad value, words the message must contain)
BAD_VALUES = [
    ("60", "above maximum (59)"), ("-1", "number is missing"), ("1-", "number is missing"),
    ("/5", "number is missing"), ("5/", "number is missing"), ("1.5", "not a number"),
    ("*/0", "step must be a positive number"), ("1-2-3", "more than one '-'"),
    ("1/2/3", "more than one '/'"), ("L", "not a number"), ("1#2", "not a number"),
    ("99999999999999999999", "too large"), ("*/-2", "negative number"), ("5-1", "after its end"),
    ("H", "not a number"), ("１", "not a number"),
]
MAXIMA = {0: 59, 1: 23, 2: 31, 3: 12, 4: 6}


@pytest.mark.parametrize(("field", "bad"), list(product(range(5), BAD_VALUES)),
                         ids=[f"{FIELDS[f]}-{b[0]}" for f, b in product(range(5), BAD_VALUES)])
def test_bad_values_name_the_field_and_the_value(field: int, bad: tuple[str, str]) -> None:
    value, words = bad
    if value == "60":
        value = str(MAXIMA[field] + 1)
        words = f"above maximum ({MAXIMA[field]})"
    expr = _in_field(field, value)
    with pytest.raises(CronParseError) as info:
        parse(expr)
    msg = str(info.value)
    assert msg.startswith(f"bad {FIELDS[field]} '{value}' in '{expr}': "), msg
    assert words in msg
    assert "\n" not in msg


@pytest.mark.parametrize(("field", "name"), list(product((0, 1, 2), ("jan", "mon"))))
def test_names_only_work_in_month_and_day_of_week(field: int, name: str) -> None:
    with pytest.raises(CronParseError, match=f"bad {FIELDS[field]} '{name}'"):
        parse(_in_field(field, name))


@pytest.mark.parametrize("bad", ["MONDAY", "JANUARY", "mo", "ja", "DEC-JAN", "FRI-MON", "7", "8"])
def test_bad_names_and_wraps_are_rejected(bad: str) -> None:
    field = 3 if bad.upper().startswith(("J", "D")) else 4
    with pytest.raises(CronParseError):
        parse(_in_field(field, bad))


@pytest.mark.parametrize("expr", [
    "", " @daily", "@daily ", "@reboot", "@HOURLY", "@Daily", "@", "@every", "@every ",
    "@every 1", "@every 1d", "@every  1h", "0 0 1 1", "0 0 1 1 1 1", "0 0 1 1 1 1 2026",
    "TZ=UTC", "CRON_TZ=UTC", "TZ=UTC 0 * * *", "tz=UTC 0 * * * *", "TZ=Mars/Base 0 * * * *",
    "TZ=../etc/passwd 0 * * * *", "TZ=/etc/localtime 0 * * * *",
])
def test_whole_expression_errors_are_one_clear_line(expr: str) -> None:
    with pytest.raises(ScheduleError) as info:
        parse(expr)
    assert str(info.value) and "\n" not in str(info.value)


def test_unknown_time_zone_argument() -> None:
    with pytest.raises(ScheduleError, match=r"^unknown time zone 'Mars/Base'$"):
        parse("0 * * * *", "Mars/Base")


def test_tz_without_space_is_an_error_where_upstream_panics() -> None:
    with pytest.raises(CronParseError) as info:
        parse("TZ=America/New_York")
    assert info.value.upstream.startswith("panic:")
    assert "followed by a space" in str(info.value)


def test_day_of_week_seven_hints_that_sunday_is_zero() -> None:
    with pytest.raises(CronParseError) as info:
        parse("0 0 * * 7")
    assert info.value.hint is not None and "Sunday is 0" in info.value.hint


@pytest.mark.parametrize("expr", ["0 0 30 2 *", "0 0 31 4 *", "59 23 31 2 *", ", * * * *"])
def test_impossible_dates_parse_but_never_fire(expr: str) -> None:
    from datetime import datetime, timezone

    assert parse(expr).next_after(datetime(2026, 1, 1, tzinfo=timezone.utc)) is None


def test_go_whitespace_not_python_whitespace() -> None:
    # U+001F is whitespace to Python's str.split but not to Go's strings.Fields
    with pytest.raises(CronParseError, match="found 4"):
        parse("0\x1f0 * * *")
    assert parse("0\u00a00 * * *").hours == (0,)  # NBSP is Go whitespace


def test_turkish_dotted_capital_i_lowers_like_go() -> None:
    assert parse("0 0 * * FR\u0130").days_of_week == (5,)


def test_huge_numbers_are_go_atoi_errors_not_python_limits() -> None:
    assert parse("0" * 5000 + "5 * * * *").minutes == (5,)  # leading zeros are fine in Go
    with pytest.raises(CronParseError, match="too large") as info:
        parse("9" * 5000 + " * * * *")
    assert len(str(info.value)) < 300
    with pytest.raises(CronParseError):
        parse("@every " + "9" * 6000 + "h")


@pytest.mark.parametrize(("zone", "suggested"), [
    ("Europe/Berln", "Europe/Berlin"),       # a typo
    ("europe/berlin", "Europe/Berlin"),      # the case (Go's LoadLocation is case-sensitive)
    ("America/New_Yrok", "America/New_York"),
])
def test_an_unknown_zone_close_to_a_real_one_gets_a_did_you_mean_hint(zone: str, suggested: str) -> None:
    from cronctl.schedule.parse import load_location

    with pytest.raises(ScheduleError) as e:
        load_location(zone)
    assert e.value.hint is not None and suggested in e.value.hint


def test_an_unknown_zone_far_from_any_real_one_gets_no_hint() -> None:
    from cronctl.schedule.parse import load_location

    with pytest.raises(ScheduleError) as e:
        load_location("Mars/Olympus_Mons")
    assert e.value.hint is None


@pytest.mark.parametrize(("zone", "canonical"), [
    ("Europe/Kiev", "Europe/Kyiv"),          # renamed in tzdata 2022b
    ("US/Eastern", "America/New_York"),
    ("Asia/Calcutta", "Asia/Kolkata"),
])
def test_a_deprecated_zone_link_is_named_with_its_canonical_zone(zone: str, canonical: str) -> None:
    from datetime import datetime, timezone

    from cronctl.explain import explain_schedule
    from cronctl.schedule.parse import zone_link_target

    assert zone_link_target(zone) == canonical
    after = datetime(2026, 12, 1, tzinfo=timezone.utc)
    warnings = explain_schedule("0 9 * * *", time_zone=zone, after=after, count=1).warnings
    assert any(zone in w and canonical in w for w in warnings), warnings


@pytest.mark.parametrize("zone", ["Europe/Kyiv", "Europe/Berlin", "UTC", "Etc/UTC", "America/New_York"])
def test_a_canonical_zone_is_not_called_a_link(zone: str) -> None:
    from cronctl.schedule.parse import zone_link_target

    assert zone_link_target(zone) is None
