"""The layers of docs/STYLE.md, enforced: import-linter contracts in .importlinter."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_import_contracts_hold() -> None:
    exe = Path(sys.executable).with_name("lint-imports")
    proc = subprocess.run([str(exe), "--config", str(ROOT / ".importlinter")], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "BROKEN" not in proc.stdout
    # every contract was checked: four named contracts, all kept
    assert proc.stdout.count(" KEPT") == 4, proc.stdout[-2000:]


def test_importing_cronctl_is_cheap() -> None:
    code = "import sys, cronctl, cronctl.schedule; print(sorted(m for m in sys.modules if m.split('.')[0] in ('kubernetes','yaml','jinja2','typer','rich','click','urllib3')))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
