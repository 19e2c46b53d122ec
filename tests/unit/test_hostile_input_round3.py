"""Hostile input, third round (issue 39): deep JSON where anyone may write it, the ledger's bad
URLs and symlinks, ``--runbook-url`` format specs, every Unicode format character, one line per
value in the fleet page's titles, and the ledger's writes sharing one redactor per namespace (read
back from the SQLite file itself) with a migration that masks what older writes kept.

The ledger rows of any shape: tests/property/test_ledger_fuzz.py. The recorder with a 2,000-deep
annotation on the real control plane: tests/cluster/test_hostile_live.py."""

from __future__ import annotations

import json
import sqlite3
import time
import unicodedata
from pathlib import Path
from typing import Any

import pytest
import yaml

from builders import T, cronjob, event, scheduled, z
from cronctl import decode, model
from cronctl.errors import BadInput
from cronctl.ledger.store import open_ledger
from cronctl.redact import LAST_APPLIED, Redactor
from cronctl.textsafe import is_visible, json_visible, visible

DEEP = "[" * 2000 + "]" * 2000
DEEP_OBJ = '{"spec":' * 2000 + "1" + "}" * 2000


# --- one bounded decoder ---------------------------------------------------------------------------

@pytest.mark.parametrize("text, why", [
    (DEEP, "nested deeper than 100"), (DEEP_OBJ, "nested deeper than 100"),
    ("[" * 101 + "]" * 101, "nested deeper than 100"), ("9" * 5000, "longer than 640 digits"),
    ("{oops", "not JSON"), (b"\xff\xfe", "not UTF-8"), (12, "not JSON text"),
])
def test_the_decoder_refuses_what_is_too_deep_too_long_or_garbled_with_a_value_error(text: Any, why: str) -> None:
    with pytest.raises(ValueError) as e:
        decode.loads(text)
    assert why in str(e.value) and "\n" not in str(e.value)


def test_the_decoder_reads_what_is_within_its_bounds() -> None:
    assert decode.loads("[" * 100 + "]" * 100) is not None
    assert decode.loads('{"a": "' + "[" * 5000 + '"}') == {"a": "[" * 5000}  # brackets in a string are text
    assert decode.loads('"' + "9" * 5000 + '"') == "9" * 5000
    assert decode.excerpt("x" * 500, 10) == "xxxxxxxxxx... (490 more characters)"


def _deep_cronjob() -> dict[str, Any]:
    cj = cronjob("*/5 * * * *", name="deep")
    cj["metadata"]["annotations"] = {LAST_APPLIED: DEEP_OBJ, model.ANN_RUNS: DEEP}
    return cj


def test_a_deep_last_applied_or_runs_annotation_is_text_to_the_redactor_and_no_runs_to_the_model() -> None:
    masked = Redactor().kube_object(_deep_cronjob())
    assert masked["metadata"]["annotations"][LAST_APPLIED] == DEEP_OBJ
    assert model.read_runs(_deep_cronjob()) == []


def test_no_offline_command_fails_on_a_deep_annotation(tmp_path: Path, run_cli: Any) -> None:
    cj = _deep_cronjob()
    cj["status"] = {"lastScheduleTime": z(T(9, 0))}
    f = tmp_path / "deep.yaml"
    f.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [cj]}))
    now = z(T(9, 7))
    for cmd in (["lint", "-f", str(f), "--now", now, "--fail-on", "none"], ["explain", "-f", str(f), "--now", now],
                ["history", "--from-dump", str(f), "--now", now, "-o", "json"], ["alerts", "-f", str(f)],
                ["bundle", "--from-dump", str(f), "--now", now, "--out", str(tmp_path / "b")]):
        r = run_cli(*cmd)
        assert r.exit_code == 0, (cmd, r.exit_code, r.stderr[-500:])


# --- the ledger's URL and file ---------------------------------------------------------------------

def test_a_ledger_url_sqlalchemy_cannot_parse_is_bad_input(run_cli: Any) -> None:
    r = run_cli("history", "--ledger", "postgresql://u@127.0.0.1:notaport/db", "--cluster", "all")
    assert r.exit_code == 5, r.stderr
    assert r.stderr.startswith("error: --ledger postgresql://127.0.0.1:notaport/db: not a ledger URL")
    assert len(r.stderr.strip().splitlines()) == 1


