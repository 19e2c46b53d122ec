"""The command line. ``main`` is the one place where errors become exit codes."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Run cronctl; never lets a traceback reach the user for an expected failure."""
    import click

    from cronctl.errors import CronctlError, ExitCode

    # typer >= 0.20 carries its own copy of click: its usage errors and Abort are not click's.
    usage_errors: tuple[type[BaseException], ...] = (click.ClickException,)
    aborts: tuple[type[BaseException], ...] = (click.exceptions.Abort,)
    try:
        from typer import _click as _tclick
        from typer.exceptions import Abort as _TAbort

        usage_errors += (_tclick.exceptions.ClickException,)
        aborts += (_TAbort,)
    except ImportError:  # an older typer on plain click
        pass

    from cronctl.cli.app import app
    from cronctl.cli.common import err

    prog = "kubectl cronctl" if sys.argv and sys.argv[0].endswith("kubectl-cronctl") else "cronctl"
    try:
        rv = app(args=argv, prog_name=prog, standalone_mode=False)
    except CronctlError as e:
        err.print(f"error: {e.message}", markup=False)
        if e.hint:
            err.print(f"hint: {e.hint}", markup=False)
        code = int(e.exit_code)
    except aborts:
        err.print("interrupted", markup=False)
        code = int(ExitCode.INTERRUPTED)
    except KeyboardInterrupt:
        err.print("interrupted", markup=False)
        code = int(ExitCode.INTERRUPTED)
    except click.exceptions.Exit as e:
        code = int(e.exit_code)
    except usage_errors as e:
        e.show()  # type: ignore[attr-defined]
        code = int(e.exit_code)  # type: ignore[attr-defined]
    else:
        code = int(rv) if isinstance(rv, int) else 0
    if argv is None:
        sys.exit(code)
    return code
