#!/usr/bin/env python3
"""Benchmark: the hostile-but-realistic shapes of issue 26 ("Cost"), at 1x, 2x and 4x size, offline.

    .venv/bin/python bench/bench_pileup.py [--shapes pileup,manual,farspan,secrets,alias,lint] [--sizes 1,2,4]
                                           [--src DIR] [--timeout 600] [--keep DIR]

Each shape is generated here (no cluster, no fixture file) and run as the user runs it, in its own
process under ``/usr/bin/time -v`` (wall time, CPU time, peak RSS):

- ``pileup``: one every-minute ``concurrencyPolicy: Allow`` CronJob whose Jobs hang: N running Jobs
  (1x = 2,000), one started each minute; ``cronctl bundle --from-dump F --out DIR``. Every pair of
  them overlaps (N(N-1)/2 pairs: 1,999,000 at 1x).
- ``manual``: the pile-up with a manual Job beside each hung scheduled one (1x = 1,000 + 1,000);
  ``cronctl history --from-dump F -o json`` (each slot names the manual Jobs beside its Job, each
  manual run the scheduled Jobs beside it: every manual Job overlaps every later scheduled one).
- ``farspan``: 50 finished Jobs of a weekly CronJob spread evenly over a span of years (1x = 1,750
  years, 4x = 7,000: MIN_YEAR 1970 .. MAX_YEAR 9000 is the widest the loader accepts);
  ``cronctl bundle``. A gridline per week over the span had made report.html 380 MB.
- ``secrets``: N Events (1x = 3,000) on the CronJob, each quoting a new ``password=`` value;
  ``cronctl bundle`` (the redactor masks each value and its echoes).
- ``alias``: a 256 KiB string scalar aliased N times (1x = 4,000: 1 GiB expanded) in a CronJob's
  annotations; ``cronctl bundle`` (the loader decides before any work: an alias of a string adds
  its characters to MAX_ALIAS_BYTES).
- ``lint``: N identical CronJobs (1x = 1,000) in one file; ``cronctl lint -f`` (CJ032 compares the
  CronJobs that do the same work).

Prints one table row per run: size, objects, wall and CPU seconds, peak RSS, bytes written and exit
code; and, per shape, the growth of the CPU time beyond start-up (the same command on the shape's
smallest input, shown as ``(1)``) from each size to the next: 2.0 per doubling is linear, a little
more is n log n, 4.0 would be quadratic. ``--src DIR`` runs another checkout (the code before a change, e.g. from ``git archive``)
first on PYTHONPATH. A run longer than --timeout is stopped and shown as ``>T``. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
UTC = timezone.utc
NS = "bench"
TIME_V = Path("/usr/bin/time")


def z(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _cronjob(name: str, schedule: str, created: datetime, policy: str = "Allow") -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}", "creationTimestamp": z(created)},
            "spec": {"schedule": schedule, "concurrencyPolicy": policy,
                     "successfulJobsHistoryLimit": 100000, "failedJobsHistoryLimit": 100000,
                     "jobTemplate": {"spec": {"template": {"spec": {
                         "restartPolicy": "Never",
                         "containers": [{"name": "sync", "image": "registry.example/sync:1.0",
                                         "command": ["/bin/sync", "--all"]}]}}}}},
            "status": {}}


def _job(cj: dict[str, Any], name: str, start: datetime, end: datetime | None) -> dict[str, Any]:
    status: dict[str, Any] = {"startTime": z(start)}
    if end is None:
        status["active"] = 1
    else:
        status.update(completionTime=z(end), succeeded=1, conditions=[
            {"type": "Complete", "status": "True", "lastTransitionTime": z(end)}])
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}", "creationTimestamp": z(start),
                         "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob", "name": cj["metadata"]["name"],
                                              "uid": cj["metadata"]["uid"], "controller": True}]},
            "spec": {"template": cj["spec"]["jobTemplate"]["spec"]["template"]},
            "status": status}


def _dump(path: Path, items: list[dict[str, Any]]) -> None:
    # JSON is YAML: the loader reads it, and writing it is fast
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))


def gen_pileup(path: Path, n: int, manual: bool = False) -> str:
    """N running Jobs of an every-minute Allow CronJob, one started each minute (they hang); with
    ``manual``, a hung manual Job started 30 s after each as well."""
    t0 = datetime(2026, 12, 1, 0, 0, tzinfo=UTC)
    cj = _cronjob("pileup", "* * * * *", t0 - timedelta(days=1))
    items = [cj]
    for i in range(n):
        t = t0 + timedelta(minutes=i)
        items.append(_job(cj, f"pileup-{int(t.timestamp()) // 60}", t + timedelta(seconds=2), None))
        if manual:
            fix = _job(cj, f"pileup-fix-{i:05d}", t + timedelta(seconds=30), None)
            fix["metadata"]["annotations"] = {"cronjob.kubernetes.io/instantiate": "manual"}
            items.append(fix)
    cj["status"]["lastScheduleTime"] = z(t0 + timedelta(minutes=n - 1))
    _dump(path, items)
    return f"{n}+{n} Jobs" if manual else f"{n} Jobs"


def gen_manual(path: Path, n: int) -> str:
    """The pile-up of N hung scheduled Jobs, and a manual Job started 30 s after each (all hang)."""
    return gen_pileup(path, n, manual=True)


def gen_farspan(path: Path, years: int, jobs: int = 50) -> str:
    """``jobs`` finished Jobs of a weekly CronJob, spread evenly over ``years`` years ending in 9000."""
    end = datetime(8999, 12, 1, tzinfo=UTC)
    start = datetime(9000 - years, 1, 2, tzinfo=UTC)
    cj = _cronjob("farspan", "0 0 * * 0", start - timedelta(days=1))
    items = [cj]
    step = (end - start) / jobs
    for i in range(jobs):
        t = start + step * i
        items.append(_job(cj, f"farspan-{i:06d}", t, t + timedelta(minutes=5)))
    _dump(path, items)
    return f"{years} years"


def gen_secrets(path: Path, n: int) -> str:
    """N Events on the CronJob's one Job, each quoting a new ``password=`` value."""
    t0 = datetime(2026, 12, 1, 0, 0, tzinfo=UTC)
    cj = _cronjob("secrets", "*/5 * * * *", t0 - timedelta(days=1))
    job = _job(cj, f"secrets-{int(t0.timestamp()) // 60}", t0, t0 + timedelta(minutes=1))
    items = [cj, job]
    for i in range(n):
        at = z(t0 + timedelta(seconds=i))
        items.append({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{job['metadata']['name']}.{i:08x}", "namespace": NS, "creationTimestamp": at},
            "involvedObject": {"apiVersion": "batch/v1", "kind": "Job", "name": job["metadata"]["name"],
                               "namespace": NS, "uid": job["metadata"]["uid"]},
            "reason": "BackoffLimitExceeded", "type": "Warning", "count": 1,
            "message": f"connect failed: host=db-{i % 7}.example port=5432 password=Pw{i:06d}xQz9{i * 7919:08d}",
            "firstTimestamp": at, "lastTimestamp": at, "source": {"component": "job-controller"}})
    _dump(path, items)
    return f"{n} Events"


