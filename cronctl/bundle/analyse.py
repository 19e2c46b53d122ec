"""The incident analysis of one CronJob: timeline, per-occurrence verdicts, overlaps. PURE.

No I/O, no clock (``now`` is a parameter), no kubernetes import. Input: the CronJob dict and the
namespace's Jobs, Pods and Events as the API serves them (already redacted); output: a
:class:`cronctl.bundle.result.CronJobAnalysis` (frozen dataclasses), which
:mod:`cronctl.bundle.document` alone turns into the CronJob's record of ``bundle.json``.

:func:`analyse` runs in steps over one :class:`_Analysis` (the context each step reads and
adds to): the children (Jobs and their pods), the schedule (the engine's controller model), the
events (matched by :mod:`cronctl.events`), the overlaps (:func:`cronctl.model.overlap_groups`), the
suspended periods and the occurrences.

Verdict per expected occurrence: the slot verdicts of :mod:`cronctl.history` (``cronctl history``;
docs/commands/history.md), one judgement for both commands. A manual Job that ran beside a
scheduled one is named in ``manual_overlap`` and in ``overlaps`` (docs/BACKGROUND.md §4.1: Forbid only looks at
``.status.active`` and a manual Job is never there).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, Mapping

from cronctl import model
from cronctl.bundle.document import cronjob_record
from cronctl.bundle.result import (Active, CronJobAnalysis, Job, Occurrence, Overlap, RemovedJob,
                                   ScheduleFindings, SuspendedPeriod, Window)
from cronctl.events import EventRecord, GoneJob, events_for, gone_jobs, unexpected_jobs
from cronctl.gitops import detect as detect_gitops
from cronctl.history import (
    LOST,
    Options as HistoryOptions,
    last_success_source,
    slot_history,
    suspend_set_at,
)
from cronctl.schedule.controller import Decision
from cronctl.slotrows import NO_EFFECT, SlotRow
from cronctl.timeutil import UTC, rfc3339_z, rfc3339_z_opt

Obj = dict[str, Any]


@dataclass(frozen=True)
class Options:
    """Knobs of the analysis. ``now`` is the instant the bundle describes."""

    now: datetime
    late_after: timedelta = timedelta(seconds=10)
    window: timedelta = timedelta(hours=24)
    max_occurrences: int = 500
    next_runs: int = 5
    due_limit: int = 200
    #: the ledger's suspend spans by CronJob uid (start, end or None, words; cronctl.ledger.facts.suspend_spans)
    suspensions: Mapping[str, list[tuple[datetime, datetime | None, str]]] = field(default_factory=dict)
    #: each slot's business effect as cronctl claim recorded it, by workflow key (namespace/name) and
    #: slot (RFC 3339 UTC); a workflow without claim rows is absent (cronctl.ledger.claimstore.slot_effect)
    effects: Mapping[str, Mapping[str, Mapping[str, Any]]] = field(default_factory=dict)


@dataclass
class _Analysis:
    """What the steps of :func:`analyse` share: the inputs, and what each step found."""

    cronjob: Obj
    view: model.CronJobView
    opts: Options
    now: datetime
    created: datetime  # creationTimestamp, else now
    # the children step
    child_dicts: list[Obj] = field(default_factory=list)
    recs: list[model.JobRecord] = field(default_factory=list)
    by_name: dict[str, model.JobRecord] = field(default_factory=dict)
    pods_by_job: dict[str, list[Obj]] = field(default_factory=dict)
    # the schedule step
    sched: Any = None
    decision: Decision | None = None
    unsuspend: Decision | None = None  # what un-suspending now would do (a suspended CronJob only)
    # the events step
    events: list[EventRecord] = field(default_factory=list)
    gone: dict[str, GoneJob] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def analyse(cronjob: Obj, jobs: list[Obj], pods: list[Obj], events: list[Obj], opts: Options) -> CronJobAnalysis:
    """The full analysis of one CronJob against the namespace's Jobs/Pods/Events at ``opts.now``.

    ``jobs``, ``pods`` and ``events`` may hold other objects of the namespace: ownership (uid) and
    involvedObject decide what belongs to this CronJob. The controller's inputs come from
    :func:`cronctl.model.cronjob_view`: a field of the wrong type is the schedule's ``error`` (the
    controller model says nothing), and the rest of the evidence is analysed as usual.
    """
    now = opts.now.astimezone(UTC)
    view = model.cronjob_view(cronjob)
    a = _Analysis(cronjob=cronjob, view=view, opts=opts, now=now, created=view.created or now)
    _children(a, jobs, pods)
    schedule = _schedule(a)
    last_ok_from = _events(a, events)
    overlaps = _overlaps(a)
    occurrences, window, suspended_periods = _occurrences(a, jobs, events, _suspended_periods(a))

    if view.policy == "Forbid" and any(o.group.manual_beside_scheduled for o in overlaps):
        a.notes.append("concurrencyPolicy Forbid did not prevent these overlaps: Forbid only looks at "
                       ".status.active, and a manual Job is never put there (docs/SEMANTICS.md §4.1, §5)")
    unexpected = unexpected_jobs(a.events, a.cronjob, a.child_dicts)
    for u in unexpected:
        if u["made_by"] == "unknown":
            a.notes.append(f"Job {u['job']} was not made by the controller (UnexpectedJob, {u['events']} "
                           "warning(s)), and nothing in the evidence says cronctl made it: a run by hand (kubectl "
                           "create job --from, a script) runs outside concurrencyPolicy and outside cronctl's lock")
    seen = detect_gitops(cronjob)
    if seen.sets_suspend:
        a.notes.append(f"{seen.words()}: a suspend by hand, a pause or a manual run's hold does not stay (cronctl "
                       "runbook gitops)")
    occurrence_of = {jn: o.expected for o in occurrences for jn in o.jobs}
    basis = a.unsuspend if a.unsuspend is not None else a.decision
    return CronJobAnalysis(
        view=view,
        created=a.created,
        last_successful_from=last_ok_from,
        schedule=schedule,
        active=Active(from_status=tuple(view.active), unfinished_children=tuple(r.name for r in a.recs if r.running)),
        jobs=_jobs(a, occurrence_of),
        removed_jobs=tuple(RemovedJob(g, occurrence_of.get(g.name)) for g in sorted(a.gone.values(), key=_gone_order)),
        window=window,
        occurrences=occurrences,
        overlaps=overlaps,
        never_made_up=() if basis is None else tuple(basis.never_made_up),
        suspended_periods=suspended_periods,
        events=tuple(a.events),
        unexpected_jobs=tuple(unexpected),
        notes=tuple(a.notes),
        gitops=seen if seen.tool is not None else None,
    )


def analyse_cronjob(cronjob: Obj, jobs: list[Obj], pods: list[Obj], events: list[Obj], opts: Options) -> Obj:
    """:func:`analyse`, as the CronJob's record of bundle.json (:func:`cronctl.bundle.document.cronjob_record`,
    without the ``lint``, ``logs`` and ``summary`` the bundle adds)."""
    return cronjob_record(analyse(cronjob, jobs, pods, events, opts))


# --- the steps ----------------------------------------------------------------------------------


def _children(a: _Analysis, jobs: list[Obj], pods: list[Obj]) -> None:
    """The CronJob's Jobs (as :class:`cronctl.model.JobRecord`, oldest first) and their pods."""
    a.child_dicts = [j for j in jobs if model.owned_by(j, a.cronjob)]
    a.recs = sorted((model.job_record(j, a.view.name, a.now) for j in a.child_dicts),
                    key=lambda r: (r.created or a.now, r.name))
    a.by_name = {r.name: r for r in a.recs}
    job_uids = {r.uid for r in a.recs}
    for p in pods:
        owner = model.controller_owner_uid(p, "Job")
        if owner in job_uids:
            a.pods_by_job.setdefault(str(owner), []).append(p)


