"""``-o json`` and ``-o yaml`` are written by one function (cronctl.cli.common.emit) for every
command: indented JSON in UTF-8 with control and bidi characters as escapes, YAML in block style
with the document's key order, never folded; and ``run_cli`` captures a run in-process."""

from __future__ import annotations

import json
from datetime import timezone
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import RunCli
from cronctl.cli.common import emit, json_text, json_visible, yaml_text
from cronctl.cli.env import Environment

MANIFEST = """\
apiVersion: batch/v1
kind: CronJob
metadata:
  name: caf\u00e9-sync
  namespace: shop
  annotations:
    note: "r\u00e9sum\u00e9 \\u001b[31mred"
spec:
  schedule: "*/1 * * * *"
  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}
"""
NOW = "2026-12-02T12:00:00Z"


def test_emit_writes_json_and_yaml_the_one_way(capsys: pytest.CaptureFixture[str]) -> None:
    doc = {"b": "caf\u00e9", "a": "esc \x1b[31m", "long": "word " * 60}
    console = Environment().out
    emit(console, doc, "json")
    out = capsys.readouterr().out
    assert out == json_text(doc) and out.endswith("}\n") and "caf\u00e9" in out and "\\u001b" in out
    assert json.loads(out) == doc
    emit(console, doc, "yaml")
    out = capsys.readouterr().out
    assert out == yaml_text(doc, sort_keys=False, width=1000)
    assert out.splitlines()[0].startswith("b: caf\u00e9") and len(out.splitlines()) == 3  # not folded
    assert yaml.safe_load(out) == doc and "\x1b" not in out


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_lint_and_explain_write_the_same_form(tmp_path: Path, run_cli: RunCli, fmt: str) -> None:
    f = tmp_path / "cj.yaml"
    f.write_text(MANIFEST)
    for args in (["lint", "-f", str(f), "--now", NOW, "--fail-on", "none"], ["explain", "-f", str(f), "--now", NOW]):
        r = run_cli(*args, "-o", fmt)
        assert r.exit_code == 0, r.stderr
        doc = json.loads(r.stdout) if fmt == "json" else yaml.safe_load(r.stdout)
        again = json_text(doc) if fmt == "json" else yaml_text(doc, sort_keys=False, width=1000)
        assert r.stdout == again, args
        assert "\x1b" not in r.stdout


def test_run_cli_separates_the_streams_and_captures_help(run_cli: RunCli) -> None:
    r = run_cli("explain", "0 0 32 * *")
    assert (r.exit_code, r.stdout) == (5, "")
    assert r.stderr == "error: bad day-of-month '32' in '0 0 32 * *': above maximum (31)\n"
    h = run_cli("explain", "--help")
    assert h.exit_code == 0 and h.stdout.startswith("Usage: cronctl explain") and h.stderr == ""
    u = run_cli("explain", "--no-such-flag")
    assert u.exit_code == 2 and u.stdout == "" and "No such option" in u.stderr


def test_run_cli_feeds_standard_input(run_cli: RunCli) -> None:
    r = run_cli("lint", "-f", "-", "--now", NOW, "-o", "json", "--fail-on", "none", stdin=MANIFEST)
    assert r.exit_code == 0 and json.loads(r.stdout)["checked"] == 1


# -o json is written by orjson (fast for a 90-day history); its text must be the standard
# library's json.dumps(indent=2, ensure_ascii=False, default=str) that it replaced, byte for byte,
# for every shape the outputs hold (floats under 1e-4 excepted: orjson writes 1e-5 for 1e-05)
_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: f == 0 or abs(f) >= 1e-4),
    st.text(), st.datetimes(timezones=st.just(timezone.utc)))
_json_like = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.tuples(inner, inner),
    st.dictionaries(st.one_of(st.text(), st.integers(-5, 5)), inner, max_size=4)), max_leaves=30)


@settings(max_examples=400, deadline=None)
@given(_json_like)
def test_json_text_is_the_standard_librarys_indented_json(data: object) -> None:
    want = json.dumps(data, indent=2, ensure_ascii=False, default=str)
    assert json_text(data) == json_visible(want) + "\n"


def test_json_text_writes_what_orjson_refuses_as_the_standard_library_does() -> None:
    for data in ({"n": 2**70}, ["lone \udc80 surrogate"], {"x": -(2**64)}):
        assert json_text(data) == json_visible(json.dumps(data, indent=2, ensure_ascii=False, default=str)) + "\n"


def test_the_cycle_collector_is_paused_for_a_large_output_and_restored_after() -> None:
    import gc

    from cronctl.cli.common import cycle_collection_paused

    assert gc.isenabled()
    with cycle_collection_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with cycle_collection_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # it was off before: it stays off
    finally:
        gc.enable()
    with pytest.raises(RuntimeError), cycle_collection_paused():
        raise RuntimeError("the command failed")
    assert gc.isenabled()
