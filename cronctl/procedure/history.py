"""``cronctl history``: read the CronJobs, Jobs and Events (live or from a dump) and judge every slot.

Reads only: one paginated list of CronJobs (for the namespace, or for the whole cluster with
``all_namespaces``), then one paginated list of Jobs and one of Events per namespace that has
CronJobs; no per-object request. The judging is
:func:`cronctl.history.slot_history` (pure).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

from cronctl import model
from cronctl.cluster import Cluster
from cronctl.errors import ApiError, NotFound, PermissionMissing
from cronctl.history import Options, Prepared
from cronctl.slotrows import History, SlotRow

Obj = dict[str, Any]
T = TypeVar("T")


def _by_namespace(objs: list[Obj], default: str) -> dict[str, list[Obj]]:
    out: dict[str, list[Obj]] = {}
    for o in objs:
        ns = str(model.meta(o).get("namespace") or default)
        out.setdefault(ns, []).append(o)
    return out


def _order(c: Obj) -> tuple[str, str]:
    return str(model.meta(c).get("namespace") or ""), model.name_of(c)


@dataclass(frozen=True)
class Judged:
    """What the recorder judged of one CronJob's window: the rows of the slots before ``judge_from``
    (every one of them closed and kept), each with its slot, oldest first; the judge takes it from there."""

    judge_from: datetime
    rows: list[tuple[datetime, SlotRow]]


@dataclass
class _Item:
    """One CronJob read and prepared (:func:`cronctl.history.prepare`), not judged yet."""

    prepared: Prepared
    kept: Judged | None  # the recorder's rows up to where the judge takes over
    ledger: str | None  # the cluster a CronJob read from the ledger is kept under (its ANN_LEDGER)
    settled: frozenset[int] = frozenset()  # ids of kept rows the recorder found nothing in (Fleet)


class Fleet:
    """Many CronJobs' histories, judged one at a time as they are iterated (once), each dropped by
    this object when handed out: a fleet's week is two million slots, a CronJob's 2,016. ``since`` is
    the earliest start of their windows (None: no window), known before any of them is judged, so
    that a page's grid is laid before its first row."""

    def __init__(self, items: list[_Item], opts: Options,
                 after: Callable[[History], History] | None = None, settled: list[SlotRow] | None = None) -> None:
        if settled:  # each item keeps the ids of its own settled rows, alive while it is: an id is never reused
            ids = {id(d) for d in settled}
            for i in items:
                if i.kept is not None:
                    i.settled = frozenset(id(r) for _t, r in i.kept.rows if id(r) in ids)
            settled.clear()
        self._items: list[_Item | None] = list(items)
        self._opts = opts
        self._after = after
        starts = [opts.since if i.kept is not None and opts.since is not None and i.prepared.since is not None
                  else i.prepared.since for i in items]
        self.since: datetime | None = min((t for t in starts if t is not None), default=None)

    def __iter__(self) -> Iterator[History]:
        return (h for h, _ids in self.judged())

    def judged(self) -> Iterator[tuple[History, frozenset[int]]]:
        """Each history, with the ids of the ledger's rows in it that the recorder's redaction rules
        found nothing in when it kept them (``settled`` of :meth:`cronctl.redact.Redactor.data_in_place`)."""
        from cronctl.history import judge, spliced

        opts = self._opts
        for k, item in enumerate(self._items):
            if item is None:
                raise RuntimeError("a Fleet is judged once")
            self._items[k] = None
            h = judge(item.prepared)
            if item.kept is not None and opts.since is not None:
                h = spliced(h, item.kept.rows, item.kept.judge_from, opts.since, opts.max_slots)
            if item.ledger:
                h["ledger"] = item.ledger
            yield (self._after(h) if self._after is not None else h), item.settled


def prepare_all(cronjobs: list[Obj], jobs: list[Obj], events: list[Obj], opts: Options, *,
                default_namespace: str = "default", judged: Mapping[str, Judged] | None = None,
                from_ledger: bool = False) -> list[_Item]:
    """Every CronJob prepared against the Jobs and Events of its namespace (and, for a CronJob in
    ``judged``, from where the recorder's rows stop), in (namespace, name) order. ``from_ledger``:
    the CronJobs were read from the ledger, and each history says so (its ``ledger`` field names the
    cluster, several clusters may share one ledger, and a deletion the recorder saw)."""
    from cronctl.history import prepare

    jobs_ns = _by_namespace(jobs, default_namespace)
    events_ns = _by_namespace(events, default_namespace)
    out: list[_Item] = []
    for cj in sorted(cronjobs, key=_order):
        ns = str(model.meta(cj).get("namespace") or default_namespace)
        kept = (judged or {}).get(str(model.meta(cj).get("uid") or ""))
        if opts.since is None:
            kept = None
        mine = opts if kept is None else replace(opts, since=kept.judge_from - timedelta(seconds=1))
        ledger = model.annotations(cj).get(model.ANN_LEDGER) if from_ledger else None
        out.append(_Item(prepare(cj, jobs_ns.get(ns, []), events_ns.get(ns, []), mine), kept,
                         str(ledger) if ledger else None))
    return out


