"""Pure views and predicates over CronJob/Job/Pod dicts (the API's JSON), and the run record.

No I/O, no clock (``now`` is a parameter), no kubernetes import. Used by run-manual/status/
restore, the incident bundle and lint.

One view of the objects (docs/MODEL.md): :func:`cronjob_view` reads the controller's inputs of a
CronJob with one set of checks (:data:`SCHEMAS`) and :meth:`CronJobView.decide` is the one step to
the controller model; :func:`job_record` is the one Job record with the one interval and overlap
rule (:class:`JobRecord`, :func:`overlaps`); :func:`when` is the one lenient timestamp reader;
:class:`HistoryLimits` the one reader of the history limits.

The run record (the lock) lives on the CronJob as annotations under :data:`PREFIX`; see
:class:`RunRecord`. ``kubectl describe cronjob`` shows it.
"""

import copy
import functools
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field, fields
from datetime import datetime, timedelta
from typing import Any, Iterable

from cronctl.errors import BadInput
from cronctl.timeutil import UTC, parse_rfc3339, rfc3339_z

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
#: on an object read back from the ledger (never written to the cluster): the cluster it was
#: recorded in, and "; deleted <time>" when the recorder saw it deleted
ANN_LEDGER = PREFIX + "ledger"
ANN_STEP = PREFIX + "step"
ANN_STARTED = PREFIX + "started"
ANN_UPDATED = PREFIX + "updated"
ANN_HOLDER = PREFIX + "holder"
ANN_OCCURRENCE = PREFIX + "occurrence"
ANN_NOTE = PREFIX + "note"
#: the GitOps side of a hold (JSON): the strategy, and what it changed beside suspend (Flux's
#: reconcile annotation and its value before), so that restore puts back exactly that
ANN_GITOPS = PREFIX + "gitops-hold"
ANN_RETRY_OF = PREFIX + "retry-of"  # on a Job of run-manual --retry: the failed Job it runs again
# a pause (cronctl pause / resume): who, why, since and until when; kept apart from the run record
ANN_PAUSED_BY = PREFIX + "paused-by"
ANN_PAUSED_AT = PREFIX + "paused-at"
ANN_PAUSE_REASON = PREFIX + "pause-reason"
ANN_PAUSED_UNTIL = PREFIX + "paused-until"
#: a pause's GitOps part (JSON, like ANN_GITOPS of a run): Flux's reconcile annotation before it
ANN_PAUSE_GITOPS = PREFIX + "pause-gitops"
PAUSE_KEYS = (ANN_PAUSED_BY, ANN_PAUSED_AT, ANN_PAUSE_REASON, ANN_PAUSED_UNTIL, ANN_PAUSE_GITOPS)
# the finished runs: a bounded JSON list that outlives the run record (see :class:`PastRun`)
ANN_RUNS = PREFIX + "runs"
#: the finished pauses (JSON list, oldest first): written by resume, as ANN_RUNS by a run's restore
ANN_PAUSES = PREFIX + "pauses"

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


def when(value: Any) -> datetime | None:
    """A timestamp of the API (RFC3339) as an aware UTC datetime; None when absent or not one.

    The one lenient timestamp reader: the evidence (Job, Pod and Event times, cronctl's own
    annotations, managedFields) is read with it, so a garbled time in a hand-made dump counts as
    absent instead of stopping a report; so does a year outside :data:`MIN_YEAR`..:data:`MAX_YEAR`
    (``cronctl.dev/paused-until: 9999-12-31``), where a file's typed fields are refused instead
    (:func:`check_typed`). The controller inputs of a CronJob are read strictly
    instead (:func:`cronjob_view`): a wrong one is refused, never taken as absent.
    """
    if isinstance(value, datetime):  # a YAML loader's timestamp
        if value.tzinfo is None:
            return None
        try:
            value = value.astimezone(UTC)
        except OverflowError:
            return None
        return value if MIN_YEAR <= value.year <= MAX_YEAR else None
    if not isinstance(value, str) or not value:
        return None
    return _when_text(value)


@functools.lru_cache(maxsize=1 << 16)
def _when_text(value: str) -> datetime | None:
    """:func:`when` of a string, cached: the same timestamps are read again and again (a Job's
    times by status, history and the bundle; 13,000 Jobs in a 90-day history)."""
    try:
        t = parse_rfc3339(value)
    except BadInput:
        return None
    # outside MIN_YEAR..MAX_YEAR: absent too, so no arithmetic on it can leave datetime's range
    return t if MIN_YEAR <= t.year <= MAX_YEAR else None


def created(obj: Obj) -> datetime | None:
    return when(meta(obj).get("creationTimestamp"))


# -- CronJob ---------------------------------------------------------------------------------
def is_suspended(cronjob: Obj) -> bool:
    """``spec.suspend`` is true (a string ``"true"`` is not a boolean: not suspended, as in :func:`cronjob_view`)."""
    spec = cronjob.get("spec")
    return isinstance(spec, dict) and spec.get("suspend") is True


def active_names(cronjob: Obj) -> list[str]:
    """Names in ``.status.active`` (the only thing Forbid looks at, docs/SEMANTICS.md §4.1 step 12)."""
    return [str(r.get("name", "")) for r in (cronjob.get("status") or {}).get("active") or []]


def last_schedule_time(cronjob: Obj) -> datetime | None:
    return when((cronjob.get("status") or {}).get("lastScheduleTime"))


# -- Job -------------------------------------------------------------------------------------
def controller_owner_uid(obj: Obj, kind: str) -> str | None:
    """The uid of ``obj``'s controller ownerReference of ``kind`` (any owner of that kind if none
    is marked controller): a pod's Job for the bundle's collector and its analysis alike."""
    refs = [r for r in meta(obj).get("ownerReferences") or [] if isinstance(r, dict) and r.get("kind") == kind]
    for r in refs:
        if r.get("controller"):
            return str(r.get("uid"))
    return str(refs[0].get("uid")) if refs else None


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


