"""Step 5, create the Job (``kubectl create job --from`` + cronctl annotations): the fixed name,
or for a slot T the controller's own name and scheduled-timestamp annotation for T (checked again
first)."""

from __future__ import annotations

from cronctl import model
from cronctl.cluster import Obj
from cronctl.errors import Conflict, CronctlError
from cronctl.procedure.slot import describe_job, show
from cronctl.procedure.steps.context import RunContext, hook, update_step, who
from cronctl.procedure.steps.preflight import standing
from cronctl.procedure.steps.verify import abort, set_back, undo
from cronctl.timeutil import rfc3339_z


def build_job(ctx: RunContext) -> Obj:
    extra = {model.ANN_RUN_ID: ctx.run_id, model.ANN_OPERATOR: ctx.operator}
    if ctx.opts.reason:
        extra[model.ANN_REASON] = ctx.opts.reason
    if ctx.occurrence:
        extra[model.ANN_OCCURRENCE] = rfc3339_z(ctx.occurrence)
    if ctx.slot is not None:
        # what the controller writes on the Job it makes for this slot
        extra[model.SCHEDULED_TS] = ctx.slot.scheduled_timestamp
    if ctx.retry_of is not None and ctx.retry_of.job_name:
        extra[model.ANN_RETRY_OF] = ctx.retry_of.job_name
    return model.build_manual_job(ctx.cj, ctx.job_name, extra_annotations=extra,
                                  occurrence_at=ctx.occurrence)


def create(ctx: RunContext) -> Obj:
    if ctx.occurrence is not None:
        # again right before creating: the controller (before the suspend) or a person may
        # have made a Job for this instant since the preflight check
        found = standing(ctx, ctx.cluster.list_jobs()[0])
        if found:
            tz = ctx.slot.time_zone if ctx.slot else None
            abort(ctx, f"{describe_job(found[0])} appeared for {show(ctx.occurrence, tz)} since the preflight "
                  f"check", hint=f"that occurrence has run (or runs) already; see cronctl status "
                                       f"{ctx.name} -n {ctx.ns}")
    body = build_job(ctx)
    try:
        job = ctx.cluster.create_job(body)
    except Conflict:
        abort(ctx, f"job {ctx.ns}/{ctx.job_name} appeared since the preflight check",
              hint="someone created it meanwhile; see cronctl status")
        raise  # pragma: no cover (abort raises)
    except CronctlError as e:
        # Refused by the API (admission, quota, validation). If it really was not created,
        # put suspend back: the run changed nothing. If we cannot tell, leave it suspended.
        if ctx.cluster.get_job(ctx.job_name) is None:
            undo(ctx, f"the API server refused the Job: {e.message}")
            e.message = f"{e.message}; {set_back(ctx)}"
            e.args = (e.message,)
        raise
    ctx.record["job"] = {"name": ctx.job_name, "uid": model.meta(job).get("uid"),
                         "created": model.meta(job).get("creationTimestamp")}
    ctx.reporter.step(f"created Job {ctx.ns}/{ctx.job_name}")
    hook(ctx, "job-made")
    ctx.audit.event(ctx.cj, "CronctlJobCreated", f"cronctl {who(ctx)}: created Job {ctx.job_name}")
    update_step(ctx, "created", ride=True)  # the Job is in flight: an API restart is waited out
    return job
