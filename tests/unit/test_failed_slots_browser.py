"""A failing CronJob is red where a person looks (issue 34 items 1 and 14): the fleet page and the
bundle's report.html as headless Chromium (scripts/chromium) lays them out at 1,280 and 1,920 px.

The pages run no script (the fleet page's policy forbids it), so the test reads the browser's
layout through a copy of each page with one probe script added at the end of the body (and the
policy meta removed so that it may run): it writes the computed colours and boxes into an attribute,
and ``--dump-dom`` prints it. The probe changes no style; the pixels of a screenshot of the page
itself, policy and all, show the same red (the stylesheet is let through). What is checked:

- the failing CronJob's cells and summary, and its report's failed slots, are computed red;
  the healthy CronJob's are not;
- every namespace's time axis starts at the same x; the summary column ends inside the window and
  no summary is cut; the first CronJob row is above the fold (the legend is one or two lines).
"""

from __future__ import annotations

import html as htmllib
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from builders import T, cronjob, scheduled, z
from test_fleet_browser import png_colours, rgb
from test_report_browser import FLAGS
from tool_support import chromium

NOW = T(10, 5, 30)
SLOTS = [T(10, m) for m in range(5)]
WIDTHS = (1280, 1920)
LAYOUT_WIDTHS = (1280, 1400, 1920)  # the issue saw the summary cut at 1,400 px
FOLD = 720  # a laptop's visible height: the data must start above it
FAILED = "#991b1b"  # cronctl.bundle.render.FLEET_FAILED
REPORT_FAILED = "#dc2626"  # report.html's .o-failed

PROBE = """<script>
(function () {
  function box(e) { var r = e.getBoundingClientRect(); return {left: r.left, right: r.right, top: r.top,
                                                              height: r.height}; }
  function rows(sel) { return Array.prototype.map.call(document.querySelectorAll(sel), function (e) {
    var s = getComputedStyle(e);
    return {text: e.textContent, cls: e.className, color: s.color, bg: s.backgroundColor, box: box(e),
            cut: e.scrollWidth > e.clientWidth}; }); }
  var out = {
    width: document.documentElement.clientWidth,
    axes: rows("div.t.a"), summaries: rows("tr[id] td:last-child"), cells: rows("tr[id] div.t i"), firstRow: rows("tr[id] th"),
    legend: rows("ul.legend, table.legend"),
    failedOutcome: rows("td.o-failed"), failedRows: rows("tr.failed td"), strong: rows("strong.o-failed")
  };
  document.body.setAttribute("data-probe", JSON.stringify(out));
})();
</script>"""


def two_namespaces_dump(tmp: Path) -> Path:
    """``shop/failing-sync`` fails every slot; ``shop/fine`` and ``ops/a-much-longer-cronjob-name`` run fine
    (two namespaces: two tables, whose axes must line up)."""
    made = T(9, 58)  # just before the first slot: the report's table starts with the failed slots
    objs: list[dict[str, Any]] = [cronjob(name="failing-sync", namespace="shop", uid="u-f", last=SLOTS[-1],
                                          created=made)]
    objs += [scheduled(t, outcome="Failed", why="BackoffLimitExceeded", cj="failing-sync", cj_uid="u-f",
                       namespace="shop") for t in SLOTS]
    objs.append(cronjob(name="fine", namespace="shop", uid="u-ok", last=SLOTS[-1], created=made))
    objs += [scheduled(t, cj="fine", cj_uid="u-ok", namespace="shop") for t in SLOTS]
    long = "a-much-longer-cronjob-name-than-the-others-have"
    objs.append(cronjob(name=long, namespace="ops", uid="u-l", last=SLOTS[-1], created=made))
    objs += [scheduled(t, cj=long, cj_uid="u-l", namespace="ops") for t in SLOTS]
    p = tmp / "dump.yaml"
    p.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objs}))
    return p


def cli(*args: str) -> None:
    from cronctl.cli import main

    assert main(list(args)) == 0


