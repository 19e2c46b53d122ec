"""What the ledger keeps of each object, as rows. PURE: no I/O, no database, no clock.

The recorder hands every CronJob, Job, Event and Pod it sees to these functions and writes what
they return (:mod:`cronctl.ledger.store`); the readers turn rows back into the objects the one
judge (:func:`cronctl.history.slot_history`) reads. The facts are derived by :mod:`cronctl.model`,
the same rules status, history and the bundle use: a Job's slot, origin, times and outcome are
never derived a second way here.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Iterable

from cronctl import model
from cronctl.redact import Redactor
from cronctl.timeutil import UTC, rfc3339_z

Obj = dict[str, Any]

#: the controller's CronJob events, and the Job events that tell about its pods; cronctl's own
#: events (reportingComponent cronctl) are kept whatever their reason
KEPT_KINDS = frozenset({"CronJob", "Job"})
#: how long a stored object may be (JSON characters): a Job whose template is larger is kept
#: without its pod template (the facts are in the row's columns)
MAX_OBJECT_CHARS = 64 * 1024
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _fingerprint(values: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(values, sort_keys=True, default=str).encode()).hexdigest()[:32]


def stored_object(obj: Obj, *, keep_managed_fields: bool = False, red: Redactor | None = None) -> Obj:
    """``obj`` as the ledger keeps it: secret material masked (cronctl.redact, as in a bundle; by
    ``red``, the namespace's redactor of the ledger's writes, so that values learned from the
    namespace's other objects are masked in it too),
    without managedFields (but a CronJob's, which say who wrote spec.suspend and when), and
    without its pod template when it is larger than :data:`MAX_OBJECT_CHARS`."""
    from cronctl.redact import strip_managed_fields

    out = (red or Redactor()).kube_object(obj if keep_managed_fields else strip_managed_fields(obj))
    if len(json.dumps(out, default=str)) > MAX_OBJECT_CHARS:
        spec = dict(out.get("spec") or {})
        spec.pop("template", None)
        jt = dict(spec.get("jobTemplate") or {})
        if jt:
            jt_spec = dict(jt.get("spec") or {})
            jt_spec.pop("template", None)
            jt["spec"] = jt_spec
            spec["jobTemplate"] = jt
        out = {**out, "spec": spec}
    return out


@dataclass(frozen=True)
class CronJobConfig:
    """The fields of a CronJob that change a verdict, at one resourceVersion. ``fingerprint`` is
    the same for two versions that judge alike: a new row is written only when it changes."""

    uid: str
    namespace: str
    name: str
    resource_version: str
    generation: int | None
    schedule: str
    time_zone: str | None
    suspend: bool
    suspend_manager: str | None
    suspend_at: datetime | None
    concurrency_policy: str
    starting_deadline_seconds: int | None
    successful_limit: int
    failed_limit: int
    fingerprint: str


def cronjob_config(cronjob: Obj) -> CronJobConfig:
    view = model.cronjob_view(cronjob)
    owners = model.suspend_owners(cronjob)
    timed = model.suspend_writes(cronjob)
    at, manager = timed[-1] if timed else (None, owners[-1][1] if owners else None)
    gen = model.meta(cronjob).get("generation")
    values = {"schedule": view.schedule, "time_zone": view.time_zone, "suspend": view.suspended,
              "policy": view.policy, "deadline": view.starting_deadline,
              "limits": [view.history.successful, view.history.failed]}
    return CronJobConfig(
        uid=view.uid, namespace=view.namespace, name=view.name,
        resource_version=str(model.meta(cronjob).get("resourceVersion") or ""),
        generation=gen if isinstance(gen, int) and not isinstance(gen, bool) else None,
        schedule=view.schedule, time_zone=view.time_zone, suspend=view.suspended, suspend_manager=manager,
        suspend_at=at, concurrency_policy=view.policy, starting_deadline_seconds=view.starting_deadline,
        successful_limit=view.history.successful, failed_limit=view.history.failed,
        fingerprint=_fingerprint(values))


def cronjob_owner(job: Obj) -> tuple[str, str] | None:
    """(uid, name) of the CronJob that controls ``job``, or None."""
    for ref in model.meta(job).get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("kind") == "CronJob" and ref.get("controller"):
            return str(ref.get("uid") or ""), str(ref.get("name") or "")
    return None


def job_slot(job: Obj, cronjob_name: str) -> datetime | None:
    """The slot a Job stands for: the controller's (scheduled-timestamp annotation or name), a
    cronctl run's occurrence, else a manual Job named like the controller's (slot-named run)."""
    r = model.job_record(job, cronjob_name, _EPOCH)
    if r.scheduled_for is not None:
        return r.scheduled_for
    if r.claims is not None:
        return r.claims
    tail = r.name[len(cronjob_name) + 1:] if r.name.startswith(cronjob_name + "-") else ""
    if tail.isdigit() and len(tail) <= 10:
        return _EPOCH + timedelta(minutes=int(tail))
    return None


def exit_codes(pods: Iterable[Obj]) -> list[dict[str, Any]]:
    """Each terminated container's exit code and reason, pod by pod."""
    out = []
    for view in map(model.pod_view, pods):
        for c in view.containers:
            if c.init:
                continue
            if c.state == "terminated" and c.exit_code is not None:
                code, reason = c.exit_code, c.reason
            elif c.last_exit_code is not None:  # restarted: the instance that ended last
                code, reason = c.last_exit_code, c.last_reason
            else:
                continue
            out.append({"pod": view.name, "container": c.name, "exit_code": code, "reason": reason})
    return out


def first_running(pods: Iterable[Obj]) -> datetime | None:
    """When the first worker of a Job started: the earliest container start of its pods."""
    times = [t for view in map(model.pod_view, pods) for c in view.containers if not c.init
             for t in (c.started_at, c.last_started_at) if t is not None]
    return min(times) if times else None


def event_kept(event: Obj) -> bool:
    """An event the ledger keeps: about a CronJob or a Job, or written by cronctl."""
    inv = event.get("involvedObject") or event.get("regarding") or {}
    component = str(event.get("reportingComponent") or (event.get("source") or {}).get("component") or "")
    return (isinstance(inv, dict) and inv.get("kind") in KEPT_KINDS) or component == model.FIELD_MANAGER


def event_times(event: Obj) -> tuple[datetime | None, datetime | None]:
    """(first, last) time of an event, whichever fields its writer filled."""
    first = model.when(event.get("firstTimestamp")) or model.when(event.get("eventTime")) \
        or model.created(event)
    series = event.get("series") or {}
    last = model.when(event.get("lastTimestamp")) or model.when(series.get("lastObservedTime")) or first
    return first, last


def suspend_spans(configs: list[CronJobConfig],
                  observed: list[datetime]) -> list[tuple[datetime, datetime | None, str]]:
    """The spans in which the recorded CronJob was suspended, from its config rows (oldest first,
    with the time each was observed): a span starts at the write's managedFields time (else when
    the recorder saw it) and ends when a config with suspend false was written (its managedFields
    time, else when seen); a span still open ends None (still suspended)."""
    spans: list[tuple[datetime, datetime | None, str]] = []
    start: tuple[datetime, str] | None = None
    prev: datetime | None = None  # when the config before was seen: a write's time must be after it

    def written(c: CronJobConfig, seen: datetime) -> datetime:
        ok = c.suspend_at is not None and (prev is None or prev < c.suspend_at) and c.suspend_at <= seen
        return c.suspend_at if ok and c.suspend_at is not None else seen

    for c, seen in zip(configs, observed):
        if c.suspend and start is None:
            at = written(c, seen)
            start = (at, f"spec.suspend set by {c.suspend_manager or 'unknown'} at {rfc3339_z(at)} "
                         "(recorded in the ledger)")
        elif not c.suspend and start is not None:
            spans.append((start[0], max(start[0], written(c, seen)), start[1]))
            start = None
        prev = seen
    if start is not None:
        spans.append((start[0], None, start[1]))
    return spans


def merge(live: Iterable[Obj], kept: Iterable[Obj]) -> list[Obj]:
    """``live`` objects, then the ``kept`` (ledger) ones the cluster no longer holds (by uid; an
    object without a uid is never matched, so never dropped)."""
    out = list(live)
    seen = {str(model.meta(o).get("uid") or "") for o in out} - {""}
    out += [o for o in kept if str(model.meta(o).get("uid") or "") not in seen]
    return out
