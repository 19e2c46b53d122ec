"""Pure views and predicates over CronJob/Job/Pod dicts (the API's JSON), and the run record.

No I/O, no clock (``now`` is a parameter), no kubernetes import. Used by run-manual/status/
restore, the incident bundle and lint.

The run record (the lock) lives on the CronJob as annotations under :data:`PREFIX`; see
:class:`RunRecord`. ``kubectl describe cronjob`` shows it.
"""

import copy
from dataclasses import dataclass, field, fields
from datetime import datetime, timedelta
from typing import Any

from cronctl.errors import BadInput
from cronctl.timeutil import parse_rfc3339, rfc3339_z

Obj = dict[str, Any]

# kubernetes' own keys
INSTANTIATE = "cronjob.kubernetes.io/instantiate"  # "manual" on kubectl create job --from
SCHEDULED_TS = "batch.kubernetes.io/cronjob-scheduled-timestamp"  # set by the controller (docs/SEMANTICS.md §4.6)

# cronctl's keys
PREFIX = "cronctl.dev/"
ANN_RUN_ID = PREFIX + "run-id"
ANN_ORIGINAL_SUSPEND = PREFIX + "original-suspend"
ANN_OPERATOR = PREFIX + "operator"
ANN_REASON = PREFIX + "reason"
ANN_JOB_NAME = PREFIX + "job-name"
ANN_STEP = PREFIX + "step"
ANN_STARTED = PREFIX + "started"
ANN_UPDATED = PREFIX + "updated"
ANN_HOLDER = PREFIX + "holder"
ANN_OCCURRENCE = PREFIX + "occurrence"
ANN_NOTE = PREFIX + "note"
ANN_RETRY_OF = PREFIX + "retry-of"  # on a Job of run-manual --retry: the failed Job it runs again
# a pause (cronctl pause / resume): who, why, since and until when; kept apart from the run record
ANN_PAUSED_BY = PREFIX + "paused-by"
ANN_PAUSED_AT = PREFIX + "paused-at"
ANN_PAUSE_REASON = PREFIX + "pause-reason"
ANN_PAUSED_UNTIL = PREFIX + "paused-until"
PAUSE_KEYS = (ANN_PAUSED_BY, ANN_PAUSED_AT, ANN_PAUSE_REASON, ANN_PAUSED_UNTIL)
# the finished runs: a bounded JSON list that outlives the run record (see :class:`PastRun`)
ANN_RUNS = PREFIX + "runs"

#: The env var that carries ``--occurrence`` into every container of the manual Job.
OCCURRENCE_ENV = "CRONCTL_OCCURRENCE"


# -- small accessors ---------------------------------------------------------------------------
def meta(obj: Obj) -> Obj:
    m = obj.get("metadata")
    return m if isinstance(m, dict) else {}


def name_of(obj: Obj) -> str:
    return str(meta(obj).get("name", ""))


def annotations(obj: Obj) -> dict[str, str]:
    a = meta(obj).get("annotations")
    return dict(a) if isinstance(a, dict) else {}


def _time(value: Any) -> datetime | None:
    if not value:
        return None
    try:
        return parse_rfc3339(str(value))
    except BadInput:
        return None


def created(obj: Obj) -> datetime | None:
    return _time(meta(obj).get("creationTimestamp"))


# -- CronJob ---------------------------------------------------------------------------------
def is_suspended(cronjob: Obj) -> bool:
    return bool((cronjob.get("spec") or {}).get("suspend") or False)


def active_names(cronjob: Obj) -> list[str]:
    """Names in ``.status.active`` (the only thing Forbid looks at, docs/SEMANTICS.md §4.1 step 12)."""
    return [str(r.get("name", "")) for r in (cronjob.get("status") or {}).get("active") or []]


def last_schedule_time(cronjob: Obj) -> datetime | None:
    return _time((cronjob.get("status") or {}).get("lastScheduleTime"))


