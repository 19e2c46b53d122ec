#!/usr/bin/env python3
"""Benchmark: what `cronctl claim` adds to a Job (issue 36, "Bench"), on SQLite and PostgreSQL.

    .venv/bin/python bench/bench_claim.py [--claimers 50] [--rounds 5] [--url URL]

For each backend (a SQLite file in a temporary directory; PostgreSQL when ``--url`` or
``$CRONCTL_TEST_POSTGRES`` names one: a fresh database is made on that server and dropped after):

- **claim + completion**: N processes (each with the ledger already open, as `cronctl claim` has it
  when it claims) start together at a barrier and each claims an occurrence and records its end
  (``claimstore.claim`` then ``claimstore.end``, two transactions); R rounds, each on new
  occurrences: one occurrence per claimer (50 Jobs of 50 CronJobs due at the same minute), then
  the same occurrence for all (one wins, N-1 are refused as duplicates);
- **start-up**: the wall time of a whole `cronctl claim --occurrence T -- true` process (interpreter,
  imports, ledger open, claim, COMMAND, end), five times, beside the claim's own time.

- **one claimer**: 50 claims and ends back to back in one process (the cost without contention).

Prints median and p99 in milliseconds, and the load average (the numbers mean little on a crowded
machine: 50 processes want 50 CPUs for a moment). Asserts nothing.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
T0 = datetime(2026, 12, 7, 0, 0, tzinfo=timezone.utc)


def p99(xs: list[float]) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(0.99 * (len(s) - 1))))]


def _claimer(url: str, i: int, rounds: int, same: bool, barrier: Any, out: Any) -> None:
    from cronctl.ledger import claims, claimstore, store

    led = store.open_ledger(url)
    who = claimstore.Claimer(owner=f"bench {i} pid {os.getpid()}")
    for r in range(rounds):
        occ = T0 + timedelta(minutes=r)
        wf = "bench/same" if same else f"bench/w{i}"
        barrier.wait()
        t = time.perf_counter()
        o = claimstore.claim(led, wf, occ, who, timedelta(seconds=60))
        if o.decision.runs:
            claimstore.end(led, wf, occ, o.decision.token, claims.DONE, exit_code=0, output_ref=None,
                           last_error=None)
        out.put((time.perf_counter() - t) * 1000)
    led.close()


def contention(url: str, n: int, rounds: int, same: bool) -> list[float]:
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(n)
    q = ctx.Queue()
    procs = [ctx.Process(target=_claimer, args=(url, i, rounds, same, barrier, q)) for i in range(n)]
    for p in procs:
        p.start()
    samples = [q.get(timeout=600) for _ in range(n * rounds)]
    for p in procs:
        p.join()
    return samples


def sequential(url: str, n: int) -> list[float]:
    """One claimer, n claims and ends back to back: the cost without contention or a crowded CPU."""
    from cronctl.ledger import claims, claimstore, store

    led = store.open_ledger(url)
    who = claimstore.Claimer(owner="bench sequential")
    out = []
    for i in range(n):
        occ = T0 + timedelta(days=1, minutes=i)
        t = time.perf_counter()
        o = claimstore.claim(led, "bench/sequential", occ, who, timedelta(seconds=60))
        claimstore.end(led, "bench/sequential", occ, o.decision.token, claims.DONE, exit_code=0, output_ref=None,
                       last_error=None)
        out.append((time.perf_counter() - t) * 1000)
    led.close()
    return out


def startup(url: str, times: int = 5) -> list[float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRONCTL_")} | {"KUBECONFIG": "/nonexistent"}
    out = []
    for i in range(times):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "cronctl", "claim", "--ledger", url, "--workflow", "bench/startup",
                        "--occurrence", (T0 + timedelta(hours=1, minutes=i)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                        "--", "true"], check=True, env=env, capture_output=True)
        out.append((time.perf_counter() - t) * 1000)
    return out


def report(name: str, what: str, xs: list[float]) -> None:
    print(f"{name:10} {what:44} n={len(xs):4}  median {statistics.median(xs):7.1f} ms  p99 {p99(xs):7.1f} ms")


def bench(name: str, url: str, n: int, rounds: int) -> None:
    from cronctl.ledger import store

    store.open_ledger(url).close()  # migrated once
    report(name, "claim+end, one claimer, back to back", sequential(url, 50))
    report(name, f"claim+end, {n} claimers, one occurrence each", contention(url, n, rounds, same=False))
    report(name, f"claim(+end), {n} claimers on one occurrence", contention(url, n, rounds, same=True))
    report(name, "whole `cronctl claim -- true` process", startup(url))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--claimers", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--url", default=os.environ.get("CRONCTL_TEST_POSTGRES"))
    a = ap.parse_args()
    print(f"load average before: {' '.join(f'{x:.1f}' for x in os.getloadavg())}, {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as d:
        bench("sqlite", f"sqlite:///{d}/ledger.sqlite", a.claimers, a.rounds)
    if a.url:
        import uuid

        import psycopg

        name = f"bench_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(a.url, autocommit=True) as c:
            c.execute(f'CREATE DATABASE "{name}"')
        try:
            bench("postgresql", a.url.rsplit("/", 1)[0] + "/" + name, a.claimers, a.rounds)
        finally:
            with psycopg.connect(a.url, autocommit=True) as c:
                c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    else:
        print("postgresql: skipped (no --url, no $CRONCTL_TEST_POSTGRES)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
