"""The typer application and its command table.

Each command is a plain function in its own module (``cronctl.cli.<command>``); this module
imports them and registers each one explicitly in :data:`COMMANDS`, in the order ``--help`` lists
them. Command modules never import this one (tests/unit/test_architecture.py checks it), so there
is no import cycle and nothing registers itself by being imported.

Command modules import only typer, rich and light cronctl modules at import time; anything
heavy (the kubernetes client, jinja2) is imported inside the command function, so that
``cronctl explain`` starts fast.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Optional

import typer

from cronctl import __version__
from cronctl.cli import (alerts, backfill, bundle, completion, explain, history, lint, pause, restore, run_manual,
                         runbook, status, wait)

#: (name, function) of every command, in the order of ``cronctl --help``
COMMANDS: tuple[tuple[str, Callable[..., Any]], ...] = (
    ("alerts", alerts.alerts),
    ("backfill", backfill.backfill),
    ("bundle", bundle.bundle),
    ("completion", completion.completion),
    ("explain", explain.explain),
    ("history", history.history),
    ("lint", lint.lint),
    ("pause", pause.pause_cmd),
    ("resume", pause.resume_cmd),
    ("restore", restore.restore_cmd),
    ("run-manual", run_manual.run_manual_cmd),
    ("runbook", runbook.runbook),
    ("status", status.status_cmd),
    ("wait", wait.wait_cmd),
)

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


for _name, _command in COMMANDS:
    app.command(_name)(_command)
