"""The layers of docs/STYLE.md, enforced: import-linter contracts in .importlinter."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def test_the_import_contracts_hold() -> None:
    exe = Path(sys.executable).with_name("lint-imports")
    proc = subprocess.run([str(exe), "--config", str(ROOT / ".importlinter")], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "BROKEN" not in proc.stdout
    # every contract was checked: nine named contracts, all kept
    assert proc.stdout.count(" KEPT") == 9, proc.stdout[-2000:]


def test_the_package_type_checks_strictly(tmp_path: Path) -> None:
    """mypy --strict over cronctl/ (pyproject's [tool.mypy]): the typed views and results (the
    history's TypedDicts in cronctl/slotrows.py among them) are only worth their keys when a wrong
    key or value fails the build."""
    proc = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache")], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert proc.stdout.startswith("Success: no issues found"), proc.stdout[-2000:]


def test_no_name_is_used_that_is_not_defined() -> None:
    """pyflakes over cronctl/ and tests/: a cluster test runs only in a cluster run, so a missing
    import there (a merge once lost `sleep_until` in test_run_manual_seed004) fails here first."""
    from pyflakes import api, messages
    from pyflakes.reporter import Reporter

    class Collect(Reporter):
        def __init__(self) -> None:
            super().__init__(None, None)
            self.found: list[str] = []

        def flake(self, message: Any) -> None:
            if isinstance(message, (messages.UndefinedName, messages.UndefinedLocal, messages.UndefinedExport)):
                self.found.append(str(message))

        def syntaxError(self, filename: str, msg: str, lineno: int, offset: int, text: str) -> None:
            self.found.append(f"{filename}:{lineno}: {msg}")

    rep = Collect()
    api.checkRecursive([str(ROOT / "cronctl"), str(ROOT / "tests")], rep)
    assert rep.found == []


def test_the_procedures_are_compositions_of_small_steps_and_none_inherits_another() -> None:
    procedure = ROOT / "cronctl" / "procedure"
    trees = {f: ast.parse(f.read_text()) for f in procedure.rglob("*.py")}
    ours = {n.name for tree in trees.values() for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    inherits = [f"{f.relative_to(ROOT)}: {n.name}({b.id})" for f, tree in trees.items() for n in ast.walk(tree)
                if isinstance(n, ast.ClassDef) for b in n.bases if isinstance(b, ast.Name) and b.id in ours]
    assert inherits == []
    sizes = {f.name: len(f.read_text().splitlines()) for f in (procedure / "steps").glob("*.py")}
    assert len(sizes) >= 10 and max(sizes.values()) <= 250, sizes
    composers = {f: len((procedure / f).read_text().splitlines()) for f in ("run_manual.py", "backfill.py", "attach.py")}
    assert max(composers.values()) <= 300, composers


def _last_line_of(code: str) -> str:
    """The last line ``python -c CODE`` prints, in a fresh interpreter (what a process imports)."""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().splitlines()[-1]


def test_importing_cronctl_is_cheap() -> None:
    code = "import sys, cronctl, cronctl.schedule; print(sorted(m for m in sys.modules if m.split('.')[0] in ('kubernetes','yaml','jinja2','typer','rich','click','urllib3')))"
    assert _last_line_of(code) == "[]"


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
    # also an import contract (cli-app-is-a-table in .importlinter); this says it per file
    offenders = [p.name for p in sorted(CLI.glob("*.py"))
                 if p.name not in ("app.py", "__init__.py") and "cronctl.cli.app" in _imports(p)]
    assert offenders == [], f"command modules import cronctl.cli.app (register them in app.COMMANDS): {offenders}"


def test_every_command_is_in_the_table_and_registers_nowhere_else() -> None:
    import re

    from cronctl.cli import app as app_module

    for p in sorted(CLI.glob("*.py")):
        if p.name != "app.py":
            assert not re.search(r"^\s*@\w+\.command\(", p.read_text(), re.M), f"{p.name} registers a command itself"
    names = [e.name for e in app_module.COMMANDS]
    assert len(set(names)) == len(names) and app_module.app.registered_commands == []
    # every module that defines a command function is named by the table
    targets = {e.target.split(":")[0] for e in app_module.COMMANDS}
    with_commands = {f"cronctl.cli.{p.stem}" for p in CLI.glob("*.py")
                     if re.search(r"^def [a-z]\w*\(\n(\s+\w+: Annotated\[|\s+ctx: typer\.Context)", p.read_text(), re.M)}
    assert with_commands <= targets, with_commands - targets


def test_the_tables_summaries_are_what_each_command_says_of_itself() -> None:
    """``cronctl --help`` lists the table's summaries whole (wrapped, never cut with "...") without
    importing the commands: each must be the first paragraph of the command's own docstring, as
    click takes it (tests/unit/test_help_style.py checks the listing at five widths)."""
    from cronctl.cli import app as app_module

    for e in app_module.COMMANDS:
        cmd = app_module.load_command(e)
        assert cmd.name == e.name
        assert e.summary == cmd.get_short_help_str(limit=1_000_000), e.name
        assert " ".join(e.summary.split()) == " ".join(cmd.help.split("\n\n")[0].split()), e.name


def test_help_and_version_import_no_command_module_and_no_console() -> None:
    code = ("import sys\nfrom cronctl.cli import main\nfor argv in (['--version'], ['--help'], []):\n"
            "    main(argv)\n"
            "print(sorted(m for m in sys.modules if m.startswith(('cronctl.cli.', 'rich', 'cronctl.schedule', 'yaml'))))")
    assert _last_line_of(code) == "['cronctl.cli.app', 'cronctl.cli.env', 'cronctl.cli.exceptions']"


def test_a_command_runs_with_only_its_own_command_module_imported() -> None:
    code = ("import sys\nfrom cronctl.cli import main\n"
            "main(['explain', '0 0 * * *', '--now', '2026-01-01T00:00:00Z', '-o', 'json'])\n"
            "print(sorted(m for m in sys.modules if m.startswith('cronctl.cli.')))")
    loaded = _last_line_of(code)
    from cronctl.cli import app as app_module

    others = {e.target.split(":")[0] for e in app_module.COMMANDS} - {"cronctl.cli.explain"}
    assert "'cronctl.cli.explain'" in loaded and not [m for m in others if f"'{m}'" in loaded], loaded


def test_one_function_writes_json_and_yaml() -> None:
    """``-o json|yaml`` goes through cronctl.cli.common.emit: no command dumps JSON or YAML itself."""
    import re

    for p in sorted(CLI.glob("*.py")):
        if p.name == "common.py":
            continue
        text = p.read_text()
        assert not re.search(r"json\.dumps\(|yaml\.(safe_)?dump\(|yaml_text\(|json_text\(", text), p.name


def _world_reads(source: str) -> list[str]:
    """What a command module does that it must leave to the run's Environment (cronctl.cli.env): read
    the clock (``datetime.now()``, ``time.time()``), build a clock (``SystemClock()``) or a console
    (``SafeConsole(...)``), or keep state in a module global (``global``)."""
    import ast

    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Global):
            found.append(f"line {node.lineno}: global {', '.join(node.names)}")
        elif isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            owner = f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else ""
            if name in ("SystemClock", "SafeConsole") or (owner, name) in (("datetime", "now"), ("time", "time")):
                found.append(f"line {node.lineno}: {owner + '.' if owner else ''}{name}()")
    return found


def test_the_check_below_finds_a_command_that_builds_its_own_clock_or_console() -> None:
    bad = ("from cronctl.clock import SystemClock\n"
           "def cmd():\n    return SystemClock().now()\n"
           "def other():\n    import datetime\n    return datetime.now()\n"
           "_RUN = None\ndef begin(e):\n    global _RUN\n    _RUN = e\n"
           "def show():\n    c = SafeConsole(stderr=True)\n")
    assert sorted(f.split(": ", 1)[1] for f in _world_reads(bad)) == [
        "SafeConsole()", "SystemClock()", "datetime.now()", "global _RUN"]


def test_every_command_takes_the_world_from_the_environment_handed_in() -> None:
    """The clock, the consoles and the run's flags live in the Environment that cronctl.cli.main makes
    (or is given) and hands to the command (click's ``ctx.obj``): no command module reads or builds a
    clock or a console, and nothing of a run is a module global (two runs in one process, as the tests
    make, never share one). A run handed a fixed clock sees that instant."""
    import io
    import json
    from datetime import datetime, timezone

    from cronctl.cli import main
    from cronctl.cli.env import Environment
    from cronctl.clock import SystemClock

    class Fixed(SystemClock):
        def now(self) -> datetime:
            return datetime(2031, 7, 4, 12, 0, 30, tzinfo=timezone.utc)

    out = io.StringIO()
    code = main(["explain", "0 0 * * *", "-o", "json"], stdout=out, stderr=io.StringIO(),
                environment=Environment(clock=Fixed()))
    assert code == 0
    doc = json.loads(out.getvalue())
    assert doc["from"] == "2031-07-04T12:00:30Z" and doc["next"][0]["utc"] == "2031-07-05T00:00:00Z"
    one, two = Environment(), Environment()
    assert one.out is one.out and one.out is not two.out and one.err is not two.err
    for p in sorted(CLI.glob("*.py")):
        if p.name != "env.py":
            assert _world_reads(p.read_text()) == [], f"{p.name} reads or keeps the world itself"
