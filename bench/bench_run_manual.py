#!/usr/bin/env python3
"""Benchmark `cronctl run-manual` on the real local control plane (scripts/cluster up;
eval "$(scripts/cluster env)").

For each Job duration (default 5 s and 60 s) it creates a CronJob in a fresh namespace
``cronctl-bench-rm-<random>`` (deleted afterwards), runs ``cronctl run-manual --yes --settle S
-o json`` once, and prints from the run record:

* how long the CronJob stayed suspended, the Job's own run time (startTime -> completionTime, 1 s
  precision in the API) and the difference (target: <= settle + 5 s);
* the number of API requests of the whole run — it must not grow with the Job's duration, since
  the wait watches instead of polling.

Prints numbers, asserts nothing. Run it once; the machine is shared.

    .venv/bin/python bench/bench_run_manual.py [--settle 15] [--durations 5,60]
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import subprocess
import sys
import tempfile


def kubectl(*args: str, stdin: str | None = None) -> str:
    return subprocess.run(["kubectl", *args], input=stdin, text=True, check=True,
                          stdout=subprocess.PIPE).stdout


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--settle", type=float, default=15.0)
    ap.add_argument("--durations", default="5,60")
    a = ap.parse_args()
    if not os.environ.get("KUBECONFIG"):
        print("set KUBECONFIG first: eval \"$(scripts/cluster env)\"", file=sys.stderr)
        return 2
    ns = f"cronctl-bench-rm-{secrets.token_hex(3)}"
    kubectl("create", "namespace", ns)
    rows = []
    try:
        for d in [float(x) for x in a.durations.split(",")]:
            name = f"bench-{int(d)}s"
            cj = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name, "namespace": ns},
                  "spec": {"schedule": "0 0 1 1 *", "concurrencyPolicy": "Forbid", "jobTemplate": {"spec": {
                      "backoffLimit": 0, "template": {
                          "metadata": {"annotations": {"sim.cronctl.dev/duration-seconds": str(d)}},
                          "spec": {"restartPolicy": "Never",
                                   "containers": [{"name": "main", "image": "busybox:1.36"}]}}}}}}
            kubectl("apply", "-f", "-", stdin=json.dumps(cj))
            with tempfile.TemporaryDirectory() as runs:
                r = subprocess.run([sys.executable, "-m", "cronctl", "run-manual", name, "-n", ns, "--yes",
                                    "--settle", f"{a.settle}s", "--run-dir", runs, "-o", "json"],
                                   text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   stdin=subprocess.DEVNULL)
            if r.returncode != 0:
                print(r.stderr, file=sys.stderr)
                return 1
            rec = json.loads(r.stdout)
            job_s = rec["suspended_seconds"] - rec["suspended_beyond_job_seconds"]
            rows.append((d, rec["suspended_seconds"], job_s, rec["suspended_beyond_job_seconds"],
                         rec["api_requests"]))
    finally:
        kubectl("delete", "namespace", ns, "--wait=false")
    print(f"settle = {a.settle:g}s (target: suspended beyond the Job's run time <= settle + 5s)")
    print(f"{'job':>6} {'suspended':>10} {'job ran':>8} {'beyond':>8} {'target':>7} {'requests':>9}")
    for d, sus, job_s, beyond, req in rows:
        print(f"{d:>5g}s {sus:>9.1f}s {job_s:>7.0f}s {beyond:>7.1f}s {a.settle + 5:>6g}s {req:>9}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
