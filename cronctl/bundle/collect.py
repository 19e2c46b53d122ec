"""Collection from a live cluster: Cluster -> RawData.

Efficiency (issue 5): one list call per kind for the whole namespace (paginated by the Cluster),
filtered here by owner uid and involvedObject; no per-Job request. Logs are necessarily one
request per container instance, and only for containers that have actually run (a container
that never started has no log: asking would only cost a request and return an error).

Permissions: a read the caller may not make (403) is recorded in ``RawData.missing`` with the
API's reason, and the bundle goes on without it. After the first forbidden log read, no more log
reads are tried (they would all be refused the same way). Only the CronJob itself is required:
without it there is nothing to bundle. Secret objects are never read: the Cluster protocol has no
verb for them, and nothing here asks.
"""

from __future__ import annotations

from datetime import datetime
from typing import Callable, TypeVar

from cronctl import model
from cronctl.bundle.raw import LogRecord, Missing, Obj, RawData
from cronctl.cluster import Cluster
from cronctl.errors import ApiError, BadInput, BadUsage, NotFound, PermissionMissing

T = TypeVar("T")


def _forbidden(e: Exception) -> bool:
    return isinstance(e, PermissionMissing) or (isinstance(e, ApiError) and e.status == 403)


#: the most ``--max-log-bytes`` may keep of one log: the kubelet rotates a container's log at
#: 10 MiB by default (containerLogMaxSize), and every log kept is held in memory until written
MAX_LOG_BYTES = 64 * 1024 * 1024


def check_max_log_bytes(max_log_bytes: int) -> None:
    """BadUsage (exit 2, as every value out of a flag's range) for a ``--max-log-bytes`` outside
    1..:data:`MAX_LOG_BYTES`."""
    if not 1 <= max_log_bytes <= MAX_LOG_BYTES:
        raise BadUsage(f"bad --max-log-bytes {max_log_bytes}: 1 to {MAX_LOG_BYTES} bytes of each log "
                       f"({MAX_LOG_BYTES // (1024 * 1024)} MiB)")


def collect(cluster: Cluster, names: list[str] | None, *, now: datetime, collected_at: datetime,
            since_seconds: int | None = None, max_log_bytes: int = 1 << 20,
            logs: bool = True) -> RawData:
    """Read everything a bundle needs for the CronJobs ``names`` (None: every CronJob of the namespace).

    Raises NotFound for a named CronJob that does not exist and PermissionMissing when the
    CronJobs themselves cannot be read; every other failed read is recorded as missing. A
    ``max_log_bytes`` beyond :data:`MAX_LOG_BYTES` is BadInput before any read.
    """
    check_max_log_bytes(max_log_bytes)
    missing: list[Missing] = []

    def attempt(what: str, fn: Callable[[], T], default: T) -> T:
        try:
            return fn()
        except (PermissionMissing, ApiError) as e:
            missing.append(Missing(what=what, reason=e.message))
            return default

    version = attempt("version", cluster.server_version, None)
    who = cluster.whoami()
    if names is None:
        cronjobs = cluster.list_cronjobs()
        if not cronjobs:
            raise NotFound(f"no CronJob in namespace {cluster.namespace}")
    else:
        cronjobs = [cluster.get_cronjob(n) for n in names]
    jobs: list[Obj] = attempt("jobs", lambda: cluster.list_jobs()[0], [])
    pods: list[Obj] = attempt("pods", lambda: cluster.list_pods(), [])
    events: list[Obj] = attempt("events", lambda: cluster.list_events(), [])

    # Only pods of the selected CronJobs' Jobs matter (namespace-wide lists hold others).
    job_uids = {str(j["metadata"].get("uid")) for j in jobs
                if any(model.owned_by(j, cj) for cj in cronjobs)}
    child_pods = [p for p in pods if model.controller_owner_uid(p, "Job") in job_uids]

    log_records: list[LogRecord] = []
    if logs:
        log_records = _read_logs(cluster, child_pods, missing, since_seconds, max_log_bytes)

    return RawData(
        namespace=cluster.namespace, source="cluster", now=now, now_source="clock",
        collected_at=collected_at, cronjobs=cronjobs, jobs=jobs, pods=pods, events=events,
        logs=log_records, logs_note=None if logs else "log collection was turned off (--no-logs)",
        missing=missing, server=cluster.server_url(), server_version=version, collected_by=who,
        options={"since_seconds": since_seconds, "max_log_bytes": max_log_bytes, "logs": logs},
        request_count=cluster.request_count,
    )


def log_instances(pod: Obj) -> list[tuple[str, bool, str | None]]:
    """(container, previous, why-no-log) for every container instance of the pod, in spec order.

    ``why-no-log`` is None when the instance has run and its log can be read; a container that
    never started gets a reason instead, and no request is made for it.
    """
    view = model.pod_view(pod)
    out: list[tuple[str, bool, str | None]] = []
    for name, _init in view.spec_containers:
        cs = view.status_of(name)
        out.append((name, False, None if cs is not None and cs.ran else "container never started (no log)"))
        if cs is not None and cs.ran_before:
            out.append((name, True, None))
    return out


