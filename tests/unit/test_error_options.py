"""Services name their inputs in their own terms (cronctl.errors.option); the command line writes
the flag in their place: the same error reads ``occurrence`` from a library and ``--occurrence``
on the command line."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from builders import manifest
from cronctl.cli.common import flag_of
from cronctl.errors import BadInput, Refused, option
from cronctl.procedure.backfill import read_done
from cronctl.procedure.slot import resolve

UTC = timezone.utc


def test_an_error_reads_its_options_as_words_and_the_cli_as_flags() -> None:
    e = Refused(f"{option('catch_up')} none needs patch", hint=f"use {option('job_name')} or {option('yes', 'consent')}")
    assert str(e) == e.message == "catch up none needs patch"
    assert e.hint == "use job name or consent"
    assert e.options == ("catch_up", "job_name", "yes")
    assert e.naming(flag_of) == ("--catch-up none needs patch", "use --job-name or --yes")


def test_the_flag_of_an_input_is_its_name_with_dashes_unless_the_table_says_otherwise() -> None:
    assert [flag_of(n) for n in ("occurrence", "ad_hoc_occurrence", "from_", "slots", "run_dir")] == [
        "--occurrence", "--ad-hoc-occurrence", "--from", "--slot", "--run-dir"]


def test_a_service_error_names_no_flag() -> None:
    with pytest.raises(BadInput) as e:
        resolve(manifest("cj", "0 * * * *"), datetime(2026, 12, 2, 10, 30, tzinfo=UTC), latest=False,
                now=datetime(2026, 12, 2, 12, 0, tzinfo=UTC))
    assert "--" not in e.value.message and "--" not in (e.value.hint or "")
    assert e.value.message.startswith("occurrence 2026-12-02T10:30:00Z is not a slot")
    assert e.value.naming(flag_of)[0].startswith("--occurrence 2026-12-02T10:30:00Z is not a slot")


def test_the_command_line_names_the_flag_of_a_service_error(tmp_path: Path) -> None:
    with pytest.raises(BadInput) as e:
        read_done(str(tmp_path / "missing.csv"))
    assert e.value.message.startswith("cannot read done from ")
    assert e.value.naming(flag_of)[0].startswith("cannot read --done-from ")


def test_main_writes_flags_in_the_error_and_hint_lines() -> None:
    from cronctl.cli import error_lines

    e = Refused(f"not on a terminal and {option('yes')} not given", hint=f"use {option('wait_active')}")
    assert error_lines(e) == ["error: not on a terminal and --yes not given", "hint: use --wait-active"]

