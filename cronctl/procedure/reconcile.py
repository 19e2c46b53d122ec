"""The recorder's reconciler: every expected slot judged once it is closed, kept, and counted.

The recorder's writer thread calls :meth:`Reconciler.cronjob` and :meth:`Reconciler.job` for each
change it writes, and :meth:`Reconciler.tick` between batches. A CronJob is judged again when one
of its slots may have closed (the time :func:`cronctl.history.closes_at` gives) or one of its Jobs
finished: the one judge (:func:`cronctl.history.slot_history`) over the ledger's evidence from the
first slot not yet closed. Each newly closed slot gets its row in the ledger (verdict, reason,
closed_at: a row for a slot without a Job too) and, with metrics on, is counted by verdict, with
its lags and duration.

Judging resumes after a restart from the latest closed slot in the ledger; a CronJob the ledger
has never judged is judged from when the ledger first saw it (at most :data:`BACKLOG` back), so a
new recorder does not call slots before its time lost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from cronctl import history, model
from cronctl.errors import CronctlError
from cronctl.ledger.store import Ledger
from cronctl.procedure.metrics import Metrics
from cronctl.slotrows import MADE, History, SlotRow

#: how far back a CronJob the ledger never judged is judged
BACKLOG = timedelta(days=1)
#: judged again at least this often (a missed wake-up costs at most this much delay)
RECHECK = timedelta(minutes=5)
#: a closed slot's verdicts, each counted from 0 (history.OPEN never closes)
CLOSED_VERDICTS = tuple(v for v in history.VERDICTS if v not in history.OPEN)


@dataclass
class _Tracked:
    uid: str
    namespace: str
    name: str
    cronjob: model.Obj
    pending_from: datetime  # the first slot not yet closed (judging starts here)
    next_check: datetime
    closed: set[datetime] = field(default_factory=set)
    running: dict[str, tuple[str, datetime | None]] = field(default_factory=dict)  # job uid: (origin, start)
    last_success_slot: datetime | None = None
    resumed_at: datetime | None = None
    suspended: bool = False
    _parsed: tuple[tuple[str, str | None], Any] | None = None

    def schedule(self, expr: str, zone: str | None) -> Any:
        """``expr`` in ``zone`` parsed (None when the controller would not run it), once per
        schedule and zone: every change of the CronJob and every judging asks for it."""
        if self._parsed is None or self._parsed[0] != (expr, zone):
            self._parsed = ((expr, zone), _schedule(expr, zone))
        return self._parsed[1]


class Reconciler:
    def __init__(self, cluster: str, ledger: Ledger, metrics: Metrics | None,
                 say: Any = None) -> None:
        self.cluster = cluster
        self.ledger = ledger
        self.metrics = metrics
        self.say = say or (lambda _line: None)
        self.tracked: dict[str, _Tracked] = {}
        self._last: dict[str, datetime] = {}
        self._first_seen: dict[str, datetime] = {}
        self._success: dict[str, tuple[datetime, datetime | None]] = {}
        self.closed = 0  # slots closed by this recorder
        self._jobs: dict[str, tuple[str, datetime]] = {}  # running Job uid: (CronJob uid, created)
        self._started: set[str] = set()  # Jobs whose start lag was observed (until the Job is deleted)
        self._told: set[str] = set()  # ledger rows named in the log as left out

    def load(self) -> None:
        """Where judging resumes: the ledger's latest closed slot per CronJob, first sightings and
        last successes."""
        with self.ledger.reading() as r:
            self._last = r.last_closed(self.cluster)
            self._first_seen = r.first_seen(self.cluster)
            self._success = r.last_success(self.cluster)
        self._tell(r.problems)

    def _tell(self, problems: list[str]) -> None:
        """One line in the recorder's log for the ledger rows a read left out (they do not decode:
        another writer's); each row named once, not at every judging."""
        new = [p for p in problems if p not in self._told]
        if new:
            from cronctl.ledger.store import unreadable

            self._told.update(new[:1000])
            self.say(f"warning: {unreadable(new).message}")

    # -- what the writer saw -----------------------------------------------------------------------
    def cronjob(self, obj: model.Obj, now: datetime, *, deleted: bool) -> None:
        view = model.cronjob_view(obj)
        uid = view.uid
        if not uid:
            return
        tr = self.tracked.get(uid)
        if deleted:
            if tr is not None:
                del self.tracked[uid]
                if self.metrics is not None:
                    self.metrics.forget(tr.namespace, tr.name)
            return
        if tr is None:
            start = self._last.get(uid)
            # after the last closed slot; else the slots after the ledger first saw it (one at that
            # very moment may have run unseen)
            start = (start if start is not None else max(self._first_seen.get(uid, now), now - BACKLOG)) \
                + timedelta(seconds=1)
            tr = _Tracked(uid, view.namespace, view.name, obj, pending_from=start, next_check=now,
                          suspended=view.suspended)
            self.tracked[uid] = tr
            success = self._success.get(uid)
            if success is not None:
                tr.last_success_slot = success[0]
            if self.metrics is not None:
                self.metrics.known(view.namespace, view.name, CLOSED_VERDICTS)
                if success is not None and success[1] is not None:
                    self.metrics.cronjob(view.namespace, view.name, {"last_success": success[1].timestamp()})
        if tr.suspended and not view.suspended:
            tr.resumed_at = now
        tr.suspended = view.suspended
        tr.cronjob = obj
        tr.next_check = min(tr.next_check, now)
        self._gauges(tr, now)

    def job(self, obj: model.Obj, now: datetime, *, deleted: bool) -> None:
        uid = model.controller_owner_uid(obj, "CronJob")
        tr = self.tracked.get(uid or "")
        if tr is None:
            return
        juid = str(model.meta(obj).get("uid") or "")
        finished = deleted or model.job_outcome(obj) is not None
        if deleted:
            self._started.discard(juid)
        if finished:
            self._jobs.pop(juid, None)
            if tr.running.pop(juid, None) is not None or not deleted:
                tr.next_check = min(tr.next_check, now)  # a slot may have closed with it
        else:
            created = model.when(model.meta(obj).get("creationTimestamp"))
            tr.running[juid] = (model.origin(obj), model.started(obj) or created)
            if created is not None:
                self._jobs[juid] = (tr.uid, created)
        self._running(tr)

    def pod(self, pod: model.Obj) -> None:
        """A running Job's pod, from the watch: the Job's start lag as soon as its first worker runs."""
        from cronctl.ledger.facts import first_running

        juid = model.controller_owner_uid(pod, "Job") or ""
        owner = self._jobs.get(juid)
        began = first_running([pod]) if owner is not None else None
        if owner is None or began is None:
            return
        tr = self.tracked.get(owner[0])
        if tr is not None:
            self._start_lag(tr, juid, owner[1], began)

    def _start_lag(self, tr: _Tracked, job_uid: str, created: datetime, began: datetime) -> None:
        """Observed once per Job (the watch's pod, else the pods read when the Job ended)."""
        if job_uid in self._started or self.metrics is None:
            return
        self._started.add(job_uid)
        self.metrics.started(tr.namespace, tr.name, (began - created).total_seconds())

    def pods(self, job: model.Obj, pods: list[model.Obj]) -> None:
        """A finished Job's pods were read: its start lag (Job created to first worker running)."""
        tr = self.tracked.get(model.controller_owner_uid(job, "CronJob") or "")
        if tr is None:
            return
        from cronctl.ledger.facts import first_running

        began, created = first_running(pods), model.when(model.meta(job).get("creationTimestamp"))
        if began is not None and created is not None:
            self._start_lag(tr, str(model.meta(job).get("uid") or ""), created, began)

    # -- gauges ------------------------------------------------------------------------------------
    def _running(self, tr: _Tracked) -> None:
        if self.metrics is None:
            return
        manual = [o for o, _s in tr.running.values() if o == "manual"]
        beside = len(tr.running) - 1 if manual else 0
        starts = [s for _o, s in tr.running.values() if s is not None]
        self.metrics.cronjob(tr.namespace, tr.name, {
            "running": len(tr.running), "beside": beside,
            "oldest_running": min(starts).timestamp() if starts else 0})

    def _gauges(self, tr: _Tracked, now: datetime) -> None:
        if self.metrics is None:
            return
        view = model.cronjob_view(tr.cronjob)
        rec = model.read_record(tr.cronjob)
        pause = model.read_pause(tr.cronjob)
        held_at = model.when(rec.started) if rec is not None else None
        values: dict[str, float | None] = {
            "suspended": 1 if view.suspended else 0,
            "hold": 1 if rec is not None else 0,
            "hold_since": held_at.timestamp() if held_at is not None else 0,
            "paused": 1 if pause is not None else 0,
            "pause_until": pause.until.timestamp() if pause is not None and pause.until is not None else 0,
        }
        sched = tr.schedule(view.schedule, view.time_zone) if view.problem is None else None
        nxt = sched.next_after(now) if sched is not None else None
        after = sched.next_after(nxt) if sched is not None and nxt is not None else None
        values["next_slot"] = nxt.timestamp() if nxt is not None else None
        values["interval"] = (after - nxt).total_seconds() if nxt is not None and after is not None else None
        base = max((t for t in (tr.last_success_slot, tr.resumed_at, tr.pending_from - timedelta(seconds=1))
                    if t is not None))
        due = sched.next_after(base) if sched is not None else None
        if due is not None:
            ads = view.job_active_deadline
            run = ads if ads is not None and ads > 0 else 0
            values["success_due"] = due.timestamp() + max(view.starting_deadline or 0, 0) + run
        else:
            values["success_due"] = None
        self.metrics.cronjob(tr.namespace, tr.name, values)
        self._running(tr)

    # -- judging -------------------------------------------------------------------------------------
    def tick(self, now: datetime, budget: float = 1.0) -> int:
        """Judge the CronJobs a slot of which may have closed, the longest waiting first, for at most
        ``budget`` seconds (the writer's thread calls it: the rest wait for the next tick); returns
        the slots closed."""
        import time

        due = sorted((tr for tr in self.tracked.values() if tr.next_check <= now), key=lambda tr: tr.next_check)
        n = 0
        until = time.monotonic() + budget
        for tr in due:
            if time.monotonic() > until:
                break
            try:
                n += self._judge(tr, now)
            except CronctlError as e:  # a schedule that does not parse: said by history's error
                self.say(f"judging {tr.namespace}/{tr.name}: {e.message}")
                tr.next_check = now + RECHECK
        if due and self.metrics is not None:
            self.metrics.own(self.metrics.last_judged).set(now.timestamp())
        return n

    def _judge(self, tr: _Tracked, now: datetime) -> int:
        since = tr.pending_from - timedelta(seconds=1)
        with self.ledger.reading() as r:
            ev = r.evidence(self.cluster, namespace=tr.namespace, name=tr.name, since=since - timedelta(hours=1))
        self._tell(ev.problems)
        mine = [c for c in ev.cronjobs if model.meta(c).get("uid") == tr.uid]
        cj = mine[-1] if mine else tr.cronjob
        out = history.slot_history(cj, ev.jobs, ev.events, history.Options(
            now=now, since=since, suspensions=ev.suspensions))
        if out.get("error"):
            tr.next_check = now + RECHECK
            return 0
        closed = [(row, at) for row, at in history.closed_rows(out, now)
                  if (t := model.when(row["slot"])) is not None and t >= tr.pending_from and t not in tr.closed]
        times = {model.when(row["slot"]): (row, at) for row, at in closed}
        if closed:
            with self.ledger.writing() as w:
                for t, (row, at) in times.items():
                    assert t is not None
                    w.close_slot(self.cluster, tr.uid, tr.namespace, tr.name, t, row, max(at, now))
            for t, (row, _at) in sorted(times.items(), key=lambda kv: kv[0] or now):
                assert t is not None
                tr.closed.add(t)
                self._count(tr, t, row)
            self.closed += len(closed)
        # the first slot not closed, and when to look again
        open_rows = [r for r in out["slots"] if (t := model.when(r["slot"])) is not None and t >= tr.pending_from
                     and t not in tr.closed and r["verdict"] != "dst-skipped"]
        if open_rows:
            first = model.when(open_rows[0]["slot"])
            assert first is not None
            tr.pending_from = first
        tr.closed = {t for t in tr.closed if t >= tr.pending_from}
        tr.next_check = min(self._wake(tr, out, open_rows, now), now + RECHECK)
        self._gauges(tr, now)
        return len(closed)

    def _wake(self, tr: _Tracked, out: History, open_rows: list[SlotRow], now: datetime) -> datetime:
        """When the earliest open slot can close: a running one when its Job ends (a Job event wakes
        it), one without a Job when the controller can no longer start it."""
        deadline = out.get("starting_deadline_seconds")
        sched = tr.schedule(out["schedule"], out.get("time_zone"))  # as judged: the ledger's copy
        if sched is None:
            return now + RECHECK
        wakes = []
        for row in open_rows:
            t = model.when(row["slot"])
            if t is None:
                continue
            at = history.closes_at(row, sched.next_after(t), deadline if isinstance(deadline, int) else None)
            if at is not None:
                wakes.append(at)
        return max(min(wakes, default=now + RECHECK), now + timedelta(seconds=1))

    def _count(self, tr: _Tracked, t: datetime, row: SlotRow) -> None:
        details = row["job_details"]
        first = details[0] if details else None
        ok = first is not None and first["outcome"] == "Complete" and row["verdict"] in MADE
        if ok and (tr.last_success_slot is None or t > tr.last_success_slot):
            tr.last_success_slot = t
        if self.metrics is None:
            return
        created = model.when(first["created"]) if first else None
        self.metrics.slot(
            tr.namespace, tr.name, row["verdict"],
            schedule_lag=(created - t).total_seconds() if created is not None and first and
            first["origin"] == "scheduled" else None,
            duration=row.get("duration_seconds"),
            beside_manual=bool(row.get("manual_beside_total")), failed=row.get("outcome") == "failed")
        if ok and first is not None:
            done = model.when(first["completed"])
            if done is not None:
                self.metrics.cronjob(tr.namespace, tr.name, {"last_success": done.timestamp()})


def _schedule(expr: str, zone: str | None) -> Any:
    from cronctl.schedule import parse

    if not expr:
        return None
    try:
        return parse(expr, zone)
    except CronctlError:
        return None
