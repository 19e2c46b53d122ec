#!/usr/bin/env python3
"""Benchmark `cronctl history -A -o json` against `kubectl get cronjobs,jobs,events -A -o json` on
the real local control plane (scripts/cluster up; eval "$(scripts/cluster env)").

Setup, in 10 fresh namespaces ``cronctl-bench-h<i>-<random>`` (deleted afterwards unless --keep):

* 1,000 CronJobs (100 per namespace), suspended (nothing new is scheduled), with mixed schedules
  (``*/5 * * * *``, ``0 * * * *``, ``*/15 * * * *``, some in ``timeZone: Europe/Berlin``), mixed
  concurrency policies and history limits high enough that the controller keeps every Job;
* 20,000 Jobs (20 per CronJob) owned by their CronJob (controller ownerReference with its uid),
  named and annotated as the controller names scheduled Jobs (``<cronjob>-<unix minutes>``,
  ``batch.kubernetes.io/cronjob-scheduled-timestamp`` in the CronJob's zone) for its 20 most
  recent slots, each with ``completions: 0`` so the real Job controller marks it Complete at once
  without creating pods;
* 50,000 core/v1 Events on the CronJobs (SuccessfulCreate "Created job X", SawCompletedJob,
  JobAlreadyActive) with first/last timestamps at their slots.

No pod is created, so no node is needed. The controllers add events of their own (the Job
controller's ``Completed`` on every Job, the CronJob controller's ``UnexpectedJob`` for Jobs it sees
before they complete); the counts printed are what kubectl read.

All objects are created directly through the API in parallel batches. Then, each twice,
alternating: ``kubectl get cronjobs,jobs,events -A -o json`` and ``cronctl history -A -o json``,
both under ``/usr/bin/time -v`` (wall time, peak RSS; without /usr/bin/time: time.monotonic and
getrusage(RUSAGE_CHILDREN) deltas). Prints the numbers and the ratio (target: cronctl <= 1.5 x
kubectl's time), cronctl's output size, slot count and verdicts.

Run it once; the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import sys
import tempfile
import time
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from _shared import TIME_V, kubectl_path, parallel, timed

ROOT = Path(__file__).resolve().parents[1]
SCHED_TS = "batch.kubernetes.io/cronjob-scheduled-timestamp"
#: (schedule, period in minutes, timeZone); Europe/Berlin is a whole-hour offset, so its slots are
#: the same UTC instants
SCHEDULES = [("*/5 * * * *", 5, None), ("0 * * * *", 60, None), ("*/15 * * * *", 15, None),
             ("*/5 * * * *", 5, "Europe/Berlin"), ("0 * * * *", 60, "Europe/Berlin")]
POLICIES = ["Forbid", "Allow", "Replace"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cronjobs", type=int, default=1000, help="CronJobs in total (default 1000)")
    ap.add_argument("--jobs-per-cronjob", type=int, default=20, help="Jobs per CronJob (default 20)")
    ap.add_argument("--events", type=int, default=50000, help="Events in total, on the CronJobs (default 50000)")
    ap.add_argument("--namespaces", type=int, default=10, help="namespaces to spread them over (default 10)")
    ap.add_argument("--workers", type=int, default=8, help="parallel create requests (default 8)")
    ap.add_argument("--wait-complete", type=int, default=900, metavar="SECONDS",
                    help="how long to wait for the Job controller to mark the Jobs Complete (default 900)")
    ap.add_argument("--keep", action="store_true", help="keep the namespaces afterwards")
    ap.add_argument("--kubeconfig", default=os.environ.get("KUBECONFIG"), help="default: $KUBECONFIG")
    args = ap.parse_args()
    if not args.kubeconfig:
        raise SystemExit('no --kubeconfig and KUBECONFIG is not set: run eval "$(scripts/cluster env)" first')

    from kubernetes import client, config

    api = config.new_client_from_config(config_file=args.kubeconfig)
    api.rest_client.pool_manager.connection_pool_kw["maxsize"] = args.workers * 2
    core, batch = client.CoreV1Api(api), client.BatchV1Api(api)
    tag = secrets.token_hex(3)
    nss = [f"cronctl-bench-h{i}-{tag}" for i in range(args.namespaces)]
    print(f"namespaces {nss[0]} .. {nss[-1]}", file=sys.stderr)
    created: list[str] = []
    try:
        for ns in nss:
            core.create_namespace({"metadata": {"name": ns, "labels": {"created-by": "cronctl-bench"}}})
            created.append(ns)
        return run(args, core, batch, nss)
    finally:
        if not args.keep:
            for ns in created:
                try:
                    core.delete_namespace(ns, propagation_policy="Background")
                except client.ApiException as e:
                    print(f"could not delete namespace {ns}: {e.status} {e.reason}", file=sys.stderr)
            print(f"deleting namespaces {', '.join(created)} (in the background)", file=sys.stderr)


def run(args: argparse.Namespace, core: Any, batch: Any, nss: list[str]) -> int:
    t_setup = time.monotonic()
    now = datetime.now(timezone.utc).replace(second=0, microsecond=0)
    pod_spec = {"restartPolicy": "Never", "containers": [{
        "name": "sync", "image": "registry.example/orders-sync:2.0",
        "env": [{"name": "API_TOKEN", "value": "bench-token-value"}, {"name": "LOG_LEVEL", "value": "info"}]}]}

    # -- CronJobs -----------------------------------------------------------------------------
    def make_cj(i: int) -> dict[str, Any]:
        ns = nss[i % len(nss)]
        expr, _period, tz = SCHEDULES[i % len(SCHEDULES)]
        spec: dict[str, Any] = {
            "schedule": expr, "suspend": True, "concurrencyPolicy": POLICIES[i % len(POLICIES)],
            "successfulJobsHistoryLimit": 100000, "failedJobsHistoryLimit": 100000,
            "jobTemplate": {"spec": {"template": {"spec": pod_spec}}}}
        if tz:
            spec["timeZone"] = tz
        body = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": f"bench-h-{i:05d}"}, "spec": spec}
        cj = json.loads(batch.create_namespaced_cron_job(ns, body, _preload_content=False).data)
        return {"i": i, "ns": ns, "name": cj["metadata"]["name"], "uid": cj["metadata"]["uid"]}

    print("creating objects ...", file=sys.stderr)
    cjs = parallel("cronjobs", make_cj, list(range(args.cronjobs)), args.workers)

    # -- Jobs: the CronJob's most recent slots, oldest first -----------------------------------
    def slots_of(i: int) -> list[datetime]:
        _expr, period, _tz = SCHEDULES[i % len(SCHEDULES)]
        epoch_min = int(now.timestamp()) // 60
        last = datetime.fromtimestamp((epoch_min - epoch_min % period) * 60, timezone.utc)
        n = args.jobs_per_cronjob
        return [last - timedelta(minutes=period * (n - 1 - k)) for k in range(n)]

    def stamp(t: datetime, tz: str | None) -> str:
        # as the controller writes it: the slot in the CronJob's zone, RFC 3339 with offset
        return t.strftime("%Y-%m-%dT%H:%M:%SZ") if tz is None else t.astimezone(ZoneInfo(tz)).isoformat()

    job_items: list[tuple[dict[str, Any], datetime]] = [(cj, t) for cj in cjs for t in slots_of(cj["i"])]

    def make_job(it: tuple[dict[str, Any], datetime]) -> str:
        cj, slot = it
        name = f"{cj['name']}-{int(slot.timestamp()) // 60}"
        owner = {"apiVersion": "batch/v1", "kind": "CronJob", "name": cj["name"], "uid": cj["uid"],
                 "controller": True, "blockOwnerDeletion": True}
        body = {"apiVersion": "batch/v1", "kind": "Job",
                "metadata": {"name": name, "ownerReferences": [owner],
                             "annotations": {SCHED_TS: stamp(slot, SCHEDULES[cj["i"] % len(SCHEDULES)][2])}},
                "spec": {"completions": 0, "template": {"spec": pod_spec}}}
        batch.create_namespaced_job(cj["ns"], body, _preload_content=False)
        return name

    parallel("jobs", make_job, job_items, args.workers)

    # -- Events on the CronJobs ---------------------------------------------------------------
    def templates(cj: dict[str, Any]) -> list[tuple[str, str, datetime, datetime, int]]:
        out = []
        slots = slots_of(cj["i"])
        for k, t in enumerate(slots):
            job = f"{cj['name']}-{int(t.timestamp()) // 60}"
            out.append(("SuccessfulCreate", f"Created job {job}", t, t, 1))
            out.append(("SawCompletedJob", f"Saw completed job: {job}, condition: Complete",
                        t + timedelta(seconds=40), t + timedelta(seconds=40), 1))
            if k % 2 == 1:
                out.append(("JobAlreadyActive",
                            "Not starting job because prior execution is running and concurrency policy is Forbid",
                            t + timedelta(seconds=10), t + timedelta(seconds=30), 3))
        return out

    ev_items: list[tuple[int, dict[str, Any], tuple[str, str, datetime, datetime, int]]] = []
    if cjs:
        per, extra = divmod(args.events, len(cjs))
        for cj in cjs:
            want = per + (1 if cj["i"] < extra else 0)
            tpl = templates(cj)
            for k in range(want):
                ev_items.append((k, cj, tpl[k % len(tpl)]))

    def z(t: datetime) -> str:
        return t.strftime("%Y-%m-%dT%H:%M:%SZ")

    def make_event(it: tuple[int, dict[str, Any], tuple[str, str, datetime, datetime, int]]) -> None:
        k, cj, (reason, msg, first, last, count) = it
        core.create_namespaced_event(cj["ns"], {
            "apiVersion": "v1", "kind": "Event", "metadata": {"name": f"{cj['name']}.{k:08x}"},
            "involvedObject": {"apiVersion": "batch/v1", "kind": "CronJob", "name": cj["name"],
                               "namespace": cj["ns"], "uid": cj["uid"]},
            "reason": reason, "message": msg, "type": "Normal", "count": count,
            "firstTimestamp": z(first), "lastTimestamp": z(last),
            "source": {"component": "cronjob-controller"}}, _preload_content=False)

    parallel("events", make_event, ev_items, args.workers)
    t_create = time.monotonic() - t_setup

    # -- let the Job controller mark the Jobs Complete (it has its own QPS limit) -----------------
    t0 = time.monotonic()
    total = len(job_items)
    while True:
        done = 0
        for ns in nss:
            cont = None
            while True:
                page = json.loads(batch.list_namespaced_job(ns, limit=1000, _continue=cont,
                                                            _preload_content=False).data)
                done += sum(1 for j in page["items"] if any(
                    c.get("type") == "Complete" and c.get("status") == "True"
                    for c in (j.get("status") or {}).get("conditions") or []))
                cont = page["metadata"].get("continue")
                if not cont:
                    break
        if done >= total or time.monotonic() - t0 > args.wait_complete:
            break
        print(f"  jobs complete: {done}/{total} after {time.monotonic() - t0:.0f}s", file=sys.stderr)
        time.sleep(10)
    t_wait = time.monotonic() - t0
    print(f"  jobs complete: {done}/{total} after {t_wait:.0f}s; settling 10s", file=sys.stderr)
    time.sleep(10)
    return measure(args, created=(len(cjs), total, len(ev_items)), t_create=t_create, t_wait=t_wait,
                   complete=done)


def measure(args: argparse.Namespace, *, created: tuple[int, int, int], t_create: float, t_wait: float,
            complete: int) -> int:
    kubectl = kubectl_path()
    kubectl_cmd = [kubectl, "--kubeconfig", args.kubeconfig, "get", "cronjobs,jobs,events", "-A", "-o", "json"]
    cronctl_cmd = [sys.executable, "-m", "cronctl", "history", "-A", "-o", "json", "--kubeconfig", args.kubeconfig]
    tmp = Path(tempfile.mkdtemp(prefix="cronctl-bench-h-"))
    results: dict[str, list[tuple[float, int]]] = {"kubectl": [], "cronctl": []}
    stderr_c = ""
    try:
        for rnd in range(2):
            with open(tmp / f"kubectl-{rnd}.json", "w") as fh:
                wall, rss, _ = timed(kubectl_cmd, stdout=fh)
            results["kubectl"].append((wall, rss))
            with open(tmp / f"cronctl-{rnd}.json", "w") as fh:
                wall, rss, r = timed(cronctl_cmd, stdout=fh)
            results["cronctl"].append((wall, rss))
            stderr_c = r.stderr
        kdoc = json.loads((tmp / "kubectl-1.json").read_text())
        kinds = Counter(str(o.get("kind")) for o in kdoc.get("items") or [])
        k_reasons = Counter(str(o.get("reason")) for o in kdoc.get("items") or [] if o.get("kind") == "Event")
        k_size = (tmp / "kubectl-1.json").stat().st_size
        del kdoc
        c_size = (tmp / "cronctl-1.json").stat().st_size
        doc = json.loads((tmp / "cronctl-1.json").read_text())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    hist = doc.get("cronjobs") or []
    slots = sum(len(h.get("slots") or []) for h in hist)
    verdicts: Counter[str] = Counter()
    for h in hist:
        for v, n in (h.get("counts") or {}).items():
            verdicts[v] += n
    errors = [f"{h['namespace']}/{h['name']}: {h['error']}" for h in hist if h.get("error")]
    manual = sum(len(h.get("manual_runs") or []) for h in hist)
    limited = Counter(str((h.get("window") or {}).get("limited_by")) for h in hist)
    notes = Counter(n for h in hist for n in h.get("notes") or [])

    how = "/usr/bin/time -v" if TIME_V.exists() else "time.monotonic + getrusage(RUSAGE_CHILDREN) max"
    k_best = min(w for w, _ in results["kubectl"])
    c_best = min(w for w, _ in results["cronctl"])
    print()
    print(f"created: {created[0]} CronJobs, {created[1]} Jobs, {created[2]} events in {t_create:.0f}s "
          f"({args.namespaces} namespaces); Jobs Complete: {complete}/{created[1]} after {t_wait:.0f}s more")
    print(f"kubectl read: {kinds.get('CronJob', 0)} CronJobs, {kinds.get('Job', 0)} Jobs, "
          f"{kinds.get('Event', 0)} events (cluster-wide; by reason: "
          + ", ".join(f"{r} {n}" for r, n in k_reasons.most_common()) + ")")
    print(f"measured with {how}")
    print(f"{'':10} {'run 1 s':>8} {'run 2 s':>8} {'best s':>7} {'peak RSS MiB':>13} {'stdout MB':>10}")
    for name, size in (("kubectl", k_size), ("cronctl", c_size)):
        runs = results[name]
        print(f"{name:10} {runs[0][0]:8.2f} {runs[1][0]:8.2f} {min(w for w, _ in runs):7.2f} "
              f"{max(r for _, r in runs) / 1024:13.0f} {size / 1e6:10.1f}")
    print(f"ratio cronctl/kubectl (best wall time): {c_best / k_best:.2f}x (target <= 1.5x)")
    print(f"cronctl output: {c_size / 1e6:.1f} MB, {len(hist)} CronJobs, {slots} slots, {manual} manual runs, "
          f"missing: {doc.get('missing') or 'none'}")
    print("  verdicts: " + (", ".join(f"{v} {n}" for v, n in verdicts.most_common() if n) or "none"))
    print("  window limited by: " + ", ".join(f"{k} {n}" for k, n in limited.most_common()))
    if errors:
        print(f"  errors: {len(errors)}: " + "; ".join(errors[:5]))
    for n, c in notes.most_common(5):
        print(f"  note ({c}x): {n}")
    if stderr_c.strip():
        tail = [ln for ln in stderr_c.splitlines() if ln.strip() and not ln.startswith("\t")]
        if tail:
            print("  cronctl stderr: " + " | ".join(tail[:5]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
