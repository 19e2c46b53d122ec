"""bundle.json: the published record of an incident bundle (cronctl/data/bundle.schema.json,
docs/OUTPUT.md#bundlejson), made of the typed results of :mod:`cronctl.bundle.result`. PURE.

This module's only job is that schema: every key of bundle.json is written here, and only here,
from the analysis (:func:`cronctl.bundle.analyse.analyse`) and the bundle's result
(:func:`cronctl.bundle.assemble.build_bundle`); times become RFC3339 UTC text here.

Why it lives in the service and not in ``cronctl/cli/`` (where the commands' ``-o json`` documents
are made): bundle.json is not the command's output but one file of the archive the service writes.
It is masked with the other files, listed in SHA256SUMS with them, and the reports of the same
archive (REPORT.md, report.html, :mod:`cronctl.bundle.render`) are drawn from this document, so the
file, the reports drawn from it and the archive are made in one pass by ``make_bundle``. What the
command prints (``cronctl bundle -o json``, the summary) is made in ``cronctl/cli/bundle.py``.
The raw API objects the bundle keeps as evidence (objects.yaml) are evidence, not this document.
"""

from __future__ import annotations

import json
from typing import Any

from cronctl import __version__
from cronctl.bundle.result import (BundleResult, BundledCronJob, CronJobAnalysis, Job, Occurrence, Overlap, Pod,
                                   RemovedJob, ScheduleFindings, SuspendedPeriod)
from cronctl.schedule.controller import Decision
from cronctl.textsafe import json_visible
from cronctl.timeutil import rfc3339_in_zone, rfc3339_z, rfc3339_z_opt

Obj = dict[str, Any]

SCHEMA_VERSION = 2  # 2: overlaps as groups (one per span where Jobs ran at once), gitops


def bundle_doc(result: BundleResult) -> Obj:
    """The bundle.json document of ``result``."""
    c = result.collected
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "cronctl-bundle",
        "collected": {
            "at": rfc3339_z(c.at),
            "by": c.by,
            "source": c.source,
            "dump_file": c.dump_file,
            "namespace": c.namespace,
            "server": c.server,
            "server_version": c.server_version,
            "cronctl_version": __version__,
            "now": rfc3339_z(c.now),
            "now_source": c.now_source,
            "options": dict(c.options),
            "request_count": c.request_count,
        },
        "partial": result.partial,
        "missing": [{"what": m.what, "reason": m.reason, "object": m.object} for m in result.missing],
        "logs_note": result.logs_note,
        "redaction": {"values_masked": result.values_masked, "distinct_values": result.distinct_values},
        "counts": {"cronjobs": result.counts.cronjobs, "jobs": result.counts.jobs, "pods": result.counts.pods,
                   "events": result.counts.events, "logs": result.counts.logs},
        "cronjobs": [_bundled(b) for b in result.cronjobs],
    }


def bundle_json(doc: Obj) -> bytes:
    """bundle.json's bytes: compact (the C encoder is ~10x faster than indent= on a 2,000-Job bundle;
    read it with jq), and, for a terminal, every control, bidi, separator and zero-width character,
    and a lone surrogate that UTF-8 cannot hold, written as its \\uXXXX escape (the same data)."""
    return (json_visible(json.dumps(doc, ensure_ascii=False, separators=(",", ":"))) + "\n").encode("utf-8")


def _bundled(b: BundledCronJob) -> Obj:
    record = cronjob_record(b.analysis)
    record["lint"] = list(b.lint)
    record["logs"] = [{"pod": lg.pod, "container": lg.container, "previous": lg.previous, "file": lg.file,
                       "bytes": lg.bytes, "truncated": lg.truncated, "missing": lg.missing} for lg in b.logs]
    record["summary"] = summary(record)
    return record


