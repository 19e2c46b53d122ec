"""Step 1, preflight: the CronJob exists; ``--occurrence T|latest`` names a slot of its schedule;
every permission the later steps need (SelfSubjectAccessReview); no run record (lock) on it; the
Job name is free and no Job already stands for the instant. Nothing is changed here."""

from __future__ import annotations

import re
from datetime import datetime

from cronctl import model
from cronctl.cluster import Cluster, Obj
from cronctl.errors import BadInput, CronctlError, PermissionMissing, Refused, option
from cronctl.procedure.slot import describe_job, is_slot, resolve, schedule_of, show, standing_for
from cronctl.procedure.steps.context import RunContext
from cronctl.procedure.steps.hold_guard import decide_gitops
from cronctl.procedure.steps.retry import prepare_retry
from cronctl.versions import behaviour_for

#: (verb, resource, group, subresource, why) — every permission a run needs, checked up front.
PERMISSIONS: tuple[tuple[str, str, str, str, str], ...] = (
    ("get", "cronjobs", "batch", "", "read the CronJob"),
    ("patch", "cronjobs", "batch", "", "suspend it and write the run record"),
    ("create", "jobs", "batch", "", "create the manual Job"),
    ("get", "jobs", "batch", "", "check the Job name is free"),
    ("list", "jobs", "batch", "", "find unfinished child Jobs"),
    ("watch", "jobs", "batch", "", "wait for the Job"),
    ("list", "pods", "", "", "find the Job's pods"),
    ("get", "pods", "", "log", "save the logs"),
    ("list", "events", "", "", "show why a Job failed"),
)

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def check_permissions(cluster: Cluster, cronjob: str) -> None:
    """Raise PermissionMissing naming the first permission (of all later steps) the caller lacks."""
    missing = []
    for verb, resource, group, sub, why in PERMISSIONS:
        name = cronjob if resource == "cronjobs" else ""
        ok, _reason = cluster.can_i(verb, resource, group=group, subresource=sub, name=name)
        if not ok:
            res = f"{resource}/{sub}" if sub else resource
            missing.append(f"{verb} {res}{'.' + group if group else ''} (to {why})")
    if missing:
        raise PermissionMissing(
            f"missing permission in namespace {cluster.namespace}: cannot " + "; cannot ".join(missing)
            + "; nothing was changed", hint="see examples/rbac-operator.yaml for the operator Role")


def locked_message(cronjob: Obj, rec: model.RunRecord) -> str:
    ns = model.meta(cronjob).get("namespace", "")
    return (f"cronjob {ns}/{model.name_of(cronjob)} is held by run {rec.run_id} of {rec.operator or 'unknown'}"
            f" (started {rec.started}, step {rec.step or '?'}"
            + (f", {rec.holder}" if rec.holder else "") + ")")


def slot_mode(ctx: RunContext) -> bool:
    return (ctx.opts.occurrence is not None or ctx.opts.occurrence_latest) and not ctx.opts.ad_hoc_occurrence


def check_flags(ctx: RunContext) -> None:
    if ctx.opts.ad_hoc_occurrence and ctx.opts.occurrence_latest:
        raise BadInput(f"{option('ad_hoc_occurrence')} cannot be used with {option('occurrence')} latest (latest "
                       "is always a slot)")
    if ctx.opts.ad_hoc_occurrence and ctx.opts.occurrence is None:
        raise BadInput(f"{option('ad_hoc_occurrence')} needs {option('occurrence')} RFC3339 (the instant the "
                       "run stands for)")
    if ctx.opts.run_name is not None and ctx.opts.job_name:
        raise BadInput(f"{option('run_name')} names the Job <cronjob>-manual-NAME: give it or {option('job_name')}, "
                       "not both")
    if ctx.opts.retry and (ctx.opts.occurrence is not None or ctx.opts.occurrence_latest or ctx.opts.job_name
                           or ctx.opts.run_name is not None or ctx.opts.ad_hoc_occurrence or ctx.opts.takeover):
        raise BadInput(f"{option('retry')} runs the failed run's own occurrence again under a name derived from "
                       f"its Job: it takes no {option('occurrence')}, {option('ad_hoc_occurrence')}, "
                       f"{option('run_name')} or {option('job_name')}")
    if slot_mode(ctx) and ctx.opts.job_name:
        raise BadInput(f"{option('job_name')} cannot be used with a slot {option('occurrence')}: the Job takes "
                       "the name the controller gives that slot (<cronjob>-<unix minutes>)",
                       hint=f"drop {option('job_name')}, or add {option('ad_hoc_occurrence')} for a fixed-name "
                            "run the controller does not know")
    if slot_mode(ctx) and ctx.opts.run_name is not None:
        raise BadInput(f"{option('run_name')} cannot be used with a slot {option('occurrence')}: the Job takes "
                       "the name the controller gives that slot, which already differs from slot to slot",
                       hint=f"drop {option('run_name')}, or add {option('ad_hoc_occurrence')}")


