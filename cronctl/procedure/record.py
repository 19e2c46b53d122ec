"""``cronctl record``: keep every CronJob, Job, Event and finished Job's log tail in the ledger.

Threads, one writer:

- one **watcher** per (resource, scope) — CronJobs, Jobs, Events and the pods Jobs made (a Job's
  first worker start as it happens), in each ``-n`` namespace
  or in all (``-A``) — lists, then watches from the list's resourceVersion (with bookmarks),
  again from the last version seen when the server ends the watch or the connection drops, and
  lists again (merging: writes are upserts) when that version is compacted away (410). A restart
  resumes each watch from the cursor the ledger kept, so changes made while the recorder was
  down (a Job created and deleted) are still seen when etcd still has them;
- one **log taker**: when a Job is seen finished, it reads its pods (first worker start, exit
  codes) and a bounded tail of each container's log, once per Job;
- the **writer** (the caller's thread) takes what the others put on one bounded queue and
  writes it in transactions of up to ``batch`` items; a watch's cursor is written in the same
  transaction as the objects before it, so a SIGKILL loses nothing the API still shows.

A failed write is retried (every ``retry_seconds``) while the queue fills; when the queue is full
the recorder stops with :class:`LedgerError` (exit 9). ``stop`` (SIGTERM, SIGINT) ends it after
the queue is written: exit 0.
"""

from __future__ import annotations

import copy
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from cronctl import model
from cronctl.cluster import Obj, WatchExpired
from cronctl.errors import ApiError, BadInput, CronctlError, LedgerError, Refused
from cronctl.ledger.store import Ledger
from cronctl.procedure.base import Clock
from cronctl.procedure.lease import Lease
from cronctl.procedure.metrics import Metrics
from cronctl.procedure.reconcile import Reconciler

#: what the recorder watches, in the order it first lists them
WATCHED = ("cronjobs", "jobs", "events", "pods")
#: the order of one batch's writes (a stable sort: items of one kind keep their order; cursors last)
_WRITE_ORDER = {"cronjobs": 0, "jobs": 1, "logs": 2, "pods": 3, "events": 4, "cursor": 5}
ALL = "*"
#: the lines of a container's log asked for; the last ``log_bytes`` of them are kept
_TAIL_LINES = 2000


@dataclass(frozen=True)
class RecordOptions:
    cluster_name: str
    namespaces: tuple[str, ...] | None  # None: every namespace (-A)
    keep: timedelta | None = timedelta(days=90)
    log_bytes: int = 16 * 1024
    status_every: float = 60.0
    once: bool = False  # list everything once, write it (logs included) and return
    batch: int = 500
    buffer: int = 50_000
    retry_seconds: float = 2.0
    watch_seconds: int = 300
    judge_every: float = 2.0  # how often the reconciler looks for closed slots
    pace_seconds: float = 120.0  # how long a list waits for the writer before it fills the queue anyway


@dataclass
class Stats:
    rows: int = 0
    items: int = 0
    skipped: int = 0
    relists: int = 0
    watch_restarts: int = 0
    write_errors: int = 0
    logs: int = 0
    lag: float = 0.0
    last_status_rows: int = 0
    errors: list[str] = field(default_factory=list)


@dataclass
class _Item:
    kind: str  # an object's resource (cronjobs|jobs|events|pods), "cursor", "logs" (a finished Job's pods and logs)
    typ: str  # ADDED | MODIFIED | DELETED | SYNC | CURSOR | LOGS
    obj: Obj
    scope: str = ALL
    rv: str = ""
    at: float = 0.0
    extra: Any = None


