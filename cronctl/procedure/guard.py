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

The guard never raises into the run: an API error is counted and the next read tries again.
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
from cronctl.timeutil import rfc3339_z

#: how often the guard reads the CronJob (s): a revert is seen within two of these
GUARD_EVERY = 1.0
#: reverts fought (suspended again) before the guard gives up with ``suspend-again``
FIGHTS = 1


class HoldGuard:
    """Watches one hold in a thread of its own; :meth:`start` after the suspend, :meth:`stop`
    before the restore. ``reverts`` and ``duplicates`` are the account, also in :meth:`account`."""

    def __init__(self, cluster: Cluster, name: str, run_id: str, clock: Clock, reporter: Reporter, audit: Audit,
                 *, on_revert: str = "suspend-again", every: float = GUARD_EVERY, since: datetime | None = None,
                 on_change: Callable[[], None] | None = None) -> None:
        self.c, self.name, self.run_id = cluster, name, run_id
        self.clock, self.r, self.audit = clock, reporter, audit
        self.on_revert, self.every = on_revert, every
        self.since = since
        self.on_change = on_change
        self.reverts: list[dict[str, Any]] = []
        self.duplicates: list[str] = []
        self.fighting = True
        self.was_held = True  # started right after the suspend
        self.errors = 0
        self.requests = 0  # the API requests the guard made (the run counts its own without them)
        self.lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="cronctl-hold-guard", daemon=True)

    # -- life -------------------------------------------------------------------------------------
    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop watching (idempotent): before the restore, and at any end of the run."""
        if self._stop.is_set():
            return
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)

    @property
    def reverted(self) -> bool:
        return bool(self.reverts)

    def account(self) -> dict[str, Any]:
        """The guard's account as the run record stores it (``hold_guard`` of record.json: a stored
        format, written by the run itself): the reverts seen, whether it gave up, the duplicate risk,
        its read errors and API requests."""
        with self.lock:
            return {"reverts": list(self.reverts), "gave_up": not self.fighting,
                    "duplicate_risk": list(self.duplicates), "read_errors": self.errors,
                    "api_requests": self.requests}

    def words(self) -> str:
        """What happened to the hold, for the run's last line ('' when nothing did)."""
        if not self.reverts:
            return ""
        by = ", ".join(sorted({str(r.get("by")) for r in self.reverts}))
        out = (f"the hold was reverted {len(self.reverts)} time(s) by {by}"
               + ("" if self.fighting else " and cronctl stopped suspending it again"))
        if self.duplicates:
            out += f"; DUPLICATE RISK: Job(s) {', '.join(self.duplicates)} started beside the manual Job"
        return out

    # -- the loop ---------------------------------------------------------------------------------
    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            try:
                self.requests += 1
                cj = self.c.get_cronjob(self.name)
            except CronctlError:
                self.errors += 1
                continue
            rec = model.read_record(cj)
            if rec is None or rec.run_id != self.run_id:
                return  # the hold is no longer ours (restored, taken over): nothing left to guard
            held = model.is_suspended(cj)
            if self.was_held and not held:  # a revert is a change from held to not held
                self._reverted(cj)
            self.was_held = held
            if not self.fighting:
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
            made = model.created(j)
            if self.since is not None and (made is None or made < self.since):
                continue
            with self.lock:
                self.duplicates.append(name)
            self._tell(cj, f"DUPLICATE RISK: the controller created Job {name} while the hold was lost; it runs "
                           f"beside the manual Job (cronctl does not delete it)",
                       "CronctlDuplicateRisk", f"Job {name} was created while the hold was reverted, beside the manual Job")

    def _tell(self, cj: Obj, line: str, reason: str, event: str) -> None:
        """Say it on the terminal and as an Event on the CronJob; the record's account follows."""
        self.r.warn(line)
        self.requests += 1
        self.audit.event(cj, reason, f"cronctl run {self.run_id}: {event}")
        self._changed()

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()
