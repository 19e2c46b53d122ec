"""``--retry``: the failed run on the CronJob is taken over, so the CronJob stays suspended in
between, and its occurrence runs again as ``<job>-r<N>``."""

from __future__ import annotations

import re

from cronctl import model
from cronctl.errors import CronctlError, Refused, option
from cronctl.procedure.slot import resolve
from cronctl.procedure.steps.context import RunContext
from cronctl.timeutil import parse_rfc3339

_RETRY_NAME = re.compile(r"^(.+)-r(\d{1,4})$")  # <job>-r<N>: attempt N of a run retried with --retry


def retry_job_name(base: str, attempt: int) -> str:
    """The Job of attempt ``attempt`` (2, 3, ...) of a run whose first Job was ``base``: ``base-rN``,
    ``base`` cut so the name stays a DNS label (at most 63 characters)."""
    suffix = f"-r{attempt}"
    return base[:63 - len(suffix)].rstrip("-") + suffix


def prepare_retry(ctx: RunContext) -> None:
    """``--retry``: the run on the CronJob failed (its record says step ``failed``, its Job ended
    Failed). This run takes its record over, so the CronJob stays suspended in between, and runs
    the same occurrence again as ``<job>-r<N>`` (the failed Job keeps its name, logs and
    evidence). A slot's lastScheduleTime is set after success as for the first attempt."""
    rec = model.read_record(ctx.cj)
    if rec is None or rec.step != "failed":
        now = f"its run record is at step '{rec.step}'" if rec else "it carries no run record"
        raise Refused(f"{option('retry')} needs a failed cronctl run on cronjob {ctx.ns}/{ctx.name}; {now}; nothing "
                      f"was changed", hint=f"see cronctl status {ctx.name} -n {ctx.ns}")
    unconfirmed = model.record_unconfirmed(ctx.cj)
    if unconfirmed:  # a record is not a credential: its original suspend would be restored at the end
        raise Refused(f"run record {rec.run_id} on cronjob {ctx.ns}/{ctx.name} is {unconfirmed}; "
                      f"{option('retry')} takes over only a record cronctl wrote; nothing was changed",
                      hint=f"check with {rec.operator or 'its operator'}; cronctl restore --force clears it")
    failed = ctx.cluster.get_job(rec.job_name) if rec.job_name else None
    if failed is not None and not model.is_finished(failed):
        raise Refused(f"job {ctx.ns}/{rec.job_name} of run {rec.run_id} is still running; nothing was changed",
                      hint=f"cronctl wait {ctx.name} -n {ctx.ns} follows it to its end")
    m = _RETRY_NAME.match(rec.job_name or "")
    base, last = (m.group(1), int(m.group(2))) if m else (rec.job_name or f"{ctx.name}-manual", 1)
    ctx.attempt = last + 1
    ctx.job_name = retry_job_name(base, ctx.attempt)
    ctx.retry_of = rec
    ctx.opts.takeover = rec.run_id
    if not ctx.opts.reason:
        ctx.opts.reason = rec.reason
    if rec.occurrence:
        try:
            at = parse_rfc3339(rec.occurrence)
        except CronctlError:
            at = None
        if at is not None:
            ctx.occurrence = at
            try:
                ctx.slot = resolve(ctx.cj, at, latest=False, now=ctx.clock.now())
            except CronctlError:
                ctx.slot = None  # an ad-hoc instant: carried by annotation and env only
    ctx.record["retry_of"] = {"run_id": rec.run_id, "job": rec.job_name, "attempt": ctx.attempt}
    ctx.reporter.step(f"preflight: retry of run {rec.run_id} of {rec.operator or 'unknown'} (job {rec.job_name} "
                      f"failed): attempt {ctx.attempt} as Job {ctx.job_name}"
                      + (f" for {rec.occurrence}" if rec.occurrence else "") + "; the CronJob stays suspended")
