"""``cronctl wait CRONJOB``: follow an in-flight or interrupted manual run to its end and finish it
(see cronctl.procedure.attach)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from cronctl.cli.common import CatchUp, CatchUpOpt, ContextOpt, KubeconfigOpt, RequestTimeoutOpt, NamespaceOpt, Output, OutputOpt
from cronctl.cli.common import cronjob_arg, cronjob_names


def wait_cmd(
    ctx: typer.Context,
    cronjob: Annotated[str, typer.Argument(help="The CronJob a run-manual holds.", show_default=False,
                                           callback=cronjob_arg, autocompletion=cronjob_names)],
    timeout: Annotated[str, typer.Option("--timeout", help="Give up waiting after this long (1h, 30m, 1d12h; a bare "
                                         "number is seconds); the Job runs on.")] = "1h",
    run_dir: Annotated[Optional[str], typer.Option(
        "--run-dir", help="Where the run directory goes (default $CRONCTL_RUN_DIR or ./runs).")] = None,
    catch_up: CatchUpOpt = CatchUp.latest,
    output: OutputOpt = Output.text,
    kubeconfig: KubeconfigOpt = None,
    request_timeout: RequestTimeoutOpt = None,
    context: ContextOpt = None,
    namespace: NamespaceOpt = None,
) -> None:
    """Re-attach to the manual run that holds the CronJob: follow its Job to the end, save every
    pod's logs, then finish as run-manual would (after success: the slot marked done, --catch-up,
    the restore; after a failure it stays suspended).

    Exit codes: 0 the Job succeeded and the CronJob was restored, 1 the Job failed, 3 no run holds
    it or its Job was never created or is gone (nothing changed), 4 timeout and 130 Ctrl-C (the Job
    runs on, nothing changed, the logs so far are saved), 6 not found, 7 API error.
    """
    from cronctl.cli import durations as flags
    from cronctl.cli import env
    from cronctl.cli.runtime import RichReporter, finish_run, holder, holder_alive, sigterm_as_interrupt
    from cronctl.procedure.attach import AttachOptions, attach

    opts = AttachOptions(cronjob=cronjob, timeout=flags.TIMEOUT.seconds(timeout), run_dir=run_dir,
                         catch_up=catch_up.value, holder=holder(), holder_alive=holder_alive)
    run = env.of(ctx)
    cluster = run.connect(kubeconfig, context, namespace)
    sigterm_as_interrupt()
    res = attach(cluster, opts, run.clock, RichReporter(run.err))
    finish_run(run, res, output, [])
