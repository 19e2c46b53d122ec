"""The typer application. Each command lives in its own module and registers itself here.

Command modules import only typer, rich and light cronctl modules at import time; anything
heavy (the kubernetes client, jinja2) is imported inside the command function, so that
``cronctl explain`` starts fast.
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from cronctl import __version__

app = typer.Typer(
    name="cronctl",
    help="Safe manual runs, Kubernetes-exact schedule explanations and incident bundles for CronJobs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    pretty_exceptions_show_locals=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"cronctl {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        Optional[bool],
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit."),
    ] = None,
    debug: Annotated[
        bool,
        typer.Option("--debug", help="On an internal error, print its traceback (also CRONCTL_DEBUG=1)."),
    ] = False,
) -> None:
    """cronctl: the on-call tool for Kubernetes CronJobs."""
    from cronctl.cli import common

    common.DEBUG = common.DEBUG or debug


# Command modules register themselves on `app` when imported. Keep this list sorted.
from cronctl.cli import alerts as _alerts  # noqa: E402,F401
from cronctl.cli import backfill as _backfill  # noqa: E402,F401
from cronctl.cli import bundle as _bundle  # noqa: E402,F401
from cronctl.cli import completion as _completion  # noqa: E402,F401
from cronctl.cli import explain as _explain  # noqa: E402,F401
from cronctl.cli import history as _history  # noqa: E402,F401
from cronctl.cli import lint as _lint  # noqa: E402,F401
from cronctl.cli import pause as _pause  # noqa: E402,F401
from cronctl.cli import restore as _restore  # noqa: E402,F401
from cronctl.cli import run_manual as _run_manual  # noqa: E402,F401
from cronctl.cli import runbook as _runbook  # noqa: E402,F401
from cronctl.cli import status as _status  # noqa: E402,F401
from cronctl.cli import wait as _wait  # noqa: E402,F401
