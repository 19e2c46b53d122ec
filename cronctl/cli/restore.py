"""``cronctl restore CRONJOB``: finish or undo a manual run (see cronctl.procedure.restore)."""

from __future__ import annotations

from typing import Annotated

import typer

from cronctl.cli.app import app
from cronctl.cli.common import (CatchUp, CatchUpOpt, ContextOpt, KubeconfigOpt, NamespaceOpt, Output, OutputOpt,
                                YesOpt, is_interactive, out)


@app.command("restore")
def restore_cmd(
    cronjob: Annotated[str, typer.Argument(help="The CronJob.", show_default=False)],
    force: Annotated[bool, typer.Option("--force", help="Clear a stale run record (original value unknown, or "
                                        "its holder still alive on this host) after confirmation.")] = False,
    catch_up: CatchUpOpt = CatchUp.latest,
    yes: YesOpt = False,
    output: OutputOpt = Output.text,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    namespace: NamespaceOpt = None,
) -> None:
    """Put back the suspend value recorded by run-manual and clear its record.

    Refuses (exit 3) while a child Job is unfinished and un-suspending would let a scheduled Job
    start beside it, and when the CronJob is suspended without a cronctl record. With no record
    and not suspended there is nothing to restore (exit 0).
    """
    from cronctl.cli.runtime import RichReporter, holder_alive, print_data
    from cronctl.kube import connect
    from cronctl.procedure.base import SystemClock
    from cronctl.procedure.restore import RestoreOptions, restore

    cluster = connect(kubeconfig, context, namespace)
    opts = RestoreOptions(cronjob=cronjob, yes=yes, interactive=is_interactive(), force=force,
                          holder_alive=holder_alive, catch_up=catch_up.value)
    res = restore(cluster, opts, SystemClock(), RichReporter())
    if output != Output.text:
        print_data(res, output)
    else:
        out.print(res["message"], markup=False)
