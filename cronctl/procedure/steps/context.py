"""The run's shared state (:class:`RunContext`) and the bookkeeping every step does with it: the
local record (``record.json``), the step written on the CronJob, the test hook, riding out an
unreachable API server while a Job is in flight."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeVar

from cronctl import gitops, model, names
from cronctl.cluster import Cluster, Obj
from cronctl.errors import Conflict, CronctlError, Refused
from cronctl.procedure.base import Audit, Clock, MaskingReporter, Reporter, RunDir, run_words, rv
from cronctl.procedure.guard import HoldGuard
from cronctl.procedure.slot import Slot
from cronctl.procedure.steps.options import RunOptions, RunResult
from cronctl.procedure.steps.run_document import RunDocument
from cronctl.procedure.wait import RETRY_EVERY, ride_out as ride_out_unreachable
from cronctl.redact import Redactor
from cronctl.timeutil import local_and_utc, rfc3339_z

T = TypeVar("T")


@dataclass(eq=False)
class RunContext:
    """One run's state, handed to every step: the cluster, the options, the clock, the (masking)
    reporter, the record and the audit. The steps are functions of it; none is a method here."""

    cluster: Cluster
    opts: RunOptions
    clock: Clock
    reporter: Reporter                            # masked in __post_init__: every line the run says
    red: Redactor = field(default_factory=Redactor)  # one for the whole run: run dir, record, log tail, -o json
    operator: str = "unknown"
    cj: Obj = field(default_factory=dict)
    original_suspend: bool = False
    dir: RunDir | None = None
    record: RunDocument = field(default_factory=lambda: RunDocument())
    suspended_mono: float | None = None
    write_failed: bool = False
    wait_stats: dict[str, int] = field(default_factory=dict)
    deadline: float | None = None                 # set at the suspend: bounds every wait
    unreachable_said: bool = False                # the ride-out warning is said once a run
    slot: Slot | None = None                      # set when it is a slot of the schedule
    can_patch_status: bool = True
    without_patch: str = ""                       # what the controller does if not patched
    todo: list[datetime] = field(default_factory=list)   # slots to run (backfill, --catch-up all)
    done: list[str] = field(default_factory=list)        # slots run and done (UTC), oldest first
    announced: bool | None = None                 # the plan foresaw a catch-up at the restore
    retry_of: model.RunRecord | None = None       # --retry: the failed run taken over
    attempt: int = 1
    seen: gitops.GitOps = field(default_factory=gitops.GitOps)   # who else writes spec.suspend (preflight)
    strategy: gitops.Strategy = field(default_factory=lambda: gitops.Strategy("plain", ""))  # the hold under them
    guard: HoldGuard | None = None                # watches the hold from the suspend on
    jobs_before: frozenset[str] = frozenset()     # uids of the Jobs the plan listed (before the suspend)
    go_on: str = ""                               # after a failed slot: what runs the rest (backfill's own)
    name: str = field(init=False)
    ns: str = field(init=False)
    job_name: str = field(init=False)
    run_id: str = field(init=False)
    requests_at_start: int = field(init=False)
    occurrence: datetime | None = field(init=False)   # the instant the run stands for
    audit: Audit = field(init=False)              # Events on the CronJob, one per change
    would_refuse: list[str] = field(default_factory=list)  # --dry-run: the refusals a real run would meet

    def __post_init__(self) -> None:
        self.reporter = MaskingReporter(self.reporter, self.red)
        self.name = self.opts.cronjob
        self.ns = self.cluster.namespace
        self.job_name = self.opts.job_name or names.manual_job_name(self.opts.cronjob, self.opts.run_name)
        self.run_id = self.opts.run_id or secrets.token_hex(4)
        self.requests_at_start = self.cluster.request_count
        self.occurrence = self.opts.occurrence
        self.audit = Audit(self.cluster, self.reporter, self.clock)
        self.go_on = self.go_on or f"cronctl backfill {self.name} -n {self.ns} --missed"

    @property
    def zone(self) -> str | None:
        """The zone the CronJob's schedule runs in (the view's :attr:`~cronctl.model.CronJobView.zone`:
        spec.timeZone, or a TZ= prefix), for the times shown to people."""
        return model.cronjob_view(self.cj).zone


def timestamp(ctx: RunContext) -> str:
    return rfc3339_z(ctx.clock.now())


def step_local(ctx: RunContext, step: str, note: str = "") -> None:
    ctx.record["step"] = step
    ctx.record.setdefault("steps", []).append({"step": step, "at": timestamp(ctx), **({"note": note} if note else {})})
    save(ctx)


def save(ctx: RunContext) -> None:
    # the run's own requests; the hold guard's reads are counted apart (record hold_guard.api_requests)
    ctx.record["api_requests"] = (ctx.cluster.request_count - ctx.requests_at_start
                                  - (ctx.guard.requests if ctx.guard is not None else 0))
    if ctx.wait_stats:
        ctx.record["watch"] = dict(ctx.wait_stats)
    if ctx.dir is not None:
        try:
            ctx.dir.write_json("record.json", ctx.red.data(ctx.record))
        except OSError as e:
            # Once the CronJob is suspended, a full or broken disk must not stop the run from
            # finishing and restoring: say it once; the record on the CronJob still holds the state.
            if not ctx.write_failed:
                ctx.reporter.warn(f"cannot write {ctx.dir.path / 'record.json'}: {e.strerror or e}; "
                                  f"the run goes on, but its local record is incomplete")
            ctx.write_failed = True


def who(ctx: RunContext) -> str:
    return run_words(ctx.run_id, ctx.operator, ctx.opts.reason,
                     rfc3339_z(ctx.occurrence) if ctx.occurrence else "")


def retry_note(ctx: RunContext) -> str:
    rec = ctx.retry_of
    return (f"attempt {ctx.attempt}: retry of run {rec.run_id} (job {rec.job_name} failed)"
            if rec is not None else "")


def hook(ctx: RunContext, step: str) -> None:
    if ctx.opts.after_step is not None:
        ctx.opts.after_step(step)


def unreachable(ctx: RunContext, e: CronctlError) -> None:
    """Said once a run, when a request made while its Job is in flight finds the API server
    unreachable: the run waits instead of ending with the CronJob suspended and the Job running."""
    if ctx.unreachable_said or ctx.deadline is None:
        return
    ctx.unreachable_said = True
    until = ctx.clock.now() + timedelta(seconds=max(0.0, ctx.deadline - ctx.clock.monotonic()))
    ctx.reporter.warn(f"{e.message}; the Job is in flight, so cronctl tries again every {RETRY_EVERY:g}s until the "
                      f"run's deadline ({local_and_utc(until.replace(microsecond=0), ctx.zone)}); Ctrl-C stops waiting")


def ride_out(ctx: RunContext, call: Callable[[], T]) -> T:
    """``call()``, riding out an unreachable API server until the run's deadline (once the run
    has one: from the suspend on); without a deadline, one attempt."""
    if ctx.deadline is None:
        return call()
    return ride_out_unreachable(call, deadline=ctx.deadline, clock=ctx.clock, stats=ctx.wait_stats,
                                on_unreachable=lambda e: unreachable(ctx, e))


def update_step(ctx: RunContext, step: str, note: str = "", *, ride: bool = False) -> None:
    """Write the step into the record on the CronJob (guarded; only while the record is ours).
    ``ride``: while a Job is in flight, an API server restart is ridden out until the run's
    deadline (:func:`ride_out`); otherwise one attempt per write."""
    cj = ctx.cj
    call: Callable[[Callable[[], Obj]], Obj] = (lambda f: ride_out(ctx, f)) if ride else (lambda f: f())
    for _ in range(5):
        rec = model.read_record(cj)
        if rec is None or rec.run_id != ctx.run_id:
            raise Refused(f"the run record on cronjob {ctx.ns}/{ctx.name} was removed or replaced "
                          f"by someone else (now: {rec.run_id if rec else 'none'}); stopping here")
        patch = {"metadata": {"annotations": {model.ANN_STEP: step, model.ANN_UPDATED: timestamp(ctx),
                                              model.ANN_NOTE: note}}}
        try:
            ctx.cj = call(lambda: ctx.cluster.patch_cronjob(ctx.name, patch, resource_version=rv(cj)))
            step_local(ctx, step, note)
            return
        except Conflict:
            # a competing write, or our own patch applied before a dropped answer: read again
            cj = call(lambda: ctx.cluster.get_cronjob(ctx.name))
    raise Conflict(f"cronjob {ctx.ns}/{ctx.name} kept changing; could not record step {step}")


def masked(ctx: RunContext, res: RunResult) -> RunResult:
    """``res`` as it may be shown and printed: record (``-o json``, log tail, events), message and
    Job (``--dry-run``) with every secret masked, as in the run directory."""
    return RunResult(res.exit_code, ctx.red.text(res.message), ctx.red.data(res.record),
                     ctx.red.kube_object(res.job) if res.job is not None else None, res.next_commands)


def job_times(job: Obj | None) -> dict[str, Any]:
    if job is None:
        return {"outcome": "Deleted"}
    st = job.get("status") or {}
    return {"started": st.get("startTime"), "completed": st.get("completionTime"),
            "outcome": model.job_outcome(job), "succeeded": st.get("succeeded", 0),
            "failed": st.get("failed", 0)}


def job_seconds(job: Obj | None) -> float | None:
    if job is None:
        return None
    s, e = model.started(job), model.finished_at(job)
    return (e - s).total_seconds() if s and e else None
