"""Steps 8 and 9, the end of a run: after a failure the CronJob stays suspended and the record
says why; after success the slot is marked done, ``--catch-up all`` runs the slots that passed,
the restore follows (only to the original value; the controller's next move predicted and then
checked), and the run record is completed. Also the end of a run stopped early (Ctrl-C, timeout)."""

from __future__ import annotations

from dataclasses import replace

from cronctl import model
from cronctl.cluster import Obj
from cronctl.errors import CronctlError, ExitCode
from cronctl.procedure.predict import Prediction, predict
from cronctl.procedure.restore import RestoreOptions, restore, starts_catch_up
from cronctl.procedure.steps.catch_up import catch_up_all, mark_slot_done
from cronctl.procedure.steps.context import (RunContext, hook, job_seconds, job_times, save, step_local, timestamp,
                                             update_step)
from cronctl.procedure.steps.evidence import failed_words, failure_events, save_logs
from cronctl.procedure.steps.hold_guard import end_hold, with_duplicates
from cronctl.procedure.steps.options import RunResult
from cronctl.procedure.wait import WaitTimeout
from cronctl.timeutil import human_duration

CHECK_AFTER_RESTORE = 30.0  # how long to watch for a predicted catch-up Job after un-suspending (s)


def conclude(ctx: RunContext, final: Obj | None, deadline: float, nxt: list[str]) -> RunResult:
    """After the wait: logs, then on failure stay suspended; on success the slot is marked done,
    --catch-up all runs the slots that passed, and the restore follows."""
    ctx.record.setdefault("job", {"name": ctx.job_name}).update(job_times(final))
    outcome = model.job_outcome(final) if final is not None else "Deleted"
    tail = save_logs(ctx, final) if final is not None else []
    hook(ctx, "finished")
    if outcome != "Complete":
        why = (f"job {ctx.job_name} failed" if outcome == "Failed" else f"job {ctx.job_name} was deleted")
        codes = failed_words(ctx)
        if codes:
            why += f" ({codes})"
        if ctx.dir is not None and ctx.record.get("logs"):
            why += f"; logs in {ctx.dir.path / 'logs'}"
        events = failure_events(ctx)
        if events:
            ctx.record["job_events"] = events
        try:
            update_step(ctx, "failed", why)
        except CronctlError as e:
            ctx.reporter.warn(f"could not write step=failed on the CronJob: {e.message}")
        slot_note = ""
        if ctx.slot is not None:
            slot_note = f"; slot {ctx.slot.shown} is not done: lastScheduleTime was not set to it"
            ctx.record["last_schedule_time"] = {"patched": False, "why": f"{why}: the slot is not done"}
        retry = f"cronctl run-manual {ctx.name} -n {ctx.ns} --retry"
        return finish(ctx, RunResult(ExitCode.JOB_FAILED, f"{why}; the CronJob stays suspended{slot_note}; "
                                     f"`{retry}` runs it again (attempt {ctx.attempt + 1}) without "
                                     f"un-suspending in between", ctx.record, final, [retry, *nxt]),
                      "failed", tail, events)
    ctx.reporter.step(f"job {ctx.job_name} completed in {human_duration(job_seconds(final) or 0)}")
    slot_note = mark_slot_done(ctx) if ctx.slot is not None else ""
    manual = ctx.job_name
    if ctx.opts.catch_up == "all":
        try:
            failed = catch_up_all(ctx, deadline, nxt)
        except KeyboardInterrupt:
            return stopped(ctx, "interrupted", ExitCode.INTERRUPTED,
                           f"interrupted while running the slots that passed (job {manual} had succeeded; "
                           f"{len(ctx.done)} slot(s) done): the CronJob stays suspended", nxt)
        except WaitTimeout as e:
            return stopped(ctx, "timeout", ExitCode.TIMEOUT,
                           f"{e.message} (--timeout {human_duration(ctx.opts.timeout)}) while running the "
                           f"slots that passed (job {manual} had succeeded); the CronJob stays suspended",
                           nxt)
        ctx.job_name = manual
        if failed is not None:
            return finish(ctx, failed, "failed", tail, [])
    declined = confirm_restore(ctx)
    if declined is not None:
        return finish(ctx, declined, "succeeded-not-restored", tail, [])
    end_hold(ctx)
    try:
        res = restore(ctx.cluster, RestoreOptions(cronjob=ctx.name, yes=True, expect_run_id=ctx.run_id,
                                                  expect_original=ctx.original_suspend,
                                                  catch_up="none" if ctx.opts.catch_up == "all" else ctx.opts.catch_up,
                                                  outcome="succeeded"),
                      ctx.clock, ctx.reporter)
    except CronctlError as e:
        # The Job succeeded but the restore could not be done (record changed, API down):
        # keep the evidence and say exactly what is left.
        ctx.record.update({"outcome": "succeeded-not-restored", "error": e.message, "exit_code": int(e.exit_code)})
        step_local(ctx, "restore-failed", e.message)
        return finish(ctx, RunResult(e.exit_code, f"job {ctx.job_name} succeeded but the restore failed: "
                                     f"{e.message}", ctx.record, final, nxt), "succeeded-not-restored",
                      tail, [])
    ctx.record["restored_at"] = timestamp(ctx)
    ctx.record["prediction"] = res.prediction.as_dict() if res.prediction else None
    slot_note += check_prediction(ctx, res.prediction)
    ctx.record["restored_suspend"] = res.suspend
    ctx.record["catch_up"] = {"mode": ctx.opts.catch_up, "given_up": list(res.given_up),
                              **({"ran": list(ctx.done)} if ctx.opts.catch_up == "all" else {})}
    if ctx.done:
        slot_note += f"; {len(ctx.done)} slot(s) that passed meanwhile ran as their own Jobs"
    if ctx.suspended_mono is not None:
        held = ctx.clock.monotonic() - ctx.suspended_mono
        ctx.record["suspended_seconds"] = round(held, 3)
        js = job_seconds(final)
        if js is not None:
            ctx.record["suspended_beyond_job_seconds"] = round(held - js, 3)
    step_local(ctx, "restored")
    hook(ctx, "restored")
    return finish(ctx, RunResult(ExitCode.OK, f"job {ctx.job_name} succeeded{slot_note}; {res.message}",
                                 ctx.record, final, []), "succeeded", tail, [])


