"""Shell completion: the scripts in completions/ are what the app generates, and the bash one
really completes in a real bash against the installed `cronctl`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cronctl.cli import main

ROOT = Path(__file__).resolve().parents[2]
FILES = {"bash": "cronctl.bash", "zsh": "_cronctl", "fish": "cronctl.fish"}
BIN = Path(sys.executable).parent  # the venv's bin, where the `cronctl` console script lives


@pytest.mark.parametrize("shell", sorted(FILES))
def test_the_committed_script_is_exactly_what_cronctl_completion_prints(capfd, shell: str) -> None:
    assert main(["completion", shell]) == 0
    printed, errors = capfd.readouterr()
    kept = (ROOT / "completions" / FILES[shell]).read_text()
    assert printed == kept, f"regenerate: cronctl completion {shell} > completions/{FILES[shell]}"
    assert errors == ""
    assert "_CRONCTL_COMPLETE=complete_" in printed


def bash_complete(*words: str) -> list[str]:
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
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], capture_output=True, text=True,
                       env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    return [line for line in r.stdout.splitlines() if line]


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash on this machine")
def test_bash_completes_a_subcommand_from_its_prefix() -> None:
    assert bash_complete("cronctl", "ex") == ["explain"]


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash on this machine")
def test_bash_completes_a_flag_and_its_choices() -> None:
    assert bash_complete("cronctl", "lint", "--fail") == ["--fail-on"]
    assert bash_complete("cronctl", "lint", "--fail-on", "") == ["error", "warning", "info", "none"]


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash on this machine")
def test_bash_lists_every_subcommand_on_an_empty_word() -> None:
    got = bash_complete("cronctl", "")
    assert {"completion", "explain", "lint"} <= set(got)


@pytest.mark.parametrize(("shell", "where"), [
    ("bash", ".local/share/bash-completion/completions/cronctl"),
    ("zsh", ".zfunc/_cronctl"),
    ("fish", ".config/fish/completions/cronctl.fish"),
])
def test_install_writes_the_script_to_the_conventional_place_and_says_where(
        capfd, monkeypatch, tmp_path: Path, shell: str, where: str) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    for var in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "BASH_COMPLETION_USER_DIR"):
        monkeypatch.delenv(var, raising=False)
    assert main(["completion", shell, "--install"]) == 0
    out, err = capfd.readouterr()
    target = tmp_path / where
    assert target.read_text() == (ROOT / "completions" / FILES[shell]).read_text()
    assert out == ""  # nothing on stdout: the script went to the file
    assert f"installed {shell} completion in {target}" in err


def test_an_unknown_shell_is_a_usage_error(capfd) -> None:
    assert main(["completion", "tcsh"]) == 2
    assert "tcsh" in capfd.readouterr().err


def ask(shell: str, line: str, **extra: str) -> str:
    """What the installed cronctl answers when the zsh/fish script calls it back for `line`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("_CRONCTL")}
    env.update({"_CRONCTL_COMPLETE": f"complete_{shell}", "_TYPER_COMPLETE_ARGS": line, **extra})
    r = subprocess.run([str(BIN / "cronctl")], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_the_zsh_callback_offers_the_subcommand_with_its_help() -> None:
    assert ask("zsh", "cronctl ex").startswith("_arguments '*: :((\"explain\":\"Explain a schedule")


def test_the_fish_callback_offers_the_flag_with_its_help() -> None:
    got = ask("fish", "cronctl lint --fail", _TYPER_COMPLETE_FISH_ACTION="get-args")
    assert got.splitlines()[0].startswith("--fail-on\tExit with code 8")
