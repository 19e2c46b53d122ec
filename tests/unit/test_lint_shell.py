"""CJ028's reading of ``sh -c`` scripts (cronctl.lint.shell): which argv is a shell running a
script, and which scripts can end with exit code 0 although a command in them failed.

The hand-written table follows POSIX/bash semantics (``set -e`` is off by default and ignores a
failure before ``&&``; a pipeline's status is its last stage's unless ``pipefail``). The oracle
test asks real bash instead: for generated scripts, does making any one command fail still
exit 0? The analysis must say "problem" exactly then.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cronctl.lint.shell import exit_code_problems, shell_call


def problems(argv: list[str]) -> list[str] | None:
    call = shell_call(argv)
    return None if call is None else exit_code_problems(call)


@pytest.mark.parametrize(("argv", "script", "index"), [
    (["sh", "-c", "run"], "run", 2),
    (["/bin/sh", "-c", "run"], "run", 2),
    (["bash", "-lc", "run"], "run", 2),
    (["/bin/ash", "-ec", "run"], "run", 2),
    (["dash", "-e", "-c", "run"], "run", 3),
    (["bash", "-euo", "pipefail", "-c", "run", "name0"], "run", 4),  # $0 after the script
    (["bash", "--noprofile", "-c", "run"], "run", 3),
    (["/usr/bin/env", "LANG=C", "bash", "-c", "run"], "run", 4),
    (["busybox", "sh", "-c", "run"], "run", 3),
])
def test_a_shell_running_a_script_is_recognised(argv: list[str], script: str, index: int) -> None:
    call = shell_call(argv)
    assert call is not None and call.script == script and call.index == index


@pytest.mark.parametrize("argv", [
    [], ["python", "-c", "a; b"], ["sh", "/scripts/run.sh"], ["sh"], ["sh", "-c"], ["bash", "-e", "job.sh"],
    ["/app/sync", "--orders"], ["shellcheck", "-c", "x"],
])
def test_anything_else_is_not_a_shell_script(argv: list[str]) -> None:
    assert shell_call(argv) is None


@pytest.mark.parametrize(("argv", "flags", "options"), [
    (["bash", "-euo", "pipefail", "-c", "x"], {"e", "u"}, {"pipefail"}),
    (["bash", "-o", "errexit", "-c", "x"], {"e"}, set()),
    (["sh", "-e", "+e", "-c", "x"], set(), set()),
    (["sh", "-xc", "x"], {"x"}, set()),
])
def test_shell_options_before_the_script_are_read(argv: list[str], flags: set[str], options: set[str]) -> None:
    call = shell_call(argv)
    assert call is not None and call.flags == flags and call.options == options


# (script, a substring each expected problem has; empty = nothing to report)
FINE = [
    "python job.py",
    "exec python job.py --since \"$(date -d yesterday +%F)\"",
    "migrate && sync && report",
    "migrate &&\n  sync",
    "set -e\nmigrate\nsync\nexit 0",
    "set -euo pipefail; pg_dump db | gzip > /out/db.gz; upload /out/db.gz",
    "echo starting; export TZ=UTC; exec app",
    "if [ -z \"$TOKEN\" ]; then echo 'no token'; exit 1; fi\nexec app",
    "for f in /in/*; do process \"$f\"; done",
    "run; rc=$?; echo \"exit $rc\"; exit $rc",
    "prepare || exit 1; exec app",
    "rm -f /tmp/lock || true; exec app",  # an ignored step that is not the last one
    "cat <<EOF | kubectl apply -f -\nkind: ConfigMap; x | y\nEOF\n",
    "echo \"a; b | c\" && app",
    "# comment; with | pipe\nexec app",
    "retry() { app || app; }; retry",
    "case \"$MODE\" in full) full_sync; report;; *) delta_sync;; esac",
    "",
]
PROBLEMS = [
    ("echo start; python job.py; echo done", ["'python job.py' is followed by more commands without set -e"]),
    ("migrate\nsync", ["'migrate' is followed by more commands without set -e"]),
    ("a & b", ["'a' is followed by"]),
    ("pg_dump db | gzip > /out/db.gz", ["pipeline 'pg_dump db | gzip > /out/db.gz' without set -o pipefail"]),
    ("set -e; pg_dump db | gzip > x", ["without set -o pipefail"]),
    ("python job.py || true", ["'|| true' on the last command"]),
    ("python job.py || :", ["'|| :' on the last command"]),
    ("python job.py || echo failed", ["'|| echo' on the last command"]),
    ("python job.py; exit 0", ["'python job.py' is followed by more commands without set -e",
                               "it ends with 'exit 0'"]),
    ("set -e; a && b; c", ["set -e does not stop at a failure before &&"]),
    ("set -e; set +e; a; b", ["'a' is followed by"]),
    ("a; set -e; b; c", ["'a' is followed by"]),
    ("TOKEN=$(get-token); use \"$TOKEN\"", ["'TOKEN=$(get-token)' is followed by"]),
    ("for f in *; do p \"$f\"; done; echo ok", ["'for f in *; do p \"$f\"; done' is followed by"]),
    ("python a_rather_long_command_name.py --with --many --flags; b", ["'python a_rather_long_command_name.py..."]),
]


@pytest.mark.parametrize("script", FINE)
def test_scripts_that_keep_the_exit_code_are_fine(script: str) -> None:
    assert problems(["sh", "-c", script]) == []


@pytest.mark.parametrize(("script", "needles"), PROBLEMS)
def test_scripts_that_can_lose_a_failure_say_what_and_where(script: str, needles: list[str]) -> None:
    found = problems(["sh", "-c", script])
    assert found is not None and len(found) == len(needles), found
    for got, needle in zip(found, needles):
        assert needle in got


@pytest.mark.parametrize("argv", [
    ["sh", "-ec", "a; b"], ["bash", "-o", "errexit", "-c", "a; b"],
    ["bash", "-o", "pipefail", "-c", "a | b"], ["bash", "-eo", "pipefail", "-c", "a | b; c"],
])
def test_errexit_and_pipefail_given_as_shell_options_count(argv: list[str]) -> None:
    assert problems(argv) == []


# --------------------------------------------------------------------------- oracle: real bash

BASH = shutil.which("bash")


def _work(i: int) -> str:
    return f'test "$W{i}" = 1'  # fails when W<i> is 0


@st.composite
def scripts(draw: st.DrawFn) -> tuple[list[str], int]:
    """A script of top-level commands made of pipelines and && lists of work commands, with
    set -e / pipefail in front or as shell options, ending maybe in exit 0, || true or exec."""
    n = 0
    statements = []
    for _ in range(draw(st.integers(1, 3))):
        pipelines = []
        for _ in range(draw(st.integers(1, 2))):
            stages = []
            for _ in range(draw(st.integers(1, 2))):
                stages.append(_work(n))
                n += 1
            pipelines.append(" | ".join(stages))
        statements.append(" && ".join(pipelines))
    end = draw(st.sampled_from(["", "exit", "true", "exec"]))
    if end == "exit":
        statements.append("exit 0")
    elif end == "true":
        statements[-1] += " || true"
    elif end == "exec" and statements[-1] == _work(n - 1):  # a single command
        statements[-1] = "exec " + statements[-1]
    prefix = draw(st.sampled_from(["", "set -e", "set -o pipefail", "set -eo pipefail"]))
    sep = draw(st.sampled_from(["; ", "\n"]))
    script = sep.join(([prefix] if prefix else []) + statements)
    shell = draw(st.sampled_from([["bash", "-c"], ["bash", "-ec"], ["bash", "-o", "pipefail", "-c"]]))
    return [*shell, script], n


@pytest.mark.skipif(BASH is None, reason="needs bash")
@settings(max_examples=80, deadline=None)
@given(scripts())
def test_a_problem_is_reported_exactly_when_bash_can_exit_0_after_a_failure(case: tuple[list[str], int]) -> None:
    argv, n = case
    codes = []
    for failing in range(-1, n):
        env = {f"W{i}": "0" if i == failing else "1" for i in range(n)}
        env["PATH"] = "/usr/bin:/bin"
        codes.append(subprocess.run([BASH, *argv[1:]], env=env, check=False).returncode)
    assert codes[0] == 0, "without a failure every script succeeds"
    lost = any(code == 0 for code in codes[1:])
    found = problems(argv)
    assert found is not None
    assert bool(found) == lost, (argv[-1], codes, found)


# --------------------------------------------------------------------------- robustness

@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from(list("ab $(){}[]'\"`\\;&|<>#\n-ce=?!")), max_size=30)
                | st.text(max_size=5), max_size=6))
def test_any_argv_is_read_without_an_exception(argv: list[str]) -> None:
    for head in ([], ["sh", "-c"], ["bash", "-euo", "pipefail", "-c"]):
        found = problems([*head, *argv])
        assert found is None or all(isinstance(p, str) and p for p in found)
