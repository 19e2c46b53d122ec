#!/usr/bin/env python3
"""Benchmark the fleet health page (`cronctl history -A --since 7d --html FILE`) for 1,000 CronJobs
over 7 days, without a cluster: the histories are generated in the shape ``cronctl history -o json``
gives (cronctl/data/history.schema.json; checked against it unless --no-schema), then the page is
built (:func:`cronctl.bundle.fleet.fleet_page`) and rendered (:func:`cronctl.bundle.render.render_fleet_html`)
as the command does.

The fleet (seeded, the same every run): schedules ``*/10`` (1,008 slots a week), ``*/5`` (2,016),
``*/15``, ``*/30``, hourly, daily and a few ``* * * * *`` (10,080), some in Europe/Berlin; two clusters
(the second's rows carry ``ledger``, as history --ledger gives), 40 namespaces. Most CronJobs ran
every slot (a few late); about one in ten has scattered lost or late slots, one in thirty a
suspended stretch of a day, one in fifty duplicates. ``--worst`` instead gives every CronJob an
alternating verdict in every column: the most cells the page can hold.

Prints: slots, build and render time, file size, element count (parsed), and with Chromium
(scripts/chromium, or $CRONCTL_CHROMIUM) the load as a browser does it, through the DevTools
protocol: navigation to the load event, the DOMContentLoaded and load times the page itself records,
the elements the browser built, the time of a forced full layout and of a screenshot of the
viewport. Numbers only; nothing is asserted. Run it once; the machine is shared:

    nice python bench/bench_fleet_page.py            # add --worst for the upper bound
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

UTC = timezone.utc
NOW = datetime(2026, 12, 2, 11, 35, tzinfo=UTC)
#: (schedule, minutes between slots, weight)
SCHEDULES = [("*/10 * * * *", 10, 30), ("*/5 * * * *", 5, 10), ("*/15 * * * *", 15, 15), ("*/30 * * * *", 30, 10),
             ("0 * * * *", 60, 25), ("30 2 * * *", 1440, 8), ("* * * * *", 1, 2)]
REASONS = {
    "ran": "",
    "ran-late": "created {d}s after the slot: the controller was down or behind, or the CronJob was suspended and "
                "un-suspended (no event or write says which)",
    "missed": "no Job and no event for this slot although status.lastScheduleTime passed it; the controller was "
              "down, or a deleted Job's events expired (the event TTL is 1 h by default)",
    "missed-suspended": "the CronJob was suspended (spec.suspend written by kubectl-patch at 2026-11-28T09:12:40Z, "
                        "cronctl pause by alice: 'db migration')",
    "duplicate": "2 Jobs stand for the slot: the controller's {job} and the slot-named manual run {job}-again "
                 "(kubectl create job --from)",
    "due": "the controller starts it at its next sync (within about 10 s)",
}


def _z(t: datetime) -> str:
    return t.astimezone(UTC).replace(tzinfo=None).isoformat() + "Z"


def _slot(t: datetime, zone: str, name: str, verdict: str, rng: random.Random) -> dict[str, Any]:
    job = f"{name}-{int(t.timestamp()) // 60}"
    jobs = [] if verdict.startswith("missed") or verdict == "due" else [job]
    if verdict == "duplicate":
        jobs.append(job + "-again")
    delay = rng.randint(1, 5) if verdict != "ran-late" else rng.randint(30, 900)
    local = t.astimezone(ZoneInfo(zone)).isoformat(timespec="seconds")
    return {
        "slot": _z(t), "slot_local": local[:-6] + "Z" if local.endswith("+00:00") else local, "verdict": verdict,
        "jobs": jobs,
        "job_details": [{"name": j, "origin": "scheduled", "stands_by": "scheduled", "exists": True,
                         "created": _z(t + timedelta(seconds=delay)), "started": _z(t + timedelta(seconds=delay + 1)),
                         "completed": _z(t + timedelta(seconds=delay + 40)), "outcome": "Complete", "operator": None,
                         "failure_reason": None, "known_from": [], "removed_by": None, "removed": None,
                         "source": "cluster"} for j in jobs],
        "start_delay_seconds": delay + 1 if jobs else None, "duration_seconds": 39 if jobs else None,
        "reason": REASONS.get(verdict, "").format(d=delay, job=job),
        "manual_beside": [], "manual_beside_total": 0,
    }


def synthetic(n: int = 1000, *, days: int = 7, seed: int = 28, worst: bool = False) -> list[dict[str, Any]]:
    """``n`` histories over ``days`` up to :data:`NOW`, as history -A --since {days}d gives them."""
    from cronctl.history import VERDICTS

    rng = random.Random(seed)
    since = NOW - timedelta(days=days)
    weights = [w for _s, _m, w in SCHEDULES]
    out = []
    for i in range(n):
        expr, minutes, _w = rng.choices(SCHEDULES, weights)[0]
        zone = "Europe/Berlin" if i % 7 == 0 else "UTC"
        name = f"job-{i:04d}-{rng.choice(['sync', 'report', 'cleanup', 'export', 'billing'])}"
        step = timedelta(minutes=minutes)
        first = since + (step - timedelta(seconds=int(since.timestamp()) % int(step.total_seconds()))) % step
        if minutes == 1440:
            first = since.replace(hour=2, minute=30, second=0) + (timedelta(days=1) if since.hour >= 3 else timedelta())
        kind = rng.random()
        suspended_from = NOW - timedelta(days=rng.randint(2, 6)) if 0.1 <= kind < 0.133 else None
        slots = []
        t = first
        k = 0
        while t <= NOW:
            if worst:
                v = "ran" if (int(t.timestamp()) // 3600) % 2 == 0 else "ran-late"
            elif t > NOW - timedelta(seconds=30):
                v = "due"
            elif suspended_from and suspended_from <= t < suspended_from + timedelta(days=1):
                v = "missed-suspended"
            elif kind < 0.1:
                r = rng.random()
                v = "missed" if r < 0.03 else "ran-late" if r < 0.08 else "ran"
            elif 0.133 <= kind < 0.153:
                v = "duplicate" if rng.random() < 0.02 else "ran"
            else:
                v = "ran-late" if rng.random() < 0.002 else "ran"
            slots.append(_slot(t, zone, name, v, rng))
            t += step
            k += 1
        counts = {v: 0 for v in VERDICTS}
        for s in slots:
            counts[s["verdict"]] += 1
        h: dict[str, Any] = {
            "namespace": f"team-{i % 40:02d}", "name": name, "schedule": expr,
            "time_zone": None if zone == "UTC" else zone, "zone": zone, "concurrency_policy": "Forbid",
            "starting_deadline_seconds": None, "suspended": False, "last_schedule_time": slots[-1]["slot"] if slots else None,
            "error": None,
            "window": {"since": _z(since), "until": _z(NOW), "limited_by": "--since", "evidence_from": _z(since)},
            "slots": slots, "manual_runs": [], "counts": counts, "controller_now": None, "notes": [],
        }
        if i % 2:
            h = {"ledger": "prod-eu-1", **h}
        out.append(h)
    return out


class _Count(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.elements = 0
        self.titles = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements += 1
        self.titles += any(k == "title" for k, _v in attrs)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def chromium_load(path: Path, chromium: str) -> dict[str, float]:
    """Load ``path`` in headless Chromium through the DevTools protocol; the times in ms."""
    import urllib.request

    import websocket  # websocket-client, installed with the kubernetes client

    port = _free_port()
    with tempfile.TemporaryDirectory() as prof:
        proc = subprocess.Popen([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                                 "--disable-background-networking", "--disable-extensions",
                                 f"--user-data-dir={prof}", f"--remote-debugging-port={port}",
                                 "--window-size=1600,1000", "about:blank"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 30
            targets: list[dict[str, Any]] = []
            while time.monotonic() < deadline:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=2) as r:
                        targets = [t for t in json.load(r) if t.get("type") == "page"]
                    if targets:
                        break
                except OSError:
                    pass
                time.sleep(0.1)
            ws = websocket.create_connection(targets[0]["webSocketDebuggerUrl"], timeout=120,
                                             suppress_origin=True)
            seq = iter(range(1, 10**6))

            def call(method: str, **params: Any) -> dict[str, Any]:
                i = next(seq)
                ws.send(json.dumps({"id": i, "method": method, "params": params}))
                while True:
                    m = json.loads(ws.recv())
                    if m.get("id") == i:
                        return dict(m.get("result") or {})

            def evaluate(expr: str) -> Any:
                return call("Runtime.evaluate", expression=expr, returnByValue=True)["result"].get("value")

            call("Page.enable")
            t0 = time.monotonic()
            ws.send(json.dumps({"id": 0, "method": "Page.navigate", "params": {"url": path.as_uri()}}))
            while json.loads(ws.recv()).get("method") != "Page.loadEventFired":
                pass
            load = (time.monotonic() - t0) * 1000
            nav = evaluate("JSON.stringify(performance.getEntriesByType('navigation')[0])")
            timing = json.loads(nav) if nav else {}
            elements = evaluate("document.getElementsByTagName('*').length")
            layout = evaluate("(() => { const t = performance.now(); document.body.getBoundingClientRect(); "
                              "void document.documentElement.scrollHeight; return performance.now() - t })()")
            t1 = time.monotonic()
            call("Page.captureScreenshot", format="png")
            shot = (time.monotonic() - t1) * 1000
            styled = evaluate("getComputedStyle(document.querySelector('.t i[title]') || document.body)"
                              ".backgroundColor")
            ws.close()
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    return {"navigate_to_load_ms": load, "dom_content_loaded_ms": float(timing.get("domContentLoadedEventEnd", -1)),
            "load_event_end_ms": float(timing.get("loadEventEnd", -1)), "elements": float(elements or -1),
            "forced_layout_ms": float(layout or -1), "screenshot_ms": shot, "styled": styled}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cronjobs", type=int, default=1000)
    ap.add_argument("--days", type=int, default=7)
    ap.add_argument("--worst", action="store_true", help="a change of verdict in every column of every row")
    ap.add_argument("--no-chromium", action="store_true")
    ap.add_argument("--no-schema", action="store_true", help="skip the check against history.schema.json")
    ap.add_argument("--keep", metavar="FILE", help="also write the page here")
    args = ap.parse_args()

    from cronctl.bundle.fleet import fleet_page
    from cronctl.bundle.render import render_fleet_html

    t = time.monotonic()
    hist = synthetic(args.cronjobs, days=args.days, worst=args.worst)
    gen = time.monotonic() - t
    slots = sum(len(h["slots"]) for h in hist)
    print(f"synthetic fleet: {len(hist)} CronJobs, {slots} slots over {args.days} days "
          f"({'worst case' if args.worst else 'mixed'}; generated in {gen:.1f}s)")
    if not args.no_schema:
        import jsonschema

        schema = json.loads((ROOT / "cronctl" / "data" / "history.schema.json").read_text())
        jsonschema.validate({"now": _z(NOW), "missing": [], "cronjobs": hist[:20]}, schema)
        print("  the first 20 histories are valid history -o json (history.schema.json)")
    t = time.monotonic()
    page = fleet_page(hist, now=NOW, here="prod-us-1", source="synthetic")
    build = time.monotonic() - t
    t = time.monotonic()
    html = render_fleet_html(page)
    render = time.monotonic() - t
    data = html.encode("utf-8")
    count = _Count()
    count.feed(html)
    cells = sum(len(r["cells"]) for c in page["clusters"] for ns in c["namespaces"] for r in ns["rows"])
    print(f"grid: {page['grid']['columns']} columns of {page['grid']['words']}; {cells} cells "
          f"({cells / max(len(hist), 1):.1f} per CronJob)")
    print(f"build (fleet_page) {build:.2f}s, render (jinja2) {render:.2f}s, total {build + render:.2f}s")
    print(f"file size {len(data) / 1e6:.2f} MB; elements {count.elements} (parsed), hover titles {count.titles}")
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "fleet.html"
        path.write_bytes(data)
        if args.keep:
            Path(args.keep).write_bytes(data)
        if not args.no_chromium:
            chromium = os.environ.get("CRONCTL_CHROMIUM") or subprocess.run(
                [str(ROOT / "scripts" / "chromium"), "--path"], capture_output=True, text=True, check=True).stdout.strip()
            for run in (1, 2):
                c = chromium_load(path, chromium)
                print(f"chromium run {run}: navigate->load {c['navigate_to_load_ms']:.0f} ms (DOMContentLoaded "
                      f"{c['dom_content_loaded_ms']:.0f} ms, load end {c['load_event_end_ms']:.0f} ms), "
                      f"{c['elements']:.0f} elements, forced layout {c['forced_layout_ms']:.0f} ms, "
                      f"screenshot {c['screenshot_ms']:.0f} ms; a cell's colour {c['styled']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
