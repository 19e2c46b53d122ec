#!/usr/bin/env python3
"""Benchmark: the cost of hostile input grows linearly (issue 39). At 1, 2, 4 and 8 times a base
size, each in its own process, wall time, CPU time and peak memory (how much the process's peak RSS grew
during the run, and the peak itself: the regular-expression engine's own allocations are not
Python objects, so RSS, not tracemalloc):

- the YAML writer (``cronctl/bundle/yamlout.py``) on one long plain string (a 16 MB string in a
  dump took 1.98 GB before: ~125 bytes per input byte in the plain-scalar pattern);
- the redactor on one long line of ``curl -u a:b -p -P --password`` (the command-line rule searched
  the line to its end once per tool word: 12 MB took 173 s);
- the bounded JSON decoder (``cronctl/decode.py``) on a 2,000-deep value repeated, and on a long
  valid JSON array;
- the fleet page, ``cronctl history --from-dump DUMP --html FILE``: N/8,000 CronJobs (the 8th size:
  1,000 with ``--base-mb 1``), each ``*/5`` with no Job, so each judged over the whole week (2,016
  slots: at 8 times, two million). The whole command, in the child process (1,000 such CronJobs took
  96 s and 1.73 GB when every history was held until the page was drawn).

    .venv/bin/python bench/bench_hostile.py [--base-mb 1] [--src DIR]

``--src DIR`` runs the same with another checkout first on PYTHONPATH (the code before a change).
Prints a table, asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CASES = {
    "yaml writer": ("from cronctl.bundle import yamlout\n"
                    "s = 'a' * N\n"
                    "run = lambda: yamlout.dump({'x': s})"),
    "command-line rule": ("from cronctl.redact import Redactor\n"
                          "line = 'curl -u a:b -p -P --password ' * (N // 30)\n"
                          "run = lambda: Redactor().text(line)"),
    "decoder (deep)": ("from cronctl import decode\n"
                       "t = '[' + ','.join(['[' * 2000 + ']' * 2000] * max(1, N // 4000)) + ']'\n"
                       "def run():\n"
                       "    try:\n"
                       "        decode.loads(t)\n"
                       "    except ValueError:\n"
                       "        pass"),
    "decoder (flat)": ("from cronctl import decode\n"
                       "t = '[' + ','.join(['{\"a\": [1, 2, \"x\"]}'] * max(1, N // 20)) + ']'\n"
                       "run = lambda: decode.loads(t)"),
    "fleet page": ("import json, os, tempfile\n"
                   "from cronctl.cli import main\n"
                   "d = tempfile.mkdtemp()\n"
                   "items = [{'apiVersion': 'batch/v1', 'kind': 'CronJob', 'metadata': {'name': f'cj-{i:05d}', "
                   "'namespace': f'ns-{i % 40}', 'uid': f'u-{i}', 'creationTimestamp': '2026-11-20T00:00:00Z'}, "
                   "'spec': {'schedule': '*/5 * * * *', 'jobTemplate': {'spec': {'template': {'spec': "
                   "{'containers': [{'name': 'c', 'image': 'x'}], 'restartPolicy': 'Never'}}}}}} "
                   "for i in range(max(1, N // 8000))]\n"
                   "open(d + '/dump.json', 'w').write(json.dumps({'kind': 'List', 'items': items}))\n"
                   "open(d + '/one.json', 'w').write(json.dumps({'kind': 'List', 'items': items[:1]}))\n"
                   "def page(dump):\n"
                   "    rc = main(['history', '--from-dump', dump, '--now', '2026-12-02T11:35:00Z', "
                   "'--html', d + '/page.html'], stdout=open(os.devnull, 'w'))\n"
                   "    assert rc == 0, rc\n"
                   "page(d + '/one.json')  # the imports, before the measure\n"
                   "run = lambda: page(d + '/dump.json')"),
}

_CHILD = """
import json, resource, sys, time
N = int(sys.argv[1])
{setup}
u0 = resource.getrusage(resource.RUSAGE_SELF)
before = u0.ru_maxrss
t0 = time.perf_counter()
run()
dt = time.perf_counter() - t0
u1 = resource.getrusage(resource.RUSAGE_SELF)
rss = u1.ru_maxrss
cpu = u1.ru_utime + u1.ru_stime - u0.ru_utime - u0.ru_stime
print(json.dumps({{"seconds": dt, "cpu": cpu, "grew": rss - before, "rss": rss}}))
"""


def measure(setup: str, n: int, src: str | None) -> dict[str, float]:
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    # -P: the current directory is not put first on sys.path, so --src really wins
    r = subprocess.run([sys.executable, "-P", "-c", _CHILD.format(setup=setup), str(n)], capture_output=True, text=True,
                       env=env, timeout=3600)
    if r.returncode != 0:
        raise SystemExit(r.stderr[-2000:])
    return dict(json.loads(r.stdout.strip().splitlines()[-1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base-mb", type=float, default=1.0)
    ap.add_argument("--src", default=None)
    ap.add_argument("--only", default=None, help="one case by name")
    args = ap.parse_args()
    base = int(args.base_mb * 1024 * 1024)
    # CPU seconds beside the wall time: on a shared machine the wall time of one run varies by half
    print(f"{'case':<20} {'input':>8} {'seconds':>9} {'x base':>7} {'CPU s':>8} {'x base':>7} {'RSS grew MB':>12} "
          f"{'peak RSS MB':>12}")
    for name, setup in CASES.items():
        if args.only and args.only != name:
            continue
        first = first_cpu = None
        for k in (1, 2, 4, 8):
            m = measure(setup, base * k, args.src)
            first = first or m["seconds"] or 1e-9
            first_cpu = first_cpu or m["cpu"] or 1e-9
            size = f"{base * k // 8000:>6d}CJ" if name == "fleet page" else f"{args.base_mb * k:>6.1f}MB"
            print(f"{name:<20} {size} {m['seconds']:>9.2f} {m['seconds'] / first:>7.1f} "
                  f"{m['cpu']:>8.2f} {m['cpu'] / first_cpu:>7.1f} "
                  f"{m['grew'] / 1024:>12.1f} {m['rss'] / 1024:>12.0f}", flush=True)


if __name__ == "__main__":
    main()
