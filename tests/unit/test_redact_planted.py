"""No offline command prints a secret planted in a CronJob dump (issue 26): every printer goes
through the same redactor. The values are planted where the hostile-input round found leaks: an
``sh -c`` script quoted by lint (PGPASSWORD=, mysql -p, https://user:pw@), a run record's reason
printed by history, env values, probe headers, secret-named annotations, a kubelet Event quoting a
hook's command line; each command runs in every output format it has."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from planted_secrets import NOW, PLANTED, leaks_in, planted_dump


def _commands(path: Path, out_dir: Path) -> list[list[str]]:
    f = str(path)
    cmds = [["lint", "-f", f, "--fail-on", "none", "--now", NOW, *o] for o in
            ([], ["-o", "json"], ["-o", "yaml"], ["-o", "sarif"])]
    cmds += [["history", "--from-dump", f, "--now", NOW, *o] for o in ([], ["-o", "json"], ["-o", "yaml"])]
    cmds += [["explain", "-f", f, "--now", NOW, *o] for o in ([], ["-o", "json"])]
    cmds += [["alerts", "-f", f]]
    cmds += [["bundle", "--from-dump", f, "--now", NOW, "--out", str(out_dir / f"b{i}"), *o]
             for i, o in enumerate(([], ["-o", "json"], ["--redact", "strict"]))]
    return cmds


def test_no_offline_command_prints_a_planted_secret(tmp_path: Path, run_cli: Any) -> None:
    path = planted_dump(tmp_path)
    leaks: list[str] = []
    for args in _commands(path, tmp_path):
        res = run_cli(*args)
        assert res.exit_code in (0, 8), (args, res.stderr)
        leaks += leaks_in(" ".join(args[:1] + args[4:]), res.stdout + res.stderr)
    files = [f for f in sorted(tmp_path.glob("b*/**/*")) if f.is_file()]
    assert len(files) >= 15  # three bundles were written
    for f in files:
        leaks += leaks_in(str(f.relative_to(tmp_path)), f.read_text(errors="replace"))
    assert not leaks


def test_the_planted_values_are_really_in_the_dump_and_lint_still_finds_the_script(
        tmp_path: Path, run_cli: Any) -> None:
    path = planted_dump(tmp_path)
    raw = path.read_text()
    assert all(v in raw for v in PLANTED.values())
    res = run_cli("lint", "-f", str(path), "--fail-on", "none", "--now", NOW, "-o", "json")
    doc = json.loads(res.stdout)
    assert doc["checked"] == 1 and doc["findings"]


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_history_masks_a_run_records_reason_and_keeps_the_rest(tmp_path: Path, run_cli: Any, fmt: str) -> None:
    path = planted_dump(tmp_path)
    res = run_cli("history", "--from-dump", str(path), "--now", NOW, "-o", fmt)
    assert res.exit_code == 0, res.stderr
    assert PLANTED["reason"] not in res.stdout
    assert "rerun after rotating: password=<redacted:" in res.stdout
