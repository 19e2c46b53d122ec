"""The command-line conventions of issue 10 item 7, offline: duration flags in range, several
files for -f, never-firing schedules, local time beside UTC, "not found" with the namespaces
where the name exists, and what a refusal under --yes changed and set back."""

from __future__ import annotations

import pytest

from cronctl.cli import main
from cronctl.cli.runtime import parse_duration
from cronctl.errors import BadUsage, ExitCode


@pytest.mark.parametrize("text", ["0", "0s", "0m0s", "-3", "-1s"])
def test_a_duration_of_zero_or_less_is_a_usage_error_naming_the_flag(text: str) -> None:
    with pytest.raises(BadUsage, match="--settle") as e:
        parse_duration(text, flag="--settle")
    assert e.value.exit_code == ExitCode.USAGE


@pytest.mark.parametrize(("args", "flag"), [
    (["run-manual", "cj", "--settle", "0"], "--settle"),
    (["run-manual", "cj", "--timeout", "0s"], "--timeout"),
    (["run-manual", "cj", "--settle", "-5s"], "--settle"),
    (["backfill", "cj", "--missed", "--settle", "0"], "--settle"),
    (["backfill", "cj", "--missed", "--max-age", "0"], "--max-age"),
    (["wait", "cj", "--timeout", "0"], "--timeout"),
    (["history", "cj", "--since", "0"], "--since"),
    (["pause", "cj", "--reason", "x", "--until", "0"], "--until"),
    (["bundle", "--from-dump", "x.yaml", "--window", "0d"], "--window"),
])
def test_every_duration_flag_refuses_zero_in_one_line_with_exit_2_before_any_request(
        capfd: pytest.CaptureFixture[str], args: list[str], flag: str) -> None:
    assert main(args) == ExitCode.USAGE
    out, err = capfd.readouterr()
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: bad {flag} "), err


def test_settle_zero_says_why_the_second_check_needs_a_delay(capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["run-manual", "cj", "--settle", "0"]) == 2
    assert "controller was creating" in capfd.readouterr().err
