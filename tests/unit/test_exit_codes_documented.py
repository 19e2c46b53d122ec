"""docs/EXIT_CODES.md against the code (issue 34): every code the table documents is one cronctl
can end with (an ``ExitCode`` the code raises, by an error class or by name), and every way out of
cronctl (each ``ExitCode`` the package uses, each error class raised, each literal exit status) is a
row of the table, with the same name."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

from cronctl.errors import ExitCode

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "cronctl"


def _documented() -> dict[int, str]:
    rows = re.findall(r"^\| (\d+) \| ([A-Z_]+) \|", (ROOT / "docs" / "EXIT_CODES.md").read_text(), re.M)
    assert rows, "no table in docs/EXIT_CODES.md"
    return {int(code): name for code, name in rows}


@functools.cache
def _sources() -> dict[Path, ast.Module]:
    return {p: ast.parse(p.read_text(), str(p)) for p in PACKAGE.rglob("*.py")}


def _error_classes(trees: dict[Path, ast.Module]) -> dict[str, ExitCode]:
    """Every exception class of the package with the exit code it ends cronctl with (by its own
    ``exit_code = ExitCode.X`` or its nearest base's)."""
    bases: dict[str, list[str]] = {}
    own: dict[str, ExitCode] = {}
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases[node.name] = [b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases]
                for st in node.body:
                    if (isinstance(st, (ast.Assign, ast.AnnAssign)) and isinstance(st.value, ast.Attribute)
                            and isinstance(st.value.value, ast.Name) and st.value.value.id == "ExitCode"):
                        own[node.name] = ExitCode[st.value.attr]

    def code(name: str, seen: frozenset[str] = frozenset()) -> ExitCode | None:
        if name in own:
            return own[name]
        for b in bases.get(name, []):
            if b not in seen and (c := code(b, seen | {name})) is not None:
                return c
        return None

    return {n: c for n in bases if (c := code(n)) is not None}


def _raised(trees: dict[Path, ast.Module]) -> set[str]:
    names: set[str] = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.Raise) and node.exc is not None:
                exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                if isinstance(exc, ast.Name):
                    names.add(exc.id)
                elif isinstance(exc, ast.Attribute):
                    names.add(exc.attr)
    return names


def _named_codes(trees: dict[Path, ast.Module]) -> set[ExitCode]:
    """``ExitCode.X`` used outside the class definitions' ``exit_code =`` lines (an exit by name)."""
    found: set[ExitCode] = set()
    for path, tree in trees.items():
        if path.name == "errors.py":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "ExitCode":
                found.add(ExitCode[node.attr])
    return found


def _ways_out() -> set[ExitCode]:
    trees = _sources()
    classes = _error_classes(trees)
    raised = {classes[n] for n in _raised(trees) if n in classes}
    # click's own usage errors exit 2; success is 0
    return raised | _named_codes(trees) | {ExitCode.OK, ExitCode.USAGE}


def test_the_table_is_the_enum() -> None:
    assert _documented() == {int(c): c.name for c in ExitCode}


def test_every_documented_code_is_one_cronctl_ends_with() -> None:
    ways = _ways_out()
    never = [f"{code} {name}" for code, name in _documented().items() if ExitCode(code) not in ways]
    assert not never, f"documented but never raised: {never}"


def test_every_way_out_is_documented() -> None:
    documented = _documented()
    undocumented = [c.name for c in _ways_out() if int(c) not in documented]
    assert not undocumented, undocumented
    # literal statuses: typer.Exit(N) / sys.exit(N) with a number are only the documented ones
    for path, tree in _sources().items():
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in ("Exit", "exit")
                    and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, int)):
                assert node.args[0].value in documented, f"{path}:{node.lineno}: exit {node.args[0].value}"


def test_a_new_code_would_be_caught(tmp_path: Path) -> None:
    """The checker itself: an error class with a code the table lacks is found as undocumented."""
    tree = ast.parse("from cronctl.errors import ExitCode\nclass Odd(Exception):\n    exit_code = ExitCode.LEDGER\n"
                     "def f():\n    raise Odd('x')\n")
    classes = _error_classes({tmp_path / "x.py": tree})
    assert classes == {"Odd": ExitCode.LEDGER} and _raised({tmp_path / "x.py": tree}) == {"Odd"}