# -- Job -------------------------------------------------------------------------------------
def owned_by(job: Obj, cronjob: Obj) -> bool:
    """True when ``job`` has a controller ownerReference to this CronJob.

    Matched by uid when the CronJob has one (a CronJob deleted and re-created under the same
    name is a different owner), else by kind+name (offline dumps without uids).
    """
    cm = meta(cronjob)
    uid, name = cm.get("uid"), cm.get("name")
    for ref in meta(job).get("ownerReferences") or []:
        if ref.get("kind") != "CronJob" or not ref.get("controller"):
            continue
        if uid and ref.get("uid"):
            if ref.get("uid") == uid:
                return True
        elif ref.get("name") == name:
            return True
    return False


def job_outcome(job: Obj) -> str | None:
    """``"Complete"``, ``"Failed"`` or ``None`` (unfinished).

    The terminal condition is looked for anywhere in ``status.conditions``: since 1.31 the Job
    controller writes ``SuccessCriteriaMet``/``FailureTarget`` first, so it is not the first entry.
    """
    for c in (job.get("status") or {}).get("conditions") or []:
        if c.get("type") in ("Complete", "Failed") and str(c.get("status")) == "True":
            return str(c["type"])
    return None


@dataclass(frozen=True)
class Failure:
    """Why a Job failed, from its ``Failed`` condition (``BackoffLimitExceeded``,
    ``DeadlineExceeded``, ``PodFailurePolicy``, ``MaxFailedIndexesExceeded``, ...).

    ``final`` is False for a ``FailureTarget`` condition alone (since 1.31 the Job controller
    writes it first and ``Failed`` once the pods are gone): the Job is failing, not yet failed.
    """

    reason: str | None
    message: str | None
    at: datetime | None
    final: bool = True


def job_failure(job: Obj) -> Failure | None:
    """The failure of a Job (see :class:`Failure`), or None when it has not failed."""
    target: Failure | None = None
    for c in (job.get("status") or {}).get("conditions") or []:
        if not isinstance(c, dict) or str(c.get("status")) != "True" or c.get("type") not in ("Failed", "FailureTarget"):
            continue
        f = Failure(reason=_str_or_none(c.get("reason")), message=_str_or_none(c.get("message")),
                    at=_time(c.get("lastTransitionTime")), final=c.get("type") == "Failed")
        if f.final:
            return f
        target = target or f
    return target


def _str_or_none(v: Any) -> str | None:
    return None if v is None or v == "" else str(v)


def is_finished(job: Obj) -> bool:
    return job_outcome(job) is not None


def origin(job: Obj) -> str:
    """``"manual"`` (kubectl create job --from, or cronctl's run) or ``"scheduled"``."""
    a = annotations(job)
    if a.get(INSTANTIATE) == "manual" or ANN_RUN_ID in a:
        return "manual"
    return "scheduled"


def scheduled_for(job: Obj) -> datetime | None:
    """The slot a scheduled Job stands for (controller annotation), else None."""
    return _time(annotations(job).get(SCHEDULED_TS))


def occurrence(job: Obj) -> datetime | None:
    """The logical time a cronctl manual run stands for (``--occurrence``), else None."""
    return _time(annotations(job).get(ANN_OCCURRENCE))


def started(job: Obj) -> datetime | None:
    return _time((job.get("status") or {}).get("startTime"))


def finished_at(job: Obj) -> datetime | None:
    """completionTime for a Complete Job; the Failed condition's transition time for a failed one."""
    st = job.get("status") or {}
    if st.get("completionTime"):
        return _time(st["completionTime"])
    for c in st.get("conditions") or []:
        if c.get("type") in ("Complete", "Failed") and str(c.get("status")) == "True":
            return _time(c.get("lastTransitionTime"))
    return None


def duration(job: Obj, now: datetime) -> timedelta | None:
    """Run time like kubectl's DURATION column: start to finish, or start to now while running."""
    s = started(job)
    if s is None:
        return None
    e = finished_at(job)
    return (e or now) - s


def unfinished_children(cronjob: Obj, jobs: list[Obj]) -> list[Obj]:
    """Jobs controlled by this CronJob with no true Complete/Failed condition (seed 004's jq check)."""
    return [j for j in jobs if owned_by(j, cronjob) and not is_finished(j)]


