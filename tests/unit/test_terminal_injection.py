"""Hostile text replayed against the real `cronctl` entry point on a pseudo-terminal.

Issue 12: escape sequences in manifest fields, annotations, Event text and dump names reached the
terminal raw (the clipboard and the window title were set, the screen cleared, lines erased), and
rich markup in data was interpreted or raised MarkupError. Each test runs `cronctl` as a
subprocess whose stdout and stderr are a pty (so rich behaves as on an operator's terminal, with
colour) and checks the bytes the terminal receives: the only escape sequences left are rich's own
styling (SGR), and each attack is shown as visible text (``\\x1b]52;c;...``, ``\\u202e``).
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

import yaml
from builders import manifest
from terminal_support import PAYLOAD, assert_nothing_acts, assert_shown, cronctl_in_pty

GOLDEN_DUMP = Path(__file__).parent.parent / "golden" / "bundle" / "incident-004.dump.yaml"
NOW = "2026-12-02T11:35:00Z"


# a CronJob with the payload in an annotation and in its image
hostile_cronjob = functools.partial(
    manifest, "victim", "*/10 * * * *", "Europe/Berlin", namespace="ops", annotations={"cronctl.dev/note": PAYLOAD},
    pod={"restartPolicy": "Never", "containers": [{"name": "c", "image": "registry.example/app:1" + PAYLOAD}]})


def hostile_dump() -> dict[str, Any]:
    """the incident dump (docs/BACKGROUND.md §4.4) with the payload in Event reasons and messages and in a manual
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
    d = hostile_dump()
    for item in d["items"]:  # a hand-edited dump: a Job name the API server would refuse, drawn in the SVG
        if item["kind"] == "Job" and item["metadata"]["name"] == "mp-orders-sync-fix":
            item["metadata"]["name"] += PAYLOAD
            # the failure reason and message, and a pod's image, digest and termination message (issue 10)
            item["status"]["conditions"] = [{"type": "Failed", "status": "True", "reason": "Backoff|" + PAYLOAD,
                                             "message": "<script>alert(2)</script> | " + PAYLOAD,
                                             "lastTransitionTime": item["status"]["completionTime"]}]
        if item["kind"] == "Pod":
            cs = item["status"]["containerStatuses"][0]
            cs.update(image="registry.example/app:1|" + PAYLOAD, imageID="sha256:`" + PAYLOAD)
            for st in cs["state"].values():
                st["message"] = "<script>alert(3)</script> | " + PAYLOAD
    f = tmp_path / "dump.yaml"
    f.write_text(yaml.safe_dump(d))
    code, screen = cronctl_in_pty(["bundle", "--from-dump", str(f), "--now", NOW, "--out", str(tmp_path / "b")],
                                  tmp_path)
    text = assert_nothing_acts(screen)
    assert code == 0, text
    md = (tmp_path / "b" / "REPORT.md").read_text()
    # no raw HTML survives for a CommonMark viewer, no control character, no markup link
    assert "<script>" not in md and "<img" not in md and "&lt;script&gt;" in md
    assert "\x1b" not in md and "\x07" not in md and "\u202e" not in md and "\x9b" not in md
    # the markup link stays text (brackets escaped), and its URL is no autolink either (':' escaped)
    assert "\\[link=https\\://evil.example\\]" in md
    # each row of the events table still has its 6 cells: '|' in a reason or message is escaped
    head = "| last seen | type | reason | object | count | message |"
    rows = md.split(head, 1)[1].strip().splitlines()[1:]
    rows = rows[:rows.index("")] if "" in rows else rows
    assert rows and all(len(re.findall(r"(?<!\\)\|", r)) == 7 for r in rows), rows[:3]
    # the same for the pods (image, digest, termination message) and the Jobs (failure reason, message)
    for head, cells in (("| pod | Job | phase | container | state | reason | exit code | restarts (last exit) | image "
                         "| image ID |", 10),
                        ("| Job | origin | scheduled for | created | started | completed | outcome | failure | "
                         "duration | pods |", 10)):
        rows = md.split(head, 1)[1].strip().splitlines()[1:]
        rows = rows[:rows.index("")] if "" in rows else rows
        assert rows and all(len(re.findall(r"(?<!\\)\|", r)) == cells + 1 for r in rows), rows[:3]
    assert "Backoff\\|" in md and "&lt;script&gt;alert(3)" in md and "registry.example/app:1\\|" in md
    html = (tmp_path / "b" / "report.html").read_text()
    assert "\x1b" not in html and "\u202e" not in html and "<script>alert" not in html
    assert "&lt;script&gt;alert(2)" in html and "&lt;script&gt;alert(3)" in html
    assert "\\x1b]52;c;" in html
    svg = html[html.index("<svg"):html.index("</svg>")]
    assert "mp-orders-sync-fix\\x1b]52;c;" in svg and "\x07" not in svg and "\x9b" not in svg


PROGRESS = """
import sys, time
from cronctl.cli.env import Environment
from cronctl.cli.runtime import RichReporter
from cronctl.procedure.base import Progress

payload = sys.argv[1] if len(sys.argv) > 1 else {payload!r}
r = RichReporter(Environment().err)
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


def test_machine_output_on_a_terminal_is_the_same_data_with_nothing_that_acts(tmp_path: Path) -> None:
    cj = hostile_cronjob()
    cj["metadata"]["name"] = "victim" + PAYLOAD + "\u2028\x85"
    f = tmp_path / "cj.json"
    f.write_text(json.dumps(cj))
    for args, load in [(["explain", "-f", str(f), "--count", "1", "--from", NOW, "-o", "json"], json.loads),
                       (["explain", "-f", str(f), "--count", "1", "--from", NOW, "-o", "yaml"], yaml.safe_load),
                       (["lint", "-f", str(f), "--fail-on", "none", "-o", "yaml"], yaml.safe_load)]:
        code, screen = cronctl_in_pty(args, tmp_path)
        text = assert_nothing_acts(screen)
        assert code == 0, text
        assert "\u2028" not in text and "\x85" not in text
        data = load(text)
        assert any(PAYLOAD in v for v in _strings(data)), args  # the data is all there, unchanged


def _strings(data: Any) -> list[str]:
    if isinstance(data, str):
        return [data]
    if isinstance(data, dict):
        return [s for k, v in data.items() for s in _strings(k) + _strings(v)]
    if isinstance(data, list):
        return [s for v in data for s in _strings(v)]
    return []
