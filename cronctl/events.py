"""What the events say: which events belong to a CronJob, and the Jobs they name that are gone. PURE.

No I/O, no clock, no kubernetes import. Used by ``cronctl history`` (:mod:`cronctl.history`) and
the incident bundle (:mod:`cronctl.bundle.analyse`): one matching of events for both.

Events outlive the objects they are about (the API server keeps them about an hour), so a Job or
pod deleted by the history limits is still named by its events; :func:`events_for` matches them
by involvedObject uid, else by name (the controller's Job name pattern), and :func:`gone_jobs`
tells what they say about each Job that is gone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Iterable, TypedDict

from cronctl import model
from cronctl.timeutil import rfc3339_z_opt

Obj = dict[str, Any]


# --- which events belong to the CronJob -------------------------------------------------------

#: the reasons the issue asks to highlight: a manual/forgotten Job, and Forbid skipping a time
#: (``CronctlDuplicate``: cronctl's hold guard named a Job made beside its run, cronctl/procedure/guard.py)
HIGHLIGHT_REASONS = frozenset({"UnexpectedJob", "JobAlreadyActive", "CronctlDuplicate"})
#: warnings from the CronJob controller that explain missed or odd runs
CONTROLLER_WARNINGS = frozenset({
    "TooManyMissedTimes", "MissSchedule", "FailedCreate", "InvalidSchedule", "UnparseableSchedule",
    "UnknownTimeZone", "UnsupportedSchedule", "FailedGet", "FailedDelete",
})
class EventRecord(TypedDict):
    """One event as cronctl reads it, core/v1 and events.k8s.io/v1 alike (``first``/``last`` UTC)."""

    name: str
    type: str  # Normal | Warning
    reason: str
    message: str
    object_kind: str
    object_name: str
    object_uid: str
    count: int
    first: str | None
    last: str | None
    source: str  # the component that reported it
    highlight: bool  # a reason the bundle highlights (HIGHLIGHT_REASONS)
    warning: bool  # a Warning, or a controller warning (CONTROLLER_WARNINGS)
    matched_by: str  # uid | name (its object is gone: matched by the controller's name pattern)


def event_view(ev: Obj) -> EventRecord:
    """A core/v1 or events.k8s.io/v1 Event as one flat record (times as UTC strings)."""
    inv = ev.get("involvedObject") or ev.get("regarding") or {}
    series = ev.get("series") or {}
    first = model.when(ev.get("firstTimestamp")) or model.when(ev.get("deprecatedFirstTimestamp")) or model.when(ev.get("eventTime"))
    last = (model.when(ev.get("lastTimestamp")) or model.when(series.get("lastObservedTime"))
            or model.when(ev.get("deprecatedLastTimestamp")) or first or model.when(model.meta(ev).get("creationTimestamp")))
    first = first or last
    count = ev.get("count") or series.get("count") or ev.get("deprecatedCount") or 1
    source = ev.get("source") or {}
    reason = str(ev.get("reason") or "")
    etype = str(ev.get("type") or "Normal")
    return {
        "name": str(model.meta(ev).get("name", "")),
        "type": etype,
        "reason": reason,
        "message": str(ev.get("message") or ev.get("note") or ""),
        "object_kind": str(inv.get("kind") or ""),
        "object_name": str(inv.get("name") or ""),
        "object_uid": str(inv.get("uid") or ""),
        "count": int(count),
        "first": rfc3339_z_opt(first),
        "last": rfc3339_z_opt(last),
        "source": str(source.get("component") or ev.get("reportingController") or ev.get("reportingComponent") or ""),
        "highlight": reason in HIGHLIGHT_REASONS,
        "warning": etype == "Warning" or reason in CONTROLLER_WARNINGS,
        "matched_by": "uid",
    }


def events_for(events: Iterable[Obj], cronjob: Obj, job_uids: set[str], pod_uids: set[str],
               job_names: set[str], pod_names: set[str]) -> list[EventRecord]:
    """The events of the CronJob, its Jobs and their pods, oldest first.

    Matched by involvedObject uid; an event whose object is gone (a Job or pod deleted by the
    history limits, which outlive them by up to the event TTL) is matched by name: the CronJob's
    scheduled-Job name pattern ``<cronjob>-<digits>`` and pods ``<job>-<suffix>``. Those are marked
    ``matched_by: name``.
    """
    cj_meta = model.meta(cronjob)
    cj_uid = str(cj_meta.get("uid", ""))
    cj_name = str(cj_meta.get("name", ""))
    job_pat = re.compile(re.escape(cj_name) + r"-\d{8,10}")
    pod_pat = re.compile(re.escape(cj_name) + r"-\d{8,10}-[a-z0-9]{5}")
    uids = {cj_uid} | job_uids | pod_uids
    out: list[EventRecord] = []
    for ev in events:
        inv = ev.get("involvedObject") or ev.get("regarding") or {}
        uid = str(inv.get("uid") or "")
        kind = inv.get("kind")
        name = str(inv.get("name") or "")
        by = None
        if uid and uid in uids:
            by = "uid"
        elif kind == "CronJob" and name == cj_name and not uid:
            by = "name"
        elif kind == "Job" and (name in job_names or job_pat.fullmatch(name)) and uid not in uids:
            by = "name"
        elif kind == "Pod" and (name in pod_names or pod_pat.fullmatch(name)) and uid not in uids:
            by = "name"
        if by is None:
            continue
        rec = event_view(ev)
        rec["matched_by"] = by
        out.append(rec)
    out.sort(key=lambda r: (r["last"] or "", r["first"] or "", r["object_name"], r["reason"]))
    return out


# --- Jobs that are gone: what the events still say about them -----------------------------

_NAME = r"([a-z0-9](?:[-a-z0-9.]*[a-z0-9])?)"
#: the CronJob controller's events that name a Job (pkg/controller/cronjob/cronjob_controllerv2.go)
_NAMED_BY = {
    "SuccessfulCreate": re.compile(r"Created job " + _NAME),
    "SawCompletedJob": re.compile(r"Saw completed job: " + _NAME + r", condition: (\w+)"),
    "SuccessfulDelete": re.compile(r"Deleted job " + _NAME),
    "MissingJob": re.compile(r"Active job went missing: " + _NAME),
    "UnexpectedJob": re.compile(r"did not create or forgot: " + _NAME),
}
#: the Job controller's event reasons on a Job that ended (Normal Completed, or Warning with the
#: reason of its Failed condition)
_JOB_FAILED_REASONS = frozenset({"BackoffLimitExceeded", "DeadlineExceeded", "PodFailurePolicy",
                                 "MaxFailedIndexesExceeded", "FailedIndexes"})
#: how a gone Job was removed (``removed_by``)
REMOVERS = ("history-limit", "cronjob-controller", "ttl-after-finished", "deleted-while-running", "unknown")


@dataclass
class GoneJob:
    """A Job of the CronJob that no longer exists, as its events still tell it.

    Events outlive the objects they are about (the API server keeps them about an hour), so a Job
    the history limit or a TTL deleted is still named by the controller's ``SuccessfulCreate``
    ("Created job NAME"), ``SawCompletedJob`` and ``SuccessfulDelete`` ("Deleted job NAME"), and by
    its own and its pods' events. ``removed_by`` / ``removed`` say what deleted it, as far as the
    evidence tells (see :func:`gone_jobs`).
    """

    name: str
    origin: str  # scheduled (the controller's name or its SuccessfulCreate) | manual
    slot: datetime | None  # from the controller's name <cronjob>-<minutes since the epoch>
    created: datetime | None = None  # SuccessfulCreate
    finished: datetime | None = None  # when the controller or the Job controller saw it end
    outcome: str | None = None  # Complete | Failed
    failure_reason: str | None = None  # the Job controller's Warning event (its Failed condition)
    failure_message: str | None = None
    deleted: datetime | None = None  # SuccessfulDelete (the CronJob controller deleted it)
    missing: datetime | None = None  # MissingJob (gone while in .status.active)
    evidence: list[str] = field(default_factory=list)  # "CronJob/SuccessfulCreate", "Job/Completed", ...
    removed_by: str = "unknown"
    removed: str = ""


def gone_jobs(evs: Iterable[EventRecord], cronjob: Obj, existing: set[str],
              recs: list[model.JobRecord]) -> dict[str, GoneJob]:
    """The CronJob's Jobs that ``evs`` (records of :func:`events_for`) name but that do not exist
    (``existing``: the names of the Jobs there are), each with what removed it.

    A controller's event with an aggregated message ("(combined from similar events): Created job
    X") names the Job of its latest occurrence, whose time is the event's ``last``.
    """
    cj_name = model.name_of(cronjob)
    out: dict[str, GoneJob] = {}

    def get(name: str) -> GoneJob:
        if name not in out:
            slot = model.slot_of_name(name, cj_name)
            out[name] = GoneJob(name=name, origin="scheduled" if slot is not None else "manual", slot=slot)
        return out[name]

    def seen(g: GoneJob, what: str) -> None:
        if what not in g.evidence:
            g.evidence.append(what)

    for ev in evs:
        kind, reason, at = ev["object_kind"], ev["reason"], model.when(ev["last"])
        if kind == "CronJob" and reason in _NAMED_BY:
            m = _NAMED_BY[reason].search(ev["message"])
            if m is None or m.group(1) in existing:
                continue
            g = get(m.group(1))
            seen(g, f"CronJob/{reason}")
            if reason == "SuccessfulCreate":
                g.created, g.origin = at, "scheduled"
            elif reason == "SawCompletedJob":
                g.finished = g.finished or at
                g.outcome = g.outcome or (m.group(2) if m.group(2) in ("Complete", "Failed") else None)
            elif reason == "SuccessfulDelete":
                g.deleted = at
            elif reason == "MissingJob":
                g.missing = at
            elif reason == "UnexpectedJob":
                g.origin = "manual" if g.created is None else g.origin
        elif kind == "Job" and ev["object_name"] not in existing and ev["matched_by"] == "name":
            g = get(ev["object_name"])
            seen(g, f"Job/{reason}")
            if reason == "Completed":
                g.finished, g.outcome = g.finished or at, "Complete"
            elif reason in _JOB_FAILED_REASONS:
                g.finished, g.outcome = g.finished or at, "Failed"
                g.failure_reason, g.failure_message = reason, ev["message"] or None
        elif kind == "Pod" and ev["matched_by"] == "name":
            job = ev["object_name"].rsplit("-", 1)[0]
            if job not in existing and (job in out or model.slot_of_name(job, cj_name) is not None):
                seen(get(job), "Pod/" + reason)
    kept = {o: sum(1 for r in recs if r.outcome == o) for o in ("Complete", "Failed")}
    for g in out.values():
        g.removed_by, g.removed = _removal(g, model.cronjob_view(cronjob), kept)
    return out


def _removal(g: GoneJob, view: model.CronJobView, kept: dict[str, int]) -> tuple[str, str]:
    """What removed a gone Job, in words: the CronJob controller (its SuccessfulDelete event), a
    client while the Job ran (MissingJob), the TTL-after-finished controller (it records no
    event), or unknown (a person, another client, or a controller whose event expired)."""
    policy, limits = view.policy, view.history
    if g.deleted is not None:
        if policy == "Replace" and g.outcome is None:
            return ("cronjob-controller", f"deleted by the CronJob controller at {rfc3339_z_opt(g.deleted)} (SuccessfulDelete): "
                    "Replace removed it while it ran, or the history limit")
        # the outcome unknown (no SawCompletedJob left): either limit
        named = " or ".join(limits.shown(o) for o in ("Complete", "Failed") if g.outcome in (o, None))
        return ("history-limit", f"deleted by the CronJob controller's history limit at {rfc3339_z_opt(g.deleted)} "
                f"(SuccessfulDelete; {named})")
    if g.missing is not None:
        return ("deleted-while-running", f"deleted while it was still active, not by the CronJob controller "
                f"(MissingJob at {rfc3339_z_opt(g.missing)}): a person or another client")
    ttl = view.job_ttl
    if ttl is not None:
        return ("ttl-after-finished", f"probably the TTL-after-finished controller (ttlSecondsAfterFinished={ttl}, "
                "it records no event), or a person")
    lims = {o: limits.of(o) for o in ("Complete", "Failed")}
    if all(kept[o] < lims[o] for o in ([g.outcome] if g.outcome else kept)):
        # the limit deletes down to the limit, never below it: fewer left means another deletion
        return ("unknown", f"no event says who deleted it, and the history limits do not explain it (kept now: "
                f"{kept['Complete']} succeeded of {lims['Complete']}, {kept['Failed']} failed of {lims['Failed']}): "
                "a person or another client, unless the limits were changed since")
    return ("unknown", "no event says who deleted it: the history limit (its SuccessfulDelete event expired), "
            "a person or another client")


# --- UnexpectedJob: whose Jobs the controller warned about ---------------------------------

_CRONCTL_CREATED = re.compile(r"created Job " + _NAME)


def unexpected_jobs(evs: Iterable[EventRecord], cronjob: Obj, children: Iterable[Obj]) -> list[Obj]:
    """The Jobs named by the controller's ``UnexpectedJob`` warnings (a running Job of the CronJob
    that the controller did not create: it warns at every sync until the Job ends), each with the
    number of warnings and who made it:

    - ``cronctl`` when the evidence says a cronctl run made it (the Job's ``cronctl.dev/run-id``,
      the run record, ``cronctl.dev/runs`` or cronctl's own ``CronctlJobCreated`` event);
    - ``controller`` when the controller made it and forgot it (a restart between creating and
      recording it): its ``SuccessfulCreate`` event names it, or the Job carries the controller's
      scheduled-timestamp and no manual mark;
    - else ``unknown``: ``kubectl create job --from``, a script, another controller, or a cronctl
      run whose trail is gone.

    Evidence, not proof: annotations are written by whoever made the Job."""
    evs = list(evs)
    counts: dict[str, int] = {}
    for ev in evs:
        m = _NAMED_BY["UnexpectedJob"].search(ev["message"]) if ev["reason"] == "UnexpectedJob" else None
        if m:
            counts[m.group(1)] = counts.get(m.group(1), 0) + int(ev["count"])
    if not counts:
        return []
    ours = {model.name_of(j) for j in children if model.ANN_RUN_ID in model.annotations(j)}
    ours |= {r.job_name for r in model.read_runs(cronjob) if r.job_name}
    rec = model.read_record(cronjob)
    if rec is not None and rec.job_name:
        ours.add(rec.job_name)
    # the controller's own Job that it forgot (it restarted between creating and recording it)
    controllers = {model.name_of(j) for j in children
                   if model.origin(j) == "scheduled" and model.scheduled_for(j) is not None}
    for ev in evs:
        m = _CRONCTL_CREATED.search(ev["message"]) if ev["reason"] == "CronctlJobCreated" else None
        if m:
            ours.add(m.group(1))
        m = _NAMED_BY["SuccessfulCreate"].search(ev["message"]) if ev["reason"] == "SuccessfulCreate" else None
        if m and ev["object_kind"] == "CronJob":
            controllers.add(m.group(1))
    return [{"job": n, "events": c,
             "made_by": "cronctl" if n in ours else "controller" if n in controllers else "unknown"}
            for n, c in sorted(counts.items())]
