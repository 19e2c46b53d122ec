"""kubectl's habits (issue 34): ``-l`` sent to the server's list on every command that lists
CronJobs, ``-o wide`` and ``-o name`` where kubectl has them, tables fitted to the terminal, and one
exit code for every bad value of a flag.

The server that receives ``-l`` here is a real socket that reads the request and never answers
(tests/unit/test_no_silent_wait.py); the selector's effect on a real API server is in
tests/cluster/test_kubectl_habits_live.py.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from builders import cronjob, job, z
from harness import on_a_terminal
from test_no_silent_wait import SilentServer, kubeconfig, silent  # noqa: F401 - the fixture

from conftest import RunCli
from cronctl.cli.layout import Column, fit
from cronctl.errors import ExitCode

# -- -l/--selector goes to the server ------------------------------------------------------------------


@pytest.mark.parametrize("argv", [
    ["status"], ["status", "-A"], ["history"], ["history", "-A"], ["lint"], ["alerts"], ["bundle", "--all"],
    ["bundle", "-A"],
])
def test_selector_is_sent_with_the_list_of_cronjobs(silent: SilentServer, tmp_path: Path,  # noqa: F811
                                                    run_cli: RunCli, argv: list[str]) -> None:
    kc = kubeconfig(tmp_path, silent.port, scheme="http")
    res = run_cli(*argv, "-l", "team=billing,tier!=web", "--request-timeout", "1s", "--out", str(tmp_path / "b"),
                  env={"KUBECONFIG": str(kc)}) if argv[0] == "bundle" else \
        run_cli(*argv, "-l", "team=billing,tier!=web", "--request-timeout", "1s", env={"KUBECONFIG": str(kc)})
    assert res.exit_code == ExitCode.API_ERROR, res
    deadline = time.monotonic() + 5
    while not any("/cronjobs?" in r for r in silent.requests) and time.monotonic() < deadline:
        time.sleep(0.05)
    [listing] = [r for r in silent.requests if "/cronjobs?" in r]
    assert "labelSelector=team%3Dbilling%2Ctier%21%3Dweb" in listing, listing


@pytest.mark.parametrize("argv, words", [
    (["status", "orders", "-l", "a=b"], "a CronJob name cannot be combined with -l/--selector"),
    (["history", "orders", "-l", "a=b"], "a CronJob name cannot be combined with -l/--selector"),
    (["lint", "-f", "x.yaml", "-l", "a=b"], "not with -f/--filename"),
    (["alerts", "-f", "x.yaml", "-l", "a=b"], "not with -f/--filename"),
    (["alerts", "--source", "recorder", "-l", "a=b"], "--source recorder reads none"),
    (["history", "--from-dump", "x.yaml", "-l", "a=b"], "not with --from-dump"),
    (["status", "-l", ""], "bad --selector ''"),
])
def test_selector_where_it_cannot_apply_is_a_usage_error(run_cli: RunCli, tmp_path: Path, argv: list[str],
                                                         words: str) -> None:
    res = run_cli(*argv, env={"KUBECONFIG": str(tmp_path / "none")})
    assert res.exit_code == ExitCode.USAGE, res
    assert words in res.stderr and "Traceback" not in res.stderr, res.stderr


# -- -o name and -o wide (history on a dump; status on the real server: the cluster test) ------------------

T0 = "2026-12-01T10:00:00Z"


def _history_dump(tmp_path: Path) -> Path:
    from datetime import datetime, timezone

    def t(h: int, m: int) -> datetime:
        return datetime(2026, 12, 1, h, m, tzinfo=timezone.utc)

    cj = cronjob("*/30 * * * *", name="orders", created=t(9, 0), last=t(10, 0))
    objs: list[Any] = [cj]
    for h, m in ((9, 30), (10, 0)):
        objs.append(job(f"orders-{int(t(h, m).timestamp()) // 60}", slot=t(h, m), created=t(h, m),
                        done=t(h, m + 1), cj="orders"))
    p = tmp_path / "dump.yaml"
    p.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objs}))
    return p


def test_history_o_name_lists_the_jobs_as_kubectl_names(run_cli: RunCli, tmp_path: Path) -> None:
    dump = _history_dump(tmp_path)
    res = run_cli("history", "--from-dump", str(dump), "--now", "2026-12-01T10:10:00Z", "-o", "name")
    assert res.exit_code == 0, res
    names = res.stdout.splitlines()
    assert names and all(re.fullmatch(r"job\.batch/orders-\d+", n) for n in names), res.stdout
    assert len(names) == 2


def test_history_o_wide_keeps_each_row_on_one_line_on_a_narrow_terminal(tmp_path: Path) -> None:
    dump = _history_dump(tmp_path)
    argv = ["history", "--from-dump", str(dump), "--now", "2026-12-01T10:10:00Z"]
    _, narrow = on_a_terminal(argv, cwd=tmp_path, COLUMNS="76", NO_COLOR="1")
    _, wide = on_a_terminal([*argv, "-o", "wide"], cwd=tmp_path, COLUMNS="76", NO_COLOR="1")
    narrow_rows = [ln for ln in narrow.decode().splitlines() if ln.startswith("2026-12-01")]
    wide_rows = [ln for ln in wide.decode().splitlines() if ln.startswith("2026-12-01")]
    assert all(len(ln) <= 76 for ln in narrow_rows), narrow.decode()  # the reason went under its row
    assert "    the next slot, in 20m" in narrow.decode().splitlines(), narrow.decode()
    assert any(len(ln) > 76 and ln.endswith("the next slot, in 20m") for ln in wide_rows), wide.decode()
    assert len(wide_rows) == len(narrow_rows) == 3


# -- the table fitter ------------------------------------------------------------------------------------

COLS = [Column("NAME"), Column("SCHEDULE", folds=True), Column("ZONE", 2), Column("RUN", 3), Column("NEXT"),
        Column("GITOPS", 4)]
ROWS = [["orders", "at 02:00 every day on weekdays only (0 2 * * 1-5)", "Europe/Berlin", "-",
         "2026-12-02 02:00 CET (01:00Z)", "flux (sets suspend)"]]


def test_fit_drops_columns_by_priority_then_folds() -> None:
    full = fit(COLS, ROWS, None)
    assert full[0].split() == ["NAME", "SCHEDULE", "ZONE", "RUN", "NEXT", "GITOPS"] and len(full) == 2
    width = len(full[1]) - 10
    lines = fit(COLS, ROWS, width)
    assert lines[0].split() == ["NAME", "SCHEDULE", "ZONE", "RUN", "NEXT"], lines  # GITOPS (4) went first
    assert all(len(ln) <= width for ln in lines), lines
    lines = fit(COLS, ROWS, 60)
    assert lines[0].split() == ["NAME", "SCHEDULE", "NEXT"] and all(len(ln) <= 60 for ln in lines), lines
    assert len(lines) > 2 and "(0 2 * * 1-5)" in " ".join(" ".join(lines).split()), lines  # SCHEDULE folded
    assert fit(COLS, ROWS, 60, wide=True) == full


# -- one exit code per flag --------------------------------------------------------------------------------

@pytest.mark.parametrize("argv, words", [
    (["explain", "@daily", "-c", "-1"], "error: bad --count -1: must be 0 or more"),
    (["explain", "@daily", "-c", "10001"], "bad --count 10001: at most 10000 runs are listed"),
    (["explain", "@daily", "-c", "abc"], "abc"),
    (["run-manual", "orders", "--timeout", "0"], "bad --timeout '0': must be more than 0"),
    (["run-manual", "orders", "--timeout", "abc"], "bad --timeout 'abc': "),
    (["run-manual", "orders", "--timeout", "3651d"], "bad --timeout '3651d': at most 3650d"),
    (["wait", "orders", "--timeout", "soon"], "bad --timeout 'soon': "),
    (["history", "--since", "abc"], "bad --since 'abc': "),
    (["history", "--since", "0"], "bad --since '0': "),
    (["pause", "orders", "--reason", "x", "--until", "whenever"], "bad --until 'whenever': "),
    (["pause", "orders", "--reason", "x", "--until", "0"], "bad --until '0': "),
])
def test_every_bad_value_of_a_flag_exits_2_with_one_clean_line(run_cli: RunCli, tmp_path: Path,
                                                               argv: list[str], words: str) -> None:
    res = run_cli(*argv, env={"KUBECONFIG": str(tmp_path / "none")})
    assert res.exit_code == ExitCode.USAGE, res
    assert words in res.stderr, res.stderr
    assert "MAX_" not in res.stderr and "Traceback" not in res.stderr, res.stderr
