#!/usr/bin/env python3
"""Benchmark: cronctl's schedule engine against croniter and cronsim, and `cronctl explain` start-up.

Run from the repository root with the project's venv (croniter and cronsim are the `bench`
extra: `.venv/bin/pip install -e '.[bench]'`):

    .venv/bin/python bench/bench_engine.py [--occurrences 10000] [--runs 15] [--fail-under 3]

Prints numbers. Targets (issues 2 and 13): every class at least 3x faster per run than cronsim 2.8
in the same process; `cronctl explain` median wall time <= 0.25 s; `kubernetes` never imported.
With ``--fail-under R`` the script exits 1 when a class is less than R times faster than cronsim
(a check to run by hand on a quiet machine; no test times anything).

Each library walks the same expression in the same zone from the same start for N consecutive
occurrences; the time per occurrence is the best of three rounds (CPU time of this process, so
other load on the machine counts less) divided by N. Sparse classes have a cap per walk (a leap
day fires 16 times before 2100, where robfig's five-year search gives up; a yearly schedule stays
below datetime's year 9999): the walk of the cap is repeated until N occurrences are timed. The
libraries do not agree on every instant (cronsim and croniter follow other dialects around DST
and the day-of-month/day-of-week rule, see docs/STYLE.md); the "agree" column counts how many of
cronctl's first 1,000 instants the other library also produced among its first 1,000.
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

# (class, expression, zone, occurrences per walk or None for all N). Same text for every
# library: no robfig-only syntax here.
CLASSES: list[tuple[str, str, str, int | None]] = [
    ("every minute", "* * * * *", "UTC", None),
    ("every 15 minutes", "*/15 * * * *", "UTC", None),
    ("hourly", "0 * * * *", "UTC", None),
    ("daily at a fixed time", "30 6 * * *", "UTC", None),
    ("weekday list", "0 9 * * 1,3,5", "UTC", None),
    ("DOM/DOW OR", "0 0 13 * 5", "UTC", None),
    ("names", "0 12 * JAN-MAR MON-FRI", "UTC", None),
    ("DST zone, hourly", "0 * * * *", "America/New_York", None),
    ("DST zone, in the gap", "30 2 * * *", "America/New_York", None),
    ("DST zone, business hours", "*/10 9-17 * * 1-5", "Europe/Berlin", None),
    # sparse: whole months, days or years without a run between two runs
    ("sparse: leap day", "0 0 29 2 *", "Europe/Berlin", 16),  # 2028 .. 2088
    ("sparse: yearly", "0 0 1 1 *", "Europe/Berlin", 500),
    ("sparse: yearly, names", "0 0 1 JAN *", "America/New_York", 500),
    ("sparse: 31st at noon", "0 12 31 * *", "Europe/Berlin", 2000),
    ("sparse: 31st, Lord Howe", "0 12 31 * *", "Australia/Lord_Howe", 2000),
    ("sparse: weekly", "0 0 * * 0", "Europe/Berlin", None),
    ("sparse: weekly, names", "0 0 * * SUN", "America/New_York", None),
    ("sparse: weekly, Chatham", "45 2 * * SUN", "Pacific/Chatham", None),
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


def per_occurrence(fn: Callable[[str, str, int], list[datetime]], expr: str, zone: str, n: int,
                   cap: int | None) -> tuple[float, list[datetime]]:
    """Seconds per occurrence (best of three rounds of at least ``n`` occurrences, in walks of
    ``cap``) and the occurrences of one walk."""
    k = n if cap is None else min(n, cap)
    reps = -(-n // k)
    best = float("inf")
    got: list[datetime] = []
    for _ in range(3):
        total = 0
        t0 = time.process_time()
        for _ in range(reps):
            got = fn(expr, zone, k)
            total += len(got)
        best = min(best, (time.process_time() - t0) / max(total, 1))
    return best, got


def engine_table(n: int) -> list[dict[str, Any]]:
    rows = []
    for label, expr, zone, cap in CLASSES:
        row: dict[str, Any] = {"class": label, "expr": expr, "zone": zone}
        ref: list[datetime] = []
        for lib, fn in WALKERS.items():
            try:
                secs, got = per_occurrence(fn, expr, zone, n, cap)
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
    ap.add_argument("--fail-under", type=float, metavar="RATIO",
                    help="exit 1 when a class is less than RATIO times faster than cronsim")
    args = ap.parse_args()
    slow: list[str] = []
    if args.only != "startup":
        slow = engine_report(args.occurrences, args.fail_under or 3.0)
    if args.only != "engine":
        startup_report(args.runs)
    if args.fail_under is not None and slow:
        sys.exit(1)


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "not installed"


def engine_report(occurrences: int, aim: float) -> list[str]:
    """Print the table; return the classes under ``aim`` times faster than cronsim."""
    print(f"Engine: {occurrences} consecutive occurrences per library and class, from {START:%Y-%m-%dT%H:%MZ};"
          f" microseconds per occurrence (best of 3, CPU time); cronsim {_version('cronsim')},"
          f" croniter {_version('croniter')}, Python {sys.version.split()[0]}")
    rows = engine_table(occurrences)
    head = (f"{'class':26} {'expression':24} {'zone':19} {'cronctl':>7} {'cronsim':>7} {'croniter':>8}"
            f"  {'cronsim/cronctl':>15} {'croniter/cronctl':>16}  agree(sim/iter of 1000)")
    print(head)
    print("-" * len(head))
    slow = []
    for r in rows:
        agree = "/".join(str(r.get(f"{lib}_agree", "-")) for lib in ("cronsim", "croniter"))
        print(f"{r['class']:26} {r['expr']:24} {r['zone']:19} {us(r['cronctl'])} {us(r['cronsim'])} "
              f"{us(r['croniter']):>8}  {ratio(r['cronsim'], r['cronctl']):>15} "
              f"{ratio(r['croniter'], r['cronctl']):>16}  {agree}")
        for lib in WALKERS:
            if f"{lib}_err" in r:
                print(f"    {lib}: {r[f'{lib}_err']}")
        if r["cronctl"] is None or r["cronsim"] is None:
            slow.append(f"{r['class']} (not measured)")
        elif r["cronsim"] / r["cronctl"] < aim:
            slow.append(f"{r['class']} ({r['cronsim'] / r['cronctl']:.1f}x)")
    print()
    print(f"Classes under the {aim:g}x-faster-than-cronsim aim:", ", ".join(slow) if slow else "none")
    return slow


#: (label, arguments, target median wall seconds) of the start-up table: issue 24's targets
STARTUP = (
    ("cronctl explain '0 9 * * 1-5' --tz Europe/Berlin", ["explain", "0 9 * * 1-5", "--tz", "Europe/Berlin"], 0.25),
    ("cronctl --version", ["--version"], 0.15),
    ("cronctl --help", ["--help"], 0.15),
)


def startup_report(runs: int) -> None:
    cronctl_bin = str(ROOT / ".venv" / "bin" / "cronctl")
    if not Path(cronctl_bin).exists():
        cronctl_bin = "cronctl"
    print()
    print(f"Start-up: {runs} runs each (subprocess); wall median and min, median CPU (user+sys), and the")
    print("median wall as a ratio of `python -c pass` (the ratio holds on a busy machine; the seconds do not)")
    base_cmd = [sys.executable, "-c", "pass"]
    base, base_cpu = wall_times(base_cmd, runs), cpu_seconds(base_cmd, runs)
    bm = statistics.median(base)
    print(f"  {'python -c pass':48} median {bm:6.3f} s  min {min(base):6.3f} s  cpu {base_cpu:6.3f} s")
    for label, args, target in STARTUP:
        cmd = [cronctl_bin, *args]
        times, cpu = wall_times(cmd, runs), cpu_seconds(cmd, runs)
        m = statistics.median(times)
        print(f"  {label:48} median {m:6.3f} s  min {min(times):6.3f} s  cpu {cpu:6.3f} s  "
              f"{m / bm:4.1f}x  target <= {target:.2f} s: {'met' if m <= target else 'NOT met'}")
    print(f"  kubernetes imported by explain: {'YES' if kubernetes_imported() else 'no'}")


if __name__ == "__main__":
    main()
