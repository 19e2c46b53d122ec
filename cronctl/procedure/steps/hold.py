"""Step 3, the hold: the run directory, then ``spec.suspend=true`` and the run record in ONE merge
patch guarded by resourceVersion (the record is the lock), then the hold guard."""

from __future__ import annotations

import shutil

from cronctl import gitops, model
from cronctl.errors import BadInput, Conflict, Refused, option
from cronctl.procedure.base import RunDir, next_commands, rv
from cronctl.procedure.steps.context import RunContext, hook, retry_note, step_local, timestamp, who
from cronctl.procedure.steps.hold_guard import gitops_annotation, hold_change_words, start_guard
from cronctl.procedure.steps.preflight import locked_message, taking_over
from cronctl.timeutil import rfc3339_z

#: Free space the run directory's disk must have before the CronJob is touched (record + logs).
MIN_FREE_BYTES = 1024 * 1024


def check_run_dir(ctx: RunContext) -> None:
    """Before anything changes: the run directory takes a record, and has room for logs."""
    assert ctx.dir is not None
    ctx.record["step"] = "planned"
    try:
        ctx.dir.write_json("record.json", ctx.record)
        free = shutil.disk_usage(ctx.dir.path).free
    except OSError as e:
        raise BadInput(f"cannot write the run directory {ctx.dir.path}: {e.strerror or e}; nothing was "
                       f"changed", hint=f"use {option('run_dir')} on a writable disk with free space") from e
    if free < MIN_FREE_BYTES:
        raise BadInput(f"the disk of the run directory {ctx.dir.path} has only {free} bytes free (at least "
                       f"{MIN_FREE_BYTES} needed for the record and logs); nothing was changed",
                       hint=f"free some space or use {option('run_dir')} elsewhere")


def run_record(ctx: RunContext, step: str, note: str = "") -> model.RunRecord:
    return model.RunRecord(
        run_id=ctx.run_id, original_suspend=ctx.original_suspend, operator=ctx.operator,
        reason=ctx.opts.reason, job_name=ctx.job_name, step=step, started=ctx.record["started"],
        holder=ctx.opts.holder, updated=timestamp(ctx),
        occurrence=rfc3339_z(ctx.occurrence) if ctx.occurrence else "", note=note,
        gitops=gitops_annotation(ctx))


def open_run(ctx: RunContext) -> tuple[float, list[str]]:
    """The run directory, then the suspend: returns (the deadline, the next commands)."""
    ctx.dir = RunDir.create(ctx.opts.run_dir, ctx.name, ctx.run_id)
    ctx.record["run_dir"] = str(ctx.dir.path)
    check_run_dir(ctx)
    # One deadline for everything that waits, counted from the suspend (not from the prompt).
    deadline = ctx.clock.monotonic() + ctx.opts.timeout
    ctx.deadline = deadline
    suspend(ctx)
    start_guard(ctx)
    hook(ctx, "suspended")
    return deadline, next_commands(ctx.name, ctx.ns)


def suspend(ctx: RunContext) -> None:
    plan_generation = model.meta(ctx.cj).get("generation")
    cj = ctx.cj
    for _ in range(5):
        rec = model.read_record(cj)
        if rec is not None and not taking_over(ctx, rec):
            raise Refused(locked_message(cj, rec) + "; nothing was changed")
        if rec is None and ctx.opts.takeover:
            raise Refused(f"the run record {ctx.opts.takeover} on cronjob {ctx.ns}/{ctx.name} was removed "
                          f"meanwhile; nothing was changed")
        if model.meta(cj).get("generation") != plan_generation:
            raise Refused(f"cronjob {ctx.ns}/{ctx.name} was changed (spec generation "
                          f"{plan_generation} -> {model.meta(cj).get('generation')}) since the plan was "
                          f"shown; nothing was changed, run again")
        # taking over: the suspension is the interrupted run's, and so is the value before it
        ctx.original_suspend = rec.original_suspend if rec is not None else model.is_suspended(cj)
        if rec is not None and "previous" in rec.gitops_hold():  # and so is Flux's annotation before it
            ctx.record["gitops_hold"] = {"previous": rec.gitops_hold()["previous"]}
        ann: dict[str, str] = run_record(ctx, "suspended", retry_note(ctx)).to_annotations()
        if rec is not None:  # the run taken over ends here: its account joins cronctl.dev/runs
            ann[model.ANN_RUNS] = model.runs_with(cj, rec, restored_at=ctx.clock.now(), restored_to=True)
        if ctx.strategy.kind == "annotate":
            ann[gitops.FLUX_RECONCILE] = gitops.FLUX_DISABLED
        patch = {"spec": {"suspend": True}, "metadata": {"annotations": ann}}
        try:
            ctx.cj = ctx.cluster.patch_cronjob(ctx.name, patch, resource_version=rv(cj))
        except Conflict:
            # Someone else wrote first (the controller's status update, or another operator):
            # read again and re-check the lock, never overwrite blindly.
            cj = ctx.cluster.get_cronjob(ctx.name)
            continue
        ctx.suspended_mono = ctx.clock.monotonic()
        ctx.record["original_suspend"] = ctx.original_suspend
        ctx.record["suspended_at"] = timestamp(ctx)
        if rec is not None:
            ctx.record.update({"took_over": rec.run_id, "suspended_at": rec.started or timestamp(ctx)})
        step_local(ctx, "suspended")
        ctx.audit.event(ctx.cj, "CronctlSuspended", f"cronctl {who(ctx)}: "
                        + (f"took over run record {rec.run_id} of {rec.operator or 'unknown'} (suspend was "
                           f"{str(ctx.original_suspend).lower()} before it)" if rec is not None else
                           f"suspended the CronJob (it was suspend={str(ctx.original_suspend).lower()}) "
                           f"for a manual run") + hold_change_words(ctx))
        ctx.reporter.step(f"took over run record {rec.run_id} of {rec.operator or 'unknown'} (suspended since "
                          f"{rec.started}, suspend={str(ctx.original_suspend).lower()} before it): run record "
                          f"{ctx.run_id} written on it" if rec is not None else
                          f"suspended {ctx.ns}/{ctx.name} (it was suspend={str(ctx.original_suspend).lower()}); "
                          f"run record {ctx.run_id} written on it" + hold_change_words(ctx))
        return
    raise Conflict(f"cronjob {ctx.ns}/{ctx.name} kept changing while suspending; nothing was changed")