def confirm_restore(ctx: RunContext) -> RunResult | None:
    """On a terminal without --yes: when the restore would start a catch-up Job that the plan did
    not announce (the run took longer, a slot passed), ask again. Declined: the CronJob stays
    suspended with the record at step succeeded (exit 3); ``cronctl restore`` finishes later."""
    if ctx.opts.yes or not ctx.opts.interactive or ctx.opts.catch_up != "latest" or ctx.announced is not False \
            or ctx.original_suspend:
        return None
    try:
        cj = ctx.cluster.get_cronjob(ctx.name)
        jobs, _ = ctx.cluster.list_jobs()
    except CronctlError:
        return None  # the restore reads again and says what it does
    pred = predict(cj, ctx.clock.now(), suspended=False, jobs=jobs)
    if not starts_catch_up(pred):
        return None
    ctx.record["unannounced_catch_up"] = pred.as_dict()
    if ctx.reporter.confirm(f"The restore would start what the plan did not announce: {pred.text}. Restore now "
                            f"(no: it stays suspended; `cronctl restore {ctx.name} -n {ctx.ns} --catch-up none` "
                            f"gives the slot up)?"):
        return None
    try:
        update_step(ctx, "succeeded", "the restore was declined: it would start a catch-up the plan did not "
                                       "announce")
    except CronctlError as e:
        ctx.reporter.warn(f"could not write step=succeeded on the CronJob: {e.message}")
    return RunResult(ExitCode.REFUSED, f"job {ctx.job_name} succeeded; the restore was declined (it would "
                     f"start: {pred.text}): the CronJob stays suspended",
                     ctx.record, None, [f"cronctl restore {ctx.name} -n {ctx.ns}",
                                        f"cronctl restore {ctx.name} -n {ctx.ns} --catch-up none"])


def check_prediction(ctx: RunContext, pred: Prediction | None) -> str:
    """After un-suspending: when the restore predicted a catch-up Job, watch (bounded) for the
    controller to create it and say whether it did (docs/BACKGROUND.md §4.6: check the new Jobs after restoring)."""
    if pred is None or pred.decision != "create" or not pred.job_name or pred.suspended:
        return ""
    name = pred.job_name
    until = ctx.clock.monotonic() + CHECK_AFTER_RESTORE
    seen: Obj | None = None
    while seen is None and ctx.clock.monotonic() < until:
        try:
            seen = ctx.cluster.get_job(name)
        except CronctlError:
            break
        if seen is None:
            ctx.clock.sleep(2)
    ctx.record["restore_check"] = {"expected_job": name, "seen": seen is not None,
                                   "created": model.meta(seen).get("creationTimestamp") if seen else None}
    if seen is not None:
        ctx.reporter.step(f"as predicted, the controller started the catch-up Job {name}")
        return f"; as predicted, the controller started {name}"
    ctx.reporter.warn(f"the catch-up Job {name} the restore predicted was not seen within "
                      f"{human_duration(CHECK_AFTER_RESTORE)}; see cronctl status {ctx.name} -n {ctx.ns}")
    return f"; the predicted catch-up Job {name} was NOT seen within {human_duration(CHECK_AFTER_RESTORE)}"


def stopped(ctx: RunContext, step: str, code: ExitCode, message: str, nxt: list[str]) -> RunResult:
    hold = end_hold(ctx)
    if hold:
        message = f"{message}; {hold}"
    try:
        update_step(ctx, step, message)
    except (CronctlError, KeyboardInterrupt) as e:
        ctx.reporter.warn(f"could not write step={step} on the CronJob: {getattr(e, 'message', e)}")
    ctx.record.update({"outcome": step, "exit_code": int(code), "next_commands": nxt})
    if ctx.slot is not None:
        ctx.record["last_schedule_time"] = {"patched": False, "why": f"the run stopped ({step}): the slot "
                                                                       f"is not done"}
    save(ctx)
    return RunResult(code, message, ctx.record, None, nxt)


def finish(ctx: RunContext, res: RunResult, outcome: str, tail: list[str], events: list[str]) -> RunResult:
    hold = end_hold(ctx)
    if hold:
        res = replace(res, message=f"{res.message}; {hold}", exit_code=with_duplicates(ctx, res.exit_code))
    ctx.record.update({"outcome": outcome, "exit_code": int(res.exit_code), "finished": timestamp(ctx),
                       "next_commands": res.next_commands, "log_tail": tail})
    save(ctx)
    return res
