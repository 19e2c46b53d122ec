"""The hold guard: one step that watches a hold while it lasts (run-manual, --retry, backfill).

A GitOps controller (Argo CD self-heal, Flux) or a person can set ``spec.suspend`` back while
cronctl holds a CronJob; the controller may then start a scheduled Job beside the manual one, the
very duplicate the hold exists to prevent. The guard reads the CronJob every ``every`` seconds
(1 s by default, so a revert is seen within 2 s) from the suspend to the restore, and on a revert:

* names who did it and when (the newest field manager of ``spec.suspend`` other than cronctl,
  ``metadata.managedFields``), on the terminal, in the run record and in an Event;
* ``on_revert="suspend-again"`` (default): suspends again at once (a merge patch guarded by
  resourceVersion, only while the run record is still ours) and records the fight. At the second
  revert it stops fighting: says so, writes an Event, and from then on names every Job the
  CronJob's controller creates beside the manual Job as a duplicate risk (never deleting it);
* ``on_revert="stop"``: stops fighting at the first revert, the same way.

Whether the hold was reverted or not, every read also lists the CronJob's Jobs: each Job owned by
the CronJob that this run did not make, that was created at or after the suspend (its second) and
that the plan's list of Jobs (read before the suspend) did not hold is a Job the hold exists to
prevent. It is named at once (terminal, run record ``hold_guard.beside``, an Event
``CronctlDuplicate``) with its creation time against the suspend's and its likely cause:

* ``stale-cache``: the controller's Job for a slot at or before the suspend, created after it: the
  controller acted on a cache that had not seen the suspend yet (its informer lags writes by
  seconds under load, docs/commands/run-manual.md "What the settle protects against");
* ``revert``: the controller's Job, created after a revert of the hold the guard saw;
* ``not-seen-revert``: the controller's Job for a slot after the suspend with no revert seen (a
  revert and a re-suspend between two reads, or a controller that ignores the suspend);
* ``another-client``: a Job the controller did not make (``kubectl create job --from``, another
  tool), with the field manager that created it.

The run's exit code then says so (``ExitCode.DUPLICATE``). When the guard stops it lists once more,
so a Job created between its last read and the restore is named too. The guard never deletes a Job
and never raises into the run: an API error is counted and the next read tries again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any

from cronctl import gitops, model
from cronctl.cluster import Cluster, Obj
from cronctl.errors import Conflict, CronctlError
from cronctl.procedure.base import Audit, Clock, Reporter, rv
from cronctl.timeutil import rfc3339_z, rfc3339_z_opt

#: how often the guard reads the CronJob (s): a revert is seen within two of these
GUARD_EVERY = 1.0
#: reverts fought (suspended again) before the guard gives up with ``suspend-again``
FIGHTS = 1


class HoldGuard:
    """Watches one hold in a thread of its own; :meth:`start` after the suspend, :meth:`stop`
    before the restore. ``reverts`` and ``duplicates`` are the account, also in :meth:`account`."""

    def __init__(self, cluster: Cluster, name: str, run_id: str, clock: Clock, reporter: Reporter, audit: Audit,
                 *, on_revert: str = "suspend-again", every: float = GUARD_EVERY, since: datetime | None = None,
                 before: frozenset[str] = frozenset(), on_change: Callable[[], None] | None = None) -> None:
        self.c, self.name, self.run_id = cluster, name, run_id
        self.clock, self.r, self.audit = clock, reporter, audit
        self.on_revert, self.every = on_revert, every
        self.since = since
        self.before = before  # uids of Jobs listed before the suspend: they existed before it
        self.on_change = on_change
        self.reverts: list[dict[str, Any]] = []
        self.duplicates: list[str] = []  # the names in ``beside``, in the order they were seen
        self.beside: list[dict[str, Any]] = []  # every Job of the CronJob made by others during the hold
        self.fighting = True
        self.was_held = True  # started right after the suspend
        self.errors = 0
        self.requests = 0  # the API requests the guard made (the run counts its own without them)
        self.reads = 0  # the loop's reads of the CronJob that answered
        self.lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="cronctl-hold-guard", daemon=True)

    # -- life -------------------------------------------------------------------------------------
    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop watching (idempotent): before the restore, and at any end of the run. A guard that
        was watching lists the Jobs once more, so a Job created after its last read is named too."""
        if self._stop.is_set():
            return
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)
            if self.reads:  # (a hold that ended within its first second had no time to be doubled)
                self.sweep()

    def sweep(self) -> None:
        """One more look for Jobs beside the run, while the hold is still ours (the last one)."""
        try:
            self.requests += 1
            cj = self.c.get_cronjob(self.name)
        except CronctlError:
            self.errors += 1
            return
        rec = model.read_record(cj)
        if rec is not None and rec.run_id == self.run_id:
            self._look_for_duplicates(cj)

    @property
    def reverted(self) -> bool:
        return bool(self.reverts)

    def account(self) -> dict[str, Any]:
        """The guard's account as the run record stores it (``hold_guard`` of record.json: a stored
        format, written by the run itself): the reverts seen, whether it gave up, the duplicate risk,
        its read errors and API requests."""
        with self.lock:
            return {"reverts": list(self.reverts), "gave_up": not self.fighting,
                    "duplicate_risk": list(self.duplicates), "beside": [dict(b) for b in self.beside],
                    "read_errors": self.errors, "api_requests": self.requests}

    def words(self) -> str:
        """What happened to the hold, for the run's last line ('' when nothing did)."""
        parts = []
        if self.reverts:
            by = ", ".join(sorted({str(r.get("by")) for r in self.reverts}))
            parts.append(f"the hold was reverted {len(self.reverts)} time(s) by {by}"
                         + ("" if self.fighting else " and cronctl stopped suspending it again"))
        if self.beside:
            parts.append("DUPLICATE: " + "; ".join(_beside_words(b) for b in self.beside))
        return "; ".join(parts)

    # -- the loop ---------------------------------------------------------------------------------
    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            try:
                self.requests += 1
                cj = self.c.get_cronjob(self.name)
            except CronctlError:
                self.errors += 1
                continue
            self.reads += 1
            rec = model.read_record(cj)
            if rec is None or rec.run_id != self.run_id:
                return  # the hold is no longer ours (restored, taken over): nothing left to guard
            held = model.is_suspended(cj)
            if self.was_held and not held:  # a revert is a change from held to not held
                self._reverted(cj)
            self.was_held = held
            self._look_for_duplicates(cj)

    def _reverted(self, cj: Obj) -> None:
        who = gitops.reverted_by(cj)
        now = self.clock.now()
        by = who.manager if who else "unknown"
        at = who.time if who and who.time else None
        entry: dict[str, Any] = {"by": by, "operation": who.operation if who else None,
                                 "at": rfc3339_z(at) if at else None, "seen": rfc3339_z(now)}
        if at is not None:
            entry["seen_after_seconds"] = round(max(0.0, (now - at).total_seconds()), 1)
        with self.lock:
            self.reverts.append(entry)
            n = len(self.reverts)
            fight = self.fighting and self.on_revert == "suspend-again" and n <= FIGHTS
        said = f"spec.suspend was set back to false by {by}" + (f" at {rfc3339_z(at)}" if at else "")
        if fight:
            again = self._suspend_again(cj)
            entry["suspended_again"] = again
            if again:
                self.was_held = True
                self._tell(cj, f"hold reverted: {said}; cronctl suspended it again (revert {n}; at the next one it "
                               f"stops fighting)", "CronctlHoldReverted", f"{said}; suspended again (revert {n})")
                return
        with self.lock:
            self.fighting = False
        why = ("--on-revert stop" if self.on_revert == "stop" else
               f"revert {n}" if n > FIGHTS else "the suspend again failed")
        self._tell(cj, f"hold lost: {said}; cronctl stops fighting ({why}): the CronJob is NOT suspended and its "
                       f"controller may start a scheduled Job beside the manual one; such Jobs are named, never deleted",
                   "CronctlHoldLost", f"{said}; cronctl stopped suspending it again ({why}); a scheduled Job may run "
                                      f"beside the manual one")

    def _suspend_again(self, cj: Obj) -> bool:
        for _ in range(3):
            try:
                self.requests += 1
                self.c.patch_cronjob(self.name, {"spec": {"suspend": True}}, resource_version=rv(cj))
                return True
            except Conflict:
                try:
                    self.requests += 1
                    cj = self.c.get_cronjob(self.name)
                except CronctlError:
                    return False
                rec = model.read_record(cj)
                if rec is None or rec.run_id != self.run_id:
                    return False
                if model.is_suspended(cj):
                    return True
            except CronctlError:
                self.errors += 1
                return False
        return False

    def _look_for_duplicates(self, cj: Obj) -> None:
        try:
            self.requests += 1
            jobs, _ = self.c.list_jobs()
        except CronctlError:
            self.errors += 1
            return
        for j in jobs:
            name = model.name_of(j)
            if name in self.duplicates or not model.owned_by(j, cj):
                continue
            if model.annotations(j).get(model.ANN_RUN_ID) == self.run_id:
                continue  # this run's own Job (the manual one, a retry, a backfilled slot)
            if model.meta(j).get("uid") in self.before:
                continue  # listed before the suspend was written (the plan's read): made before it
            made = model.created(j)
            # creationTimestamp has 1 s precision and ``since`` is the suspend's second: a Job made in
            # that second and not in the plan's list may be just before the suspend; it is named
            if self.since is not None and (made is None or made < self.since):
                continue
            entry = self._beside_entry(j, made)
            with self.lock:
                self.duplicates.append(name)
                self.beside.append(entry)
            self._tell(cj, f"DUPLICATE: {_beside_words(entry)}; it runs beside this run (cronctl does not "
                           f"delete it)", "CronctlDuplicate", _beside_words(entry))

    def _beside_entry(self, job: Obj, made: datetime | None) -> dict[str, Any]:
        """A Job beside the run: when it was made against the suspend, for which slot, by whom, why."""
        slot = model.scheduled_for(job)
        by = model.creator(job)
        entry: dict[str, Any] = {"job": model.name_of(job), "created": rfc3339_z_opt(made),
                                 "suspended": rfc3339_z_opt(self.since), "slot": rfc3339_z_opt(slot), "by": by}
        if made is not None and self.since is not None:
            entry["after_suspend_seconds"] = round((made - self.since).total_seconds(), 1)
        controllers = model.origin(job) == "scheduled" and slot is not None
        seen_revert = [r for r in self.reverts if made is not None and _revert_time(r) is not None
                       and _revert_time(r) <= made]  # type: ignore[operator]
        if not controllers:
            entry["cause"] = "another-client"
        elif seen_revert:
            entry["cause"] = "revert"
            entry["revert_by"] = seen_revert[-1].get("by")
        elif self.since is not None and slot is not None and slot <= self.since:
            entry["cause"] = "stale-cache"
        else:
            entry["cause"] = "not-seen-revert"
        return entry

    def _tell(self, cj: Obj, line: str, reason: str, event: str) -> None:
        """Say it on the terminal and as an Event on the CronJob; the record's account follows."""
        self.r.warn(line)
        self.requests += 1
        self.audit.event(cj, reason, f"cronctl run {self.run_id}: {event}")
        self._changed()

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()