class Recorder:
    def __init__(self, cluster: Any, ledger: Ledger, opts: RecordOptions, clock: Clock,
                 say: Callable[[str], None], stop: threading.Event | None = None, lease: Lease | None = None,
                 metrics: Metrics | None = None) -> None:
        self.cluster = cluster
        self.metrics = metrics
        self.reconciler = Reconciler(opts.cluster_name, ledger, metrics, say=self._note)
        self._alive = time.monotonic()  # the writer loop's last turn (/healthz)
        self._listed: set[tuple[str, str]] = set()  # (resource, scope) listed once (/readyz, judging)
        # (resource, scope): when a watch resumed from the ledger's cursor was opened (no list first)
        self._resumed: dict[tuple[str, str], float] = {}
        self._written_upto = 0.0  # when the newest change written was queued (monotonic)
        self._holding = lease is None
        self.lease = lease
        self._renew_tried = 0.0  # monotonic time of the last renewal attempt
        self._renew_failing = False
        self.ledger = ledger
        self.opts = opts
        self.clock = clock
        self.say = say
        self.stop = stop or threading.Event()
        self.queue: queue.Queue[_Item] = queue.Queue(maxsize=opts.buffer)
        self.stats = Stats()
        self.full = threading.Event()
        self._logged: set[str] = set()
        self._unread: list[tuple[str, str, str]] = []  # (namespace, name, uid): see _retake_logs
        self._log_queue: queue.Queue[Obj] = queue.Queue()
        self._threads: list[threading.Thread] = []

    # -- the scopes ------------------------------------------------------------------------------
    def _scopes(self) -> list[str]:
        return list(self.opts.namespaces) if self.opts.namespaces is not None else [ALL]

    def _in(self, scope: str) -> Any:
        c = copy.copy(self.cluster)
        if scope != ALL:
            c.namespace = scope
        return c

    def _put(self, item: _Item) -> None:
        item.at = time.monotonic()
        try:
            self.queue.put_nowait(item)
        except queue.Full:
            self.full.set()
            self.stop.set()

    # -- watchers --------------------------------------------------------------------------------
    def _list(self, resource: str, scope: str) -> str:
        """List one page at a time, each put on the queue once the writer has caught up (memory:
        a few batches, not the whole list), then the cursor the watch starts from."""
        rv = ""
        for items, rv in self.cluster.list_resource_pages(resource, None if scope == ALL else scope):
            self._pace()
            for o in items:
                self._put(_Item(resource, "SYNC", o, scope))
        self._put(_Item("cursor", "CURSOR", {}, scope, rv=rv, extra=resource))
        self._listed.add((resource, scope))
        if self.metrics is not None:
            self.metrics.of(self.metrics.relists, resource=resource).inc()
        return str(rv)

    def _pace(self) -> None:
        """Wait (at most ``pace_seconds``) while the writer is more than a few batches behind; a
        writer that stays behind (a ledger down) lets the queue fill, which stops the recorder.
        With ``--once`` (no writer thread) write the pages listed so far instead."""
        if self.opts.once:  # --once lists and writes on this one thread: write what the last page gave
            while not self.queue.empty():
                self._write(self._drain(0))
            return
        deadline = time.monotonic() + self.opts.pace_seconds
        while self.queue.qsize() > 4 * self.opts.batch and not self.stop.is_set() and time.monotonic() < deadline:
            time.sleep(0.05)

    def _watch_loop(self, resource: str, scope: str, rv: str) -> None:
        backoff = 1.0
        while not self.stop.is_set():
            try:
                if not rv:
                    rv = self._list(resource, scope)
                    self.stats.relists += 1
                if (resource, scope) not in self._listed:
                    self._resumed.setdefault((resource, scope), time.monotonic())
                for typ, obj in self.cluster.watch_resource(resource, None if scope == ALL else scope, rv,
                                                            timeout_seconds=self.opts.watch_seconds):
                    if self.stop.is_set():
                        return
                    new_rv = str(model.meta(obj).get("resourceVersion") or rv)
                    if typ != "BOOKMARK":
                        self._put(_Item(resource, typ, obj, scope, rv=new_rv))
                    if new_rv != rv:
                        rv = new_rv
                        self._put(_Item("cursor", "CURSOR", {}, scope, rv=rv, extra=resource))
                backoff = 1.0
                self._restarted(resource)
            except WatchExpired:
                rv = ""  # compacted away: list again and merge
                self._resumed.pop((resource, scope), None)
            except CronctlError as e:  # the API server restarting, a dropped connection
                self._restarted(resource)
                self._note(f"watch {resource} in {scope}: {e.message} (again in {backoff:.0f}s)")
                self.stop.wait(backoff)
                backoff = min(backoff * 2, 30.0)

    def _restarted(self, resource: str) -> None:
        self.stats.watch_restarts += 1
        if self.metrics is not None:
            self.metrics.of(self.metrics.watch_restarts, resource=resource).inc()

    # -- the log taker ---------------------------------------------------------------------------
    def _take_logs(self, job: Obj) -> None:
        ns = str(model.meta(job).get("namespace") or "")
        c = self._in(ns)
        name = model.name_of(job)
        try:
            pods = c.list_pods(label_selector=f"job-name={name}")
        except CronctlError as e:
            self._note(f"pods of job {ns}/{name}: {e.message}")
            pods = []
        logs = []
        for p in pods if self.opts.log_bytes > 0 else []:  # --log-bytes 0: no log is read
            for cname, _init in model.pod_view(p).spec_containers:
                try:
                    text = c.read_pod_log(model.name_of(p), cname, tail_lines=_TAIL_LINES)
                except CronctlError as e:
                    text = f"(log not read: {e.message})"
                data = text.encode("utf-8", "replace")
                truncated = len(data) > self.opts.log_bytes or text.count("\n") >= _TAIL_LINES
                tail = data[-self.opts.log_bytes:].decode("utf-8", "replace") if truncated else text
                logs.append((model.name_of(p), cname, tail, truncated))
        self._put(_Item("logs", "LOGS", job, ns, extra=(pods, logs)))

    def _log_loop(self) -> None:
        while not self.stop.is_set() or not self._log_queue.empty():
            try:
                job = self._log_queue.get(timeout=0.5)
            except queue.Empty:
                continue
            self._take_logs(job)

    # -- the writer ------------------------------------------------------------------------------
    def _write(self, items: list[_Item]) -> None:
        now = self.clock.now()
        finished: list[Obj] = []
        with self.ledger.writing() as w:
            # CronJobs and Jobs first: the namespace's redactor learns their secrets before the Events
            # and logs of the same batch that may repeat them are masked and stored (issue 39)
            for it in sorted(items, key=lambda it: _WRITE_ORDER.get(it.kind, len(_WRITE_ORDER))):
                try:
                    if it.kind == "cronjobs":
                        w.cronjob(self.opts.cluster_name, it.obj, now, deleted=it.typ == "DELETED")
                    elif it.kind == "jobs":
                        w.job(self.opts.cluster_name, it.obj, now, deleted=it.typ == "DELETED")
                        uid = str(model.meta(it.obj).get("uid") or "")
                        if it.typ == "DELETED":
                            self._logged.discard(uid)  # the set holds the live Jobs only: bounded
                        elif model.job_outcome(it.obj) is not None and uid not in self._logged:
                            finished.append(it.obj)
                    elif it.kind == "events":
                        if not w.event(self.opts.cluster_name, it.obj):
                            continue
                    elif it.kind == "pods":  # a Job's pod: its first worker's start, as it happens
                        w.pod(self.opts.cluster_name, it.obj)
                    elif it.kind == "logs":
                        pods, logs = it.extra
                        w.job(self.opts.cluster_name, it.obj, now, pods=pods)
                        for pod, container, text, truncated in logs:
                            w.log(self.opts.cluster_name, it.obj, pod, container, text, truncated, now)
                            self.stats.logs += 1
                    elif it.kind == "cursor":
                        w.cursor(self.opts.cluster_name, str(it.extra), it.scope, it.rv, now)
                        continue
                except BadInput as e:  # a malformed or hostile object: one line, skipped
                    self.stats.skipped += 1
                    if self.metrics is not None:
                        self.metrics.own(self.metrics.skipped).inc()
                    self._note(f"skipped {it.kind[:-1]} {model.meta(it.obj).get('namespace')}/"
                               f"{model.name_of(it.obj)}: {e.message}")
                    continue
                self.stats.items += 1
            self.stats.rows += w.rows
            rows = w.rows
        self.stats.lag = max((time.monotonic() - it.at for it in items), default=0.0)
        self._written_upto = max([self._written_upto, *(it.at for it in items)])
        self._after_write(items, now, rows)
        for j in finished:
            uid = str(model.meta(j).get("uid") or "")
            if uid not in self._logged:
                self._logged.add(uid)
                self._log_queue.put(j)

    def _after_write(self, items: list[_Item], now: datetime, rows: int) -> None:
        """What was written, to the reconciler (it reads the ledger: after the commit) and the metrics."""
        for it in items:
            if it.kind == "cronjobs":
                self.reconciler.cronjob(it.obj, now, deleted=it.typ == "DELETED")
            elif it.kind in ("jobs", "logs"):
                self.reconciler.job(it.obj, now, deleted=it.typ == "DELETED")
                if it.kind == "logs":
                    self.reconciler.pods(it.obj, it.extra[0])
            elif it.kind == "pods":
                self.reconciler.pod(it.obj)
        m = self.metrics
        if m is not None:
            m.own(m.rows).inc(rows)
            m.own(m.lag).set(self.stats.lag)
            m.own(m.last_write).set(time.time())

    def _judge(self) -> None:
        """Judge closed slots, once the ledger has caught up with the cluster: before that a Job
        created while the recorder was down may not be written yet, and its slot would be called lost."""
        if self._unsynced():
            return
        # --once judges everything it can now; the long-running writer a second a turn
        self.reconciler.tick(self.clock.now(), budget=float("inf") if self.opts.once else 1.0)
        if self.metrics is not None:  # cronctl claim's rows, in the same ledger
            from cronctl.ledger.claimstore import summary

            self.metrics.claims(*summary(self.ledger))

    def _judge_safely(self) -> None:
        """Judging reads and writes the ledger: a ledger that cannot be reached now is tried again at
        the next turn (the writes' own retry says so)."""
        try:
            self._judge()
        except LedgerError as e:
            self._note(f"judging slots: {e.message} (again in {self.opts.judge_every:g}s)")

    def healthy(self) -> tuple[bool, str]:
        """/healthz: the writer loop turned in the last minute (a standby's waiting loop counts)."""
        age = time.monotonic() - self._alive
        return (age < 60, f"{'ok' if age < 60 else 'stuck'}: the recorder's loop turned {age:.0f}s ago")

    #: a watch resumed from a cursor has brought what changed since within this long (the server
    #: sends the changes after the cursor's version at once)
    RESUMED_SYNC = 5.0

    def _unsynced(self) -> int:
        """How many (resource, scope) have not caught up with the cluster yet: neither listed, nor
        resumed from their cursor ``RESUMED_SYNC`` seconds ago with the queue written since."""
        mono = time.monotonic()
        want = {(r, sc) for r in WATCHED for sc in self._scopes()}
        caught = {k for k, t in list(self._resumed.items()) if mono - t >= self.RESUMED_SYNC
                  and (self.queue.empty() or self._written_upto >= t + self.RESUMED_SYNC)}
        return len(want - self._listed - caught)

    def ready(self) -> tuple[bool, str]:
        """/readyz: this recorder writes (it holds the Lease, or needs none) and has caught up with
        the cluster once (listed, or resumed its watches from the ledger's cursors)."""
        if not self._holding:
            return False, "standby: another recorder holds the lease"
        missing = self._unsynced()
        if missing:
            return False, f"syncing: {missing} of {len(WATCHED) * len(self._scopes())} lists or watches not caught up"
        return True, "ok: recording"

    def _drain(self, first_wait: float) -> list[_Item]:
        items: list[_Item] = []
        try:
            items.append(self.queue.get(timeout=first_wait))
        except queue.Empty:
            return items
        while len(items) < self.opts.batch:
            try:
                items.append(self.queue.get_nowait())
            except queue.Empty:
                break
        return items

    def _note(self, line: str) -> None:
        self.stats.errors = [*self.stats.errors[-99:], line]  # the last 100: a recorder runs for months
        self.say(f"record: {line}")

    def _gauges(self) -> None:
        m = self.metrics
        if m is not None:
            m.own(m.buffer).set(self.queue.qsize())
            m.own(m.buffer_size).set(self.opts.buffer)
            m.own(m.lease).set(1 if self._holding else 0)

    def status_line(self) -> str:
        s = self.stats
        scopes = "all namespaces" if self.opts.namespaces is None else "namespace(s) " + ", ".join(self._scopes())
        new = s.rows - s.last_status_rows
        s.last_status_rows = s.rows
        return (f"record: cluster {self.opts.cluster_name}, ledger {self.ledger.shown}: watching "
                f"{', '.join(WATCHED)} in {scopes}; {s.rows} rows written ({new} new), {s.logs} log tails, "
                f"lag {s.lag:.1f}s, buffer {self.queue.qsize()}/{self.opts.buffer}, {s.relists} lists, "
                f"{s.skipped} skipped, {s.write_errors} write errors, {self.reconciler.closed} slots judged")

    # -- the run ---------------------------------------------------------------------------------
    def _known_logs(self) -> None:
        with self.ledger.reading() as r:
            self._logged |= r.logged_jobs(self.opts.cluster_name)
            self._unread = r.unlogged_finished_jobs(self.opts.cluster_name)
        self.reconciler.load()

    def _retake_logs(self) -> None:
        """The pods and logs of the Jobs a stopped recorder saw end but never read (killed between
        the two): a watch resumed from the cursor does not bring those Jobs again."""
        scopes = None if self.opts.namespaces is None else set(self.opts.namespaces)
        for ns, name, uid in self._unread:
            if uid in self._logged or (scopes is not None and ns not in scopes):
                continue
            try:
                job = self._in(ns).get_job(name)
            except CronctlError as e:
                self._note(f"job {ns}/{name}: {e.message}")
                continue
            if job is not None and model.meta(job).get("uid") == uid and model.job_outcome(job) is not None:
                self._logged.add(uid)
                self._log_queue.put(job)
        self._unread = []

    def _start(self, target: Callable[..., None], *args: Any) -> None:
        t = threading.Thread(target=target, args=args, daemon=True, name=f"record-{target.__name__}")
        t.start()
        self._threads.append(t)

    def once(self) -> Stats:
        """One full list of everything, written, then the log tails of the finished Jobs."""
        if self.lease is not None and not self.lease.try_hold(self.clock.now()):
            raise Refused(f"another recorder ({self.lease.other}) holds the lease {self.lease.name} until "
                          f"{self._until()}: it records this cluster into this ledger")
        self._known_logs()
        for resource in WATCHED:
            for scope in self._scopes():
                self._list(resource, scope)
        while not self.queue.empty():
            self._write(self._drain(0))
        while not self._log_queue.empty():
            self._take_logs(self._log_queue.get_nowait())
            while not self.queue.empty():
                self._write(self._drain(0))
        self._judge()
        self._prune()
        return self.stats

    def _until(self) -> str:
        from cronctl.timeutil import rfc3339_z

        t = self.lease.other_until if self.lease is not None else None
        return rfc3339_z(t) if t is not None else "unknown"

    def _standby(self) -> bool:
        """Wait until this recorder holds the Lease (True), or until stopped (False)."""
        if self.lease is None:
            return True
        said = -1e9
        while not self.stop.is_set():
            try:
                self._alive = time.monotonic()
                if self.lease.try_hold(self.clock.now()):
                    self._holding = True
                    self._gauges()
                    self._renew_tried = time.monotonic()
                    self.say(f"record: holding the lease {self.lease.name} (transitions {self.lease.transitions})")
                    return True
            except CronctlError as e:
                if not isinstance(e, ApiError) or e.status == 403:
                    raise
                self._note(f"lease {self.lease.name}: {e.message}")
            if time.monotonic() - said >= self.opts.status_every:
                self.say(f"record: standby: {self.lease.other} holds the lease {self.lease.name} until "
                         f"{self._until()}")
                said = time.monotonic()
            self.stop.wait(2.0)
        return False

    def _renew(self) -> None:
        """Renew the Lease; stop (Refused) when another recorder holds it now. An API server that
        cannot be reached is ridden out: the watches wait for it too, and a second writer meanwhile
        could only write the same rows again (every write is an idempotent upsert)."""
        assert self.lease is not None
        self._renew_tried = time.monotonic()
        try:
            held = self.lease.try_hold(self.clock.now())
        except ApiError as e:
            if not self._renew_failing:  # said once per outage
                self._note(f"cannot renew the lease {self.lease.name} ({e.message}); recording on, trying again")
            self._renew_failing = True
            return
        self._renew_failing = False
        if not held:
            self._holding = False
            self._gauges()
            raise Refused(f"lost the lease {self.lease.name} to {self.lease.other}: it records now")

    def _prune(self) -> None:
        if self.opts.keep is None:
            return
        with self.ledger.writing() as w:
            w.prune(self.opts.cluster_name, self.clock.now() - self.opts.keep)

    def run(self) -> Stats:
        """Record until ``stop`` is set; then write what is queued, give the Lease up and return."""
        try:
            return self.once() if self.opts.once else self._record()
        finally:
            if self.lease is not None:
                try:
                    self.lease.release()
                except CronctlError:
                    pass  # it expires by itself

    def _record(self) -> Stats:
        if not self._standby():
            return self.stats
        self._known_logs()
        with self.ledger.reading() as r:
            cursors = r.cursors(self.opts.cluster_name)
        for resource in WATCHED:
            for scope in self._scopes():
                self._start(self._watch_loop, resource, scope, cursors.get((resource, scope), ""))
        self._start(self._log_loop)
        self._retake_logs()
        last_status = last_prune = last_judge = time.monotonic()
        pending: list[_Item] = []
        while True:
            self._alive = time.monotonic()
            stopping = self.stop.is_set()
            if not pending:
                pending = self._drain(0.2 if not stopping else 0)
            if pending:
                try:
                    self._write(pending)
                    pending = []
                except LedgerError as e:
                    self.stats.write_errors += 1
                    if self.metrics is not None:
                        self.metrics.own(self.metrics.write_errors).inc()
                    self._note(f"{e.message}; {len(pending) + self.queue.qsize()} item(s) kept, "
                               f"retrying in {self.opts.retry_seconds:g}s")
                    if self.full.is_set():
                        raise LedgerError(f"the write buffer is full ({self.opts.buffer} items) and the ledger "
                                          f"cannot be written: {e.message}") from e
                    if stopping and self.stats.write_errors >= 3:
                        raise LedgerError(f"stopping with {len(pending) + self.queue.qsize()} item(s) not "
                                          f"written: {e.message}") from e
                    time.sleep(self.opts.retry_seconds)
                    continue
            if self.full.is_set() and self.queue.empty():
                raise LedgerError(f"the write buffer filled up ({self.opts.buffer} items): the ledger "
                                  f"{self.ledger.shown} is too slow for this cluster")
            mono = time.monotonic()
            if mono - last_judge >= self.opts.judge_every and not stopping:
                self._judge_safely()
                self._gauges()
                last_judge = mono
            if mono - last_status >= self.opts.status_every:
                self.say(self.status_line())
                last_status = mono
            if self.lease is not None and mono - self._renew_tried >= self.lease.duration / 3:
                self._renew()
            if mono - last_prune >= 3600:
                self._prune()
                last_prune = mono
            if stopping and not pending and self.queue.empty():
                break
        return self.stats