def probe(page: Path, tmp: Path, width: int) -> dict[str, Any]:
    """The probe's findings on ``page`` laid out in a ``width`` x 900 window."""
    text = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page.read_text(), count=1)
    probed = tmp / f"probe-{width}-{page.name}"
    probed.write_text(text.replace("</body>", PROBE + "</body>", 1))
    r = subprocess.run([chromium(), *FLAGS, f"--user-data-dir={tmp / 'chromium-profile'}", f"--window-size={width},900",
                        "--dump-dom", probed.as_uri()], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    m = re.search(r'data-probe="([^"]*)"', r.stdout)
    assert m, r.stdout[:2000]
    return dict(json.loads(htmllib.unescape(m.group(1))))


def screenshot(page: Path, tmp: Path, width: int, height: int = 900) -> dict[tuple[int, int, int], int]:
    """The colours of a screenshot of ``page`` itself (its policy in place); the PNG stays in ``tmp``."""
    png = tmp / f"{page.stem}-{width}.png"
    r = subprocess.run([chromium(), *FLAGS, f"--user-data-dir={tmp / 'chromium-profile'}",
                        f"--window-size={width},{height}", "--hide-scrollbars", f"--screenshot={png}", page.as_uri()],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and png.is_file(), r.stderr[-2000:]
    return png_colours(png.read_bytes())


def css_rgb(colour: str) -> str:
    r, g, b = rgb(colour)
    return f"rgb({r}, {g}, {b})"


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("failed-pages")
    dump = two_namespaces_dump(tmp)
    fleet = tmp / "fleet.html"
    cli("history", "-A", "--from-dump", str(dump), "--now", z(NOW), "--html", str(fleet))
    cli("bundle", "failing-sync", "-n", "shop", "--from-dump", str(dump), "--now", z(NOW), "--out", str(tmp / "b"))
    return fleet, tmp / "b" / "report.html"


@pytest.mark.parametrize("width", WIDTHS)
def test_the_fleet_page_draws_the_failing_cronjob_red_and_the_healthy_one_not(
        pages: tuple[Path, Path], tmp_path: Path, width: int) -> None:
    got = probe(pages[0], tmp_path, width)
    red = css_rgb(FAILED)
    sums = {s["text"].split(" of ")[0]: s for s in got["summaries"]}
    assert sums["failed 5"]["color"] == red, sums
    assert [s["color"] for t, s in sums.items() if t != "failed 5"] and all(
        s["color"] != red for t, s in sums.items() if t != "failed 5")
    failing = [c for c in got["cells"] if "vf" in c["cls"].split()]
    assert failing and all(c["bg"] == red for c in failing), failing
    assert all(c["bg"] != red for c in got["cells"] if "vf" not in c["cls"].split())
    # the page itself (its policy in place): the failure colour is on the screen
    assert screenshot(pages[0], tmp_path, width).get(rgb(FAILED), 0) > 50


@pytest.mark.parametrize("width", LAYOUT_WIDTHS)
def test_the_fleet_page_lines_up_its_axes_keeps_its_summaries_whole_and_its_data_above_the_fold(
        pages: tuple[Path, Path], tmp_path: Path, width: int) -> None:
    got = probe(pages[0], tmp_path, width)
    lefts = {round(a["box"]["left"]) for a in got["axes"]}
    assert len(got["axes"]) == 2 and len(lefts) == 1, got["axes"]  # two namespaces, one x
    for s in got["summaries"]:
        assert not s["cut"] and s["box"]["right"] <= got["width"], s
    # the legend is a few lines, not a table of 15 rows (about 300 px) before the data
    assert len(got["legend"]) == 1 and got["legend"][0]["box"]["height"] <= 3 * 20, got["legend"]
    assert got["firstRow"][0]["box"]["top"] < FOLD, got["firstRow"][0]


@pytest.mark.parametrize("width", WIDTHS)
def test_report_html_draws_the_failed_slots_red(pages: tuple[Path, Path], tmp_path: Path, width: int) -> None:
    got = probe(pages[1], tmp_path, width)
    red = css_rgb(REPORT_FAILED)
    # each failed slot's outcome and verdict cells ("ran once" of a run that failed is not green)
    cells = got["failedOutcome"]
    assert len(cells) == 10 and all(c["color"] == red for c in cells), cells
    assert [c["text"] for c in cells if c["cls"] == "o-failed"] == ["Failed: BackoffLimitExceeded"] * 5
    assert [c["text"] for c in cells if c["cls"] == "v-ran o-failed"] == ["ran once"] * 5
    assert got["strong"] and got["strong"][0]["color"] == red and "Failed runs: 5" in got["strong"][0]["text"]
    assert {c["bg"] for c in got["failedRows"]} == {css_rgb("#fef2f2")}
    assert screenshot(pages[1], tmp_path, width, 2400).get(rgb(REPORT_FAILED), 0) > 50