def _revert_time(r: dict[str, Any]) -> datetime | None:
    """When a revert happened (managedFields' time), else when the guard saw it."""
    return model.when(r.get("at")) or model.when(r.get("seen"))


#: each cause of a Job beside the run, in words (the record keeps the key)
CAUSES = {
    "stale-cache": "the controller had not seen the suspend yet (its cache lagged the write)",
    "revert": "the hold had been reverted",
    "not-seen-revert": "the controller created it although the CronJob was suspended as far as cronctl saw (a "
                       "revert and a new suspend between two reads, or a stale cache)",
    "another-client": "it was not made by the CronJob controller",
}


def _beside_words(b: dict[str, Any]) -> str:
    """One Job beside the run in words: name, slot, who, when against the suspend, the cause."""
    cause = CAUSES.get(str(b.get("cause")), str(b.get("cause")))
    if b.get("cause") == "revert" and b.get("revert_by"):
        cause = f"the hold had been reverted by {b['revert_by']}"
    when_ = (f"created {b['after_suspend_seconds']:g}s after the suspend" if b.get("after_suspend_seconds") is not None
             else f"created {b.get('created') or 'at an unknown time'}")
    slot = f" for slot {b['slot']}" if b.get("slot") else ""
    by = f" by {b['by']}" if b.get("by") else ""
    return f"Job {b.get('job')}{slot}{by} {when_}: {cause}"


def beside_words(entries: list[dict[str, Any]]) -> str:
    """Several Jobs beside the run in words (for the run's message and the past-run summary)."""
    return "; ".join(_beside_words(b) for b in entries)