def judge_all(cronjobs: list[Obj], jobs: list[Obj], events: list[Obj],
              opts: Options, *, default_namespace: str = "default",
              judged: Mapping[str, Judged] | None = None) -> list[History]:
    """The history of every CronJob, each judged against the Jobs and Events of its namespace (and,
    for a CronJob in ``judged``, from the recorder's rows up to where they stop)."""
    return list(Fleet(prepare_all(cronjobs, jobs, events, opts, default_namespace=default_namespace,
                                  judged=judged), opts))


def list_cronjobs(cluster: Cluster, *, all_namespaces: bool) -> list[Obj]:
    """The CronJobs of the namespace (or of all); NotFound when there is none."""
    cronjobs = cluster.list_cronjobs(all_namespaces=all_namespaces)
    if not cronjobs:
        where = "the cluster" if all_namespaces else f"namespace {cluster.namespace}"
        raise NotFound(f"no CronJob in {where}")
    return cronjobs


def by_namespace(cluster: Cluster, cronjobs: list[Obj],
                 missing: list[str]) -> Iterator[tuple[str, list[Obj], list[Obj], list[Obj]]]:
    """``(namespace, its CronJobs, its Jobs, its Events)``, one namespace at a time (only those with
    CronJobs), each list read when its namespace comes: memory is bounded by the largest namespace,
    not by the cluster. A list the caller may not read (403) is added to ``missing`` and given empty."""

    def read(what: str, fn: Callable[[], T], default: T) -> T:
        try:
            return fn()
        except (PermissionMissing, ApiError) as e:
            if isinstance(e, ApiError) and e.status != 403:
                raise
            missing.append(f"{what}: {e.message}")
            return default

    for ns, cjs in sorted(_by_namespace(cronjobs, cluster.namespace).items()):
        c = cluster
        if ns != cluster.namespace:
            c = copy.copy(cluster)  # the same connection, another namespace
            c.namespace = ns
        none: list[Obj] = []
        jobs = read(f"jobs in {ns}", lambda: c.list_jobs()[0], none)
        events = read(f"events in {ns}", lambda: c.list_events(), none)
        yield ns, cjs, jobs, events


def from_cluster(cluster: Cluster, name: str | None, *, all_namespaces: bool, now: datetime,
                 opts: Options) -> tuple[Fleet, list[str]]:
    """(the histories, what could not be read). NotFound for a named CronJob that does not exist, or
    for a namespace (cluster) without CronJobs. Reads namespace by namespace (:func:`by_namespace`);
    what stays of a namespace's lists is the evidence of its CronJobs, and each history is judged
    when the Fleet is iterated."""
    missing: list[str] = []
    cronjobs = [cluster.get_cronjob(name)] if name is not None else list_cronjobs(cluster,
                                                                                 all_namespaces=all_namespaces)
    items: list[_Item] = []
    for ns, cjs, jobs, events in by_namespace(cluster, cronjobs, missing):
        items += prepare_all(cjs, jobs, events, opts, default_namespace=ns)
    return Fleet(items, opts), missing


def _ledger_evidence(url: str | None, cluster_name: str | None, *, namespace: str | None, name: str | None,
                     opts: Options, settled: list[SlotRow] | None = None) -> tuple[Any, dict[str, Judged]]:
    """The ledger's evidence for the window, and what the recorder already judged of it: the
    evidence is read only from where judging has to start (a day before: a Job created before
    the window may still stand for a slot in it). One open of the ledger for both."""
    from cronctl.ledger.store import open_ledger

    led = open_ledger(url, create=False)
    try:
        with led.reading() as r:
            rows = r.cronjob_rows(cluster_name, namespace=namespace, name=name)
            judged, total = _judged(r, rows, opts=opts, settled=settled)
            since = opts.since
            # only when the recorder judged the start of every CronJob's window: any other is read from --since
            if since is not None and judged and len(judged) == total:
                since = max(since, min(j.judge_from for j in judged.values()))
            since = since - timedelta(days=1) if since is not None else None
            return r.evidence(cluster_name, namespace=namespace, name=name, since=since, rows=rows), judged
    finally:
        led.close()


