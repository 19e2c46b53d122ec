"""The incident analysis of one CronJob: timeline, per-occurrence verdicts, overlaps. PURE.

No I/O, no clock (``now`` is a parameter), no kubernetes import. Input: the CronJob dict and the
namespace's Jobs, Pods and Events as the API serves them (already redacted); output: JSON-ready
dicts (times as RFC3339 UTC strings) that go into ``bundle.json`` as they are.

Verdict per expected occurrence: the slot verdicts of :mod:`cronctl.history` (``cronctl history``;
README "cronctl history"), one judgement for both commands. A manual Job that ran beside a
scheduled one is named in ``manual_overlap`` and in ``overlaps`` (seed 004: Forbid only looks at
``.status.active`` and a manual Job is never there).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Iterable

from cronctl import model
from cronctl.history import (
    VERDICTS as HISTORY_VERDICTS,
    LOST,
    Options as HistoryOptions,
    slot_history,
    GoneJob,
    JobRecord as _Job,
    events_for,
    gone_jobs,
    job_record as _job,
    last_success_source,
    suspend_set_at,
)
from cronctl.timeutil import UTC, parse_rfc3339, rfc3339_local, rfc3339_z

Obj = dict[str, Any]

VERDICTS = HISTORY_VERDICTS


@dataclass(frozen=True)
class Options:
    """Knobs of the analysis. ``now`` is the instant the bundle describes."""

    now: datetime
    late_after: timedelta = timedelta(seconds=10)
    window: timedelta = timedelta(hours=24)
    max_occurrences: int = 500
    next_runs: int = 5
    due_limit: int = 200


# --- small readers of API dicts -------------------------------------------------------------


def _ts(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return parse_rfc3339(value)
    except Exception:  # a malformed timestamp in a dump is treated as absent, not fatal
        return None


def _z(dt: datetime | None) -> str | None:
    return rfc3339_z(dt) if dt is not None else None


def controller_owner_uid(obj: Obj, kind: str) -> str | None:
    """The uid of ``obj``'s controller ownerReference of ``kind`` (any owner of that kind if none
    is marked controller)."""
    refs = [r for r in model.meta(obj).get("ownerReferences") or [] if isinstance(r, dict) and r.get("kind") == kind]
    for r in refs:
        if r.get("controller"):
            return str(r.get("uid"))
    return str(refs[0].get("uid")) if refs else None


# --- job records and intervals --------------------------------------------------------------


def find_overlaps(intervals: Iterable[tuple[str, datetime, datetime]]) -> list[tuple[str, str, datetime, datetime]]:
    """Every pair of intervals ``[start, end)`` that share time, as (a, b, overlap start, overlap end).

    A sweep over the intervals sorted by start (O(n log n + overlaps)), so that 2,000 Jobs stay
    cheap. Pairs come out ordered by the later interval's start, then by the earlier one's.
    Zero-length intervals overlap nothing.
    """
    items = sorted((s, e, n) for n, s, e in intervals if e > s)
    open_: list[tuple[datetime, datetime, str]] = []
    out: list[tuple[str, str, datetime, datetime]] = []
    for s, e, n in items:
        open_ = [o for o in open_ if o[1] > s]
        for os_, oe, on in open_:
            out.append((on, n, s, min(oe, e)))
        open_.append((s, e, n))
    return out


# --- events ---------------------------------------------------------------------------------


# --- suspend ---------------------------------------------------------------------------------


# --- the analysis of one CronJob --------------------------------------------------------------


def analyse_cronjob(cronjob: Obj, jobs: list[Obj], pods: list[Obj], events: list[Obj], opts: Options) -> Obj:
    """The full analysis of one CronJob against the namespace's Jobs/Pods/Events at ``opts.now``.

    ``jobs``, ``pods`` and ``events`` may hold other objects of the namespace: ownership (uid) and
    involvedObject decide what belongs to this CronJob.
    """
    from cronctl.errors import CronctlError

    now = opts.now.astimezone(UTC)
    meta = model.meta(cronjob)
    name = str(meta.get("name", ""))
    uid = str(meta.get("uid", ""))
    spec = cronjob.get("spec") or {}
    status = cronjob.get("status") or {}
    created = _ts(meta.get("creationTimestamp")) or now
    last_schedule = _ts(status.get("lastScheduleTime"))
    last_success = _ts(status.get("lastSuccessfulTime"))
    expr = str(spec.get("schedule", ""))
    tz = spec.get("timeZone")
    policy = str(spec.get("concurrencyPolicy") or "Allow")
    suspended = bool(spec.get("suspend"))
    deadline = spec.get("startingDeadlineSeconds")
    hist_ok = spec.get("successfulJobsHistoryLimit", 3)
    hist_failed = spec.get("failedJobsHistoryLimit", 1)
    notes: list[str] = []

    # -- children ---------------------------------------------------------------------------
    child_dicts = [j for j in jobs if model.owned_by(j, cronjob)]
    recs = sorted((_job(j, name, now) for j in child_dicts),
                  key=lambda r: (r.created or now, r.name))
    pods_by_job: dict[str, list[Obj]] = {}
    job_uids = {r.uid for r in recs}
    for p in pods:
        owner = controller_owner_uid(p, "Job")
        if owner in job_uids:
            pods_by_job.setdefault(str(owner), []).append(p)
    active_refs = [str(r.get("name")) for r in status.get("active") or [] if isinstance(r, dict)]
    unfinished = [r.name for r in recs if r.running]

    # -- schedule analysis from the engine ----------------------------------------------------
    schedule_out: Obj
    sched = None
    decision = None
    unsuspend = None
    zone = "UTC"
    try:
        from cronctl.schedule.controller import decide
        from cronctl.schedule.parse import parse

        sched = parse(expr, tz)
        zone = sched.zone
        ctl = dict(time_zone=tz, name=name, created=created, last_schedule=last_schedule,
                   starting_deadline=deadline, now=now, concurrency_policy=policy, active=active_refs)
        decision = decide(expr, suspended=suspended, **ctl)  # type: ignore[arg-type]
        if suspended:
            # controller: a suspended CronJob computes nothing (docs/SEMANTICS.md §4.1 step 6); what
            # matters for the incident is what unsuspending now would start and what it never will
            unsuspend = decide(expr, suspended=False, **ctl)  # type: ignore[arg-type]
    except CronctlError as exc:
        schedule_error: str | None = exc.message
    else:
        schedule_error = None
    base = last_schedule or created
    due: list[datetime] = []
    due_truncated = False
    next_runs: list[datetime] = []
    if sched is not None:
        got = [t for t in sched.runs(base, opts.due_limit + 1) if t <= now]
        due_truncated = len(got) > opts.due_limit
        due = got[: opts.due_limit]
        next_runs = sched.runs(now, opts.next_runs)
    schedule_out = {
        "expression": expr,
        "time_zone": tz,
        "zone": zone,
        "zone_from_prefix": bool(sched.zone_from_prefix) if sched is not None else False,
        "error": schedule_error,
        "base": _z(base),
        "base_source": "status.lastScheduleTime" if last_schedule else "metadata.creationTimestamp",
        "now": _z(now),
        "due": [_z(t) for t in due],
        "due_truncated": due_truncated,
        "next_runs": [_z(t) for t in next_runs],
        "next_runs_local": [_local(t, zone) for t in next_runs],
        "decision": _decision_out(decision),
        "if_unsuspended": _decision_out(unsuspend),
    }

    # -- events -------------------------------------------------------------------------------
    pod_uids = {str(model.meta(p).get("uid", "")) for ps in pods_by_job.values() for p in ps}
    pod_names = {str(model.meta(p).get("name", "")) for ps in pods_by_job.values() for p in ps}
    evs = events_for(events, cronjob, job_uids, pod_uids, {r.name for r in recs}, pod_names)
    event_counts: dict[str, int] = {}
    for ev in evs:
        event_counts[ev["reason"]] = event_counts.get(ev["reason"], 0) + int(ev["count"])
    gone = gone_jobs(evs, cronjob, {r.name for r in recs}, recs)
    last_ok_from = last_success_source(cronjob, child_dicts, recs, gone)
    if last_ok_from is not None and last_ok_from["note"]:
        notes.append(last_ok_from["note"])

    # -- overlaps -----------------------------------------------------------------------------
    by_name = {r.name: r for r in recs}
    overlaps: list[Obj] = []
    for a, b, s, e in find_overlaps((r.name, r.start, r.end) for r in recs):
        ra, rb = by_name[a], by_name[b]
        overlaps.append({
            "a": a, "b": b, "a_origin": ra.origin, "b_origin": rb.origin,
            "start": _z(s), "end": _z(e), "seconds": int((e - s).total_seconds()),
            "ongoing": ra.running and rb.running,
        })

    # -- suspended periods --------------------------------------------------------------------
    suspended_periods: list[Obj] = []
    if suspended:
        at, manager = suspend_set_at(cronjob)
        record = model.read_record(cronjob)
        rec_start = _ts(record.started) if record is not None else None
        if record is not None and rec_start is not None:
            # cronctl run-manual suspended it and says who, when and why (the record is the lock)
            at = rec_start
            source = (f"suspended by cronctl run-manual {record.run_id} (operator {record.operator}, "
                      f"reason: {record.reason or '-'}, step {record.step}); originally suspend="
                      f"{str(record.original_suspend).lower()}")
        elif at is not None:
            source = f"spec.suspend is true; last written at {_z(at)} by {manager} (managedFields)"
        else:
            source = "spec.suspend is true; when it was set is not recorded"
        suspended_periods.append({"start": _z(at), "end": None, "source": source, "inferred": False, "lost": 0})
    # the finished cronctl runs that held it suspended (kept on the CronJob in cronctl.dev/runs after
    # their records, Jobs and events are gone)
    for pr in model.read_runs(cronjob):
        held = pr.held
        if held is not None:
            suspended_periods.append({"start": _z(held[0]), "end": _z(held[1]), "inferred": False, "lost": 0,
                                      "source": f"suspended by {pr.words()} (kept in {model.ANN_RUNS})"})

    # -- occurrences --------------------------------------------------------------------------
    occ_out: list[Obj] = []
    window_out: Obj = {"start": None, "end": _z(now), "truncated": False}
    if sched is not None:
        times, wstart, truncated = _occurrence_times(sched, created, now, recs, opts)
        window_out = {"start": _z(wstart), "end": _z(now), "truncated": truncated}
        if truncated:
            notes.append(f"only the last {len(times)} scheduled times are judged (from {_z(wstart)})")
        expected = set(times)
        stray = [r.name for r in recs if r.origin == "scheduled" and r.scheduled_for is not None
                 and r.scheduled_for >= wstart and r.scheduled_for not in expected]
        if stray:
            notes.append("scheduled Jobs at times the current schedule does not produce (schedule or zone "
                         "changed?): " + ", ".join(stray))
        # one judgement of every slot, the same as `cronctl history` (cronctl.history)
        hist = slot_history(cronjob, jobs, events, HistoryOptions(now=now, since=wstart, late_after=opts.late_after,
                                                                  max_slots=opts.max_occurrences))
        occ_out = [_occurrence(r) for r in hist["slots"] if r["slot"] <= _z(now)]
        # link lost runs to the late catch-up that followed them (unsuspend / controller back)
        for per in suspended_periods:  # the lost slots inside each known, finished period
            if per["end"] is not None and per["start"] is not None:
                per["lost"] = sum(1 for o in occ_out if o["verdict"] in LOST
                                  and per["start"] <= o["expected"] <= per["end"])
        _infer_gaps(occ_out, suspended_periods, suspended)

    verdict_counts = {v: 0 for v in VERDICTS}
    for o in occ_out:
        verdict_counts[o["verdict"]] += 1
    if policy == "Forbid" and any(o["a_origin"] != o["b_origin"] for o in overlaps):
        notes.append("concurrencyPolicy Forbid did not prevent these overlaps: Forbid only looks at "
                     ".status.active, and a manual Job is never put there (docs/SEMANTICS.md §4.1, §5)")

    jobs_out = []
    occurrence_of: dict[str, str] = {}
    for o in occ_out:
        for jn in o["jobs"]:
            occurrence_of[jn] = o["expected"]
    by_uid = {model.meta(j).get("uid"): j for j in child_dicts}
    for r in recs:
        jobs_out.append({
            "name": r.name, "uid": r.uid, "origin": r.origin,
            "scheduled_for": _z(r.scheduled_for), "claims_occurrence": _z(r.claims),
            "created": _z(r.created), "started": _z(r.started), "completed": _z(r.completed),
            "outcome": r.outcome, "running": r.running,
            "duration_seconds": (int(((r.completed if not r.running and r.completed else now) - r.start)
                                     .total_seconds()) if (r.started or r.created) else None),
            "in_status_active": r.name in active_refs,
            "delay_seconds": (int((r.created - r.scheduled_for).total_seconds())
                              if r.created and r.scheduled_for else None),
            "occurrence": occurrence_of.get(r.name),
            "failure": _failure_view(by_uid.get(r.uid) or {}),
            "pods": [_pod_view(p) for p in sorted(pods_by_job.get(r.uid, []),
                                                   key=lambda p: (str(model.meta(p).get("creationTimestamp", "")),
                                                                  str(model.meta(p).get("name", ""))))],
        })

    basis = unsuspend if unsuspend is not None else decision
    never = [] if basis is None else [_z(t) for t in basis.never_made_up]
    lost_times = [o["expected"] for o in occ_out if o["verdict"] == "lost"]
    return {
        "name": name,
        "namespace": str(meta.get("namespace", "")),
        "uid": uid,
        "created": _z(created),
        "spec": {
            "schedule": expr, "time_zone": tz, "concurrency_policy": policy, "suspend": suspended,
            "starting_deadline_seconds": deadline,
            "successful_jobs_history_limit": hist_ok, "failed_jobs_history_limit": hist_failed,
        },
        "checkpoint": {"last_schedule_time": _z(last_schedule), "last_successful_time": _z(last_success),
                       "last_successful_from": last_ok_from},
        "schedule": schedule_out,
        "active": {
            "from_status": active_refs,
            "unfinished_children": unfinished,
            "not_in_status": [n for n in unfinished if n not in active_refs],
            "stale_in_status": [n for n in active_refs if n not in unfinished],
        },
        "jobs": jobs_out,
        "removed_jobs": [_gone_view(g, occurrence_of) for g in sorted(gone.values(), key=_gone_order)],
        "window": window_out,
        "occurrences": occ_out,
        "verdict_counts": verdict_counts,
        "overlaps": overlaps,
        "never_made_up": never,
        "lost_history": lost_times,
        "suspended_periods": suspended_periods,
        "events": evs,
        "event_counts": dict(sorted(event_counts.items())),
        "notes": notes,
    }


def _local(t: datetime, zone: str) -> str:
    try:
        from zoneinfo import ZoneInfo

        return rfc3339_local(t.astimezone(ZoneInfo(zone)))
    except Exception:  # unknown zone: the schedule error says so; show UTC
        return rfc3339_local(t)


def _decision_out(d: Any) -> Obj | None:
    if d is None:
        return None
    return {
        "decision": d.decision,
        "earliest": _z(d.earliest),
        "most_recent": _z(d.most_recent),
        "missed": d.missed,
        "error": d.error,
        "job_name": d.job_name,
        "scheduled_timestamp": d.scheduled_timestamp,
        "next_wakeup": _z(d.next_wakeup),
        "events": list(d.events),
        "missed_runs_count": d.missed_count,
        "missed_runs": [_z(t) for t in d.missed_runs[:200]],
        "never_made_up_count": len(d.never_made_up),
        "deadline_dropped_count": len(d.deadline_dropped),
        "waiting_for": list(d.waiting_for),
        "replaces": list(d.replaces),
        "estimate_skipped": _z(d.estimate_skipped),
    }


def _occurrence_times(sched: Any, created: datetime, now: datetime, recs: list[_Job],
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


def _occurrence(r: Obj) -> Obj:
    """A slot of :func:`cronctl.history.slot_history` as a bundle occurrence record."""
    first = r["job_details"][0] if r["job_details"] else {}
    return {
        "expected": r["slot"], "expected_local": r["slot_local"], "jobs": r["jobs"],
        "created": first.get("created"), "started": first.get("started"), "completed": first.get("completed"),
        "outcome": first.get("outcome") if first.get("outcome") != "running" else None,
        "jobs_gone": [d["name"] for d in r["job_details"] if not d["exists"]],
        "delay_seconds": r["start_delay_seconds"], "manual_overlap": r["manual_beside"],
        "verdict": r["verdict"], "reason": r["reason"],
    }


def _infer_gaps(occ: list[Obj], periods: list[Obj], suspended_now: bool) -> None:
    """Record each run of lost slots that ends with a late catch-up Job (the controller starts only
    the most recent missed time after unsuspend or downtime, docs/SEMANTICS.md §4.4) as an inferred
    suspended (or controller-down) period; the slots' reasons already say why."""
    i = 0
    while i < len(occ):
        if occ[i]["verdict"] not in LOST or (suspended_now and occ[i]["verdict"] == "missed-suspended"):
            i += 1
            continue
        j = i
        while j < len(occ) and occ[j]["verdict"] in LOST:
            j += 1
        known = any(not p["inferred"] and p["start"] and p["end"] and p["start"] <= occ[i]["expected"] <= p["end"]
                    for p in periods)
        if not known and j < len(occ) and (occ[j]["delay_seconds"] or 0) > 10 and occ[j]["jobs"]:
            start, end = occ[i]["expected"], occ[j]["created"]
            periods.append({
                "start": start, "end": end,
                "source": (f"inferred: {j - i} scheduled time(s) without a Job, then a catch-up Job created "
                           f"late at {end} (suspend/unsuspend or controller downtime)"),
                "inferred": True, "lost": j - i,
            })
        i = j
    if suspended_now and periods and not periods[0]["inferred"]:
        periods[0]["lost"] = sum(1 for o in occ if o["verdict"] == "missed-suspended")


