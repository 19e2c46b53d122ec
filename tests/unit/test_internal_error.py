"""One boundary for the unexpected: any exception that is not a CronctlError is one line
``internal error: ...`` on stderr with exit 70 (INTERNAL); the traceback only with --debug or
CRONCTL_DEBUG=1. Ctrl-C stays 130, usage errors stay 2.

The failing commands are real typer commands registered on the real app for the test (a bug
cannot be asked for by a flag), run through the real ``cronctl.cli.main``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from cronctl.cli import main
from cronctl.cli.app import app
from cronctl.errors import ExitCode
from harness import cronctl

MESSAGE = "kaput \x1b]0;title\x07\nsecond line"


@pytest.fixture
def failing_commands(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("CRONCTL_DEBUG", raising=False)
    before = list(app.registered_commands)

    @app.command("test-bug")
    def _bug() -> None:
        {}["missing"]  # noqa: B018 - a KeyError, as a bug would raise it

    @app.command("test-bug-message")
    def _bug_message() -> None:
        raise RuntimeError(MESSAGE)

    @app.command("test-ctrl-c")
    def _ctrl_c() -> None:
        raise KeyboardInterrupt

    yield
    app.registered_commands[:] = before


@pytest.mark.usefixtures("failing_commands")
def test_an_unexpected_exception_is_one_line_and_exit_70(capfd: pytest.CaptureFixture[str]) -> None:
    code = main(["test-bug"])
    out, err = capfd.readouterr()
    assert code == ExitCode.INTERNAL == 70
    assert out == ""
    assert err.splitlines() == [
        "internal error: KeyError: 'missing' (a bug in cronctl: please report it with the command line; "
        "rerun with --debug or CRONCTL_DEBUG=1 for the traceback)"]


@pytest.mark.usefixtures("failing_commands")
def test_the_message_of_an_internal_error_stays_on_one_line_with_escapes_visible(
        capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["test-bug-message"]) == ExitCode.INTERNAL
    err = capfd.readouterr().err
    assert len(err.splitlines()) == 1 and "\x1b" not in err
    assert "internal error: RuntimeError: kaput \\x1b]0;title\\x07\\nsecond line (a bug in cronctl" in err


@pytest.mark.usefixtures("failing_commands")
@pytest.mark.parametrize(("args", "env"), [(["--debug", "test-bug"], None), (["test-bug"], "1")])
def test_debug_or_cronctl_debug_adds_the_traceback(args: list[str], env: str | None,
                                                   capfd: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    if env:
        monkeypatch.setenv("CRONCTL_DEBUG", env)
    assert main(args) == ExitCode.INTERNAL
    err = capfd.readouterr().err
    assert err.startswith("Traceback (most recent call last):") and "KeyError: 'missing'" in err
    assert err.rstrip().splitlines()[-1].startswith("internal error: KeyError: 'missing'")


@pytest.mark.usefixtures("failing_commands")
def test_cronctl_debug_0_means_off(capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRONCTL_DEBUG", "0")
    assert main(["test-bug"]) == ExitCode.INTERNAL
    assert "Traceback" not in capfd.readouterr().err


@pytest.mark.usefixtures("failing_commands")
def test_ctrl_c_stays_130_and_a_usage_error_stays_2(capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["test-ctrl-c"]) == ExitCode.INTERRUPTED == 130
    err = capfd.readouterr().err
    assert "internal error" not in err and "Traceback" not in err
    assert main(["explain", "--no-such-flag"]) == ExitCode.USAGE == 2
    assert "No such option" in capfd.readouterr().err


ENTRY = """
import threading
from cronctl.cli import main
from cronctl.cli.app import app

@app.command("test-bug")
def _bug() -> None:
    raise ValueError("bad")

@app.command("test-thread-bug")
def _thread_bug() -> None:
    t = threading.Thread(target=lambda: 1 / 0)
    t.start()
    t.join()

main()
"""


@pytest.mark.parametrize(("args", "code", "line"), [
    (["test-bug"], 70, "internal error: ValueError: bad (a bug in cronctl"),
    # a helper thread (run-manual's live progress) that dies: one line too, not a thread traceback
    (["test-thread-bug"], 0, "internal error: ZeroDivisionError: division by zero (a bug in cronctl"),
])
def test_the_real_entry_point_exits_with_the_code_and_one_line(args: list[str], code: int, line: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "CRONCTL_DEBUG"}
    p = cronctl(args, python_code=ENTRY, env=env, timeout=60)
    assert p.returncode == code, p.stderr
    assert p.stderr.startswith(line) and len(p.stderr.splitlines()) == 1, p.stderr
    assert "Traceback" not in p.stderr
