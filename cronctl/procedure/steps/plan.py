"""Step 2, the plan: what the run will do and what the controller will do after it, shown through
the reporter and written into the record; then the confirmation (or ``--dry-run`` stops)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from cronctl import gitops, model
from cronctl.cluster import Obj
from cronctl.errors import Refused, option
from cronctl.procedure.predict import (Prediction, expected_duration, history_limit_removal, next_runs, predict,
                                       schedule_words)
from cronctl.procedure.restore import starts_catch_up
from cronctl.procedure.slot import last_schedule_plan
from cronctl.procedure.steps.context import RunContext
from cronctl.procedure.steps.create import build_job
from cronctl.procedure.steps.hold_guard import hold_words
from cronctl.procedure.steps.preflight import would_refuse
from cronctl.procedure.steps.verify import WAIT_ACTIVE_HINT, running_of
from cronctl.timeutil import human_duration, local_and_utc, rfc3339_z


def plan(ctx: RunContext) -> Obj:
    view = model.cronjob_view(ctx.cj)
    jobs, _ = ctx.cluster.list_jobs()
    ctx.jobs_before = frozenset(u for u in (model.meta(j).get("uid") for j in jobs) if u)  # never beside the hold
    unfinished = [model.name_of(j) for j in model.unfinished_children(ctx.cj, jobs)]
    now = ctx.clock.now()
    runs = next_runs(ctx.cj, now)
    suspended = model.is_suspended(ctx.cj)
    lst_row, lst_plan = plan_last_schedule(ctx)
    after = predict(after_patch(ctx, ctx.cj) if lst_plan.get("patch") else ctx.cj, now, suspended=suspended)
    job = build_job(ctx)
    ctx.record["plan"] = {
        "schedule": view.schedule, "time_zone": view.time_zone, "concurrency_policy": view.policy,
        "starting_deadline_seconds": view.starting_deadline,
        "original_suspend": suspended, "active": model.active_names(ctx.cj),
        "unfinished_children": unfinished, "next_runs": [rfc3339_z(t) for t in runs],
        "job_name": ctx.job_name, "settle_seconds": ctx.opts.settle, "timeout_seconds": ctx.opts.timeout,
    }
    end_row = plan_end(ctx, jobs, now, suspended, lst_plan)
    removal, removal_info = history_limit_removal(ctx.cj, now)
    ctx.record["plan"]["job_removal"] = removal_info
    if ctx.slot is not None:
        ctx.record["plan"].update(slot=ctx.slot.as_dict(), last_schedule_time=lst_plan)
    rows = [
        ("cronjob", f"{ctx.ns}/{ctx.name}"),
        ("schedule", schedule_words(ctx.cj)),
        ("time zone", view.zone_words),
        ("suspend now", str(suspended).lower()),
        ("active", ", ".join(model.active_names(ctx.cj)) or "none"),
        ("unfinished child Jobs", ", ".join(unfinished) or "none"),
        ("next runs", ", ".join(local_and_utc(t, ctx.zone) for t in runs) or "unknown"),
        ("operator", ctx.operator),
        ("will", f"suspend it, check for running Jobs (again after {human_duration(ctx.opts.settle)}), create "
                 f"Job {ctx.job_name}, wait up to {human_duration(ctx.opts.timeout)}, save logs, and after "
                 f"success {'set lastScheduleTime to the slot and ' if lst_plan.get('patch') else ''}"
                 f"set suspend back to {str(suspended).lower()}"),
        ("after the run", after_text(ctx, after, suspended)),
        ("while suspended", end_row),
        ("manual Job kept", removal),
        ("gitops", ctx.seen.words()),
        ("hold", hold_words(ctx)),
    ]
    if ctx.slot is not None:
        rows[7:7] = [("slot", f"{ctx.slot.shown}{', the latest slot' if ctx.slot.latest else ''}; "
                              f"env {model.OCCURRENCE_ENV}"),
                     ("job name", f"{ctx.job_name} (the controller's name for this slot)"),
                     ("lastScheduleTime", lst_row)]
    elif ctx.occurrence:
        rows.insert(7, ("occurrence", f"{rfc3339_z(ctx.occurrence)} (ad hoc: not a slot the controller "
                                      f"knows; env {model.OCCURRENCE_ENV})"))
    if ctx.opts.reason:
        rows.insert(7, ("reason", ctx.opts.reason))
    ctx.record["plan"]["gitops"] = gitops.hold_entry(ctx.seen, ctx.strategy)
    ctx.reporter.show("plan", rows)
    if ctx.strategy.kind == "refuse":
        why = (f"{ctx.strategy.why}: refusing to suspend cronjob {ctx.ns}/{ctx.name} (--gitops "
               f"{ctx.opts.gitops}); nothing was changed")
        if not ctx.opts.dry_run:
            raise Refused(why, hint=ctx.strategy.remedy)
        ctx.would_refuse.append(f"{why.removesuffix('; nothing was changed')} ({ctx.strategy.remedy})")
        ctx.reporter.warn(f"{why}; {ctx.strategy.remedy}")
    running = running_of(ctx.cj, jobs)
    if running and not ctx.opts.wait_active:
        # Refused here, before the suspend: a Job running now makes the verify step refuse anyway,
        # after suspending and setting suspend back. (The verify after the suspend stays: it
        # catches a Job the controller creates between this read and the suspend.)
        # (--dry-run: said, its hint's options as run-manual's flags, like every other refusal of the plan)
        would_refuse(ctx, Refused(f"cronjob {ctx.ns}/{ctx.name} has unfinished child Jobs: {', '.join(running)}; "
                                  f"nothing was changed", hint=WAIT_ACTIVE_HINT))
    if ctx.slot is not None and lst_plan.get("needed") and not ctx.can_patch_status:
        ctx.reporter.warn(f"no permission to patch cronjobs/status: lastScheduleTime cannot be set to the slot; "
                          f"{ctx.without_patch}; the run goes on only when confirmed (--yes)")
    return job


def plan_last_schedule(ctx: RunContext) -> tuple[str, dict[str, Any]]:
    """The plan's lastScheduleTime row, and the plan's record of it."""
    if ctx.slot is None:
        return "", {}
    lp = last_schedule_plan(ctx.cj, ctx.slot)
    info: dict[str, Any] = {"patch": lp.patch and ctx.can_patch_status, "why": lp.why,
                            "needed": lp.needed,
                            "current": rfc3339_z(lp.current) if lp.current else None,
                            "permission": ctx.can_patch_status}
    if not lp.patch:
        return f"not patched: {lp.why}", info
    if ctx.can_patch_status:
        return f"after success: {lp.why} (status subresource)", info
    if not lp.needed:
        info["why"] = f"no permission to patch cronjobs/status; not needed: {lp.why}"
        return f"not patched: {info['why']}", info
    info.update(why="no permission to patch cronjobs/status", without_patch=ctx.without_patch)
    return f"NOT patched (no permission to patch cronjobs/status): {ctx.without_patch}", info


def after_text(ctx: RunContext, after: Prediction, suspended: bool) -> str:
    """The plan's "after the run" row: what the restore will do under --catch-up."""
    if ctx.opts.catch_up == "all" and not suspended:
        return ("every slot that passes while suspended runs first as its own Job (the controller's name for "
                "it), oldest first, one at a time; then nothing is left to catch up"
                + (f" (if restored now instead: {after.text})" if starts_catch_up(after) else ""))
    if ctx.opts.catch_up == "latest" or not starts_catch_up(after) or after.catch_up_for is None:
        return f"if restored now: {after.text}"
    return (f"if restored now: nothing starts (--catch-up none marks {rfc3339_z(after.catch_up_for)} "
            f"processed; {after.never_made_up + 1} slot(s) given up); the restore says which")