def interval(job: Obj, now: datetime) -> tuple[datetime, datetime] | None:
    """The time the Job was running: startTime (else creation) to its end (else now)."""
    s = started(job) or created(job)
    if s is None:
        return None
    return s, finished_at(job) or now


def overlaps(jobs: list[Obj], now: datetime) -> list[tuple[str, str]]:
    """Pairs of Job names whose running intervals intersect (ordered by start)."""
    ivs = sorted(((iv, name_of(j)) for j in jobs if (iv := interval(j, now)) is not None),
                 key=lambda t: (t[0][0], t[1]))
    out: list[tuple[str, str]] = []
    for i, ((s1, e1), n1) in enumerate(ivs):
        for (s2, _e2), n2 in ivs[i + 1:]:
            if s2 >= e1:
                break
            out.append((n1, n2))
    return out


def pods_by_phase(pods: list[Obj]) -> dict[str, int]:
    out: dict[str, int] = {}
    for p in pods:
        ph = str((p.get("status") or {}).get("phase") or "Unknown")
        out[ph] = out.get(ph, 0) + 1
    return out


# -- the manual Job ----------------------------------------------------------------------------
def build_manual_job(cronjob: Obj, name: str, *, extra_annotations: dict[str, str] | None = None,
                     occurrence_at: datetime | None = None, env_name: str = OCCURRENCE_ENV) -> Obj:
    """The Job ``kubectl create job NAME --from=cronjob/CJ`` creates (docs/SEMANTICS.md §5), plus cronctl's bits.

    kubectl: annotations = ``{instantiate: manual}`` then the template's annotations over it;
    labels = the template's; one ownerReference (batch/v1 CronJob, name, uid, controller=true,
    NO blockOwnerDeletion, so it needs no cronjobs/finalizers permission); spec = the template
    spec; namespace set explicitly. cronctl adds ``extra_annotations`` (run id, operator,
    reason, occurrence) and, given ``occurrence_at``, an env var ``env_name`` = that instant
    (RFC3339 UTC) in every container and initContainer, replacing one of the same name.
    """
    cm = meta(cronjob)
    tmpl = (cronjob.get("spec") or {}).get("jobTemplate") or {}
    tmeta = tmpl.get("metadata") or {}
    ann: dict[str, str] = {INSTANTIATE: "manual"}
    ann.update(copy.deepcopy(tmeta.get("annotations") or {}))
    ann.update(extra_annotations or {})
    spec = copy.deepcopy(tmpl.get("spec") or {})
    if occurrence_at is not None:
        value = rfc3339_z(occurrence_at)
        pod_spec = (spec.get("template") or {}).get("spec") or {}
        for key in ("initContainers", "containers"):
            for c in pod_spec.get(key) or []:
                env = [e for e in c.get("env") or [] if e.get("name") != env_name]
                env.append({"name": env_name, "value": value})
                c["env"] = env
    job_meta: Obj = {"name": name, "namespace": cm.get("namespace"), "annotations": ann}
    labels = copy.deepcopy(tmeta.get("labels") or {})
    if labels:
        job_meta["labels"] = labels
    job_meta["ownerReferences"] = [{
        "apiVersion": "batch/v1", "kind": "CronJob", "name": cm.get("name"), "uid": cm.get("uid"),
        "controller": True,
    }]
    if not job_meta["namespace"]:
        del job_meta["namespace"]
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": job_meta, "spec": spec}


# -- the run record (lock) ---------------------------------------------------------------------
#: Steps of run-manual, in order, as written to ``cronctl.dev/step``.
STEPS = ("suspended", "verified", "created", "waiting", "succeeded", "restored",
         "failed", "timeout", "interrupted")