def creator(obj: Obj) -> str | None:
    """The field manager that made ``obj``: the oldest ``metadata.managedFields`` entry of the main
    resource (not a subresource such as ``status``), e.g. ``kube-controller-manager`` for the
    CronJob controller's Job, ``kubectl-create`` for ``kubectl create job --from``; None when the
    server kept none (an offline dump without managedFields)."""
    best: tuple[datetime, str] | None = None
    first: str | None = None
    for mf in meta(obj).get("managedFields") or []:
        if not isinstance(mf, dict) or mf.get("subresource") or not isinstance(mf.get("manager"), str):
            continue
        first = first or mf["manager"]
        t = when(mf.get("time"))
        if t is not None and (best is None or t < best[0]):
            best = (t, mf["manager"])
    return best[1] if best is not None else first


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
                    at=when(c.get("lastTransitionTime")), final=c.get("type") == "Failed")
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
    return when(annotations(job).get(SCHEDULED_TS))


def occurrence(job: Obj) -> datetime | None:
    """The logical time a cronctl manual run stands for (``--occurrence``), else None."""
    return when(annotations(job).get(ANN_OCCURRENCE))


def started(job: Obj) -> datetime | None:
    return when((job.get("status") or {}).get("startTime"))


def finished_at(job: Obj) -> datetime | None:
    """completionTime for a Complete Job; the Failed condition's transition time for a failed one."""
    st = job.get("status") or {}
    if st.get("completionTime"):
        return when(st["completionTime"])
    for c in st.get("conditions") or []:
        if c.get("type") in ("Complete", "Failed") and str(c.get("status")) == "True":
            return when(c.get("lastTransitionTime"))
    return None


def run_time(start: datetime | None, completed: datetime | None, *, running: bool, now: datetime) -> timedelta | None:
    """How long a Job ran, the one rule of status, history, the bundle and the run-manual plan: from its
    start (startTime, else its creation: :func:`job_interval`'s start) to its completion, or to ``now``
    while it runs; None without a start, or when it finished at an unknown time. Never negative."""
    if start is None:
        return None
    stop = now if running else completed
    return None if stop is None else max(stop - start, timedelta(0))


def duration(job: Obj, now: datetime) -> timedelta | None:
    """Run time like kubectl's DURATION column (:func:`run_time`): start to finish, or start to now
    while running."""
    return run_time(started(job) or created(job), finished_at(job), running=job_outcome(job) is None, now=now)


def unfinished_children(cronjob: Obj, jobs: list[Obj]) -> list[Obj]:
    """Jobs controlled by this CronJob with no true Complete/Failed condition (the check of docs/BACKGROUND.md §4.8)."""
    return [j for j in jobs if owned_by(j, cronjob) and not is_finished(j)]


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
    gitops: str = ""  # ANN_GITOPS: the hold's GitOps strategy and what it changed (JSON), or ""

    _KEYS = {"run_id": ANN_RUN_ID, "original_suspend": ANN_ORIGINAL_SUSPEND, "operator": ANN_OPERATOR,
             "reason": ANN_REASON, "job_name": ANN_JOB_NAME, "step": ANN_STEP, "started": ANN_STARTED,
             "holder": ANN_HOLDER, "updated": ANN_UPDATED, "occurrence": ANN_OCCURRENCE, "note": ANN_NOTE,
             "gitops": ANN_GITOPS}

    def gitops_hold(self) -> dict[str, Any]:
        """The GitOps part of the hold (:data:`ANN_GITOPS`) as a dict; {} when absent or garbled."""
        from cronctl.decode import loads

        try:
            v = loads(self.gitops) if self.gitops else {}
        except ValueError:
            return {}
        return v if isinstance(v, dict) else {}

    def to_annotations(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "gitops" and not v:
                continue  # a plain hold carries no GitOps part
            out[self._KEYS[f.name]] = ("true" if v else "false") if isinstance(v, bool) else str(v)
        return out


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
        note=a.get(keys["note"], ""), gitops=a.get(keys["gitops"], ""))


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


def field_owners(cronjob: Obj) -> dict[tuple[str, ...], set[str]]:
    """Which field managers own which field of the main resource (``metadata.managedFields``):
    ``{("spec", "suspend"): {"cronctl"}, ...}``; empty when the object keeps no managedFields."""
    return _field_owners(cronjob)


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
    if a.get(ANN_ORIGINAL_SUSPEND, "").lower() == "false" and is_suspended(cronjob):
        # while suspended, the suspend must be cronctl's; once set back to false by someone else, the
        # hold was reverted (hold_reverted says by whom), which does not make the record forged
        by = owners.get(("spec", "suspend"), set())
        if by != {FIELD_MANAGER}:
            others["spec.suspend"] = by
    if not others:
        return None
    shown = "; ".join(f"{k} by {', '.join(sorted(v)) or 'no known manager'}" for k, v in sorted(others.items()))
    return f"not written by cronctl (field manager): {shown}"


def suspend_owners(cronjob: Obj) -> list[tuple[datetime | None, str]]:
    """(time of the write, or None when not kept; manager) of each managedFields entry that owns
    spec.suspend, in managedFields order: who wrote the suspend flag, for history and the ledger."""
    return [(when(mf.get("time")), str(mf.get("manager") or "unknown"))
            for mf in meta(cronjob).get("managedFields") or []
            if isinstance(mf, dict) and "f:suspend" in ((mf.get("fieldsV1") or {}).get("f:spec") or {})]


def suspend_writes(cronjob: Obj) -> list[tuple[datetime, str]]:
    """The writes of spec.suspend whose time managedFields keeps, oldest first."""
    return sorted((t, m) for t, m in suspend_owners(cronjob) if t is not None)