def _schedule(a: _Analysis) -> ScheduleFindings:
    """The schedule from the engine: what the controller decides now (and, suspended, what
    un-suspending now would start), the times due since its checkpoint, the next runs."""
    from cronctl.errors import CronctlError
    from cronctl.schedule.parse import parse

    v, now = a.view, a.now
    zone = "UTC"
    try:
        v.checked()
        a.sched = parse(v.schedule, v.time_zone)
        zone = a.sched.zone
        a.decision = v.decide(now, suspended=v.suspended)
        if v.suspended:
            # controller: a suspended CronJob computes nothing (docs/SEMANTICS.md §4.1 step 6); what
            # matters for the incident is what unsuspending now would start and what it never will
            a.unsuspend = v.decide(now, suspended=False)
    except CronctlError as exc:
        schedule_error: str | None = exc.message
    else:
        schedule_error = None
    base = v.last_schedule or a.created
    due: list[datetime] = []
    due_truncated = False
    next_runs: list[datetime] = []
    if a.sched is not None:
        got = [t for t in a.sched.runs(base, a.opts.due_limit + 1) if t <= now]
        due_truncated = len(got) > a.opts.due_limit
        due = got[: a.opts.due_limit]
        next_runs = a.sched.runs(now, a.opts.next_runs)
    return ScheduleFindings(
        zone=zone,
        zone_from_prefix=bool(a.sched.zone_from_prefix) if a.sched is not None else False,
        error=schedule_error,
        base=base,
        base_source="status.lastScheduleTime" if v.last_schedule else "metadata.creationTimestamp",
        now=now, due=tuple(due), due_truncated=due_truncated, next_runs=tuple(next_runs),
        decision=a.decision, if_unsuspended=a.unsuspend,
    )


