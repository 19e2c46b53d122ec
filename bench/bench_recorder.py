#!/usr/bin/env python3
"""Benchmark: `cronctl record` on a loaded cluster (issue 27, "Performance"): time to the first full
sync, rows per second, and resident memory, on SQLite or PostgreSQL.

    KUBECONFIG=/tmp/cronctl-cluster/kubeconfig .venv/bin/python bench/bench_recorder.py \\
        [--cronjobs 1000] [--jobs 20000] [--events 50000] [--url URL] [--steady 60]

Needs a running control plane (scripts/cluster up). Creates, in a namespace of its own, N suspended
CronJobs, M Jobs owned by them (``spec.suspend: true``: the Job controller makes no pods, so the
machine runs no workload) and K Events about them, through the API (8 threads). Then runs, as the
user does (a whole process, its own peak RSS):

- ``cronctl record -n NS --once``: the first full sync (lists, writes every row);
- ``cronctl record -n NS`` for ``--steady`` seconds while nothing changes: its peak resident memory
  (the writer's queue drained, the watches open).

Prints the creation rate, then for each run its wall time, rows written (from its status line),
rows per second and peak RSS. Deletes the namespace at the end. Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _create(api: Any, ns: str, n_cj: int, n_jobs: int, n_events: int) -> float:
    from kubernetes import client

    batch, core = client.BatchV1Api(api), client.CoreV1Api(api)
    pod = {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox:1.36", "args": ["sync"]}]}
    t0 = time.perf_counter()

    def cronjob(i: int) -> tuple[str, str]:
        body = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": f"cj-{i:05d}"},
                "spec": {"schedule": f"{i % 60} * * * *", "suspend": True, "concurrencyPolicy": "Forbid",
                         "jobTemplate": {"spec": {"template": {"spec": pod}}}}}
        r = batch.create_namespaced_cron_job(ns, body, _preload_content=False)
        import json

        return f"cj-{i:05d}", json.loads(r.data)["metadata"]["uid"]

    with ThreadPoolExecutor(8) as ex:
        owners = list(ex.map(cronjob, range(n_cj)))

    def job(k: int) -> None:
        name, uid = owners[k % len(owners)]
        minutes = 29_000_000 + k
        body = {"apiVersion": "batch/v1", "kind": "Job",
                "metadata": {"name": f"{name}-{minutes}",
                             "annotations": {"batch.kubernetes.io/cronjob-scheduled-timestamp":
                                             time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(minutes * 60))},
                             "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob", "name": name,
                                                  "uid": uid, "controller": True}]},
                "spec": {"suspend": True, "template": {"spec": pod}}}
        batch.create_namespaced_job(ns, body, _preload_content=False)

    def event(k: int) -> None:
        name, uid = owners[k % len(owners)]
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        body = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": f"e-{k}-{uuid.uuid4().hex[:6]}"},
                "involvedObject": {"kind": "CronJob", "name": name, "namespace": ns, "uid": uid,
                                   "apiVersion": "batch/v1"},
                "reason": "SuccessfulCreate" if k % 3 else "JobAlreadyActive", "message": f"bench event {k}",
                "type": "Normal", "firstTimestamp": now, "lastTimestamp": now, "count": 1,
                "source": {"component": "cronjob-controller"}}
        core.create_namespaced_event(ns, body, _preload_content=False)

    with ThreadPoolExecutor(8) as ex:
        list(ex.map(job, range(n_jobs)))
        list(ex.map(event, range(n_events)))
    return time.perf_counter() - t0


def _vm_hwm(pid: int) -> float:
    """The peak resident memory of a running process so far (MiB), from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _run(args: list[str], *, seconds: float | None = None) -> tuple[float, float, str]:
    """(wall s, peak RSS MiB, stderr) of `cronctl ARGS` in its own process; SIGTERM after ``seconds``.
    The peak RSS is the process's own: os.wait4's for a run that ends by itself, /proc's VmHWM just
    before the SIGTERM for one that is stopped."""
    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-m", "cronctl", *args], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert p.stderr is not None
    if seconds is not None:
        time.sleep(seconds)
        rss = _vm_hwm(p.pid)
        p.send_signal(signal.SIGTERM)
        err = p.communicate()[1]
        return time.perf_counter() - t0, rss, err
    err = p.stderr.read()
    _pid, _status, usage = os.wait4(p.pid, 0)
    p.returncode = 0
    return time.perf_counter() - t0, usage.ru_maxrss / 1024, err


def main() -> None:
    from kubernetes import client, config

    ap = argparse.ArgumentParser()
    ap.add_argument("--cronjobs", type=int, default=1000)
    ap.add_argument("--jobs", type=int, default=20_000)
    ap.add_argument("--events", type=int, default=50_000)
    ap.add_argument("--url", default=None, help="the ledger (default: a SQLite file in a temporary directory)")
    ap.add_argument("--steady", type=float, default=60.0)
    a = ap.parse_args()
    api = config.new_client_from_config()
    core = client.CoreV1Api(api)
    ns = f"bench-recorder-{uuid.uuid4().hex[:6]}"
    core.create_namespace({"metadata": {"name": ns}})
    tmp = tempfile.mkdtemp(prefix="cronctl-bench-recorder-")
    url = a.url or f"sqlite:///{tmp}/ledger.sqlite"
    try:
        secs = _create(api, ns, a.cronjobs, a.jobs, a.events)
        n = a.cronjobs + a.jobs + a.events
        print(f"created {a.cronjobs} CronJobs, {a.jobs} Jobs, {a.events} Events in {secs:.0f} s ({n / secs:.0f}/s)")
        wall, rss, err = _run(["record", "-n", ns, "--ledger", url, "--once", "--no-lease"])
        rows = int((re.findall(r"(\d+) rows written", err) or ["0"])[-1])
        print(f"first full sync (--once): {wall:.1f} s, {rows:,} rows, {rows / wall:,.0f} rows/s, peak RSS {rss:.0f} MiB")
        wall, rss, err = _run(["record", "-n", ns, "--ledger", url, "--no-lease", "--status-every", "10s"],
                              seconds=a.steady)
        rows = int((re.findall(r"(\d+) rows written", err) or ["0"])[-1])
        print(f"recording {a.steady:.0f} s (list again, then watch): {rows:,} rows, peak RSS {rss:.0f} MiB")
    finally:
        core.delete_namespace(ns)
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
