"""Slot history: one row per scheduled slot of a CronJob, with a verdict and its reason. PURE.

No I/O, no clock (``now`` is a parameter), no kubernetes import. Input: the CronJob and the
namespace's Jobs and Events as the API serves them; output: a JSON-ready dict (the contract of
``cronctl history -o json``, ``cronctl/data/history.schema.json``).

A slot is a time the schedule fires (the engine's walk, in the CronJob's zone). The Jobs that
*stand for* a slot T are: scheduled Jobs whose scheduled-timestamp annotation (or controller name
``<cronjob>-<unix minutes>``) is T, any Job with the slot's name (a slot-named manual run), manual
Jobs whose ``cronctl.dev/occurrence`` is T, and Jobs that are gone but whose ``SuccessfulCreate``
event names them. Verdicts (docs/commands/history.md):

``ran``              exactly one Job, created within ``late_after`` (10 s) of the slot;
``ran-late``         exactly one Job, created later; the reason names the cause;
``duplicate``        two or more Jobs stand for the slot;
``running``          its one Job has not finished;
``skipped-forbid``   no Job: Forbid refused it while a Job was active, and it was never made up;
``missed-deadline``  no Job: older than startingDeadlineSeconds when the controller could act;
``missed-suspended`` no Job: the CronJob was suspended;
``missed-too-many``  no Job: the controller found more than 100 missed times (TooManyMissedTimes)
                     and started only the latest;
``missed``           no Job and nothing in the evidence says why (the reason says what it suggests);
``dst-skipped``      a wall time the schedule names that the clock change removed (never runs);
``dst-doubled``      the second run of a wall time the clock change repeated, and it ran;
``evidence-gone``    no Job and no event, but history limits or a TTL remove Jobs of that age:
                     it probably ran, the evidence cannot show it;
``due``              the next slot, or one that passed moments ago without a Job yet.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Iterable, Mapping

from cronctl import model
from cronctl.events import EventRecord, GoneJob, events_for, gone_jobs
# the verdicts and their families live with the row types; importable from here as before
from cronctl.slotrows import DUPLICATE as DUPLICATE
from cronctl.slotrows import LOST as LOST
from cronctl.slotrows import MADE, OUTCOMES, History, JobDetail, ManualRun, SlotRow, Verdict, slot_outcome
from cronctl.slotrows import OPEN as OPEN
from cronctl.slotrows import VERDICTS as VERDICTS
from cronctl.timeutil import UTC, human_duration, rfc3339_in_zone, rfc3339_z, rfc3339_z_opt

Obj = dict[str, Any]

MAX_SINCE = timedelta(days=7)
#: the verdicts of a slot whose Job ran once, which a DST fold may turn into dst-doubled
_ONCE = MADE - DUPLICATE
#: how close a catch-up Job's creation must be to the end of a cause (a suspend write, the end of a
#: cronctl run, a TooManyMissedTimes event) to be taken as caused by it (controller syncs ~10 s)
_NEAR = timedelta(seconds=60)


def last_success_source(cronjob: Obj, owned: Iterable[Obj], recs: list[model.JobRecord],
                        gone: dict[str, GoneJob]) -> Obj | None:
    """Which Job set ``status.lastSuccessfulTime``, and the last scheduled success beside it.

    controller: lastSuccessfulTime is the latest completionTime of any succeeded Job the CronJob
    owns, a manual one (kubectl create job --from, cronctl run-manual) included. When it is a
    manual Job's, an alert on lastSuccessfulTime does not see that the schedule has not succeeded
    since: ``note`` says so. None when lastSuccessfulTime is unset.
    """
    t = model.when((cronjob.get("status") or {}).get("lastSuccessfulTime"))
    if t is None:
        return None
    setters = sorted((r for r in recs if r.outcome == "Complete" and r.completed == t),
                     key=lambda r: (r.origin != "scheduled", r.name))  # a scheduled one, if both
    setter = setters[0] if setters else None
    done = [r for r in recs if r.origin == "scheduled" and r.outcome == "Complete" and r.completed is not None]
    last = max(done, key=lambda r: (r.completed or t, r.name)) if done else None
    seen = [g for g in gone.values() if g.origin == "scheduled" and g.outcome == "Complete" and g.finished]
    last_gone = max(seen, key=lambda g: (g.finished or t, g.name)) if seen else None
    note = None
    if setter is not None and setter.origin == "manual":
        ann = next((model.annotations(j) for j in owned if model.name_of(j) == setter.name), {})
        how = (f"cronctl run-manual {ann[model.ANN_RUN_ID]} of {ann.get(model.ANN_OPERATOR, '?')}"
               if model.ANN_RUN_ID in ann else "kubectl create job --from, or another client")
        if last is not None:
            since = f"the last scheduled success was {rfc3339_z_opt(last.completed)} ({last.name})"
        elif last_gone is not None:
            since = (f"no scheduled Job that succeeded is kept; the latest one the events name, {last_gone.name}, "
                     f"was seen complete at {rfc3339_z_opt(last_gone.finished)}")
        else:
            since = "no scheduled Job that succeeded is kept or named by an event"
        note = (f"lastSuccessfulTime {rfc3339_z(t)} comes from the manual Job {setter.name} ({how}), not from a scheduled "
                f"run; {since}. An alert on lastSuccessfulTime is fooled: it does not show whether the schedule "
                "itself still succeeds")
    return {
        "time": rfc3339_z_opt(t), "job": setter.name if setter else None, "origin": setter.origin if setter else None,
        "from_manual": bool(setter is not None and setter.origin == "manual"),
        "last_scheduled_success": rfc3339_z_opt(last.completed) if last else None,
        "last_scheduled_success_job": last.name if last else None,
        "note": note,
    }


def suspend_set_at(cronjob: Obj) -> tuple[datetime | None, str | None]:
    """When ``spec.suspend`` was last written, from managedFields (the latest entry owning it)."""
    writes = model.suspend_writes(cronjob)
    return writes[-1] if writes else (None, None)


def history_horizon(recs: list[model.JobRecord], limits: model.HistoryLimits, ttl: int | None,
                    now: datetime) -> datetime | None:
    """Before which time a missing Job may have been deleted rather than never created.

    controller: history cleanup deletes the oldest finished Jobs (by start time) beyond
    successfulJobsHistoryLimit (default 3) / failedJobsHistoryLimit (default 1), per outcome
    (docs/SEMANTICS.md §4.1). When a limit is reached, Jobs of that outcome older than the oldest one
    kept may be gone; a limit of 0 or a ttlSecondsAfterFinished can remove any finished Job.
    """
    if ttl is not None:
        return now
    horizon: datetime | None = None
    for outcome in ("Complete", "Failed"):
        lim = limits.of(outcome)
        kept = [r.scheduled_for or r.created or now for r in recs if r.outcome == outcome]
        if lim <= 0:
            return now
        if len(kept) >= lim:
            oldest = min(kept)
            horizon = oldest if horizon is None else max(horizon, oldest)
    return horizon


# --- the slot history ---------------------------------------------------------------------

@dataclass(frozen=True)
class Options:
    now: datetime
    since: datetime | None = None  # None: as far back as the evidence reaches, at most 7 days
    late_after: timedelta = timedelta(seconds=10)
    max_slots: int = 20_000
    #: exact suspend spans the ledger recorded, by CronJob uid: (start, end or None, who)
    suspensions: Mapping[str, list[tuple[datetime, datetime | None, str]]] = field(default_factory=dict)


#: the last steps of a run whose Job was created (a run stopped before it made none)
_JOB_MADE_STEPS = frozenset({"created", "waiting", "succeeded", "failed", "timeout"})


@dataclass
class _Stand:
    """A Job that stands for a slot (``exists`` False: known only from its SuccessfulCreate event)."""

    name: str
    origin: str  # scheduled | manual
    how: str  # scheduled | slot-named | occurrence | event | cronctl-runs
    created: datetime | None
    started: datetime | None = None
    completed: datetime | None = None
    outcome: str | None = None
    running: bool = False
    exists: bool = True
    operator: str | None = None
    retry_of: str | None = None  # run-manual --retry: the failed Job this one ran again
    failure_reason: str | None = None
    known_from: list[str] = field(default_factory=list)  # the events that name a gone Job
    removed_by: str | None = None  # a gone Job: what removed it (REMOVERS) and in words
    removed: str | None = None
    source: str = "cluster"  # cluster | ledger (the Job is known only from the ledger)


@dataclass
class _Ctx:
    name: str
    zone: str
    policy: str
    deadline: int | None
    now: datetime
    late_after: timedelta
    recs: list[model.JobRecord]
    by_name: dict[str, Obj]
    blocked: list[tuple[datetime, datetime]]  # JobAlreadyActive event spans
    too_many: list[datetime]  # TooManyMissedTimes event times
    suspended_spans: list[tuple[datetime, datetime | None, str]]  # start, end (None: ongoing), who
    suspend_writes: list[tuple[datetime, str]]  # managedFields writes of spec.suspend (time, manager)
    cronctl_runs: list[tuple[datetime, datetime | None, str]]  # manual Jobs of cronctl runs
    deleted_before: datetime | None
    last_schedule: datetime | None
    notes: list[str] = field(default_factory=list)
    # the current suspension's start when only bounded (no managedFields time, record or pause): the
    # controller's last Job; a slot after it may have been suspended, or not yet
    suspended_after: datetime | None = None
    resumes: list[tuple[datetime, str]] = field(default_factory=list)  # a finished pause's resume (time, words)


def _minutes_name(cj: str, t: datetime) -> str:
    secs = int(t.timestamp())
    return f"{cj}-{secs // 60}"


@dataclass
class _Evidence:
    """What one CronJob's history is judged from: its own Jobs (records and objects by name), the
    events that belong to it, the Jobs they name that are gone, cronctl's finished runs, the writes of
    spec.suspend and a pause (each read once: the window and the causes both use them)."""

    cronjob: Obj
    view: model.CronJobView
    now: datetime
    opts: Options
    recs: list[model.JobRecord]
    by_name: dict[str, Obj]
    evs: list[EventRecord]
    gone: dict[str, GoneJob]
    past: list[model.PastRun]
    owned: list[Obj]
    writes: list[tuple[datetime, str]]  # managedFields writes of spec.suspend (time, manager)
    pause: model.Pause | None
    pauses: list[model.PastPause]  # the finished pauses (cronctl.dev/pauses)


@dataclass
class Prepared:
    """One CronJob read for judging, not judged yet (:func:`prepare`): its evidence and where its window
    starts, without a slot. A fleet's page needs every window's start before it draws one row; the
    slots (a week of ``*/5`` is 2,016 a CronJob) are made one CronJob at a time by :func:`judge`."""

    out: History
    since: datetime | None  # the window's start (None: the CronJob cannot be judged)
    sched: Any = None
    ev: _Evidence | None = None
    limited: str = ""
    first_evidence: datetime | None = None


def slot_history(cronjob: Obj, jobs: Iterable[Obj], events: Iterable[Obj], opts: Options) -> History:
    """The slot history of one CronJob at ``opts.now`` (``jobs``/``events`` may hold other objects
    of the namespace: ownership and involvedObject decide what belongs to it).

    The steps: the evidence (:func:`_evidence`), the window (:func:`_window`), both in
    :func:`prepare`; then in :func:`judge` the slots (:func:`_slot_times`), who stands for each slot
    (:func:`_stands`), the causes the evidence holds (:func:`_context`), the verdicts
    (:func:`_judged_rows`) and the manual runs that stand for no slot (:func:`_manual_runs`)."""
    return judge(prepare(cronjob, jobs, events, opts))


def prepare(cronjob: Obj, jobs: Iterable[Obj], events: Iterable[Obj], opts: Options) -> Prepared:
    """The first half of :func:`slot_history`: the CronJob's evidence and its window's start."""
    from cronctl.errors import CronctlError
    from cronctl.schedule import parse

    now = opts.now.astimezone(UTC)
    view = model.cronjob_view(cronjob)
    out: History = {
        "namespace": view.namespace, "name": view.name, "schedule": view.schedule, "time_zone": view.time_zone,
        "zone": view.time_zone or "UTC", "concurrency_policy": view.policy,
        "starting_deadline_seconds": view.starting_deadline, "suspended": view.suspended,
        "last_schedule_time": rfc3339_z_opt(view.last_schedule), "error": view.problem,
        "window": None, "slots": [], "manual_runs": [], "counts": {v: 0 for v in VERDICTS},
        "outcome_counts": {o: 0 for o in OUTCOMES},
        "controller_now": None, "notes": [],
    }
    if view.problem is not None:  # a field of the wrong type: the controller model says nothing
        return Prepared(out, None)
    try:
        sched = parse(view.schedule, view.time_zone)
    except CronctlError as e:
        out["error"] = e.message
        return Prepared(out, None)
    out["zone"] = sched.zone
    ev = _evidence(cronjob, view, jobs, events, opts, now)
    start, limited, first_evidence = _window(ev)
    return Prepared(out, start, sched, ev, limited, first_evidence)


def judge(p: Prepared) -> History:
    """The second half of :func:`slot_history`: every slot of the prepared window judged. ``p`` is
    used up (its history is the one returned)."""
    from cronctl.errors import CronctlError

    out, sched, ev, start = p.out, p.sched, p.ev, p.since
    if ev is None or start is None:
        return out
    view, opts, now, cronjob = ev.view, ev.opts, ev.now, ev.cronjob
    zone, limited, first_evidence = sched.zone, p.limited, p.first_evidence
    times, cut = _slot_times(sched, start, now, opts.max_slots)
    if cut:
        out["notes"].append(f"only the latest {opts.max_slots} slots are shown (use --since)")
    upcoming = sched.runs(now, 1)
    out["window"] = {"since": rfc3339_z(start), "until": rfc3339_z(now), "limited_by": limited,
                     "evidence_from": rfc3339_z_opt(first_evidence)}
    stands, standing_names = _stands(ev, times)
    ctx = _context(ev, zone)
    try:
        d = view.decide(now)
    except CronctlError as e:  # e.g. a negative startingDeadlineSeconds: this CronJob only, not the whole list
        out["error"] = e.message
        return out
    out["controller_now"] = {"decision": "suspended" if view.suspended else d.decision,
                             "most_recent": rfc3339_z_opt(d.most_recent), "job_name": d.job_name,
                             "waiting_for": list(d.waiting_for)}
    manual = [r for r in ev.recs if r.origin == "manual" and r.name not in standing_names]
    rows = _judged_rows(times, stands, ctx, ev, manual, standing_names)
    _explain_gaps(rows, times, stands, ctx, set(d.deadline_dropped), d)
    _dst_rows(rows, sched, start, times, zone)
    for t in upcoming:
        rows.append(_row(t, zone, [], "due", f"the next slot, in {human_duration(t - now)}"
                         + (" (but the CronJob is suspended: it will not run)" if view.suspended else "")))
    rows.sort(key=lambda r: (r["slot"], r["verdict"] != "dst-skipped"))
    out["slots"] = rows
    for row in rows:
        out["counts"][row["verdict"]] += 1
        out["outcome_counts"][row["outcome"]] += 1
    out["manual_runs"] = _manual_runs(ev, manual, zone)
    out["notes"].extend(ctx.notes)
    source = last_success_source(cronjob, ev.owned, ev.recs, ev.gone)
    if source is not None and source["note"]:
        out["notes"].append(source["note"])
    return out


def _evidence(cronjob: Obj, view: model.CronJobView, jobs: Iterable[Obj], events: Iterable[Obj], opts: Options,
              now: datetime) -> _Evidence:
    owned = [j for j in jobs if model.owned_by(j, cronjob)]
    recs = sorted((model.job_record(j, view.name, now) for j in owned), key=lambda r: (r.created or now, r.name))
    by_name = {model.name_of(j): j for j in owned}
    evs = events_for(events, cronjob, {r.uid for r in recs}, set(), {r.name for r in recs}, set())
    gone = gone_jobs(evs, cronjob, set(by_name), recs)
    past = model.read_runs(cronjob)  # cronctl's finished runs: they outlive their Jobs and events
    return _Evidence(cronjob=cronjob, view=view, now=now, opts=opts, recs=recs, by_name=by_name, evs=evs, gone=gone,
                     past=past, owned=owned, writes=model.suspend_writes(cronjob), pause=model.read_pause(cronjob),
                     pauses=model.read_pauses(cronjob))


def _window(ev: _Evidence) -> tuple[datetime, str, datetime | None]:
    """Where the judged window starts, what limited it (--since, evidence, creation, 7 days) and the
    earliest evidence (None: none at all)."""
    view, opts, now = ev.view, ev.opts, ev.now
    created = view.created or now
    # (a manual run for an earlier slot stands for it: the slot is evidence too, or the window starts after it)
    evidence = [t for r in ev.recs for t in (r.scheduled_for, r.created, r.claims) if t is not None]
    evidence += [t for e in ev.evs for t in (model.when(e["first"]),) if t is not None]
    # a gone Job the controller created stands for the slot in its name, before its events
    evidence += [g.slot for g in ev.gone.values() if g.slot is not None]
    evidence += [t for t in (view.last_schedule,) if t is not None]
    # writes of spec.suspend and cronctl's own records say when a suspension began or ended
    evidence += [t for t, _m in ev.writes]
    evidence += [sp[0] for sp in (opts.suspensions.get(view.uid, []) if view.uid else [])]
    evidence += [t for t in (ev.pause.at if ev.pause else None,) if t is not None]
    evidence += [h[0] for pr in ev.past for h in (pr.held,) if h is not None]
    evidence += [h[0] for pp in ev.pauses for h in (pp.held,) if h is not None]
    evidence += [t for pr in ev.past for t in (model.when(pr.occurrence),) if t is not None]
    if opts.since is not None:
        start, limited = max(opts.since, created - timedelta(seconds=1)), "--since"
    else:
        start, limited = now - MAX_SINCE, "7 days"  # no evidence at all: the whole week is judged
        if evidence and min(evidence) - timedelta(seconds=1) > start:
            start, limited = min(evidence) - timedelta(seconds=1), "evidence"
        if start < now - MAX_SINCE:
            start, limited = now - MAX_SINCE, "7 days"
        if start < created:
            start, limited = created, "creation"
    return start, limited, min(evidence) if evidence else None


def _slot_times(sched: Any, start: datetime, now: datetime, max_slots: int) -> tuple[list[datetime], bool]:
    """The slots in (start, now], at most the latest ``max_slots`` (True: some were cut).

    A schedule names at most one slot a minute, so the last max_slots minutes hold at most
    max_slots slots: walk back from now in growing spans until max_slots are found or the window
    starts (walking max_slots ahead of the start, as before, cost 60 ms a CronJob, and for a
    window with more slots showed its earliest ones under "the latest")."""
    span = timedelta(minutes=max_slots)
    while True:
        lo = max(start, now - span)
        times: list[datetime] = sched.runs_between(lo, now)
        if len(times) >= max_slots or lo == start:
            break
        span *= 4
    if len(times) > max_slots or lo > start:
        return times[-max_slots:], True
    return times, False


def _stands(ev: _Evidence, times: list[datetime]) -> tuple[dict[datetime, dict[str, _Stand]], set[str]]:
    """Who stands for which slot (by slot, by Job name), and the names of the Jobs that stand for one."""
    stands: dict[datetime, dict[str, _Stand]] = {}
    name_to_slot = {_minutes_name(ev.view.name, t): t for t in times}

    def add(t: datetime, s: _Stand) -> None:
        stands.setdefault(t, {}).setdefault(s.name, s)

    standing_names: set[str] = set()
    for r in ev.recs:
        j = ev.by_name.get(r.name) or {}
        ann = model.annotations(j)
        base = dict(name=r.name, origin=r.origin, created=r.created, started=r.started, completed=r.completed,
                    outcome=r.outcome, running=r.running, operator=ann.get(model.ANN_OPERATOR),
                    retry_of=ann.get(model.ANN_RETRY_OF), failure_reason=r.failure_reason,
                    source="ledger" if model.ANN_LEDGER in ann else "cluster")
        if r.origin == "scheduled" and r.scheduled_for is not None:
            add(r.scheduled_for, _Stand(how="scheduled", **base))  # type: ignore[arg-type]
            standing_names.add(r.name)
        if r.name in name_to_slot:
            add(name_to_slot[r.name], _Stand(how="slot-named" if r.origin == "manual" else "scheduled",
                                             **base))  # type: ignore[arg-type]
            standing_names.add(r.name)
        if r.claims is not None:
            add(r.claims, _Stand(how="occurrence", **base))  # type: ignore[arg-type]
            standing_names.add(r.name)
    # Jobs that are gone: the events still name them (the controller's name gives the slot)
    for g in ev.gone.values():
        if g.name in name_to_slot:
            add(name_to_slot[g.name], _Stand(name=g.name, origin=g.origin, how="event", created=g.created,
                                             outcome=g.outcome, exists=False, failure_reason=g.failure_reason,
                                             known_from=list(g.evidence), removed_by=g.removed_by,
                                             removed=g.removed))
    # Jobs of cronctl runs that are gone: the run's entry in cronctl.dev/runs still names them
    slot_set = set(times)
    for pr in ev.past:
        at = model.when(pr.occurrence)
        if at is None or at not in slot_set or not pr.job_name or pr.job_name in ev.by_name \
                or pr.last_step not in _JOB_MADE_STEPS:
            continue
        add(at, _Stand(name=pr.job_name, origin="manual", how="cronctl-runs", created=None, exists=False,
                       outcome={"succeeded": "Complete", "failed": "Failed"}.get(pr.last_step),
                       operator=pr.operator or None, known_from=[f"cronctl run {pr.run_id} in {model.ANN_RUNS}"],
                       removed="by the history limit or a TTL (the controller counts the manual Job)"))
    return stands, standing_names


def _context(ev: _Evidence, zone: str) -> _Ctx:
    """The causes the evidence holds, for the judge: Forbid's refusals and TooManyMissedTimes (the
    events), the suspensions (the ledger's spans, a pause, a run record, the writes of spec.suspend)
    and cronctl's runs, the history horizon."""
    view, now, recs = ev.view, ev.now, ev.recs
    created = view.created or now
    blocked = [(f, l) for e in ev.evs if e["reason"] == "JobAlreadyActive"
               for f, l in ((model.when(e["first"]), model.when(e["last"])),) if f is not None and l is not None]
    too_many = [t for e in ev.evs if e["reason"] == "TooManyMissedTimes" for t in (model.when(e["last"]),) if t]
    recorded = list(ev.opts.suspensions.get(view.uid, [])) if view.uid else []
    # the finished pauses first: they say who paused it and why (a ledger span of the same suspension
    # only names cronctl, the field manager); then the ledger's spans, which are exact: the ended ones
    # always count, the open one explains the current suspension
    held = [(h[0], h[1], pp.words()) for pp in ev.pauses for h in (pp.held,) if h is not None]
    spans: list[tuple[datetime, datetime | None, str]] = held + [sp for sp in recorded if sp[1] is not None]
    open_recorded = [sp for sp in recorded if sp[1] is None]
    suspended_after: datetime | None = None
    if view.suspended:
        at, manager = suspend_set_at(ev.cronjob)
        record = model.read_record(ev.cronjob)
        rec_start = model.when(record.started) if record is not None else None
        paused = ev.pause
        if paused is not None:
            spans.append((paused.at or at or created, None, paused.words()))
        if record is not None and rec_start is not None:
            spans.append((rec_start, None, f"cronctl run-manual {record.run_id} of {record.operator}"))
        elif paused is None and open_recorded:
            spans.append(open_recorded[-1])
        elif paused is None:
            spans.append(_unknown_suspend_span(ev.cronjob, recs, at, manager, created))
            suspended_after = spans[-1][0] if at is None else None
    runs_ = []
    for r in recs:
        ann = model.annotations(ev.by_name.get(r.name) or {})
        if model.ANN_RUN_ID in ann:
            begin = model.when(ann.get(model.ANN_STARTED)) or (r.created or now) - _NEAR
            runs_.append((begin, r.completed if not r.running else None,
                          f"cronctl run-manual {ann.get(model.ANN_RUN_ID)} of {ann.get(model.ANN_OPERATOR, '?')} "
                          f"(manual Job {r.name})"))
    # the time each finished cronctl run held the CronJob suspended (exact, from cronctl.dev/runs) first
    runs_ = [(h[0], h[1], f"cronctl run {pr.run_id} of {pr.operator or 'unknown'}, kept in {model.ANN_RUNS}")
             for pr in ev.past for h in (pr.held,) if h is not None] + runs_
    return _Ctx(name=view.name, zone=zone, policy=view.policy, deadline=view.starting_deadline, now=now,
                late_after=ev.opts.late_after, recs=recs, by_name=ev.by_name, blocked=blocked, too_many=too_many,
                suspended_spans=spans, suspend_writes=ev.writes, cronctl_runs=runs_,
                resumes=[(e, f"cronctl resume of the pause ({w})") for _s, e, w in held if e is not None],
                deleted_before=history_horizon(recs, view.history, view.job_ttl, now),
                last_schedule=view.last_schedule, suspended_after=suspended_after)


def _judged_rows(times: list[datetime], stands: dict[datetime, dict[str, _Stand]], ctx: _Ctx, ev: _Evidence,
                 manual: list[model.JobRecord], standing_names: set[str]) -> list[SlotRow]:
    """A row for every slot of ``times`` with its verdict, and the manual Jobs that ran beside it."""
    rows: list[SlotRow] = []
    # the manual Jobs beside each standing Job, by one sweep (model.beside: a pile-up is not pairs)
    beside_standing = model.beside([r for r in ev.recs if r.name in standing_names], manual)
    named = _named_duplicates(ev.evs)
    for t in times:
        row = _judge(t, list(stands.get(t, {}).values()), ctx)
        for s in stands.get(t, {}).values():
            if s.name in named:
                run_id, words = named[s.name]
                row["reason"] = "; ".join(x for x in (row["reason"], f"DUPLICATE: made during the hold of cronctl run "
                                                      f"{run_id}, beside its Job ({words})") if x)
        found = [beside_standing[s.name] for s in stands.get(t, {}).values() if s.name in beside_standing]
        beside = sorted({n for b in found for n in b.names})[:model.MAX_OVERLAP_NAMES]
        total = max((b.total for b in found), default=0)
        if beside:
            more = f" and {total - len(beside)} more" if total > len(beside) else ""
            row["manual_beside"] = beside
            row["manual_beside_total"] = max(total, len(beside))
            row["reason"] = "; ".join(x for x in (row["reason"], f"manual Job {', '.join(beside)}{more} ran at the same "
                                      "time" + (" (Forbid does not see manual Jobs)" if ctx.policy == "Forbid" else ""))
                                      if x)
        rows.append(row)
    return rows


#: the hold guard's Event naming a Job beside its run (cronctl/procedure/guard.py ``_tell``)
_DUPLICATE_EVENT = re.compile(r"^cronctl run (\S+): Job (\S+) (.*)$", re.S)


def _named_duplicates(evs: list[EventRecord]) -> dict[str, tuple[str, str]]:
    """Job name -> (run id, the guard's words) for each Job a cronctl run's hold guard named as made
    beside it (a ``CronctlDuplicate`` Event; kept by the ledger after the API server drops it)."""
    out: dict[str, tuple[str, str]] = {}
    for e in evs:
        if e["reason"] != "CronctlDuplicate":
            continue
        m = _DUPLICATE_EVENT.match(e["message"])
        if m:
            out.setdefault(m.group(2), (m.group(1), m.group(3).strip()))
    return out


def _manual_runs(ev: _Evidence, manual: list[model.JobRecord], zone: str) -> list[ManualRun]:
    """The manual Jobs that stand for no slot, each with the scheduled Jobs it ran beside."""
    beside_scheduled = model.beside(manual, [o for o in ev.recs if o.origin == "scheduled"])
    out: list[ManualRun] = []
    for r in manual:
        ann = model.annotations(ev.by_name.get(r.name) or {})
        b = beside_scheduled.get(r.name, model.Beside(names=(), total=0))
        out.append({
            "job": r.name, "created": rfc3339_z_opt(r.created),
            "created_local": rfc3339_in_zone(r.created, zone) if r.created is not None else None,
            "started": rfc3339_z_opt(r.started), "completed": rfc3339_z_opt(r.completed),
            "outcome": r.outcome or ("running" if r.running else None),
            "duration_seconds": _duration(r.started or r.created, r.completed, r.running, ev.now),
            "operator": ann.get(model.ANN_OPERATOR), "reason": ann.get(model.ANN_REASON),
            "run_id": ann.get(model.ANN_RUN_ID), "overlaps": list(b.names), "overlaps_total": b.total,
        })
    return out


def _unknown_suspend_span(cronjob: Obj, recs: list[model.JobRecord], at: datetime | None, manager: str | None,
                          created: datetime) -> tuple[datetime, None, str]:
    """The current suspension as a span when no record or pause explains it: from the last write of
    spec.suspend when managedFields has its time; else it began after the controller's last Job (the
    controller creates none while suspended), so the slots before that Job are judged on their own
    evidence rather than all called missed-suspended."""
    if manager is None:  # managedFields names who owns spec.suspend even when it keeps no time
        owners = [m for _t, m in model.suspend_owners(cronjob)]
        manager = owners[-1] if owners else None
    who = f"spec.suspend set by {manager or 'unknown'}"
    if at is not None:
        return (at, None, who)
    last = max((r for r in recs if r.origin == "scheduled" and r.created is not None),
               key=lambda r: (r.created, r.name), default=None)
    if last is None or last.created is None or last.created <= created:
        return (created, None, who + " (when is not recorded)")
    return (last.created, None, f"{who} (when is not recorded; after {rfc3339_z(last.created)}, when the controller "
                                f"created {last.name})")


def _duration(start: datetime | None, end: datetime | None, running: bool, now: datetime) -> int | None:
    """Whole seconds of :func:`cronctl.model.run_time` (the rule status and the bundle use too)."""
    d = model.run_time(start, end, running=running, now=now)
    return None if d is None else int(d.total_seconds())


def _row(t: datetime, zone: str, st: list[_Stand], verdict: Verdict, reason: str) -> SlotRow:
    first = min(st, key=lambda s: s.created or t) if st else None
    began = (first.started or first.created) if first else None
    details: list[JobDetail] = [
        {"name": s.name, "origin": s.origin, "stands_by": s.how, "exists": s.exists,
         "created": rfc3339_z_opt(s.created), "started": rfc3339_z_opt(s.started),
         "completed": rfc3339_z_opt(s.completed),
         "outcome": s.outcome or ("running" if s.running else None), "operator": s.operator,
         "failure_reason": s.failure_reason, "known_from": s.known_from,
         "removed_by": s.removed_by, "removed": s.removed, "source": s.source}
        for s in sorted(st, key=lambda s: (s.created or t, s.name))]
    outcome, failure = slot_outcome(details)
    return {
        "slot": rfc3339_z(t), "slot_local": rfc3339_in_zone(t, zone), "verdict": verdict,
        "outcome": outcome, "failure_reason": failure,
        "jobs": [d["name"] for d in details],
        "job_details": details,
        "start_delay_seconds": int((began - t).total_seconds()) if began is not None else None,
        "duration_seconds": (_duration(began, first.completed, first.running, t)
                             if first and not first.running else None),
        "reason": reason,
        "manual_beside": [],
        "manual_beside_total": 0,
    }


def _active_at(ctx: _Ctx, t: datetime) -> list[model.JobRecord]:
    """The controller's own Jobs (those Forbid looks at) that were running at ``t``."""
    return [r for r in ctx.recs if r.origin == "scheduled" and r.start <= t < r.end]


def _near_blocked(ctx: _Ctx, t: datetime) -> bool:
    slack = timedelta(seconds=90)
    return any(f - slack <= t <= l + slack for f, l in ctx.blocked)


def _suspension_at(ctx: _Ctx, t: datetime) -> str | None:
    for s, e, who in ctx.suspended_spans + ctx.cronctl_runs:
        if s <= t and (e is None or t <= e + timedelta(seconds=30)):
            return who
    return None


def _judge(t: datetime, st: list[_Stand], ctx: _Ctx) -> SlotRow:
    # failed attempts that cronctl run-manual --retry ran again are attempts, not a second run
    retried = {s.retry_of for s in st if s.retry_of}
    attempts = [s for s in st if s.name in retried and s.outcome == "Failed"]
    if attempts and len(st) - len(attempts) == 1:
        last = _judge(t, [s for s in st if s not in attempts], ctx)
        names = ", ".join(s.name for s in sorted(attempts, key=lambda s: (s.created or t, s.name)))
        return _row(t, ctx.zone, st, last["verdict"], f"{last['reason']}; after {len(attempts)} failed "
                    f"attempt(s) run again with cronctl run-manual --retry: {names}")
    n = len(st)
    if n >= 2:
        what = "; ".join(f"{s.name} ({s.origin}{'' if s.how == s.origin else ', ' + s.how}"
                         f"{'' if s.exists else ', deleted since'})"
                         for s in sorted(st, key=lambda s: (s.created or t, s.name)))
        return _row(t, ctx.zone, st, "duplicate", f"{n} Jobs stand for this slot: {what}")
    if n == 1:
        s = st[0]
        gone = "" if s.exists else _gone_words(s)
        if s.running:
            late = (f"; {_late_cause(t, s, ctx)}" if s.origin == "scheduled" and s.created
                    and s.created - t > ctx.late_after else "")
            return _row(t, ctx.zone, st, "running", f"still running{late}" + gone)
        if s.origin == "manual":
            who = f" by {s.operator}" if s.operator else ""
            return _row(t, ctx.zone, st, "ran", f"run manually{who} as {s.name} ({s.how})"
                        + (f", {_outcome_words(s)}" if s.outcome else "") + gone)
        delay = (s.created - t) if s.created else timedelta(0)
        outcome = f" ({_outcome_words(s)})" if s.outcome and s.outcome != "Complete" else ""
        if delay <= ctx.late_after:
            return _row(t, ctx.zone, st, "ran", (outcome.strip(" ()") + gone).strip("; "))
        return _row(t, ctx.zone, st, "ran-late", _late_cause(t, s, ctx) + outcome + gone)
    # no Job
    held = _suspension_at(ctx, t)
    blockers = _active_at(ctx, t)
    after = ctx.suspended_after
    inferred = held is not None and after is not None and t > after and any(
        s == after and w == held for s, _e, w in ctx.suspended_spans)
    if inferred and ctx.policy == "Forbid" and blockers:
        # two causes may apply; the active Job is certain, the suspension's start is not: say both
        b = blockers[0]
        active = "still running" if b.running else f"until {rfc3339_z(b.end)}"
        return _row(t, ctx.zone, st, "skipped-forbid",
                    f"two causes, either enough: {b.name} was active ({active}), "
                    f"and Forbid refuses a new Job beside it; or the CronJob was suspended by then ({held}); the "
                    "evidence does not say which came first")
    if held is not None:  # however recent: a suspended CronJob creates nothing
        return _row(t, ctx.zone, st, "missed-suspended", f"suspended ({held})")
    if ctx.now - t < ctx.late_after and (ctx.last_schedule is None or t > ctx.last_schedule):
        return _row(t, ctx.zone, st, "due", "the slot passed moments ago; the controller may still create its Job")
    if ctx.policy == "Forbid" and (blockers or _near_blocked(ctx, t)):
        if blockers:
            b = blockers[0]
            end = "still running" if b.running else f"until {rfc3339_z(b.end)}"
            why = (f"refused while {b.name} was active ({end}; Normal JobAlreadyActive) and never made up"
                   + (": a newer slot had come when it ended" if not b.running else ""))
        else:
            why = "refused while a prior Job was active (JobAlreadyActive events at this time) and never made up"
        return _row(t, ctx.zone, st, "skipped-forbid", why)
    if ctx.deleted_before is not None and t < ctx.deleted_before and (
            ctx.last_schedule is None or ctx.last_schedule >= t):
        return _row(t, ctx.zone, st, "evidence-gone",
                    "no Job and no event: successfulJobsHistoryLimit/failedJobsHistoryLimit or a TTL remove Jobs "
                    "this old, and the controller's events expire after an hour; it probably ran")
    return _row(t, ctx.zone, st, "missed", "")  # the gap pass below says why


def _outcome_words(s: _Stand) -> str:
    return f"{s.outcome}: {s.failure_reason}" if s.outcome == "Failed" and s.failure_reason else str(s.outcome)


def _gone_words(s: _Stand) -> str:
    """What the evidence says about a Job that stands for a slot but is gone."""
    when = "" if s.created is not None else "; when it was created is not known"
    return (f"; the Job was deleted since: {s.removed or 'by whom is not known'}; it ran, as "
            f"{', '.join(s.known_from) or 'its events'} show{when}")


def _late_cause(t: datetime, s: _Stand, ctx: _Ctx) -> str:
    """"created 5m after the slot: CAUSE" for a Job that stands for slot ``t`` but came late."""
    return f"created {human_duration((s.created or t) - t)} after the slot: {_why_late(t, s, ctx)}"


def _why_late(t: datetime, s: _Stand, ctx: _Ctx) -> str:
    """Why the controller created ``s`` late for ``t``: Forbid waiting, an un-suspend's or a restore's
    catch-up, too many missed times, or what the evidence cannot tell apart."""
    c = s.created or t
    prior = [r for r in ctx.recs if r.origin == "scheduled" and r.name != s.name and r.start <= t < r.end + _NEAR
             and (r.completed is None or r.completed <= c + timedelta(seconds=5))]
    for w, who in ctx.resumes:
        # first: created at a pause's resume, it was held by the pause (whatever ran before the slot)
        if abs(c - w) <= _NEAR and any(s <= t <= e for s, e, _w in ctx.suspended_spans if e == w):
            return f"the catch-up the controller starts when the CronJob is un-suspended: {who}"
    if ctx.policy == "Forbid" and prior:
        return f"Forbid waited for {prior[0].name} (active until {rfc3339_z(prior[0].end)})"
    for w, manager in ctx.suspend_writes:
        if abs(c - w) <= _NEAR:
            return f"the catch-up the controller starts when the CronJob is un-suspended ({manager} at {rfc3339_z(w)})"
    for b, e, who in ctx.cronctl_runs:
        if e is not None and abs(c - e) <= _NEAR * 2:
            return f"the catch-up the controller starts when {who} restored the CronJob"
    for x in ctx.too_many:
        if abs(c - x) <= _NEAR:
            return "the controller found more than 100 missed times (TooManyMissedTimes) and ran the latest"
    return ("the controller was down or behind, or the CronJob was suspended and un-suspended "
            "(the evidence cannot tell which)")


def _explain_gaps(rows: list[SlotRow], times: list[datetime], stands: dict[datetime, dict[str, _Stand]], ctx: _Ctx,
                  dropped: set[datetime], d: Any) -> None:
    """Give the generic ``missed`` rows their cause: the run of missed slots that ends with a late
    catch-up (the controller starts only the latest missed slot), or the slots after
    lastScheduleTime that the controller has not acted on yet (its decision now says which).
    ``rows[k]`` is the row of ``times[k]``; the Jobs that stand for each time are in ``stands``."""
    i = 0
    while i < len(rows):
        if rows[i]["verdict"] != "missed":
            i += 1
            continue
        j = i
        while j < len(rows) and rows[j]["verdict"] == "missed":
            j += 1
        nxt_t = times[j] if j < len(rows) else None
        first = (min(stands[nxt_t].values(), key=lambda s: (s.created or nxt_t, s.name))
                 if nxt_t is not None and stands.get(nxt_t) else None)
        for k in range(i, j):
            t = times[k]
            verdict, reason = _gap_cause(t, nxt_t, first, ctx, dropped, d)
            if ctx.last_schedule is not None and t == ctx.last_schedule:
                reason += ("; status.lastScheduleTime was set to this slot without a Job (cronctl --catch-up "
                           "none, or by hand): the controller counts it as done")
            rows[k]["verdict"], rows[k]["reason"] = verdict, reason
        i = j


def _gap_cause(t: datetime, nxt_t: datetime | None, first: _Stand | None, ctx: _Ctx, dropped: set[datetime],
               d: Any) -> tuple[Verdict, str]:
    """The cause of missed slot ``t``; ``nxt_t`` is the first slot after the gap, ``first`` the first Job
    that stands for it (the controller's catch-up when it came late)."""
    for w, manager in ctx.suspend_writes:
        # not suspended now, and the last write of spec.suspend came after this slot with no Job in
        # between: that write was the un-suspend, and the slot passed while suspended
        if w >= t and (nxt_t is None or nxt_t >= w) and w == ctx.suspend_writes[-1][0]:
            late = (f"; at the un-suspend it was older than startingDeadlineSeconds={ctx.deadline}, so it was not "
                    "caught up" if ctx.deadline is not None and w - t > model.capped_seconds(ctx.deadline) else "")
            return ("missed-suspended", f"suspended until {rfc3339_z(w)} ({manager}, the last write of spec.suspend){late}")
    if t in dropped:
        return ("missed-deadline", f"older than startingDeadlineSeconds={ctx.deadline} when the controller looked: "
                "dropped without an event, never made up")
    if d.decision in ("create", "forbid-active") and d.most_recent == t:
        if d.decision == "forbid-active":
            return ("due", f"waits for {', '.join(d.waiting_for)} (Forbid); started when it ends unless a newer "
                    "slot has come by then")
        return ("due", f"the controller has not started it yet and will at its next sync ({d.job_name}); "
                f"{human_duration(ctx.now - t)} late")
    c = first.created if first is not None else None
    if nxt_t is not None and first is not None and c is not None and c - nxt_t > ctx.late_after:
        # the gap ends with a late Job (ran-late, or still running): the controller's catch-up
        cause = _why_late(nxt_t, first, ctx) if first.origin == "scheduled" else ""
        for x in ctx.too_many:
            if abs(c - x) <= _NEAR:
                return ("missed-too-many", f"more than 100 missed times (Warning TooManyMissedTimes at {rfc3339_z(x)}): "
                        f"only the latest, {rfc3339_z(nxt_t)}, was started")
        for w, who in ctx.resumes:
            if abs(c - w) <= _NEAR:
                return ("missed-suspended", f"suspended until {rfc3339_z(w)}: {who}; on un-suspend the controller "
                        f"started only the latest missed slot, {rfc3339_z(nxt_t)}")
        for w, manager in ctx.suspend_writes:
            if abs(c - w) <= _NEAR:
                return ("missed-suspended", f"suspended until {rfc3339_z(w)} ({manager}); on un-suspend the controller "
                        f"started only the latest missed slot, {rfc3339_z(nxt_t)}")
        for _b, e, who in ctx.cronctl_runs:
            if e is not None and abs(c - e) <= _NEAR * 2:
                return ("missed-suspended", f"suspended by {who}; on restore the controller started only the "
                        f"latest missed slot, {rfc3339_z(nxt_t)}")
        if ctx.deadline is not None and c - t > model.capped_seconds(ctx.deadline):
            return ("missed-deadline", f"the controller acted again at {rfc3339_z(c)}, more than startingDeadlineSeconds="
                    f"{ctx.deadline} after it, and started only the latest slot, {rfc3339_z(nxt_t)}")
        return ("missed", f"no Job; at {rfc3339_z(c)} the controller caught up only the latest slot ({rfc3339_z(nxt_t)}): "
                + (cause or "the CronJob was suspended or the controller was down (the evidence cannot tell which)"))
    if ctx.last_schedule is None or t > ctx.last_schedule:
        # after the controller's checkpoint: its decision now says what becomes of it
        never = ("only the most recent missed slot is started, and its estimate picks none now"
                 if d.estimate_skipped else "only the most recent missed slot is started")
        return ("missed", f"no Job since status.lastScheduleTime ({rfc3339_z_opt(ctx.last_schedule) or 'never set'}), and the "
                f"controller will never start it ({never}): the controller was down or not syncing")
    return ("missed", "no Job and no explanation in the evidence: the controller was down or not syncing then, "
            "or its Job and events were deleted (history limit, TTL, events expire after an hour)")


def _dst_rows(rows: list[SlotRow], sched: Any, start: datetime, times: list[datetime], zone: str) -> None:
    """Rows for wall times a clock change removed, and the verdict ``dst-doubled`` for the second
    run of a wall time a clock change repeated, when it ran."""
    if not times:
        return
    from cronctl.schedule.dst import dst_events

    by_slot = {r["slot"]: r for r in rows}
    for e in dst_events(sched, start, times):
        t = e.transition
        for w in e.skipped:
            rows.append({**_row(t.at, zone, [], "dst-skipped", ""), "slot_local": w.isoformat(timespec="minutes"),
                         "reason": f"{w:%H:%M} does not exist on {w:%Y-%m-%d} (clocks jump at {rfc3339_z(t.at)}, "
                                   f"{t.abbr_before} to {t.abbr_after}): the controller never runs it"})
        for x in e.lost:
            rows.append({**_row(x, zone, [], "dst-skipped", ""),
                         "reason": "the schedule names this time, but across the clock change the controller's walk "
                                   "never lands on it: it never runs"})
        for w, _a, b in e.repeated:
            r = by_slot.get(rfc3339_z(b))
            if r is not None and r["verdict"] in _ONCE:
                r["verdict"] = "dst-doubled"
                r["reason"] = (f"{w:%H:%M} came twice (clocks fall back at {rfc3339_z(t.at)}): the controller ran it "
                               f"again, in {t.abbr_after}; {r['reason']}").rstrip("; ")
        for x in e.extra:
            r = by_slot.get(rfc3339_z(x))
            if r is not None and r["verdict"] in _ONCE:
                r["verdict"] = "dst-doubled"
                r["reason"] = ("an extra run made by the clock change (the controller steps hours in real time): "
                               + r["reason"]).rstrip(": ")

#: how long after a slot can no longer get a Job it is judged: the controller's sync and the
#: recorder's watch must have brought a Job it created in the last moment
CLOSE_SLACK = timedelta(seconds=15)


def closes_at(row: SlotRow, next_slot: datetime | None, deadline: int | None) -> datetime | None:
    """When a slot row's verdict is final (None: not yet knowable, its Job runs).

    A slot with Jobs, all finished, is closed when the last of them completed. A slot without a
    Job can still get one until the controller moves on: until ``startingDeadlineSeconds`` after
    it, and never after the next slot (the controller starts only the most recent missed time),
    plus :data:`CLOSE_SLACK`. A wall time the clock change removed is closed at once.
    """
    t = model.when(row["slot"])
    assert t is not None
    if row["verdict"] == "dst-skipped":
        return t
    if row["verdict"] == "running" or any(d["outcome"] == "running" for d in row["job_details"]):
        return None
    if row["job_details"]:
        ends = [model.when(d["completed"]) for d in row["job_details"]]
        if all(e is not None for e in ends):
            return max(e for e in ends if e is not None)
        # a Job known only from its events, or gone before it was seen completing: as a missing one
    limits = [x for x in (next_slot, t + timedelta(seconds=deadline) if deadline is not None and deadline >= 0
                          else None) if x is not None]
    return (min(limits) + CLOSE_SLACK) if limits else None


def closed_rows(history: History, now: datetime) -> list[tuple[SlotRow, datetime]]:
    """The slot rows of one CronJob's :func:`slot_history` that are closed at ``now``, each with the
    time it closed (see :func:`closes_at`); ``due`` and ``running`` rows never are."""
    rows = [r for r in history["slots"] if r["verdict"] != "dst-skipped"]
    slots = [model.when(r["slot"]) for r in rows]
    deadline = history.get("starting_deadline_seconds")
    out = []
    for row in history["slots"]:
        if row["verdict"] in OPEN:
            continue
        t = model.when(row["slot"])
        nxt = next((s for s in slots if s is not None and t is not None and s > t), None)
        at = closes_at(row, nxt, deadline if isinstance(deadline, int) else None)
        if at is not None and at <= now:
            out.append((row, at))
    return out


def spliced(history: History, kept: list[tuple[datetime, SlotRow]], judged_from: datetime, since: datetime,
            max_slots: int) -> History:
    """One CronJob's history whose slots before ``judged_from`` are the rows the recorder kept when
    each closed (``kept``: (slot, row), oldest first, the slot as the ledger keys it: not parsed
    again from the row), and from there on :func:`slot_history`'s (``history``, judged from
    ``judged_from``): a 90-day window reads 13,000 closed rows instead of judging them again."""
    fresh = [r for r in history["slots"] if (t := model.when(r["slot"])) is not None and t >= judged_from]
    rows = [r for t, r in kept if t < judged_from] + fresh
    out = history.copy()
    notes = list(history["notes"])
    if kept:
        notes.insert(0, f"{len(rows) - len(fresh)} slot(s) before {rfc3339_z(judged_from)} as cronctl record "
                        "judged them when each closed (the ledger's verdicts)")
    if len(rows) > max_slots:
        rows = rows[-max_slots:]
        notes.append(f"only the latest {max_slots} slots are shown (use --since)")
    out["slots"] = rows
    out["counts"] = {v: 0 for v in VERDICTS}
    out["outcome_counts"] = {o: 0 for o in OUTCOMES}
    for r in rows:
        out["counts"][r["verdict"]] = out["counts"].get(r["verdict"], 0) + 1
        out["outcome_counts"][r["outcome"]] = out["outcome_counts"].get(r["outcome"], 0) + 1
    if out["window"]:
        out["window"] = {**out["window"], "since": rfc3339_z(since), "limited_by": "--since"}
    out["notes"] = notes
    return out


def fail_on(history: list[History], what: set[str]) -> list[str]:
    """The slots (``namespace/name slot verdict``) that make ``--fail-on`` fail."""
    bad = (LOST if "lost" in what else frozenset()) | (DUPLICATE if "duplicate" in what else frozenset())
    return [f"{h['namespace']}/{h['name']} {r['slot']} {r['verdict']}" for h in history for r in h["slots"]
            if r["verdict"] in bad]
