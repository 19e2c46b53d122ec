"""Hostile text replayed against the real `cronctl` entry point on a pseudo-terminal.

Issue 12: escape sequences in manifest fields, annotations, Event text and dump names reached the
terminal raw (the clipboard and the window title were set, the screen cleared, lines erased), and
rich markup in data was interpreted or raised MarkupError. Each test runs `cronctl` as a
subprocess whose stdout and stderr are a pty (so rich behaves as on an operator's terminal, with
colour) and checks the bytes the terminal receives: the only escape sequences left are rich's own
styling (SGR), and each attack is shown as visible text (``\\x1b]52;c;...``, ``\\u202e``).
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

GOLDEN_DUMP = Path(__file__).parent.parent / "golden" / "bundle" / "incident-004.dump.yaml"
NOW = "2026-12-02T11:35:00Z"

# The attacks, as a hostile user of the cluster would write them.
OSC52 = "\x1b]52;c;a3ViZWN0bCBkZWxldGUgbnMgcHJvZA==\x07"  # clipboard := "kubectl delete ns prod"
TITLE = "\x1b]0;prod is fine\x07"  # window title
CLEAR = "\x1b[2J\x1b[H"  # clear the screen, cursor home
ERASE = "\r\x1b[2K"  # erase the line just printed
BIDI = "\u202eevil\u202c"  # right-to-left override
C1_CSI = "\x9b2J"  # C1 CSI: clear the screen on terminals that honour C1
MARKUP = "[link=https://evil.example]click[/link] [reverse]rev[/reverse] [/x]"
PAYLOAD = OSC52 + TITLE + CLEAR + ERASE + BIDI + C1_CSI + " " + MARKUP

# what the operator must see instead (each control written as its escape)
SHOWN = ["\\x1b]52;c;a3ViZWN0bCBkZWxldGUgbnMgcHJvZA==\\x07", "\\x1b]0;prod is fine\\x07", "\\x1b[2J",
         "\\x1b[2K", "\\u202eevil\\u202c", "\\x9b2J", MARKUP]

# rich's own styling: SGR only (``ESC [ params m``)
SGR = re.compile(rb"\x1b\[[0-9;]*m")
# a live status line also moves the cursor: hide/show it, erase the line, go up (rich's Live)
LIVE = re.compile(rb"\x1b\[(?:\?25[lh]|2K|[0-9]*[AGK])|\r")


def cronctl_in_pty(args: list[str], tmp: Path, *, script: str | None = None, timeout: float = 60) -> tuple[int, bytes]:
    """Run the installed `cronctl` (or ``python -c script``) with stdout+stderr on a pty: (exit code, bytes)."""
    exe = shutil.which("cronctl", path=str(Path(sys.executable).parent)) or "cronctl"
    cmd = [sys.executable, "-c", script] if script is not None else [exe, *args]
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "CI", "CRONCTL_DEBUG")}
    env.update(TERM="xterm-256color", COLUMNS="400", LINES="50", KUBECONFIG=str(tmp / "no-kubeconfig"))
    master, slave = os.openpty()
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, env=env, cwd=tmp)
    finally:
        os.close(slave)
    chunks: list[bytes] = []
    try:
        while True:
            ready, _, _ = select.select([master], [], [], timeout)
            if not ready:
                proc.kill()
                raise AssertionError(f"cronctl {args} still running after {timeout}s")
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed its end
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(master)
    return proc.wait(timeout=timeout), b"".join(chunks)


def assert_nothing_acts(screen: bytes, *, live: bool = False) -> str:
    """No escape, control or bidi character from the data reaches the terminal; returns the text."""
    rest = SGR.sub(b"", screen)
    if live:
        rest = LIVE.sub(b"", rest)
    assert b"\x1b" not in rest, _around(rest, b"\x1b")
    assert b"\x07" not in rest, _around(rest, b"\x07")
    text = rest.decode("utf-8")
    for bad in ("\u202e", "\u202c", "\x9b", "\x08"):
        assert bad not in text, (bad, text)
    assert "Traceback" not in text and "MarkupError" not in text, text
    return text.replace("\r\n", "\n")


def _around(data: bytes, needle: bytes) -> str:
    i = data.find(needle)
    return f"raw {needle!r} reaches the terminal: ...{data[max(0, i - 80):i + 80]!r}..."


def assert_shown(text: str, shown: list[str] = SHOWN) -> None:
    flat = re.sub(r"\s*\n\s*", "", text)  # rich folds long cells: join the lines back
    for s in shown:
        assert re.sub(r"\s", "", s) in re.sub(r"\s", "", flat), f"{s!r} is not shown as text in:\n{text}"


def hostile_cronjob(**extra_annotations: str) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1", "kind": "CronJob",
        "metadata": {"name": "victim", "namespace": "ops",
                     "annotations": {"cronctl.dev/note": PAYLOAD, **extra_annotations}},
        "spec": {"schedule": "*/10 * * * *", "timeZone": "Europe/Berlin",
                 "jobTemplate": {"spec": {"template": {"spec": {
                     "restartPolicy": "Never",
                     "containers": [{"name": "c", "image": "registry.example/app:1" + PAYLOAD}]}}}}},
    }


def hostile_dump() -> dict[str, Any]:
    """seed 004's incident dump with the payload in Event reasons and messages and in a manual
    Job's cronctl record (operator, reason)."""
    d = yaml.safe_load(GOLDEN_DUMP.read_text())
    for item in d["items"]:
        if item["kind"] == "Event":
            item["message"] = f"{item['message']} | <script>alert(1)</script> {PAYLOAD}"
            item["reason"] = f"{item['reason']}|x"
        if item["kind"] == "Job" and item["metadata"]["name"] == "mp-orders-sync-fix":
            item["metadata"]["annotations"].update({"cronctl.dev/operator": "mallory" + PAYLOAD,
                                                    "cronctl.dev/reason": "<img src=x onerror=alert(1)>" + PAYLOAD})
    return d


