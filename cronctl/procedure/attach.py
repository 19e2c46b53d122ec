"""``cronctl wait CRONJOB``: re-attach to a manual run whose process stopped following it
(Ctrl-C, a closed terminal, a killed process), and finish it as run-manual would have.

The run record on the CronJob names the run and its Job. ``wait`` follows that Job to its end
with run-manual's own wait (watch, one deadline, live progress), saves every pod's logs into a
run directory of its own, and then does run-manual's end: after a failure the CronJob stays
suspended and the record says so; after success the slot (if the Job stands for one) is marked
done, ``--catch-up all`` runs the slots that passed, and the restore follows under the run's own
record (``expect_run_id``), so a second finisher is refused, never a double restore.

Refused (exit 3, nothing changed): no run record; the run's Job was never created or is gone
(``cronctl restore`` is what is left). Ctrl-C or ``--timeout`` while waiting saves the logs read so
far and says that the Job is still running; the record on the CronJob is left as it was.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Callable

from cronctl import model
from cronctl.cluster import Cluster, Obj
from cronctl.errors import CronctlError, ExitCode, Refused
from cronctl.procedure.base import Clock, Reporter, RunDir, next_commands
from cronctl.procedure.slot import resolve
from cronctl.procedure.steps.context import RunContext, save, timestamp
from cronctl.procedure.steps.finish import conclude
from cronctl.procedure.steps.follow import save_logs_so_far, wait
from cronctl.procedure.steps.hold_guard import end_hold, start_guard
from cronctl.procedure.steps.options import RunOptions, RunResult
from cronctl.procedure.wait import WaitTimeout
from cronctl.timeutil import human_duration, rfc3339_z


@dataclass
class AttachOptions:
    cronjob: str
    timeout: float = 3600.0
    run_dir: str | None = None
    catch_up: str = "latest"
    holder: str = ""
    #: ``holder -> True/False/None`` (alive / dead / cannot tell); given by the CLI.
    holder_alive: Callable[[str], bool | None] | None = None


def _attach(ctx: RunContext, a: AttachOptions) -> RunResult:
    """Take the run over from its record, follow its Job, then finish it as run-manual would."""
    ctx.cj = ctx.cluster.get_cronjob(ctx.name)
    rec = model.read_record(ctx.cj)
    restore_cmd = f"cronctl restore {ctx.name} -n {ctx.ns}"
    if rec is None:
        raise Refused(f"no cronctl run holds cronjob {ctx.ns}/{ctx.name}: nothing to wait for",
                      hint=f"cronctl status {ctx.name} -n {ctx.ns}")
    unconfirmed = model.record_unconfirmed(ctx.cj)
    if unconfirmed:  # a record is not a credential: wait would restore what it says, unasked
        raise Refused(f"run record {rec.run_id} on cronjob {ctx.ns}/{ctx.name} cannot be confirmed as "
                      f"cronctl's: {unconfirmed}; cronctl wait does not finish it, nothing changed",
                      hint=f"cronctl status {ctx.name} -n {ctx.ns} shows it; {restore_cmd} --force "
                           "restores it on purpose")
    ctx.run_id, ctx.job_name = rec.run_id, rec.job_name
    ctx.original_suspend, ctx.operator = rec.original_suspend, rec.operator or "unknown"
    job = ctx.cluster.get_job(rec.job_name)
    if job is None:
        never = rec.step in ("suspended", "verified", "aborted")
        raise Refused(f"run {rec.run_id}'s Job {ctx.ns}/{rec.job_name} "
                      + ("was never created" if never else "does not exist (deleted?)")
                      + "; nothing to wait for", hint=f"what is left is the restore: {restore_cmd}")
    if a.holder_alive is not None and rec.holder and a.holder_alive(rec.holder):
        ctx.reporter.warn(f"the run's own process {rec.holder} is still alive on this host and follows the Job too; "
                          "whichever finishes first restores, the other is refused")
    _use_job_slot(ctx, job)
    ctx.record = {"schema": "cronctl.dev/run-record/v1", "kind": "wait", "run_id": rec.run_id,
                  "cronjob": ctx.name, "namespace": ctx.ns, "server": ctx.cluster.server_url(),
                  "job_name": rec.job_name, "operator": rec.operator, "reason": rec.reason,
                  "occurrence": rfc3339_z(ctx.occurrence) if ctx.occurrence else None,
                  "holder": ctx.opts.holder, "started": rec.started, "attached": timestamp(ctx),
                  "original_suspend": rec.original_suspend, "suspended_at": rec.started,
                  "job": {"name": rec.job_name, "uid": model.meta(job).get("uid"),
                          "created": model.meta(job).get("creationTimestamp")}}
    ctx.dir = RunDir.create(ctx.opts.run_dir, ctx.name, f"{rec.run_id}-wait-{secrets.token_hex(2)}")
    ctx.record["run_dir"] = str(ctx.dir.path)
    save(ctx)
    outcome = model.job_outcome(job)
    ctx.reporter.step(f"attached to run {rec.run_id} of {rec.operator or 'unknown'} (step {rec.step}): Job "
                      f"{rec.job_name} " + (f"already ended ({outcome})" if outcome else "is still running"))
    deadline = ctx.clock.monotonic() + ctx.opts.timeout
    ctx.deadline = deadline  # an API server restart while following the Job is ridden out until it
    if not model.is_suspended(ctx.cj) and not rec.original_suspend:
        ctx.reporter.warn(f"cronjob {ctx.ns}/{ctx.name} is not suspended although run {rec.run_id} holds it: "
                          + model.hold_reverted(ctx.cj))
    start_guard(ctx)  # the hold is watched again while this process follows the Job
    nxt = next_commands(ctx.name, ctx.ns)
    final: Obj | None = job
    if outcome is None:
        try:
            final = wait(ctx, job, deadline)
        except (KeyboardInterrupt, WaitTimeout) as e:
            return _detached(ctx, e)
    return conclude(ctx, final, deadline, nxt)


def _use_job_slot(ctx: RunContext, job: Obj) -> None:
    """The instant the Job stands for, and the slot when it is one (run-manual --occurrence T)."""
    ctx.occurrence = model.occurrence(job) or None
    at = model.scheduled_for(job)
    if at is None:
        return
    try:
        ctx.slot = resolve(ctx.cj, at, latest=False, now=ctx.clock.now())
    except CronctlError:
        return
    ctx.occurrence = ctx.slot.at
    ok, _why = ctx.cluster.can_i("patch", "cronjobs", group="batch", subresource="status", name=ctx.name)
    ctx.can_patch_status = ok


def _detached(ctx: RunContext, e: BaseException) -> RunResult:
    """Ctrl-C or the timeout while waiting: save the logs so far; the Job runs on; nothing changes."""
    save_logs_so_far(ctx)
    timeout = isinstance(e, WaitTimeout)
    code = ExitCode.TIMEOUT if timeout else ExitCode.INTERRUPTED
    msg = ((f"{getattr(e, 'message', e)} (--timeout {human_duration(ctx.opts.timeout)})" if timeout else "interrupted")
           + f": stopped waiting; job {ctx.job_name} is still running and the CronJob stays suspended "
             f"under run {ctx.run_id}; the logs so far are in {ctx.dir.path if ctx.dir else '?'}; "
             f"cronctl wait {ctx.name} -n {ctx.ns} follows it again")
    ctx.record.update({"outcome": "detached", "exit_code": int(code)})
    save(ctx)
    return RunResult(code, msg, ctx.record, None, [f"cronctl wait {ctx.name} -n {ctx.ns}",
                                                   *next_commands(ctx.name, ctx.ns)])


def attach(cluster: Cluster, opts: AttachOptions, clock: Clock, reporter: Reporter) -> RunResult:
    """Follow the run that holds the CronJob to its end and finish it (see the module text)."""
    ctx = RunContext(cluster, RunOptions(cronjob=opts.cronjob, timeout=opts.timeout, run_dir=opts.run_dir,
                                         catch_up=opts.catch_up, holder=opts.holder, yes=True), clock, reporter)
    try:
        return _attach(ctx, opts)
    finally:
        end_hold(ctx)


__all__ = ["AttachOptions", "attach"]
