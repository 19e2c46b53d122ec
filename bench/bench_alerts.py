#!/usr/bin/env python3
"""Benchmark: what ``cronctl alerts`` costs as the fleet grows (issue 39: 2,000 distinct schedules
ran past 178 s, one CronJob per IANA zone took 71 s). Each case at 1, 2, 4 and 8 times its base
count of CronJobs, each in its own process (``alerts.build``, the work of the command without the
YAML): wall time, peak RSS, and whether the walk cap (``alerts.MAX_WALK``) refused the run.

- ``shared``: N CronJobs over 24 schedules (``M H * * *``-shaped, each repeated): walks shared;
- ``distinct``: N CronJobs, each its own every-few-minutes schedule (``K-59/S * * * *``): the
  worst case, refused once its walks pass the cap;
- ``zones``: N CronJobs, one hourly schedule, each in its own IANA zone.

    .venv/bin/python bench/bench_alerts.py [--base 250] [--only shared|distinct|zones]

Prints a table, asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

_CHILD = """
import json, resource, sys, time, zoneinfo
from datetime import datetime, timezone
from cronctl import alerts as al
from cronctl.errors import BadInput
N, case = int(sys.argv[1]), sys.argv[2]
zones = sorted(zoneinfo.available_timezones())
def cj(i):
    if case == "shared":
        sched, tz = f"{i % 24} {i % 24} * * *", None
    elif case == "distinct":
        sched, tz = f"{i % 60}-59/{2 + i // 60} * * * *", None
    else:
        sched, tz = "7 * * * *", zones[i % len(zones)]
    spec = {"schedule": sched, "jobTemplate": {"spec": {"template": {"spec": {"containers": []}}}}}
    if tz:
        spec["timeZone"] = tz
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": f"cj-{i}", "namespace": "bench"},
            "spec": spec}
objs = [cj(i) for i in range(N)]
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
refused = False
try:
    rs = al.build(objs, datetime(2026, 12, 7, tzinfo=timezone.utc), al.AlertOptions())
except BadInput as e:
    refused = True
dt = time.perf_counter() - t0
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": dt, "rss": rss, "refused": refused}))
"""


def measure(n: int, case: str) -> dict[str, object]:
    r = subprocess.run([sys.executable, "-P", "-c", _CHILD, str(n), case], capture_output=True, text=True,
                       env=dict(os.environ), timeout=3600)
    if r.returncode != 0:
        raise SystemExit(r.stderr[-2000:])
    return dict(json.loads(r.stdout.strip().splitlines()[-1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=int, default=250, help="CronJobs at 1x")
    ap.add_argument("--only", default=None, choices=["shared", "distinct", "zones"])
    args = ap.parse_args()
    print(f"{'case':<10} {'CronJobs':>9} {'seconds':>9} {'peak RSS MB':>12}  result")
    for case in ("shared", "distinct", "zones"):
        if args.only and args.only != case:
            continue
        for k in (1, 2, 4, 8):
            m = measure(args.base * k, case)
            print(f"{case:<10} {args.base * k:>9} {m['seconds']:>9.2f} {int(m['rss']) / 1024:>12.0f}  "  # type: ignore[call-overload]
                  f"{'refused: walk cap' if m['refused'] else 'rules written'}", flush=True)


if __name__ == "__main__":
    main()
