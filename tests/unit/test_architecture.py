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


CLI = ROOT / "cronctl" / "cli"


def _imports(path: Path) -> set[str]:
    """Every module a file imports, at any depth (function-level imports too)."""
    import ast

    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return found


def test_no_command_module_imports_the_app_so_there_is_no_import_cycle() -> None:
    offenders = [p.name for p in sorted(CLI.glob("*.py"))
                 if p.name not in ("app.py", "__init__.py") and "cronctl.cli.app" in _imports(p)]
    assert offenders == [], f"command modules import cronctl.cli.app (register them in app.COMMANDS): {offenders}"


def test_every_command_is_registered_in_the_table_and_nowhere_else() -> None:
    import re

    from cronctl.cli import app as app_module

    for p in sorted(CLI.glob("*.py")):
        if p.name != "app.py":
            assert not re.search(r"^\s*@\w+\.command\(", p.read_text(), re.M), f"{p.name} registers a command itself"
    names = [n for n, _ in app_module.COMMANDS]
    registered = [c.name for c in app_module.app.registered_commands]
    assert registered[: len(names)] == names and len(set(names)) == len(names)


def test_one_function_writes_json_and_yaml() -> None:
    """``-o json|yaml`` goes through cronctl.cli.common.emit: no command dumps JSON or YAML itself."""
    import re

    for p in sorted(CLI.glob("*.py")):
        if p.name == "common.py":
            continue
        text = p.read_text()
        assert not re.search(r"json\.dumps\(|yaml\.(safe_)?dump\(|yaml_text\(|json_text\(", text), p.name