def hold_reverted(cronjob: Obj) -> str:
    """Who set ``spec.suspend`` back to false under a hold (a run record or a pause that set it
    true), from ``metadata.managedFields``: words such as "spec.suspend set back to false by
    argocd-controller (Apply) at 2026-12-05T23:06:00Z, not by cronctl"; "" when it is suspended."""
    from cronctl import gitops

    if is_suspended(cronjob):
        return ""
    who = gitops.reverted_by(cronjob, not_manager=FIELD_MANAGER)
    if who is None:
        return "spec.suspend is false again, set back by an unknown writer (no field manager owns it), not by cronctl"
    at = f" at {rfc3339_z(who.time)}" if who.time else ""
    tool = gitops.MANAGERS.get(who.manager)
    return (f"spec.suspend set back to false by {who.manager} ({who.operation}){at}"
            + (f", {gitops.TOOL_WORDS[tool]}" if tool else "") + ", not by cronctl")


@dataclass(frozen=True)
class Pause:
    """A pause recorded by ``cronctl pause`` on the CronJob."""

    by: str
    at: datetime | None
    reason: str
    until: datetime | None

    def overdue(self, now: datetime) -> bool:
        return self.until is not None and now > self.until

    def words(self) -> str:
        since = f" since {rfc3339_z(self.at)}" if self.at else ""
        until = f" until {rfc3339_z(self.until)}" if self.until else ""
        return f"paused by {self.by}{since}{until}: {self.reason}"


def read_pause(cronjob: Obj) -> Pause | None:
    """The pause on the CronJob, or None (present when the paused-by key is)."""
    a = annotations(cronjob)
    if ANN_PAUSED_BY not in a:
        return None
    return Pause(by=a.get(ANN_PAUSED_BY, "") or "unknown", at=when(a.get(ANN_PAUSED_AT)),
                 reason=a.get(ANN_PAUSE_REASON, ""), until=when(a.get(ANN_PAUSED_UNTIL)))


def clear_pause_annotations() -> dict[str, None]:
    return {k: None for k in PAUSE_KEYS}


