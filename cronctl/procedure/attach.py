"""``cronctl wait CRONJOB``: re-attach to a manual run whose process stopped following it
(Ctrl-C, a closed terminal, a killed process), and finish it as run-manual would have.

The run record on the CronJob names the run and its Job. ``wait`` follows that Job to its end
with run-manual's own wait (watch, one deadline, live progress), saves every pod's logs into a
run directory of its own, and then does run-manual's end: after a failure the CronJob stays
suspended and the record says so; after success the slot (if the Job stands for one) is marked
done, ``--catch-up all`` runs the slots that passed, and the restore follows under the run's own
record (``expect_run_id``), so a second finisher is refused, never a double restore.

Refused (exit 3, nothing changed): no run record; the run's Job was never created or is gone
(``cronctl restore`` is what is left). Ctrl-C or ``--timeout`` while waiting saves the logs read so
far and says that the Job is still running; the record on the CronJob is left as it was.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Callable

from cronctl import model
from cronctl.cluster import Cluster, Obj
from cronctl.errors import CronctlError, ExitCode, Refused
from cronctl.procedure.base import Clock, Reporter, RunDir, next_commands
from cronctl.procedure.run_manual import RunOptions, RunResult, _Run
from cronctl.procedure.slot import resolve
from cronctl.procedure.wait import WaitTimeout
from cronctl.timeutil import human_duration, rfc3339_z


@dataclass
class AttachOptions:
    cronjob: str
    timeout: float = 3600.0
    run_dir: str | None = None
    catch_up: str = "latest"
    holder: str = ""
    #: ``holder -> True/False/None`` (alive / dead / cannot tell); given by the CLI.
    holder_alive: Callable[[str], bool | None] | None = None


class _Attach(_Run):
    def __init__(self, cluster: Cluster, opts: AttachOptions, clock: Clock, reporter: Reporter) -> None:
        super().__init__(cluster, RunOptions(cronjob=opts.cronjob, timeout=opts.timeout, run_dir=opts.run_dir,
                                             catch_up=opts.catch_up, holder=opts.holder, yes=True), clock, reporter)
        self.a = opts

    def attach(self) -> RunResult:
        self.cj = self.c.get_cronjob(self.name)
        rec = model.read_record(self.cj)
        restore_cmd = f"cronctl restore {self.name} -n {self.ns}"
        if rec is None:
            raise Refused(f"no cronctl run holds cronjob {self.ns}/{self.name}: nothing to wait for",
                          hint=f"cronctl status {self.name} -n {self.ns}")
        unconfirmed = model.record_unconfirmed(self.cj)
        if unconfirmed:  # a record is not a credential: wait would restore what it says, unasked
            raise Refused(f"run record {rec.run_id} on cronjob {self.ns}/{self.name} cannot be confirmed as "
                          f"cronctl's: {unconfirmed}; cronctl wait does not finish it, nothing changed",
                          hint=f"cronctl status {self.name} -n {self.ns} shows it; {restore_cmd} --force "
                               "restores it on purpose")
        self.run_id, self.job_name = rec.run_id, rec.job_name
        self.original_suspend, self.operator = rec.original_suspend, rec.operator or "unknown"
        job = self.c.get_job(rec.job_name)
        if job is None:
            never = rec.step in ("suspended", "verified", "aborted")
            raise Refused(f"run {rec.run_id}'s Job {self.ns}/{rec.job_name} "
                          + ("was never created" if never else "does not exist (deleted?)")
                          + "; nothing to wait for", hint=f"what is left is the restore: {restore_cmd}")
        if self.a.holder_alive is not None and rec.holder and self.a.holder_alive(rec.holder):
            self.r.warn(f"the run's own process {rec.holder} is still alive on this host and follows the Job too; "
                        "whichever finishes first restores, the other is refused")
        self._use_job_slot(job)
        self.record = {"schema": "cronctl.dev/run-record/v1", "kind": "wait", "run_id": rec.run_id,
                       "cronjob": self.name, "namespace": self.ns, "server": self.c.server_url(),
                       "job_name": rec.job_name, "operator": rec.operator, "reason": rec.reason,
                       "occurrence": rfc3339_z(self.occurrence) if self.occurrence else None,
                       "holder": self.o.holder, "started": rec.started, "attached": self._now(),
                       "original_suspend": rec.original_suspend, "suspended_at": rec.started,
                       "job": {"name": rec.job_name, "uid": model.meta(job).get("uid"),
                               "created": model.meta(job).get("creationTimestamp")}}
        self.dir = RunDir.create(self.o.run_dir, self.name, f"{rec.run_id}-wait-{secrets.token_hex(2)}")
        self.record["run_dir"] = str(self.dir.path)
        self._save()
        outcome = model.job_outcome(job)
        self.r.step(f"attached to run {rec.run_id} of {rec.operator or 'unknown'} (step {rec.step}): Job "
                    f"{rec.job_name} " + (f"already ended ({outcome})" if outcome else "is still running"))
        deadline = self.clock.monotonic() + self.o.timeout
        self.deadline = deadline  # an API server restart while following the Job is ridden out until it
        if not model.is_suspended(self.cj) and not rec.original_suspend:
            self.r.warn(f"cronjob {self.ns}/{self.name} is not suspended although run {rec.run_id} holds it: "
                        + model.hold_reverted(self.cj))
        self._start_guard()  # the hold is watched again while this process follows the Job
        nxt = next_commands(self.name, self.ns)
        final: Obj | None = job
        if outcome is None:
            try:
                final = self.wait(job, deadline)
            except (KeyboardInterrupt, WaitTimeout) as e:
                return self._detached(e)
        return self._conclude(final, deadline, nxt)

    def _use_job_slot(self, job: Obj) -> None:
        """The instant the Job stands for, and the slot when it is one (run-manual --occurrence T)."""
        self.occurrence = model.occurrence(job) or None
        at = model.scheduled_for(job)
        if at is None:
            return
        try:
            self.slot = resolve(self.cj, at, latest=False, now=self.clock.now())
        except CronctlError:
            return
        self.occurrence = self.slot.at
        ok, _why = self.c.can_i("patch", "cronjobs", group="batch", subresource="status", name=self.name)
        self.can_patch_status = ok

    def _detached(self, e: BaseException) -> RunResult:
        """Ctrl-C or the timeout while waiting: save the logs so far; the Job runs on; nothing changes."""
        self._save_logs_so_far()
        timeout = isinstance(e, WaitTimeout)
        code = ExitCode.TIMEOUT if timeout else ExitCode.INTERRUPTED
        msg = ((f"{getattr(e, 'message', e)} (--timeout {human_duration(self.o.timeout)})" if timeout else "interrupted")
               + f": stopped waiting; job {self.job_name} is still running and the CronJob stays suspended "
                 f"under run {self.run_id}; the logs so far are in {self.dir.path if self.dir else '?'}; "
                 f"cronctl wait {self.name} -n {self.ns} follows it again")
        self.record.update(outcome="detached", exit_code=int(code))
        self._save()
        return RunResult(code, msg, self.record, None, [f"cronctl wait {self.name} -n {self.ns}",
                                                       *next_commands(self.name, self.ns)])


def attach(cluster: Cluster, opts: AttachOptions, clock: Clock, reporter: Reporter) -> RunResult:
    """Follow the run that holds the CronJob to its end and finish it (see the module text)."""
    run = _Attach(cluster, opts, clock, reporter)
    try:
        return run.attach()
    finally:
        run._end_hold()


__all__ = ["AttachOptions", "attach"]
