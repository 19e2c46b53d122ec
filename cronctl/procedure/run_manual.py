"""``cronctl run-manual``: the safe manual run of a CronJob, as explicit steps.

1. preflight: the CronJob exists; ``--occurrence T|latest`` names a slot of its schedule (not in
   the future); every permission the later steps need (SelfSubjectAccessReview); no run record
   (lock) on it; the Job name is free and no Job already stands for the slot.
2. plan (+ confirmation, or --dry-run: stop and return the Job it would create).
3. suspend: ``spec.suspend=true`` + the run record, ONE merge patch guarded by resourceVersion.
4. verify: no ``.status.active`` and no unfinished child Job, again after ``settle`` seconds.
5. create the Job (``kubectl create job --from`` + cronctl annotations): the fixed name, or for a
   slot T the controller's own name and scheduled-timestamp annotation for T (checked again first).
6. wait (watch, one deadline), 7. save logs, 7b. for a slot T after success: ``status.lastScheduleTime
   = T`` (so the controller never wants T again), 8. restore (only after success, only to the
   original value; the controller's next move is predicted first), 9. the run record.

State is always explainable: the record on the CronJob says who/when/which step; a process
killed at any step leaves a CronJob that ``cronctl status`` explains and ``cronctl restore``
finishes. Nothing is ever deleted.
"""

from __future__ import annotations

import json
import re
import secrets
import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeVar

from cronctl import gitops, model
from cronctl.cluster import Cluster, Obj
from cronctl.errors import (BadInput, Conflict, CronctlError, ExitCode, Interrupted, PermissionMissing,
                            Refused, Timeout, option)
from cronctl.procedure.base import (Audit, Clock, MaskingReporter, Progress, Reporter, RunDir, next_commands,
                                    run_words, rv)
from cronctl.procedure.guard import GUARD_EVERY, HoldGuard
from cronctl.procedure.predict import (Prediction, expected_duration, history_limit_removal, next_runs, predict,
                                       schedule_words)
from cronctl.procedure.restore import RestoreOptions, restore, starts_catch_up
from cronctl.procedure.slot import (Slot, describe_job, is_slot, last_schedule_plan, lost_while_held, resolve,
                                    schedule_of, show, standing_for)
from cronctl.procedure.wait import RETRY_EVERY, WaitTimeout, ride_out, wait_for_jobs
from cronctl.redact import Redactor
from cronctl.timeutil import human_duration, local_and_utc, parse_rfc3339, rfc3339_z
from cronctl.versions import behaviour_for

#: (verb, resource, group, subresource, why) — every permission a run needs, checked up front.
PERMISSIONS: tuple[tuple[str, str, str, str, str], ...] = (
    ("get", "cronjobs", "batch", "", "read the CronJob"),
    ("patch", "cronjobs", "batch", "", "suspend it and write the run record"),
    ("create", "jobs", "batch", "", "create the manual Job"),
    ("get", "jobs", "batch", "", "check the Job name is free"),
    ("list", "jobs", "batch", "", "find unfinished child Jobs"),
    ("watch", "jobs", "batch", "", "wait for the Job"),
    ("list", "pods", "", "", "find the Job's pods"),
    ("get", "pods", "", "log", "save the logs"),
    ("list", "events", "", "", "show why a Job failed"),
)

#: One run (backfill, --catch-up all) runs at most this many slots (a larger one is several runs).
MAX_SLOTS = 500

#: Free space the run directory's disk must have before the CronJob is touched (record + logs).
MIN_FREE_BYTES = 1024 * 1024

#: the hint of a refusal because child Jobs run
WAIT_ACTIVE_HINT = f"use {option('wait_active')} to wait for them (bounded by {option('timeout')})"
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
CHECK_AFTER_RESTORE = 30.0  # how long to watch for a predicted catch-up Job after un-suspending (s)
TAIL_LINES = 10  # the last lines of each container's log shown at the end of a run
TAIL_MAX = 40    # ... and of all of them together
_RETRY_NAME = re.compile(r"^(.+)-r(\d{1,4})$")  # <job>-r<N>: attempt N of a run retried with --retry
T = TypeVar("T")


def retry_job_name(base: str, attempt: int) -> str:
    """The Job of attempt ``attempt`` (2, 3, ...) of a run whose first Job was ``base``: ``base-rN``,
    ``base`` cut so the name stays a DNS label (at most 63 characters)."""
    suffix = f"-r{attempt}"
    return base[:63 - len(suffix)].rstrip("-") + suffix


@dataclass
class RunOptions:
    cronjob: str
    job_name: str | None = None
    reason: str = ""
    occurrence: datetime | None = None
    occurrence_latest: bool = False       # --occurrence latest: the latest slot at or before now
    ad_hoc_occurrence: bool = False       # --ad-hoc-occurrence: any instant, fixed name, no slot
    yes: bool = False
    interactive: bool = False
    dry_run: bool = False
    settle: float = 15.0
    wait_active: bool = False
    timeout: float = 3600.0
    run_dir: str | None = None
    holder: str = ""                      # host/pid of this process
    after_step: Callable[[str], None] | None = None   # test hook (CRONCTL_TEST_KILL_AFTER_STEP)
    run_id: str | None = None
    catch_up: str = "latest"              # --catch-up latest|none|all at the restore (see procedure.restore)
    takeover: str | None = None           # the run id of an interrupted run's record to take over (its
                                          # suspension and original value): restore --catch-up all
    retry: bool = False                   # --retry: run the failed run's occurrence again (see _prepare_retry)
    expected_duration: float | None = None  # --expected-duration: the Job's run time for the plan
    gitops: str = "auto"                  # --gitops auto|annotate|refuse|ignore (cronctl.gitops.choose)
    on_revert: str = "suspend-again"      # --on-revert suspend-again|stop (cronctl.procedure.guard)
    guard_every: float = GUARD_EVERY      # how often the hold guard reads the CronJob (s)


@dataclass
class RunResult:
    exit_code: ExitCode
    message: str
    record: dict[str, Any] = field(default_factory=dict)
    job: Obj | None = None            # the Job created (or, for --dry-run, the one it would create)
    next_commands: list[str] = field(default_factory=list)


def check_permissions(cluster: Cluster, cronjob: str) -> None:
    """Raise PermissionMissing naming the first permission (of all later steps) the caller lacks."""
    missing = []
    for verb, resource, group, sub, why in PERMISSIONS:
        name = cronjob if resource == "cronjobs" else ""
        ok, _reason = cluster.can_i(verb, resource, group=group, subresource=sub, name=name)
        if not ok:
            res = f"{resource}/{sub}" if sub else resource
            missing.append(f"{verb} {res}{'.' + group if group else ''} (to {why})")
    if missing:
        raise PermissionMissing(
            f"missing permission in namespace {cluster.namespace}: cannot " + "; cannot ".join(missing)
            + "; nothing was changed", hint="see examples/rbac-operator.yaml for the operator Role")


def locked_message(cronjob: Obj, rec: model.RunRecord) -> str:
    ns = model.meta(cronjob).get("namespace", "")
    return (f"cronjob {ns}/{model.name_of(cronjob)} is held by run {rec.run_id} of {rec.operator or 'unknown'}"
            f" (started {rec.started}, step {rec.step or '?'}"
            + (f", {rec.holder}" if rec.holder else "") + ")")