def _judged(r: Any, rows: list[Any], *, opts: Options,
            settled: list[SlotRow] | None = None) -> tuple[dict[str, Judged], int]:
    """Per CronJob uid, the recorder's rows of the window's slots up to the first slot it did not
    judge (none when it judged none of the first: the judge takes the whole window); and how many
    CronJobs there are. ``r``: an open ledger's reader; ``rows``: its CronJobs' rows
    (``Reader.cronjob_rows``: the object as last seen, and its cluster)."""
    if opts.since is None:
        return {}, 0
    from cronctl.errors import CronctlError
    from cronctl.schedule import parse

    out: dict[str, Judged] = {}
    views = [(v, row.cluster) for row in rows for v in (model.cronjob_view(row.object),)
             if v.problem is None and v.uid]
    by_cluster: dict[str, list[str]] = {}
    for v, cluster in views:
        by_cluster.setdefault(cluster, []).append(v.uid)
    kept_of = {(cluster, uid): kept for cluster, uids in by_cluster.items()
               for uid, kept in r.judged_many(cluster, uids, opts.since, opts.now, settled).items()}
    for view, cluster in views:
        try:
            sched = parse(view.schedule, view.time_zone)
        except CronctlError:
            continue
        start = max(opts.since, (view.created or opts.since) - timedelta(seconds=1))
        times = sched.runs_between(start, opts.now)
        kept = kept_of[(cluster, view.uid)]
        if not times or times[0] not in kept:
            continue
        judge_from = next((t for t in times if t not in kept), times[-1] + timedelta(seconds=1))
        out[view.uid] = Judged(judge_from, [(t, kept[t]) for t in sorted(kept) if t < judge_from])
    return out, len(rows)


def from_ledger(url: str | None, live: Cluster | None, name: str | None, *, cluster_name: str | None,
                namespace: str | None, all_namespaces: bool, opts: Options,
                settled: list[SlotRow] | None = None,
                problems: list[str] | None = None) -> tuple[Fleet, list[str]]:
    """The histories judged from the live cluster and the ledger together (``live`` None: the ledger
    alone, of ``cluster_name``, None = every cluster). Live objects win over the ledger's copies of
    the same uid; CronJobs, Jobs and events only the ledger still has are added, and the ledger's
    exact suspend spans go to the judge (:class:`cronctl.history.Options.suspensions`). ``problems``
    gets the ledger's rows left out because they do not decode (the caller answers, then exits 9)."""
    from cronctl.ledger.facts import merge

    ns = None if all_namespaces else (live.namespace if live is not None else namespace)
    ev, judged = _ledger_evidence(url, cluster_name, namespace=ns, name=name, opts=opts, settled=settled)
    if problems is not None:
        problems += ev.problems
    opts = replace(opts, suspensions=ev.suspensions)
    if live is None:
        if name is not None and not ev.cronjobs:
            raise NotFound(f"the ledger has no CronJob {name}" + (f" in namespace {ns}" if ns else ""))
        alone = prepare_all(ev.cronjobs, ev.jobs, ev.events, opts, judged=judged, from_ledger=True)
        return Fleet(alone, opts, _effects(url, alone, opts.now), settled), []
    missing: list[str] = []
    try:
        cronjobs = [live.get_cronjob(name)] if name is not None else list_cronjobs(live, all_namespaces=all_namespaces)
    except NotFound:
        if not ev.cronjobs:
            raise
        cronjobs = []  # deleted from the cluster: the ledger's copy is judged below
    items: list[_Item] = []
    kept_jobs = _by_namespace(ev.jobs, live.namespace)
    kept_events = _by_namespace(ev.events, live.namespace)
    for n, cjs, jobs, events in by_namespace(live, cronjobs, missing):
        items += prepare_all(cjs, merge(jobs, kept_jobs.get(n, [])), merge(events, kept_events.get(n, [])), opts,
                             default_namespace=n, judged=judged)
    live_uids = {str(model.meta(c).get("uid") or "") for c in cronjobs}
    gone = [c for c in ev.cronjobs if str(model.meta(c).get("uid") or "") not in live_uids]
    items += prepare_all(gone, ev.jobs, ev.events, opts, judged=judged, from_ledger=True)
    return Fleet(items, opts, _effects(url, items, opts.now), settled), missing


def _effects(url: str | None, items: list[_Item], now: datetime) -> Callable[[History], History]:
    """What adds each slot's business effect beside its Job verdict, where cronctl claim wrote rows for
    the CronJob's workflow (namespace/name) into this ledger (read once, for every CronJob: only the
    claimed slots); a history without any is left as it was."""
    from cronctl.ledger.claimstore import effects_by_slot, effects_on

    by = effects_by_slot(url, [f"{i.prepared.out['namespace']}/{i.prepared.out['name']}" for i in items], now)

    def add(h: History) -> History:
        h["slots"] = effects_on(h["slots"], by.get(f"{h['namespace']}/{h['name']}"), now)
        return h

    return add
