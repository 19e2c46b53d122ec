#!/usr/bin/env python3
"""Benchmark: the recorder's ``/metrics`` for many CronJobs (issue 28: under 100 ms for 1,000).

    .venv/bin/python bench/bench_metrics.py [--cronjobs 1000] [--repeat 20] [--cluster NAME]

Fills the recorder's own registry (cronctl.procedure.metrics.Metrics) as a recorder of N
CronJobs would after a day: every verdict's counter, each CronJob's gauges, and a day of */10
slots observed into the three histograms; then renders the text exposition ``--repeat`` times,
and once more over HTTP from the real server (``serve``) on 127.0.0.1. Prints the series count,
the body size and the render times (min, median, max) when every CronJob changed since the last scrape (cold) and when 50 did (a 30 s scrape of 1,000 */10 CronJobs). Asserts nothing.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cronjobs", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--cluster", default=None)
    a = ap.parse_args()
    from cronctl.procedure.metrics import Metrics, serve
    from cronctl.procedure.reconcile import CLOSED_VERDICTS

    rnd = random.Random(28)
    m = Metrics(a.cluster)
    t0 = time.perf_counter()
    for i in range(a.cronjobs):
        ns, name = f"team-{i % 40}", f"job-{i:04d}"
        m.known(ns, name, CLOSED_VERDICTS)
        for _slot in range(144):  # a day of */10
            m.slot(ns, name, rnd.choice(("ran", "ran", "ran", "ran-late", "missed")), schedule_lag=rnd.random() * 20,
                   duration=rnd.random() * 300, beside_manual=rnd.random() < 0.01)
            m.started(ns, name, rnd.random() * 5)
        m.cronjob(ns, name, {"last_success": 1.8e9, "success_due": 1.8e9 + 600, "next_slot": 1.8e9 + 60,
                             "interval": 600, "suspended": 0, "hold": 0, "hold_since": 0, "paused": 0,
                             "pause_until": 0, "running": 1, "oldest_running": 1.8e9, "beside": 0})
    fill = time.perf_counter() - t0
    times = []
    body = b""
    for k in range(a.repeat):
        if k:  # every CronJob changed: the cold case
            for i in range(a.cronjobs):
                m.cronjob(f"team-{i % 40}", f"job-{i:04d}", {"running": k % 2})
        t = time.perf_counter()
        body = m.render()
        times.append(time.perf_counter() - t)
    series = sum(1 for line in body.splitlines() if line and not line.startswith(b"#"))
    # a scrape after 50 CronJobs closed a slot (a 30 s scrape of 1,000 */10 CronJobs)
    warm = []
    for _ in range(a.repeat):
        for i in rnd.sample(range(a.cronjobs), 50):
            m.slot(f"team-{i % 40}", f"job-{i:04d}", "ran", schedule_lag=1.0, duration=30.0, beside_manual=False)
        t = time.perf_counter()
        m.render()
        warm.append(time.perf_counter() - t)
    server = serve(m, "127.0.0.1", 0, lambda: (True, "ok"), lambda: (True, "ok"))
    t = time.perf_counter()
    with urllib.request.urlopen(f"http://127.0.0.1:{server.server_port}/metrics") as r:
        http_body = r.read()
    http = time.perf_counter() - t
    server.shutdown()
    print(f"cronjobs {a.cronjobs}: {series} series, {len(body) / 1024:.0f} KiB; filled in {fill:.2f}s")
    print(f"render /metrics after 50 CronJobs changed x{a.repeat}: min {min(warm) * 1000:.1f} ms, "
          f"median {statistics.median(warm) * 1000:.1f} ms, max {max(warm) * 1000:.1f} ms")
    print(f"render /metrics x{a.repeat} (the first renders every CronJob): min {min(times) * 1000:.1f} ms, median {statistics.median(times) * 1000:.1f} ms, "
          f"max {max(times) * 1000:.1f} ms")
    print(f"one GET /metrics over HTTP: {http * 1000:.1f} ms, {len(http_body) / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