class _Run:
    """One run-manual invocation; methods are the steps."""

    def __init__(self, cluster: Cluster, opts: RunOptions, clock: Clock, reporter: Reporter) -> None:
        self.c = cluster
        self.o = opts
        self.clock = clock
        self.red = Redactor()       # one for the whole run: run directory, record, log tail, -o json
        self.r: Reporter = MaskingReporter(reporter, self.red)
        self.name = opts.cronjob
        self.ns = cluster.namespace
        self.job_name = opts.job_name or f"{opts.cronjob}-manual"
        self.run_id = opts.run_id or secrets.token_hex(4)
        self.operator = "unknown"
        self.cj: Obj = {}
        self.original_suspend = False
        self.dir: RunDir | None = None
        self.record: dict[str, Any] = {}
        self.requests_at_start = cluster.request_count
        self.suspended_mono: float | None = None
        self.write_failed = False
        self.wait_stats: dict[str, int] = {}
        self.deadline: float | None = None                    # set at the suspend: bounds every wait
        self.unreachable_said = False                         # the ride-out warning is said once a run
        self.occurrence: datetime | None = opts.occurrence   # the instant the run stands for
        self.slot: Slot | None = None                         # set when it is a slot of the schedule
        self.can_patch_status = True
        self.without_patch = ""                               # what the controller does if not patched
        self.todo: list[datetime] = []                        # slots to run (backfill, --catch-up all)
        self.done: list[str] = []                             # slots run and done (UTC), oldest first
        self.audit = Audit(cluster, self.r, clock)            # Events on the CronJob, one per change
        self.announced: bool | None = None                    # the plan foresaw a catch-up at the restore
        self.retry_of: model.RunRecord | None = None          # --retry: the failed run taken over
        self.attempt = 1
        self.seen = gitops.GitOps()                           # who else writes spec.suspend (preflight)
        self.strategy = gitops.Strategy("plain", "")          # how the hold is made under them (preflight)
        self.guard: HoldGuard | None = None                   # watches the hold from the suspend on

    # -- bookkeeping ------------------------------------------------------------------------
    @property
    def zone(self) -> str | None:
        """The CronJob's ``spec.timeZone`` (through the one view), for the times shown to people."""
        return model.cronjob_view(self.cj).time_zone

    def _now(self) -> str:
        return rfc3339_z(self.clock.now())

    def _step_local(self, step: str, note: str = "") -> None:
        self.record["step"] = step
        self.record.setdefault("steps", []).append({"step": step, "at": self._now(), **({"note": note} if note else {})})
        self._save()

    def _save(self) -> None:
        # the run's own requests; the hold guard's reads are counted apart (record hold_guard.api_requests)
        self.record["api_requests"] = (self.c.request_count - self.requests_at_start
                                       - (self.guard.requests if self.guard is not None else 0))
        if self.wait_stats:
            self.record["watch"] = dict(self.wait_stats)
        if self.dir is not None:
            try:
                self.dir.write_json("record.json", self.red.data(self.record))
            except OSError as e:
                # Once the CronJob is suspended, a full or broken disk must not stop the run from
                # finishing and restoring: say it once; the record on the CronJob still holds the state.
                if not self.write_failed:
                    self.r.warn(f"cannot write {self.dir.path / 'record.json'}: {e.strerror or e}; "
                                f"the run goes on, but its local record is incomplete")
                self.write_failed = True

    def _check_run_dir(self) -> None:
        """Before anything changes: the run directory takes a record, and has room for logs."""
        assert self.dir is not None
        self.record["step"] = "planned"
        try:
            self.dir.write_json("record.json", self.record)
            free = shutil.disk_usage(self.dir.path).free
        except OSError as e:
            raise BadInput(f"cannot write the run directory {self.dir.path}: {e.strerror or e}; nothing was "
                           f"changed", hint=f"use {option('run_dir')} on a writable disk with free space") from e
        if free < MIN_FREE_BYTES:
            raise BadInput(f"the disk of the run directory {self.dir.path} has only {free} bytes free (at least "
                           f"{MIN_FREE_BYTES} needed for the record and logs); nothing was changed",
                           hint=f"free some space or use {option('run_dir')} elsewhere")

    def _who(self) -> str:
        return run_words(self.run_id, self.operator, self.o.reason,
                         rfc3339_z(self.occurrence) if self.occurrence else "")

    def _retry_note(self) -> str:
        rec = self.retry_of
        return (f"attempt {self.attempt}: retry of run {rec.run_id} (job {rec.job_name} failed)"
                if rec is not None else "")

    def _hook(self, step: str) -> None:
        if self.o.after_step is not None:
            self.o.after_step(step)

    def _record(self, step: str, note: str = "") -> model.RunRecord:
        return model.RunRecord(
            run_id=self.run_id, original_suspend=self.original_suspend, operator=self.operator,
            reason=self.o.reason, job_name=self.job_name, step=step, started=self.record["started"],
            holder=self.o.holder, updated=self._now(),
            occurrence=rfc3339_z(self.occurrence) if self.occurrence else "", note=note,
            gitops=self._gitops_annotation())

    # -- GitOps: who else writes spec.suspend, and the guard --------------------------------------
    def _decide_gitops(self) -> None:
        """Before any write: which tool manages the CronJob and how the hold is made under it."""
        self.seen = gitops.detect(self.cj)
        self.strategy = gitops.choose(self.seen, self.o.gitops)
        if self.seen.tool is not None:
            self.r.step(f"preflight: {self.seen.words()}")

    def _gitops_annotation(self) -> str:
        """The record's GitOps part (model.ANN_GITOPS): what the hold changes beside suspend."""
        if self.strategy.kind == "plain" and self.seen.tool is None:
            return ""
        hold: dict[str, Any] = {"strategy": self.strategy.kind, "tool": self.seen.tool}
        if self.strategy.kind == "annotate":
            hold.update(annotation=gitops.FLUX_RECONCILE,
                        previous=model.annotations(self.cj).get(gitops.FLUX_RECONCILE)
                        if "previous" not in self.record.get("gitops_hold", {}) else
                        self.record["gitops_hold"]["previous"])
        self.record["gitops_hold"] = hold
        return json.dumps(hold, separators=(",", ":"), sort_keys=True)

    def _hold_change_words(self) -> str:
        """What the hold changed beside suspend, for the suspend's step line and Event."""
        hold = self.record.get("gitops_hold") or {}
        if self.strategy.kind == "annotate":
            prev = hold.get("previous")
            return (f"; {gitops.FLUX_RECONCILE}={gitops.FLUX_DISABLED} set for the hold (before: "
                    + (repr(prev) if prev is not None else "absent") + "; put back at the restore)")
        if self.strategy.kind == "ignored":
            return f"; --gitops ignore: {self.seen.words()}"
        return ""

    def _start_guard(self) -> None:
        since = self.clock.now().replace(microsecond=0)
        self.guard = HoldGuard(self.c, self.name, self.run_id, self.clock, self.r, self.audit,
                               on_revert=self.o.on_revert, every=self.o.guard_every,
                               since=since, on_change=self._guard_changed)
        # the key exists before the thread runs: the guard only replaces its value, so the main thread's
        # json.dumps of the record never sees the dict change size; the main thread's next save writes it
        self.record["hold_guard"] = self.guard.as_dict()
        self.guard.start()

    def _guard_changed(self) -> None:
        """From the guard's thread: the account in the record (saved by the main thread's next write)."""
        if self.guard is not None:
            self.record["hold_guard"] = self.guard.as_dict()

    def _end_hold(self) -> str:
        """Stop the guard (before a restore, or at any end of the run); what happened to the hold."""
        if self.guard is None:
            return ""
        self.guard.stop()
        self.record["hold_guard"] = self.guard.as_dict()
        return self.guard.words()

    def _unreachable(self, e: CronctlError) -> None:
        """Said once a run, when a request made while its Job is in flight finds the API server
        unreachable: the run waits instead of ending with the CronJob suspended and the Job running."""
        if self.unreachable_said or self.deadline is None:
            return
        self.unreachable_said = True
        until = self.clock.now() + timedelta(seconds=max(0.0, self.deadline - self.clock.monotonic()))
        self.r.warn(f"{e.message}; the Job is in flight, so cronctl tries again every {RETRY_EVERY:g}s until the "
                    f"run's deadline ({local_and_utc(until.replace(microsecond=0), self.zone)}); Ctrl-C stops waiting")

    def _ride_out(self, call: Callable[[], T]) -> T:
        """``call()``, riding out an unreachable API server until the run's deadline (once the run
        has one: from the suspend on); without a deadline, one attempt."""
        if self.deadline is None:
            return call()
        return ride_out(call, deadline=self.deadline, clock=self.clock, stats=self.wait_stats,
                        on_unreachable=self._unreachable)

    def _update_step(self, step: str, note: str = "", *, ride: bool = False) -> None:
        """Write the step into the record on the CronJob (guarded; only while the record is ours).
        ``ride``: while a Job is in flight, an API server restart is ridden out until the run's
        deadline (:meth:`_ride_out`); otherwise one attempt per write."""
        cj = self.cj
        call: Callable[[Callable[[], Obj]], Obj] = self._ride_out if ride else (lambda f: f())
        for _ in range(5):
            rec = model.read_record(cj)
            if rec is None or rec.run_id != self.run_id:
                raise Refused(f"the run record on cronjob {self.ns}/{self.name} was removed or replaced "
                              f"by someone else (now: {rec.run_id if rec else 'none'}); stopping here")
            patch = {"metadata": {"annotations": {model.ANN_STEP: step, model.ANN_UPDATED: self._now(),
                                                  model.ANN_NOTE: note}}}
            try:
                self.cj = call(lambda: self.c.patch_cronjob(self.name, patch, resource_version=rv(cj)))
                self._step_local(step, note)
                return
            except Conflict:
                # a competing write, or our own patch applied before a dropped answer: read again
                cj = call(lambda: self.c.get_cronjob(self.name))
        raise Conflict(f"cronjob {self.ns}/{self.name} kept changing; could not record step {step}")

    # -- 1. preflight ---------------------------------------------------------------------------
    def _slot_mode(self) -> bool:
        return (self.o.occurrence is not None or self.o.occurrence_latest) and not self.o.ad_hoc_occurrence

    def _check_flags(self) -> None:
        if self.o.ad_hoc_occurrence and self.o.occurrence_latest:
            raise BadInput(f"{option('ad_hoc_occurrence')} cannot be used with {option('occurrence')} latest (latest "
                           "is always a slot)")
        if self.o.ad_hoc_occurrence and self.o.occurrence is None:
            raise BadInput(f"{option('ad_hoc_occurrence')} needs {option('occurrence')} RFC3339 (the instant the "
                           "run stands for)")
        if self.o.retry and (self.o.occurrence is not None or self.o.occurrence_latest or self.o.job_name
                             or self.o.ad_hoc_occurrence or self.o.takeover):
            raise BadInput(f"{option('retry')} runs the failed run's own occurrence again under a name derived from "
                           f"its Job: it takes no {option('occurrence')}, {option('ad_hoc_occurrence')} or "
                           f"{option('job_name')}")
        if self._slot_mode() and self.o.job_name:
            raise BadInput(f"{option('job_name')} cannot be used with a slot {option('occurrence')}: the Job takes "
                           "the name the controller gives that slot (<cronjob>-<unix minutes>)",
                           hint=f"drop {option('job_name')}, or add {option('ad_hoc_occurrence')} for a fixed-name "
                                "run the controller does not know")

    def preflight(self) -> None:
        self._check_flags()
        if not _DNS_LABEL.match(self.job_name) or len(self.job_name) > 63:
            raise BadInput(f"bad {option('job_name')} {self.job_name!r}: must be a DNS label (a-z, 0-9, '-', "
                           f"at most 63 characters)")
        self.cj = self.c.get_cronjob(self.name)
        self.red.learn(self.cj)  # its secret env values, masked wherever the run echoes them
        self.r.step(f"preflight: cronjob {self.ns}/{self.name} found")
        self._decide_gitops()
        if self.o.retry:
            self._prepare_retry()
        if self._slot_mode():
            self.slot = resolve(self.cj, self.o.occurrence, latest=self.o.occurrence_latest, now=self.clock.now())
            self.occurrence = self.slot.at
            self.job_name = self.slot.job_name
            self.r.step(f"preflight: {'the latest slot' if self.slot.latest else 'slot'} {self.slot.shown} of "
                        f"the schedule: Job {self.job_name}, the controller's name for it")
        elif self.occurrence is not None and not self.o.retry:
            self._warn_ad_hoc(self.occurrence)
        check_permissions(self.c, self.name)
        self.r.step("preflight: every permission the run needs is granted")
        if self.slot is not None:
            self._check_status_permission()
        if self.o.catch_up in ("none", "all"):
            ok, why = self.c.can_i("patch", "cronjobs", group="batch", subresource="status", name=self.name)
            if not ok:
                what = ("mark the latest due slot processed before the restore" if self.o.catch_up == "none" else
                        "mark each slot run processed")
                raise PermissionMissing(f"{option('catch_up')} {self.o.catch_up} needs patch on cronjobs/status (to "
                                        f"{what}){': ' + why if why else ''}; nothing was changed",
                                        hint=f"use {option('catch_up')} latest, or see cronctl runbook rbac")
            self.r.step(f"preflight: may patch cronjobs/status (--catch-up {self.o.catch_up})")
        rec = model.read_record(self.cj)
        if rec is not None and not self._taking_over(rec):
            raise Refused(locked_message(self.cj, rec) + "; nothing was changed",
                          hint=f"see cronctl status {self.name} -n {self.ns}; if that run is dead, "
                               f"cronctl restore {self.name} -n {self.ns}")
        self._check_name_free()
        if self.occurrence is not None:
            self._check_occurrence_free(self.c.list_jobs()[0])
        self.operator = self.c.whoami()

    def _prepare_retry(self) -> None:
        """``--retry``: the run on the CronJob failed (its record says step ``failed``, its Job ended
        Failed). This run takes its record over, so the CronJob stays suspended in between, and runs
        the same occurrence again as ``<job>-r<N>`` (the failed Job keeps its name, logs and
        evidence). A slot's lastScheduleTime is set after success as for the first attempt."""
        rec = model.read_record(self.cj)
        if rec is None or rec.step != "failed":
            now = f"its run record is at step '{rec.step}'" if rec else "it carries no run record"
            raise Refused(f"{option('retry')} needs a failed cronctl run on cronjob {self.ns}/{self.name}; {now}; nothing "
                          f"was changed", hint=f"see cronctl status {self.name} -n {self.ns}")
        unconfirmed = model.record_unconfirmed(self.cj)
        if unconfirmed:  # a record is not a credential: its original suspend would be restored at the end
            raise Refused(f"run record {rec.run_id} on cronjob {self.ns}/{self.name} is {unconfirmed}; "
                          f"{option('retry')} takes over only a record cronctl wrote; nothing was changed",
                          hint=f"check with {rec.operator or 'its operator'}; cronctl restore --force clears it")
        failed = self.c.get_job(rec.job_name) if rec.job_name else None
        if failed is not None and not model.is_finished(failed):
            raise Refused(f"job {self.ns}/{rec.job_name} of run {rec.run_id} is still running; nothing was changed",
                          hint=f"cronctl wait {self.name} -n {self.ns} follows it to its end")
        m = _RETRY_NAME.match(rec.job_name or "")
        base, last = (m.group(1), int(m.group(2))) if m else (rec.job_name or f"{self.name}-manual", 1)
        self.attempt = last + 1
        self.job_name = retry_job_name(base, self.attempt)
        self.retry_of = rec
        self.o.takeover = rec.run_id
        if not self.o.reason:
            self.o.reason = rec.reason
        if rec.occurrence:
            try:
                at = parse_rfc3339(rec.occurrence)
            except CronctlError:
                at = None
            if at is not None:
                self.occurrence = at
                try:
                    self.slot = resolve(self.cj, at, latest=False, now=self.clock.now())
                except CronctlError:
                    self.slot = None  # an ad-hoc instant: carried by annotation and env only
        self.record["retry_of"] = {"run_id": rec.run_id, "job": rec.job_name, "attempt": self.attempt}
        self.r.step(f"preflight: retry of run {rec.run_id} of {rec.operator or 'unknown'} (job {rec.job_name} "
                    f"failed): attempt {self.attempt} as Job {self.job_name}"
                    + (f" for {rec.occurrence}" if rec.occurrence else "") + "; the CronJob stays suspended")

    def _taking_over(self, rec: model.RunRecord | None) -> bool:
        """Whether ``rec`` is the interrupted run's record this run was asked to take over."""
        return rec is not None and self.o.takeover is not None and rec.run_id == self.o.takeover

    def _warn_ad_hoc(self, at: datetime) -> None:
        tz: str | None = None
        try:
            sched, _expr, tz = schedule_of(self.cj)
            slot = sched.every is None and is_slot(sched, at)
        except CronctlError:
            slot = False
        what = ("is a slot of the schedule, but runs as an ad-hoc Job" if slot
                else "is not a slot of the schedule")
        self.r.warn(f"--ad-hoc-occurrence: {show(at, tz)} {what}: the controller does not know this instant "
                    f"(Job {self.job_name} carries it only as {model.ANN_OCCURRENCE} and {model.OCCURRENCE_ENV})"
                    + ("; the controller still starts that slot itself if it is due" if slot else ""))

    def _check_status_permission(self) -> None:
        ok, _why = self.c.can_i("patch", "cronjobs", group="batch", subresource="status", name=self.name)
        self.can_patch_status = ok
        if ok:
            self.r.step("preflight: may patch cronjobs/status (lastScheduleTime = the slot after success)")
            return
        try:
            version: str | None = self.c.server_version()
        except CronctlError:
            version = None
        assert self.slot is not None
        beh = behaviour_for(version)
        self.without_patch = ("when it is un-suspended while this slot is the latest one due, the controller "
                              "tries to start it: " + beh.adoption_text(self.job_name, self.slot.shown))

    def _check_name_free(self) -> None:
        existing = self.c.get_job(self.job_name)
        if existing is not None:
            outcome = model.job_outcome(existing) or "still running"
            if self.slot is not None:
                raise Refused(f"job {self.ns}/{self.job_name} already exists for slot {self.slot.shown} (created "
                              f"{model.meta(existing).get('creationTimestamp', '?')}, {outcome}); nothing was "
                              f"changed", hint="that slot has run (or runs) already; see cronctl status "
                                               f"{self.name} -n {self.ns}")
            raise Refused(f"job {self.ns}/{self.job_name} already exists (created "
                          f"{model.meta(existing).get('creationTimestamp', '?')}, {outcome}); nothing was "
                          f"changed", hint="the fixed name is what stops a second run: save its logs and "
                                           f"delete it on purpose, or choose {option('job_name')}")

    def _standing(self, jobs: list[Obj]) -> list[Obj]:
        if self.occurrence is None:
            return []
        found = standing_for(self.cj, jobs, self.occurrence, self.job_name)
        if self.retry_of is not None:  # a retry runs again what failed: failed attempts do not stand
            found = [j for j in found if model.job_outcome(j) != "Failed"]
        return found

    def _check_occurrence_free(self, jobs: list[Obj]) -> None:
        """A Job that already stands for the run's instant (its name, or owned + annotation) stops it."""
        found = self._standing(jobs)
        if found and self.occurrence is not None:
            tz = self.slot.time_zone if self.slot else None
            raise Refused(f"{describe_job(found[0])} already stands for {show(self.occurrence, tz)}; nothing "
                          f"was changed", hint=f"that occurrence has run (or runs) already; see cronctl status "
                                               f"{self.name} -n {self.ns}")

    # -- 2. plan ----------------------------------------------------------------------------------
    def plan(self) -> Obj:
        spec = self.cj.get("spec") or {}
        jobs, _ = self.c.list_jobs()
        unfinished = [model.name_of(j) for j in model.unfinished_children(self.cj, jobs)]
        now = self.clock.now()
        runs = next_runs(self.cj, now)
        suspended = model.is_suspended(self.cj)
        lst_row, lst_plan = self._plan_last_schedule()
        after = predict(self._after_patch(self.cj) if lst_plan.get("patch") else self.cj, now, suspended=suspended)
        job = self.build_job()
        self.record["plan"] = {
            "schedule": spec.get("schedule"), "time_zone": self.zone,
            "concurrency_policy": model.cronjob_view(self.cj).policy,
            "starting_deadline_seconds": spec.get("startingDeadlineSeconds"),
            "original_suspend": suspended, "active": model.active_names(self.cj),
            "unfinished_children": unfinished, "next_runs": [rfc3339_z(t) for t in runs],
            "job_name": self.job_name, "settle_seconds": self.o.settle, "timeout_seconds": self.o.timeout,
        }
        end_row = self._plan_end(jobs, now, suspended, lst_plan)
        removal, removal_info = history_limit_removal(self.cj, now)
        self.record["plan"]["job_removal"] = removal_info
        if self.slot is not None:
            self.record["plan"].update(slot=self.slot.as_dict(), last_schedule_time=lst_plan)
        rows = [
            ("cronjob", f"{self.ns}/{self.name}"),
            ("schedule", schedule_words(self.cj)),
            ("time zone", self.zone or "none (the controller's zone, normally UTC)"),
            ("suspend now", str(suspended).lower()),
            ("active", ", ".join(model.active_names(self.cj)) or "none"),
            ("unfinished child Jobs", ", ".join(unfinished) or "none"),
            ("next runs", ", ".join(local_and_utc(t, self.zone) for t in runs) or "unknown"),
            ("operator", self.operator),
            ("will", f"suspend it, check for running Jobs (again after {human_duration(self.o.settle)}), create "
                     f"Job {self.job_name}, wait up to {human_duration(self.o.timeout)}, save logs, and after "
                     f"success {'set lastScheduleTime to the slot and ' if lst_plan.get('patch') else ''}"
                     f"set suspend back to {str(suspended).lower()}"),
            ("after the run", self._after_text(after, suspended)),
            ("while suspended", end_row),
            ("manual Job kept", removal),
            ("gitops", self.seen.words()),
            ("hold", self._hold_words()),
        ]
        if self.slot is not None:
            rows[7:7] = [("slot", f"{self.slot.shown}{', the latest slot' if self.slot.latest else ''}; "
                                  f"env {model.OCCURRENCE_ENV}"),
                         ("job name", f"{self.job_name} (the controller's name for this slot)"),
                         ("lastScheduleTime", lst_row)]
        elif self.occurrence:
            rows.insert(7, ("occurrence", f"{rfc3339_z(self.occurrence)} (ad hoc: not a slot the controller "
                                          f"knows; env {model.OCCURRENCE_ENV})"))
        if self.o.reason:
            rows.insert(7, ("reason", self.o.reason))
        self.record["plan"]["gitops"] = {**self.seen.as_dict(), **self.strategy.as_dict()}
        self.r.show("plan", rows)
        if self.strategy.kind == "refuse":
            why = (f"{self.strategy.why}: refusing to suspend cronjob {self.ns}/{self.name} (--gitops "
                   f"{self.o.gitops}); nothing was changed")
            if not self.o.dry_run:
                raise Refused(why, hint=self.strategy.remedy)
            self.r.warn(f"{why}; {self.strategy.remedy}")
        running = self._running_of(self.cj, jobs)
        if running and not self.o.wait_active:
            # Refused here, before the suspend: a Job running now makes the verify step refuse anyway,
            # after suspending and setting suspend back. (The verify after the suspend stays: it
            # catches a Job the controller creates between this read and the suspend.)
            if not self.o.dry_run:
                raise Refused(f"cronjob {self.ns}/{self.name} has unfinished child Jobs: {', '.join(running)}; "
                              f"nothing was changed", hint=WAIT_ACTIVE_HINT)
            self.r.warn(f"unfinished child Jobs now: {', '.join(running)}; the run would be refused before "
                        f"anything changes, unless --wait-active")
        if self.slot is not None and lst_plan.get("needed") and not self.can_patch_status:
            self.r.warn(f"no permission to patch cronjobs/status: lastScheduleTime cannot be set to the slot; "
                        f"{self.without_patch}; the run goes on only when confirmed (--yes)")
        return job

    def _hold_words(self) -> str:
        """The plan's "hold" row: how the suspend is made and guarded."""
        guard = (f"watched every {self.o.guard_every:g}s; a revert of spec.suspend is "
                 + ("suspended again once, then reported without fighting" if self.o.on_revert == "suspend-again"
                    else "reported, not fought (--on-revert stop)"))
        if self.strategy.kind == "refuse":
            return f"REFUSED: {self.strategy.why}"
        return f"{self.strategy.why}; {guard}" if self.strategy.why else guard

    def _plan_last_schedule(self) -> tuple[str, dict[str, Any]]:
        """The plan's lastScheduleTime row, and the plan's record of it."""
        if self.slot is None:
            return "", {}
        lp = last_schedule_plan(self.cj, self.slot)
        info: dict[str, Any] = {"patch": lp.patch and self.can_patch_status, "why": lp.why,
                                "needed": lp.needed,
                                "current": rfc3339_z(lp.current) if lp.current else None,
                                "permission": self.can_patch_status}
        if not lp.patch:
            return f"not patched: {lp.why}", info
        if self.can_patch_status:
            return f"after success: {lp.why} (status subresource)", info
        if not lp.needed:
            info["why"] = f"no permission to patch cronjobs/status; not needed: {lp.why}"
            return f"not patched: {info['why']}", info
        info.update(why="no permission to patch cronjobs/status", without_patch=self.without_patch)
        return f"NOT patched (no permission to patch cronjobs/status): {self.without_patch}", info

    def _after_text(self, after: Prediction, suspended: bool) -> str:
        """The plan's "after the run" row: what the restore will do under --catch-up."""
        if self.o.catch_up == "all" and not suspended:
            return ("every slot that passes while suspended runs first as its own Job (the controller's name for "
                    "it), oldest first, one at a time; then nothing is left to catch up"
                    + (f" (if restored now instead: {after.text})" if starts_catch_up(after) else ""))
        if self.o.catch_up == "latest" or not starts_catch_up(after) or after.catch_up_for is None:
            return f"if restored now: {after.text}"
        return (f"if restored now: nothing starts (--catch-up none marks {rfc3339_z(after.catch_up_for)} "
                f"processed; {after.never_made_up + 1} slot(s) given up); the restore says which")

    def _plan_end(self, jobs: list[Obj], now: datetime, suspended: bool, lst_plan: dict[str, Any]) -> str:
        """The plan's "while suspended" row: the slots expected to pass before the run ends, and what
        the restore will do then (not now). Remembers whether that restore starts a catch-up Job, so
        a restore that would start one the plan did not announce asks again (:meth:`_confirm_restore`)."""
        secs, how = expected_duration(self.cj, jobs, now, self.o.expected_duration)
        info: dict[str, Any] = {"expected_seconds": secs, "from": how}
        self.record["plan"]["end"] = info
        if secs is None:
            self.announced = None
            return f"the Job's run time is {how}: the slots that pass meanwhile cannot be foreseen"
        end = now + timedelta(seconds=self.o.settle + secs)
        passing = [t for t in next_runs(self.cj, now, 50) if t <= end]
        cj = self._after_patch(self.cj) if lst_plan.get("patch") else self.cj
        at_end = predict(cj, end, suspended=suspended, jobs=jobs)
        self.announced = starts_catch_up(at_end)
        info.update(end=rfc3339_z(end), slots_passing=[rfc3339_z(t) for t in passing],
                    at_end=at_end.as_dict())
        zone = self.zone
        shown = ", ".join(local_and_utc(t, zone) for t in passing[:5]) + (" ..." if len(passing) > 5 else "")
        return (f"about {human_duration(self.o.settle + secs)} (the settle {human_duration(self.o.settle)}, then "
                f"the Job {human_duration(secs)}: {how}), until about "
                f"{local_and_utc(end.replace(microsecond=0), zone)}; "
                + (f"{len(passing)} slot(s) pass meanwhile: {shown}" if passing else "no slot passes meanwhile")
                + ("" if suspended or self.o.catch_up != "latest" else f"; at the restore then: {at_end.text}"))

    def _after_patch(self, cj: Obj) -> Obj:
        """The CronJob as it will be after lastScheduleTime = the slot (for the plan's prediction)."""
        assert self.slot is not None
        out = dict(cj)
        out["status"] = {**(cj.get("status") or {}), "lastScheduleTime": rfc3339_z(self.slot.at)}
        return out

    def build_job(self) -> Obj:
        extra = {model.ANN_RUN_ID: self.run_id, model.ANN_OPERATOR: self.operator}
        if self.o.reason:
            extra[model.ANN_REASON] = self.o.reason
        if self.occurrence:
            extra[model.ANN_OCCURRENCE] = rfc3339_z(self.occurrence)
        if self.slot is not None:
            # what the controller writes on the Job it makes for this slot
            extra[model.SCHEDULED_TS] = self.slot.scheduled_timestamp
        if self.retry_of is not None and self.retry_of.job_name:
            extra[model.ANN_RETRY_OF] = self.retry_of.job_name
        return model.build_manual_job(self.cj, self.job_name, extra_annotations=extra,
                                      occurrence_at=self.occurrence)

    def confirm(self, question: str | None = None) -> None:
        if self.o.yes:
            return
        if not self.o.interactive:
            raise Refused(f"not on a terminal and {option('yes')} not given: refusing to suspend "
                          f"cronjob {self.ns}/{self.name} without confirmation; nothing was changed")
        if question is None:
            question = (f"Suspend {self.ns}/{self.name} and run Job {self.job_name}"
                        + (f" for slot {self.slot.shown}" if self.slot else "")
                        + (" without setting lastScheduleTime" if self.slot and not self.can_patch_status
                           else "") + "?")
        if not self.r.confirm(question):
            raise Refused("not confirmed; nothing was changed")

    def open_run(self) -> tuple[float, list[str]]:
        """The run directory, then the suspend: returns (the deadline, the next commands)."""
        self.dir = RunDir.create(self.o.run_dir, self.name, self.run_id)
        self.record["run_dir"] = str(self.dir.path)
        self._check_run_dir()
        # One deadline for everything that waits, counted from the suspend (not from the prompt).
        deadline = self.clock.monotonic() + self.o.timeout
        self.deadline = deadline
        self.suspend()
        self._start_guard()
        self._hook("suspended")
        return deadline, next_commands(self.name, self.ns)

    # -- 3. suspend -------------------------------------------------------------------------------
    def suspend(self) -> None:
        plan_generation = model.meta(self.cj).get("generation")
        cj = self.cj
        for _ in range(5):
            rec = model.read_record(cj)
            if rec is not None and not self._taking_over(rec):
                raise Refused(locked_message(cj, rec) + "; nothing was changed")
            if rec is None and self.o.takeover:
                raise Refused(f"the run record {self.o.takeover} on cronjob {self.ns}/{self.name} was removed "
                              f"meanwhile; nothing was changed")
            if model.meta(cj).get("generation") != plan_generation:
                raise Refused(f"cronjob {self.ns}/{self.name} was changed (spec generation "
                              f"{plan_generation} -> {model.meta(cj).get('generation')}) since the plan was "
                              f"shown; nothing was changed, run again")
            # taking over: the suspension is the interrupted run's, and so is the value before it
            self.original_suspend = rec.original_suspend if rec is not None else model.is_suspended(cj)
            if rec is not None and "previous" in rec.gitops_hold():  # and so is Flux's annotation before it
                self.record["gitops_hold"] = {"previous": rec.gitops_hold()["previous"]}
            ann: dict[str, str] = self._record("suspended", self._retry_note()).to_annotations()
            if rec is not None:  # the run taken over ends here: its account joins cronctl.dev/runs
                ann[model.ANN_RUNS] = model.runs_with(cj, rec, restored_at=self.clock.now(), restored_to=True)
            if self.strategy.kind == "annotate":
                ann[gitops.FLUX_RECONCILE] = gitops.FLUX_DISABLED
            patch = {"spec": {"suspend": True}, "metadata": {"annotations": ann}}
            try:
                self.cj = self.c.patch_cronjob(self.name, patch, resource_version=rv(cj))
            except Conflict:
                # Someone else wrote first (the controller's status update, or another operator):
                # read again and re-check the lock, never overwrite blindly.
                cj = self.c.get_cronjob(self.name)
                continue
            self.suspended_mono = self.clock.monotonic()
            self.record["original_suspend"] = self.original_suspend
            self.record["suspended_at"] = self._now()
            if rec is not None:
                self.record.update(took_over=rec.run_id, suspended_at=rec.started or self._now())
            self._step_local("suspended")
            self.audit.event(self.cj, "CronctlSuspended", f"cronctl {self._who()}: "
                             + (f"took over run record {rec.run_id} of {rec.operator or 'unknown'} (suspend was "
                                f"{str(self.original_suspend).lower()} before it)" if rec is not None else
                                f"suspended the CronJob (it was suspend={str(self.original_suspend).lower()}) "
                                f"for a manual run") + self._hold_change_words())
            self.r.step(f"took over run record {rec.run_id} of {rec.operator or 'unknown'} (suspended since "
                        f"{rec.started}, suspend={str(self.original_suspend).lower()} before it): run record "
                        f"{self.run_id} written on it" if rec is not None else
                        f"suspended {self.ns}/{self.name} (it was suspend={str(self.original_suspend).lower()}); "
                        f"run record {self.run_id} written on it" + self._hold_change_words())
            return
        raise Conflict(f"cronjob {self.ns}/{self.name} kept changing while suspending; nothing was changed")

    # -- 4. verify ------------------------------------------------------------------------------
    def _running(self) -> list[str]:
        cj = self.c.get_cronjob(self.name)
        self.cj = cj
        return self._running_of(cj, self.c.list_jobs()[0])

    @staticmethod
    def _running_of(cj: Obj, jobs: list[Obj]) -> list[str]:
        """The CronJob's unfinished child Jobs, and the unfinished Jobs its status.active names."""
        by_name = {model.name_of(j): j for j in jobs}
        names = [model.name_of(j) for j in model.unfinished_children(cj, jobs)]
        for a in model.active_names(cj):
            j = by_name.get(a)
            # A stale entry for a finished or vanished Job cannot run; the controller drops it.
            if a not in names and j is not None and not model.is_finished(j):
                names.append(a)
        return sorted(names)

    def verify(self, deadline: float) -> None:
        for attempt in ("now", "after settle"):
            if attempt == "after settle":
                self.r.step(f"verify: waiting {human_duration(self.o.settle)} for a creation the controller "
                            f"may have in flight")
                self.clock.sleep(self.o.settle)
            running = self._running()
            if running and self.o.wait_active:
                self.r.step(f"verify: waiting for running Jobs to finish: {', '.join(running)}")
                try:
                    wait_for_jobs(self.c, set(running), deadline=deadline, clock=self.clock,
                                  stats=self.wait_stats)
                except WaitTimeout as e:
                    # Nothing of ours exists yet: go back to where we started, then report the timeout.
                    why = f"running Jobs did not finish within {{}}: {', '.join(running)}"
                    self._undo(why.format("--timeout"))
                    raise Timeout(f"{why.format(option('timeout'))}; {self._set_back()}") from e
                running = self._running()
            if running:
                self._abort(f"cronjob {self.ns}/{self.name} has unfinished child Jobs: {', '.join(running)}")
            self.r.step(f"verify ({attempt}): no active or unfinished child Job")
        self._update_step("verified")

    def _undo(self, why: str) -> None:
        """Set suspend back to the original value and clear our record; nothing was created."""
        self._end_hold()
        restore(self.c, RestoreOptions(cronjob=self.name, yes=True, expect_run_id=self.run_id,
                                       expect_original=self.original_suspend,
                                       check_children=False, outcome="aborted"), self.clock, self.r)
        self.record["restored_at"] = self._now()
        self._step_local("aborted", why)

    def _set_back(self) -> str:
        """What a run stopped after its suspend changed and set back, exactly (after :meth:`_undo`)."""
        at, back = self.record.get("suspended_at", "?"), self.record.get("restored_at", "?")
        kept = f"(the run's account kept in {model.ANN_RUNS} and in Events on the CronJob)"
        if self.original_suspend:  # suspend was true already: only the run record came and went
            return (f"cronctl wrote its run record on cronjob {self.ns}/{self.name} at {at} (it was suspended "
                    f"already) and removed it at {back}, suspend set back to true {kept}; nothing else changed, "
                    f"nothing created")
        return (f"cronctl suspended cronjob {self.ns}/{self.name} at {at} and set suspend back to false at "
                f"{back} {kept}; nothing else changed, nothing created")

    def _abort(self, why: str, hint: str | None = None) -> None:
        hint = WAIT_ACTIVE_HINT if hint is None else hint
        self._undo(why)
        raise Refused(f"{why}; {self._set_back()}", hint=hint)

    # -- 5. create --------------------------------------------------------------------------------
    def create(self) -> Obj:
        if self.occurrence is not None:
            # again right before creating: the controller (before the suspend) or a person may
            # have made a Job for this instant since the preflight check
            found = self._standing(self.c.list_jobs()[0])
            if found:
                tz = self.slot.time_zone if self.slot else None
                self._abort(f"{describe_job(found[0])} appeared for {show(self.occurrence, tz)} since the preflight "
                            f"check", hint=f"that occurrence has run (or runs) already; see cronctl status "
                                           f"{self.name} -n {self.ns}")
        body = self.build_job()
        try:
            job = self.c.create_job(body)
        except Conflict:
            self._abort(f"job {self.ns}/{self.job_name} appeared since the preflight check",
                        hint="someone created it meanwhile; see cronctl status")
            raise  # pragma: no cover (abort raises)
        except CronctlError as e:
            # Refused by the API (admission, quota, validation). If it really was not created,
            # put suspend back: the run changed nothing. If we cannot tell, leave it suspended.
            if self.c.get_job(self.job_name) is None:
                self._undo(f"the API server refused the Job: {e.message}")
                e.message = f"{e.message}; {self._set_back()}"
                e.args = (e.message,)
            raise
        self.record["job"] = {"name": self.job_name, "uid": model.meta(job).get("uid"),
                              "created": model.meta(job).get("creationTimestamp")}
        self.r.step(f"created Job {self.ns}/{self.job_name}")
        self._hook("job-made")
        self.audit.event(self.cj, "CronctlJobCreated", f"cronctl {self._who()}: created Job {self.job_name}")
        self._update_step("created", ride=True)  # the Job is in flight: an API restart is waited out
        return job

    # -- 6. wait ----------------------------------------------------------------------------------
    def wait(self, job: Obj, deadline: float) -> Obj | None:
        t0 = self.clock.monotonic()
        last: list[tuple[int, int, int]] = []

        def on_change(j: Obj) -> None:
            st = j.get("status") or {}
            key = (int(st.get("active") or 0), int(st.get("succeeded") or 0), int(st.get("failed") or 0))
            if not self.r.live and (not last or last[-1] != key):
                self.r.step(f"job {self.job_name}: active={key[0]} succeeded={key[1]} failed={key[2]} "
                            f"({human_duration(self.clock.monotonic() - t0)})")
            last.append(key)

        sampler = _ProgressSampler(self.c, job, self.clock, self.r, t0) if self.r.live else None
        if sampler:
            sampler.start()
        try:
            state = wait_for_jobs(self.c, {self.job_name}, deadline=deadline, clock=self.clock,
                                  on_change=on_change, stats=self.wait_stats, on_unreachable=self._unreachable)
        finally:
            if sampler:
                sampler.stop()
            self.r.progress_done()
        return state[self.job_name]

    # -- 7. logs ----------------------------------------------------------------------------------
    def save_logs(self, job: Obj) -> list[str]:
        """Save every pod's every container log (and previous instances); return the tail lines."""
        assert self.dir is not None
        uid = model.meta(job).get("uid")
        logs: list[dict[str, Any]] = []
        errors: list[str] = []
        tail: list[str] = []
        exits: list[dict[str, Any]] = []
        try:
            pods = self.c.list_pods(label_selector=f"batch.kubernetes.io/controller-uid={uid}")
        except CronctlError as e:
            self.record["log_errors"] = [f"cannot list pods: {e.message}"]
            return []
        pods.sort(key=lambda p: (str(model.meta(p).get("creationTimestamp", "")), model.name_of(p)))
        self.red.learn([job, *pods])
        masked: list[tuple[str, Any]] = [("job.json", self.red.kube_object(job)),
                                         ("pods.json", [self.red.kube_object(p) for p in pods])]
        for rel, data in masked:
            try:
                self.dir.write_json(rel, data)
            except OSError as e:
                errors.append(f"{rel}: not saved: {e.strerror or e}")
        for p in pods:
            pname = model.name_of(p)
            pspec = p.get("spec") or {}
            statuses = {s.get("name"): s for s in ((p.get("status") or {}).get("initContainerStatuses") or [])
                        + ((p.get("status") or {}).get("containerStatuses") or [])}
            for c in (pspec.get("initContainers") or []) + (pspec.get("containers") or []):
                cname = str(c.get("name"))
                term = ((statuses.get(cname) or {}).get("state") or {}).get("terminated") or {}
                if isinstance(term.get("exitCode"), int):
                    exits.append({"pod": pname, "container": cname, "exit_code": term["exitCode"],
                                  "reason": str(term.get("reason") or "")})
                restarts = int((statuses.get(cname) or {}).get("restartCount") or 0)
                for previous in ([True] if restarts else []) + [False]:
                    rel = f"logs/{pname}/{cname}{'.previous' if previous else ''}.log"
                    try:
                        text = self.red.text(self.c.read_pod_log(pname, cname, previous=previous))
                    except CronctlError as e:
                        errors.append(f"{pname}/{cname}{' (previous)' if previous else ''}: {e.message}")
                        continue
                    try:
                        self.dir.write_text(rel, text)
                    except OSError as oe:
                        errors.append(f"{pname}/{cname}{' (previous)' if previous else ''}: read but not "
                                      f"saved: {oe.strerror or oe}")
                        continue
                    logs.append({"pod": pname, "container": cname, "previous": previous, "file": rel,
                                 "bytes": len(text.encode())})
                    if not previous:  # every pod's last lines, not only the last pod's
                        tail += [f"[{pname}/{cname}] {ln}" for ln in text.splitlines()[-TAIL_LINES:]]
        self.record["logs"] = logs
        self.record["exit_codes"] = exits
        if errors:
            self.record["log_errors"] = errors
        self._save()
        self.r.step(f"logs: {len(logs)} file(s) saved under {self.dir.path / 'logs'}"
                    + (f"; {len(errors)} could not be read or saved" if errors else ""))
        for missing in errors:
            self.r.warn(f"missing from the run directory: {missing}")
        return tail[-TAIL_MAX:]

    def _failed_words(self) -> str:
        """The exit codes of the containers that failed, from the pods saved by :meth:`save_logs`."""
        bad = [e for e in self.record.get("exit_codes") or [] if e.get("exit_code")]
        shown = ", ".join(f"exit code {e['exit_code']}{' (' + e['reason'] + ')' if e.get('reason') else ''} in "
                          f"{e['pod']}/{e['container']}" for e in bad[-3:])
        return shown + (f" and {len(bad) - 3} more" if len(bad) > 3 else "")

    def failure_events(self) -> list[str]:
        try:
            evs = self.c.list_events(field_selector=f"involvedObject.name={self.job_name}")
        except CronctlError:
            return []
        return [f"{e.get('type')} {e.get('reason')}: {e.get('message')}" for e in evs if e.get("type") == "Warning"]

    # -- the whole run ---------------------------------------------------------------------------
    def run(self) -> RunResult:
        self.record = {"schema": "cronctl.dev/run-record/v1", "run_id": self.run_id, "cronjob": self.name,
                       "namespace": self.ns, "server": self.c.server_url(), "job_name": self.job_name,
                       "reason": self.o.reason,
                       "occurrence": rfc3339_z(self.o.occurrence) if self.o.occurrence else None,
                       "holder": self.o.holder, "started": self._now(), "dry_run": self.o.dry_run}
        self.preflight()
        self.record["operator"] = self.operator
        self.record["job_name"] = self.job_name
        self.record["reason"] = self.o.reason
        self.record["occurrence"] = rfc3339_z(self.occurrence) if self.occurrence else None
        if self.slot is not None:
            self.record["slot"] = self.slot.as_dict()
        elif self.occurrence is not None:
            self.record["ad_hoc_occurrence"] = True
        job = self.plan()
        if self.o.dry_run:
            self.record.update(outcome="dry-run", exit_code=int(ExitCode.OK), step="dry-run")
            self.record["api_requests"] = self.c.request_count - self.requests_at_start
            return RunResult(ExitCode.OK, "dry run: nothing was changed", self.record, job)
        self.confirm()
        deadline, nxt = self.open_run()
        try:
            self.verify(deadline)
            self._hook("verified")
            job = self.create()
            self._hook("created")
            final = self.wait(job, deadline)
        except KeyboardInterrupt:
            if "job" not in self.record:
                return self._stopped("interrupted", ExitCode.INTERRUPTED, "interrupted before the Job was created: "
                                     "the CronJob stays suspended and nothing else changed", nxt)
            self._save_logs_so_far()
            wait_cmd = f"cronctl wait {self.name} -n {self.ns}"
            return self._stopped("interrupted", ExitCode.INTERRUPTED,
                                 f"interrupted: stopped waiting; job {self.job_name} is still running and the CronJob "
                                 f"stays suspended; the logs so far are saved; `{wait_cmd}` follows it to its end "
                                 "and restores", [wait_cmd, *nxt])
        except WaitTimeout as e:
            j = e.state.get(self.job_name)
            if j is not None:
                self.save_logs(j)
            return self._stopped("timeout", ExitCode.TIMEOUT,
                                 f"{e.message} (--timeout {human_duration(self.o.timeout)}); the CronJob stays "
                                 f"suspended", nxt)
        except CronctlError as e:
            if self.record.get("step") == "aborted":
                raise  # verification stopped the run and already set suspend back
            # An API failure mid-run: leave it suspended, say so locally, point at status/restore.
            self.record.update(outcome="error", error=e.message, next_commands=nxt, exit_code=int(e.exit_code))
            self._step_local("error", e.message)
            e.add_hint("the CronJob stays suspended; next: " + "; ".join(nxt))
            raise
        return self._conclude(final, deadline, nxt)

    def _conclude(self, final: Obj | None, deadline: float, nxt: list[str]) -> RunResult:
        """After the wait: logs, then on failure stay suspended; on success the slot is marked done,
        --catch-up all runs the slots that passed, and the restore follows."""
        self.record.setdefault("job", {"name": self.job_name}).update(self._job_times(final))
        outcome = model.job_outcome(final) if final is not None else "Deleted"
        tail = self.save_logs(final) if final is not None else []
        self._hook("finished")
        if outcome != "Complete":
            why = (f"job {self.job_name} failed" if outcome == "Failed" else f"job {self.job_name} was deleted")
            codes = self._failed_words()
            if codes:
                why += f" ({codes})"
            if self.dir is not None and self.record.get("logs"):
                why += f"; logs in {self.dir.path / 'logs'}"
            events = self.failure_events()
            if events:
                self.record["job_events"] = events
            try:
                self._update_step("failed", why)
            except CronctlError as e:
                self.r.warn(f"could not write step=failed on the CronJob: {e.message}")
            slot_note = ""
            if self.slot is not None:
                slot_note = f"; slot {self.slot.shown} is not done: lastScheduleTime was not set to it"
                self.record["last_schedule_time"] = {"patched": False, "why": f"{why}: the slot is not done"}
            retry = f"cronctl run-manual {self.name} -n {self.ns} --retry"
            return self._finish(RunResult(ExitCode.JOB_FAILED, f"{why}; the CronJob stays suspended{slot_note}; "
                                          f"`{retry}` runs it again (attempt {self.attempt + 1}) without "
                                          f"un-suspending in between", self.record, final, [retry, *nxt]),
                                "failed", tail, events)
        self.r.step(f"job {self.job_name} completed in {human_duration(self._job_seconds(final) or 0)}")
        slot_note = self._mark_slot_done() if self.slot is not None else ""
        manual = self.job_name
        if self.o.catch_up == "all":
            try:
                failed = self._catch_up_all(deadline, nxt)
            except KeyboardInterrupt:
                return self._stopped("interrupted", ExitCode.INTERRUPTED,
                                     f"interrupted while running the slots that passed (job {manual} had succeeded; "
                                     f"{len(self.done)} slot(s) done): the CronJob stays suspended", nxt)
            except WaitTimeout as e:
                return self._stopped("timeout", ExitCode.TIMEOUT,
                                     f"{e.message} (--timeout {human_duration(self.o.timeout)}) while running the "
                                     f"slots that passed (job {manual} had succeeded); the CronJob stays suspended",
                                     nxt)
            self.job_name = manual
            if failed is not None:
                return self._finish(failed, "failed", tail, [])
        declined = self._confirm_restore()
        if declined is not None:
            return self._finish(declined, "succeeded-not-restored", tail, [])
        self._end_hold()
        try:
            res = restore(self.c, RestoreOptions(cronjob=self.name, yes=True, expect_run_id=self.run_id,
                                                 expect_original=self.original_suspend,
                                                 catch_up="none" if self.o.catch_up == "all" else self.o.catch_up,
                                                 outcome="succeeded"),
                          self.clock, self.r)
        except CronctlError as e:
            # The Job succeeded but the restore could not be done (record changed, API down):
            # keep the evidence and say exactly what is left.
            self.record.update(outcome="succeeded-not-restored", error=e.message, exit_code=int(e.exit_code))
            self._step_local("restore-failed", e.message)
            return self._finish(RunResult(e.exit_code, f"job {self.job_name} succeeded but the restore failed: "
                                          f"{e.message}", self.record, final, nxt), "succeeded-not-restored",
                                tail, [])
        self.record["restored_at"] = self._now()
        self.record["prediction"] = res.get("prediction")
        slot_note += self._check_prediction(res.get("prediction"))
        self.record["restored_suspend"] = res.get("suspend")
        self.record["catch_up"] = {"mode": self.o.catch_up, "given_up": res.get("given_up", []),
                                   **({"ran": list(self.done)} if self.o.catch_up == "all" else {})}
        if self.done:
            slot_note += f"; {len(self.done)} slot(s) that passed meanwhile ran as their own Jobs"
        if self.suspended_mono is not None:
            held = self.clock.monotonic() - self.suspended_mono
            self.record["suspended_seconds"] = round(held, 3)
            js = self._job_seconds(final)
            if js is not None:
                self.record["suspended_beyond_job_seconds"] = round(held - js, 3)
        self._step_local("restored")
        self._hook("restored")
        return self._finish(RunResult(ExitCode.OK, f"job {self.job_name} succeeded{slot_note}; {res['message']}",
                                      self.record, final, []), "succeeded", tail, [])

    def _confirm_restore(self) -> RunResult | None:
        """On a terminal without --yes: when the restore would start a catch-up Job that the plan did
        not announce (the run took longer, a slot passed), ask again. Declined: the CronJob stays
        suspended with the record at step succeeded (exit 3); ``cronctl restore`` finishes later."""
        if self.o.yes or not self.o.interactive or self.o.catch_up != "latest" or self.announced is not False \
                or self.original_suspend:
            return None
        try:
            cj = self.c.get_cronjob(self.name)
            jobs, _ = self.c.list_jobs()
        except CronctlError:
            return None  # the restore reads again and says what it does
        pred = predict(cj, self.clock.now(), suspended=False, jobs=jobs)
        if not starts_catch_up(pred):
            return None
        self.record["unannounced_catch_up"] = pred.as_dict()
        if self.r.confirm(f"The restore would start what the plan did not announce: {pred.text}. Restore now "
                          f"(no: it stays suspended; `cronctl restore {self.name} -n {self.ns} --catch-up none` "
                          f"gives the slot up)?"):
            return None
        try:
            self._update_step("succeeded", "the restore was declined: it would start a catch-up the plan did not "
                                           "announce")
        except CronctlError as e:
            self.r.warn(f"could not write step=succeeded on the CronJob: {e.message}")
        return RunResult(ExitCode.REFUSED, f"job {self.job_name} succeeded; the restore was declined (it would "
                         f"start: {pred.text}): the CronJob stays suspended",
                         self.record, None, [f"cronctl restore {self.name} -n {self.ns}",
                                             f"cronctl restore {self.name} -n {self.ns} --catch-up none"])

    def _check_prediction(self, pred: dict[str, Any] | None) -> str:
        """After un-suspending: when the restore predicted a catch-up Job, watch (bounded) for the
        controller to create it and say whether it did (docs/BACKGROUND.md §4.6: check the new Jobs after restoring)."""
        if not pred or pred.get("decision") != "create" or not pred.get("job_name") or pred.get("suspended"):
            return ""
        name = str(pred["job_name"])
        until = self.clock.monotonic() + CHECK_AFTER_RESTORE
        seen: Obj | None = None
        while seen is None and self.clock.monotonic() < until:
            try:
                seen = self.c.get_job(name)
            except CronctlError:
                break
            if seen is None:
                self.clock.sleep(2)
        self.record["restore_check"] = {"expected_job": name, "seen": seen is not None,
                                        "created": model.meta(seen).get("creationTimestamp") if seen else None}
        if seen is not None:
            self.r.step(f"as predicted, the controller started the catch-up Job {name}")
            return f"; as predicted, the controller started {name}"
        self.r.warn(f"the catch-up Job {name} the restore predicted was not seen within "
                    f"{human_duration(CHECK_AFTER_RESTORE)}; see cronctl status {self.name} -n {self.ns}")
        return f"; the predicted catch-up Job {name} was NOT seen within {human_duration(CHECK_AFTER_RESTORE)}"

    def _save_logs_so_far(self) -> None:
        """After Ctrl-C: the logs the Job's pods have written so far (a second Ctrl-C skips them)."""
        try:
            job = self.c.get_job(self.job_name)
            if job is not None and self.dir is not None:
                self.save_logs(job)
        except (CronctlError, OSError, KeyboardInterrupt):
            pass

    def _mark_slot_done(self) -> str:
        """After success, before the restore: ``status.lastScheduleTime = T`` when T is later (guarded by
        resourceVersion), so the controller never wants T again. Returns a note for the result line;
        a failure here is recorded and warned about, and the restore still goes on (the Job's name
        already keeps the controller from running T twice)."""
        assert self.slot is not None
        t = rfc3339_z(self.slot.at)
        info: dict[str, Any] = {"patched": False, "slot": t}
        self.record["last_schedule_time"] = info
        if not self.can_patch_status:
            lp = last_schedule_plan(self.cj, self.slot)
            info["why"] = "no permission to patch cronjobs/status"
            if not lp.needed:
                info["why"] += f"; not needed: {lp.why}"
                self.r.step(f"lastScheduleTime left as it is: {info['why']}")
                self._save()
                return ""
            self.r.warn(f"lastScheduleTime not set to {self.slot.shown}: no permission to patch cronjobs/status; "
                        f"{self.without_patch}")
            self._save()
            return "; lastScheduleTime not set (no permission)"
        why = f"cronjob {self.ns}/{self.name} kept changing"
        try:
            cj = self.c.get_cronjob(self.name)
            for _ in range(5):
                lp = last_schedule_plan(cj, self.slot)
                info["previous"] = rfc3339_z(lp.current) if lp.current else None
                if not lp.patch:
                    info["why"] = lp.why
                    self.r.step(f"lastScheduleTime left as it is: {lp.why}")
                    self._save()
                    return ""
                try:
                    cj = self.c.patch_cronjob_status(self.name, {"status": {"lastScheduleTime": t}},
                                                     resource_version=rv(cj))
                except Conflict:
                    cj = self.c.get_cronjob(self.name)  # the controller wrote status meanwhile
                    continue
                self.cj = cj
                info.update(patched=True, why=lp.why, at=self._now(),
                            value=(cj.get("status") or {}).get("lastScheduleTime"))
                self.r.step(f"slot {self.slot.shown} recorded as run: {lp.why}")
                self.audit.event(cj, "CronctlSlotMarked", f"cronctl {self._who()}: status.lastScheduleTime set to "
                                 f"{t} (the slot was run by Job {self.job_name}): the controller will not run it again")
                self._save()
                return f"; lastScheduleTime set to {t}"
        except CronctlError as e:
            why = e.message
        info["why"] = f"the patch failed: {why}"
        self.r.warn(f"lastScheduleTime not set to {self.slot.shown}: {why}; the Job's name still keeps the "
                    f"controller from running the slot twice, but it may try to (see cronctl status)")
        self._save()
        return f"; lastScheduleTime NOT set ({why})"

    # -- --catch-up all: the slots that passed while suspended ----------------------------------
    def _run_group(self, group: list[datetime], deadline: float, nxt: list[str]) -> RunResult | None:
        """Create the Jobs of ``group`` (one, or --parallel of them), wait for all, mark each success
        done (oldest first). A failure stops the backfill: returns its result; None when all passed."""
        made: list[tuple[datetime, str]] = []
        job: Obj = {}
        for t in group:
            self._use_slot(t)
            n = len(self.done) + len(made) + 1
            self._update_step("verified", f"slot {n}/{len(self.todo)} next: {rfc3339_z(t)}")
            job = self.create()
            self._hook("created")
            made.append((t, self.job_name))
        if len(made) == 1:  # one at a time: run-manual's wait, with its progress
            states = {made[0][1]: self.wait(job, deadline)}
        else:
            self.r.step(f"waiting for {len(made)} Jobs: {', '.join(n for _, n in made)}")
            states = wait_for_jobs(self.c, {n for _, n in made}, deadline=deadline, clock=self.clock,
                                   stats=self.wait_stats, on_unreachable=self._unreachable)
        failures: list[str] = []
        for t, name in made:
            final = states.get(name)
            self._use_slot(t)
            outcome = model.job_outcome(final) if final is not None else "Deleted"
            if final is not None:
                self.save_logs(final)
            if outcome != "Complete":
                failures.append(f"slot {self.slot.shown if self.slot else rfc3339_z(t)}: job {name} "
                                f"{'failed' if outcome == 'Failed' else 'was deleted'}")
                self.record.setdefault("failed_slots", []).append(rfc3339_z(t))
                continue
            if failures:
                continue  # a newer slot than a failed one: done, but lastScheduleTime stays before the failure
            note = self._mark_slot_done()
            self.done.append(rfc3339_z(t))
            self.record["done"] = self.done
            self.r.step(f"slot {len(self.done)}/{len(self.todo)} {rfc3339_z(t)} done ({name}){note}")
            self._save()
            self._hook("slot-done")
        if not failures:
            return None
        why = "; ".join(failures)
        self._update_step("failed", f"{why}; {len(self.done)} of {len(self.todo)} slot(s) done")
        self.record.update(outcome="failed", failed_slot=self.record["failed_slots"][0], done=self.done,
                           exit_code=int(ExitCode.JOB_FAILED), next_commands=nxt)
        self._save()
        return RunResult(ExitCode.JOB_FAILED,
                         f"{why}; {len(self.done)} of {len(self.todo)} slot(s) done; the CronJob stays "
                         f"suspended. To go on: cronctl restore {self.name} -n {self.ns}, then "
                         f"{self._go_on_text()} (it skips the slots that have a Job, the failed one "
                         f"too: delete its Job on purpose to run it again)", self.record, None, nxt)

    def _lost_meanwhile(self) -> list[datetime]:
        """Slots that passed while this run held the CronJob suspended, have no Job and are not queued."""
        start = self.record.get("suspended_at")
        if not start:
            return []
        queued = set(self.record.get("slots") or [])
        out = [t for t in lost_while_held(self.cj, self.c.list_jobs()[0], parse_rfc3339(start), self.clock.now(),
                                          MAX_SLOTS) if rfc3339_z(t) not in queued]
        if out:
            self.r.step(f"--catch-up all: {len(out)} slot(s) passed while suspended: "
                        + ", ".join(rfc3339_z(t) for t in out))
            self.record.setdefault("slots", []).extend(rfc3339_z(t) for t in out)
            self.todo.extend(out)
        return out

    def _go_on_text(self) -> str:
        return f"cronctl backfill {self.name} -n {self.ns} --missed"

    def _use_slot(self, t: datetime) -> None:
        self.slot = resolve(self.cj, t, latest=False, now=self.clock.now())
        self.occurrence = self.slot.at
        self.job_name = self.slot.job_name

    def _catch_up_all(self, deadline: float, nxt: list[str]) -> RunResult | None:
        """``--catch-up all`` before the restore: every slot that passed while the CronJob was held
        runs as its own slot-named Job, oldest first, one at a time, until none is left (a slot that
        passes meanwhile joins the queue; bounded by --timeout). A failure stops the run (its result
        is returned); None when all passed. Nothing to do when the restore keeps it suspended."""
        if self.original_suspend:
            return None
        queue = self._lost_meanwhile()
        while queue:
            failed = self._run_group(queue[:1], deadline, nxt)
            if failed is not None:
                return failed
            queue = queue[1:] or self._lost_meanwhile()
        return None


    def _stopped(self, step: str, code: ExitCode, message: str, nxt: list[str]) -> RunResult:
        hold = self._end_hold()
        if hold:
            message = f"{message}; {hold}"
        try:
            self._update_step(step, message)
        except (CronctlError, KeyboardInterrupt) as e:
            self.r.warn(f"could not write step={step} on the CronJob: {getattr(e, 'message', e)}")
        self.record.update(outcome=step, exit_code=int(code), next_commands=nxt)
        if self.slot is not None:
            self.record["last_schedule_time"] = {"patched": False, "why": f"the run stopped ({step}): the slot "
                                                                           f"is not done"}
        self._save()
        return RunResult(code, message, self.record, None, nxt)

    def _finish(self, res: RunResult, outcome: str, tail: list[str], events: list[str]) -> RunResult:
        hold = self._end_hold()
        if hold:
            res.message = f"{res.message}; {hold}"
        self.record.update(outcome=outcome, exit_code=int(res.exit_code), finished=self._now(),
                           next_commands=res.next_commands, log_tail=tail)
        self._save()
        return res

    def masked(self, res: RunResult) -> RunResult:
        """``res`` as it may be shown and printed: record (``-o json``, log tail, events), message and
        Job (``--dry-run``) with every secret masked, as in the run directory."""
        return RunResult(res.exit_code, self.red.text(res.message), self.red.data(res.record),
                         self.red.kube_object(res.job) if res.job is not None else None, res.next_commands)

    @staticmethod
    def _job_times(job: Obj | None) -> dict[str, Any]:
        if job is None:
            return {"outcome": "Deleted"}
        st = job.get("status") or {}
        return {"started": st.get("startTime"), "completed": st.get("completionTime"),
                "outcome": model.job_outcome(job), "succeeded": st.get("succeeded", 0),
                "failed": st.get("failed", 0)}

    @staticmethod
    def _job_seconds(job: Obj | None) -> float | None:
        if job is None:
            return None
        s, e = model.started(job), model.finished_at(job)
        return (e - s).total_seconds() if s and e else None


