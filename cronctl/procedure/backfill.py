"""``cronctl backfill``: run lost slots, oldest first, each as the slot's own Job, under one lock
and one suspension.

The steps are run-manual's (:mod:`cronctl.procedure.run_manual`): preflight, plan, confirm,
suspend with a run record, verify (again after the settle), then for each slot T: a Job named
as the controller names T's Job, wait, logs, ``status.lastScheduleTime = T`` when T is later;
then the restore (``--catch-up latest|none``). A failed slot stops the run: the CronJob stays
suspended, the record says which slot; after ``cronctl restore``, the same backfill command runs
again from there (slots that have a Job are skipped, the failed one included: delete its Job on
purpose to run it again). A process killed at any step leaves the run record that ``status``
explains and ``restore`` finishes.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from cronctl import model
from cronctl.cluster import Cluster, Obj
from cronctl.errors import BadInput, CronctlError, ExitCode, option
from cronctl.procedure.base import Clock, Reporter
from cronctl.procedure.restore import RestoreOptions, restore
from cronctl.procedure.run_manual import MAX_SLOTS, RunOptions, RunResult, _Run
from cronctl.procedure.slot import lost_while_held, resolve, standing_for
from cronctl.procedure.wait import WaitTimeout
from cronctl.timeutil import human_duration, local_and_utc, parse_rfc3339, rfc3339_z


@dataclass
class BackfillOptions:
    cronjob: str
    missed: bool = False
    since: timedelta | None = None
    from_: datetime | None = None
    to: datetime | None = None
    slots: list[datetime] = field(default_factory=list)
    done_from: str | None = None
    max_age: timedelta = timedelta(days=7)
    parallel: int = 1              # Jobs at a time (more than 1 only with concurrencyPolicy Allow)
    run: RunOptions | None = None  # yes, interactive, dry_run, settle, timeout, run_dir, catch_up, ...

    def __post_init__(self) -> None:
        # refused before any request: more at a time than one backfill may run at all means nothing
        if self.parallel > MAX_PARALLEL:
            raise BadInput(f"bad {option('parallel')} {self.parallel}: at most {MAX_PARALLEL} Jobs at a time, the "
                           "slots one backfill may run (MAX_PARALLEL)")


#: ``--parallel``: at most the slots one backfill may run (MAX_SLOTS)
MAX_PARALLEL = MAX_SLOTS


def read_done(path: str) -> set[datetime]:
    """Slots the application's own ledger marks done: CSV with a ``scheduled_for`` column, or JSON
    lines with a ``scheduled_for`` key (RFC3339). BadInput naming the file and line otherwise."""
    from cronctl.manifest import read_text

    try:  # the one loader's reading: a regular file only (a FIFO would block), size-capped, UTF-8
        text = read_text(path)
    except BadInput as e:
        raise BadInput(f"cannot read {option('done_from')} {path}: {e.message.removeprefix(path + ': ')}") from e
    out: set[datetime] = set()
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if lines and lines[0].lstrip().startswith("{"):
        from cronctl.manifest import parse_json

        for i, ln in enumerate(lines, start=1):
            try:
                doc = parse_json(ln, source=f"{path}:{i}")  # the file readers' limits (nesting)
            except BadInput as e:
                raise BadInput(f"{e.message}: not a JSON object") from None
            if not isinstance(doc, dict):
                raise BadInput(f"{path}:{i}: not a JSON object")
            v = doc.get("scheduled_for")
            if not isinstance(v, str):
                raise BadInput(f"{path}:{i}: no scheduled_for string")
            out.add(parse_rfc3339(v, what=f"{path}:{i} scheduled_for"))
        return out
    reader = csv.DictReader(io.StringIO(text))
    if not reader.fieldnames or "scheduled_for" not in reader.fieldnames:
        raise BadInput(f"{path}: no scheduled_for column (CSV header or JSON lines expected)")
    for i, row in enumerate(reader, start=2):
        v = (row.get("scheduled_for") or "").strip()
        if v:
            out.add(parse_rfc3339(v, what=f"{path}:{i} scheduled_for"))
    return out


def choose_slots(cj: Obj, jobs: list[Obj], events: list[Obj], opts: BackfillOptions,
                 now: datetime) -> tuple[list[datetime], list[tuple[datetime, str]]]:
    """(slots to run, oldest first; slots skipped with why). Pure."""
    from cronctl.history import LOST, Options, slot_history

    ways = sum([opts.missed, opts.from_ is not None or opts.to is not None, bool(opts.slots)])
    if ways != 1:
        raise BadInput(f"give exactly one of {option('missed')}, {option('from_')}/{option('to')}, "
                       f"{option('slots')}")
    wanted: list[datetime] = []
    if opts.missed:
        since = now - opts.since if opts.since else None
        h = slot_history(cj, jobs, events, Options(now=now, since=since))
        if h["error"]:
            raise BadInput(f"the schedule cannot be judged: {h['error']}")
        wanted = [parse_rfc3339(r["slot"]) for r in h["slots"] if r["verdict"] in LOST]
    elif opts.slots:
        wanted = [resolve(cj, t, latest=False, now=now).at for t in opts.slots]
    else:
        if opts.from_ is None or opts.to is None:
            raise BadInput(f"{option('from_')} and {option('to')} go together")
        if opts.to < opts.from_:
            raise BadInput(f"{option('to')} is before {option('from_')}")
        from cronctl.procedure.slot import schedule_of

        sched = schedule_of(cj)[0]
        wanted = [t for t in sched.runs(opts.from_ - timedelta(seconds=1), MAX_SLOTS + 1)
                  if t <= min(opts.to, now)]
    done = read_done(opts.done_from) if opts.done_from else set()
    name = model.name_of(cj)
    run: list[datetime] = []
    skipped: list[tuple[datetime, str]] = []
    for t in sorted(set(wanted)):
        slot = resolve(cj, t, latest=False, now=now)
        standing = standing_for(cj, jobs, t, slot.job_name)
        if standing:
            skipped.append((t, f"{model.name_of(standing[0])} already stands for it "
                               f"({model.job_outcome(standing[0]) or 'running'})"))
        elif t in done:
            skipped.append((t, f"done according to {opts.done_from}"))
        elif now - t > opts.max_age:
            skipped.append((t, f"older than --max-age {human_duration(opts.max_age)}"))
        else:
            run.append(t)
    if len(run) > MAX_SLOTS:
        raise BadInput(f"{len(run)} slots to run for cronjob {name}: at most {MAX_SLOTS} per backfill; "
                       "narrow it with --since or --from/--to")
    return run, skipped


class _Backfill(_Run):
    """run-manual's steps, with one Job per slot between the suspend and the restore."""

    def __init__(self, cluster: Cluster, opts: BackfillOptions, clock: Clock, reporter: Reporter) -> None:
        ro = opts.run or RunOptions(cronjob=opts.cronjob)
        ro.cronjob = opts.cronjob
        super().__init__(cluster, ro, clock, reporter)
        self.b = opts
        self.skipped: list[tuple[datetime, str]] = []

    def run(self) -> RunResult:  # noqa: C901 - the steps in order, as run-manual's
        self.record = {"schema": "cronctl.dev/run-record/v1", "kind": "backfill", "run_id": self.run_id,
                       "cronjob": self.name, "namespace": self.ns, "server": self.c.server_url(),
                       "reason": self.o.reason, "holder": self.o.holder, "started": self._now(),
                       "dry_run": self.o.dry_run}
        self.cj = self.c.get_cronjob(self.name)
        policy = model.cronjob_view(self.cj).policy
        if self.b.parallel < 1:
            raise BadInput(f"bad {option('parallel')} {self.b.parallel}: must be 1 or more")
        if self.b.parallel > 1 and policy != "Allow":
            raise BadInput(f"{option('parallel')} {self.b.parallel} needs concurrencyPolicy Allow; cronjob {self.ns}/{self.name} "
                           f"has {policy}, which promises one run at a time: its slots run one after the other")
        mode = self.o.catch_up
        if mode == "all":
            self.o.catch_up = "none"  # the slots lost meanwhile are run here; then nothing is left to catch up
        now = self.clock.now()
        jobs, _ = self.c.list_jobs()
        events: list[Obj] = []
        if self.b.missed:
            try:
                events = self.c.list_events(
                    field_selector=f"involvedObject.kind=CronJob,involvedObject.name={self.name}")
            except CronctlError as e:
                self.r.warn(f"cannot read the CronJob's events ({e.message}); lost slots judged from the Jobs")
        self.todo, self.skipped = choose_slots(self.cj, jobs, events, self.b, now)
        for t, why in self.skipped:
            self.r.step(f"skip {local_and_utc(t, self.zone)}: {why}")
        self.record["slots"] = [rfc3339_z(t) for t in self.todo]
        self.record["skipped"] = [{"slot": rfc3339_z(t), "why": why} for t, why in self.skipped]
        if not self.todo:
            msg = f"nothing to backfill for cronjob {self.ns}/{self.name}" + (
                f" ({len(self.skipped)} slot(s) skipped)" if self.skipped else "")
            return RunResult(ExitCode.OK, msg, self.record)
        # preflight as a slot run of the first slot (permissions incl. cronjobs/status, the lock)
        self.o.occurrence = self.todo[0]
        self.preflight()
        self.record["operator"] = self.operator
        first = self.plan()
        self.r.show("backfill", [(local_and_utc(t, self.zone), f"{resolve(self.cj, t, latest=False, now=now).job_name}")
                                 for t in self.todo[:50]]
                    + ([("...", f"{len(self.todo) - 50} more")] if len(self.todo) > 50 else []))
        if self.o.dry_run:
            self.record.update(outcome="dry-run", exit_code=int(ExitCode.OK), step="dry-run")
            return RunResult(ExitCode.OK, f"dry run: {len(self.todo)} slot(s) would run, oldest first; nothing "
                             "was changed", self.record, first)
        self.confirm((f"Take over run record {self.o.takeover} (it keeps {self.ns}/{self.name} suspended)"
                      if self.o.takeover else f"Suspend {self.ns}/{self.name}")
                     + f" and run {len(self.todo)} slot(s), oldest first ({rfc3339_z(self.todo[0])} .. "
                       f"{rfc3339_z(self.todo[-1])})?")
        deadline, nxt = self.open_run()
        try:
            self.verify(deadline)
            self._hook("verified")
            queue = list(self.todo)
            while queue:
                group, queue = queue[:self.b.parallel], queue[self.b.parallel:]
                failed = self._run_group(group, deadline, nxt)
                if failed is not None:
                    return failed
                if not queue and mode == "all":
                    # --catch-up all: the slots that passed while this backfill held the CronJob
                    queue = self._lost_meanwhile()
        except KeyboardInterrupt:
            return self._stopped("interrupted", ExitCode.INTERRUPTED,
                                 f"interrupted after {len(self.done)} of {len(self.todo)} slot(s): the CronJob "
                                 "stays suspended", nxt)
        except WaitTimeout as e:
            return self._stopped("timeout", ExitCode.TIMEOUT,
                                 f"{e.message} (--timeout {human_duration(self.o.timeout)}) after {len(self.done)} "
                                 f"of {len(self.todo)} slot(s); the CronJob stays suspended", nxt)
        hold = self._end_hold()
        res = restore(self.c, RestoreOptions(cronjob=self.name, yes=True, expect_run_id=self.run_id,
                                             expect_original=self.original_suspend,
                                             catch_up=self.o.catch_up, outcome="succeeded"), self.clock, self.r)
        self.record.update(outcome="succeeded", restored_at=self._now(), prediction=res.get("prediction"),
                           catch_up={"mode": mode, "given_up": res.get("given_up", [])},
                           exit_code=int(ExitCode.OK))
        if self.suspended_mono is not None:  # how long the CronJob was held for the slots, as run-manual says
            self.record["suspended_seconds"] = round(self.clock.monotonic() - self.suspended_mono, 3)
        self._step_local("restored")
        return RunResult(ExitCode.OK, f"backfilled {len(self.done)} slot(s) of {self.ns}/{self.name}, oldest first; "
                         f"{res['message']}" + (f"; {hold}" if hold else ""), self.record, None, [])

    def _go_on_text(self) -> str:
        return "the same backfill again"