def gen_alias(path: Path, n: int) -> str:
    """A 256 KiB string scalar anchored once and aliased N times (annotations of one CronJob)."""
    lines = ["apiVersion: batch/v1", "kind: CronJob", "metadata:", "  name: aliased", f"  namespace: {NS}",
             "  annotations:", f"    a0: &s \"{'x' * 256 * 1024}\""]
    lines += [f"    a{i}: *s" for i in range(1, n + 1)]
    lines += ["spec:", "  schedule: '*/5 * * * *'", "  jobTemplate:", "    spec:", "      template:", "        spec:",
              "          restartPolicy: Never", "          containers:", "          - name: c",
              "            image: registry.example/c:1"]
    path.write_text("\n".join(lines) + "\n")
    return f"{n} aliases"


def gen_lint(path: Path, n: int) -> str:
    """N identical CronJobs (names aside) in one List."""
    t0 = datetime(2026, 11, 1, tzinfo=UTC)
    items = []
    for i in range(n):
        cj = _cronjob(f"same-{i:05d}", "*/10 * * * *", t0, policy="Forbid")
        del cj["metadata"]["uid"]
        items.append(cj)
    _dump(path, items)
    return f"{n} CronJobs"


Shape = tuple[Callable[[Path, int], str], int, Callable[[Path, Path], list[str]]]


def _bundle(f: Path, out: Path) -> list[str]:
    return ["bundle", "--from-dump", str(f), "--out", str(out), "-o", "json"]


def _history(f: Path, out: Path) -> list[str]:
    return ["history", "--from-dump", str(f), "-o", "json"]


def _lint(f: Path, out: Path) -> list[str]:
    return ["lint", "-f", str(f), "-o", "json"]