def test_a_ledger_file_that_is_a_symlink_is_refused_by_writers_and_readers(tmp_path: Path, run_cli: Any) -> None:
    target = tmp_path / "elsewhere.sqlite"
    link = tmp_path / "ledger.sqlite"
    link.symlink_to(target)
    with pytest.raises(BadInput, match="is a symbolic link"):
        open_ledger(str(link))
    assert not target.exists()  # nothing created where the link points
    r = run_cli("history", "--ledger", str(link), "--cluster", "all")
    assert r.exit_code == 5 and "is a symbolic link" in r.stderr


# --- --runbook-url -------------------------------------------------------------------------------

@pytest.fixture()
def alerts_file(tmp_path: Path) -> Path:
    f = tmp_path / "cj.yaml"
    f.write_text(yaml.safe_dump(cronjob("*/5 * * * *", name="orders")))
    return f


@pytest.mark.parametrize("url", ["https://x/{anchor:>99999999}", "https://x/{cronjob.__class__.__mro__}",
                                 "https://x/{anchor!r}", "https://x/{namespace[0]}", "https://x/{0}", "https://x/{",
                                 "https://x/{secret}"])
def test_a_runbook_url_with_a_spec_an_attribute_or_another_field_is_refused_at_once(
        alerts_file: Path, run_cli: Any, url: str) -> None:
    start = time.monotonic()
    r = run_cli("alerts", "-f", str(alerts_file), "--runbook-url", url)
    assert r.exit_code == 2 and "bad --runbook-url" in r.stderr, r.stderr
    assert time.monotonic() - start < 5


def test_a_runbook_url_fills_its_three_fields_and_keeps_doubled_braces(alerts_file: Path, run_cli: Any) -> None:
    r = run_cli("alerts", "-f", str(alerts_file), "--runbook-url", "https://rb/{namespace}/{cronjob}#{anchor}?q={{x}}")
    assert r.exit_code == 0, r.stderr
    urls = set(_values_of(yaml.safe_load(r.stdout), "runbook_url"))
    # the rules' staleness alert names no CronJob: its fields are empty, as str.format filled them
    assert "https://rb//#cronctlalertrulesexpired?q={x}" in urls
    assert len(urls) > 2 and all(u.startswith("https://rb/ns/orders#") and u.endswith("?q={x}")
                                 for u in urls if "expired" not in u), urls


def _values_of(doc: Any, key: str) -> list[Any]:
    if isinstance(doc, dict):
        return ([doc[key]] if key in doc else []) + [v for x in doc.values() for v in _values_of(x, key)]
    if isinstance(doc, list):
        return [v for x in doc for v in _values_of(x, key)]
    return []


# --- every format character, in every output -----------------------------------------------------

def _format_characters() -> list[str]:
    return [chr(c) for c in range(0x80, 0x110000) if unicodedata.category(chr(c)) == "Cf"]


def test_every_format_character_is_escaped_on_the_terminal_and_in_json() -> None:
    chars = _format_characters()
    assert len(chars) > 150 and "\u00ad" in chars and "\U000e0041" in chars and "\ufff9" in chars
    for c in chars:
        text = f"ok{c}ok"
        assert c not in visible(text) and c not in visible(text, multiline=True), hex(ord(c))
        assert not is_visible(text)
        out = json_visible(json.dumps(text, ensure_ascii=False))
        assert c not in out and json.loads(out) == text, hex(ord(c))
    assert visible("日本語 é ß") == "日本語 é ß"  # letters stay letters


def test_a_fleet_title_keeps_only_its_own_line_breaks() -> None:
    from cronctl.bundle.fleet import slot_text

    slot: Any = {"slot": z(T(9, 0)), "slot_local": z(T(9, 0)), "verdict": "missed", "jobs": ["a\nforged: ran"],
                 "reason": "lost\nforged line\u2028also\U000e0041"}
    text = slot_text(slot)
    assert text.count("\n") == 1 and "\u2028" not in text and "\U000e0041" not in text
    assert "lost\\nforged line" in text


