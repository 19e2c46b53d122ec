"""What the benchmarks in bench/ share: the kubectl to compare with, parallel creation through the
API, and the wall time and peak memory of a command. Imported by the scripts (bench/ is on
sys.path when one runs as ``python bench/<script>.py``)."""

from __future__ import annotations

import re
import resource
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable

TIME_V = Path("/usr/bin/time")


def kubectl_path() -> str:
    for v in sorted((Path.home() / ".cache" / "cronctl" / "k8s").glob("v*/bin/kubectl"), reverse=True):
        return str(v)
    return shutil.which("kubectl") or "kubectl"


def parallel(what: str, fn: Callable[[Any], Any], items: list[Any], workers: int) -> list[Any]:
    t0 = time.monotonic()
    with ThreadPoolExecutor(workers) as ex:
        out = list(ex.map(fn, items))
    dt = time.monotonic() - t0
    print(f"  {what}: {len(items)} in {dt:.1f}s ({len(items) / max(dt, 1e-9):.0f}/s)", file=sys.stderr)
    return out


def timed(cmd: list[str], *, stdout: Any = subprocess.DEVNULL) -> tuple[float, int, subprocess.CompletedProcess[str]]:
    """(wall seconds, peak RSS KiB, process) of ``cmd``: under /usr/bin/time -v when it exists,
    else time.monotonic and the RUSAGE_CHILDREN maximum (a high-water mark over all children so
    far: exact for the first run of the largest process only)."""
    if TIME_V.exists():
        t0 = time.monotonic()
        r = subprocess.run([str(TIME_V), "-v", *cmd], stdout=stdout, stderr=subprocess.PIPE, text=True)
        wall = time.monotonic() - t0
        m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr)
        rss = int(m.group(1)) if m else -1
    else:
        t0 = time.monotonic()
        r = subprocess.run(cmd, stdout=stdout, stderr=subprocess.PIPE, text=True)
        wall = time.monotonic() - t0
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if r.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed ({r.returncode}): {r.stderr[-2000:]}")
    return wall, rss, r