def plan_end(ctx: RunContext, jobs: list[Obj], now: datetime, suspended: bool, lst_plan: dict[str, Any]) -> str:
    """The plan's "while suspended" row: the slots expected to pass before the run ends, and what
    the restore will do then (not now). Remembers whether that restore starts a catch-up Job, so
    a restore that would start one the plan did not announce asks again (``finish.confirm_restore``)."""
    secs, how = expected_duration(ctx.cj, jobs, now, ctx.opts.expected_duration)
    info: dict[str, Any] = {"expected_seconds": secs, "from": how}
    ctx.record["plan"]["end"] = info
    if secs is None:
        ctx.announced = None
        return f"the Job's run time is {how}: the slots that pass meanwhile cannot be foreseen"
    end = now + timedelta(seconds=ctx.opts.settle + secs)
    passing = [t for t in next_runs(ctx.cj, now, 50) if t <= end]
    cj = after_patch(ctx, ctx.cj) if lst_plan.get("patch") else ctx.cj
    at_end = predict(cj, end, suspended=suspended, jobs=jobs)
    ctx.announced = starts_catch_up(at_end)
    info.update(end=rfc3339_z(end), slots_passing=[rfc3339_z(t) for t in passing],
                at_end=at_end.as_dict())
    zone = ctx.zone
    shown = ", ".join(local_and_utc(t, zone) for t in passing[:5]) + (" ..." if len(passing) > 5 else "")
    return (f"about {human_duration(ctx.opts.settle + secs)} (the settle {human_duration(ctx.opts.settle)}, then "
            f"the Job {human_duration(secs)}: {how}), until about "
            f"{local_and_utc(end.replace(microsecond=0), zone)}; "
            + (f"{len(passing)} slot(s) pass meanwhile: {shown}" if passing else "no slot passes meanwhile")
            + ("" if suspended or ctx.opts.catch_up != "latest" else f"; at the restore then: {at_end.text}"))


def after_patch(ctx: RunContext, cj: Obj) -> Obj:
    """The CronJob as it will be after lastScheduleTime = the slot (for the plan's prediction)."""
    assert ctx.slot is not None
    out = dict(cj)
    out["status"] = {**(cj.get("status") or {}), "lastScheduleTime": rfc3339_z(ctx.slot.at)}
    return out


def confirm(ctx: RunContext, question: str | None = None) -> None:
    if ctx.opts.yes:
        return
    if not ctx.opts.interactive:
        raise Refused(f"not on a terminal and {option('yes')} not given: refusing to suspend "
                      f"cronjob {ctx.ns}/{ctx.name} without confirmation; nothing was changed")
    if question is None:
        question = (f"Suspend {ctx.ns}/{ctx.name} and run Job {ctx.job_name}"
                    + (f" for slot {ctx.slot.shown}" if ctx.slot else "")
                    + (" without setting lastScheduleTime" if ctx.slot and not ctx.can_patch_status
                       else "") + "?")
    if not ctx.reporter.confirm(question):
        raise Refused("not confirmed; nothing was changed")
