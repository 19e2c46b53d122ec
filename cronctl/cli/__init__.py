"""The command line. ``main`` is the one place where errors become exit codes."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    import typer

    from cronctl.cli.env import Environment

    from cronctl.errors import CronctlError


def application() -> typer.Typer:
    """The typer application and its command table (cronctl.cli.app; commands load when they run)."""
    from cronctl.cli.app import app

    if os.environ.get("_CRONCTL_COMPLETE"):  # the shell asks cronctl back for completions:
        import cronctl.cli.completion  # noqa: F401 - registers typer's bash/zsh/fish completers
    return app


def main(argv: list[str] | None = None, *, stdout: TextIO | None = None, stderr: TextIO | None = None,
         environment: Environment | None = None) -> int:
    """Run cronctl; never lets a traceback reach the user for an expected failure.

    ``stdout`` and ``stderr`` (default: the process's) receive everything cronctl writes: both
    consoles of the run's Environment, click's usage errors and help. Tests pass StringIO objects
    to capture a run in-process (tests/conftest.py ``run_cli``). ``environment`` (default: a new one,
    the system clock, CRONCTL_DEBUG) is the run's world: a test can hand in a fixed clock.
    """
    with _streams(stdout, stderr):
        return _main(argv, environment)


@contextlib.contextmanager
def _streams(stdout: TextIO | None, stderr: TextIO | None) -> Iterator[None]:
    # The consoles (Environment.out/err) are built without a file: they write to whatever
    # sys.stdout / sys.stderr is at the time, as click's echo and help do. Redirecting those two
    # therefore sends every byte of the run to the given streams.
    with contextlib.ExitStack() as stack:
        if stdout is not None:
            stack.enter_context(contextlib.redirect_stdout(stdout))
        if stderr is not None:
            stack.enter_context(contextlib.redirect_stderr(stderr))
        yield


def _main(argv: list[str] | None, environment: Environment | None) -> int:
    from cronctl.errors import CronctlError, ExitCode

    from cronctl.cli.env import Environment
    from cronctl.cli.exceptions import Abort, ClickException, Exit

    # the exception classes of the click that typer really runs on (see cronctl.cli.exceptions)
    usage_errors: tuple[type[BaseException], ...] = (ClickException,)
    aborts: tuple[type[BaseException], ...] = (Abort,)
    exits: tuple[type[BaseException], ...] = (Exit,)
    if "click" in sys.modules:  # something imported the click package too: catch its classes as well
        import click

        usage_errors += (click.ClickException,)
        aborts += (click.exceptions.Abort,)
        exits += (click.exceptions.Exit,)

    run = environment or Environment()
    run.debug = run.debug or os.environ.get("CRONCTL_DEBUG", "") not in ("", "0")  # or --debug
    if argv is None:  # the process is ours (an in-process caller keeps its own hook)
        threading.excepthook = lambda args: _thread_boundary(run, args)
    prog = "kubectl cronctl" if sys.argv and sys.argv[0].endswith("kubectl-cronctl") else "cronctl"
    try:
        rv = application()(args=argv, prog_name=prog, standalone_mode=False, obj=run)
    except CronctlError as e:
        for line in error_lines(e):
            run.err.print(line, markup=False)
        code = int(e.exit_code)
    except aborts:
        run.err.print("interrupted", markup=False)
        code = int(ExitCode.INTERRUPTED)
    except KeyboardInterrupt:
        run.err.print("interrupted", markup=False)
        code = int(ExitCode.INTERRUPTED)
    except exits as e:
        code = int(e.exit_code)  # type: ignore[attr-defined]
    except usage_errors as e:
        _sanitise_usage_error(e)
        e.show(file=sys.stderr)  # type: ignore[attr-defined]
        code = int(e.exit_code)  # type: ignore[attr-defined]
    except Exception as e:  # the one boundary for the unexpected: a bug, never a traceback by default
        _internal_error(run, e)
        code = int(ExitCode.INTERNAL)
    else:
        code = int(rv) if isinstance(rv, int) else 0
    if argv is None:
        sys.exit(code)
    return code


def _sanitise_usage_error(e: BaseException) -> None:
    """click's usage error quotes what was typed (an extra argument, an unknown option: a file name
    from a shell glob can hold ESC, CR, LF or RLO): its message goes through the sanitiser, on one
    line, like every ``error:`` line."""
    from cronctl.textsafe import visible

    message = getattr(e, "message", None)
    if isinstance(message, str):
        e.message = visible(message)  # type: ignore[attr-defined]
    hint = getattr(e, "param_hint", None)
    if isinstance(hint, str):
        e.param_hint = visible(hint)  # type: ignore[attr-defined]
    option = getattr(e, "option_name", None)
    if isinstance(option, str):
        e.option_name = visible(option)  # type: ignore[attr-defined]


def error_lines(e: CronctlError) -> list[str]:
    """What an expected error prints: ``error: ...`` and maybe ``hint: ...``, the inputs a service
    names (cronctl.errors.option) written as their flags."""
    from cronctl.cli.common import flag_of
    from cronctl.redact import Redactor
    from cronctl.textsafe import visible

    # an error can quote a URL, a log line or an API message: no secret in it; and it carries
    # names, annotations and API text: one line each, escapes visible
    red = Redactor()
    message, hint = e.naming(flag_of)
    return [f"error: {visible(red.text(message))}"] + ([f"hint: {visible(red.text(hint))}"] if hint else [])


def internal_error_line(e: BaseException) -> str:
    """The one line an unexpected exception becomes (its message made visible, on one line)."""
    from cronctl.textsafe import visible

    return (f"internal error: {type(e).__name__}: {visible(str(e))[:500]} (a bug in cronctl: please report it "
            f"with the command line; rerun with --debug or CRONCTL_DEBUG=1 for the traceback)")


def _internal_error(run: Environment, e: BaseException) -> None:
    if run.debug:
        import traceback

        run.err.print("".join(traceback.format_exception(e)).rstrip(), markup=False)
    run.err.print(internal_error_line(e), markup=False)


def _thread_boundary(run: Environment, args: threading.ExceptHookArgs) -> None:
    """A helper thread (run-manual's live progress) that dies says so in one line, like main."""
    if args.exc_value is not None and not isinstance(args.exc_value, SystemExit):
        _internal_error(run, args.exc_value)