SHAPES: dict[str, Shape] = {
    "pileup": (gen_pileup, 2000, _bundle),
    "manual": (gen_manual, 1000, _history),
    "farspan": (gen_farspan, 1750, _bundle),
    "secrets": (gen_secrets, 3000, _bundle),
    "alias": (gen_alias, 4000, _bundle),
    "lint": (gen_lint, 1000, _lint),
}


def measure(argv: list[str], src: str | None, timeout: float, stdout: Path) -> tuple[str, float, int, int]:
    """(wall seconds as text, CPU seconds, peak RSS KiB, exit code) of ``python -m cronctl ARGV``."""
    path = f"{src}:{ROOT}" if src else str(ROOT)
    cmd = ["env", f"PYTHONPATH={path}", sys.executable, "-P", "-m", "cronctl", *argv]
    t0 = time.monotonic()
    with stdout.open("wb") as fh:
        p = subprocess.Popen([str(TIME_V), "-v", *cmd] if TIME_V.exists() else cmd,
                             stdout=fh, stderr=subprocess.PIPE, text=True)
        try:
            _o, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            _o, err = p.communicate()
            return f">{timeout:.0f}", math.nan, -1, -1
    wall = time.monotonic() - t0
    rc = p.returncode
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)
    cpu = sum(float(x) for x in re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)", err))
    rc_m = re.search(r"Exit status: (\d+)", err)
    return f"{wall:.2f}", cpu, int(m.group(1)) if m else -1, int(rc_m.group(1)) if rc_m else rc


def _size(p: Path) -> int:
    if p.is_file():
        return p.stat().st_size
    return sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) if p.exists() else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", default="pileup,manual,farspan,secrets,alias,lint")
    ap.add_argument("--sizes", default="1,2,4", help="multiples of each shape's 1x size")
    ap.add_argument("--src", help="another checkout to measure (first on PYTHONPATH)")
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--keep", help="write the inputs and outputs here and keep them")
    a = ap.parse_args()
    tmp = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="cronctl-pileup-"))
    tmp.mkdir(parents=True, exist_ok=True)
    sizes = [float(s) for s in a.sizes.split(",")]
    print(f"{'shape':8} {'size':>5} {'input':>16} {'in MB':>7} {'wall s':>8} {'cpu s':>8} {'peak MiB':>9} "
          f"{'out MB':>9} {'exit':>4}", flush=True)
    try:
        for shape in a.shapes.split(","):
            gen, base, cmd = SHAPES[shape]
            # the same command on the smallest input of the shape: start-up and imports, not growth
            f0 = tmp / f"{shape}-0.{'yaml' if shape == 'alias' else 'json'}"
            gen(f0, 1)
            _w, cpu0, _r, _c = measure(cmd(f0, tmp / f"{shape}-0.out"), a.src, a.timeout, tmp / f"{shape}-0.stdout")
            shutil.rmtree(tmp / f"{shape}-0.out", ignore_errors=True)
            print(f"{shape:8} {'(1)':>5} {'start-up':>16} {'':>7} {'':>8} {cpu0:8.2f}", flush=True)
            cpus: list[float] = []
            for k in sizes:
                n = max(1, int(base * k))
                f = tmp / f"{shape}-{n}.{'yaml' if shape == 'alias' else 'json'}"
                what = gen(f, n)
                out = tmp / f"{shape}-{n}.out"
                shutil.rmtree(out, ignore_errors=True)
                stdout = tmp / f"{shape}-{n}.stdout"
                wall, cpu, rss, rc = measure(cmd(f, out), a.src, a.timeout, stdout)
                written = _size(out) + _size(stdout)
                cpus.append(cpu - cpu0)
                print(f"{shape:8} {k:>4g}x {what:>16} {f.stat().st_size / 1e6:7.2f} {wall:>8} {cpu:8.2f} "
                      f"{rss / 1024:9.0f} {written / 1e6:9.2f} {rc:>4}", flush=True)
                shutil.rmtree(out, ignore_errors=True)
                if not a.keep:
                    f.unlink()
                    stdout.unlink()
            # below a quarter of a second beyond start-up the ratio is noise: the cost does not grow
            growth = [("const" if max(x, b) < 0.25 else f"{b / x:.2f}") if x == x and b == b and x > 0 else "-"
                      for x, b in zip(cpus, cpus[1:])]
            if growth:
                print(f"{'':8} growth of the cpu beyond start-up, per step: {' '.join(growth)} "
                      f"(sizes x{'/'.join(f'{s:g}' for s in sizes)}; linear: the ratio of the sizes)", flush=True)
    finally:
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
