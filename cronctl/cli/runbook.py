"""`cronctl runbook [NAME [CRONJOB]]`: list the runbooks, or print one as Markdown with a real
CronJob's namespace, name, schedule, zone and current state filled in."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Optional

import typer

from cronctl.cli import env
from cronctl.cli.candidates import runbook_names
from cronctl.cli.common import ContextOpt, KubeconfigOpt, RequestTimeoutOpt, NamespaceOpt, Output, OutputOpt, emit
from cronctl.cli.common import cronjob_arg, cronjob_names
from cronctl.textsafe import visible


def runbook(
    ctx: typer.Context,
    name: Annotated[Optional[str], typer.Argument(
        help="Runbook to print (omit to list them).", show_default=False, autocompletion=runbook_names)] = None,
    cronjob: Annotated[Optional[str], typer.Argument(
        help="Fill in this live CronJob (cronjob/NAME or NAME); without it, $NS/$CJ placeholders.",
        show_default=False, callback=cronjob_arg, autocompletion=cronjob_names)] = None,
    output: OutputOpt = Output.text,
    kubeconfig: KubeconfigOpt = None,
    request_timeout: RequestTimeoutOpt = None,
    context: ContextOpt = None,
    namespace: NamespaceOpt = None,
) -> None:
    """Print a runbook (manual run, incident bundle, catch-up, DST, Forbid, application locking, alerts,
    RBAC, exit codes)."""
    from cronctl.runbooks import list_runbooks, render, runbook_context

    run = env.of(ctx)
    if name is None:
        books = list_runbooks()
        if output is Output.text:
            from rich.table import Table

            table = Table(box=None, show_edge=False, pad_edge=False)
            table.add_column("NAME", no_wrap=True)
            table.add_column("TITLE", overflow="fold")
            for b in books:
                table.add_row(b.name, b.title)
            run.out.print(table)
        else:
            emit(run.out, [{"name": b.name, "title": b.title} for b in books], output)
        return

    now = run.now()  # read once; the context is computed from it
    obj = None
    if cronjob is not None:

        obj = run.connect(kubeconfig, context, namespace).get_cronjob(cronjob)
    filled = runbook_context(obj, now, namespace=namespace)
    text = render(name, filled)
    if output is Output.text:
        typer.echo(visible(text, multiline=True), nl=not text.endswith("\n"))  # the CronJob's text filled in
    elif output is Output.json:
        emit(run.out, {"name": name, "markdown": text, "context": filled}, output)
    else:
        emit(run.out, {"name": name, "markdown": text}, output)
