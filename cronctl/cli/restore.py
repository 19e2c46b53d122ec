"""``cronctl restore CRONJOB``: finish or undo a manual run (see cronctl.procedure.restore); the
``-o json`` document of its typed result is made here (:func:`restored_doc`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from cronctl.cli.common import (CatchUp, CatchUpOpt, ContextOpt, KubeconfigOpt, RequestTimeoutOpt, NamespaceOpt, Output, OutputOpt,
                                YesOpt)
from cronctl.cli.common import cronjob_arg, cronjob_names

if TYPE_CHECKING:
    from cronctl.procedure.restore import Restored


def restore_cmd(
    ctx: typer.Context,
    cronjob: Annotated[str, typer.Argument(help="The CronJob.", show_default=False, callback=cronjob_arg, autocompletion=cronjob_names)],
    force: Annotated[bool, typer.Option("--force", help="Clear a stale run record (original value unknown, or "
                                        "its holder still alive on this host) after confirmation.")] = False,
    catch_up: CatchUpOpt = CatchUp.latest,
    run_dir: Annotated[Optional[str], typer.Option(
        "--run-dir", help="With --catch-up all: where the run directory goes (default $CRONCTL_RUN_DIR or "
                          "./runs).")] = None,
    yes: YesOpt = False,
    output: OutputOpt = Output.text,
    kubeconfig: KubeconfigOpt = None,
    request_timeout: RequestTimeoutOpt = None,
    context: ContextOpt = None,
    namespace: NamespaceOpt = None,
) -> None:
    """Put back the suspend value recorded by run-manual and clear its record.

    Refuses (exit 3) while a child Job is unfinished and un-suspending would let a scheduled Job
    start beside it, and when the CronJob is suspended without a cronctl record. With no record
    and not suspended there is nothing to restore (exit 0).

    --catch-up all takes the interrupted run's record over and first runs every slot that passed
    since it suspended the CronJob as its own Job, oldest first (as backfill does; exit 1 if one
    fails), then un-suspends with nothing left to catch up.
    """
    from cronctl.cli import env
    from cronctl.cli.runtime import Masked, holder_alive
    from cronctl.procedure.restore import RestoreOptions, Restored, restore

    run = env.of(ctx)
    cluster = run.connect(kubeconfig, context, namespace)
    opts = RestoreOptions(cronjob=cronjob, yes=yes, interactive=run.interactive, force=force,
                          holder_alive=holder_alive, catch_up=catch_up.value)
    masked = Masked(run)
    if catch_up == CatchUp.all:
        from cronctl.cli.runtime import end_of_run, holder, kill_hook, sigterm_as_interrupt
        from cronctl.procedure.backfill import restore_all
        from cronctl.procedure.base import next_commands
        from cronctl.procedure.run_manual import RunOptions

        sigterm_as_interrupt()
        done = restore_all(cluster, opts, RunOptions(cronjob=cronjob, holder=holder(), after_step=kill_hook(),
                                                     run_dir=run_dir), run.clock, masked.reporter)
        if not isinstance(done, Restored):
            end_of_run(run, done, output, next_commands(cronjob, cluster.namespace))
            return
        masked.result(restored_doc(done), output)
        return
    masked.result(restored_doc(restore(cluster, opts, run.clock, masked.reporter)), output)


def restored_doc(r: Restored) -> dict[str, Any]:
    """The ``-o json`` document of a restore (unmasked: :class:`~cronctl.cli.runtime.Masked` masks
    it); with nothing to restore only its first seven keys."""
    from cronctl.cli.documents import record_doc

    doc: dict[str, Any] = {"cronjob": r.cronjob, "namespace": r.namespace, "changed": r.changed, "suspend": r.suspend,
                           "message": r.message, "prediction": r.prediction.as_dict() if r.prediction else None,
                           "record": record_doc(r.record) if r.record else None}
    if r.record is not None:
        doc.update(forced=r.forced, record_confirmed=r.record_unconfirmed is None,
                   record_unconfirmed=r.record_unconfirmed, catch_up=r.catch_up, given_up=list(r.given_up),
                   hold_reverted=r.hold_reverted, annotations_put_back=dict(r.annotations_put_back),
                   change=r.change.as_dict() if r.change is not None else None)
    return doc
