"""Ledger rows are untrusted input (issue 39): another cluster's recorder on a shared PostgreSQL, an
older or newer cronctl, a broken disk. Hypothesis writes a small real ledger through the Writer
(a CronJob, its Jobs, Events, a log tail, a judged slot, a cursor), then overwrites one column of one
row of one table with anything (NULL, huge integers, floats, bytes, text, a time that is no time, JSON
that is deep, garbled, a list, a judged row without its keys or with an unknown verdict) straight in
the database, and reads it back through the real ``cronctl history`` (text, ``-o json`` and the
fleet page) and through every reader the recorder uses. Whatever the row holds: exit 0 or 9 (the row
named by its table and key, on one line), never an internal error or a traceback.

SQLite keeps whatever is written into any column; PostgreSQL (``CRONCTL_TEST_POSTGRES``, which
scripts/test starts) enforces the column types, so there the values that fit the column's type are
tried (JSON through ``CAST(... AS jsonb)``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st

from builders import T, cronjob, event, scheduled, z
from cronctl import model
from cronctl.history import Options, slot_history
from cronctl.ledger import schema
from cronctl.ledger.store import open_ledger

FUZZ = settings(max_examples=int(os.environ.get("CRONCTL_FUZZ_LEDGER", "40")), deadline=None, derandomize=True,
                phases=[Phase.explicit, Phase.generate],
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                       HealthCheck.data_too_large])

_JUDGED: Any = None


def _fill(url: str) -> None:
    """Empty the ledger's tables and write the template rows through the real Writer: the judged
    rows of the first slots (09:00, 09:01, 09:02), the first of them the one a fuzz changes."""
    global _JUDGED
    cj = cronjob("*/1 * * * *", ok_limit=1)
    jobs = [scheduled(T(9, m)) for m in (1, 2)]
    evs = [event("SawCompletedJob", "saw completed job", T(9, 1, 30))]
    evs[0]["metadata"]["uid"] = "ev-1"
    judged = [s for s in slot_history(cj, jobs, evs, Options(now=T(9, 3)))["slots"] if s["verdict"] != "due"]
    _JUDGED = judged[0]
    led = open_ledger(url)
    try:
        with led.writing() as w:
            for t in reversed(schema.metadata.sorted_tables):
                w.conn.execute(t.delete())
            w.cronjob("c1", cj, T(9, 0))
            for j in jobs:
                w.job("c1", j, T(9, 2))
            w.event("c1", evs[0])
            w.log("c1", jobs[0], "p1", "main", "done\n", False, T(9, 2))
            for row in judged:
                w.close_slot("c1", str(cj["metadata"]["uid"]), "ns", "cj", model.when(row["slot"]), row, T(9, 2, 30))
            w.cursor("c1", "jobs", "*", "123", T(9, 2))
    finally:
        led.close()


_TABLES = {t.name: t for t in schema.metadata.sorted_tables}
_COLUMNS = [(t.name, c.name) for t in schema.metadata.sorted_tables for c in t.columns if c.name != "id"]


def _deep(n: int) -> str:
    return "[" * n + "]" * n


def _judged_with(**change: Any) -> str:
    row = dict(_JUDGED or {})
    for k, v in change.items():
        if v is None:
            row.pop(k, None)
        else:
            row[k] = v
    return json.dumps(row)


_JSONISH = st.sampled_from([
    _deep(2000), '{"a":' * 1500 + "1" + "}" * 1500, "not json", "[1, 2]", '"a string"', "9" * 5000, "null", "{}",
    '{"metadata": 5}', '{"metadata": {"annotations": [1]}, "spec": "x"}', "NaN", "1e999",
])
_JUDGED_ROWS = st.builds(lambda k, v: (k, v), st.sampled_from(
    ["verdict", "slot", "jobs", "job_details", "reason", "manual_beside", "start_delay_seconds", "slot_local"]),
    st.sampled_from([None, "bogus-verdict", 5, [1], {"x": 1}, 2 ** 80, "", [{"name": 1}]]))
_VALUES = st.one_of(
    st.none(), st.integers(min_value=-2 ** 63, max_value=2 ** 63 - 1), st.integers(min_value=2 ** 63, max_value=2 ** 200),
    st.floats(allow_nan=True, allow_infinity=True), st.binary(max_size=16), st.text(max_size=40),
    st.sampled_from(["2026-13-45 99:99:99", "yesterday", "2026-12-07 09:01:00.000000", "9" * 5000, "\x1b]52;c;x\x07"]),
    _JSONISH)


def _corrupt(url: str, table: str, column: str, value: Any) -> bool:
    """Overwrite ``column`` of the first row of ``table`` with ``value``; False when the database refuses it."""
    from sqlalchemy import text
    from sqlalchemy.exc import SQLAlchemyError

    led = open_ledger(url)
    pg = led.backend == "postgresql"
    col = _TABLES[table].c[column]
    placeholder = ":v"
    if pg and isinstance(col.type, schema._JsonType):
        if not isinstance(value, str):
            return False
        placeholder = "CAST(:v AS jsonb)"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 2 ** 63:
        value = str(value)  # the driver binds 64 bits: a longer number goes in as its digits
    try:
        with led.engine.begin() as conn:
            conn.execute(text(f'UPDATE {table} SET "{column}" = {placeholder} '
                              f"WHERE id = (SELECT min(id) FROM {table})"), {"v": value})
        return True
    except (SQLAlchemyError, OverflowError, ValueError, TypeError):
        return False
    finally:
        led.close()


def _check_readers(url: str) -> None:
    """Every reader the recorder and the judges use answers (rows that do not decode left out)."""
    led = open_ledger(url, create=False)
    try:
        with led.reading() as r:
            r.clusters()
            r.logged_jobs("c1")
            r.last_closed("c1")
            r.first_seen("c1")
            r.last_success("c1")
            r.cursors("c1")
            rows = r.cronjob_rows(None, namespace=None, name=None)
            r.judged_many("c1", [str(x.uid) for x in rows if isinstance(x.uid, str)], T(0, 0), T(23, 0))
            r.evidence(None, namespace=None, name=None, since=None)
            for p in r.problems:
                assert "\n" not in p and p.startswith("ledger row "), p
    finally:
        led.close()


def _run(run_cli: Any, url: str, tmp: Path) -> None:
    page = tmp / "fleet.html"
    if page.exists():
        page.unlink()
    for extra in ([], ["-o", "json"], ["--html", str(page)]):
        r = run_cli("history", "--ledger", url, "--cluster", "all", "-A", "--now", z(T(9, 3)), "--since", "2m", *extra)
        assert r.exit_code in (0, 9), (r.exit_code, r.stderr[-2000:])
        assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr[-2000:]
        if r.exit_code == 9:
            errors = [ln for ln in r.stderr.splitlines() if ln.startswith("error:")]
            assert len(errors) == 1 and "ledger row " in errors[0], r.stderr
    # diff offline reads the live CronJobs from the same rows (exit 1: the un-suspend... or 0; 6 when
    # the CronJob's row was the one that did not decode)
    r = run_cli("diff", "cj", "-n", "ns", "--set", "schedule=*/2 * * * *", "--ledger", url, "--cluster", "all",
                "--now", z(T(9, 3)), "-o", "json")
    assert r.exit_code in (0, 1, 6, 9), (r.exit_code, r.stderr[-2000:])
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr[-2000:]


def _fuzz(run_cli: Any, url: str, tmp: Path, table: str, column: str, value: Any) -> None:
    _fill(url)
    assume(_corrupt(url, table, column, value))
    _check_readers(url)
    _run(run_cli, url, tmp)


@FUZZ
@given(where=st.sampled_from(_COLUMNS), value=_VALUES)
def test_any_value_in_any_column_of_a_sqlite_ledger_is_no_internal_error(run_cli: Any, tmp_path: Path,
                                                                          where: tuple[str, str], value: Any) -> None:
    _fuzz(run_cli, f"sqlite:///{tmp_path / 'fuzz.sqlite'}", tmp_path, *where, value)


@FUZZ
@given(change=_JUDGED_ROWS)
def test_a_judged_row_of_any_shape_is_no_internal_error(run_cli: Any, tmp_path: Path, change: tuple[str, Any]) -> None:
    url = f"sqlite:///{tmp_path / 'fuzz.sqlite'}"
    _fill(url)
    k, v = change
    assert _corrupt(url, "slots", "judged", _judged_with(**{k: v}))
    _check_readers(url)
    _run(run_cli, url, tmp_path)


@settings(FUZZ, max_examples=int(os.environ.get("CRONCTL_FUZZ_LEDGER_PG", "15")))
@given(where=st.sampled_from(_COLUMNS), value=_VALUES)
def test_any_value_that_fits_a_postgresql_column_is_no_internal_error(run_cli: Any, tmp_path: Path, postgres_url: str,
                                                                       where: tuple[str, str], value: Any) -> None:
    _fuzz(run_cli, postgres_url, tmp_path, *where, value)


def test_an_unknown_verdict_is_shown_as_unknown_and_the_fleet_page_is_written(run_cli: Any, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'v.sqlite'}"
    _fill(url)
    assert _corrupt(url, "slots", "judged", _judged_with(verdict="exploded"))
    r = run_cli("history", "--ledger", url, "--cluster", "all", "-A", "--now", z(T(9, 3)), "--since", "2m",
                "-o", "json")
    assert r.exit_code == 0, r.stderr
    verdicts = [s["verdict"] for h in json.loads(r.stdout)["cronjobs"] for s in h["slots"]]
    assert "unknown" in verdicts and "exploded" not in verdicts
    page = tmp_path / "fleet.html"
    r = run_cli("history", "--ledger", url, "--cluster", "all", "-A", "--now", z(T(9, 3)), "--since", "2m",
                "--html", str(page))
    assert r.exit_code == 0, r.stderr
    assert "unknown verdict" in page.read_text()


def test_a_row_that_does_not_decode_is_named_and_the_rest_is_answered(run_cli: Any, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'd.sqlite'}"
    _fill(url)
    assert _corrupt(url, "jobs", "object", _deep(2000))
    r = run_cli("history", "--ledger", url, "--cluster", "all", "-A", "--now", z(T(9, 3)), "--since", "2m",
                "-o", "json")
    assert r.exit_code == 9
    assert json.loads(r.stdout)["cronjobs"][0]["name"] == "cj"  # the answer, from the other rows
    (line,) = [ln for ln in r.stderr.splitlines() if ln.startswith("error:")]
    assert "ledger row jobs (cluster=c1 uid=" in line and "nested deeper than 100 levels" in line, line
