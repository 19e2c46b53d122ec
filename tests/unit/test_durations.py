"""One duration grammar (cronctl.durations) and every duration flag with its bounds
(cronctl.cli.durations): Go/kubectl durations plus ``d``, a bare number is seconds."""

from __future__ import annotations

from pathlib import Path

import pytest

from cronctl import durations
from cronctl.cli import durations as flags
from cronctl.cli import main
from cronctl.errors import BadInput, BadUsage, ExitCode

S = durations.SECOND
DUMP = Path(__file__).resolve().parents[1] / "golden" / "bundle" / "incident-004.dump.yaml"


@pytest.mark.parametrize(("text", "ns"), [
    ("90", 90 * S), ("90s", 90 * S), ("1h30m", 5400 * S), ("1.5h", 5400 * S), ("300ms", 300_000_000),
    ("1d12h", 36 * 3600 * S), ("7d", 7 * 86400 * S), ("-1h", -3600 * S), ("+2m", 120 * S), ("0", 0),
    (".5s", S // 2), ("1.s", S), ("2.5", 5 * S // 2), (" 15s ", 15 * S), ("1\u00b5s", 1000), ("1\u03bcs", 1000),
    ("1us", 1000), ("1ns", 1), ("1h1m1s1ms1us1ns", 3661 * S + 1_001_001), ("0.5d", 12 * 3600 * S),
])
def test_the_grammar_reads_go_durations_days_and_bare_seconds(text: str, ns: int) -> None:
    assert durations.parse(text) == ns


@pytest.mark.parametrize("text", ["", " ", "soon", "1e3", "nan", "inf", "1h 30m", "1H", "1y", "1w", "m5", ".",
                                  "-", "1..5s", "1_000", "１s", "0x10s", "h", "5x", "1d-2h"])
def test_junk_is_not_a_duration(text: str) -> None:
    with pytest.raises(durations.DurationError) as e:
        durations.parse(text)
    assert e.value.exit_code == ExitCode.BAD_INPUT
    assert "expected a duration like" in e.value.reason


def test_a_duration_past_int64_nanoseconds_is_too_long_not_malformed() -> None:
    with pytest.raises(durations.DurationTooLong):
        durations.parse("106752d")  # 2^63 ns is about 106751.99 days


@pytest.mark.parametrize(("ns", "go"), [
    (0, "0s"), (1, "1ns"), (1500, "1.5\u00b5s"), (300_000_000, "300ms"), (S, "1s"), (90 * S, "1m30s"),
    (5400 * S, "1h30m0s"), (-3600 * S, "-1h0m0s"), (S + 1, "1.000000001s"),
    (-(1 << 63), "-2562047h47m16.854775808s"), ((1 << 63) - 1, "2562047h47m16.854775807s"),
])
def test_format_go_writes_what_go_writes(ns: int, go: str) -> None:
    assert durations.format_go(ns) == go
    assert durations.parse(go) == ns


@pytest.mark.parametrize(("ns", "short"), [(0, "0s"), (90 * S, "1m30s"), (36 * 3600 * S, "1d12h"),
                                           (S // 2, "500ms"), (86400 * S + S // 2, "1d500ms")])
def test_format_short_writes_days(ns: int, short: str) -> None:
    assert durations.format_short(ns) == short
    assert durations.parse(short) == ns


# --- every flag and its bounds ----------------------------------------------------------------

FLAG_TABLE: list[tuple[flags.DurationFlag, str, float]] = [
    (flags.SETTLE, "15s", 15), (flags.SETTLE, "500ms", 0.5), (flags.SETTLE, "2", 2),
    (flags.TIMEOUT, "90", 90), (flags.TIMEOUT, "1.5h", 5400), (flags.TIMEOUT, "1d12h", 129600),
    (flags.EXPECTED_DURATION, "20m", 1200), (flags.EXPECTED_DURATION, "1ms", 0.001),
    (flags.MAX_AGE, "7d", 604800), (flags.MAX_AGE, "3650d", 3650 * 86400),
    (flags.SINCE, "30m", 1800), (flags.SINCE, "1d12h", 129600), (flags.SINCE, "90", 90),
    (flags.LOG_SINCE, "1s", 1), (flags.LOG_SINCE, "1.2s", 2), (flags.LOG_SINCE, "90", 90),
    (flags.LOG_SINCE, "1.5h", 5400),
    (flags.WINDOW, "24h", 86400), (flags.WINDOW, "1d12h", 129600), (flags.WINDOW, "90", 90),
    (flags.UNTIL, "2h", 7200), (flags.UNTIL, "1d", 86400),
    (flags.MARGIN, "0", 0), (flags.MARGIN, "10m", 600), (flags.MAX_SUSPEND, "1d12h", 129600),
    (flags.KEEP, "90d", 90 * 86400), (flags.KEEP, "12h", 43200), (flags.STATUS_EVERY, "60s", 60),
    (flags.STATUS_EVERY, "500ms", 0.5), (flags.MAX_HOLD, "2h", 7200), (flags.ALERT_WINDOW, "15m", 900),
    (flags.ALERT_WINDOW, "60", 60), (flags.LEASE, "60s", 60), (flags.LEASE, "1s", 1), (flags.GRACE, "30s", 30),
    (flags.REQUEST_TIMEOUT, "0", 0), (flags.REQUEST_TIMEOUT, "5s", 5), (flags.REQUEST_TIMEOUT, "1m", 60),
]


@pytest.mark.parametrize(("flag", "text", "seconds"), FLAG_TABLE, ids=lambda v: getattr(v, "name", str(v)))
def test_each_flag_accepts_the_one_grammar(flag: flags.DurationFlag, text: str, seconds: float) -> None:
    assert flag.seconds(text) == seconds


def test_the_table_lists_every_flag() -> None:
    assert {f for _, f in flags.ALL} == {f for f, _, _ in FLAG_TABLE}


@pytest.mark.parametrize(("flag", "text", "error", "words"), [
    (f, text, err, words)
    for _, f in flags.ALL
    # every bad value of a flag is a usage error (exit 2), whatever is wrong with it (issue 34)
    for text, err, words in [("0", BadUsage, "must be "), ("-1s", BadUsage, "must not be negative"),
                             ("soon", BadUsage, "expected a duration like"), ("1y", BadUsage, 'unknown unit "y"'),
                             ("3651d", BadUsage, "at most 3650d"),
                             ("106752d", BadUsage, "at most 3650d")]
    if not (text == "0" and f.bounds.low == 0)  # --margin: no slack is a meaningful margin
], ids=str)
def test_each_flag_refuses_in_one_line_naming_itself(flag: flags.DurationFlag, text: str,
                                                     error: type[Exception], words: str) -> None:
    with pytest.raises(error) as e:
        flag.seconds(text)
    msg = str(e.value)
    assert msg.startswith(f"bad {flag.name} {text!r}: ") and words in msg and "\n" not in msg
    assert "MAX_" not in msg  # the cap's constant is docs/LIMITS.md's word, not the user's


def test_zero_and_malformed_text_both_exit_2() -> None:
    """Before issue 34: --timeout 0 exited 2, --timeout abc 5. One flag, one code."""
    with pytest.raises(BadUsage) as z:
        flags.TIMEOUT.seconds("0s")
    assert z.value.exit_code == ExitCode.USAGE
    with pytest.raises(BadUsage) as m:
        flags.TIMEOUT.seconds("1h 30m")
    assert m.value.exit_code == ExitCode.USAGE


def test_bundle_since_is_at_least_a_second_because_logs_are_asked_for_in_seconds() -> None:
    with pytest.raises(BadUsage, match="at least 1s"):
        flags.LOG_SINCE.seconds("300ms")


def test_every_duration_flag_says_in_its_help_that_a_bare_number_is_seconds(
        capfd: pytest.CaptureFixture[str]) -> None:
    for cmd, flag in [("run-manual", "--settle"), ("run-manual", "--timeout"), ("run-manual", "--expected-duration"),
                      ("wait", "--timeout"), ("backfill", "--max-age"), ("backfill", "--since"),
                      ("backfill", "--timeout"), ("history", "--since"), ("bundle", "--since"),
                      ("bundle", "--window"), ("pause", "--until"), ("alerts", "--margin"),
                      ("alerts", "--expected-duration"), ("alerts", "--max-suspend")]:
        assert main([cmd, "--help"]) == 0
        lines = capfd.readouterr().out.splitlines()
        at = next(i for i, line in enumerate(lines) if line.lstrip().startswith(flag + " "))
        end = next((i for i in range(at + 1, len(lines)) if lines[i].startswith("  -")), len(lines))
        assert "bare number is seconds" in " ".join(" ".join(lines[at:end]).split()), (cmd, flag)


# --- through the command line, offline ----------------------------------------------------------

@pytest.mark.parametrize("args", [
    ["history", "--from-dump", str(DUMP), "--since", "1d12h", "-o", "json"],
    ["history", "--from-dump", str(DUMP), "--since", "1.5h", "-o", "json"],
    ["history", "--from-dump", str(DUMP), "--since", "5400", "-o", "json"],
])
def test_history_since_takes_days_fractions_and_bare_seconds(capfd: pytest.CaptureFixture[str],
                                                             args: list[str]) -> None:
    assert main(args) == 0, capfd.readouterr().err


@pytest.mark.parametrize(("since", "window"), [("90", "1d12h"), ("1.5h", "90"), ("1h30m", "36h")])
def test_bundle_since_and_window_take_the_same_grammar(tmp_path: Path, capfd: pytest.CaptureFixture[str],
                                                       since: str, window: str) -> None:
    assert main(["bundle", "--from-dump", str(DUMP), "--since", since, "--window", window,
                 "--out", str(tmp_path / "b"), "-o", "json"]) == 0, capfd.readouterr().err


@pytest.mark.parametrize(("args", "code", "line"), [
    (["bundle", "--from-dump", str(DUMP), "--window", "0"], 2, "error: bad --window '0': must be more than 0"),
    (["bundle", "--from-dump", str(DUMP), "--since", "0s"], 2, "error: bad --since '0s': must be at least 1s"),
    (["history", "--from-dump", str(DUMP), "--since", "1w"], 2, "error: bad --since '1w': unknown unit \"w\""),
    (["wait", "cj", "--timeout", "-1h"], 2, "error: bad --timeout '-1h': must not be negative"),
    (["run-manual", "cj", "--expected-duration", "0"], 2, "error: bad --expected-duration '0': must be more than 0"),
    (["backfill", "cj", "--missed", "--max-age", "3651d"], 2, "error: bad --max-age '3651d': at most 3650d"),
    (["pause", "cj", "--reason", "x", "--until", "soon"], 2, "error: bad --until 'soon': expected an RFC3339"),
])
def test_a_bad_duration_is_one_error_line_before_any_request(capfd: pytest.CaptureFixture[str], args: list[str],
                                                             code: int, line: str) -> None:
    assert main(args) == code
    out, err = capfd.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and err.startswith(line), err
