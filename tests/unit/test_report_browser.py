"""report.html as a browser builds it: headless Chromium loads the bundle's report and prints the
DOM it made (``--dump-dom``), and the tests read that DOM, not the file.

What only a browser can tell: that the HTML parser builds one table row per Job and per Event (a
stray ``</td>`` or ``<table>`` in data would move or drop rows), that the timeline is an SVG
element with its hover titles, and that nothing from the cluster becomes markup or runs (an
``<img onerror>``, a ``<script>``, an ``<svg onload>`` in a Job name, an Event message or a run
record would run in the reader's browser). Chromium comes from ``scripts/chromium`` (Debian's
chromium-headless-shell, installed by the test command) or ``$CRONCTL_CHROMIUM``.
"""

from __future__ import annotations

import json
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness import ROOT
from tool_support import chromium

GOLDEN = ROOT / "tests" / "golden" / "bundle"
CASES = sorted(p.name.removesuffix(".dump.yaml") for p in GOLDEN.glob("*.dump.yaml"))
# what a browser would do with it if it became markup: mark the page (checked below)
PWN = "document.documentElement.setAttribute('data-pwned','{n}')"
ATTACKS = [f"<img src=x onerror=\"{PWN.format(n=1)}\">", f"<script>{PWN.format(n=2)}</script>",
           f"<svg onload=\"{PWN.format(n=3)}\"></svg>", "</td></tr></table><h1 id=forged>forged</h1><table><tr><td>",
           "]]><!--", "&lt;b&gt;"]
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-extensions"]


