#!/usr/bin/env python3
"""Benchmark: `cronctl diff -f` on a file of many CronJob edits, offline (a dump) and live.

    .venv/bin/python bench/bench_diff.py [--count 500]                       # offline only
    .venv/bin/python bench/bench_diff.py --count 500 --kubeconfig KUBECONFIG # and live

Offline: a dump of COUNT CronJobs (hourly and daily schedules over several zones, some suspended, some
with a running Job) and a file that edits each (schedule, timeZone, suspend, deadline, policy in
turn); times `cronctl diff -f FILE --from-dump DUMP --now ...` as a process (start-up included).
Live: creates the same COUNT CronJobs in a new namespace, then times `cronctl diff -f FILE` with
the server's dry-run apply (--server-side, the default: one list of the namespace's CronJobs, then
one dry-run apply per CronJob) and without it (--no-server-side: the one list only), and deletes
the namespace (unless --keep). Goals (issue 38): under 2 s offline, under 10 s live.
Prints numbers, asserts nothing.
"""

from __future__ import annotations

import argparse
import copy
import json
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _shared import parallel, timed  # noqa: E402

UTC = timezone.utc
NOW = datetime(2026, 12, 7, 10, 30, 17, tzinfo=UTC)
ZONES = [None, "Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe"]
SCHEDULES = ["0 * * * *", "*/10 * * * *", "30 2 * * *", "15 9 * * 1-5", "@daily"]
EDITS: list[tuple[str, Any]] = [("schedule", "15 10 * * *"), ("timeZone", "Asia/Tokyo"), ("suspend", False),
                                ("startingDeadlineSeconds", 120), ("concurrencyPolicy", "Replace")]


def z(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def fleet(count: int, namespace: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(live CronJobs with status, the edited manifests)."""
    live, edits = [], []
    for i in range(count):
        spec: dict[str, Any] = {"schedule": SCHEDULES[i % len(SCHEDULES)], "suspend": i % 7 == 0,
                                "concurrencyPolicy": "Allow",
                                "jobTemplate": {"spec": {"template": {"spec": {
                                    "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox:1.36"}]}}}}}
        if ZONES[i % len(ZONES)]:
            spec["timeZone"] = ZONES[i % len(ZONES)]
        status: dict[str, Any] = {"lastScheduleTime": z(NOW - timedelta(hours=1 + i % 48))}
        if i % 11 == 0:
            status["active"] = [{"name": f"cj-{i}-running"}]
        obj = {"apiVersion": "batch/v1", "kind": "CronJob",
               "metadata": {"name": f"cj-{i}", "namespace": namespace, "uid": f"uid-{i}",
                            "creationTimestamp": "2026-01-01T00:00:00Z"},
               "spec": spec, "status": status}
        live.append(obj)
        want = copy.deepcopy({k: v for k, v in obj.items() if k != "status"})
        del want["metadata"]["uid"], want["metadata"]["creationTimestamp"]
        key, value = EDITS[i % len(EDITS)]
        want["spec"][key] = value
        edits.append(want)
    return live, edits


def cronctl(*args: str) -> list[str]:
    """The command, through sh so that diff's exit 1 (a CronJob acts now) is not taken for a failure."""
    cmd = [sys.executable, "-m", "cronctl", "diff", *args, "-o", "json"]
    return ["sh", "-c", '"$@"; rc=$?; [ "$rc" -le 1 ]', "sh", *cmd]


def report(what: str, wall: float, rss: int, proc: subprocess.CompletedProcess[str], goal: float) -> None:
    import os
    import re

    doc = json.loads(proc.stdout)
    acting = sum(1 for c in doc["cronjobs"] if c["actsNow"])
    cpu = sum(float(m) for m in re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)", proc.stderr or ""))
    load = os.getloadavg()[0]
    print(f"{what}: {len(doc['cronjobs'])} CronJobs in {wall:.2f} s wall, {cpu:.2f} s CPU (goal < {goal:.0f} s), "
          f"peak RSS {rss / 1024:.0f} MiB, {acting} act now"
          + (f", {doc['apiRequests']} API requests" if doc["apiRequests"] is not None else "")
          + f" (load average {load:.1f} on {os.cpu_count()} CPUs)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=500)
    ap.add_argument("--kubeconfig", help="also measure against this cluster (a new namespace, deleted after)")
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        live, edits = fleet(a.count, "bench-diff")
        dump, change = Path(tmp) / "dump.json", Path(tmp) / "change.yaml"
        dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": live}))
        change.write_text(yaml.safe_dump_all(edits))
        wall, rss, proc = timed(cronctl("-f", str(change), "--from-dump", str(dump), "--now", z(NOW)),
                                stdout=subprocess.PIPE)
        report("offline (--from-dump)", wall, rss, proc, 2)
        if a.kubeconfig:
            measure_live(a, live, edits, change)
    return 0


def measure_live(a: argparse.Namespace, live: list[dict[str, Any]], edits: list[dict[str, Any]], change: Path) -> None:
    from kubernetes import client, config

    api = config.new_client_from_config(config_file=a.kubeconfig)
    api.rest_client.pool_manager.connection_pool_kw["maxsize"] = a.workers * 2
    core, batch = client.CoreV1Api(api), client.BatchV1Api(api)
    ns = f"bench-diff-{int(time.time())}"
    core.create_namespace({"metadata": {"name": ns}})
    try:
        bodies = []
        for o in live:  # the live ones, before the edit (the controller writes their status itself)
            b = {k: copy.deepcopy(v) for k, v in o.items() if k != "status"}
            b["metadata"] = {"name": o["metadata"]["name"], "namespace": ns}
            bodies.append(b)
        parallel("create CronJobs", lambda b: batch.create_namespaced_cron_job(ns, b), bodies, a.workers)
        live_change = change.with_name("live.yaml")
        live_change.write_text(yaml.safe_dump_all([{**e, "metadata": {**e["metadata"], "namespace": ns}}
                                                   for e in edits]))
        # created by the Python client (field manager OpenAPI-Generator): the apply takes the fields over
        args = ["-f", str(live_change), "--kubeconfig", a.kubeconfig, "--force-conflicts"]
        wall, rss, proc = timed(cronctl(*args), stdout=subprocess.PIPE)
        report("live, --server-side (1 list + 1 dry-run apply per CronJob)", wall, rss, proc, 10)
        wall, rss, proc = timed(cronctl(*args, "--no-server-side"), stdout=subprocess.PIPE)
        report("live, --no-server-side (1 list)", wall, rss, proc, 10)
    finally:
        if not a.keep:
            core.delete_namespace(ns)


if __name__ == "__main__":
    raise SystemExit(main())
