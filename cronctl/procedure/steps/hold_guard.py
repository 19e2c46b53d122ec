"""The GitOps step of a hold: before any write, which tool manages the CronJob and how the hold is
made under it; from the suspend on, the :class:`~cronctl.procedure.guard.HoldGuard` that watches
it; and its end (before a restore, or at any end of the run). One step, used by every procedure."""

from __future__ import annotations

import json
from typing import Any

from cronctl import gitops, model
from cronctl.errors import ExitCode
from cronctl.procedure.guard import HoldGuard
from cronctl.procedure.steps.context import RunContext


def decide_gitops(ctx: RunContext) -> None:
    """Before any write: which tool manages the CronJob and how the hold is made under it."""
    ctx.seen = gitops.detect(ctx.cj)
    ctx.strategy = gitops.choose(ctx.seen, ctx.opts.gitops)
    if ctx.seen.tool is not None:
        ctx.reporter.step(f"preflight: {ctx.seen.words()}")


def gitops_annotation(ctx: RunContext) -> str:
    """The record's GitOps part (model.ANN_GITOPS): what the hold changes beside suspend."""
    if ctx.strategy.kind == "plain" and ctx.seen.tool is None:
        return ""
    hold: dict[str, Any] = {"strategy": ctx.strategy.kind, "tool": ctx.seen.tool}
    if ctx.strategy.kind == "annotate":
        hold.update(annotation=gitops.FLUX_RECONCILE,
                    previous=model.annotations(ctx.cj).get(gitops.FLUX_RECONCILE)
                    if "previous" not in ctx.record.get("gitops_hold", {}) else
                    ctx.record["gitops_hold"]["previous"])
    ctx.record["gitops_hold"] = hold
    return json.dumps(hold, separators=(",", ":"), sort_keys=True)


def hold_change_words(ctx: RunContext) -> str:
    """What the hold changed beside suspend, for the suspend's step line and Event."""
    hold = ctx.record.get("gitops_hold") or {}
    if ctx.strategy.kind == "annotate":
        prev = hold.get("previous")
        return (f"; {gitops.FLUX_RECONCILE}={gitops.FLUX_DISABLED} set for the hold (before: "
                + (repr(prev) if prev is not None else "absent") + "; put back at the restore)")
    if ctx.strategy.kind == "ignored":
        return f"; --gitops ignore: {ctx.seen.words()}"
    return ""


def hold_words(ctx: RunContext) -> str:
    """The plan's "hold" row: how the suspend is made and guarded."""
    guard = (f"watched every {ctx.opts.guard_every:g}s; a revert of spec.suspend is "
             + ("suspended again once, then reported without fighting" if ctx.opts.on_revert == "suspend-again"
                else "reported, not fought (--on-revert stop)"))
    if ctx.strategy.kind == "refuse":
        return f"REFUSED: {ctx.strategy.why}"
    return f"{ctx.strategy.why}; {guard}" if ctx.strategy.why else guard


def start_guard(ctx: RunContext) -> None:
    since = ctx.clock.now().replace(microsecond=0)
    ctx.guard = HoldGuard(ctx.cluster, ctx.name, ctx.run_id, ctx.clock, ctx.reporter, ctx.audit,
                          on_revert=ctx.opts.on_revert, every=ctx.opts.guard_every,
                          since=since, before=ctx.jobs_before, on_change=lambda: guard_changed(ctx))
    # the key exists before the thread runs: the guard only replaces its value, so the main thread's
    # json.dumps of the record never sees the dict change size; the main thread's next save writes it
    ctx.record["hold_guard"] = ctx.guard.account()
    ctx.guard.start()


def guard_changed(ctx: RunContext) -> None:
    """From the guard's thread: the account in the record (saved by the main thread's next write)."""
    if ctx.guard is not None:
        ctx.record["hold_guard"] = ctx.guard.account()


def with_duplicates(ctx: RunContext, code: ExitCode) -> ExitCode:
    """A run that would end well ends with ``DUPLICATE`` when the guard named a Job beside it: a Job
    of the CronJob that cronctl did not make was created during the hold (docs/EXIT_CODES.md)."""
    if code == ExitCode.OK and ctx.guard is not None and ctx.guard.beside:
        return ExitCode.DUPLICATE
    return code


def end_hold(ctx: RunContext) -> str:
    """Stop the guard (before a restore, or at any end of the run); what happened to the hold."""
    if ctx.guard is None:
        return ""
    ctx.guard.stop()
    ctx.record["hold_guard"] = ctx.guard.account()
    return ctx.guard.words()
