"""The one place the unit tests build Kubernetes objects: CronJobs, Jobs, Pods and Events as plain
dicts in the API's shapes (what ``kubectl get -o json`` shows), with keyword arguments and defaults
that make a test state only what its scenario is about.

    cj = cronjob(policy="Forbid", last=T(10, 2))
    a = scheduled(T(10, 0), took=150)                 # the controller's Job of the 10:00 slot
    b = job("cj-manual", created=T(10, 0, 40), manual=True, done=T(10, 1, 10), outcome="Failed")
    evs = [job_already_active(T(10, 1))]

Every call returns a fresh object (what it is given is copied), so a test may change it. Times
are aware ``datetime`` objects (``T(h, m, s)`` is 2026-12-02 in UTC) or API strings; either is
written the API's way (``2026-12-02T10:00:00Z``). Defaults: namespace ``ns``, CronJob ``cj`` with
uid ``UID``; a Job is owned by it through a controller reference.

The tests on the real control plane build their CronJobs with ``cronjob_body`` of
tests/cluster/cluster_support.py (what the API server takes, run by the pod simulator).
"""

from __future__ import annotations

import copy
from datetime import datetime, timedelta, timezone
from typing import Any

UTC = timezone.utc
UID = "cj-uid"
Obj = dict[str, Any]
Time = datetime | str

SCHEDULED_TS = "batch.kubernetes.io/cronjob-scheduled-timestamp"
INSTANTIATE = "cronjob.kubernetes.io/instantiate"
OCCURRENCE = "cronctl.dev/occurrence"
OPERATOR = "cronctl.dev/operator"
RUN_ID = "cronctl.dev/run-id"
_UNSET: Any = object()


def z(t: datetime) -> str:
    """A time as the API writes it."""
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def stamp(t: Time) -> str:
    """A datetime as the API writes it; a string as it is."""
    return t if isinstance(t, str) else z(t)


def _meta(name: str, **fields: Any) -> Obj:
    """metadata with ``name`` and each field given (None: left out), in the API's usual order."""
    return {"name": name, **{k: v for k, v in fields.items() if v is not None}}


def T(h: int, m: int, s: int = 0, day: int = 2) -> datetime:
    """2026-12-<day> h:m:s UTC."""
    return datetime(2026, 12, day, h, m, s, tzinfo=UTC)


def slotname(t: datetime, cj: str = "cj") -> str:
    """The controller's name for the Job of slot t (getJobName: Unix minutes)."""
    return f"{cj}-{int(t.timestamp()) // 60}"


# --- CronJob ---------------------------------------------------------------------------------------

