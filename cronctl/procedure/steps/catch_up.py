"""Slots: after a slot's Job succeeded, ``status.lastScheduleTime = T`` (so the controller never
wants T again); a group of slot Jobs created, waited for and marked done oldest first (backfill);
``--catch-up all``: the slots that passed while the CronJob was held."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from cronctl import model
from cronctl.cluster import Obj
from cronctl.errors import Conflict, CronctlError, ExitCode
from cronctl.procedure.base import rv
from cronctl.procedure.slot import last_schedule_plan, lost_while_held, resolve
from cronctl.procedure.steps.context import RunContext, hook, save, timestamp, unreachable, update_step, who
from cronctl.procedure.steps.create import create
from cronctl.procedure.steps.evidence import save_logs
from cronctl.procedure.steps.follow import wait
from cronctl.procedure.steps.options import MAX_SLOTS, RunResult
from cronctl.procedure.wait import wait_for_jobs
from cronctl.timeutil import parse_rfc3339, rfc3339_z


def mark_slot_done(ctx: RunContext) -> str:
    """After success, before the restore: ``status.lastScheduleTime = T`` when T is later (guarded by
    resourceVersion), so the controller never wants T again. Returns a note for the result line;
    a failure here is recorded and warned about, and the restore still goes on (the Job's name
    already keeps the controller from running T twice)."""
    assert ctx.slot is not None
    t = rfc3339_z(ctx.slot.at)
    info: dict[str, Any] = {"patched": False, "slot": t}
    ctx.record["last_schedule_time"] = info
    if not ctx.can_patch_status:
        lp = last_schedule_plan(ctx.cj, ctx.slot)
        info["why"] = "no permission to patch cronjobs/status"
        if not lp.needed:
            info["why"] += f"; not needed: {lp.why}"
            ctx.reporter.step(f"lastScheduleTime left as it is: {info['why']}")
            save(ctx)
            return ""
        ctx.reporter.warn(f"lastScheduleTime not set to {ctx.slot.shown}: no permission to patch cronjobs/status; "
                          f"{ctx.without_patch}")
        save(ctx)
        return "; lastScheduleTime not set (no permission)"
    why = f"cronjob {ctx.ns}/{ctx.name} kept changing"
    try:
        cj = ctx.cluster.get_cronjob(ctx.name)
        for _ in range(5):
            lp = last_schedule_plan(cj, ctx.slot)
            info["previous"] = rfc3339_z(lp.current) if lp.current else None
            if not lp.patch:
                info["why"] = lp.why
                ctx.reporter.step(f"lastScheduleTime left as it is: {lp.why}")
                save(ctx)
                return ""
            try:
                cj = ctx.cluster.patch_cronjob_status(ctx.name, {"status": {"lastScheduleTime": t}},
                                                      resource_version=rv(cj))
            except Conflict:
                cj = ctx.cluster.get_cronjob(ctx.name)  # the controller wrote status meanwhile
                continue
            ctx.cj = cj
            info.update(patched=True, why=lp.why, at=timestamp(ctx),
                        value=(cj.get("status") or {}).get("lastScheduleTime"))
            ctx.reporter.step(f"slot {ctx.slot.shown} recorded as run: {lp.why}")
            ctx.audit.event(cj, "CronctlSlotMarked", f"cronctl {who(ctx)}: status.lastScheduleTime set to "
                            f"{t} (the slot was run by Job {ctx.job_name}): the controller will not run it again")
            save(ctx)
            return f"; lastScheduleTime set to {t}"
    except CronctlError as e:
        why = e.message
    info["why"] = f"the patch failed: {why}"
    ctx.reporter.warn(f"lastScheduleTime not set to {ctx.slot.shown}: {why}; the Job's name still keeps the "
                      f"controller from running the slot twice, but it may try to (see cronctl status)")
    save(ctx)
    return f"; lastScheduleTime NOT set ({why})"


def use_slot(ctx: RunContext, t: datetime) -> None:
    ctx.slot = resolve(ctx.cj, t, latest=False, now=ctx.clock.now())
    ctx.occurrence = ctx.slot.at
    ctx.job_name = ctx.slot.job_name


def run_group(ctx: RunContext, group: list[datetime], deadline: float, nxt: list[str]) -> RunResult | None:
    """Create the Jobs of ``group`` (one, or --parallel of them), wait for all, mark each success
    done (oldest first). A failure stops the backfill: returns its result; None when all passed."""
    made: list[tuple[datetime, str]] = []
    job: Obj = {}
    for t in group:
        use_slot(ctx, t)
        n = len(ctx.done) + len(made) + 1
        update_step(ctx, "verified", f"slot {n}/{len(ctx.todo)} next: {rfc3339_z(t)}")
        job = create(ctx)
        hook(ctx, "created")
        made.append((t, ctx.job_name))
    if len(made) == 1:  # one at a time: run-manual's wait, with its progress
        states = {made[0][1]: wait(ctx, job, deadline)}
    else:
        ctx.reporter.step(f"waiting for {len(made)} Jobs: {', '.join(n for _, n in made)}")
        states = wait_for_jobs(ctx.cluster, {n for _, n in made}, deadline=deadline, clock=ctx.clock,
                               stats=ctx.wait_stats, on_unreachable=lambda e: unreachable(ctx, e))
    failures: list[str] = []
    for t, name in made:
        final = states.get(name)
        use_slot(ctx, t)
        outcome = model.job_outcome(final) if final is not None else "Deleted"
        if final is not None:
            save_logs(ctx, final)
        if outcome != "Complete":
            failures.append(f"slot {ctx.slot.shown if ctx.slot else rfc3339_z(t)}: job {name} "
                            f"{'failed' if outcome == 'Failed' else 'was deleted'}")
            ctx.record.setdefault("failed_slots", []).append(rfc3339_z(t))
            continue
        if failures:
            continue  # a newer slot than a failed one: done, but lastScheduleTime stays before the failure
        note = mark_slot_done(ctx)
        ctx.done.append(rfc3339_z(t))
        ctx.record["done"] = ctx.done
        ctx.reporter.step(f"slot {len(ctx.done)}/{len(ctx.todo)} {rfc3339_z(t)} done ({name}){note}")
        save(ctx)
        hook(ctx, "slot-done")
    if not failures:
        return None
    why = "; ".join(failures)
    update_step(ctx, "failed", f"{why}; {len(ctx.done)} of {len(ctx.todo)} slot(s) done")
    ctx.record.update({"outcome": "failed", "failed_slot": ctx.record["failed_slots"][0], "done": ctx.done,
                       "exit_code": int(ExitCode.JOB_FAILED), "next_commands": nxt})
    save(ctx)
    return RunResult(ExitCode.JOB_FAILED,
                     f"{why}; {len(ctx.done)} of {len(ctx.todo)} slot(s) done; the CronJob stays "
                     f"suspended. To go on: cronctl restore {ctx.name} -n {ctx.ns}, then "
                     f"{ctx.go_on} (it skips the slots that have a Job, the failed one "
                     f"too: delete its Job on purpose to run it again)", ctx.record, None, nxt)


def lost_meanwhile(ctx: RunContext) -> list[datetime]:
    """Slots that passed while this run held the CronJob suspended, have no Job and are not queued."""
    start = ctx.record.get("suspended_at")
    if not start:
        return []
    queued = set(ctx.record.get("slots") or [])
    out = [t for t in lost_while_held(ctx.cj, ctx.cluster.list_jobs()[0], parse_rfc3339(start), ctx.clock.now(),
                                      MAX_SLOTS) if rfc3339_z(t) not in queued]
    if out:
        ctx.reporter.step(f"--catch-up all: {len(out)} slot(s) passed while suspended: "
                          + ", ".join(rfc3339_z(t) for t in out))
        ctx.record.setdefault("slots", []).extend(rfc3339_z(t) for t in out)
        ctx.todo.extend(out)
    return out


def catch_up_all(ctx: RunContext, deadline: float, nxt: list[str]) -> RunResult | None:
    """``--catch-up all`` before the restore: every slot that passed while the CronJob was held
    runs as its own slot-named Job, oldest first, one at a time, until none is left (a slot that
    passes meanwhile joins the queue; bounded by --timeout). A failure stops the run (its result
    is returned); None when all passed. Nothing to do when the restore keeps it suspended."""
    if ctx.original_suspend:
        return None
    queue = lost_meanwhile(ctx)
    while queue:
        failed = run_group(ctx, queue[:1], deadline, nxt)
        if failed is not None:
            return failed
        queue = queue[1:] or lost_meanwhile(ctx)
    return None
