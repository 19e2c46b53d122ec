"""Where the tests find the outside tools the test command installs: promtool (the alert-rule
tests) and a headless Chromium (the report test). Each is ``$CRONCTL_<TOOL>``, else what
``scripts/<tool> --path`` prints (it installs the tool the first time: promtool from Debian's
prometheus package into ~/.cache/cronctl/promtool, Chromium as Debian's chromium-headless-shell)."""

from __future__ import annotations

import functools
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _tool(script: str, needed_by: str) -> str:
    given = os.environ.get(f"CRONCTL_{script.upper()}")
    if given:
        return given
    r = subprocess.run([str(ROOT / "scripts" / script), "--path"], capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise RuntimeError(f"{script} is needed by {needed_by} and could not be installed: {r.stderr.strip()}")
    return r.stdout.strip()


@functools.cache
def promtool() -> str:
    return _tool("promtool", "the alert-rule tests")


@functools.cache
def chromium() -> str:
    return _tool("chromium", "the report test")
