"""``cronctl pause`` and ``cronctl resume`` (see cronctl.procedure.pause): the ``-o json``
documents of their typed results are made here (:func:`paused_doc`, :func:`resumed_doc`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from cronctl.cli.common import (CatchUp, CatchUpOpt, ContextOpt, GitOpsMode, GitOpsOpt, KubeconfigOpt, RequestTimeoutOpt, NamespaceOpt,
                                Output, OutputOpt, YesOpt)
from cronctl.cli.common import cronjob_arg, cronjob_names

if TYPE_CHECKING:
    from cronctl.procedure.pause import Paused, Resumed


def pause_cmd(
    ctx: typer.Context,
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
    request_timeout: RequestTimeoutOpt = None,
    context: ContextOpt = None,
    namespace: NamespaceOpt = None,
) -> None:
    """Suspend a CronJob on purpose, recording who, why and until when on it.

    Refused (exit 3) while a run-manual holds the CronJob or when it is already paused; exit 5
    without --reason; 2 for a bad --until (malformed, zero, or in the past).
    """
    from cronctl.cli import durations as flags
    from cronctl.cli import env
    from cronctl.cli.runtime import Masked
    from cronctl.durations import DurationError
    from cronctl.durations import parse as parse_duration
    from cronctl.errors import BadInput, BadUsage
    from cronctl.procedure.pause import PauseOptions, pause
    from cronctl.timeutil import parse_rfc3339

    run = env.of(ctx)
    clock = run.clock
    until_t = None
    if until is not None:
        try:
            until_t = parse_rfc3339(until, what="--until")
        except BadInput:
            try:
                parse_duration(until)
            except DurationError:
                raise BadUsage(f"bad --until {until!r}: expected an RFC3339 time or a duration like 2h, 1d "
                               "(a bare number is seconds)") from None
            until_t = clock.now() + flags.UNTIL.delta(until)
    cluster = run.connect(kubeconfig, context, namespace)
    masked = Masked(run)
    masked.result(paused_doc(pause(cluster, PauseOptions(cronjob=cronjob, reason=reason, until=until_t, yes=yes,
                                                         gitops=gitops.value, interactive=run.interactive),
                                   clock, masked.reporter)), output)


def resume_cmd(
    ctx: typer.Context,
    cronjob: Annotated[str, typer.Argument(help="The CronJob.", show_default=False, callback=cronjob_arg, autocompletion=cronjob_names)],
    catch_up: CatchUpOpt = CatchUp.latest,
    yes: YesOpt = False,
    output: OutputOpt = Output.text,
    kubeconfig: KubeconfigOpt = None,
    request_timeout: RequestTimeoutOpt = None,
    context: ContextOpt = None,
    namespace: NamespaceOpt = None,
) -> None:
    """Un-suspend a paused CronJob after showing what the controller will start.

    Refused (exit 3) while a run-manual holds the CronJob (use restore) or a child Job is still
    running. Not suspended: nothing to do (exit 0).
    """
    from cronctl.cli import env
    from cronctl.cli.runtime import Masked, RichReporter
    from cronctl.procedure.pause import ResumeOptions, resume

    run = env.of(ctx)
    cluster = run.connect(kubeconfig, context, namespace)
    mode = catch_up.value
    if mode == "all":
        # every lost slot first, each as its own Job (cronctl backfill --missed), then resume with
        # nothing left to catch up
        from cronctl.cli.runtime import exit_with_next_steps, holder
        from cronctl.procedure.backfill import BackfillOptions, backfill
        from cronctl.procedure.base import next_commands
        from cronctl.procedure.run_manual import RunOptions

        ro = RunOptions(cronjob=cronjob, reason="resume --catch-up all", yes=yes, interactive=run.interactive,
                        holder=holder(), catch_up="latest")
        done = backfill(cluster, BackfillOptions(cronjob=cronjob, missed=True, run=ro), run.clock,
                        RichReporter(run.err))
        exit_with_next_steps(run.err, int(done.exit_code), done.message,
                             done.next_commands or next_commands(cronjob, cluster.namespace))
        mode = "none"
    masked = Masked(run)
    masked.result(resumed_doc(resume(cluster, ResumeOptions(cronjob=cronjob, yes=yes, interactive=run.interactive,
                                                            catch_up=mode), run.clock, masked.reporter)), output)


def paused_doc(r: Paused) -> dict[str, Any]:
    """The ``-o json`` document of a pause (unmasked: :class:`~cronctl.cli.runtime.Masked` masks it).
    ``gitops``: the controller seen and the hold's strategy, as a run record's plan stores them."""
    from cronctl.cli.documents import pause_doc
    from cronctl.gitops import hold_entry

    return {"cronjob": r.cronjob, "namespace": r.namespace, "changed": True, "was_suspended": r.was_suspended,
            "pause": pause_doc(r.pause), "message": r.message,
            "gitops": hold_entry(r.seen, r.strategy)}


def resumed_doc(r: Resumed) -> dict[str, Any]:
    """The ``-o json`` document of a resume (unmasked); ``catch_up`` and ``given_up`` only when it
    un-suspended the CronJob."""
    from cronctl.cli.documents import pause_doc

    doc: dict[str, Any] = {"cronjob": r.cronjob, "namespace": r.namespace, "changed": r.changed,
                           "pause": pause_doc(r.pause) if r.pause else None,
                           "prediction": r.prediction.as_dict() if r.prediction else None, "message": r.message}
    if r.resumed:
        doc.update(catch_up=r.catch_up, given_up=list(r.given_up),
                   change=r.change.as_dict() if r.change is not None else None)
    return doc
