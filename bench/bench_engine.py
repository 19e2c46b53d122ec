#!/usr/bin/env python3
"""Benchmark: cronctl's schedule engine against croniter and cronsim, and `cronctl explain` start-up.

Run from the repository root with the project's venv (croniter and cronsim are the `bench`
extra: `.venv/bin/pip install croniter cronsim`):

    .venv/bin/python bench/bench_engine.py [--occurrences 10000] [--runs 15]

Prints numbers, asserts nothing. Targets (issue 2): faster per occurrence than cronsim on every
class (aim 3x); `cronctl explain` median wall time <= 0.25 s; `kubernetes` never imported.

Each library walks the same expression in the same zone from the same start for N consecutive
occurrences; the time per occurrence is the best of three walks divided by N. The libraries do
not agree on every instant (cronsim and croniter follow other dialects around DST and the
day-of-month/day-of-week rule, see docs/STYLE.md); the "agree" column counts how many of cronctl's
first 1,000 instants the other library also produced among its first 1,000.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

UTC = timezone.utc
START = datetime(2026, 1, 1, 0, 0, tzinfo=UTC)

# (class, expression, zone). Same text for every library: no robfig-only syntax here.
CLASSES = [
    ("every minute", "* * * * *", "UTC"),
    ("every 15 minutes", "*/15 * * * *", "UTC"),
    ("hourly", "0 * * * *", "UTC"),
    ("daily at a fixed time", "30 6 * * *", "UTC"),
    ("weekday list", "0 9 * * 1,3,5", "UTC"),
    ("DOM/DOW OR", "0 0 13 * 5", "UTC"),
    ("names", "0 12 * JAN-MAR MON-FRI", "UTC"),
    ("DST zone, hourly", "0 * * * *", "America/New_York"),
    ("DST zone, in the gap", "30 2 * * *", "America/New_York"),
    ("DST zone, business hours", "*/10 9-17 * * 1-5", "Europe/Berlin"),
]


def walk_cronctl(expr: str, zone: str, n: int) -> list[datetime]:
    from cronctl.schedule import parse

    return list(parse(expr, zone).runs(START, n))


def walk_cronsim(expr: str, zone: str, n: int) -> list[datetime]:
    from cronsim import CronSim

    it = CronSim(expr, START.astimezone(ZoneInfo(zone)))
    return [next(it) for _ in range(n)]


def walk_croniter(expr: str, zone: str, n: int) -> list[datetime]:
    from croniter import croniter  # type: ignore[import-untyped]

    it = croniter(expr, START.astimezone(ZoneInfo(zone)))
    return [it.get_next(datetime) for _ in range(n)]


WALKERS: dict[str, Callable[[str, str, int], list[datetime]]] = {
    "cronctl": walk_cronctl, "cronsim": walk_cronsim, "croniter": walk_croniter}


def per_occurrence(fn: Callable[[str, str, int], list[datetime]], expr: str, zone: str, n: int) -> tuple[float, list[datetime]]:
    best = float("inf")
    got: list[datetime] = []
    for _ in range(3):
        t0 = time.perf_counter()
        got = fn(expr, zone, n)
        best = min(best, time.perf_counter() - t0)
    return best / max(len(got), 1), got


def engine_table(n: int) -> list[dict[str, Any]]:
    rows = []
    for label, expr, zone in CLASSES:
        row: dict[str, Any] = {"class": label, "expr": expr, "zone": zone}
        ref: list[datetime] = []
        for lib, fn in WALKERS.items():
            try:
                secs, got = per_occurrence(fn, expr, zone, n)
            except Exception as e:  # a library that rejects the expression: report, keep going
                row[lib] = None
                row[f"{lib}_err"] = f"{type(e).__name__}: {e}"
                continue
            row[lib] = secs
            if lib == "cronctl":
                ref = got
            else:
                k = min(1000, len(ref), len(got))
                # As sets: one skipped or extra run must not shift every later comparison.
                row[f"{lib}_agree"] = len(set(ref[:k]) & set(got[:k]))
                row[f"{lib}_n"] = k
        rows.append(row)
    return rows


def us(x: float | None) -> str:
    return "   n/a" if x is None else f"{x * 1e6:7.2f}"


def ratio(a: float | None, b: float | None) -> str:
    return "  n/a" if a is None or b is None else f"{a / b:5.1f}x"


# Start-up is measured as users see it: with byte-code caching on (PYTHONDONTWRITEBYTECODE would
# make every run recompile every changed module) and after two warm-up runs that write the caches.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def wall_times(cmd: list[str], runs: int) -> list[float]:
    for _ in range(2):
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=ENV)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=ENV)
        times.append(time.perf_counter() - t0)
    return times


def cpu_seconds(cmd: list[str], runs: int) -> float:
    """Median user+system CPU of the child: what the wall time would be on an idle machine."""
    import resource

    out = []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=ENV)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        out.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(out)


def kubernetes_imported() -> bool:
    code = ("import sys\nfrom cronctl.cli import main\n"
            "rc = main(['explain', '0 9 * * 1-5', '--tz', 'Europe/Berlin', '-o', 'json'])\n"
            "print('KUBERNETES' if any(m == 'kubernetes' or m.startswith('kubernetes.') for m in sys.modules)"
            " else 'CLEAN', rc, file=sys.stderr)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False)
    return "KUBERNETES" in p.stderr or "CLEAN" not in p.stderr


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--occurrences", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--only", choices=["engine", "startup"], help="run one half of the benchmark")
    args = ap.parse_args()
    if args.only != "startup":
        engine_report(args.occurrences)
    if args.only != "engine":
        startup_report(args.runs)


def engine_report(occurrences: int) -> None:
    print(f"Engine: {occurrences} consecutive occurrences per library and class, from {START:%Y-%m-%dT%H:%MZ};"
          " microseconds per occurrence (best of 3)")
    rows = engine_table(occurrences)
    head = (f"{'class':26} {'expression':24} {'zone':17} {'cronctl':>7} {'cronsim':>7} {'croniter':>8}"
            f"  {'cronsim/cronctl':>15} {'croniter/cronctl':>16}  agree(sim/iter of 1000)")
    print(head)
    print("-" * len(head))
    slow = []
    for r in rows:
        agree = "/".join(str(r.get(f"{lib}_agree", "-")) for lib in ("cronsim", "croniter"))
        print(f"{r['class']:26} {r['expr']:24} {r['zone']:17} {us(r['cronctl'])} {us(r['cronsim'])} "
              f"{us(r['croniter']):>8}  {ratio(r['cronsim'], r['cronctl']):>15} "
              f"{ratio(r['croniter'], r['cronctl']):>16}  {agree}")
        for lib in WALKERS:
            if f"{lib}_err" in r:
                print(f"    {lib}: {r[f'{lib}_err']}")
        if r["cronctl"] is not None and r["cronsim"] is not None and r["cronsim"] / r["cronctl"] < 3:
            slow.append(f"{r['class']} ({r['cronsim'] / r['cronctl']:.1f}x)")
    print()
    print("Classes under the 3x-faster-than-cronsim aim:", ", ".join(slow) if slow else "none")



def startup_report(runs: int) -> None:
    cronctl_bin = str(ROOT / ".venv" / "bin" / "cronctl")
    if not Path(cronctl_bin).exists():
        cronctl_bin = "cronctl"
    explain_cmd = [cronctl_bin, "explain", "0 9 * * 1-5", "--tz", "Europe/Berlin"]
    print()
    print(f"Start-up: {runs} runs each (subprocess); wall median and min, and median CPU (user+sys)")
    base_cmd = [sys.executable, "-c", "pass"]
    base, exp = wall_times(base_cmd, runs), wall_times(explain_cmd, runs)
    base_cpu, exp_cpu = cpu_seconds(base_cmd, runs), cpu_seconds(explain_cmd, runs)
    bm, em = statistics.median(base), statistics.median(exp)
    print(f"  {'python -c pass':48} median {bm:6.3f} s  min {min(base):6.3f} s  cpu {base_cpu:6.3f} s")
    label = "cronctl explain '0 9 * * 1-5' --tz Europe/Berlin"
    print(f"  {label:48} median {em:6.3f} s"
          f"  min {min(exp):6.3f} s  cpu {exp_cpu:6.3f} s")
    print(f"  ratio (median wall) {em / bm:.1f}x python -c pass; target median <= 0.25 s: "
          f"{'met' if em <= 0.25 else 'NOT met'}")
    print(f"  kubernetes imported by explain: {'YES' if kubernetes_imported() else 'no'}")


if __name__ == "__main__":
    main()
