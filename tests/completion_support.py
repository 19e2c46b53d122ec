"""Shell completion in a real bash: used by tests/unit/test_completion.py and
tests/cluster/test_conventions_live.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent  # the venv's bin, where the `cronctl` console script lives


def bash_complete(*words: str, **extra_env: str) -> list[str]:
    """Load completions/cronctl.bash into a real bash, set COMP_WORDS/COMP_CWORD as bash would
    for the command line `words` (cursor on the last word), call the function, return COMPREPLY."""
    assert (BIN / "cronctl").exists(), "install the package into the venv first (pip install -e .)"
    arr = " ".join(f"'{w}'" for w in words)
    script = (f"source {ROOT / 'completions' / 'cronctl.bash'}\n"
              f"COMP_WORDS=({arr}); COMP_CWORD={len(words) - 1}\n"
              "_cronctl_completion cronctl\n"
              "printf '%s\\n' \"${COMPREPLY[@]}\"\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("_CRONCTL")}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env.update(extra_env)
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], capture_output=True, text=True,
                       env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    return [line for line in r.stdout.splitlines() if line]
