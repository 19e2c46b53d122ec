#!/usr/bin/env python3
"""Benchmark: `cronctl history` from a large ledger (issue 27, "Performance"), on SQLite or PostgreSQL.

    .venv/bin/python bench/bench_ledger.py [--cronjobs 100] [--days 90] [--url URL] [--keep]

Generates a ledger of N `*/10` CronJobs over D days (one Job and one slot row per slot: 144 a day
per CronJob; the issue's full size is 1,000 x 90 days = 12.96 million), written through the
ledger's own schema and migrations (rows built here, inserted in batches of 10,000, each Job with a
stored object shaped like the API's), then times, as the user runs them (whole processes):

- ``history CJ -n NS --since Dd --ledger URL --cluster bench -o json``: one CronJob over the whole span;
- ``history -A --since 1d --ledger URL --cluster bench -o json``: every CronJob, the last day.

``--url`` selects the backend (default: a SQLite file in a temporary directory; a
``postgresql://`` URL is used as given and its tables are emptied first). Prints the generation
rate, the database size (SQLite), and the wall time and peak RSS of each command. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
UTC = timezone.utc
NOW = datetime(2026, 12, 1, tzinfo=UTC)


def z(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def cronjob(i: int, created: datetime) -> dict[str, object]:
    return {"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": {"name": f"cj-{i:04d}", "namespace": f"ns-{i % 20:02d}", "uid": f"uid-cj-{i}",
                         "creationTimestamp": z(created), "resourceVersion": "1"},
            "spec": {"schedule": "*/10 * * * *", "concurrencyPolicy": "Forbid", "suspend": False,
                     "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
                         {"name": "main", "image": "registry.example/app:1.2.3", "args": ["sync", "--all"]}]}}}}},
            "status": {"lastScheduleTime": z(NOW)}}


def job(i: int, cj: dict[str, object], slot: datetime) -> dict[str, object]:
    meta = cj["metadata"]
    assert isinstance(meta, dict)
    name = f"{meta['name']}-{int(slot.timestamp()) // 60}"
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": meta["namespace"], "uid": f"uid-{i}-{int(slot.timestamp())}",
                         "creationTimestamp": z(slot + timedelta(seconds=1)),
                         "annotations": {"batch.kubernetes.io/cronjob-scheduled-timestamp": z(slot)},
                         "labels": {"batch.kubernetes.io/controller-uid": f"uid-{i}-{int(slot.timestamp())}"},
                         "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob", "name": meta["name"],
                                              "uid": meta["uid"], "controller": True}]},
            "spec": {"completions": 1, "parallelism": 1, "backoffLimit": 6},
            "status": {"startTime": z(slot + timedelta(seconds=1)), "completionTime": z(slot + timedelta(seconds=41)),
                       "succeeded": 1, "conditions": [
                           {"type": "SuccessCriteriaMet", "status": "True", "lastTransitionTime": z(slot + timedelta(seconds=41))},
                           {"type": "Complete", "status": "True", "lastTransitionTime": z(slot + timedelta(seconds=41))}]}}


def judged_template() -> dict[str, object]:
    """The row the recorder keeps for a slot that ran (history's own row, made by the real judge)."""
    from cronctl.history import Options, slot_history

    cj = cronjob(0, NOW - timedelta(hours=1))
    h = slot_history(cj, [job(0, cj, NOW - timedelta(minutes=20))], [], Options(now=NOW, since=NOW - timedelta(minutes=25)))
    (row,) = [r for r in h["slots"] if r["verdict"] == "ran"]
    return row


def judged_row(tpl: dict[str, object], slot: datetime, name: str) -> dict[str, object]:
    from cronctl.timeutil import rfc3339_in_zone

    d = dict(tpl["job_details"][0])  # type: ignore[index]
    d.update(name=name, created=z(slot + timedelta(seconds=1)), started=z(slot + timedelta(seconds=1)),
             completed=z(slot + timedelta(seconds=41)))
    return {**tpl, "slot": z(slot), "slot_local": rfc3339_in_zone(slot, "UTC"), "jobs": [name], "job_details": [d]}


def generate(url: str, n: int, days: int, *, judged: bool, slots_only: bool, sparse: bool = False) -> tuple[int, float]:
    from sqlalchemy import delete

    from cronctl.ledger import schema
    from cronctl.ledger.store import judged_rules, open_ledger

    led = open_ledger(url)
    tpl = judged_template()
    start = NOW - timedelta(days=days)
    rows = 0
    t0 = time.perf_counter()
    with led.engine.begin() as c:
        for t in reversed(schema.metadata.sorted_tables):
            c.execute(delete(t))
    for i in range(n):
        cj = cronjob(i, start - timedelta(hours=1))
        meta = cj["metadata"]
        assert isinstance(meta, dict)
        jobs, slots = [], []
        t = start
        while t <= NOW:
            # --sparse: the judged row only where the timed commands read one (cj-0000's whole span,
            # every CronJob's last day); the other rows are closed slots with their verdict
            full = judged and (not sparse or i == 0 or t >= NOW - timedelta(days=1, minutes=10))
            name = f"{meta['name']}-{int(t.timestamp()) // 60}"  # the controller's, as job() names it
            if not slots_only:
                j = job(i, cj, t)
                jm = j["metadata"]
                assert isinstance(jm, dict) and jm["name"] == name
                jobs.append({"cluster": "bench", "uid": jm["uid"], "namespace": meta["namespace"], "name": jm["name"],
                             "cronjob_uid": meta["uid"], "cronjob_name": meta["name"], "slot": t, "origin": "scheduled",
                             "created": t + timedelta(seconds=1), "started": t + timedelta(seconds=1),
                             "first_running": t + timedelta(seconds=2), "completed": t + timedelta(seconds=41),
                             "outcome": "Complete", "failure_reason": None, "exit_codes": None, "deleted_at": None,
                             "updated_at": t + timedelta(seconds=41), "object": j})
            slots.append({"cluster": "bench", "cronjob_uid": meta["uid"], "namespace": meta["namespace"],
                          "cronjob_name": meta["name"], "slot": t, "jobs": 1, "job_name": name,
                          "created": t + timedelta(seconds=1), "first_running": t + timedelta(seconds=2),
                          "completed": t + timedelta(seconds=41), "outcome": "Complete",
                          "verdict": "ran" if judged else None, "reason": "" if judged else None,
                          "closed_at": t + timedelta(seconds=41) if judged else None,
                          "judged": (row := judged_row(tpl, t, name) if full else None),
                          "judged_rules": judged_rules(row) if row is not None else None})
            t += timedelta(minutes=10)
        with led.engine.begin() as c:
            c.execute(schema.cronjobs.insert(), [{"cluster": "bench", "uid": meta["uid"], "namespace": meta["namespace"],
                                                  "name": meta["name"], "first_seen": start, "last_seen": NOW,
                                                  "deleted_at": None, "object": cj}])
            c.execute(schema.cronjob_configs.insert(), [{
                "cluster": "bench", "cronjob_uid": meta["uid"], "resource_version": "1", "observed_at": start,
                "generation": 1, "schedule": "*/10 * * * *", "time_zone": None, "suspend": False,
                "suspend_manager": None, "suspend_at": None, "concurrency_policy": "Forbid",
                "starting_deadline_seconds": None, "successful_limit": 3, "failed_limit": 1, "fingerprint": "x"}])
            for k in range(0, len(slots), 10_000):
                if not slots_only:
                    c.execute(schema.jobs.insert(), jobs[k:k + 10_000])
                c.execute(schema.slots.insert(), slots[k:k + 10_000])
        rows += len(slots)
        every = 100 if sparse else 10
        if i % every == every - 1:
            el = time.perf_counter() - t0
            print(f"  generated {i + 1}/{n} CronJobs, {rows:,} slot rows, {rows / el:,.0f} rows/s", flush=True)
    led.close()
    return rows, time.perf_counter() - t0


def timed(args: list[str]) -> tuple[float, float, int, str]:
    """(wall seconds, peak RSS MiB, exit code, stdout) of `cronctl ARGS` in its own process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "cronctl", *args], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    wall = time.perf_counter() - t0
    rss = max(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, before) / 1024
    if p.returncode:
        print(p.stderr[-2000:], file=sys.stderr)
    return wall, rss, p.returncode, p.stdout


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cronjobs", type=int, default=100)
    ap.add_argument("--days", type=int, default=90)
    ap.add_argument("--url", default=None)
    ap.add_argument("--keep", action="store_true", help="keep the SQLite file")
    ap.add_argument("--no-judged", action="store_true",
                    help="slot rows without the recorder's judged rows: history judges every slot again")
    ap.add_argument("--slots-only", action="store_true",
                    help="no Job rows (what history reads of a judged window: the 10-million-row ledger in minutes)")
    ap.add_argument("--sparse", action="store_true",
                    help="the judged rows only where the timed commands read them (cj-0000, every CronJob's last "
                         "day), no Job rows: 1,000 CronJobs x 90 days = 12.96 million slot rows in minutes")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="cronctl-bench-ledger-")
    url = a.url or f"sqlite:///{tmp}/ledger.sqlite"
    print(f"bench_ledger: {a.cronjobs} */10 CronJobs x {a.days} days into {url.split('@')[-1]}")
    rows, secs = generate(url, a.cronjobs, a.days, judged=not a.no_judged, slots_only=a.slots_only or a.sparse,
                          sparse=a.sparse)
    size = ""
    if url.startswith("sqlite:///"):
        size = f", {Path(url[10:]).stat().st_size / 2**20:,.0f} MiB on disk"
    print(f"generated {rows:,} slot rows ({'judged' if not a.no_judged else 'not judged'}; "
          f"{'no Jobs' if a.slots_only or a.sparse else 'and as many Jobs'}{'; judged rows sparse' if a.sparse else ''}) in {secs:,.0f} s ({rows / secs:,.0f} rows/s){size}")
    now = ["--now", z(NOW + timedelta(minutes=5))]
    for label, args in (
            (f"history cj-0000 --since {a.days}d", ["history", "cj-0000", "-n", "ns-00", "--since", f"{a.days}d"]),
            ("history -A --since 1d", ["history", "-A", "--since", "1d"])):
        wall, rss, code, out = timed([*args, "--ledger", url, "--cluster", "bench", *now, "-o", "json"])
        slots = sum(len(c["slots"]) for c in json.loads(out)["cronjobs"]) if code == 0 else 0
        print(f"{label:40} {wall:7.2f} s  peak RSS {rss:6.0f} MiB  exit {code}  {slots:,} slots judged")
    if not a.keep and not a.url:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