def dom_of(report: Path, tmp: Path) -> str:
    """The DOM Chromium built from ``report`` (scripts allowed, so anything that ran would show)."""
    r = subprocess.run([chromium(), *FLAGS, f"--user-data-dir={tmp / 'chromium-profile'}", "--dump-dom",
                        report.as_uri()], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "<html" in r.stdout, r.stderr[-2000:]
    return r.stdout


class Dom(HTMLParser):
    """The dumped DOM's elements: tag counts, attributes seen, the text under each h3, and the rows
    of the table that follows each h3 (cells as text)."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: dict[str, int] = {}
        self.attrs: set[str] = set()
        self.ids: set[str] = set()
        self.text: list[str] = []
        self.sections: dict[str, list[list[str]]] = {}  # h3 text -> rows (td cells) of its first table
        self.svg_titles: list[str] = []
        self._h3: str | None = None
        self._in_h3 = False
        self._table_of: str | None = None
        self._depth = 0
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._in_svg = 0
        self._title: list[str] | None = None
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] = self.tags.get(tag, 0) + 1
        self.attrs |= {k for k, _ in attrs}
        self.ids |= {v for k, v in attrs if k == "id" and v}
        if tag == "h3":
            self._in_h3, self._h3 = True, ""
        elif tag == "table":
            self._depth += 1
            if self._depth == 1 and self._h3 is not None and self._h3 not in self.sections:
                self._table_of = self._h3
                self.sections[self._h3] = []
        elif tag == "tr" and self._table_of is not None and self._depth == 1:
            self._row = []
        elif tag == "td" and self._row is not None:
            self._cell = []
        elif tag == "svg":
            self._in_svg += 1
        elif tag == "title" and self._in_svg:
            self._title = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "h3":
            self._in_h3 = False
        elif tag == "table":
            self._depth -= 1
            if self._depth == 0:
                self._table_of = None
        elif tag == "tr" and self._row is not None:
            if self._row and self._table_of is not None:
                self.sections[self._table_of].append(self._row)
            self._row = None
        elif tag == "td" and self._cell is not None and self._row is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "svg":
            self._in_svg -= 1
        elif tag == "title" and self._title is not None:
            self.svg_titles.append("".join(self._title))
            self._title = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._in_h3 and self._h3 is not None:
            self._h3 += data
        if self._cell is not None:
            self._cell.append(data)
        if self._title is not None:
            self._title.append(data)

    def section(self, prefix: str) -> tuple[str, list[list[str]]]:
        heads = [h for h in self.sections if h.startswith(prefix)]
        assert len(heads) == 1, (prefix, list(self.sections))
        return heads[0], self.sections[heads[0]]


def bundle(run_cli: Any, dump: Path, now: str, out: Path) -> tuple[dict[str, Any], Path]:
    r = run_cli("bundle", "--from-dump", str(dump), "--now", now, "--out", str(out))
    assert r.exit_code == 0, r.stderr
    return json.loads((out / "bundle.json").read_text()), out / "report.html"


@pytest.mark.parametrize("case", CASES)
def test_the_browser_builds_one_row_per_job_and_event_and_the_timeline(case: str, run_cli: Any, tmp_path: Path) -> None:
    data, report = bundle(run_cli, GOLDEN / f"{case}.dump.yaml", (GOLDEN / f"{case}.now").read_text().strip(),
                          tmp_path / "b")
    dom = Dom(dom_of(report, tmp_path))
    assert dom.tags.get("svg", 0) == len(data["cronjobs"])  # one timeline per CronJob, an SVG element
    text = "".join(dom.text)
    for cj in data["cronjobs"]:
        assert f"CronJob {cj['namespace']}/{cj['name']}" in text
    if len(data["cronjobs"]) != 1:
        return  # the per-section row counts below read the one CronJob's tables
    cj = data["cronjobs"][0]
    head, rows = dom.section("Jobs (")
    assert head == f"Jobs ({len(cj['jobs'])})" and [r[0] for r in rows] == [j["name"] for j in cj["jobs"]]
    head, rows = dom.section("Events (")
    assert head == f"Events ({len(cj['events'])})" and len(rows) == len(cj["events"])
    # every scheduled time in the window has its hover title on the timeline, in the order of the slots
    slot_titles = [t for t in dom.svg_titles if re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d ", t)]
    assert len(slot_titles) == len(cj["occurrences"]) > 0, (slot_titles, len(cj["occurrences"]))
    verdicts = [o.get("verdict") for o in cj["occurrences"]]
    assert all(v and f" {v}" in t for v, t in zip(verdicts, slot_titles)), list(zip(verdicts, slot_titles))[:3]


def test_hostile_text_in_the_cluster_stays_text_in_the_browser(run_cli: Any, tmp_path: Path) -> None:
    case = "incident-004"
    now = (GOLDEN / f"{case}.now").read_text().strip()
    d = yaml.safe_load((GOLDEN / f"{case}.dump.yaml").read_text())
    attack = " ".join(ATTACKS)
    for item in d["items"]:
        if item["kind"] == "Event":
            item["message"] = f"{item['message']} {attack}"
        elif item["kind"] == "Job" and item["metadata"]["name"] == "mp-orders-sync-fix":
            item["metadata"]["name"] += ATTACKS[0]  # a hand-edited dump: a name the API server would refuse
            item["metadata"]["annotations"].update({"cronctl.dev/operator": "mallory" + ATTACKS[1],
                                                    "cronctl.dev/reason": attack})
        elif item["kind"] == "Pod":
            cs = item["status"]["containerStatuses"][0]
            cs["image"] = "registry.example/app:1" + ATTACKS[2]
    dump = tmp_path / "hostile.yaml"
    dump.write_text(yaml.safe_dump(d))
    plain, plain_report = bundle(run_cli, GOLDEN / f"{case}.dump.yaml", now, tmp_path / "plain")
    data, report = bundle(run_cli, dump, now, tmp_path / "hostile")
    base, dom = Dom(dom_of(plain_report, tmp_path)), Dom(dom_of(report, tmp_path))
    # nothing ran and nothing became an element: same elements as the plain report, no marks
    assert "data-pwned" not in dom.attrs and "forged" not in dom.ids and "onerror" not in dom.attrs
    assert "onload" not in dom.attrs
    for tag in ("img", "script", "h1", "b"):
        assert dom.tags.get(tag, 0) == base.tags.get(tag, 0), tag
    # the tables kept their rows; the one table more lists the renamed Job's old name, which the
    # events still name, as gone
    extra = set(dom.sections) - set(base.sections)
    assert extra == {"Jobs that are gone (1)"}, extra
    assert dom.tags.get("svg") == base.tags.get("svg") and dom.tags.get("table") == base.tags.get("table", 0) + 1
    assert {h: len(r) for h, r in dom.sections.items() if h in base.sections} == \
        {h: len(r) for h, r in base.sections.items()}
    # and the attack is shown as the text it is
    text = "".join(dom.text)
    assert ATTACKS[0] in text and ATTACKS[1] in text and ATTACKS[3] in text
    names = [j["name"] for j in data["cronjobs"][0]["jobs"]]
    assert "mp-orders-sync-fix" + ATTACKS[0] in names
    assert any(t.startswith("mp-orders-sync-fix" + ATTACKS[0]) or ("mp-orders-sync-fix" + ATTACKS[0]) in t
               for t in dom.svg_titles), dom.svg_titles[:5]
    assert plain["cronjobs"][0]["name"] == data["cronjobs"][0]["name"]