@dataclass(frozen=True)
class PastPause:
    """One finished pause in ``cronctl.dev/pauses``: written by ``cronctl resume`` in the patch that
    clears the pause, so who paused it, why and until when outlive the pause's annotations and its
    Events (an hour). Evidence, not proof, as :class:`PastRun`: read leniently."""

    by: str
    at: str                # when it was paused
    reason: str
    until: str             # the --until it was given ("" without)
    resumed_by: str
    resumed_at: str

    def entry(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @property
    def held(self) -> tuple[datetime, datetime] | None:
        """The time the pause held the CronJob suspended, or None."""
        s, e = when(self.at), when(self.resumed_at)
        return (s, e) if s is not None and e is not None and s <= e else None

    def words(self) -> str:
        until = f" until {self.until}" if self.until else ""
        return (f"paused by {self.by or 'unknown'} at {self.at or '?'}{until}: {self.reason or '-'}; resumed by "
                f"{self.resumed_by or 'unknown'} at {self.resumed_at or '?'}")


def _trail(cronjob: Obj, key: str) -> list[dict[str, Any]]:
    """The entries of a JSON-list annotation cronctl keeps (``cronctl.dev/runs``, ``cronctl.dev/pauses``):
    the mappings in it, or none when it is absent or not a JSON list. Lenient: it is evidence written
    by cronctl but editable by anyone who may patch the CronJob."""
    from cronctl.decode import loads

    raw = annotations(cronjob).get(key)
    if not raw:
        return []
    try:
        data = loads(raw)  # bounded depth and size (cronctl/decode.py): a 2,000-deep value is no RecursionError
    except ValueError:
        return []
    return [e for e in (data if isinstance(data, list) else []) if isinstance(e, dict)]


def read_pauses(cronjob: Obj) -> list[PastPause]:
    """The finished pauses recorded on the CronJob, oldest first (lenient, as :func:`read_runs`)."""
    keys = ("by", "at", "reason", "until", "resumed_by", "resumed_at")
    return [PastPause(**{k: _short(e.get(k) or "") for k in keys}) for e in _trail(cronjob, ANN_PAUSES)][-RUNS_KEPT:]


def pauses_with(cronjob: Obj, pause: Pause, *, resumed_by: str, resumed_at: datetime) -> str:
    """The ``cronctl.dev/pauses`` value after ``pause`` ends: the pauses kept so far plus this one, at
    most :data:`RUNS_KEPT`, each text field cut to :data:`RUN_FIELD_MAX` characters."""
    import json

    this = PastPause(by=_short(pause.by), at=rfc3339_z(pause.at) if pause.at else "", reason=_short(pause.reason),
                     until=rfc3339_z(pause.until) if pause.until else "", resumed_by=_short(resumed_by),
                     resumed_at=rfc3339_z(resumed_at))
    kept = [*read_pauses(cronjob), this][-RUNS_KEPT:]
    return json.dumps([p.entry() for p in kept], separators=(",", ":"), ensure_ascii=False)


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

    def entry(self) -> dict[str, Any]:
        """This run as one entry of the ``cronctl.dev/runs`` annotation (:func:`runs_with` writes the
        list, :func:`read_runs` reads these keys back): a stored format, kept beside its type."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @property
    def held(self) -> tuple[datetime, datetime] | None:
        """The time the run held the CronJob suspended (when it suspended it; a run that found it
        suspended held nothing new), or None."""
        s, e = when(self.suspended_at), when(self.restored_at)
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
    out: list[PastRun] = []
    for e in _trail(cronjob, ANN_RUNS):
        if not isinstance(e.get("run_id"), str):
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
    return json.dumps([r.entry() for r in kept[-RUNS_KEPT:]], separators=(",", ":"), ensure_ascii=False)


def clear_record_annotations() -> dict[str, None]:
    """A merge-patch ``metadata.annotations`` value that removes every record key (null deletes)."""
    return {k: None for k in RunRecord._KEYS.values()}


# -- one Job record, one interval and overlap rule ---------------------------------------------
def slot_of_name(job_name: str, cronjob_name: str) -> datetime | None:
    """The slot the controller's Job name ``<cronjob>-<minutes since the epoch>`` stands for; None
    when the name is not one (ASCII digits only, and a slot in MIN_YEAR..MAX_YEAR: ``t-5258964000``
    would be in the year 11968)."""
    digits = job_name[len(cronjob_name) + 1:] if job_name.startswith(cronjob_name + "-") else ""
    if digits.isascii() and digits.isdigit() and 8 <= len(digits) <= 10 and int(digits) <= _MAX_SLOT_MINUTES:
        return datetime.fromtimestamp(int(digits) * 60, UTC)
    return None


def job_scheduled_for(job: Obj, cronjob_name: str) -> datetime | None:
    """The time a scheduled Job stands for: the controller's scheduled-timestamp annotation (in the
    CronJob's zone, with offset), else the controller's name ``<cronjob>-<unix minutes>``
    (clusters before the annotation existed, docs/SEMANTICS.md §4.6)."""
    t = scheduled_for(job)
    if t is not None:
        return t
    return slot_of_name(name_of(job), cronjob_name) if origin(job) == "scheduled" else None


@dataclass(frozen=True)
class JobRecord:
    """One Job of a CronJob as every command sees it (``status``, ``history``, ``bundle``).

    The running interval ``[start, end)`` is the one rule for overlaps (docs/MODEL.md, section 2):

    - ``start`` is ``status.startTime``, else ``metadata.creationTimestamp``, else ``now`` (the API
      always sets the creation time; only a hand-made dump lacks both);
    - a Job without a terminal condition is running: its interval reaches through the second of
      ``now`` (``max(now, start) + 1 s``; API times have one-second precision, so a Job that started
      in the second of ``now`` does run at ``now``, and two running Jobs always overlap);
    - a finished Job ends at :func:`finished_at` (completionTime, else the terminal condition's
      transition time); one that is finished at an unknown time gets no interval (``end == start``):
      it is not taken as running, and nothing is invented;
    - two intervals overlap when they share time (half-open: one that ends when the other starts
      does not), and a zero-length interval overlaps nothing.

    ``duration`` is kubectl's DURATION column (start to finish, or to now while it runs; None
    without a startTime): what is shown, not what overlaps.
    """

    name: str
    uid: str
    origin: str  # manual | scheduled (:func:`origin`)
    scheduled_for: datetime | None  # the slot a scheduled Job stands for (:func:`job_scheduled_for`)
    claims: datetime | None  # the slot a cronctl manual run stands for (--occurrence)
    created: datetime | None
    started: datetime | None
    completed: datetime | None
    outcome: str | None  # Complete | Failed | None (running)
    start: datetime
    end: datetime
    running: bool
    failure_reason: str | None = None  # the reason of its Failed (or FailureTarget) condition
    run_id: str = ""  # the cronctl run that made it
    duration: timedelta | None = None

    def overlaps(self, other: "JobRecord") -> bool:
        """The two running intervals share time (the rule in the class docstring)."""
        return (self.start < self.end and other.start < other.end
                and self.start < other.end and other.start < self.end)


def job_interval(started_at: datetime | None, created_at: datetime | None, completed: datetime | None, *,
                 running: bool, now: datetime) -> tuple[datetime, datetime]:
    """A Job's running interval at ``now``, the one rule for overlaps and for the bars drawn of them:
    from its start (startTime, else creation, else now); a running Job through the current second,
    a finished one to its completion, one finished at an unknown time has no interval (end = start)."""
    start = started_at or created_at or now
    if running:
        return start, max(now, start) + timedelta(seconds=1)
    if completed is not None:
        return start, max(completed, start)
    return start, start


def job_record(job: Obj, cronjob_name: str, now: datetime) -> JobRecord:
    """``job`` (a child of the CronJob named ``cronjob_name``) as a :class:`JobRecord` at ``now``."""
    created_at, started_at = created(job), started(job)
    outcome = job_outcome(job)
    completed = finished_at(job)
    start, end = job_interval(started_at, created_at, completed, running=outcome is None, now=now)
    failure = job_failure(job)
    return JobRecord(
        name=name_of(job), uid=str(meta(job).get("uid", "")), origin=origin(job),
        scheduled_for=job_scheduled_for(job, cronjob_name), claims=occurrence(job), created=created_at,
        started=started_at, completed=completed, outcome=outcome, start=start, end=end,
        running=outcome is None, failure_reason=failure.reason if failure is not None else None,
        run_id=annotations(job).get(ANN_RUN_ID, ""), duration=duration(job, now))


# --- the pod view -------------------------------------------------------------------------------

def _text(v: Any) -> str | None:
    return None if v is None or v == "" else str(v)


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


@dataclass(frozen=True)
class ContainerView:
    """A container status of a pod. The API's own values are kept as the pod holds them (a hand-made
    dump may put anything there): ``reason``, ``exit_code``, ``last_exit_code``."""

    name: str
    init: bool
    state: str | None  # waiting | running | terminated (the one the API gives; None: none of them)
    reason: Any
    exit_code: Any
    signal: int | None
    message: str | None
    restarts: int
    last_exit_code: Any
    last_reason: str | None
    image: str | None  # the image as the pod asked for it
    image_id: str | None  # the digest the node resolved
    started_at: datetime | None = None  # when its current state (running or terminated) began
    last_started_at: datetime | None = None  # when its last terminated instance began
    ended_before: bool = False  # the API names a last terminated state: an earlier instance ended

    @property
    def ran(self) -> bool:
        """It has run (is running or ended): it has a log to read."""
        return self.state in ("running", "terminated")

    @property
    def ran_before(self) -> bool:
        """An earlier instance ended (a restart): it has a previous log to read."""
        return self.ended_before or self.restarts > 0


@dataclass(frozen=True)
class PodView:
    """A pod as cronctl reads it: ``containers`` are its container statuses (init first, in the
    API's order), ``spec_containers`` the containers its spec names (name, init), in spec order."""

    name: str
    uid: str
    phase: Any
    reason: str | None
    message: str | None
    node: Any
    created: datetime | None
    started: datetime | None
    containers: tuple[ContainerView, ...]
    spec_containers: tuple[tuple[str, bool], ...] = ()

    def status_of(self, container: str) -> ContainerView | None:
        """The status of the container named ``container`` (None: it has none yet)."""
        return next((c for c in self.containers if c.name == container), None)

    def first_container(self) -> str:
        """The first main container's name ("" when the spec names none): the one a log line comes from."""
        return next((n for n, init in self.spec_containers if not init), "")


def _container(cs: Obj, init: bool) -> ContainerView:
    state = cs.get("state") or {}
    state = state if isinstance(state, dict) else {}
    # the API gives exactly one of these; any other key (a hand-made dump) is not a state
    kind = next((k for k in ("waiting", "running", "terminated") if isinstance(state.get(k), dict)), None)
    detail = state[kind] if kind else {}
    before = (cs.get("lastState") or {}) if isinstance(cs.get("lastState"), dict) else {}
    last = before.get("terminated") or {}
    last = last if isinstance(last, dict) else {}
    return ContainerView(
        name=str(cs.get("name", "")), init=init, state=kind, reason=detail.get("reason"),
        exit_code=detail.get("exitCode"), signal=_int(detail.get("signal")), message=_text(detail.get("message")),
        restarts=int(cs.get("restartCount") or 0), last_exit_code=last.get("exitCode"),
        last_reason=_text(last.get("reason")), image=_text(cs.get("image")), image_id=_text(cs.get("imageID")),
        started_at=when(detail.get("startedAt")) if kind in ("running", "terminated") else None,
        last_started_at=when(last.get("startedAt")), ended_before="terminated" in before)


def pod_view(pod: Obj) -> PodView:
    """``pod`` (the API's JSON, or a dump's) as a :class:`PodView`."""
    st = pod.get("status") or {}
    spec = pod.get("spec") or {}
    return PodView(
        name=str(meta(pod).get("name", "")), uid=str(meta(pod).get("uid", "")),
        phase=st.get("phase"), reason=_text(st.get("reason")), message=_text(st.get("message")),
        node=spec.get("nodeName"), created=when(meta(pod).get("creationTimestamp")), started=when(st.get("startTime")),
        containers=tuple(_container(cs, key == "initContainerStatuses")
                         for key in ("initContainerStatuses", "containerStatuses") for cs in st.get(key) or []),
        spec_containers=tuple((str(c.get("name") or ""), key == "initContainers")
                              for key in ("initContainers", "containers") for c in spec.get(key) or []
                              if isinstance(c, dict)))


def overlaps(records: Iterable[JobRecord]) -> list[tuple[str, str, datetime, datetime]]:
    """Every pair of records whose running intervals overlap (:meth:`JobRecord.overlaps`), as
    (earlier name, later name, overlap start, overlap end).

    A sweep over the intervals sorted by start (O(n log n + overlaps)), so that 2,000 Jobs stay
    cheap. Pairs come out ordered by the later interval's start, then by the earlier one's.
    """
    items = sorted((r.start, r.end, r.name) for r in records if r.end > r.start)
    open_: list[tuple[datetime, datetime, str]] = []
    out: list[tuple[str, str, datetime, datetime]] = []
    for s, e, n in items:
        open_ = [o for o in open_ if o[1] > s]
        for _os, oe, on in open_:
            out.append((on, n, s, min(oe, e)))
        open_.append((s, e, n))
    return out


#: the Job names a report lists for one overlap group (the count has them all): status, bundle.json
MAX_OVERLAP_NAMES = 20


@dataclass(frozen=True)
class OverlapGroup:
    """A span of time in which at least two Jobs ran at once (:func:`overlap_groups`)."""

    start: datetime  # the second Job started beside the first
    end: datetime  # fewer than two ran from here on
    names: tuple[str, ...]  # every Job that ran beside another in the span, by start (then name)
    manual: int  # how many of ``names`` are manual Jobs
    peak: int  # the most that ran at once
    peak_at: datetime  # when that was first reached
    manual_beside_scheduled: bool  # a manual Job ran at the same time as a scheduled one
    running: int  # how many of ``names`` are still running


def overlap_groups(records: Iterable[JobRecord]) -> list[OverlapGroup]:
    """The overlaps of :func:`overlaps` as groups, in order: one per maximal span in which two or
    more running intervals share time, with every Job that ran in it.

    A sweep line over the interval ends (an end before a start at the same instant: intervals are
    half-open), O(n log n) in time and O(n) in output, whatever the number of pairs: 2,000 Jobs
    that hang are one group of 2,000, not 1,999,000 pairs. Two Jobs that overlap are a group of
    two over exactly their shared time.
    """
    recs = [r for r in records if r.end > r.start]
    # (time, 0 = end / 1 = start, name, index): ends first at the same instant
    points = sorted([(r.start, 1, r.name, i) for i, r in enumerate(recs)]
                    + [(r.end, 0, r.name, i) for i, r in enumerate(recs)])
    active: dict[int, None] = {}  # insertion-ordered: the running Jobs by start
    out: list[OverlapGroup] = []
    members: list[int] = []
    start = peak_at = points[0][0] if points else datetime.min
    peak = manual_now = 0
    mixed = False
    for t, kind, _name, i in points:
        if kind == 0:
            del active[i]
            manual_now -= recs[i].origin == "manual"
            if len(active) == 1 and members:
                out.append(OverlapGroup(
                    start=start, end=t, names=tuple(recs[k].name for k in members),
                    manual=sum(recs[k].origin == "manual" for k in members), peak=peak, peak_at=peak_at,
                    manual_beside_scheduled=mixed, running=sum(recs[k].running for k in members)))
                members = []
            continue
        active[i] = None
        manual_now += recs[i].origin == "manual"
        if len(active) == 2:  # a new group: the one that ran alone, and this one
            start, peak, mixed = t, 0, False
            members = list(active)
        elif len(active) > 2:
            members.append(i)
        if len(active) > peak:
            peak, peak_at = len(active), t
        if len(active) >= 2 and 0 < manual_now < len(active):
            mixed = True
    return out


@dataclass(frozen=True)
class Beside:
    """The Jobs of another set that ran at the same time as one Job (:func:`beside`)."""

    names: tuple[str, ...]  # the first MAX_OVERLAP_NAMES of them, by start (then name)
    total: int  # how many there were


def beside(these: Iterable[JobRecord], others: Iterable[JobRecord], *,
           cap: int = MAX_OVERLAP_NAMES) -> dict[str, Beside]:
    """For each record of ``these``, the records of ``others`` whose running intervals overlap it
    (:meth:`JobRecord.overlaps`; a record is never beside itself): the first ``cap`` names and the count.

    One sweep over both sets' interval ends (ends first at an instant: intervals are half-open), so
    a pile-up of 2,000 manual Jobs beside 2,000 scheduled ones costs O(n log n + cap * n), not the
    4,000,000 pairs: a record that has its ``cap`` names stops collecting, and each count is two
    binary searches (the others that started before it ended, less those that ended before it began).
    """
    mine = [r for r in these if r.end > r.start]
    theirs = [r for r in others if r.end > r.start]
    starts = sorted(r.start for r in theirs)
    ends = sorted(r.end for r in theirs)
    by_name = {r.name: r for r in theirs}
    # (time, 0 = end / 1 = start, 0 = these / 1 = others, name, index)
    points = sorted([(r.start, 1, 0, r.name, i) for i, r in enumerate(mine)]
                    + [(r.end, 0, 0, r.name, i) for i, r in enumerate(mine)]
                    + [(r.start, 1, 1, r.name, i) for i, r in enumerate(theirs)]
                    + [(r.end, 0, 1, r.name, i) for i, r in enumerate(theirs)])
    names: list[list[str]] = [[] for _ in mine]
    hungry: dict[int, None] = {}  # these running now with fewer than cap names
    running: dict[int, None] = {}  # others running now, by start
    for _t, kind, side, name, i in points:
        if side == 0 and kind == 0:
            hungry.pop(i, None)
        elif side == 1 and kind == 0:
            del running[i]
        elif side == 0:  # one of these starts: the others already running
            for k in running:
                if len(names[i]) >= cap:
                    break
                if theirs[k].name != name:
                    names[i].append(theirs[k].name)
            if len(names[i]) < cap:
                hungry[i] = None
        else:  # one of the others starts beside every hungry one of these
            running[i] = None
            full = []
            for k in hungry:
                if mine[k].name != name:
                    names[k].append(name)
                    if len(names[k]) >= cap:
                        full.append(k)
            for k in full:
                del hungry[k]
    out: dict[str, Beside] = {}
    for i, r in enumerate(mine):
        total = bisect_left(starts, r.end) - bisect_right(ends, r.start)
        same = by_name.get(r.name)
        total -= same is not None and same.overlaps(r)
        out[r.name] = Beside(names=tuple(names[i]), total=max(total, len(names[i])))
    return out


# -- typed fields: the one answer for hand-written files -------------------------------------
# What the API server's typed decoding would say about the fields cronctl reads, decided here
# once for every command that reads files (explain -f, lint -f, bundle/history --from-dump): a
# wrong type is refused with the field named (the API server rejects a string for an integer or
# a boolean: ``suspend: "false"`` is an error, not "suspended"), never read loosely or left to
# a traceback deeper down. Objects from a live API server always pass. ``None`` (YAML ``~`` or
# an empty value) is "not set", as the API server reads a JSON null.

#: Timestamps outside these years are refused in a file (and read as absent by :func:`when`):
#: the arithmetic on them (offsets, paddings, a whole schedule walk) must stay inside
#: ``datetime``'s years 1..9999, and no real object is older than the Unix epoch.
MIN_YEAR = 1970
MAX_YEAR = 9000
#: A deadline (``startingDeadlineSeconds``, ``activeDeadlineSeconds``: int64 in the API) longer than
#: this acts as this one (:func:`capped_seconds`): 10,000 years, longer than any span between two
#: times in MIN_YEAR..MAX_YEAR, so the answer is the same and the arithmetic saturates instead of
#: overflowing ``timedelta``.
MAX_DEADLINE_SECONDS = 10_000 * 365 * 86_400


#: the minutes since the epoch of the last minute of MAX_YEAR (the last slot a Job name can stand for)
_MAX_SLOT_MINUTES = int((datetime(MAX_YEAR + 1, 1, 1, tzinfo=UTC) - datetime(1970, 1, 1, tzinfo=UTC)).total_seconds()
                        // 60) - 1


def instant(text: str, *, what: str) -> datetime:
    """An RFC3339 instant given on the command line (``--now``), in UTC; BadInput naming ``what``
    when it is not one or its year is outside MIN_YEAR..MAX_YEAR, as a file's times are refused."""
    t = parse_rfc3339(text, what=what)
    if not MIN_YEAR <= t.year <= MAX_YEAR:
        raise BadInput(f"bad {what} {text!r}: year {t.year} is outside {MIN_YEAR}..{MAX_YEAR} (MIN_YEAR, MAX_YEAR)")
    return t


def capped_seconds(seconds: int) -> timedelta:
    """``timedelta(seconds=seconds)``, saturated at ±:data:`MAX_DEADLINE_SECONDS`."""
    return timedelta(seconds=max(-MAX_DEADLINE_SECONDS, min(seconds, MAX_DEADLINE_SECONDS)))


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
    _check_time_annotations(obj)
    for req in REQUIRED.get(kind, ()):  # type: ignore[arg-type]
        if _typed_at(obj, tuple(req.split("."))) is None:
            raise BadInput(f"{req} is missing")


def typed_times(obj: Obj) -> list[datetime]:
    """The instants in the timestamp fields of :data:`SCHEMAS` of one CronJob, Job, Pod or Event
    (``metadata.creationTimestamp``, ``status.startTime``, an Event's ``lastTimestamp``, ...), read
    with :func:`when`: the fields a file is checked for (years :data:`MIN_YEAR`..:data:`MAX_YEAR`).
    A key of the same name anywhere else (a Pod condition's ``lastProbeTime``, a ConfigMap value)
    is not one of them: nobody checks it, so nothing is derived from it. Other kinds: none."""
    kind = obj.get("kind")
    schema = SCHEMAS.get(kind) if isinstance(kind, str) else None
    out: list[datetime] = []
    stack: list[tuple[Any, _Schema]] = [(obj, schema)] if schema is not None else []
    while stack:
        value, sch = stack.pop()
        if isinstance(sch, dict) and isinstance(value, dict):
            stack.extend((value[k], sub) for k, sub in sch.items() if k in value)
        elif isinstance(sch, list) and isinstance(value, list):
            stack.extend((item, sch[0]) for item in value)
        elif sch == _TIME:
            t = when(value)
            if t is not None:
                out.append(t)
    return out


#: the annotations that hold a time (the controller's and cronctl's), read with :func:`when`
TIME_ANNOTATIONS = (SCHEDULED_TS, ANN_STARTED, ANN_UPDATED, ANN_OCCURRENCE, ANN_PAUSED_AT, ANN_PAUSED_UNTIL)


def _check_time_annotations(obj: Obj) -> None:
    """An annotation of :data:`TIME_ANNOTATIONS` that is a time outside MIN_YEAR..MAX_YEAR (in
    its own offset or in UTC) is refused, naming it; one that is no time at all stays evidence
    read leniently (:func:`when`: absent)."""
    for key, value in annotations(obj).items():
        if key not in TIME_ANNOTATIONS or not isinstance(value, str):
            continue
        text = value.strip()
        try:
            t = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)
        except ValueError:
            continue
        if t.tzinfo is None:
            continue
        try:
            year = t.astimezone(UTC).year
        except OverflowError:
            year = t.year
        if not (MIN_YEAR <= t.year <= MAX_YEAR and MIN_YEAR <= year <= MAX_YEAR):
            raise BadInput(f"metadata.annotations.{key}: year {year} is outside {MIN_YEAR}..{MAX_YEAR} "
                           "(MIN_YEAR, MAX_YEAR)")


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


# -- one view of a CronJob: the controller's inputs, read with one set of checks ----------------
#: what the API server fills in for an unset history limit (batch/v1 defaulting)
DEFAULT_SUCCESSFUL_HISTORY = 3
DEFAULT_FAILED_HISTORY = 1

#: the fields :func:`cronjob_view` reads, checked by the same table as files (:data:`SCHEMAS`)
_VIEW_FIELDS: tuple[tuple[str, str], ...] = (
    ("metadata", "name"), ("metadata", "namespace"), ("metadata", "uid"), ("metadata", "creationTimestamp"),
    ("spec", "schedule"), ("spec", "timeZone"), ("spec", "startingDeadlineSeconds"), ("spec", "suspend"),
    ("spec", "concurrencyPolicy"), ("spec", "successfulJobsHistoryLimit"), ("spec", "failedJobsHistoryLimit"),
    ("status", "lastScheduleTime"), ("status", "lastSuccessfulTime"), ("status", "active"),
)


@dataclass(frozen=True)
class HistoryLimits:
    """``successfulJobsHistoryLimit`` / ``failedJobsHistoryLimit``: how many finished Jobs of each
    outcome the controller keeps (docs/SEMANTICS.md §4.1). Unset: the API server's defaults, 3 and
    1 (``*_set`` False). A negative value (the API server refuses one) counts as 0: keep none."""

    successful: int = DEFAULT_SUCCESSFUL_HISTORY
    failed: int = DEFAULT_FAILED_HISTORY
    successful_set: bool = False
    failed_set: bool = False

    def of(self, outcome: str) -> int:
        """The limit for Jobs that ended ``outcome`` (``Complete`` or ``Failed``)."""
        return self.successful if outcome == "Complete" else self.failed

    def shown(self, outcome: str) -> str:
        """``successfulJobsHistoryLimit=5`` or ``failedJobsHistoryLimit=1 (default)``."""
        key = "successfulJobsHistoryLimit" if outcome == "Complete" else "failedJobsHistoryLimit"
        given = self.successful_set if outcome == "Complete" else self.failed_set
        return f"{key}={self.of(outcome)}" + ("" if given else " (default)")


@dataclass(frozen=True)
class CronJobView:
    """What the CronJob controller reads of a CronJob, read once with one set of checks.

    Every command builds the controller's inputs from this view (explain, status and run-manual's
    prediction, history, the bundle, the runbooks). A field of the wrong type (``suspend: "false"``,
    ``startingDeadlineSeconds: "30"``, a timestamp that is not RFC3339) is judged by the same table
    as a file (:data:`SCHEMAS`, docs/LIMITS.md "Typed fields"): it is never read loosely. The view reads it
    as unset and ``problem`` names it, in the words of :func:`check_typed`; :meth:`decide` (and
    :meth:`checked`) refuse such a view with :class:`BadInput`. What a command makes of that:
    ``explain`` exits 5; ``status``, ``run-manual``'s plan, ``history`` and the bundle show it as
    the controller's decision (``error``) for that CronJob and go on with the rest; a runbook says
    it where the controller's next move would be. Objects from a live API server always pass.
    The table of who does what is in docs/MODEL.md.
    """

    name: str
    namespace: str
    uid: str
    schedule: str
    time_zone: str | None
    created: datetime | None
    last_schedule: datetime | None
    last_successful: datetime | None
    starting_deadline: int | None
    suspended: bool
    concurrency_policy: str | None  # as written (None: not set, the controller's Allow)
    active: tuple[str, ...]  # the Job names in status.active
    history: HistoryLimits = field(default_factory=HistoryLimits)
    problem: str | None = None  # the first field of the wrong type, in check_typed's words
    # the Job template's bits commands state (not controller inputs: one of the wrong type reads as
    # unset and is no ``problem``; a file has it refused at load already, by check_typed)
    job_ttl: int | None = None  # jobTemplate.spec.ttlSecondsAfterFinished
    job_active_deadline: int | None = None  # jobTemplate.spec.activeDeadlineSeconds
    service_account: str | None = None  # the pod template's serviceAccountName, else serviceAccount

    @property
    def policy(self) -> str:
        """The concurrency policy the controller applies (``Allow`` when not set)."""
        return self.concurrency_policy or "Allow"

    @property
    def zone(self) -> str | None:
        """The zone the schedule runs in, for the times shown to people: a ``TZ=``/``CRON_TZ=`` prefix
        of the schedule (older objects; it wins over spec.timeZone, docs/SEMANTICS.md §1), else
        ``spec.timeZone``, else None (the controller's local zone, normally UTC). Only for showing
        times: the controller's scheduled-timestamp annotation follows spec.timeZone alone."""
        return self._prefix_zone or self.time_zone

    @property
    def zone_words(self) -> str:
        """:attr:`zone` for people: ``Europe/Berlin``, ``Asia/Kolkata (from the TZ= prefix in the
        schedule, which wins over spec.timeZone)``, or ``none (the controller's zone, normally UTC)``."""
        if self._prefix_zone is not None:
            return f"{self._prefix_zone} (from the TZ= prefix in the schedule, which wins over spec.timeZone)"
        return self.time_zone or "none (the controller's zone, normally UTC)"

    @functools.cached_property
    def _prefix_zone(self) -> str | None:
        """The zone of a TZ=/CRON_TZ= prefix of the schedule, None without one (or when it does not parse)."""
        from cronctl.errors import CronctlError
        from cronctl.schedule import parse

        try:
            sched = parse(self.schedule, self.time_zone)
        except CronctlError:
            return None
        return sched.zone if sched.zone_from_prefix else None

    def checked(self) -> "CronJobView":
        """This view; BadInput naming the field when one is of the wrong type."""
        if self.problem is not None:
            raise BadInput(self.problem)
        return self

    def decide(self, now: datetime, *, suspended: bool = False) -> Any:
        """The controller's decision at one sync at ``now`` (:func:`cronctl.schedule.decide`) from
        this CronJob's inputs; ``suspended`` is the suspend the sync sees (False: what
        un-suspending now would do). A CronJob without a creation time is taken as created now.
        Raises BadInput (a field of the wrong type) and ScheduleError (a negative deadline)."""
        from cronctl.schedule.controller import decide

        self.checked()
        return decide(self.schedule, time_zone=self.time_zone, name=self.name, created=self.created or now,
                      last_schedule=self.last_schedule, starting_deadline=self.starting_deadline, now=now,
                      suspended=suspended, concurrency_policy=self.concurrency_policy, active=self.active)


def cronjob_view(cronjob: Obj) -> CronJobView:
    """The :class:`CronJobView` of a CronJob dict. Never raises: a field of the wrong type is read
    as unset and named in ``problem`` (the first one found)."""
    problems: list[str] = []
    schema = SCHEMAS["CronJob"]
    values: dict[tuple[str, str], Any] = {}
    for part_name in ("metadata", "spec", "status"):
        part = cronjob.get(part_name)
        if part is not None and not isinstance(part, dict):
            problems.append(f"{part_name}: expected a mapping, got {_got(part)}")
    for part_name, key in _VIEW_FIELDS:
        part = cronjob.get(part_name)
        value = part.get(key) if isinstance(part, dict) else None
        try:
            _check_value(value, schema[part_name][key], f"{part_name}.{key}")
        except BadInput as e:
            problems.append(e.message)
            value = None
        values[(part_name, key)] = value
    if values[("spec", "schedule")] is None and not problems:
        problems.append("spec.schedule is missing")

    def text(part: str, key: str) -> str | None:
        v = values[(part, key)]
        return v if isinstance(v, str) else None

    def limit(key: str, default: int) -> tuple[int, bool]:
        v = values[("spec", key)]
        return (max(v, 0), True) if isinstance(v, int) else (default, False)

    ok, ok_set = limit("successfulJobsHistoryLimit", DEFAULT_SUCCESSFUL_HISTORY)
    failed, failed_set = limit("failedJobsHistoryLimit", DEFAULT_FAILED_HISTORY)
    deadline = values[("spec", "startingDeadlineSeconds")]
    active = values[("status", "active")] or []
    job_spec = _typed_at(cronjob, _JOB_SPEC_PATH)
    pod_spec = _typed_at(cronjob, (*_JOB_SPEC_PATH, "template", "spec"))

    def template_value(holder: Any, key: str, schema: _Schema) -> Any:
        v = holder.get(key) if isinstance(holder, dict) else None
        try:
            _check_value(v, schema, key)
        except BadInput:
            return None
        return v

    account = template_value(pod_spec, "serviceAccountName", _STR) or template_value(pod_spec, "serviceAccount", _STR)
    return CronJobView(
        name=text("metadata", "name") or "", namespace=text("metadata", "namespace") or "",
        uid=text("metadata", "uid") or "", schedule=text("spec", "schedule") or "",
        time_zone=text("spec", "timeZone"), created=when(values[("metadata", "creationTimestamp")]),
        last_schedule=when(values[("status", "lastScheduleTime")]),
        last_successful=when(values[("status", "lastSuccessfulTime")]),
        starting_deadline=deadline if isinstance(deadline, int) else None,
        suspended=values[("spec", "suspend")] is True,
        concurrency_policy=text("spec", "concurrencyPolicy"),
        active=tuple(str(a["name"]) for a in active if isinstance(a, dict) and a.get("name")),
        history=HistoryLimits(successful=ok, failed=failed, successful_set=ok_set, failed_set=failed_set),
        problem=problems[0] if problems else None,
        job_ttl=template_value(job_spec, "ttlSecondsAfterFinished", _I32),
        job_active_deadline=template_value(job_spec, "activeDeadlineSeconds", _I64),
        service_account=account or None)


#: where a CronJob keeps its Job template's spec
_JOB_SPEC_PATH = ("spec", "jobTemplate", "spec")


def _typed_at(obj: Obj, path: tuple[str, ...]) -> Any:
    """The value at ``path`` of nested mappings; None where a step is missing or not a mapping."""
    cur: Any = obj
    for part in path:
        cur = cur.get(part) if isinstance(cur, dict) else None
    return cur