class _ProgressSampler:
    """Live progress on a terminal: pods by phase and the last log line every few seconds.

    Runs beside the watch (which alone decides when the wait ends); only used when a person
    is looking, so scripted runs make no extra requests.
    """

    def __init__(self, cluster: Cluster, job: Obj, clock: Clock, reporter: Reporter, t0: float,
                 every: float = 3.0) -> None:
        self.c, self.job, self.clock, self.r, self.t0, self.every = cluster, job, clock, reporter, t0, every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="cronctl-progress", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _loop(self) -> None:
        uid = model.meta(self.job).get("uid")
        while not self._stop.is_set():
            last = ""
            pods: list[Obj] = []
            try:
                pods = self.c.list_pods(label_selector=f"batch.kubernetes.io/controller-uid={uid}")
                running = [p for p in pods if (p.get("status") or {}).get("phase") in ("Running", "Succeeded", "Failed")]
                if running:
                    p = max(running, key=lambda p: str(model.meta(p).get("creationTimestamp", "")))
                    cs = ((p.get("spec") or {}).get("containers") or [{}])[0].get("name", "")
                    text = self.c.read_pod_log(model.name_of(p), str(cs), tail_lines=1)
                    last = text.strip().splitlines()[-1] if text.strip() else ""
            except CronctlError:
                pass
            self.r.progress(Progress(elapsed=self.clock.monotonic() - self.t0, pods=model.pods_by_phase(pods),
                                     last_log=last[:200]))
            self._stop.wait(self.every)


def run_manual(cluster: Cluster, opts: RunOptions, clock: Clock, reporter: Reporter) -> RunResult:
    """Run the whole procedure. Refusals before the suspend raise (nothing changed); outcomes after
    it (success, Job failed, timeout, Ctrl-C) are returned with their exit code and the record."""
    run = _Run(cluster, opts, clock, reporter)
    try:
        return run.masked(run.run())
    finally:
        run._end_hold()


__all__ = ["PERMISSIONS", "RunOptions", "RunResult", "run_manual", "check_permissions", "Interrupted"]