def _events(a: _Analysis, events: list[Obj]) -> Obj | None:
    """The events of the CronJob, its Jobs and their pods; the Jobs they name that are gone; which
    Job set lastSuccessfulTime (returned)."""
    pods = [p for ps in a.pods_by_job.values() for p in ps]
    pod_uids = {str(model.meta(p).get("uid", "")) for p in pods}
    pod_names = {str(model.meta(p).get("name", "")) for p in pods}
    names = {r.name for r in a.recs}
    a.events = events_for(events, a.cronjob, {r.uid for r in a.recs}, pod_uids, names, pod_names)
    a.gone = gone_jobs(a.events, a.cronjob, names, a.recs)
    last_ok_from = last_success_source(a.cronjob, a.child_dicts, a.recs, a.gone)
    if last_ok_from is not None and last_ok_from["note"]:
        a.notes.append(last_ok_from["note"])
    return last_ok_from


def _overlaps(a: _Analysis) -> tuple[Overlap, ...]:
    """The spans in which two or more of the CronJob's Jobs ran at once, one group each, with the
    first :data:`cronctl.model.MAX_OVERLAP_NAMES` names (:func:`cronctl.model.overlap_groups`: a sweep, so 2,000
    hung Jobs are one group, not 1,999,000 pairs)."""
    return tuple(Overlap(g, tuple((n, a.by_name[n].origin) for n in g.names[:model.MAX_OVERLAP_NAMES]))
                 for g in model.overlap_groups(a.recs))


def _suspended_periods(a: _Analysis) -> list[SuspendedPeriod]:
    """The known suspended periods: the current one (who and since when, as far as a pause, the record
    or managedFields say), each finished cronctl run that held the CronJob suspended and each
    finished pause (cronctl.dev/runs, cronctl.dev/pauses), and with the ledger every other span it
    recorded, named by the field manager that wrote spec.suspend (a suspend by hand, a GitOps tool)."""
    periods: list[SuspendedPeriod] = []
    ledger = list(a.opts.suspensions.get(a.view.uid, [])) if a.view.uid else []
    if a.view.suspended:
        at, manager = suspend_set_at(a.cronjob)
        record = model.read_record(a.cronjob)
        rec_start = model.when(record.started) if record is not None else None
        pause = model.read_pause(a.cronjob)
        open_span = [sp for sp in ledger if sp[1] is None]
        if pause is not None:
            at = pause.at or at
            source = f"{pause.words()} (cronctl pause)"
        elif record is not None and rec_start is not None:
            # cronctl run-manual suspended it and says who, when and why (the record is the lock)
            at = rec_start
            source = (f"suspended by cronctl run-manual {record.run_id} (operator {record.operator}, "
                      f"reason: {record.reason or '-'}, step {record.step}); originally suspend="
                      f"{str(record.original_suspend).lower()}")
        elif open_span:
            at, source = open_span[-1][0], open_span[-1][2]
        elif at is not None:
            source = f"spec.suspend is true; last written at {rfc3339_z_opt(at)} by {manager} (managedFields)"
        else:
            source = "spec.suspend is true; when it was set is not recorded"
        periods.append(SuspendedPeriod(start=rfc3339_z_opt(at), end=None, source=source, inferred=False, lost=0))
    # the finished cronctl runs that held it suspended (kept on the CronJob in cronctl.dev/runs after
    # their records, Jobs and events are gone)
    for pr in model.read_runs(a.cronjob):
        held = pr.held
        if held is not None:
            periods.append(SuspendedPeriod(start=rfc3339_z_opt(held[0]), end=rfc3339_z_opt(held[1]), inferred=False,
                                           lost=0, run=True, source=f"suspended by {pr.words()} (kept in {model.ANN_RUNS})"))
    known = [held for pr in model.read_runs(a.cronjob) for held in (pr.held,) if held is not None]
    for pp in model.read_pauses(a.cronjob):
        held = pp.held
        if held is not None:
            known.append(held)
            periods.append(SuspendedPeriod(start=rfc3339_z(held[0]), end=rfc3339_z(held[1]), inferred=False, lost=0,
                                           source=f"{pp.words()} (kept in {model.ANN_PAUSES})"))
    # the ledger's ended spans that no run or pause above stands for: a suspend by someone else
    for start, end, words in ledger:
        if end is not None and not any(abs(end - e) <= _SAME_SUSPEND and s - _CONFIRMING <= start <= e
                                       for s, e in known):
            periods.append(SuspendedPeriod(start=rfc3339_z(start), end=rfc3339_z(end), inferred=False, lost=0,
                                           source=f"suspended until {rfc3339_z(end)}: {words}"))
    return periods


