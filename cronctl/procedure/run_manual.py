"""``cronctl run-manual``: the safe manual run of a CronJob, as explicit steps.

1. preflight: the CronJob exists; ``--occurrence T|latest`` names a slot of its schedule (not in
   the future); every permission the later steps need (SelfSubjectAccessReview); no run record
   (lock) on it; the Job name is free and no Job already stands for the slot.
2. plan (+ confirmation, or --dry-run: stop and return the Job it would create).
3. suspend: ``spec.suspend=true`` + the run record, ONE merge patch guarded by resourceVersion.
4. verify: no ``.status.active`` and no unfinished child Job, again after ``settle`` seconds.
5. create the Job (``kubectl create job --from`` + cronctl annotations): the fixed name, or for a
   slot T the controller's own name and scheduled-timestamp annotation for T (checked again first).
6. wait (watch, one deadline), 7. save logs, 7b. for a slot T after success: ``status.lastScheduleTime
   = T`` (so the controller never wants T again), 8. restore (only after success, only to the
   original value; the controller's next move is predicted first), 9. the run record.

State is always explainable: the record on the CronJob says who/when/which step; a process
killed at any step leaves a CronJob that ``cronctl status`` explains and ``cronctl restore``
finishes. Nothing is ever deleted.

Each step is a function of one :class:`~cronctl.procedure.steps.context.RunContext` in its own
module under :mod:`cronctl.procedure.steps`; this module only composes them in order, as
``backfill`` and ``wait`` (:mod:`cronctl.procedure.attach`) compose them in theirs.
"""

from __future__ import annotations

from cronctl.cluster import Cluster
from cronctl.errors import CronctlError, ExitCode, Interrupted
from cronctl.procedure.base import Clock, Reporter
from cronctl.procedure.steps.context import RunContext, hook, masked, step_local, timestamp
from cronctl.procedure.steps.create import create
from cronctl.procedure.steps.evidence import save_logs
from cronctl.procedure.steps.finish import conclude, stopped
from cronctl.procedure.steps.follow import save_logs_so_far, wait
from cronctl.procedure.steps.hold import open_run
from cronctl.procedure.steps.hold_guard import end_hold
from cronctl.procedure.steps.options import MAX_SLOTS, RunOptions, RunResult
from cronctl.procedure.steps.plan import confirm, plan
from cronctl.procedure.steps.preflight import PERMISSIONS, check_permissions, preflight
from cronctl.procedure.steps.retry import retry_job_name
from cronctl.procedure.steps.verify import verify
from cronctl.procedure.wait import WaitTimeout
from cronctl.timeutil import human_duration, rfc3339_z


def _run(ctx: RunContext) -> RunResult:
    """The steps in order; refusals before the suspend raise, every end after it is returned."""
    ctx.record = {"schema": "cronctl.dev/run-record/v1", "run_id": ctx.run_id, "cronjob": ctx.name,
                  "namespace": ctx.ns, "server": ctx.cluster.server_url(), "job_name": ctx.job_name,
                  "reason": ctx.opts.reason,
                  "occurrence": rfc3339_z(ctx.opts.occurrence) if ctx.opts.occurrence else None,
                  "holder": ctx.opts.holder, "started": timestamp(ctx), "dry_run": ctx.opts.dry_run}
    preflight(ctx)
    ctx.record["operator"] = ctx.operator
    ctx.record["job_name"] = ctx.job_name
    ctx.record["reason"] = ctx.opts.reason
    ctx.record["occurrence"] = rfc3339_z(ctx.occurrence) if ctx.occurrence else None
    if ctx.slot is not None:
        ctx.record["slot"] = ctx.slot.as_dict()
    elif ctx.occurrence is not None:
        ctx.record["ad_hoc_occurrence"] = True
    job = plan(ctx)
    if ctx.opts.dry_run:
        ctx.record.update({"outcome": "dry-run", "exit_code": int(ExitCode.OK), "step": "dry-run",
                           "would_refuse": list(ctx.would_refuse)})
        ctx.record["api_requests"] = ctx.cluster.request_count - ctx.requests_at_start
        said = "; ".join(ctx.would_refuse)
        return RunResult(ExitCode.OK, "dry run: nothing was changed" + (f"; a real run would be refused: {said}"
                                                                         if said else ""), ctx.record, job)
    confirm(ctx)
    deadline, nxt = open_run(ctx)
    try:
        verify(ctx, deadline)
        hook(ctx, "verified")
        job = create(ctx)
        hook(ctx, "created")
        final = wait(ctx, job, deadline)
    except KeyboardInterrupt:
        if "job" not in ctx.record:
            return stopped(ctx, "interrupted", ExitCode.INTERRUPTED, "interrupted before the Job was created: "
                           "the CronJob stays suspended and nothing else changed", nxt)
        save_logs_so_far(ctx)
        wait_cmd = f"cronctl wait {ctx.name} -n {ctx.ns}"
        return stopped(ctx, "interrupted", ExitCode.INTERRUPTED,
                       f"interrupted: stopped waiting; job {ctx.job_name} is still running and the CronJob "
                       f"stays suspended; the logs so far are saved; `{wait_cmd}` follows it to its end "
                       "and restores", [wait_cmd, *nxt])
    except WaitTimeout as e:
        j = e.state.get(ctx.job_name)
        if j is not None:
            save_logs(ctx, j)
        return stopped(ctx, "timeout", ExitCode.TIMEOUT,
                       f"{e.message} (--timeout {human_duration(ctx.opts.timeout)}); the CronJob stays "
                       f"suspended", nxt)
    except CronctlError as e:
        if ctx.record.get("step") == "aborted":
            raise  # verification stopped the run and already set suspend back
        # An API failure mid-run: leave it suspended, say so locally, point at status/restore.
        ctx.record.update({"outcome": "error", "error": e.message, "next_commands": nxt, "exit_code": int(e.exit_code)})
        step_local(ctx, "error", e.message)
        e.add_hint("the CronJob stays suspended; next: " + "; ".join(nxt))
        raise
    return conclude(ctx, final, deadline, nxt)


def run_manual(cluster: Cluster, opts: RunOptions, clock: Clock, reporter: Reporter) -> RunResult:
    """Run the whole procedure. Refusals before the suspend raise (nothing changed); outcomes after
    it (success, Job failed, timeout, Ctrl-C) are returned with their exit code and the record."""
    ctx = RunContext(cluster, opts, clock, reporter)
    try:
        return masked(ctx, _run(ctx))
    finally:
        end_hold(ctx)


__all__ = ["PERMISSIONS", "MAX_SLOTS", "RunOptions", "RunResult", "run_manual", "check_permissions", "retry_job_name",
           "Interrupted"]
