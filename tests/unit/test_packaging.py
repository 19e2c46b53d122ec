"""Packaging and output discipline.

* The wheel carries py.typed, every template and data file, and both console scripts.
* `pipx install .` works on a fresh machine: the source is copied to a temp dir, installed with
  pipx into a temp PIPX_HOME with dependencies from a local wheelhouse (built with `pip wheel`,
  which may use the network once, then the pip cache), and the installed `cronctl`,
  `kubectl-cronctl` and `python -m cronctl` answer `--version` from outside the repo.
* NO_COLOR and non-TTY output: no ANSI escape in captured output of any command; data on stdout,
  errors (one line) on stderr; under a real pseudo-terminal NO_COLOR removes colours.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from cronctl import __version__
from harness import cronctl as run_cronctl, on_a_terminal

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
ANSI = re.compile(r"\x1b\[")
COLOUR = re.compile(r"\x1b\[(?:[0-9;]*;)?(?:3[0-7]|9[0-7]|38;[25])[;m]")


def sh(*args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None,
       timeout: float = 600) -> subprocess.CompletedProcess[str]:
    r = subprocess.run([str(a) for a in args], capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout)
    assert r.returncode == 0, f"{args}: {r.stdout}\n{r.stderr}"
    return r


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clean copy of what `pipx install .` would see (no build/ or egg-info left in the repo)."""
    dst = tmp_path_factory.mktemp("src") / "cronctl-src"
    dst.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, dst / name)
    shutil.copytree(ROOT / "cronctl", dst / "cronctl", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return dst


@pytest.fixture(scope="module")
def wheelhouse(source: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    wh = tmp_path_factory.mktemp("wheelhouse")
    # pip too (pipx upgrades pip in its shared venv with the same --pip-args), and the build backend
    # (pipx builds the source dir in an isolated env, also from the wheelhouse)
    sh(sys.executable, "-m", "pip", "wheel", "-q", "--disable-pip-version-check", "-w", wh, source, "pip", "setuptools>=68", "wheel")
    return wh


# One worker builds the wheelhouse once (scripts/test runs xdist with --dist loadgroup).
@pytest.mark.xdist_group("packaging")
def test_the_wheel_carries_typing_marker_templates_data_and_both_scripts(wheelhouse: Path) -> None:
    [whl] = wheelhouse.glob("cronctl-*.whl")
    assert whl.name.startswith(f"cronctl-{__version__}-")
    names = set(zipfile.ZipFile(whl).namelist())
    assert "cronctl/py.typed" in names
    shipped = [p.relative_to(ROOT).as_posix() for sub in ("templates", "data")
               for p in (ROOT / "cronctl" / sub).rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    assert shipped, "expected templates/data files in the source tree"
    assert set(shipped) <= names, set(shipped) - names
    ep = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    scripts = zipfile.ZipFile(whl).read(ep).decode()
    assert "cronctl = cronctl.cli:main" in scripts and "kubectl-cronctl = cronctl.cli:main" in scripts
    assert "kubectl_complete-cronctl = cronctl.cli.completion:kubectl_complete" in scripts


def _pipx() -> str | None:
    found = VENV_BIN / "pipx"
    return str(found) if found.exists() else shutil.which("pipx")


@pytest.mark.xdist_group("packaging")
@pytest.mark.skipif(_pipx() is None, reason="pipx not installed (pip install -e '.[test]' brings it)")
def test_pipx_install_from_the_source_dir_gives_working_commands(source: Path, wheelhouse: Path, tmp_path: Path) -> None:
    env = {"PATH": f"{tmp_path / 'bin'}{os.pathsep}/usr/bin{os.pathsep}/bin", "HOME": str(tmp_path),
           "PIPX_HOME": str(tmp_path / "pipx"), "PIPX_BIN_DIR": str(tmp_path / "bin"),
           "PIPX_MAN_DIR": str(tmp_path / "man"), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    pipx = _pipx()
    assert pipx is not None
    sh(pipx, "install", "--python", sys.executable, "--pip-args", f"--no-index --find-links {wheelhouse}", ".",
       cwd=source, env=env)
    outside = tmp_path  # not the repo: nothing can be imported from the source tree by accident
    assert sh(tmp_path / "bin" / "cronctl", "--version", cwd=outside, env=env).stdout.strip() == f"cronctl {__version__}"
    assert sh(tmp_path / "bin" / "kubectl-cronctl", "--version", cwd=outside, env=env).stdout.strip() \
        == f"cronctl {__version__}"
    py = tmp_path / "pipx" / "venvs" / "cronctl" / "bin" / "python"
    assert sh(py, "-m", "cronctl", "--version", cwd=outside, env=env).stdout.strip() == f"cronctl {__version__}"
    located = sh(py, "-c", "import cronctl, importlib.resources as r; print(cronctl.__file__); "
                 "print((r.files('cronctl') / 'py.typed').is_file())", cwd=outside, env=env).stdout.split()
    assert located[0].startswith(str(tmp_path / "pipx")) and located[1] == "True"


def readme_install_lines() -> list[str]:
    """The commands of README.md's "## Install" block, comments cut."""
    section = (ROOT / "README.md").read_text().split("## Install", 1)[1]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    return [line.split("  #", 1)[0].strip() for line in block.splitlines() if line.strip()]


@pytest.mark.xdist_group("packaging")
@pytest.mark.skipif(not Path("/usr/bin/python3").exists(), reason="no system Python at /usr/bin/python3")
def test_the_readmes_install_works_where_the_system_python_is_externally_managed(
        source: Path, wheelhouse: Path, tmp_path: Path) -> None:
    """Issue 34 item 10: stock Debian and Ubuntu refuse `python3 -m pip install .` (PEP 668). Every
    install line of the README installs into a venv (pipx's or its own), and the venv line, run as
    written by /bin/sh with the system python3 first on PATH, gives a working cronctl. The packages
    come from the local wheelhouse (PIP_NO_INDEX, PIP_FIND_LINKS), not the network."""
    lines = readme_install_lines()
    assert lines, "no install block in README.md"
    assert not [line for line in lines if re.match(r"(python3? -m )?pip3? install", line)], \
        "a bare pip install into the system Python fails with externally-managed-environment"
    [venv_line] = [line for line in lines if "-m venv" in line]
    env = {"PATH": f"/usr/bin{os.pathsep}/bin", "HOME": str(tmp_path), "PIP_NO_INDEX": "1",
           "PIP_FIND_LINKS": str(wheelhouse), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    sh("/bin/sh", "-c", venv_line, cwd=source, env=env)
    assert sh(tmp_path / ".cronctl" / "bin" / "cronctl", "--version", cwd=tmp_path, env=env).stdout.strip() \
        == f"cronctl {__version__}"


# ---------------------------------------------------------------------------- output discipline

BAD = """\
apiVersion: batch/v1
kind: CronJob
metadata: {name: never-runs, namespace: ops}
spec:
  schedule: "30 2 * * *"
  timeZone: America/New_York
  startingDeadlineSeconds: 0
  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}
"""


def cronctl(*args: str, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "TERM", "COLUMNS")}
    env.update(env_extra or {})
    return run_cronctl(args, script=True, env=env, timeout=120)


DATA_COMMANDS = [
    ["--version"],
    ["--help"],
    ["explain", "30 2 * * *", "--tz", "America/New_York", "--from", "2026-03-07T00:00:00Z", "--count", "3"],
    ["completion", "bash"],
    ["runbook"],
    ["runbook", "exit-codes"],
    ["lint", "--help"],
]


@pytest.mark.parametrize("no_color", [None, "1"])
@pytest.mark.parametrize("args", DATA_COMMANDS, ids=[a[0] for a in DATA_COMMANDS])
def test_captured_output_has_no_ansi_and_data_goes_to_stdout(args: list[str], no_color: str | None) -> None:
    r = cronctl(*args, env_extra={"NO_COLOR": no_color} if no_color else None)
    assert r.returncode == 0, r.stderr
    assert r.stdout and r.stderr == ""
    assert not ANSI.search(r.stdout)


@pytest.mark.parametrize("no_color", [None, "1"])
def test_lint_findings_are_plain_text_when_captured(tmp_path: Path, no_color: str | None) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text(BAD)
    r = cronctl("lint", "-f", str(f), env_extra={"NO_COLOR": no_color} if no_color else None)
    assert r.returncode == 8
    assert "CJ003" in r.stdout and r.stderr == ""
    assert not ANSI.search(r.stdout + r.stderr)


@pytest.mark.parametrize("args", [
    ["lint", "-f", "/nonexistent/cj.yaml"],
    ["explain", "0 0 32 * *"],
    ["completion", "tcsh"],
    ["runbook", "no-such-runbook"],
])
def test_errors_go_to_stderr_only_without_ansi_or_traceback(args: list[str]) -> None:
    r = cronctl(*args)
    assert r.returncode in (2, 5), r
    assert r.stdout == ""
    assert r.stderr and "Traceback" not in r.stderr and not ANSI.search(r.stderr)


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_on_a_real_terminal_no_color_removes_colours(tmp_path: Path) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text(BAD)

    def on_tty(extra: dict[str, str]) -> str:
        _code, screen = on_a_terminal(["lint", "-f", str(f)], cwd=tmp_path, script=True, stdin_terminal=False,
                                      timeout=60, TERM="xterm-256color", COLUMNS="200", **extra)
        return screen.decode("utf-8", "replace")

    assert COLOUR.search(on_tty({})), "expected colour on a terminal (else this test proves nothing)"
    assert not COLOUR.search(on_tty({"NO_COLOR": "1"}))