def _failure_view(job: Obj) -> Obj | None:
    """The Job's Failed (or, while its pods stop, FailureTarget) condition: reason and message."""
    f = model.job_failure(job)
    if f is None:
        return None
    return {"reason": f.reason, "message": f.message, "at": _z(f.at), "final": f.final}


def _gone_order(g: GoneJob) -> tuple[str, str]:
    return (_z(g.slot or g.created or g.finished or g.deleted) or "", g.name)


def _gone_view(g: GoneJob, occurrence_of: dict[str, str]) -> Obj:
    """A Job the events name that no longer exists (:func:`cronctl.history.gone_jobs`)."""
    return {
        "name": g.name, "origin": g.origin, "scheduled_for": _z(g.slot), "occurrence": occurrence_of.get(g.name),
        "created": _z(g.created), "finished": _z(g.finished), "outcome": g.outcome,
        "failure_reason": g.failure_reason, "failure_message": g.failure_message,
        "deleted": _z(g.deleted), "removed_by": g.removed_by, "removed": g.removed, "known_from": list(g.evidence),
    }


def _text(v: Any) -> str | None:
    """A string field of the API as a string (a hand-made dump may hold anything), None if absent."""
    return None if v is None or v == "" else str(v)


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _pod_view(p: Obj) -> Obj:
    st = p.get("status") or {}
    containers = []
    for key in ("initContainerStatuses", "containerStatuses"):
        for cs in st.get(key) or []:
            state = cs.get("state") or {}
            # the API gives exactly one of these; any other key (a hand-made dump) is not a state
            kind = next((k for k in ("waiting", "running", "terminated") if isinstance(state.get(k), dict)), None)
            detail = state[kind] if kind else {}
            last = (cs.get("lastState") or {}).get("terminated") or {}
            last = last if isinstance(last, dict) else {}
            containers.append({
                "name": str(cs.get("name", "")),
                "init": key == "initContainerStatuses",
                "state": kind,
                "reason": detail.get("reason"),
                "exit_code": detail.get("exitCode"),
                "signal": _int(detail.get("signal")),
                "message": _text(detail.get("message")),
                "restarts": int(cs.get("restartCount") or 0),
                "last_exit_code": last.get("exitCode"),
                "last_reason": _text(last.get("reason")),
                # which build ran: the image as the pod asked for it, and the digest the node resolved
                "image": _text(cs.get("image")),
                "image_id": _text(cs.get("imageID")),
            })
    return {
        "name": str(model.meta(p).get("name", "")),
        "uid": str(model.meta(p).get("uid", "")),
        "phase": st.get("phase"),
        "reason": _text(st.get("reason")),
        "message": _text(st.get("message")),
        "node": (p.get("spec") or {}).get("nodeName"),
        "created": _z(_ts(model.meta(p).get("creationTimestamp"))),
        "started": _z(_ts(st.get("startTime"))),
        "containers": containers,
    }