def test_lint_shows_a_hostile_image_and_annotation_as_text(tmp_path: Path) -> None:
    f = tmp_path / "cj.json"
    f.write_text(json.dumps(hostile_cronjob()))
    code, screen = cronctl_in_pty(["lint", "-f", str(f), "--fail-on", "none"], tmp_path)
    text = assert_nothing_acts(screen)
    assert code == 0, text
    assert "CJ023" in text  # the image-not-pinned finding quotes the image
    assert_shown(text)


def test_explain_file_shows_hostile_fields_as_text(tmp_path: Path) -> None:
    cj = hostile_cronjob()
    cj["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["image"] = "busybox"
    cj["metadata"]["name"] = "victim" + PAYLOAD  # a hand-written file is not checked by the API server
    f = tmp_path / "cj.yaml"
    f.write_text(yaml.safe_dump(cj))
    code, screen = cronctl_in_pty(["explain", "-f", str(f), "--count", "1", "--from", NOW], tmp_path)
    text = assert_nothing_acts(screen)
    assert code == 0, text
    assert_shown(text)


def test_history_from_a_hostile_dump_shows_the_record_as_text(tmp_path: Path) -> None:
    f = tmp_path / "dump.json"
    f.write_text(json.dumps(hostile_dump()))
    code, screen = cronctl_in_pty(["history", "mp-orders-sync", "-n", "integrations", "--from-dump", str(f),
                                   "--now", NOW], tmp_path)
    text = assert_nothing_acts(screen)
    assert code == 0, text
    assert "manual run by mallory\\x1b]52;c;" in re.sub(r"\s*\n\s*", "", text)
    assert_shown(text)


def test_bundle_from_a_hostile_dump_keeps_the_terminal_and_the_reports_inert(tmp_path: Path) -> None:
    f = tmp_path / "dump.yaml"
    f.write_text(yaml.safe_dump(hostile_dump()))
    code, screen = cronctl_in_pty(["bundle", "--from-dump", str(f), "--now", NOW, "--out", str(tmp_path / "b")],
                                  tmp_path)
    text = assert_nothing_acts(screen)
    assert code == 0, text
    md = (tmp_path / "b" / "REPORT.md").read_text()
    # no raw HTML survives for a CommonMark viewer, no control character, no markup link
    assert "<script>" not in md and "<img" not in md and "&lt;script&gt;" in md
    assert "\x1b" not in md and "\x07" not in md and "\u202e" not in md and "\x9b" not in md
    assert "\\[link=https://evil.example\\]" in md
    # each row of the events table still has its 6 cells: '|' in a reason or message is escaped
    head = "| last seen | type | reason | object | count | message |"
    rows = md.split(head, 1)[1].strip().splitlines()[1:]
    rows = rows[:rows.index("")] if "" in rows else rows
    assert rows and all(len(re.findall(r"(?<!\\)\|", r)) == 7 for r in rows), rows[:3]
    html = (tmp_path / "b" / "report.html").read_text()
    assert "\x1b" not in html and "\u202e" not in html and "<script>alert" not in html
    assert "\\x1b]52;c;" in html


PROGRESS = """
import sys, time
from cronctl.cli.runtime import RichReporter
from cronctl.procedure.base import Progress

payload = sys.argv[1] if len(sys.argv) > 1 else {payload!r}
r = RichReporter()
assert r.live, "stderr is a terminal here"
r.step("suspended; reason: " + payload)
r.warn("record by " + payload)
r.show("plan", [("reason", payload), ("operator", "[/x]")])
for i in range(3):
    r.progress(Progress(elapsed=i, pods={{"Running": 1}}, last_log=payload))
    time.sleep(0.3)
r.progress_done()
print("done")
"""


def test_the_live_progress_and_the_plan_show_a_hostile_log_line_and_reason_as_text(tmp_path: Path) -> None:
    code, screen = cronctl_in_pty([], tmp_path, script=PROGRESS.format(payload=PAYLOAD))
    text = assert_nothing_acts(screen, live=True)
    assert code == 0 and "done" in text, text
    assert_shown(text)
