#!/usr/bin/env python3
"""Benchmark: `cronctl lint` rule evaluation over many CronJobs (pure, no cluster).

    .venv/bin/python bench/bench_lint.py [--count 1000] [--distinct 25]

Builds COUNT CronJobs from examples/mp-orders-sync.yaml cycling through DISTINCT
(schedule, zone) pairs (real fleets repeat a few schedules and zones; the DST and interval rules
are cached per pair) and prints the time per CronJob, cold (one distinct pair each) and warm.
Prints numbers, asserts nothing.
"""

from __future__ import annotations

import argparse
import copy
import time
from datetime import datetime, timezone
from pathlib import Path

import yaml

from cronctl.lint import lint_objects

ROOT = Path(__file__).resolve().parents[1]
ZONES = ["Europe/Moscow", "America/New_York", "Europe/Berlin", "Etc/UTC", "Asia/Kolkata",
         "Australia/Lord_Howe", "America/Santiago"]
SCHEDULES = ["*/10 * * * *", "30 1 * * *", "0 2 * * 0", "15 3 * * 1-5", "0 9,17 * * *", "@hourly", "0 0 1 * *"]


def fleet(count: int, distinct: int) -> list[dict]:
    base = next(o for o in yaml.safe_load_all((ROOT / "examples" / "mp-orders-sync.yaml").read_text())
                if o and o.get("kind") == "CronJob")
    pairs = [(s, z) for s in SCHEDULES for z in ZONES][:distinct]
    out = []
    for i in range(count):
        c = copy.deepcopy(base)
        c["metadata"]["name"] = f"cj-{i}"
        c["spec"]["schedule"], c["spec"]["timeZone"] = pairs[i % len(pairs)]
        out.append(c)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--distinct", type=int, default=25)
    a = ap.parse_args()
    now = datetime(2026, 12, 2, 12, tzinfo=timezone.utc)
    cold = fleet(a.distinct, a.distinct)
    t = time.perf_counter()
    lint_objects(cold, now)
    per_cold = (time.perf_counter() - t) / len(cold)
    objs = fleet(a.count, a.distinct)
    t = time.perf_counter()
    n, findings = lint_objects(objs, now)
    total = time.perf_counter() - t
    print(f"cold (first CronJob of each schedule/zone pair): {per_cold * 1000:.1f} ms per CronJob")
    print(f"{n} CronJobs, {a.distinct} distinct pairs: {total:.2f} s total, {total / n * 1000:.2f} ms per CronJob, "
          f"{len(findings)} findings")


if __name__ == "__main__":
    main()