def cronjob(schedule: str = "*/1 * * * *", *, name: str = "cj", namespace: str | None = "ns", uid: str | None = UID,
            tz: str | None = None, policy: str | None = None, deadline: int | None = None,
            suspend: bool | None = False, last: Time | None = None, last_ok: Time | None = None,
            suspend_written: Time | None = None, managed: list[Any] | None = None,
            created: Time | None = T(9, 0), ok_limit: int | None = None, failed_limit: int | None = None,
            active: list[str] | None = None, ttl: int | None = None, labels: dict[str, str] | None = None,
            annotations: dict[str, str] | None = None, resource_version: str | None = None,
            generation: int | None = None, containers: list[Obj] | None = None, pod: Obj | None = None,
            job_template: Obj | None = None, status: Obj | None = None, **spec: Any) -> Obj:
    """A CronJob. ``last``/``last_ok``: status.lastScheduleTime/lastSuccessfulTime; ``active``: names
    of active Jobs; ``suspend_written``: a managedFields entry of kubectl-patch writing spec.suspend
    then (``managed`` gives the whole list); ``ok_limit``/``failed_limit``: the history limits;
    ``ttl``: the jobTemplate's ttlSecondsAfterFinished; ``pod``: the pod template's spec and
    ``containers`` its containers (neither: the jobTemplate has no pod template), ``job_template``
    replaces the jobTemplate whole;
    ``status`` replaces the status; ``spec`` sets further spec fields last. A None leaves a field out.
    """
    if job_template is None:
        jspec: Obj = {} if ttl is None else {"ttlSecondsAfterFinished": ttl}
        if pod is not None or containers is not None:
            jspec["template"] = {"spec": {**(pod or {}), **({} if containers is None else {"containers": containers})}}
        job_template = {"spec": jspec}
    s: Obj = {"schedule": schedule}
    if suspend is not None:
        s["suspend"] = suspend
    s["jobTemplate"] = job_template
    for key, value in (("timeZone", tz), ("concurrencyPolicy", policy), ("startingDeadlineSeconds", deadline),
                       ("successfulJobsHistoryLimit", ok_limit), ("failedJobsHistoryLimit", failed_limit)):
        if value is not None:
            s[key] = value
    s.update(spec)
    meta = _meta(name, namespace=namespace, uid=uid, resourceVersion=resource_version, generation=generation,
                 creationTimestamp=stamp(created) if created is not None else None, labels=labels,
                 annotations=annotations)
    if suspend_written is not None:
        managed = [*(managed or []), {"manager": "kubectl-patch", "operation": "Update",
                                      "time": stamp(suspend_written), "fieldsV1": {"f:spec": {"f:suspend": {}}}}]
    if managed is not None:
        meta["managedFields"] = managed
    if status is None:
        status = {}
        if last is not None:
            status["lastScheduleTime"] = stamp(last)
        if active:
            status["active"] = [{"name": a, "namespace": namespace or "ns"} for a in active]
        if last_ok is not None:
            status["lastSuccessfulTime"] = stamp(last_ok)
    return copy.deepcopy({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": meta, "spec": s, "status": status})


def manifest(name: str = "cj", schedule: str = "*/1 * * * *", tz: str | None = None, *, namespace: str | None = "ns",
             **kw: Any) -> Obj:
    """A CronJob as written in a manifest file (for lint, conventions, alerts): ``cronjob`` without
    uid, creationTimestamp and status, and spec.suspend only when given."""
    for key in ("uid", "created", "suspend"):
        kw.setdefault(key, None)
    obj = cronjob(schedule, name=name, namespace=namespace, tz=tz, **kw)
    del obj["status"]
    return obj


# --- Job -------------------------------------------------------------------------------------------

def owner_ref(kind: str = "CronJob", name: str = "cj", uid: str = UID, controller: bool = True) -> Obj:
    return {"kind": kind, "name": name, "uid": uid, "controller": controller}


def job(name: str, *, slot: Time | None = None, created: Time | None = None, start: Time | None = _UNSET,
        done: Time | None = None, outcome: str | None = None, why: str | None = None, interim: bool = False,
        manual: bool = False, occurrence: Time | None = None, operator: str | None = None, run_id: str = "r1",
        cj: str = "cj", cj_uid: str | None = UID, owner: Obj | None = None, controller: bool = True,
        namespace: str | None = "ns",
        uid: str | None = _UNSET, annotations: dict[str, str] | None = None, labels: dict[str, str] | None = None,
        resource_version: str | None = None, conditions: list[Obj] | None = None, status: Obj | None = None,
        spec: Obj | None = None) -> Obj:
    """A Job of CronJob ``cj`` with uid ``cj_uid`` (``owner``: of that CronJob object; ``cj_uid=None``:
    no owner).

    Which kind of Job: ``slot`` (the controller's scheduled-timestamp annotation: a scheduled Job,
    name it ``slotname(slot)``), ``manual`` (``kubectl create job --from``'s instantiate: manual),
    ``operator`` (a run of cronctl: operator and run-id, ``occurrence`` the slot it stands in for).
    ``annotations`` come first, then these.

    Times: ``created`` (creationTimestamp; default ``start``), ``start`` (startTime; default created
    + 1 s for a datetime, else created). A finished Job has ``outcome`` (Complete, the default when ``done`` is
    given, or Failed: its condition) and ``done``: the condition's time, and completionTime when
    Complete — None when Failed; without ``done`` the condition has no time and there is no
    completionTime. ``why`` is the Failed condition's reason; ``interim``: first the condition
    the Job controller of Kubernetes 1.31+ sets before the final one, SuccessCriteriaMet or
    FailureTarget). ``conditions`` replaces the
    conditions; ``status`` replaces the whole status.
    """
    ann: dict[str, str] = dict(annotations or {})
    if slot is not None:
        ann[SCHEDULED_TS] = stamp(slot)
    if manual:
        ann[INSTANTIATE] = "manual"
    if occurrence is not None:
        ann[OCCURRENCE] = stamp(occurrence)
    if operator:
        ann[OPERATOR] = operator
        ann[RUN_ID] = run_id
    if owner is not None:
        cj, cj_uid = owner["metadata"]["name"], owner["metadata"]["uid"]
    if created is None and start is not _UNSET:
        created = start
    if status is None:
        status = {}
        if start is _UNSET:
            start = created + timedelta(seconds=1) if isinstance(created, datetime) else created
        if start is not None:
            status["startTime"] = stamp(start)
        if done is not None or outcome is not None:
            outcome = outcome or "Complete"
            cond: Obj = {"type": outcome, "status": "True"}
            if done is not None:
                status["completionTime"] = stamp(done) if outcome == "Complete" else None
                cond["lastTransitionTime"] = stamp(done)
            if why:
                cond.update(reason=why, message=f"Job failed: {why}")
            status["conditions"] = [cond]
            if interim:
                first = "SuccessCriteriaMet" if outcome == "Complete" else "FailureTarget"
                status["conditions"].insert(0, {**cond, "type": first})
        if conditions is not None:
            status["conditions"] = conditions
    meta = _meta(name, namespace=namespace, uid=f"u-{name}" if uid is _UNSET else uid,
                 resourceVersion=resource_version, creationTimestamp=stamp(created) if created is not None else None,
                 labels=labels, annotations=ann)
    if cj_uid is not None:
        meta["ownerReferences"] = [owner_ref("CronJob", cj, cj_uid, controller)]
    out: Obj = {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta}
    if spec is not None:
        out["spec"] = spec
    out["status"] = status
    return copy.deepcopy(out)


def scheduled(t: datetime, delay: int = 1, took: int | None = 20, outcome: str | None = None, *, cj: str = "cj",
              **kw: Any) -> Obj:
    """The controller's Job of slot t: created ``delay`` s after it, done ``took`` s later (None: running)."""
    c = t + timedelta(seconds=delay)
    return job(slotname(t, cj), slot=t, created=c, done=None if took is None else c + timedelta(seconds=took),
               outcome=outcome, cj=cj, **kw)


# --- Pod -------------------------------------------------------------------------------------------

def terminated(exit_code: int = 0, reason: str | None = None, **more: Any) -> Obj:
    """A container state: terminated with ``exit_code`` (``reason`` e.g. Error, OOMKilled)."""
    t: Obj = {"exitCode": exit_code}
    if reason is not None:
        t["reason"] = reason
    t.update(more)
    return {"terminated": t}


def waiting(reason: str = "ContainerCreating", **more: Any) -> Obj:
    return {"waiting": {"reason": reason, **more}}


def running(**more: Any) -> Obj:
    return {"running": dict(more)}


def container_status(name: str = "main", state: Obj | None = None, *, restarts: int = 0,
                     last_state: Obj | None = None, **more: Any) -> Obj:
    """One entry of status.containerStatuses; a restarted container's lastState defaults to exit code 1."""
    if last_state is None:
        last_state = terminated(1) if restarts else {}
    return {"name": name, "state": state if state is not None else running(), "restartCount": restarts,
            "lastState": last_state, **more}


def pod(name: str, *, job: str | None = None, job_uid: str | None = None, namespace: str | None = None,
        uid: str | None = _UNSET, created: Time | None = None, containers: list[Obj] | None = None,
        env: list[Obj] | None = None, statuses: list[Obj] | None = None,
        phase: str | None = None, annotations: dict[str, str] | None = None, labels: dict[str, str] | None = None,
        spec: Obj | None = None, status: Obj | None = None) -> Obj:
    """A Pod (of Job ``job`` through a controller reference). ``containers`` are the spec's
    containers (default one ``main``, with ``env`` when given), ``statuses`` its containerStatuses
    (``container_status``),
    ``spec``/``status`` replace them whole."""
    meta = _meta(name, namespace=namespace, uid=f"u-{name}" if uid is _UNSET else uid,
                 creationTimestamp=stamp(created) if created is not None else None, labels=labels,
                 annotations=annotations)
    if job is not None:
        meta["ownerReferences"] = [owner_ref("Job", job, job_uid or f"u-{job}")]
    if spec is None:
        spec = {"containers": containers if containers is not None else
                [{"name": "main"} if env is None else {"name": "main", "env": env}]}
    if status is None:
        status = {}
        if phase is not None:
            status["phase"] = phase
        if statuses is not None:
            status["containerStatuses"] = statuses
    return copy.deepcopy({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status})


# --- Event -----------------------------------------------------------------------------------------

def event(reason: str, message: str, first: Time, last: Time | None = None, *, kind: str = "CronJob",
          name: str = "cj", uid: str | None = _UNSET, etype: str = "Normal", count: int = 1,
          namespace: str | None = "ns", component: str | None = None) -> Obj:
    """A core/v1 Event about ``kind``/``name`` (its uid: ``UID`` for a CronJob, else empty) seen
    first at ``first`` and last at ``last`` (default: first)."""
    meta: Obj = {"name": f"e-{reason}-{name}-{first:%H%M%S}" if isinstance(first, datetime) else f"e-{reason}-{name}"}
    if namespace is not None:
        meta["namespace"] = namespace
    ev: Obj = {"apiVersion": "v1", "kind": "Event", "metadata": meta,
               "involvedObject": {"kind": kind, "name": name,
                                  "uid": (UID if kind == "CronJob" else "") if uid is _UNSET else uid},
               "reason": reason, "message": message, "type": etype, "count": count,
               "firstTimestamp": stamp(first), "lastTimestamp": stamp(last or first)}
    if component is not None:
        ev["source"] = {"component": component}
    return ev


# The CronJob controller's events (pkg/controller/cronjob), with its messages.
ALREADY_ACTIVE = "Not starting job because prior execution is running and concurrency policy is Forbid"


def successful_create(job_name: str, at: Time, **kw: Any) -> Obj:
    return event("SuccessfulCreate", f"Created job {job_name}", at, **kw)


def saw_completed(job_name: str, at: Time, condition: str = "Complete", **kw: Any) -> Obj:
    return event("SawCompletedJob", f"Saw completed job: {job_name}, condition: {condition}", at, **kw)


def successful_delete(job_name: str, at: Time, **kw: Any) -> Obj:
    return event("SuccessfulDelete", f"Deleted job {job_name}", at, **kw)


def job_already_active(first: Time, last: Time | None = None, **kw: Any) -> Obj:
    return event("JobAlreadyActive", ALREADY_ACTIVE, first, last, **kw)


def unexpected_job(job_name: str, first: Time, last: Time | None = None, **kw: Any) -> Obj:
    return event("UnexpectedJob", f"Saw a job that the controller did not create or forgot: {job_name}", first, last,
                 etype="Warning", **kw)