#: a ledger span and a run's or pause's own times of one suspension: their ends differ by the seconds
#: between the write and when the recorder noted it, their starts also by a confirmation's wait (a
#: pause's time is read before its prompt)
_SAME_SUSPEND = timedelta(seconds=30)
_CONFIRMING = timedelta(minutes=10)


def _occurrences(a: _Analysis, jobs: list[Obj], events: list[Obj], periods: list[SuspendedPeriod]
                 ) -> tuple[tuple[Occurrence, ...], Window, tuple[SuspendedPeriod, ...]]:
    """Every scheduled time in the window with its verdict (the judgement of ``cronctl history``),
    the window, and the suspended periods: each known, finished one with its lost slots counted,
    and the inferred ones added."""
    now = a.now
    if a.sched is None:
        return (), Window(start=None, end=now, truncated=False), tuple(periods)
    times, wstart, truncated = _occurrence_times(a.sched, a.created, now, a.recs, a.opts)
    window = Window(start=wstart, end=now, truncated=truncated)
    if truncated:
        a.notes.append(f"only the last {len(times)} scheduled times are judged (from {rfc3339_z_opt(wstart)})")
    expected = set(times)
    stray = [r.name for r in a.recs if r.origin == "scheduled" and r.scheduled_for is not None
             and r.scheduled_for >= wstart and r.scheduled_for not in expected]
    if stray:
        a.notes.append("scheduled Jobs at times the current schedule does not produce (schedule or zone "
                       "changed?): " + ", ".join(stray))
    # one judgement of every slot, the same as `cronctl history` (cronctl.history)
    hist = slot_history(a.cronjob, jobs, events, HistoryOptions(now=now, since=wstart, late_after=a.opts.late_after,
                                                                 max_slots=a.opts.max_occurrences,
                                                                 suspensions=a.opts.suspensions))
    effects = a.opts.effects.get(f"{a.view.namespace}/{a.view.name}")
    occ = tuple(_occurrence(r, None if effects is None else effects.get(r["slot"], NO_EFFECT))
                for r in hist["slots"] if r["slot"] <= rfc3339_z(now))
    # link lost runs to the late catch-up that followed them (unsuspend / controller back)
    periods = [replace(per, lost=_lost(occ, per.start, per.end))  # the lost slots inside each known, finished period
               if per.end is not None and per.start is not None else per for per in periods]
    return occ, window, _infer_gaps(occ, periods, a.view.suspended)


def _lost(occ: tuple[Occurrence, ...], start: str, end: str) -> int:
    return sum(1 for o in occ if o.verdict in LOST and start <= o.expected <= end)


def _jobs(a: _Analysis, occurrence_of: dict[str, str]) -> tuple[Job, ...]:
    """Each child Job with its record, failure, the occurrence it stands for and its pods."""
    active_refs = a.view.active
    by_uid = {model.meta(j).get("uid"): j for j in a.child_dicts}
    return tuple(
        Job(record=r, in_status_active=r.name in active_refs, occurrence=occurrence_of.get(r.name),
            failure=model.job_failure(by_uid.get(r.uid) or {}),
            pods=tuple(model.pod_view(p) for p in sorted(a.pods_by_job.get(r.uid, []),
                                               key=lambda p: (str(model.meta(p).get("creationTimestamp", "")),
                                                              str(model.meta(p).get("name", ""))))))
        for r in a.recs)