def cronjob_record(a: CronJobAnalysis) -> Obj:
    """One CronJob's record of bundle.json, without what the bundle adds (``lint``, ``logs``, ``summary``)."""
    v = a.view
    return {
        "name": v.name,
        "namespace": v.namespace,
        "uid": v.uid,
        "created": rfc3339_z_opt(a.created),
        "spec": {
            "schedule": v.schedule, "time_zone": v.time_zone, "concurrency_policy": v.policy,
            "suspend": v.suspended, "starting_deadline_seconds": v.starting_deadline,
            "successful_jobs_history_limit": v.history.successful,
            "failed_jobs_history_limit": v.history.failed,
        },
        "checkpoint": {"last_schedule_time": rfc3339_z_opt(v.last_schedule),
                       "last_successful_time": rfc3339_z_opt(v.last_successful),
                       "last_successful_from": a.last_successful_from},
        "schedule": _schedule(a.schedule, v.schedule, v.time_zone),
        "active": {
            "from_status": list(a.active.from_status),
            "unfinished_children": list(a.active.unfinished_children),
            "not_in_status": list(a.active.not_in_status),
            "stale_in_status": list(a.active.stale_in_status),
        },
        "jobs": [_job(j) for j in a.jobs],
        "removed_jobs": [_removed(g) for g in a.removed_jobs],
        "window": {"start": rfc3339_z_opt(a.window.start), "end": rfc3339_z_opt(a.window.end),
                   "truncated": a.window.truncated},
        "occurrences": [_occurrence(o) for o in a.occurrences],
        "verdict_counts": a.verdict_counts,
        "overlaps": [_overlap(o) for o in a.overlaps],
        "never_made_up": [rfc3339_z_opt(t) for t in a.never_made_up],
        "lost_history": list(a.lost_history),
        "failed_history": list(a.failed_history),
        "suspended_periods": [_period(p) for p in a.suspended_periods],
        "events": list(a.events),
        "event_counts": a.event_counts,
        "unexpected_jobs": list(a.unexpected_jobs),
        "notes": list(a.notes),
        # present only when a GitOps tool manages the CronJob (cronctl.gitops.detect)
        **({"gitops": {**a.gitops.as_dict(), "words": a.gitops.words()}} if a.gitops is not None else {}),
    }


def summary(record: Obj) -> Obj:
    """A CronJob's record in brief (its ``summary``, and what ``cronctl bundle`` prints of it)."""
    counts = record["event_counts"]
    return {
        "name": record["name"],
        "schedule": record["schedule"]["expression"],
        "zone": record["schedule"]["zone"],
        "jobs": len(record["jobs"]),
        "verdicts": record["verdict_counts"],
        "failed": len(record["failed_history"]),
        "overlaps": len(record["overlaps"]),
        "never_made_up": len(record["never_made_up"]),
        "unexpected_job_events": int(counts.get("UnexpectedJob", 0)),
        # the warnings about Jobs made neither by the controller nor by cronctl: runs by hand
        "unexpected_job_events_by_hand": sum(u["events"] for u in record["unexpected_jobs"]
                                             if u["made_by"] == "unknown"),
        "job_already_active_events": int(counts.get("JobAlreadyActive", 0)),
        "active_not_in_status": record["active"]["not_in_status"],
        "decision": (record["schedule"]["decision"] or {}).get("decision"),
    }


def _schedule(s: ScheduleFindings, expression: str, time_zone: str | None) -> Obj:
    return {
        "expression": expression,
        "time_zone": time_zone,
        "zone": s.zone,
        "zone_from_prefix": s.zone_from_prefix,
        "error": s.error,
        "base": rfc3339_z_opt(s.base),
        "base_source": s.base_source,
        "now": rfc3339_z_opt(s.now),
        "due": [rfc3339_z_opt(t) for t in s.due],
        "due_truncated": s.due_truncated,
        "next_runs": [rfc3339_z_opt(t) for t in s.next_runs],
        "next_runs_local": [rfc3339_in_zone(t, s.zone) for t in s.next_runs],
        "decision": _decision(s.decision),
        "if_unsuspended": _decision(s.if_unsuspended),
    }


def _decision(d: Decision | None) -> Obj | None:
    if d is None:
        return None
    return {
        "decision": d.decision,
        "earliest": rfc3339_z_opt(d.earliest),
        "most_recent": rfc3339_z_opt(d.most_recent),
        "missed": d.missed,
        "error": d.error,
        "job_name": d.job_name,
        "scheduled_timestamp": d.scheduled_timestamp,
        "next_wakeup": rfc3339_z_opt(d.next_wakeup),
        "events": list(d.events),
        "missed_runs_count": d.missed_count,
        "missed_runs": [rfc3339_z_opt(t) for t in d.missed_runs[:200]],
        "never_made_up_count": len(d.never_made_up),
        "deadline_dropped_count": len(d.deadline_dropped),
        "waiting_for": list(d.waiting_for),
        "replaces": list(d.replaces),
        "estimate_skipped": rfc3339_z_opt(d.estimate_skipped),
    }


