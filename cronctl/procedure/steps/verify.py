"""Step 4, verify: no ``.status.active`` and no unfinished child Job, again after ``settle``
seconds; a refusal here sets suspend back (nothing of the run exists yet)."""

from __future__ import annotations

from datetime import timedelta

from cronctl import model
from cronctl.cluster import Obj
from cronctl.errors import CronctlError, Refused, Timeout, option
from cronctl.procedure.slot import schedule_of, slot_at_or_before
from cronctl.procedure.restore import RestoreOptions, restore
from cronctl.procedure.steps.context import RunContext, step_local, timestamp, update_step
from cronctl.procedure.steps.hold_guard import end_hold
from cronctl.procedure.wait import WaitTimeout, wait_for_jobs
from cronctl.timeutil import human_duration, rfc3339_z

#: below this ``--settle`` a Job the controller makes from a cache that has not yet seen the suspend
#: can appear after the check: its informer lags writes by seconds on a loaded control plane
SAFE_SETTLE = 5.0
#: a slot this close before the suspend may still get its Job from such a cache
NEAR_SLOT = 15.0

#: the hint of a refusal because child Jobs run
WAIT_ACTIVE_HINT = f"use {option('wait_active')} to wait for them (bounded by {option('timeout')})"


def running_now(ctx: RunContext) -> list[str]:
    cj = ctx.cluster.get_cronjob(ctx.name)
    ctx.cj = cj
    return running_of(cj, ctx.cluster.list_jobs()[0])


def running_of(cj: Obj, jobs: list[Obj]) -> list[str]:
    """The CronJob's unfinished child Jobs, and the unfinished Jobs its status.active names."""
    by_name = {model.name_of(j): j for j in jobs}
    names = [model.name_of(j) for j in model.unfinished_children(cj, jobs)]
    for a in model.active_names(cj):
        j = by_name.get(a)
        # A stale entry for a finished or vanished Job cannot run; the controller drops it.
        if a not in names and j is not None and not model.is_finished(j):
            names.append(a)
    return sorted(names)


def verify(ctx: RunContext, deadline: float) -> None:
    for attempt in ("now", "after settle"):
        if attempt == "after settle":
            wait_s, why = settle_for(ctx)
            ctx.reporter.step(f"verify: waiting {human_duration(wait_s)} for a creation the controller "
                              f"may have in flight{why}")
            ctx.clock.sleep(wait_s)
        running = running_now(ctx)
        if running and ctx.opts.wait_active:
            ctx.reporter.step(f"verify: waiting for running Jobs to finish: {', '.join(running)}")
            try:
                wait_for_jobs(ctx.cluster, set(running), deadline=deadline, clock=ctx.clock,
                              stats=ctx.wait_stats)
            except WaitTimeout as e:
                # Nothing of ours exists yet: go back to where we started, then report the timeout.
                why = f"running Jobs did not finish within {{}}: {', '.join(running)}"
                undo(ctx, why.format("--timeout"))
                raise Timeout(f"{why.format(option('timeout'))}; {set_back(ctx)}") from e
            running = running_now(ctx)
        if running:
            abort(ctx, f"cronjob {ctx.ns}/{ctx.name} has unfinished child Jobs: {', '.join(running)}")
        ctx.reporter.step(f"verify ({attempt}): no active or unfinished child Job")
    update_step(ctx, "verified")


def settle_for(ctx: RunContext) -> tuple[float, str]:
    """How long to wait before the second check, and why when it is not ``--settle``.

    The controller acts on a slot at its time, from its cache of the CronJob. A Job for a slot at or
    before the suspend that it makes from a cache which has not seen the suspend yet appears within
    its lag of the slot: ``--settle`` after the suspend covers a lag up to ``--settle``. A slot that
    falls inside the settle (after the suspend) is acted on the same way, so the check waits until
    ``--settle`` after that slot. A settle under :data:`SAFE_SETTLE` while a slot is near is warned
    about: the hold guard still names any Job that appears later (docs/commands/run-manual.md, "What
    the settle protects against").
    """
    settle = ctx.opts.settle
    if ctx.original_suspend or ctx.cj is None:
        return settle, ""  # suspended before the run: the controller has long seen it
    try:
        sched, _, _ = schedule_of(ctx.cj)
    except CronctlError:
        return settle, ""
    now = ctx.clock.now()
    slot = slot_at_or_before(sched, now + timedelta(seconds=settle))
    if slot is None:
        return settle, ""
    gap = (slot - now).total_seconds()  # > 0: the slot comes during the settle
    if settle < SAFE_SETTLE and -NEAR_SLOT <= gap:
        ctx.reporter.warn(f"the slot {rfc3339_z(slot)} is {abs(gap):.0f}s {'after' if gap > 0 else 'before'} the "
                          f"suspend and --settle is {human_duration(settle)}: the controller may still make its Job "
                          f"from a cache that has not seen the suspend after the check (the hold guard names it)")
    if gap > 0:
        return gap + settle, f" (until {human_duration(settle)} after the slot {rfc3339_z(slot)}, which comes first)"
    return settle, ""


def undo(ctx: RunContext, why: str) -> None:
    """Set suspend back to the original value and clear our record; nothing was created."""
    end_hold(ctx)
    restore(ctx.cluster, RestoreOptions(cronjob=ctx.name, yes=True, expect_run_id=ctx.run_id,
                                        expect_original=ctx.original_suspend,
                                        check_children=False, outcome="aborted"), ctx.clock, ctx.reporter)
    ctx.record["restored_at"] = timestamp(ctx)
    step_local(ctx, "aborted", why)


def set_back(ctx: RunContext) -> str:
    """What a run stopped after its suspend changed and set back, exactly (after :func:`undo`)."""
    at, back = ctx.record.get("suspended_at", "?"), ctx.record.get("restored_at", "?")
    kept = f"(the run's account kept in {model.ANN_RUNS} and in Events on the CronJob)"
    if ctx.original_suspend:  # suspend was true already: only the run record came and went
        return (f"cronctl wrote its run record on cronjob {ctx.ns}/{ctx.name} at {at} (it was suspended "
                f"already) and removed it at {back}, suspend set back to true {kept}; nothing else changed, "
                f"nothing created")
    return (f"cronctl suspended cronjob {ctx.ns}/{ctx.name} at {at} and set suspend back to false at "
            f"{back} {kept}; nothing else changed, nothing created")


def abort(ctx: RunContext, why: str, hint: str | None = None) -> None:
    hint = WAIT_ACTIVE_HINT if hint is None else hint
    undo(ctx, why)
    raise Refused(f"{why}; {set_back(ctx)}", hint=hint)
