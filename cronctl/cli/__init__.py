"""The command line. ``main`` is the one place where errors become exit codes."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Run cronctl; never lets a traceback reach the user for an expected failure."""
    from cronctl.errors import CronctlError, ExitCode

    from cronctl.cli.app import app
    from cronctl.cli.common import Abort, ClickException, Exit, err

    # the exception classes of the click that typer really runs on (see cronctl.cli.common)
    usage_errors: tuple[type[BaseException], ...] = (ClickException,)
    aborts: tuple[type[BaseException], ...] = (Abort,)
    exits: tuple[type[BaseException], ...] = (Exit,)
    if "click" in sys.modules:  # something imported the click package too: catch its classes as well
        import click

        usage_errors += (click.ClickException,)
        aborts += (click.exceptions.Abort,)
        exits += (click.exceptions.Exit,)

    prog = "kubectl cronctl" if sys.argv and sys.argv[0].endswith("kubectl-cronctl") else "cronctl"
    try:
        rv = app(args=argv, prog_name=prog, standalone_mode=False)
    except CronctlError as e:
        from cronctl.redact import Redactor

        red = Redactor()  # an error can quote a URL, a log line or an API message: no secret in it
        err.print(f"error: {red.text(e.message)}", markup=False)
        if e.hint:
            err.print(f"hint: {red.text(e.hint)}", markup=False)
        code = int(e.exit_code)
    except aborts:
        err.print("interrupted", markup=False)
        code = int(ExitCode.INTERRUPTED)
    except KeyboardInterrupt:
        err.print("interrupted", markup=False)
        code = int(ExitCode.INTERRUPTED)
    except exits as e:
        code = int(e.exit_code)  # type: ignore[attr-defined]
    except usage_errors as e:
        e.show()  # type: ignore[attr-defined]
        code = int(e.exit_code)  # type: ignore[attr-defined]
    else:
        code = int(rv) if isinstance(rv, int) else 0
    if argv is None:
        sys.exit(code)
    return code
