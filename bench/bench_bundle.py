#!/usr/bin/env python3
"""Benchmark `cronctl bundle` against `kubectl get cronjob,jobs,pods,events -o json` on the real
local control plane (scripts/cluster up; eval "$(scripts/cluster env)").

Setup, in a fresh namespace ``cronctl-bench-<random>`` (deleted afterwards unless --keep):

* one CronJob, suspended (nothing new is scheduled) with history limits high enough that the
  controller keeps every Job;
* 2,000 Jobs owned by it, named and annotated as the controller names scheduled Jobs (one every
  5 minutes back from now), each with ``completions: 0`` so the real Job controller marks it
  Complete at once without creating pods (no UnexpectedJob storm from unfinished Jobs);
* 4,000 pods, two per Job (ownerReference to the Job, not as controller, without the Job's
  selector labels, so the Job controller leaves them alone), bound to the Node
  ``cronctl-bench-absent`` that this script registers and that no kubelet serves: the pod
  simulator only runs pods on its own node, so these stay Pending and never run (tolerating
  every taint, so the node-lifecycle controller does not evict them; the Node object keeps the
  pod GC from deleting them as orphans). No container ran, so there are no logs to read;
* 10,000 core/v1 Events on the CronJob, the Jobs and the pods.

All objects are created directly through the API in parallel batches. Then, each twice,
alternating: ``kubectl get cronjob,jobs,pods,events -n NS -o json`` and ``cronctl bundle CJ -n NS
--out DIR -o json``, both under ``/usr/bin/time -v`` (wall time, peak RSS). Requests: cronctl's
own count (bundle.json ``collected.request_count``), kubectl's from one extra ``-v=6`` run.
Prints the numbers and the ratio (target: cronctl <= 1.5 x kubectl's time, memory bounded).

Run it once; the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from _shared import kubectl_path, parallel, timed

ROOT = Path(__file__).resolve().parents[1]
NODE = "cronctl-bench-absent"
CJ = "bench-orders"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=2000)
    ap.add_argument("--pods-per-job", type=int, default=2)
    ap.add_argument("--events", type=int, default=10000)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--keep", action="store_true", help="keep the namespace and node afterwards")
    ap.add_argument("--reuse", metavar="NS", help="measure an existing bench namespace (kept with --keep)")
    args = ap.parse_args()
    kubeconfig = os.environ.get("KUBECONFIG")
    if not kubeconfig:
        raise SystemExit('KUBECONFIG is not set: run eval "$(scripts/cluster env)" first')

    from kubernetes import client, config

    api = config.new_client_from_config(config_file=kubeconfig)
    api.rest_client.pool_manager.connection_pool_kw["maxsize"] = args.workers * 2
    core, batch = client.CoreV1Api(api), client.BatchV1Api(api)
    if args.reuse:
        return measure(args, kubeconfig, args.reuse, created=None)
    ns = f"cronctl-bench-{secrets.token_hex(3)}"
    print(f"namespace {ns}", file=sys.stderr)
    core.create_namespace({"metadata": {"name": ns, "labels": {"created-by": "cronctl-bench"}}})
    try:
        core.create_node({"metadata": {"name": NODE, "labels": {"created-by": "cronctl-bench"}}})
    except client.ApiException as e:
        if e.status != 409:
            raise
    try:
        return run(args, kubeconfig, api, core, batch, ns)
    finally:
        if not args.keep:
            # no kubelet serves the bench node: pods must go with grace period 0, or the
            # namespace stays Terminating while the node exists
            core.delete_collection_namespaced_pod(ns, grace_period_seconds=0)
            core.delete_namespace(ns, propagation_policy="Background")
            try:
                core.delete_node(NODE)
            except client.ApiException:
                pass
            print(f"deleted namespace {ns} and node {NODE}", file=sys.stderr)


def run(args: argparse.Namespace, kubeconfig: str, api: Any, core: Any, batch: Any, ns: str) -> int:
    # wait for the namespace's default ServiceAccount (pods are refused before it exists)
    for _ in range(60):
        if core.list_namespaced_service_account(ns, field_selector="metadata.name=default").items:
            break
        time.sleep(0.5)
    now = datetime.now(timezone.utc).replace(second=0, microsecond=0)
    now -= timedelta(minutes=now.minute % 5)
    pod_spec = {"restartPolicy": "Never", "containers": [{
        "name": "sync", "image": "registry.example/orders-sync:2.0",
        "env": [{"name": "API_TOKEN", "value": "bench-token-value"}, {"name": "LOG_LEVEL", "value": "info"}]}]}
    cj = json.loads(batch.create_namespaced_cron_job(ns, {
        "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": CJ},
        "spec": {"schedule": "*/5 * * * *", "suspend": True, "concurrencyPolicy": "Forbid",
                 "successfulJobsHistoryLimit": 100000, "failedJobsHistoryLimit": 100000,
                 "jobTemplate": {"spec": {"template": {"spec": pod_spec}}}}}, _preload_content=False).data)
    owner = {"apiVersion": "batch/v1", "kind": "CronJob", "name": CJ, "uid": cj["metadata"]["uid"],
             "controller": True, "blockOwnerDeletion": True}
    print("creating objects ...", file=sys.stderr)

    def make_job(i: int) -> dict[str, Any]:
        slot = now - timedelta(minutes=5 * (args.jobs - i))
        name = f"{CJ}-{int(slot.timestamp()) // 60}"
        body = {"apiVersion": "batch/v1", "kind": "Job",
                "metadata": {"name": name, "ownerReferences": [owner], "annotations": {
                    "batch.kubernetes.io/cronjob-scheduled-timestamp": slot.strftime("%Y-%m-%dT%H:%M:%SZ")}},
                "spec": {"completions": 0, "template": {"spec": pod_spec}}}
        return dict(json.loads(batch.create_namespaced_job(ns, body, _preload_content=False).data))

    jobs = parallel("jobs", make_job, list(range(args.jobs)), args.workers)

    def make_pod(ij: tuple[int, dict[str, Any]]) -> dict[str, Any]:
        k, job = ij
        jm = job["metadata"]
        body = {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": f"{jm['name']}-p{k}",
                             "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": jm["name"],
                                                  "uid": jm["uid"], "controller": False}]},
                "spec": {**pod_spec, "nodeName": NODE, "tolerations": [{"operator": "Exists"}]}}
        return dict(json.loads(core.create_namespaced_pod(ns, body, _preload_content=False).data))

    pods = parallel("pods", make_pod, [(k, j) for j in jobs for k in range(args.pods_per_job)], args.workers)

    targets: list[tuple[str, dict[str, Any], str, str]] = []
    for j in jobs:
        n = j["metadata"]["name"]
        targets.append(("CronJob", cj, "SuccessfulCreate", f"Created job {n}"))
        targets.append(("Job", j, "Completed", "Job completed"))
        targets.append(("CronJob", cj, "SawCompletedJob", f"Saw completed job: {n}, condition: Complete"))
    for p in pods:
        targets.append(("Pod", p, "Scheduled", f"Successfully assigned {ns}/{p['metadata']['name']} to {NODE}"))
    targets = (targets * (args.events // max(1, len(targets)) + 1))[: args.events]
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")

    def make_event(it: tuple[int, tuple[str, dict[str, Any], str, str]]) -> None:
        i, (kind, obj, reason, msg) = it
        om = obj["metadata"]
        core.create_namespaced_event(ns, {
            "apiVersion": "v1", "kind": "Event", "metadata": {"name": f"{om['name']}.{i:08x}"},
            "involvedObject": {"apiVersion": "v1" if kind == "Pod" else "batch/v1", "kind": kind,
                               "name": om["name"], "namespace": ns, "uid": om["uid"]},
            "reason": reason, "message": msg, "type": "Normal", "count": 1,
            "firstTimestamp": stamp, "lastTimestamp": stamp,
            "source": {"component": "cronctl-bench"}}, _preload_content=False)

    parallel("events", make_event, list(enumerate(targets)), args.workers)

    # let the Job controller finish marking the Jobs Complete (it has its own QPS limit)
    t0 = time.monotonic()
    while True:
        items = json.loads(batch.list_namespaced_job(ns, _preload_content=False).data)["items"]
        done = sum(1 for j in items if any(c["type"] == "Complete" and c["status"] == "True"
                                           for c in (j.get("status") or {}).get("conditions") or []))
        if done == len(items) or time.monotonic() - t0 > 300:
            break
        time.sleep(2)
    print(f"  jobs complete: {done}/{len(items)} after {time.monotonic() - t0:.0f}s; settling 10s", file=sys.stderr)
    time.sleep(10)
    return measure(args, kubeconfig, ns, created=(args.jobs, len(pods), args.events))


def measure(args: argparse.Namespace, kubeconfig: str, ns: str, created: tuple[int, int, int] | None) -> int:

    kubectl = kubectl_path()
    kubectl_cmd = [kubectl, "--kubeconfig", kubeconfig, "-n", ns, "get", "cronjob,jobs,pods,events", "-o", "json"]
    tmp = Path(tempfile.mkdtemp(prefix="cronctl-bench-"))
    results: dict[str, list[tuple[float, int]]] = {"kubectl": [], "cronctl": []}
    requests = None
    doc: dict[str, Any] = {}
    for rnd in range(2):
        with open(tmp / f"kubectl-{rnd}.json", "w") as fh:
            wall, rss, _ = timed(kubectl_cmd, stdout=fh)
        results["kubectl"].append((wall, rss))
        out = tmp / f"bundle-{rnd}"
        wall, rss, r = timed([sys.executable, "-m", "cronctl", "bundle", CJ, "-n", ns, "--kubeconfig", kubeconfig,
                              "--out", str(out), "-o", "json"], stdout=subprocess.PIPE)
        results["cronctl"].append((wall, rss))
        doc = json.loads((out / "bundle.json").read_text())
        requests = doc["collected"]["request_count"]
    # kubectl's request count, from its own request log (a separate run: logging costs time)
    r = subprocess.run([*kubectl_cmd, "-v=6"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    k_requests = len(re.findall(r'verb="(?:GET|POST)"|\b(?:GET|POST) https?://\S+ \d{3}', r.stderr))
    counts = doc["counts"]
    size = sum(p.stat().st_size for p in (tmp / "bundle-1").rglob("*") if p.is_file())
    k_best = min(w for w, _ in results["kubectl"])
    c_best = min(w for w, _ in results["cronctl"])
    print()
    print(f"objects: {counts['jobs']} Jobs, {counts['pods']} pods, {counts['events']} events "
          f"(created: {created or 'earlier'}); logs read: {counts['logs']}")
    print(f"{'':10} {'run 1 s':>8} {'run 2 s':>8} {'best s':>7} {'peak RSS MiB':>13} {'requests':>9}")
    for name, req in (("kubectl", k_requests), ("cronctl", requests)):
        runs = results[name]
        print(f"{name:10} {runs[0][0]:8.2f} {runs[1][0]:8.2f} {min(w for w, _ in runs):7.2f} "
              f"{max(r for _, r in runs) / 1024:13.0f} {req!s:>9}")
    print(f"ratio cronctl/kubectl (best wall time): {c_best / k_best:.2f}x (target <= 1.5x)")
    print(f"bundle size on disk: {size / 1e6:.1f} MB in {sum(1 for _ in (tmp / 'bundle-1').rglob('*'))} entries")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