def backfill(cluster: Cluster, opts: BackfillOptions, clock: Clock, reporter: Reporter) -> RunResult:
    run = _Backfill(cluster, opts, clock, reporter)
    try:
        return run.masked(run.run())
    finally:
        run._end_hold()


def restore_all(cluster: Cluster, opts: RestoreOptions, run: RunOptions, clock: Clock,
                reporter: Reporter) -> RunResult | dict[str, object]:
    """``restore --catch-up all``: an interrupted run's record is taken over (its suspension and its
    original value, under a new run record, guarded by resourceVersion) and every slot that passed
    since it suspended the CronJob and has no Job runs as its own slot-named Job, oldest first, as
    backfill does; then the restore un-suspends with nothing left to catch up. Where there is nothing
    to run (no record, a record that keeps it suspended, a stale record, no lost slot), this is the
    plain restore (``--catch-up none``). Returns backfill's RunResult or restore's dict."""
    from cronctl.procedure.restore import judge_record

    cj = cluster.get_cronjob(opts.cronjob)
    rec = model.read_record(cj)
    plain = replace(opts, catch_up="none")
    if rec is None:
        return restore(cluster, plain, clock, reporter)
    target, stale = judge_record(cj, rec, opts)
    try:
        since = parse_rfc3339(rec.started, what="started") if rec.started else None
    except BadInput:
        since = None
    if stale:
        reporter.warn(f"--catch-up all: the stale record {rec.run_id} is cleared as it is (--force), nothing is "
                      f"run; the slots it lost stay lost: see cronctl history, then cronctl backfill --missed")
    if since is None and not target and not stale:
        reporter.warn(f"run record {rec.run_id} has no readable start time ({rec.started!r}): the slots it lost "
                      f"cannot be told; restoring with --catch-up none (see cronctl history, then backfill)")
    lost = (lost_while_held(cj, cluster.list_jobs()[0], since, clock.now(), MAX_SLOTS)
            if since and not target and not stale else [])
    if not lost:
        return restore(cluster, plain, clock, reporter)
    reporter.step(f"--catch-up all: {len(lost)} slot(s) passed since run {rec.run_id} suspended the CronJob "
                  f"({rec.started}) and have no Job: {', '.join(rfc3339_z(t) for t in lost[:10])}"
                  + (" ..." if len(lost) > 10 else ""))
    run = replace(run, cronjob=opts.cronjob, takeover=rec.run_id, catch_up="all", yes=opts.yes,
                  interactive=opts.interactive,
                  reason=run.reason or f"restore --catch-up all of run {rec.run_id}")
    return backfill(cluster, BackfillOptions(cronjob=opts.cronjob, slots=lost, run=run), clock, reporter)


__all__ = ["BackfillOptions", "backfill", "choose_slots", "read_done", "restore_all", "MAX_PARALLEL", "MAX_SLOTS"]
