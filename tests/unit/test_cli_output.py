"""``-o json`` and ``-o yaml`` are written by one function (cronctl.cli.common.emit) for every
command: indented JSON in UTF-8 with control and bidi characters as escapes, YAML in block style
with the document's key order, never folded; and ``run_cli`` captures a run in-process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from conftest import RunCli
from cronctl.cli.common import emit, json_text, yaml_text

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
    emit(doc, "json")
    out = capsys.readouterr().out
    assert out == json_text(doc) and out.endswith("}\n") and "caf\u00e9" in out and "\\u001b" in out
    assert json.loads(out) == doc
    emit(doc, "yaml")
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