def _read_logs(cluster: Cluster, pods: list[Obj], missing: list[Missing], since: int | None,
               cap: int) -> list[LogRecord]:
    out: list[LogRecord] = []
    forbidden: str | None = None
    for p in sorted(pods, key=lambda p: str(p["metadata"]["name"])):
        pod = str(p["metadata"]["name"])
        for container, previous, why in log_instances(p):
            if why is not None:
                out.append(LogRecord(pod, container, previous, None, missing=why))
                continue
            if forbidden is not None:
                out.append(LogRecord(pod, container, previous, None, missing=forbidden))
                continue
            try:
                text = cluster.read_pod_log(pod, container, previous=previous, since_seconds=since,
                                            limit_bytes=cap + 1)
            except (PermissionMissing, ApiError) as e:
                reason = e.message
                if _forbidden(e):
                    forbidden = reason
                    missing.append(Missing(what="pods/log", reason=reason,
                                           object=f"pod/{pod} and every other pod"))
                else:
                    missing.append(Missing(what="pods/log", reason=reason,
                                           object=f"pod/{pod} container {container}"
                                           + (" (previous)" if previous else "")))
                out.append(LogRecord(pod, container, previous, None, missing=reason))
                continue
            data = text.encode("utf-8")
            truncated = len(data) > cap
            if truncated:
                # keep whole lines only: a line cut at the cap could end inside a credential
                # that masking would then no longer recognise (https://user:pa|ss@...)
                data = data[:cap]
                cut = data.rfind(b"\n")
                data = data[: cut + 1] if cut >= 0 else b""
                text = data.decode("utf-8", errors="ignore")
            out.append(LogRecord(pod, container, previous, text, bytes=len(data), truncated=truncated))
    return out


def add_ledger(raw: RawData, names: list[str] | None, url: str | None, cluster_name: str, *,
               since: datetime) -> None:
    """Add what the ledger (cronctl record) kept and the cluster no longer holds: the Jobs and
    events of the bundled CronJobs (by uid; the live object wins) and the log tails of Jobs whose
    pods are gone. The ledger is named in the bundle's options."""
    from cronctl.ledger.facts import merge
    from cronctl.ledger.store import evidence_for, shown

    evs = [evidence_for(url, cluster_name, namespace=raw.namespace, name=n, since=since, strict=True)
           for n in (names if names is not None else [None])]
    for ev in evs:
        raw.suspensions.update(ev.suspensions)
    raw.jobs = merge(raw.jobs, [j for ev in evs for j in ev.jobs])
    raw.events = merge(raw.events, [e for ev in evs for e in ev.events])
    live_logs = {(lg.pod, lg.container) for lg in raw.logs if lg.text is not None}
    live_pods = {model.name_of(p) for p in raw.pods}
    added = 0
    for ev in evs:
        for lg in ev.logs:
            if (lg["pod"], lg["container"]) in live_logs:
                continue
            if lg["pod"] not in live_pods:  # the pod is gone: a stub names its Job, so the log is the Job's
                live_pods.add(str(lg["pod"]))
                raw.pods.append(_pod_stub(lg))
            text = str(lg["text"])
            raw.logs.append(LogRecord(str(lg["pod"]), str(lg["container"]), False, text,
                                      bytes=len(text.encode("utf-8")), truncated=bool(lg["truncated"])))
            added += 1
    raw.effects = _effects(url, [f"{model.meta(c).get('namespace') or raw.namespace}/{model.name_of(c)}"
                                 for c in raw.cronjobs if names is None or model.name_of(c) in names], since, raw.now)
    raw.options = {**raw.options, "ledger": shown(url), "ledger_cluster": cluster_name, "ledger_logs": added}


def _effects(url: str | None, workflows: list[str], since: datetime, now: datetime) -> dict[str, dict[str, Obj]]:
    """cronctl claim's effects of the bundled CronJobs' default workflow keys (namespace/name) since
    ``since``, keyed by slot as history's rows name it (RFC 3339 UTC), beside its Job verdict."""
    from cronctl.ledger.claimstore import effects_by_slot
    from cronctl.timeutil import rfc3339_z

    return {wf: {rfc3339_z(t): dict(e) for t, e in by.items()}
            for wf, by in effects_by_slot(url, workflows, now, since=since).items()}


def _pod_stub(lg: Obj) -> Obj:
    """A Pod the ledger kept a log of but not the object: its name, its Job, and where it came from."""
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": lg["pod"], "namespace": lg["namespace"], "labels": {"job-name": lg["job"]},
                         "annotations": {model.ANN_LEDGER: f"{lg['cluster']}; only the log tail was kept"},
                         "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": lg["job"],
                                              "uid": lg["job_uid"], "controller": True}]},
            "spec": {"containers": [{"name": lg["container"]}]}, "status": {}}
