"""The fleet health page (`cronctl history --html`) as a browser builds and draws it: headless
Chromium (scripts/chromium, as test_report_browser.py uses it for report.html) prints the DOM it
made (``--dump-dom``) and takes a screenshot, and the tests read those, not the file.

What only a browser can tell: that the HTML parser builds one table row per CronJob with one element
per cell and its hover title (a stray ``</td>`` in a name would move or drop cells), that the
Content-Security-Policy lets the page's own stylesheet through (the colours are on the screen) and
stops a script even if one got into the page, and that nothing from the cluster runs."""

from __future__ import annotations

import re
import struct
import subprocess
import zlib
from pathlib import Path

from cronctl.bundle.fleet import fleet_page
from cronctl.bundle.render import COLOURS, render_fleet_html
from cronctl.textsafe import visible

from test_fleet_page import ATTACKS, NOW, PWN, Page, every, history, hostile_page, rows_of
from test_report_browser import FLAGS, dom_of
from tool_support import chromium


def screenshot(html: str, tmp: Path, name: str) -> dict[tuple[int, int, int], int]:
    """The colours of a 1400x1000 screenshot of ``html``: pixel counts by (r, g, b)."""
    page = tmp / f"{name}.html"
    page.write_text(html)
    png = tmp / f"{name}.png"
    r = subprocess.run([chromium(), *FLAGS, f"--user-data-dir={tmp / 'chromium-profile'}", "--window-size=1400,1000",
                        "--hide-scrollbars", f"--screenshot={png}", page.as_uri()],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and png.is_file(), r.stderr[-2000:]
    return png_colours(png.read_bytes())


def png_colours(data: bytes) -> dict[tuple[int, int, int], int]:
    """Decode an 8-bit RGB or RGBA PNG (what Chromium writes) and count its colours."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, w = 8, b"", 0
    depth = colour = 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, _h, depth, colour, _c, _f, interlace = struct.unpack(">IIBBBBB", chunk)
            assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + n
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    counts: dict[tuple[int, int, int], int] = {}
    for y in range(len(raw) // (stride + 1)):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        for i in range(0, stride, bpp):
            px = (line[i], line[i + 1], line[i + 2])
            counts[px] = counts.get(px, 0) + 1
        prev = line
    return counts


def rgb(colour: str) -> tuple[int, int, int]:
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


def mixed_page() -> str:
    odd = {every(60)[3][0]: "missed", every(60)[9][0]: "duplicate", every(60)[20][0]: "ran-late"}
    return render_fleet_html(fleet_page([history("a", every(60, odd=odd)), history("b", every(10))], now=NOW))


def test_the_browser_builds_one_row_per_cronjob_with_its_cells_and_titles_and_runs_nothing(tmp_path: Path) -> None:
    page, html = hostile_page()
    (tmp_path / "fleet.html").write_text(html)
    dom_html = dom_of(tmp_path / "fleet.html", tmp_path)
    dom = Page(dom_html)
    # the attack's text is on the page; an attribute it set would show as data-pwned="N"
    assert 'data-pwned="' not in dom_html and 'id="forged"' not in dom_html and "data-pwned','1'" in dom_html
    for tag in ("img", "script", "svg"):
        assert dom.tags.get(tag, 0) == 0, tag
    assert dom.tags.get("h1") == 1 and dom.tags.get("table") == 2  # one per namespace (the legend is a list)
    rows = rows_of(page)
    assert len(dom.rows) == len(rows) == 2
    for model, built in zip(rows, dom.rows):
        # one element per cell, in order, with the model's hover title (escapes made visible)
        assert [t for _c, t in built] == [visible(c["title"], multiline=True) for c in model["cells"]]
    text = "".join(dom.text)
    assert ATTACKS[0] in text and ATTACKS[3] in text and "Cluster ctx" + ATTACKS[4] in text


def test_the_screenshot_has_the_verdict_colours_so_the_policy_lets_the_stylesheet_through(tmp_path: Path) -> None:
    html = mixed_page()
    seen = screenshot(html, tmp_path, "page")
    for v in ("ran", "missed", "duplicate", "ran-late"):
        assert seen.get(rgb(COLOURS[v]), 0) > 50, (v, sorted(seen.items(), key=lambda kv: -kv[1])[:8])
    # the control: a stylesheet whose hash the policy does not name is not applied, so no colour at all
    broken = re.sub(r"sha256-[A-Za-z0-9+/]+=*", "sha256-" + "A" * 43 + "=", html, count=1)
    assert broken != html
    seen = screenshot(broken, tmp_path, "blocked")
    assert all(seen.get(rgb(COLOURS[v]), 0) == 0 for v in ("ran", "missed", "duplicate", "ran-late"))


def test_a_script_that_got_into_the_page_would_not_run(tmp_path: Path) -> None:
    planted = (f"<body><script>{PWN.format(n=7)}</script>"
               f"<img src=\"data:,x\" onerror=\"{PWN.format(n=8)}\"><p onclick=\"x\">")
    html = mixed_page().replace("<body>", planted, 1)
    (tmp_path / "with-policy.html").write_text(html)
    assert 'data-pwned="' not in dom_of(tmp_path / "with-policy.html", tmp_path)
    # the control: without the policy the same page runs it (so the check above can fail)
    bare = re.sub(r"<meta http-equiv=\"Content-Security-Policy\"[^>]*>", "", html, count=1)
    assert bare != html
    (tmp_path / "without.html").write_text(bare)
    assert re.search(r'data-pwned="[78]"', dom_of(tmp_path / "without.html", tmp_path))