def preflight(ctx: RunContext) -> None:
    check_flags(ctx)
    if not _DNS_LABEL.match(ctx.job_name) or len(ctx.job_name) > 63:
        raise BadInput(f"bad {option('job_name')} {ctx.job_name!r}: must be a DNS label (a-z, 0-9, '-', "
                       f"at most 63 characters)")
    ctx.cj = ctx.cluster.get_cronjob(ctx.name)
    ctx.red.learn(ctx.cj)  # its secret env values, masked wherever the run echoes them
    ctx.reporter.step(f"preflight: cronjob {ctx.ns}/{ctx.name} found")
    decide_gitops(ctx)
    if ctx.opts.retry:
        prepare_retry(ctx)
    if slot_mode(ctx):
        ctx.slot = resolve(ctx.cj, ctx.opts.occurrence, latest=ctx.opts.occurrence_latest, now=ctx.clock.now())
        ctx.occurrence = ctx.slot.at
        ctx.job_name = ctx.slot.job_name
        ctx.reporter.step(f"preflight: {'the latest slot' if ctx.slot.latest else 'slot'} {ctx.slot.shown} of "
                          f"the schedule: Job {ctx.job_name}, the controller's name for it")
    elif ctx.occurrence is not None and not ctx.opts.retry:
        warn_ad_hoc(ctx, ctx.occurrence)
    try:
        check_permissions(ctx.cluster, ctx.name)
        ctx.reporter.step("preflight: every permission the run needs is granted")
    except Refused as e:
        would_refuse(ctx, e)
    if ctx.slot is not None:
        check_status_permission(ctx)
    if ctx.opts.catch_up in ("none", "all"):
        ok, why = ctx.cluster.can_i("patch", "cronjobs", group="batch", subresource="status", name=ctx.name)
        if not ok:
            what = ("mark the latest due slot processed before the restore" if ctx.opts.catch_up == "none" else
                    "mark each slot run processed")
            would_refuse(ctx, PermissionMissing(
                f"{option('catch_up')} {ctx.opts.catch_up} needs patch on cronjobs/status (to "
                f"{what}){': ' + why if why else ''}; nothing was changed",
                hint=f"use {option('catch_up')} latest, or see cronctl runbook rbac"))
        else:
            ctx.reporter.step(f"preflight: may patch cronjobs/status (--catch-up {ctx.opts.catch_up})")
    rec = model.read_record(ctx.cj)
    if rec is not None and not taking_over(ctx, rec):
        would_refuse(ctx, Refused(locked_message(ctx.cj, rec) + "; nothing was changed",
                                  hint=f"see cronctl status {ctx.name} -n {ctx.ns}; if that run is dead, "
                                       f"cronctl restore {ctx.name} -n {ctx.ns}"))
    try:
        check_name_free(ctx)
        if ctx.occurrence is not None:
            check_occurrence_free(ctx, ctx.cluster.list_jobs()[0])
    except Refused as e:
        would_refuse(ctx, e)
    ctx.operator = ctx.cluster.whoami()


