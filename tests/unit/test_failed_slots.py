"""Failure is its own fact (issue 34 item 1): a slot whose Job failed says so beside its verdict,
in every reader of the slots, and a CronJob that fails every slot is never called healthy.

Through the CLI on a dump: ``history`` (-o json, the text table and its colours on a terminal,
``--html``), and the incident bundle (bundle.json's counts, its summary line, report.html; its
``lost_history`` in tests/unit/test_bundle_golden.py). The same facts on
the real control plane: tests/cluster/test_failed_slots_live.py; in a browser:
tests/unit/test_failed_slots_browser.py."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from builders import T, cronjob, scheduled, z
from terminal_support import cronctl_in_pty

NOW = T(10, 5, 30)
SLOTS = [T(10, m) for m in range(5)]  # 10:00 .. 10:04, each ran and failed


def failing_dump(tmp: Path, *, with_healthy: bool = True) -> str:
    """``failing-sync`` fails every slot (BackoffLimitExceeded, the last DeadlineExceeded); ``fine`` ran
    every slot and succeeded."""
    objs: list[dict[str, Any]] = [cronjob(name="failing-sync", uid="uid-failing", last=SLOTS[-1])]
    for t in SLOTS:
        why = "DeadlineExceeded" if t == SLOTS[-1] else "BackoffLimitExceeded"
        objs.append(scheduled(t, took=20, outcome="Failed", why=why, cj="failing-sync", cj_uid="uid-failing"))
    if with_healthy:
        objs.append(cronjob(name="fine", uid="uid-fine", last=SLOTS[-1]))
        objs += [scheduled(t, took=20, cj="fine", cj_uid="uid-fine") for t in SLOTS]
    p = tmp / "dump.yaml"
    p.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objs}))
    return str(p)


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    from cronctl.cli import main

    rc = main(list(args))
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def test_history_json_gives_each_failed_slot_its_outcome_and_reason_beside_the_verdict(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dump = failing_dump(tmp_path)
    rc, out, err = cli(capsys, "history", "--from-dump", dump, "--now", z(NOW), "-o", "json")
    assert rc == 0, err
    hs = {h["name"]: h for h in json.loads(out)["cronjobs"]}
    failing = {r["slot"]: r for r in hs["failing-sync"]["slots"]}
    for t in SLOTS:
        r = failing[z(t)]
        assert (r["verdict"], r["outcome"]) == ("ran", "failed"), r  # the Job was made on time, and failed
    assert failing[z(SLOTS[0])]["failure_reason"] == "BackoffLimitExceeded"
    assert failing[z(SLOTS[-1])]["failure_reason"] == "DeadlineExceeded"
    assert failing[z(T(10, 6))]["outcome"] == "none"  # the next slot: no Job yet (10:05 is due too)
    assert hs["failing-sync"]["outcome_counts"] == {"succeeded": 0, "failed": 5, "running": 0, "unknown": 0,
                                                   "none": 2}  # 10:05 (due) and 10:06
    fine = hs["fine"]
    assert {r["outcome"] for r in fine["slots"] if r["verdict"] == "ran"} == {"succeeded"}
    assert all(r["failure_reason"] is None for r in fine["slots"])
    assert fine["outcome_counts"]["failed"] == 0


def test_history_text_has_an_outcome_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dump = failing_dump(tmp_path)
    rc, out, err = cli(capsys, "history", "failing-sync", "--from-dump", dump, "--now", z(NOW))
    assert rc == 0, err
    lines = out.splitlines()
    head = next(t for t in lines if t.startswith("slot"))
    assert head.split()[:5] == ["slot", "utc", "verdict", "outcome", "job(s)"]
    row = next(t for t in lines if "10:02Z" in t)
    assert row.split()[3:5] == ["ran", "failed"], row
    assert re.search(r"10:06Z\s+due\s+-\s", out)  # no Job: no outcome
    assert "ran 5, due 2; failed 5" in out  # the counts say how many runs failed
    rc, out, err = cli(capsys, "history", "fine", "--from-dump", dump, "--now", z(NOW))
    assert next(t for t in out.splitlines() if "10:02Z" in t).split()[3:5] == ["ran", "succeeded"]
    assert "failed" not in out


def _sgr_before(screen: str, word: str, anchor: str) -> str:
    """The SGR parameters that colour ``word`` on the line holding ``anchor``."""
    line = next(x for x in screen.splitlines() if anchor in x)
    m = re.search(r"\x1b\[([0-9;]*)m" + re.escape(word) + r"\x1b\[0?m", line)
    assert m, (word, line)
    return m.group(1)


def test_on_a_terminal_a_failed_run_is_red_and_a_successful_one_green(tmp_path: Path) -> None:
    # the issue: "ran ... Failed: BackoffLimitExceeded" was drawn in the green of a slot whose work was done
    dump = failing_dump(tmp_path)
    rc, screen = cronctl_in_pty(["history", "--from-dump", dump, "--now", z(NOW)], tmp_path)
    assert rc == 0, screen[-2000:]
    text = screen.decode()
    failing, fine = text.split("ns/fine", 1)  # ns/failing-sync is printed first
    red, green = "31", "32"
    assert red in _sgr_before(failing, "ran", "10:02Z").split(";")
    assert red in _sgr_before(failing, "failed", "10:02Z").split(";")
    assert green not in _sgr_before(failing, "ran", "10:02Z").split(";")
    assert _sgr_before(fine, "ran", "10:02Z").split(";")[-1] == green
    assert _sgr_before(fine, "succeeded", "10:02Z").split(";")[-1] == green


def test_the_fleet_page_counts_and_colours_a_cronjob_that_fails_every_slot(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dump = failing_dump(tmp_path)
    page = tmp_path / "fleet.html"
    rc, out, err = cli(capsys, "history", "-A", "--from-dump", dump, "--now", z(NOW), "--html", str(page))
    assert rc == 0, err
    assert "failed 5 in 1" in out  # the line naming the page
    html = page.read_text()
    rows = {m.group(1): m.group(2) for m in re.finditer(
        r'<tr id="r\d+"><th title="ns/([a-z-]+) .*?<td class="sum ([a-z]+)">', html, re.S)}
    assert rows == {"failing-sync": "failed", "fine": "ok"}
    summary = re.search(r'<td class="sum failed">([^<]*)</td>', html)
    assert summary and summary.group(1) == "failed 5 of 7 slots", summary
    failing_row = re.search(r'<tr id="r\d+"><th title="ns/failing-sync.*?</tr>', html, re.S)
    assert failing_row
    cells = re.findall(r'<i class="([a-z0-9]+)[^"]*"(?: title="([^"]*)")?', failing_row.group(0))
    # every slot that ran is in the failure colour; the hover says failed, with the reason
    assert [c for c, _t in cells] == ["e", "vf", "v12"], cells
    assert cells[1][1].startswith("2026-12-02 10:00 to 10:05 UTC: 5 slots, failed 5; ran 5")
    assert "10:00 UTC: ran, failed: BackoffLimitExceeded (Job failing-sync-" in cells[1][1]
    # the dump's group is headed by its file, not as a cluster named "this cluster"
    assert "Cluster this cluster" not in html and f"<h2>The dump {dump}</h2>" in html
    assert "Lost, failed or doubled slots (1 CronJob(s))" in html


def test_the_bundle_counts_the_failed_slots_and_draws_them_red(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dump = failing_dump(tmp_path, with_healthy=False)
    out_dir = tmp_path / "b"
    rc, out, err = cli(capsys, "bundle", "failing-sync", "-n", "ns", "--from-dump", dump, "--now", z(NOW),
                       "--out", str(out_dir))
    assert rc == 0, err
    assert re.search(r"failing-sync: 5 Job\(s\); scheduled times: ran 5, [^;]*; failed 5; overlaps 0", out), out
    doc = json.loads((out_dir / "bundle.json").read_text())
    cj = doc["cronjobs"][0]
    assert cj["failed_history"] == [z(t) for t in SLOTS]
    assert cj["summary"]["failed"] == 5
    occ = {o["expected"]: o for o in cj["occurrences"]}
    assert occ[z(SLOTS[0])]["slot_outcome"] == "failed"
    assert occ[z(SLOTS[0])]["failure_reason"] == "BackoffLimitExceeded"
    # report.html's timeline: the ticks of the failed slots in the failure colour, not the green of "ran"
    report = (out_dir / "report.html").read_text()
    ticks = re.findall(r'<line class="tick ran" [^>]*stroke="(#[0-9a-f]{6})"', report)
    assert ticks == ["#dc2626"] * 5, ticks
    assert "Failed runs: 5" in report and "**Failed runs:** 5" in (out_dir / "REPORT.md").read_text()
