"""Where the tests find promtool: $CRONCTL_PROMTOOL, else scripts/promtool (which installs it into
~/.cache/cronctl/promtool from Debian's prometheus package the first time)."""

from __future__ import annotations

import functools
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@functools.cache
def promtool() -> str:
    given = os.environ.get("CRONCTL_PROMTOOL")
    if given:
        return given
    r = subprocess.run([str(ROOT / "scripts" / "promtool"), "--path"], capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise RuntimeError(f"promtool is needed by the alert-rule tests and could not be installed: {r.stderr.strip()}")
    return r.stdout.strip()