# --- the ledger's writes share one redactor per namespace ---------------------------------------

SECRET = "Zq8hT2mWx7Lp4Rb"


def _raw(path: Path) -> str:
    """Everything the SQLite file holds, read with the sqlite3 module (not through cronctl)."""
    con = sqlite3.connect(path)
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return "\n".join(repr(row) for t in tables for row in con.execute(f"SELECT * FROM {t}"))
    finally:
        con.close()


def test_an_echo_of_a_cronjobs_secret_is_masked_before_it_is_stored(tmp_path: Path) -> None:
    cj = cronjob("*/1 * * * *")
    cj["spec"]["jobTemplate"]["spec"] = {"template": {"spec": {"containers": [{
        "name": "main", "image": "x", "env": [{"name": "DB_PASSWORD", "value": SECRET}]}]}}}
    j = scheduled(T(9, 1))
    ev = event("BackOff", f"login failed for password {SECRET}", T(9, 1, 30), kind="Job", name=j["metadata"]["name"])
    ev["metadata"]["uid"] = "ev-1"
    path = tmp_path / "l.sqlite"
    led = open_ledger(str(path))
    try:
        with led.writing() as w:  # as the recorder: one transaction after the other
            w.cronjob("c1", cj, T(9, 0))
        with led.writing() as w:
            w.event("c1", ev)
        with led.writing() as w:
            w.job("c1", j, T(9, 2))
            w.log("c1", j, "p", "main", f"connecting with {SECRET}\n", False, T(9, 2))
    finally:
        led.close()
    raw = _raw(path)
    assert SECRET not in raw
    assert raw.count("<redacted:") >= 3  # the env value, the Event, the log tail


def test_the_migration_masks_what_an_older_cronctl_kept(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    led = open_ledger(str(path))
    led.close()
    cj = cronjob("*/1 * * * *")
    cj["spec"]["jobTemplate"]["spec"] = {"template": {"metadata": {"labels": {"example.com/api-key": SECRET}},
                                                       "spec": {"containers": [{"name": "main", "image": "x"}]}}}
    ev = event("BackOff", f"rejected key {SECRET}", T(9, 1, 30))
    con = sqlite3.connect(path)  # rows as an older cronctl kept them: the label and its echo raw
    con.execute("UPDATE alembic_version SET version_num = '0004'")
    con.execute("DROP TABLE claims")  # (migration 0006's: a ledger at 0004 has none)
    con.execute("INSERT INTO cronjobs (cluster, uid, namespace, name, first_seen, last_seen, object) VALUES "
                "('c1', 'cj-uid', 'ns', 'cj', '2026-12-02 09:00:00.000000', '2026-12-02 09:00:00.000000', ?)",
                (json.dumps(cj),))
    con.execute("INSERT INTO events (cluster, uid, namespace, object) VALUES ('c1', 'e1', 'ns', ?)", (json.dumps(ev),))
    con.execute("INSERT INTO events (cluster, uid, namespace, object) VALUES ('c1', 'e2', 'ns', ?)", (DEEP,))
    con.commit()
    con.close()
    assert SECRET in _raw(path)
    led = open_ledger(str(path))  # a writer migrates to the head
    led.close()
    raw = _raw(path)
    from cronctl.ledger.store import HEAD

    assert SECRET not in raw and f"'{HEAD}'" in raw
    assert DEEP in raw  # a row that does not decode is left alone


def test_the_writes_redactors_forget_strings_but_not_secrets() -> None:
    from cronctl.ledger.store import Redactors

    reds = Redactors()
    red = reds.of("c1", "ns")
    red.learn({"metadata": {"name": "x"}, "kind": "Pod", "spec": {"containers": [
        {"name": "m", "env": [{"name": "API_TOKEN", "value": SECRET}]}]}})
    for _ in range(Redactors.MEMO_ROWS):
        assert reds.of("c1", "ns") is red
    assert SECRET not in red.text(f"echo {SECRET}")
    assert reds.of("c1", "other") is not red

