"""The recorder's rows read for secrets once (issue 27's 90-day history): ``Writer.close_slot``
names the redaction rules (``cronctl.redact.rules_id``) that found nothing in a judged row on its
own; a reader running the same rules hands those rows to ``Redactor.data_in_place`` as settled and
does not read them again, unless a secret found elsewhere in the output may stand in them.

Tested: settled rows mask exactly as rows read again (a property), a secret found elsewhere still
masks a settled row, and end to end through ``history --ledger`` on SQLite and PostgreSQL, where a
row's echo of another row's secret is masked as before."""

from __future__ import annotations

import copy
import json
from datetime import timedelta
from typing import Any

from builders import UID, T, cronjob, scheduled, z
from cronctl.history import Options, slot_history
from cronctl.ledger.store import open_ledger
from cronctl.model import when
from cronctl.redact import Redactor, rules_id
from test_redact_two_pass import _shapes

SECRET = "Hunter-22x-secret"


def test_a_value_the_rules_find_nothing_in_is_what_masking_leaves_unchanged() -> None:
    from hypothesis import given, settings

    checker = Redactor()  # shared, as a recorder's transaction shares it: its cache must not matter

    @settings(max_examples=500, deadline=None)
    @given(_shapes())
    def check(value: Any) -> None:
        if checker.finds_nothing(value):
            red = Redactor()
            assert red.data(copy.deepcopy(value)) == value and red.count == 0 and not red._known
        else:  # not needlessly cautious on plain data: masking changes it or learns from it
            red = Redactor()
            assert red.data(copy.deepcopy(value)) != value or red._known or _holds_object(value)

    check()


def _holds_object(value: Any) -> bool:
    if isinstance(value, dict):
        return "metadata" in value or any(_holds_object(v) for v in value.values())
    return isinstance(value, list) and any(_holds_object(v) for v in value)


def test_settled_rows_mask_as_if_they_were_read_again() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=400, deadline=None)
    @given(st.lists(_shapes(), max_size=4), _shapes())
    def check(rows: list[Any], fresh: Any) -> None:
        kept = [{"row": r} for r in rows]
        doc = {"fresh": fresh, "slots": kept}
        want = Redactor().data_in_place(copy.deepcopy(doc))
        mine = copy.deepcopy(doc)

        settled = [r for r in mine["slots"] if Redactor().finds_nothing(r)]  # as close_slot decides it
        got = Redactor().data_in_place(mine, settled=settled)
        assert got == want

    check()


def test_a_secret_found_elsewhere_is_masked_in_a_settled_row_too() -> None:
    row = {"reason": f"retried with {SECRET}"}  # a bare value: no rule finds it on its own
    assert Redactor().data(row) == row
    doc = {"notes": [f"password={SECRET}"], "slots": [row]}
    Redactor().data_in_place(doc, settled=[row])
    assert SECRET not in json.dumps(doc) and doc["slots"][0]["reason"].startswith("retried with <redacted:")


def _close(url: str, rows: list[dict[str, Any]], cluster: str = "c1") -> None:
    led = open_ledger(url)
    try:
        with led.writing() as w:
            for r in rows:
                t = when(r["slot"])
                assert t is not None
                w.close_slot(cluster, UID, "ns", "cj", t, r, t + timedelta(seconds=50))
    finally:
        led.close()


def test_the_recorder_keeps_rows_masked_and_history_reads_them_settled_or_not(
        run_cli: Any, ledger_url: str) -> None:
    from sqlalchemy import select, update

    from cronctl.ledger import schema

    cj = cronjob(ok_limit=1)
    jobs = [scheduled(T(9, m)) for m in range(0, 6)]
    led = open_ledger(ledger_url)
    try:
        with led.writing() as w:
            w.cronjob("c1", cj, T(8, 0))
            for j in jobs:
                w.job("c1", j, T(9, 0))
    finally:
        led.close()
    rows = [r for r in slot_history(cj, jobs, [], Options(now=T(9, 5, 30), since=T(8, 59, 59)))["slots"]
            if r["verdict"] == "ran"][:5]  # 09:00 to 09:04 closed and kept; 09:05 judged by the reader
    assert len(rows) == 5
    rows[1]["reason"] = f"operator note: password={SECRET}"
    rows[2]["reason"] = f"same again: {SECRET}"
    _close(ledger_url, rows)

    led = open_ledger(ledger_url)
    try:
        with led.reading() as r:
            kept = r.conn.execute(select(schema.slots.c.judged, schema.slots.c.judged_rules)
                                  .order_by(schema.slots.c.slot)).all()
            settled: list[Any] = []
            got = r.judged_many("c1", [UID], T(8, 0), T(9, 6), settled)
    finally:
        led.close()
    # kept as judged; the row with a password= is not settled, its echo (no rule finds it alone) is
    rules = {k.judged["slot"][11:16]: k.judged_rules for k in kept if k.judged}
    assert rules == {"09:00": rules_id(), "09:01": None, "09:02": rules_id(), "09:03": rules_id(), "09:04": rules_id()}
    assert len(settled) == 4 and all(any(s is v for v in got[UID].values()) for s in settled)

    def history() -> str:
        res = run_cli("history", "cj", "-n", "ns", "--ledger", ledger_url, "--cluster", "c1", "--now",
                      z(T(9, 6, 30)), "--since", "7m", "-o", "json")
        assert res.exit_code == 0, res.stderr
        h = json.loads(res.stdout)["cronjobs"][0]
        assert any("as cronctl record judged them" in n for n in h["notes"])  # the kept rows are read
        return res.stdout

    out = history()  # 09:01's password= is learned, so 09:02's echo is masked though it was settled
    assert SECRET not in out and out.count("<redacted:1>") == 2
    # a row kept before the rules were named (or by other rules) is not settled: masked on reading
    led = open_ledger(ledger_url)
    try:
        with led.writing() as w:
            s = schema.slots
            w.conn.execute(update(s).where(s.c.slot == T(9, 3)).values(
                judged_rules=None, judged={**rows[3], "reason": f"password={SECRET}"}))
            w.conn.execute(update(s).where(s.c.slot == T(9, 1)).values(judged={**rows[1], "reason": ""},
                                                                       judged_rules=rules_id()))
    finally:
        led.close()
    out = history()  # 09:03 holds the password= now: learned there, masked in 09:02 too
    assert SECRET not in out and out.count("<redacted:1>") == 2


def test_a_kept_row_reads_back_with_its_keys_in_the_judges_order(ledger_url: str) -> None:
    """JSONB sorts a row's keys (by length); the reader puts the judge's order back, so a PostgreSQL
    ledger prints what SQLite and the cluster print, key for key."""
    cj = cronjob(ok_limit=1)
    jobs = [scheduled(T(9, m)) for m in range(0, 3)]
    rows = [r for r in slot_history(cj, jobs, [], Options(now=T(9, 5, 30), since=T(8, 59, 59)))["slots"]
            if r["job_details"]][:2]
    assert len(rows) == 2
    _close(ledger_url, rows)
    led = open_ledger(ledger_url)
    try:
        with led.reading() as r:
            got = r.judged_many("c1", [UID], T(8, 0), T(9, 6))[UID]
    finally:
        led.close()
    back = [got[t] for t in sorted(got)]
    assert back == rows  # the same data
    assert [list(b) for b in back] == [list(w) for w in rows]  # and the same order
    assert [list(d) for b in back for d in b["job_details"]] == [list(d) for w in rows for d in w["job_details"]]
