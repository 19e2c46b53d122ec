"""``cronctl reconcile CRONJOB``: expected occurrences without a done effect, as replay requests
(see cronctl.procedure.effects)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from cronctl.cli.common import ContextOpt, KubeconfigOpt, RequestTimeoutOpt, NamespaceOpt, Output, OutputOpt
from cronctl.cli.common import cronjob_arg, cronjob_names


def reconcile(
    ctx: typer.Context,
    cronjob: Annotated[str, typer.Argument(help="The CronJob whose Jobs run cronctl claim.", show_default=False,
                                           callback=cronjob_arg, autocompletion=cronjob_names)],
    since: Annotated[str, typer.Option("--since", help="How far back (7d, 36h; a bare number is seconds).",
                                       metavar="DURATION")] = "7d",
    workflow: Annotated[Optional[str], typer.Option(
        "--workflow", help="The workflow key the Jobs claim under (default namespace/CronJob).",
        show_default=False, metavar="KEY")] = None,
    ledger: Annotated[Optional[str], typer.Option(
        "--ledger", help="The ledger holding the claims (default $CRONCTL_LEDGER, else "
        "$XDG_STATE_HOME/cronctl/ledger.sqlite).", show_default=False, metavar="URL")] = None,
    output: OutputOpt = Output.text,
    kubeconfig: KubeconfigOpt = None,
    request_timeout: RequestTimeoutOpt = None,
    context: ContextOpt = None,
    namespace: NamespaceOpt = None,
) -> int:
    """List expected occurrences whose effect is not done (none, failed, ambiguous), each as a replay request.

    Every slot of the schedule in the window (the last minute left out: it may still be claiming)
    against the claim rows cronctl claim wrote: a slot with no row, a failed or final attempt, or
    an ambiguous one (running, its lease expired) is printed with a `cronctl backfill ... --slot T`
    line. Exit 8 when there is a gap, 0 when every occurrence's effect is done, 9 ledger, 6 not found.
    """
    from cronctl.cli import durations as flags
    from cronctl.cli import env
    from cronctl.cli.common import emit
    from cronctl.errors import ExitCode
    from cronctl.procedure.effects import reconcile as reconcile_effects
    from cronctl.redact import Redactor

    run = env.of(ctx)
    out = run.out
    window = flags.SINCE.delta(since)
    cluster = run.connect(kubeconfig, context, namespace)
    res = reconcile_effects(cluster, cronjob, ledger, since=window, now=run.now(), workflow=workflow)
    if output != Output.text:
        emit(out, Redactor().data(res.as_dict()), output.value)
    else:
        out.print(f"{res.namespace}/{res.name} (workflow {res.workflow}): {res.expected} occurrence(s) expected "
                  f"since {res.as_dict()['since']}, {res.done} done, {len(res.gaps)} without a done effect")
        for g in res.gaps:
            out.print(f"{g.as_dict()['occurrence']}  {g.effect}  {g.detail}")
            out.print(f"  {g.replay}")
            if g.note:
                out.print(f"  note: {g.note}")
    return int(ExitCode.FINDINGS) if res.gaps else 0
