"""``cronctl backfill CRONJOB``: run lost slots, oldest first, each as the slot's own Job
(see cronctl.procedure.backfill)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from cronctl.cli.common import (CatchUp, CatchUpOpt, ContextOpt, GitOpsMode, GitOpsOpt, KubeconfigOpt, RequestTimeoutOpt, LedgerOpt,
                                NamespaceOpt, OnRevert, OnRevertOpt, Output, OutputOpt, YesOpt)
from cronctl.cli.common import cronjob_arg, cronjob_names


def backfill(
    ctx: typer.Context,
    cronjob: Annotated[str, typer.Argument(help="The CronJob.", show_default=False, callback=cronjob_arg, autocompletion=cronjob_names)],
    missed: Annotated[bool, typer.Option("--missed", help="The slots cronctl history calls lost (skipped-forbid, "
                                         "missed*).")] = False,
    since: Annotated[Optional[str], typer.Option(
        "--since", help="With --missed: how far back (6h, 1d12h; a bare number is seconds; default as far as the "
        "evidence reaches, at most 7d).",
        show_default=False, metavar="DURATION")] = None,
    from_: Annotated[Optional[str], typer.Option("--from", help="Every slot from this RFC3339 time ...",
                                                 show_default=False, metavar="INSTANT")] = None,
    to: Annotated[Optional[str], typer.Option("--to", help="... to this one (both included).", show_default=False,
                                              metavar="INSTANT")] = None,
    slot: Annotated[Optional[list[str]], typer.Option(
        "--slot", help="One slot (RFC3339; repeat for several).", show_default=False, metavar="INSTANT")] = None,
    done_from: Annotated[Optional[str], typer.Option(
        "--done-from", help="Slots done according to the application's own ledger: CSV with a scheduled_for "
        "column, or JSON lines with scheduled_for.", show_default=False, metavar="FILE")] = None,
    max_age: Annotated[str, typer.Option("--max-age", help="Skip slots older than this (say so; a bare number is "
                                         "seconds).")] = "7d",
    reason: Annotated[str, typer.Option("--reason", help="Why; recorded on the CronJob and the Jobs.")] = "",
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the slots and the first Job; change "
                                          "nothing.")] = False,
    settle: Annotated[str, typer.Option("--settle", help="Check again for running Jobs after this delay (a bare "
                                        "number is seconds).")] = "15s",
    timeout: Annotated[str, typer.Option("--timeout", help="Give up waiting after this long, for all slots "
                                         "together (a bare number is seconds).")] = "6h",
    run_dir: Annotated[Optional[str], typer.Option(
        "--run-dir", help="Where run directories go (default $CRONCTL_RUN_DIR or ./runs).")] = None,
    catch_up: CatchUpOpt = CatchUp.latest,
    gitops: GitOpsOpt = GitOpsMode.auto,
    on_revert: OnRevertOpt = OnRevert.suspend_again,
    parallel: Annotated[int, typer.Option("--parallel", help="Run up to N slots' Jobs at a time (only with "
                                          "concurrencyPolicy Allow).", metavar="N")] = 1,
    yes: YesOpt = False,
    ledger: LedgerOpt = None,
    output: OutputOpt = Output.text,
    kubeconfig: KubeconfigOpt = None,
    request_timeout: RequestTimeoutOpt = None,
    context: ContextOpt = None,
    namespace: NamespaceOpt = None,
) -> None:
    """Run lost slots, oldest first, one at a time under one lock and one suspension.

    Each slot runs as the Job the controller would have made for it (its name and
    scheduled-timestamp); slots that already have a Job are skipped, so running the same command
    again goes on where it stopped. A failed slot stops the run (exit 1, the CronJob stays
    suspended: cronctl restore, then backfill again). Exit 3 refused, 5 bad input, 6 not found.
    """
    from cronctl.cli import durations as flags
    from cronctl.cli import env
    from cronctl.cli.runtime import RichReporter, end_of_run, holder, kill_hook, sigterm_as_interrupt
    from cronctl.errors import BadInput
    from cronctl.procedure.backfill import BackfillOptions, backfill as run_backfill
    from cronctl.procedure.base import next_commands
    from cronctl.procedure.run_manual import RunOptions
    from cronctl.timeutil import parse_rfc3339

    run = env.of(ctx)
    if since is not None and not missed:
        raise BadInput("--since goes with --missed")
    ro = RunOptions(cronjob=cronjob, reason=reason, yes=yes, interactive=run.interactive, dry_run=dry_run,
                    settle=flags.SETTLE.seconds(settle), timeout=flags.TIMEOUT.seconds(timeout),
                    run_dir=run_dir, holder=holder(), after_step=kill_hook(), catch_up=catch_up.value,
                    gitops=gitops.value, on_revert=on_revert.value)
    opts = BackfillOptions(
        cronjob=cronjob, missed=missed,
        since=flags.SINCE.delta(since) if since else None,
        from_=parse_rfc3339(from_, what="--from") if from_ else None,
        to=parse_rfc3339(to, what="--to") if to else None,
        slots=[parse_rfc3339(s, what="--slot") for s in slot or []], done_from=done_from,
        max_age=flags.MAX_AGE.delta(max_age), parallel=parallel, run=ro)
    cluster = run.connect(kubeconfig, context, namespace)
    from cronctl.cli.common import ledger_choice

    use_ledger, ledger_url = ledger_choice(ledger)
    opts.ledger = (ledger_url, cluster.context_name or "default") if use_ledger else None
    sigterm_as_interrupt()
    res = run_backfill(cluster, opts, run.clock, RichReporter(run.err))
    end_of_run(run, res, output, next_commands(cronjob, cluster.namespace))
