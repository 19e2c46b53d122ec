"""``cronctl backfill``: run lost slots, oldest first, each as the slot's own Job, under one lock
and one suspension.

The steps are run-manual's (:mod:`cronctl.procedure.steps`, composed here): preflight, plan, confirm,
suspend with a run record, verify (again after the settle), then for each slot T: a Job named
as the controller names T's Job, wait, logs, ``status.lastScheduleTime = T`` when T is later;
then the restore (``--catch-up latest|none``). A failed slot stops the run: the CronJob stays
suspended, the record says which slot; after ``cronctl restore``, the same backfill command runs
again from there (slots that have a Job are skipped, the failed one included: delete its Job on
purpose to run it again). A process killed at any step leaves the run record that ``status``
explains and ``restore`` finishes.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from cronctl import model
from cronctl.cluster import Cluster, Obj
from cronctl.errors import BadInput, BadUsage, CronctlError, ExitCode, option
from cronctl.procedure.base import Clock, Reporter
from cronctl.procedure.effects import done_effects, read_done
from cronctl.procedure.restore import RestoreOptions, Restored, restore
from cronctl.procedure.slot import lost_while_held, resolve, standing_for
from cronctl.procedure.steps.catch_up import lost_meanwhile, run_group
from cronctl.procedure.steps.context import RunContext, hook, masked, step_local, timestamp
from cronctl.procedure.steps.finish import stopped
from cronctl.procedure.steps.hold import open_run
from cronctl.procedure.steps.hold_guard import end_hold, with_duplicates
from cronctl.procedure.steps.options import MAX_SLOTS, RunOptions, RunResult
from cronctl.procedure.steps.plan import confirm, plan
from cronctl.procedure.steps.preflight import preflight
from cronctl.procedure.steps.verify import verify
from cronctl.procedure.wait import WaitTimeout
from cronctl.timeutil import human_duration, local_and_utc, parse_rfc3339, rfc3339_z


@dataclass
class BackfillOptions:
    cronjob: str
    missed: bool = False
    since: timedelta | None = None
    from_: datetime | None = None
    to: datetime | None = None
    slots: list[datetime] = field(default_factory=list)
    done_from: str | None = None
    max_age: timedelta = timedelta(days=7)
    parallel: int = 1              # Jobs at a time (more than 1 only with concurrencyPolicy Allow)
    run: RunOptions | None = None  # yes, interactive, dry_run, settle, timeout, run_dir, catch_up, ...
    #: what cronctl record kept (URL or None for the default, the cluster's name in it): a slot whose
    #: Job the cluster deleted still stands, and --missed judges with the exact suspend spans
    ledger: tuple[str | None, str] | None = None

    def __post_init__(self) -> None:
        # refused before any request: more at a time than one backfill may run at all means nothing
        if self.parallel > MAX_PARALLEL:
            raise BadUsage(f"bad {option('parallel')} {self.parallel}: at most {MAX_PARALLEL} Jobs at a time, the "
                           "slots one backfill may run")


#: ``--parallel``: at most the slots one backfill may run (MAX_SLOTS)
MAX_PARALLEL = MAX_SLOTS


def choose_slots(cj: Obj, jobs: list[Obj], events: list[Obj], opts: BackfillOptions,
                 now: datetime, suspensions: dict[str, list[tuple[datetime, datetime | None, str]]] | None = None,
                 effects_done: dict[datetime, str] | None = None) -> tuple[list[datetime], list[tuple[datetime, str]]]:
    """(slots to run, oldest first; slots skipped with why). Pure. ``suspensions``: the ledger's
    exact suspend spans by CronJob uid (:class:`cronctl.history.Options`); ``effects_done``: the
    occurrences whose effect ``cronctl claim`` recorded done, with who did it."""
    from cronctl.history import LOST, Options, slot_history

    ways = sum([opts.missed, opts.from_ is not None or opts.to is not None, bool(opts.slots)])
    if ways != 1:
        raise BadInput(f"give exactly one of {option('missed')}, {option('from_')}/{option('to')}, "
                       f"{option('slots')}")
    wanted: list[datetime] = []
    if opts.missed:
        since = now - opts.since if opts.since else None
        h = slot_history(cj, jobs, events, Options(now=now, since=since, suspensions=suspensions or {}))
        if h["error"]:
            raise BadInput(f"the schedule cannot be judged: {h['error']}")
        wanted = [parse_rfc3339(r["slot"]) for r in h["slots"] if r["verdict"] in LOST]
    elif opts.slots:
        wanted = [resolve(cj, t, latest=False, now=now).at for t in opts.slots]
    else:
        if opts.from_ is None or opts.to is None:
            raise BadInput(f"{option('from_')} and {option('to')} go together")
        if opts.to < opts.from_:
            raise BadInput(f"{option('to')} is before {option('from_')}")
        from cronctl.procedure.slot import schedule_of

        sched = schedule_of(cj)[0]
        wanted = [t for t in sched.runs(opts.from_ - timedelta(seconds=1), MAX_SLOTS + 1)
                  if t <= min(opts.to, now)]
    done = read_done(opts.done_from) if opts.done_from else set()
    name = model.name_of(cj)
    run: list[datetime] = []
    skipped: list[tuple[datetime, str]] = []
    for t in sorted(set(wanted)):
        slot = resolve(cj, t, latest=False, now=now)
        standing = standing_for(cj, jobs, t, slot.job_name)
        if standing:
            skipped.append((t, f"{model.name_of(standing[0])} already stands for it "
                               f"({model.job_outcome(standing[0]) or 'running'})"))
        elif t in done:
            skipped.append((t, f"done according to {opts.done_from}"))
        elif effects_done and t in effects_done:
            skipped.append((t, f"its effect is done ({effects_done[t]}; cronctl claim)"))
        elif now - t > opts.max_age:
            skipped.append((t, f"older than --max-age {human_duration(opts.max_age)}"))
        else:
            run.append(t)
    if len(run) > MAX_SLOTS:
        raise BadInput(f"{len(run)} slots to run for cronjob {name}: at most {MAX_SLOTS} per backfill; "
                       "narrow it with --since or --from/--to")
    return run, skipped


def _run(ctx: RunContext, b: BackfillOptions) -> RunResult:  # noqa: C901 - the steps in order
    """run-manual's steps, with one Job per slot between the suspend and the restore."""
    ctx.record = {"schema": "cronctl.dev/run-record/v1", "kind": "backfill", "run_id": ctx.run_id,
                  "cronjob": ctx.name, "namespace": ctx.ns, "server": ctx.cluster.server_url(),
                  "reason": ctx.opts.reason, "holder": ctx.opts.holder, "started": timestamp(ctx),
                  "dry_run": ctx.opts.dry_run}
    ctx.cj = ctx.cluster.get_cronjob(ctx.name)
    policy = model.cronjob_view(ctx.cj).policy
    if b.parallel < 1:
        raise BadInput(f"bad {option('parallel')} {b.parallel}: must be 1 or more")
    if b.parallel > 1 and policy != "Allow":
        raise BadInput(f"{option('parallel')} {b.parallel} needs concurrencyPolicy Allow; cronjob {ctx.ns}/{ctx.name} "
                       f"has {policy}, which promises one run at a time: its slots run one after the other")
    mode = ctx.opts.catch_up
    if mode == "all":
        ctx.opts.catch_up = "none"  # the slots lost meanwhile are run here; then nothing is left to catch up
    today = ctx.clock.now()
    jobs, _ = ctx.cluster.list_jobs()
    events: list[Obj] = []
    if b.missed:
        try:
            events = ctx.cluster.list_events(
                field_selector=f"involvedObject.kind=CronJob,involvedObject.name={ctx.name}")
        except CronctlError as e:
            ctx.reporter.warn(f"cannot read the CronJob's events ({e.message}); lost slots judged from the Jobs")
    suspensions = None
    if b.ledger is not None:
        from cronctl.ledger.facts import merge
        from cronctl.ledger.store import evidence_for

        ev = evidence_for(b.ledger[0], b.ledger[1], namespace=ctx.ns, name=ctx.name,
                          since=today - (b.since or b.max_age) - timedelta(days=1), strict=True)
        jobs, events, suspensions = merge(jobs, ev.jobs), merge(events, ev.events), ev.suspensions
    effects_done = done_effects(b.ledger[0], f"{ctx.ns}/{ctx.name}") if b.ledger is not None else None
    ctx.todo, skipped = choose_slots(ctx.cj, jobs, events, b, today, suspensions, effects_done)
    for t, why in skipped:
        ctx.reporter.step(f"skip {local_and_utc(t, ctx.zone)}: {why}")
    ctx.record["slots"] = [rfc3339_z(t) for t in ctx.todo]
    ctx.record["skipped"] = [{"slot": rfc3339_z(t), "why": why} for t, why in skipped]
    if not ctx.todo:
        msg = f"nothing to backfill for cronjob {ctx.ns}/{ctx.name}" + (
            f" ({len(skipped)} slot(s) skipped)" if skipped else "")
        return RunResult(ExitCode.OK, msg, ctx.record)
    # preflight as a slot run of the first slot (permissions incl. cronjobs/status, the lock)
    ctx.opts.occurrence = ctx.todo[0]
    preflight(ctx)
    ctx.record["operator"] = ctx.operator
    first = plan(ctx)
    ctx.reporter.show("backfill", [(local_and_utc(t, ctx.zone), resolve(ctx.cj, t, latest=False, now=today).job_name)
                                   for t in ctx.todo[:50]]
                      + ([("...", f"{len(ctx.todo) - 50} more")] if len(ctx.todo) > 50 else []))
    if ctx.opts.dry_run:
        ctx.record.update({"outcome": "dry-run", "exit_code": int(ExitCode.OK), "step": "dry-run"})
        return RunResult(ExitCode.OK, f"dry run: {len(ctx.todo)} slot(s) would run, oldest first; nothing "
                         "was changed", ctx.record, first)
    confirm(ctx, (f"Take over run record {ctx.opts.takeover} (it keeps {ctx.ns}/{ctx.name} suspended)"
                  if ctx.opts.takeover else f"Suspend {ctx.ns}/{ctx.name}")
            + f" and run {len(ctx.todo)} slot(s), oldest first ({rfc3339_z(ctx.todo[0])} .. "
              f"{rfc3339_z(ctx.todo[-1])})?")
    deadline, nxt = open_run(ctx)
    try:
        verify(ctx, deadline)
        hook(ctx, "verified")
        queue = list(ctx.todo)
        while queue:
            group, queue = queue[:b.parallel], queue[b.parallel:]
            failed = run_group(ctx, group, deadline, nxt)
            if failed is not None:
                return failed
            if not queue and mode == "all":
                # --catch-up all: the slots that passed while this backfill held the CronJob
                queue = lost_meanwhile(ctx)
    except KeyboardInterrupt:
        return stopped(ctx, "interrupted", ExitCode.INTERRUPTED,
                       f"interrupted after {len(ctx.done)} of {len(ctx.todo)} slot(s): the CronJob "
                       "stays suspended", nxt)
    except WaitTimeout as e:
        return stopped(ctx, "timeout", ExitCode.TIMEOUT,
                       f"{e.message} (--timeout {human_duration(ctx.opts.timeout)}) after {len(ctx.done)} "
                       f"of {len(ctx.todo)} slot(s); the CronJob stays suspended", nxt)
    hold = end_hold(ctx)
    code = with_duplicates(ctx, ExitCode.OK)
    res = restore(ctx.cluster, RestoreOptions(cronjob=ctx.name, yes=True, expect_run_id=ctx.run_id,
                                              expect_original=ctx.original_suspend,
                                              catch_up=ctx.opts.catch_up, outcome="succeeded"), ctx.clock, ctx.reporter)
    ctx.record.update({"outcome": "succeeded", "restored_at": timestamp(ctx),
                       "prediction": res.prediction.as_dict() if res.prediction else None,
                       "catch_up": {"mode": mode, "given_up": list(res.given_up)},
                       "exit_code": int(code)})
    if ctx.suspended_mono is not None:  # how long the CronJob was held for the slots, as run-manual says
        ctx.record["suspended_seconds"] = round(ctx.clock.monotonic() - ctx.suspended_mono, 3)
    step_local(ctx, "restored")
    return RunResult(code, f"backfilled {len(ctx.done)} slot(s) of {ctx.ns}/{ctx.name}, oldest first; "
                     f"{res.message}" + (f"; {hold}" if hold else ""), ctx.record, None, [])


