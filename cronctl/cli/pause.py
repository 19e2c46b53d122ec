"""``cronctl pause`` and ``cronctl resume`` (see cronctl.procedure.pause)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from cronctl.cli.common import (CatchUp, CatchUpOpt, ContextOpt, GitOpsMode, GitOpsOpt, KubeconfigOpt, NamespaceOpt,
                                Output, OutputOpt, YesOpt, is_interactive)
from cronctl.cli.common import cronjob_arg, cronjob_names


def pause_cmd(
    cronjob: Annotated[str, typer.Argument(help="The CronJob.", show_default=False, callback=cronjob_arg, autocompletion=cronjob_names)],
    reason: Annotated[str, typer.Option("--reason", help="Why it is paused (recorded on the CronJob; required).",
                                        show_default=False)] = "",
    until: Annotated[Optional[str], typer.Option(
        "--until", help="Until when (RFC3339, or a duration from now: 2h, 1d12h; a bare number is seconds); status and lint flag it "
        "once past.", show_default=False, metavar="TIME")] = None,
    gitops: GitOpsOpt = GitOpsMode.auto,
    yes: YesOpt = False,
    output: OutputOpt = Output.text,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    namespace: NamespaceOpt = None,
) -> None:
    """Suspend a CronJob on purpose, recording who, why and until when on it.

    Refused (exit 3) while a run-manual holds the CronJob or when it is already paused; exit 5
    without --reason or with an --until in the past.
    """
    from cronctl.cli import durations as flags
    from cronctl.cli.runtime import Masked
    from cronctl.durations import DurationError
    from cronctl.errors import BadInput
    from cronctl.kube import connect
    from cronctl.procedure.base import SystemClock
    from cronctl.procedure.pause import PauseOptions, pause
    from cronctl.timeutil import parse_rfc3339

    clock = SystemClock()
    until_t = None
    if until is not None:
        try:
            until_t = parse_rfc3339(until, what="--until")
        except BadInput:
            try:
                until_t = clock.now() + flags.UNTIL.delta(until)
            except DurationError:
                raise BadInput(f"bad --until {until!r}: expected an RFC3339 time or a duration like 2h, 1d "
                               "(a bare number is seconds)") from None
    cluster = connect(kubeconfig, context, namespace)
    masked = Masked()
    masked.result(pause(cluster, PauseOptions(cronjob=cronjob, reason=reason, until=until_t, yes=yes, gitops=gitops.value,
                                              interactive=is_interactive()), clock, masked.reporter), output)


def resume_cmd(
    cronjob: Annotated[str, typer.Argument(help="The CronJob.", show_default=False, callback=cronjob_arg, autocompletion=cronjob_names)],
    catch_up: CatchUpOpt = CatchUp.latest,
    yes: YesOpt = False,
    output: OutputOpt = Output.text,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    namespace: NamespaceOpt = None,
) -> None:
    """Un-suspend a paused CronJob after showing what the controller will start.

    Refused (exit 3) while a run-manual holds the CronJob (use restore) or a child Job is still
    running. Not suspended: nothing to do (exit 0).
    """
    from cronctl.cli.runtime import Masked, RichReporter
    from cronctl.kube import connect
    from cronctl.procedure.base import SystemClock
    from cronctl.procedure.pause import ResumeOptions, resume

    cluster = connect(kubeconfig, context, namespace)
    mode = catch_up.value
    if mode == "all":
        # every lost slot first, each as its own Job (cronctl backfill --missed), then resume with
        # nothing left to catch up
        from cronctl.cli.runtime import exit_with_next_steps, holder
        from cronctl.procedure.backfill import BackfillOptions, backfill
        from cronctl.procedure.base import next_commands
        from cronctl.procedure.run_manual import RunOptions

        ro = RunOptions(cronjob=cronjob, reason="resume --catch-up all", yes=yes, interactive=is_interactive(),
                        holder=holder(), catch_up="latest")
        done = backfill(cluster, BackfillOptions(cronjob=cronjob, missed=True, run=ro), SystemClock(), RichReporter())
        exit_with_next_steps(int(done.exit_code), done.message,
                             done.next_commands or next_commands(cronjob, cluster.namespace))
        mode = "none"
    masked = Masked()
    masked.result(resume(cluster, ResumeOptions(cronjob=cronjob, yes=yes, interactive=is_interactive(), catch_up=mode),
                         SystemClock(), masked.reporter), output)
