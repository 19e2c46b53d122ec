"""`kubectl cronctl ...`: the `kubectl-cronctl` console script found and run by a real kubectl.

kubectl: ``harness.kubectl_path()``, the one `scripts/cluster install` builds (the version that runs
or is asked for), else a `kubectl` on PATH that really is kubectl. Needs no API server: plugins run
client-side.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cronctl import __version__
from harness import kubectl_path

VENV_BIN = Path(sys.executable).parent
KUBECTL = kubectl_path()
if KUBECTL is None and os.environ.get("CI"):
    pytest.fail("no kubectl: run scripts/cluster install", pytrace=False)
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="no kubectl binary (scripts/cluster install builds one)")


def kubectl(*args: str, tmp_home: Path) -> subprocess.CompletedProcess[str]:
    assert KUBECTL is not None
    assert (VENV_BIN / "kubectl-cronctl").exists(), "pip install -e . puts kubectl-cronctl in the venv"
    env = {"PATH": f"{VENV_BIN}{os.pathsep}/usr/bin{os.pathsep}/bin", "HOME": str(tmp_home),
           "KUBECONFIG": str(tmp_home / "no-kubeconfig"), "LANG": "C.UTF-8"}
    return subprocess.run([KUBECTL, *args], capture_output=True, text=True, env=env, timeout=120)


def test_kubectl_runs_the_plugin_and_it_prints_its_version(tmp_path: Path) -> None:
    r = kubectl("cronctl", "--version", tmp_home=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"cronctl {__version__}"


def test_the_plugin_names_itself_kubectl_cronctl_in_help(tmp_path: Path) -> None:
    r = kubectl("cronctl", "--help", tmp_home=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Usage: kubectl cronctl" in r.stdout


def test_kubectl_cronctl_explain_computes_the_new_york_spring_gap(tmp_path: Path) -> None:
    # 2026-03-08 02:30 does not exist in New York (02:00 EST -> 03:00 EDT at 07:00Z): after the
    # Saturday run at 07:30Z the next is Monday 02:30 EDT = 06:30Z.
    r = kubectl("cronctl", "explain", "30 2 * * *", "--tz", "America/New_York",
                "--from", "2026-03-07T00:00:00Z", "--count", "2", "-o", "json", tmp_home=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert [n["utc"] for n in doc["next"]] == ["2026-03-07T07:30:00Z", "2026-03-09T06:30:00Z"]


def test_the_plugin_keeps_cronctl_exit_codes_and_stderr(tmp_path: Path) -> None:
    r = kubectl("cronctl", "lint", "-f", str(tmp_path / "missing.yaml"), tmp_home=tmp_path)
    assert r.returncode == 5
    assert r.stdout == ""
    assert r.stderr.strip() == f"error: {tmp_path / 'missing.yaml'}: no such file"


def test_kubectl_plugin_list_shows_the_plugin(tmp_path: Path) -> None:
    r = kubectl("plugin", "list", tmp_home=tmp_path)
    assert str(VENV_BIN / "kubectl-cronctl") in r.stdout, r.stdout + r.stderr


def test_kubectl_completes_plugin_subcommands_and_flag_values(tmp_path: Path) -> None:
    # kubectl runs kubectl_complete-cronctl for `kubectl cronctl <TAB>` (cobra __complete protocol)
    assert (VENV_BIN / "kubectl_complete-cronctl").exists()
    r = kubectl("__complete", "cronctl", "ex", tmp_home=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["explain", ":4"]
    r = kubectl("__complete", "cronctl", "lint", "--fail-on", "", tmp_home=tmp_path)
    assert r.stdout.splitlines() == ["error", "warning", "info", "none", ":4"]
    # nothing to offer (a file name after -f): directive 0 lets the shell complete files
    r = kubectl("__complete", "cronctl", "lint", "-f", "", tmp_home=tmp_path)
    assert r.stdout.splitlines()[-1] == ":0"