def _job(j: Job) -> Obj:
    r, f = j.record, j.failure
    return {
        "name": r.name, "uid": r.uid, "origin": r.origin,
        "scheduled_for": rfc3339_z_opt(r.scheduled_for), "claims_occurrence": rfc3339_z_opt(r.claims),
        "created": rfc3339_z_opt(r.created), "started": rfc3339_z_opt(r.started), "completed": rfc3339_z_opt(r.completed),
        "outcome": r.outcome, "running": r.running,
        "duration_seconds": j.duration_seconds,
        "in_status_active": j.in_status_active,
        "delay_seconds": j.delay_seconds,
        "occurrence": j.occurrence,
        "failure": None if f is None else {"reason": f.reason, "message": f.message, "at": rfc3339_z_opt(f.at),
                                           "final": f.final},
        "pods": [_pod(p) for p in j.pods],
    }


def _pod(p: Pod) -> Obj:
    return {
        "name": p.name,
        "uid": p.uid,
        "phase": p.phase,
        "reason": p.reason,
        "message": p.message,
        "node": p.node,
        "created": rfc3339_z_opt(p.created),
        "started": rfc3339_z_opt(p.started),
        "containers": [{
            "name": c.name, "init": c.init, "state": c.state, "reason": c.reason, "exit_code": c.exit_code,
            "signal": c.signal, "message": c.message, "restarts": c.restarts, "last_exit_code": c.last_exit_code,
            "last_reason": c.last_reason, "image": c.image, "image_id": c.image_id,
        } for c in p.containers],
    }


def _removed(r: RemovedJob) -> Obj:
    g = r.gone
    return {
        "name": g.name, "origin": g.origin, "scheduled_for": rfc3339_z_opt(g.slot), "occurrence": r.occurrence,
        "created": rfc3339_z_opt(g.created), "finished": rfc3339_z_opt(g.finished), "outcome": g.outcome,
        "failure_reason": g.failure_reason, "failure_message": g.failure_message,
        "deleted": rfc3339_z_opt(g.deleted), "removed_by": g.removed_by, "removed": g.removed,
        "known_from": list(g.evidence),
    }


def _occurrence(o: Occurrence) -> Obj:
    out: Obj = {
        "expected": o.expected, "expected_local": o.expected_local, "jobs": list(o.jobs),
        "created": o.created, "started": o.started, "completed": o.completed, "outcome": o.outcome,
        "slot_outcome": o.slot_outcome, "failure_reason": o.failure_reason,
        "jobs_gone": list(o.jobs_gone), "delay_seconds": o.delay_seconds, "manual_overlap": list(o.manual_overlap),
        "verdict": o.verdict, "reason": o.reason,
    }
    if o.effect is not None:  # only where cronctl claim's rows exist for the workflow (bundle --ledger)
        out["effect"] = dict(o.effect)
    return out


def _overlap(o: Overlap) -> Obj:
    g = o.group
    return {
        "start": rfc3339_z_opt(g.start), "end": rfc3339_z_opt(g.end), "seconds": int((g.end - g.start).total_seconds()),
        "ongoing": o.ongoing, "job_count": o.job_count,
        "jobs": [{"name": n, "origin": origin} for n, origin in o.jobs],
        "manual": g.manual, "scheduled": len(g.names) - g.manual,
        "manual_beside_scheduled": g.manual_beside_scheduled,
        "peak": g.peak, "peak_at": rfc3339_z_opt(g.peak_at),
    }


def _period(p: SuspendedPeriod) -> Obj:
    if p.run:  # the keys in the order bundle.json has always written a finished run's period
        return {"start": p.start, "end": p.end, "inferred": p.inferred, "lost": p.lost, "source": p.source}
    return {"start": p.start, "end": p.end, "source": p.source, "inferred": p.inferred, "lost": p.lost}
