"""``cronctl history``: read the CronJobs, Jobs and Events (live or from a dump) and judge every slot.

Reads only: one paginated list of CronJobs (for the namespace, or for the whole cluster with
``all_namespaces``), then one paginated list of Jobs and one of Events per namespace that has
CronJobs; no per-object request. The judging is
:func:`cronctl.history.slot_history` (pure).
"""

from __future__ import annotations

import copy
from datetime import datetime
from typing import Any, Callable, TypeVar

from cronctl import model
from cronctl.cluster import Cluster
from cronctl.errors import ApiError, NotFound, PermissionMissing
from cronctl.history import Options, slot_history

Obj = dict[str, Any]
T = TypeVar("T")


def _by_namespace(objs: list[Obj], default: str) -> dict[str, list[Obj]]:
    out: dict[str, list[Obj]] = {}
    for o in objs:
        ns = str(model.meta(o).get("namespace") or default)
        out.setdefault(ns, []).append(o)
    return out


def judge_all(cronjobs: list[Obj], jobs: list[Obj], events: list[Obj],
              opts: Options, *, default_namespace: str = "default") -> list[Obj]:
    """The history of every CronJob, each judged against the Jobs and Events of its namespace."""
    jobs_ns = _by_namespace(jobs, default_namespace)
    events_ns = _by_namespace(events, default_namespace)
    out = []
    for cj in sorted(cronjobs, key=lambda c: (str(model.meta(c).get("namespace") or ""), model.name_of(c))):
        ns = str(model.meta(cj).get("namespace") or default_namespace)
        out.append(slot_history(cj, jobs_ns.get(ns, []), events_ns.get(ns, []), opts))
    return out


def from_cluster(cluster: Cluster, name: str | None, *, all_namespaces: bool, now: datetime,
                 opts: Options) -> tuple[list[Obj], list[str]]:
    """(histories, what could not be read). NotFound for a named CronJob that does not exist.

    With ``all_namespaces`` the CronJobs are listed once for the cluster, then the Jobs and Events
    one namespace at a time (only namespaces that have CronJobs), judged and let go: memory is
    bounded by the largest namespace, not by the cluster."""
    missing: list[str] = []
    if name is not None:
        cronjobs = [cluster.get_cronjob(name)]
    else:
        cronjobs = cluster.list_cronjobs(all_namespaces=all_namespaces)
        if not cronjobs:
            where = "the cluster" if all_namespaces else f"namespace {cluster.namespace}"
            raise NotFound(f"no CronJob in {where}")

    def read(what: str, fn: Callable[[], T], default: T) -> T:
        # a list the caller may not read is told, and the history goes on without it
        try:
            return fn()
        except (PermissionMissing, ApiError) as e:
            if isinstance(e, ApiError) and e.status != 403:
                raise
            missing.append(f"{what}: {e.message}")
            return default

    out: list[Obj] = []
    for ns, cjs in sorted(_by_namespace(cronjobs, cluster.namespace).items()):
        c = cluster
        if ns != cluster.namespace:
            c = copy.copy(cluster)  # the same connection, another namespace
            c.namespace = ns
        none: list[Obj] = []
        jobs = read(f"jobs in {ns}", lambda: c.list_jobs()[0], none)
        events = read(f"events in {ns}", lambda: c.list_events(), none)
        out += judge_all(cjs, jobs, events, opts, default_namespace=ns)
    return out, missing