def backfill(cluster: Cluster, opts: BackfillOptions, clock: Clock, reporter: Reporter) -> RunResult:
    ro = opts.run or RunOptions(cronjob=opts.cronjob)
    ro.cronjob = opts.cronjob
    ctx = RunContext(cluster, ro, clock, reporter, go_on="the same backfill again")
    try:
        return masked(ctx, _run(ctx, opts))
    finally:
        end_hold(ctx)


def restore_all(cluster: Cluster, opts: RestoreOptions, run: RunOptions, clock: Clock,
                reporter: Reporter) -> RunResult | Restored:
    """``restore --catch-up all``: an interrupted run's record is taken over (its suspension and its
    original value, under a new run record, guarded by resourceVersion) and every slot that passed
    since it suspended the CronJob and has no Job runs as its own slot-named Job, oldest first, as
    backfill does; then the restore un-suspends with nothing left to catch up. Where there is nothing
    to run (no record, a record that keeps it suspended, a stale record, no lost slot), this is the
    plain restore (``--catch-up none``). Returns backfill's RunResult or restore's result."""
    from cronctl.procedure.restore import judge_record

    cj = cluster.get_cronjob(opts.cronjob)
    rec = model.read_record(cj)
    plain = replace(opts, catch_up="none")
    if rec is None:
        return restore(cluster, plain, clock, reporter)
    target, stale = judge_record(cj, rec, opts)
    try:
        since = parse_rfc3339(rec.started, what="started") if rec.started else None
    except BadInput:
        since = None
    if stale:
        reporter.warn(f"--catch-up all: the stale record {rec.run_id} is cleared as it is (--force), nothing is "
                      f"run; the slots it lost stay lost: see cronctl history, then cronctl backfill --missed")
    if since is None and not target and not stale:
        reporter.warn(f"run record {rec.run_id} has no readable start time ({rec.started!r}): the slots it lost "
                      f"cannot be told; restoring with --catch-up none (see cronctl history, then backfill)")
    lost = (lost_while_held(cj, cluster.list_jobs()[0], since, clock.now(), MAX_SLOTS)
            if since and not target and not stale else [])
    if not lost:
        return restore(cluster, plain, clock, reporter)
    reporter.step(f"--catch-up all: {len(lost)} slot(s) passed since run {rec.run_id} suspended the CronJob "
                  f"({rec.started}) and have no Job: {', '.join(rfc3339_z(t) for t in lost[:10])}"
                  + (" ..." if len(lost) > 10 else ""))
    run = replace(run, cronjob=opts.cronjob, takeover=rec.run_id, catch_up="all", yes=opts.yes,
                  interactive=opts.interactive,
                  reason=run.reason or f"restore --catch-up all of run {rec.run_id}")
    return backfill(cluster, BackfillOptions(cronjob=opts.cronjob, slots=lost, run=run), clock, reporter)


__all__ = ["BackfillOptions", "backfill", "choose_slots", "read_done", "restore_all", "MAX_PARALLEL", "MAX_SLOTS"]