def would_refuse(ctx: RunContext, refusal: Refused) -> None:
    """A refusal before anything changes: raised, or with ``--dry-run`` said (a warning now, and at the
    end of the dry run) while the plan is still shown."""
    if not ctx.opts.dry_run:
        raise refusal
    message, hint = refusal.naming(lambda name: "--" + name.replace("_", "-"))  # run-manual's own flags
    text = message.removesuffix("; nothing was changed")
    ctx.would_refuse.append(text + (f" ({hint})" if hint else ""))
    ctx.reporter.warn(f"a real run would be refused: {text}")


def taking_over(ctx: RunContext, rec: model.RunRecord | None) -> bool:
    """Whether ``rec`` is the interrupted run's record this run was asked to take over."""
    return rec is not None and ctx.opts.takeover is not None and rec.run_id == ctx.opts.takeover


def warn_ad_hoc(ctx: RunContext, at: datetime) -> None:
    tz: str | None = None
    try:
        sched, _expr, tz = schedule_of(ctx.cj)
        slot = sched.every is None and is_slot(sched, at)
    except CronctlError:
        slot = False
    what = ("is a slot of the schedule, but runs as an ad-hoc Job" if slot
            else "is not a slot of the schedule")
    ctx.reporter.warn(f"--ad-hoc-occurrence: {show(at, tz)} {what}: the controller does not know this instant "
                      f"(Job {ctx.job_name} carries it only as {model.ANN_OCCURRENCE} and {model.OCCURRENCE_ENV})"
                      + ("; the controller still starts that slot itself if it is due" if slot else ""))


def check_status_permission(ctx: RunContext) -> None:
    ok, _why = ctx.cluster.can_i("patch", "cronjobs", group="batch", subresource="status", name=ctx.name)
    ctx.can_patch_status = ok
    if ok:
        ctx.reporter.step("preflight: may patch cronjobs/status (lastScheduleTime = the slot after success)")
        return
    try:
        version: str | None = ctx.cluster.server_version()
    except CronctlError:
        version = None
    assert ctx.slot is not None
    beh = behaviour_for(version)
    ctx.without_patch = ("when it is un-suspended while this slot is the latest one due, the controller "
                         "tries to start it: " + beh.adoption_text(ctx.job_name, ctx.slot.shown))


def check_name_free(ctx: RunContext) -> None:
    existing = ctx.cluster.get_job(ctx.job_name)
    if existing is not None:
        outcome = model.job_outcome(existing) or "still running"
        if ctx.slot is not None:
            raise Refused(f"job {ctx.ns}/{ctx.job_name} already exists for slot {ctx.slot.shown} (created "
                          f"{model.meta(existing).get('creationTimestamp', '?')}, {outcome}); nothing was "
                          f"changed", hint="that slot has run (or runs) already; see cronctl status "
                                           f"{ctx.name} -n {ctx.ns}")
        raise Refused(f"job {ctx.ns}/{ctx.job_name} already exists (created "
                      f"{model.meta(existing).get('creationTimestamp', '?')}, {outcome}); nothing was "
                      f"changed", hint="the fixed name is what stops a second run of the same run: to run it "
                                       f"again and keep that Job, name this run ({option('run_name')} NAME, Job "
                                       f"{ctx.name}-manual-NAME)")


def standing(ctx: RunContext, jobs: list[Obj]) -> list[Obj]:
    if ctx.occurrence is None:
        return []
    found = standing_for(ctx.cj, jobs, ctx.occurrence, ctx.job_name)
    if ctx.retry_of is not None:  # a retry runs again what failed: failed attempts do not stand
        found = [j for j in found if model.job_outcome(j) != "Failed"]
    return found


def check_occurrence_free(ctx: RunContext, jobs: list[Obj]) -> None:
    """A Job that already stands for the run's instant (its name, or owned + annotation) stops it."""
    found = standing(ctx, jobs)
    if found and ctx.occurrence is not None:
        tz = ctx.slot.time_zone if ctx.slot else None
        raise Refused(f"{describe_job(found[0])} already stands for {show(ctx.occurrence, tz)}; nothing "
                      f"was changed", hint=f"that occurrence has run (or runs) already; see cronctl status "
                                           f"{ctx.name} -n {ctx.ns}")
