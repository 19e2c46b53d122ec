#!/usr/bin/env python3
"""Benchmark: reading big files under the loader's limits (cronctl/manifest.py), against a bare
libyaml load of the same file.

    .venv/bin/python bench/bench_files.py [--dump-mb 200] [--cronjobs 10000] [--src DIR]

Writes two files to a temporary directory: a ``kubectl get cronjob,jobs,pods,events -o yaml``
dump of about DUMP_MB MB (tests/golden/bundle/incident-004.dump.yaml's objects, copied under new
names) and a List of CRONJOBS CronJobs (examples/mp-orders-sync.yaml, seven schedules and seven
zones, each with a creationTimestamp and lastScheduleTime so the controller's decision is
computed). Each measurement runs in its own process; wall time and peak RSS (``/usr/bin/time -v``,
else ``resource.getrusage``):

- bare libyaml: ``yaml.load(f, Loader=yaml.CSafeLoader)``, nothing else;
- cronctl's loader: ``load_objects`` (libyaml, nesting/alias/size limits, timestamps as text);
- the dump as ``bundle``/``history --from-dump`` read it: ``load_dump`` (+ the typed-field check);
- ``cronctl explain -f`` of the CronJobs, ``-o json``.

``--src DIR`` runs the cronctl rows with another checkout first on PYTHONPATH (the code before a
change, for its numbers). Prints numbers, asserts nothing.
"""

from __future__ import annotations

import argparse
import copy
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from _shared import timed

ROOT = Path(__file__).resolve().parents[1]
ZONES = ["Europe/Moscow", "America/New_York", "Europe/Berlin", "Etc/UTC", "Asia/Kolkata",
         "Australia/Lord_Howe", "America/Santiago"]
SCHEDULES = ["*/10 * * * *", "30 1 * * *", "0 2 * * 0", "15 3 * * 1-5", "0 9,17 * * *", "@hourly", "0 0 1 * *"]
DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def write_dump(path: Path, megabytes: int) -> int:
    items = yaml.safe_load((ROOT / "tests" / "golden" / "bundle" / "incident-004.dump.yaml").read_text())["items"]
    with path.open("w") as f:
        f.write("apiVersion: v1\nkind: List\nitems:\n")
        i = 0
        while f.tell() < megabytes * 1_000_000:
            copies = []
            for o in items:
                c = copy.deepcopy(o)
                c["metadata"]["name"] = f"{c['metadata']['name']}-{i}"
                copies.append(c)
            f.write(yaml.dump(copies, Dumper=DUMPER, sort_keys=False))
            i += 1
        f.write("metadata:\n  resourceVersion: ''\n")
        return f.tell()


def write_cronjobs(path: Path, count: int) -> int:
    base = next(o for o in yaml.safe_load_all((ROOT / "examples" / "mp-orders-sync.yaml").read_text())
                if o and o.get("kind") == "CronJob")
    out = []
    for i in range(count):
        c = copy.deepcopy(base)
        c["metadata"]["name"] = f"cj-{i}"
        c["metadata"]["creationTimestamp"] = "2026-11-01T00:00:00Z"
        c["spec"]["schedule"] = SCHEDULES[i % len(SCHEDULES)]
        c["spec"]["timeZone"] = ZONES[i // len(SCHEDULES) % len(ZONES)]
        c["status"] = {"lastScheduleTime": "2026-12-01T00:00:00Z"}
        out.append(c)
    path.write_text(yaml.dump({"apiVersion": "v1", "kind": "List", "items": out}, Dumper=DUMPER, sort_keys=False))
    return path.stat().st_size


def row(what: str, code: str, *, src: str | None = None) -> None:
    env_src = f"{src}:" if src else ""
    # -P: the current directory is not put first on sys.path, so --src really wins
    cmd = ["env", f"PYTHONPATH={env_src}{ROOT}", sys.executable, "-P", "-c", code]
    wall, rss, r = timed(cmd, stdout=subprocess.DEVNULL)
    # CPU seconds too: on a loaded machine they say more than the wall time
    cpu = sum(float(m) for m in re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)", r.stderr))
    print(f"  {what:<58} {wall:8.1f} s wall {cpu:8.1f} s cpu {rss / 1024:9.0f} MiB", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dump-mb", type=int, default=200)
    ap.add_argument("--cronjobs", type=int, default=10_000)
    ap.add_argument("--src", help="another checkout to measure (first on PYTHONPATH)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        dump, cjs = Path(d) / "dump.yaml", Path(d) / "cronjobs.yaml"
        size = write_dump(dump, a.dump_mb)
        cj_size = write_cronjobs(cjs, a.cronjobs)
        who = f" ({a.src})" if a.src else ""
        print(f"dump {dump.name}: {size / 1e6:.0f} MB; libyaml: {getattr(yaml, '__with_libyaml__', False)}",
              flush=True)
        bare = f"import yaml; yaml.load(open({str(dump)!r}), Loader=yaml.CSafeLoader)"
        row("bare libyaml load", bare)
        row(f"cronctl load_objects{who}", f"from cronctl.manifest import load_objects; load_objects({str(dump)!r})",
            src=a.src)
        row(f"cronctl load_dump (bundle/history --from-dump){who}",
            "from datetime import datetime, timezone; from cronctl.bundle.dump import load_dump; "
            f"load_dump({str(dump)!r}, namespace=None, now=None, all_namespaces=True, "
            "collected_at=datetime.now(timezone.utc))", src=a.src)
        print(f"{a.cronjobs} CronJobs {cjs.name}: {cj_size / 1e6:.1f} MB", flush=True)
        row("bare libyaml load", f"import yaml; yaml.load(open({str(cjs)!r}), Loader=yaml.CSafeLoader)")
        row(f"cronctl explain -f -o json{who}",
            "import sys; from cronctl.cli import main; "
            f"sys.exit(main(['explain', '-f', {str(cjs)!r}, '--now', '2026-12-02T11:35:00Z', '-o', 'json']))",
            src=a.src)


if __name__ == "__main__":
    main()