def _occurrence_times(sched: Any, created: datetime, now: datetime, recs: list[model.JobRecord],
                      opts: Options) -> tuple[list[datetime], datetime, bool]:
    """The scheduled times to judge: (window start, now], the window reaching back to the oldest
    kept Job (not before the CronJob's creation), at most ``max_occurrences`` of the latest."""
    start = max(created, now - opts.window)
    oldest = min((r.scheduled_for or r.created or now for r in recs), default=now)
    if oldest <= start:
        start = max(created, oldest - timedelta(seconds=1))
    cap = opts.max_occurrences
    times = [t for t in sched.runs(start, cap + 1) if t <= now]
    if len(times) <= cap:
        return times, start, False
    # Too many: judge only the latest `cap`. Estimate the spacing from what was walked, start
    # that far back from now, and walk to now; halve the estimate if the walk did not reach now
    # (irregular gaps, e.g. weekdays only).
    span = (times[-1] - times[0]) / (len(times) - 1)
    for _ in range(8):
        start = max(created, now - span * cap)
        walked = sched.runs(start, cap * 4)
        if len(walked) < cap * 4 or walked[-1] > now:
            break
        span = span / 2
    times = [t for t in walked if t <= now][-cap:]
    return times, (times[0] - timedelta(seconds=1)) if times else start, True


def _occurrence(r: SlotRow, effect: Mapping[str, Any] | None = None) -> Occurrence:
    """A slot of :func:`cronctl.history.slot_history` as a bundle occurrence (with its effect when
    the workflow has claim rows)."""
    first = r["job_details"][0] if r["job_details"] else None
    return Occurrence(
        expected=r["slot"], expected_local=r["slot_local"], jobs=tuple(r["jobs"]),
        created=first["created"] if first else None, started=first["started"] if first else None,
        completed=first["completed"] if first else None,
        outcome=first["outcome"] if first and first["outcome"] != "running" else None,
        slot_outcome=r["outcome"], failure_reason=r["failure_reason"],
        jobs_gone=tuple(d["name"] for d in r["job_details"] if not d["exists"]),
        delay_seconds=r["start_delay_seconds"], manual_overlap=tuple(r["manual_beside"]),
        verdict=r["verdict"], reason=r["reason"], effect=effect,
    )


def _infer_gaps(occ: tuple[Occurrence, ...], known: list[SuspendedPeriod], suspended_now: bool
                ) -> tuple[SuspendedPeriod, ...]:
    """The periods ``known``, and after them each run of lost slots that ends with a late catch-up Job
    (the controller starts only the most recent missed time after unsuspend or downtime,
    docs/SEMANTICS.md §4.4) as an inferred suspended (or controller-down) period; the slots' reasons
    already say why. Suspended now, the current period counts the slots missed while suspended."""
    periods = list(known)
    i = 0
    while i < len(occ):
        if occ[i].verdict not in LOST or (suspended_now and occ[i].verdict == "missed-suspended"):
            i += 1
            continue
        j = i
        while j < len(occ) and occ[j].verdict in LOST:
            j += 1
        in_known = any(not p.inferred and p.start and p.end and p.start <= occ[i].expected <= p.end
                       for p in periods)
        if not in_known and j < len(occ) and (occ[j].delay_seconds or 0) > 10 and occ[j].jobs:
            start, end = occ[i].expected, occ[j].created
            periods.append(SuspendedPeriod(
                start=start, end=end,
                source=(f"inferred: {j - i} scheduled time(s) without a Job, then a catch-up Job created "
                        f"late at {end} (suspend/unsuspend or controller downtime)"),
                inferred=True, lost=j - i,
            ))
        i = j
    if suspended_now and periods and not periods[0].inferred:
        periods[0] = replace(periods[0], lost=sum(1 for o in occ if o.verdict == "missed-suspended"))
    return tuple(periods)


def _gone_order(g: GoneJob) -> tuple[str, str]:
    return (rfc3339_z_opt(g.slot or g.created or g.finished or g.deleted) or "", g.name)