@dataclass(frozen=True)
class RunRecord:
    """The record cronctl keeps on the CronJob while a manual run holds it (the lock).

    ``original_suspend`` is what ``restore`` puts back. ``step`` is the last step reached:
    suspended, verified, created, waiting, succeeded (Job complete, restore pending), failed,
    timeout, interrupted.
    """

    run_id: str
    original_suspend: bool
    operator: str
    reason: str
    job_name: str
    step: str
    started: str
    holder: str = ""
    updated: str = ""
    occurrence: str = ""
    note: str = ""

    _KEYS = {"run_id": ANN_RUN_ID, "original_suspend": ANN_ORIGINAL_SUSPEND, "operator": ANN_OPERATOR,
             "reason": ANN_REASON, "job_name": ANN_JOB_NAME, "step": ANN_STEP, "started": ANN_STARTED,
             "holder": ANN_HOLDER, "updated": ANN_UPDATED, "occurrence": ANN_OCCURRENCE, "note": ANN_NOTE}

    def to_annotations(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            out[self._KEYS[f.name]] = ("true" if v else "false") if isinstance(v, bool) else str(v)
        return out

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def read_record(cronjob: Obj) -> RunRecord | None:
    """The run record on the CronJob, or None. A record is present when the run-id key is."""
    a = annotations(cronjob)
    if ANN_RUN_ID not in a:
        return None
    keys = RunRecord._KEYS
    return RunRecord(
        run_id=a.get(keys["run_id"], ""),
        original_suspend=a.get(keys["original_suspend"], "false").lower() == "true",
        operator=a.get(keys["operator"], ""), reason=a.get(keys["reason"], ""),
        job_name=a.get(keys["job_name"], ""), step=a.get(keys["step"], ""),
        started=a.get(keys["started"], ""), holder=a.get(keys["holder"], ""),
        updated=a.get(keys["updated"], ""), occurrence=a.get(keys["occurrence"], ""),
        note=a.get(keys["note"], ""))


#: the field manager of every write cronctl makes (``?fieldManager=cronctl``); ``restore`` trusts
#: a run record only when this manager wrote it (see :func:`record_unconfirmed`)
FIELD_MANAGER = "cronctl"


def _field_owners(cronjob: Obj) -> dict[tuple[str, ...], set[str]]:
    """Which managers own which field, from ``metadata.managedFields`` (main resource only)."""
    owners: dict[tuple[str, ...], set[str]] = {}

    def walk(node: Any, path: tuple[str, ...], manager: str) -> None:
        if not isinstance(node, dict):
            return
        for k, v in node.items():
            if isinstance(k, str) and k.startswith("f:"):
                owners.setdefault(path + (k[2:],), set()).add(manager)
                walk(v, path + (k[2:],), manager)

    for entry in meta(cronjob).get("managedFields") or []:
        if isinstance(entry, dict) and not entry.get("subresource"):
            walk(entry.get("fieldsV1"), (), str(entry.get("manager") or "?"))
    return owners


def record_unconfirmed(cronjob: Obj) -> str | None:
    """Why the run record on ``cronjob`` cannot be confirmed as written by cronctl, or None.

    Confirmed when the API server's ``managedFields`` say every annotation of the record is owned
    by field manager ``cronctl`` alone, and, for a record that says suspend was false before,
    ``spec.suspend`` too (cronctl set it true in the same write). A record written or changed with
    ``kubectl annotate``/``patch``/``edit`` or any other client is owned by that client's manager.
    This tells a planted or edited record from cronctl's; it is not a signature: a client that
    names itself ``cronctl`` on purpose passes it.
    """
    owners = _field_owners(cronjob)
    a = annotations(cronjob)
    others: dict[str, set[str]] = {}
    for key in RunRecord._KEYS.values():
        if key in a:
            by = owners.get(("metadata", "annotations", key), set())
            if by != {FIELD_MANAGER}:
                others[key] = by
    if a.get(ANN_ORIGINAL_SUSPEND, "").lower() == "false":
        by = owners.get(("spec", "suspend"), set())
        if by != {FIELD_MANAGER}:
            others["spec.suspend"] = by
    if not others:
        return None
    shown = "; ".join(f"{k} by {', '.join(sorted(v)) or 'no known manager'}" for k, v in sorted(others.items()))
    return f"not written by cronctl (field manager): {shown}"


@dataclass(frozen=True)
class Pause:
    """A pause recorded by ``cronctl pause`` on the CronJob."""

    by: str
    at: datetime | None
    reason: str
    until: datetime | None

    def overdue(self, now: datetime) -> bool:
        return self.until is not None and now > self.until

    def as_dict(self) -> dict[str, Any]:
        return {"by": self.by, "at": rfc3339_z(self.at) if self.at else None, "reason": self.reason,
                "until": rfc3339_z(self.until) if self.until else None}

    def words(self) -> str:
        since = f" since {rfc3339_z(self.at)}" if self.at else ""
        until = f" until {rfc3339_z(self.until)}" if self.until else ""
        return f"paused by {self.by}{since}{until}: {self.reason}"


def read_pause(cronjob: Obj) -> Pause | None:
    """The pause on the CronJob, or None (present when the paused-by key is)."""
    a = annotations(cronjob)
    if ANN_PAUSED_BY not in a:
        return None
    return Pause(by=a.get(ANN_PAUSED_BY, "") or "unknown", at=_time(a.get(ANN_PAUSED_AT)),
                 reason=a.get(ANN_PAUSE_REASON, ""), until=_time(a.get(ANN_PAUSED_UNTIL)))


def clear_pause_annotations() -> dict[str, None]:
    return {k: None for k in PAUSE_KEYS}


# -- the finished runs (audit trail) -------------------------------------------------------------
#: how many finished runs ``cronctl.dev/runs`` keeps (the oldest go first)
RUNS_KEPT = 20
#: the longest text kept per field of a finished run (an annotation is at most 256 KiB in all)
RUN_FIELD_MAX = 200


@dataclass(frozen=True)
class PastRun:
    """One finished run in ``cronctl.dev/runs``: written by the restore that clears its record, in
    the same guarded write, so the trail survives the record, the manual Job (deleted by the
    history limit) and its events (deleted after an hour). It is evidence, not proof: anyone who
    may patch the CronJob may edit it; readers take it leniently and show it as cronctl's account.
    """

    run_id: str
    operator: str
    reason: str
    job_name: str
    occurrence: str
    suspended_at: str      # when the run suspended the CronJob (the record's started)
    restored_at: str       # when the restore cleared the record
    last_step: str         # how it ended: succeeded or aborted (said by the run restoring itself), else the
                           # record's step at the restore or takeover (failed, timeout, interrupted, ...)
    original_suspend: bool
    restored_to: bool      # the suspend value the restore set
    forced: bool = False   # restored with --force (a stale or unconfirmed record)

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @property
    def held(self) -> tuple[datetime, datetime] | None:
        """The time the run held the CronJob suspended (when it suspended it; a run that found it
        suspended held nothing new), or None."""
        s, e = _time(self.suspended_at), _time(self.restored_at)
        if s is None or e is None or self.original_suspend or e < s:
            return None
        return s, e

    def words(self) -> str:
        occ = f" for {self.occurrence}" if self.occurrence else ""
        job = f" Job {self.job_name}{occ}" if self.job_name else occ
        why = f": {self.reason}" if self.reason else ""
        return (f"cronctl run {self.run_id} of {self.operator or 'unknown'}{job}, {self.last_step or '?'}; "
                f"held {self.suspended_at or '?'} to {self.restored_at or '?'}{why}")


def _short(v: Any) -> str:
    text = str(v)
    return text if len(text) <= RUN_FIELD_MAX else text[:RUN_FIELD_MAX - 1] + "\u2026"


def read_runs(cronjob: Obj) -> list[PastRun]:
    """The finished runs recorded on the CronJob, oldest first. Lenient: an annotation that is not a
    JSON list, or entries of the wrong shape, give nothing rather than an error (it is evidence
    written by cronctl but editable by anyone who may patch the CronJob)."""
    import json

    raw = annotations(cronjob).get(ANN_RUNS)
    if not raw:
        return []
    try:
        data = json.loads(raw)
    except ValueError:
        return []
    out: list[PastRun] = []
    for e in data if isinstance(data, list) else []:
        if not isinstance(e, dict) or not isinstance(e.get("run_id"), str):
            continue
        text = {k: _short(e.get(k) or "") for k in ("run_id", "operator", "reason", "job_name", "occurrence",
                                                   "suspended_at", "restored_at", "last_step")}
        out.append(PastRun(**text, original_suspend=e.get("original_suspend") is True,
                           restored_to=e.get("restored_to") is True, forced=e.get("forced") is True))
    return out[-RUNS_KEPT:]


def runs_with(cronjob: Obj, rec: RunRecord, *, restored_at: datetime, restored_to: bool,
              forced: bool = False, last_step: str | None = None) -> str:
    """The ``cronctl.dev/runs`` value after the restore of ``rec``: the runs kept so far plus this
    one, at most :data:`RUNS_KEPT`, each text field cut to :data:`RUN_FIELD_MAX` characters."""
    import json

    this = PastRun(run_id=_short(rec.run_id), operator=_short(rec.operator), reason=_short(rec.reason),
                   job_name=_short(rec.job_name), occurrence=_short(rec.occurrence),
                   suspended_at=_short(rec.started), restored_at=rfc3339_z(restored_at),
                   last_step=_short(last_step or rec.step), original_suspend=rec.original_suspend,
                   restored_to=restored_to, forced=forced)
    kept = [r for r in read_runs(cronjob) if r.run_id != rec.run_id] + [this]
    return json.dumps([r.as_dict() for r in kept[-RUNS_KEPT:]], separators=(",", ":"), ensure_ascii=False)


def clear_record_annotations() -> dict[str, None]:
    """A merge-patch ``metadata.annotations`` value that removes every record key (null deletes)."""
    return {k: None for k in RunRecord._KEYS.values()}


@dataclass(frozen=True)
class ChildJob:
    """One child Job as status/bundle show it."""

    name: str
    origin: str
    scheduled_for: datetime | None
    created: datetime | None
    started: datetime | None
    completed: datetime | None
    outcome: str | None
    duration: timedelta | None
    occurrence: datetime | None = None
    run_id: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def child_view(job: Obj, now: datetime) -> ChildJob:
    return ChildJob(name=name_of(job), origin=origin(job), scheduled_for=scheduled_for(job),
                    created=created(job), started=started(job), completed=finished_at(job),
                    outcome=job_outcome(job), duration=duration(job, now),
                    occurrence=occurrence(job), run_id=annotations(job).get(ANN_RUN_ID, ""))


# -- typed fields: the one answer for hand-written files -------------------------------------
# What the API server's typed decoding would say about the fields cronctl reads, decided here
# once for every command that reads files (explain -f, lint -f, bundle/history --from-dump): a
# wrong type is refused with the field named (the API server rejects a string for an integer or
# a boolean: ``suspend: "false"`` is an error, not "suspended"), never read loosely or left to
# a traceback deeper down. Objects from a live API server always pass. ``None`` (YAML ``~`` or
# an empty value) is "not set", as the API server reads a JSON null.

#: Timestamps outside these years are refused: the engine's arithmetic (offsets, a whole
#: schedule walk) must stay inside ``datetime``'s years 1..9999, and no real object is older.
MIN_YEAR = 1000
MAX_YEAR = 9000
_INT32 = (-(2 ** 31), 2 ** 31 - 1)
_INT64 = (-(2 ** 63), 2 ** 63 - 1)

_STR, _BOOL, _TIME, _I32, _I64, _STRMAP, _ANY = "string", "boolean", "time", "int32", "int64", "strmap", "any"
_Schema = Any  # a type name above, a dict of field -> schema, or a one-item list [item schema]

_META: _Schema = {
    "name": _STR, "namespace": _STR, "uid": _STR, "resourceVersion": _STR, "generateName": _STR,
    "creationTimestamp": _TIME, "deletionTimestamp": _TIME, "annotations": _STRMAP, "labels": _STRMAP,
    "ownerReferences": [{"apiVersion": _STR, "kind": _STR, "name": _STR, "uid": _STR, "controller": _BOOL,
                         "blockOwnerDeletion": _BOOL}],
    "managedFields": [{"manager": _STR, "operation": _STR, "time": _TIME, "fieldsV1": {"f:spec": {}}}],
}
_TEMPLATE_META: _Schema = {"name": _STR, "namespace": _STR, "annotations": _STRMAP, "labels": _STRMAP}
_ENV: _Schema = [{"name": _STR, "value": _STR}]
_CONTAINER: _Schema = {"name": _STR, "image": _STR, "command": [_STR], "args": [_STR], "env": _ENV,
                       "imagePullPolicy": _STR}
_POD_SPEC: _Schema = {
    "restartPolicy": _STR, "serviceAccountName": _STR, "serviceAccount": _STR, "nodeName": _STR,
    "automountServiceAccountToken": _BOOL, "containers": [_CONTAINER], "initContainers": [_CONTAINER],
    "activeDeadlineSeconds": _I64,
}
_JOB_SPEC: _Schema = {
    "backoffLimit": _I32, "backoffLimitPerIndex": _I32, "activeDeadlineSeconds": _I64,
    "ttlSecondsAfterFinished": _I32, "completions": _I32, "parallelism": _I32, "suspend": _BOOL,
    "template": {"metadata": _TEMPLATE_META, "spec": _POD_SPEC},
}
_STATE: _Schema = {"terminated": {"exitCode": _I32, "reason": _STR, "startedAt": _TIME, "finishedAt": _TIME},
                   "running": {"startedAt": _TIME}, "waiting": {"reason": _STR, "message": _STR}}
_CONTAINER_STATUS: _Schema = {"name": _STR, "restartCount": _I32, "state": _STATE, "lastState": _STATE}
_REF: _Schema = {"kind": _STR, "name": _STR, "namespace": _STR, "uid": _STR, "apiVersion": _STR}

SCHEMAS: dict[str, _Schema] = {
    "CronJob": {
        "metadata": _META,
        "spec": {
            "schedule": _STR, "timeZone": _STR, "startingDeadlineSeconds": _I64, "suspend": _BOOL,
            "concurrencyPolicy": _STR, "successfulJobsHistoryLimit": _I32, "failedJobsHistoryLimit": _I32,
            "jobTemplate": {"metadata": _TEMPLATE_META, "spec": _JOB_SPEC},
        },
        "status": {"lastScheduleTime": _TIME, "lastSuccessfulTime": _TIME, "active": [_REF]},
    },
    "Job": {
        "metadata": _META, "spec": _JOB_SPEC,
        "status": {"startTime": _TIME, "completionTime": _TIME, "active": _I32, "succeeded": _I32,
                   "failed": _I32, "conditions": [{"type": _STR, "status": _STR, "reason": _STR,
                                                   "message": _STR, "lastTransitionTime": _TIME}]},
    },
    "Pod": {
        "metadata": _META, "spec": _POD_SPEC,
        "status": {"phase": _STR, "startTime": _TIME, "containerStatuses": [_CONTAINER_STATUS],
                   "initContainerStatuses": [_CONTAINER_STATUS]},
    },
    "Event": {
        "metadata": _META, "involvedObject": _REF, "regarding": _REF, "reason": _STR, "message": _STR,
        "note": _STR, "type": _STR, "count": _I32, "deprecatedCount": _I32, "firstTimestamp": _TIME,
        "lastTimestamp": _TIME, "eventTime": _TIME, "deprecatedFirstTimestamp": _TIME,
        "deprecatedLastTimestamp": _TIME, "series": {"count": _I32, "lastObservedTime": _TIME},
        "source": {"component": _STR, "host": _STR}, "reportingController": _STR,
        "reportingComponent": _STR, "reportingInstance": _STR, "action": _STR,
    },
}
#: Fields a kind must have (beyond the table's types): what every command needs to say anything.
REQUIRED: dict[str, tuple[str, ...]] = {"CronJob": ("spec", "spec.schedule")}

_NAMES = {str: "a string", bool: "a boolean", int: "an integer", float: "a number", dict: "a mapping",
          list: "a list", type(None): "null"}


def _got(value: Any) -> str:
    what = _NAMES.get(type(value), type(value).__name__)
    shown = repr(value) if isinstance(value, (str, int, float, bool)) else ""
    if len(shown) > 40:
        shown = shown[:37] + "..."
    return f"{what} ({shown})" if shown else what


def _check_value(value: Any, schema: _Schema, path: str) -> None:
    if value is None:
        return
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            raise BadInput(f"{path}: expected a mapping, got {_got(value)}")
        for key, sub in schema.items():
            if key in value:
                _check_value(value[key], sub, f"{path}.{key}" if path else key)
        return
    if isinstance(schema, list):
        if not isinstance(value, list):
            raise BadInput(f"{path}: expected a list, got {_got(value)}")
        for i, item in enumerate(value):
            if item is None:  # a null is "not set" for a field, not for an item of a list
                what = "a mapping" if isinstance(schema[0], dict) else \
                    f"{'an' if str(schema[0])[0] in 'aeiou' else 'a'} {schema[0]}"
                raise BadInput(f"{path}[{i}]: expected {what}, got null")
            _check_value(item, schema[0], f"{path}[{i}]")
        return
    if schema == _STR:
        ok = isinstance(value, str)
    elif schema == _BOOL:
        ok = isinstance(value, bool)
    elif schema in (_I32, _I64):
        lo, hi = _INT32 if schema == _I32 else _INT64
        ok = isinstance(value, int) and not isinstance(value, bool)
        if ok and not lo <= value <= hi:
            raise BadInput(f"{path}: {value} is out of range for an {schema}")
        schema = "integer"
    elif schema == _TIME:
        if not isinstance(value, str):
            raise BadInput(f"{path}: expected an RFC3339 time, got {_got(value)}")
        t = parse_rfc3339(value, what=path)
        if not MIN_YEAR <= t.year <= MAX_YEAR:
            raise BadInput(f"{path}: year {t.year} is outside {MIN_YEAR}..{MAX_YEAR} (MIN_YEAR, MAX_YEAR)")
        return
    elif schema == _STRMAP:
        if not isinstance(value, dict):
            raise BadInput(f"{path}: expected a mapping of strings, got {_got(value)}")
        for k, v in value.items():
            if not isinstance(k, str):
                raise BadInput(f"{path}: key {k!r} is not a string")
            if v is not None and not isinstance(v, str):
                raise BadInput(f"{path}.{k}: expected a string, got {_got(v)} (quote it)")
        return
    else:
        ok = True
    if not ok:
        raise BadInput(f"{path}: expected {'an' if schema[0] in 'aeiou' else 'a'} {schema}, got {_got(value)}")


def check_typed(obj: Obj) -> None:
    """Refuse (BadInput naming the field) a wrong type in the fields cronctl reads of a CronJob,
    Job, Pod or Event, as the API server's typed decoding would; other kinds pass unchecked."""
    kind = obj.get("kind")
    schema = SCHEMAS.get(kind) if isinstance(kind, str) else None
    if schema is None:
        return
    _check_value(obj, schema, "")
    for req in REQUIRED.get(kind, ()):  # type: ignore[arg-type]
        cur: Any = obj
        for part in req.split("."):
            cur = cur.get(part) if isinstance(cur, dict) else None
        if cur is None:
            raise BadInput(f"{req} is missing")


def check_objects(objs: list[Obj], source: str) -> None:
    """:func:`check_typed` on every object read from ``source``, the error naming file and object."""
    for o in objs:
        try:
            check_typed(o)
        except BadInput as e:
            m = o.get("metadata")
            name = m.get("name") if isinstance(m, dict) else None
            ns = m.get("namespace") if isinstance(m, dict) else None
            shown = name if isinstance(name, str) and name else "(no name)"
            who = f"{str(o.get('kind')).lower()} {ns + '/' if isinstance(ns, str) and ns else ''}{shown}"
            raise BadInput(f"{source}: {who}: {e.message}") from None
