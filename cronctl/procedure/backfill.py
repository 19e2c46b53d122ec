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
import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from cronctl import model
from cronctl.cluster import Cluster, Obj
from cronctl.errors import BadInput, CronctlError, ExitCode
from cronctl.procedure.base import Clock, Reporter
from cronctl.procedure.restore import RestoreOptions, restore
from cronctl.procedure.run_manual import RunOptions, RunResult, _Run
from cronctl.procedure.slot import resolve, standing_for
from cronctl.procedure.wait import WaitTimeout, wait_for_jobs
from cronctl.timeutil import human_duration, parse_rfc3339, rfc3339_z

MAX_SLOTS = 500  # one backfill runs at most this many slots (a larger one is several runs)


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


def read_done(path: str) -> set[datetime]:
    """Slots the application's own ledger marks done: CSV with a ``scheduled_for`` column, or JSON
    lines with a ``scheduled_for`` key (RFC3339). BadInput naming the file and line otherwise."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise BadInput(f"cannot read --done-from {path}: {e.strerror or e}") from e
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
        raise BadInput("give exactly one of --missed, --from/--to, --slot")
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
            raise BadInput("--from and --to go together")
        if opts.to < opts.from_:
            raise BadInput("--to is before --from")
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
        self.todo: list[datetime] = []
        self.skipped: list[tuple[datetime, str]] = []
        self.done: list[str] = []

    def _use_slot(self, t: datetime) -> None:
        self.slot = resolve(self.cj, t, latest=False, now=self.clock.now())
        self.occurrence = self.slot.at
        self.job_name = self.slot.job_name

    def run(self) -> RunResult:  # noqa: C901 - the steps in order, as run-manual's
        self.record = {"schema": "cronctl.dev/run-record/v1", "kind": "backfill", "run_id": self.run_id,
                       "cronjob": self.name, "namespace": self.ns, "server": self.c.server_url(),
                       "reason": self.o.reason, "holder": self.o.holder, "started": self._now(),
                       "dry_run": self.o.dry_run}
        self.cj = self.c.get_cronjob(self.name)
        policy = str((self.cj.get("spec") or {}).get("concurrencyPolicy") or "Allow")
        if self.b.parallel < 1:
            raise BadInput(f"bad --parallel {self.b.parallel}: must be 1 or more")
        if self.b.parallel > 1 and policy != "Allow":
            raise BadInput(f"--parallel {self.b.parallel} needs concurrencyPolicy Allow; cronjob {self.ns}/{self.name} "
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
            self.r.step(f"skip {rfc3339_z(t)}: {why}")
        self.record["slots"] = [rfc3339_z(t) for t in self.todo]
        self.record["skipped"] = [{"slot": rfc3339_z(t), "why": why} for t, why in self.skipped]
        if not self.todo:
            msg = f"nothing to backfill for cronjob {self.ns}/{self.name}" + (
                f" ({len(self.skipped)} slot(s) skipped)" if self.skipped else "")
            self.r.step(msg)
            return RunResult(ExitCode.OK, msg, self.record)
        # preflight as a slot run of the first slot (permissions incl. cronjobs/status, the lock)
        self.o.occurrence = self.todo[0]
        self.preflight()
        self.record["operator"] = self.operator
        first = self.plan()
        self.r.show("backfill", [(rfc3339_z(t), f"{resolve(self.cj, t, latest=False, now=now).job_name}")
                                 for t in self.todo[:50]]
                    + ([("...", f"{len(self.todo) - 50} more")] if len(self.todo) > 50 else []))
        if self.o.dry_run:
            self.record.update(outcome="dry-run", exit_code=int(ExitCode.OK), step="dry-run")
            return RunResult(ExitCode.OK, f"dry run: {len(self.todo)} slot(s) would run, oldest first; nothing "
                             "was changed", self.record, first)
        self.confirm(f"Suspend {self.ns}/{self.name} and run {len(self.todo)} slot(s), oldest first "
                     f"({rfc3339_z(self.todo[0])} .. {rfc3339_z(self.todo[-1])})?")
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
                    self.todo.extend(queue)
        except KeyboardInterrupt:
            return self._stopped("interrupted", ExitCode.INTERRUPTED,
                                 f"interrupted after {len(self.done)} of {len(self.todo)} slot(s): the CronJob "
                                 "stays suspended", nxt)
        except WaitTimeout as e:
            return self._stopped("timeout", ExitCode.TIMEOUT,
                                 f"{e.message} (--timeout {human_duration(self.o.timeout)}) after {len(self.done)} "
                                 f"of {len(self.todo)} slot(s); the CronJob stays suspended", nxt)
        res = restore(self.c, RestoreOptions(cronjob=self.name, yes=True, expect_run_id=self.run_id,
                                             catch_up=self.o.catch_up), self.clock, self.r)
        self.record.update(outcome="succeeded", restored_at=self._now(), prediction=res.get("prediction"),
                           catch_up={"mode": mode, "given_up": res.get("given_up", [])},
                           exit_code=int(ExitCode.OK))
        self._step_local("restored")
        return RunResult(ExitCode.OK, f"backfilled {len(self.done)} slot(s) of {self.ns}/{self.name}, oldest first; "
                         f"{res['message']}", self.record, None, [])


    def _run_group(self, group: list[datetime], deadline: float, nxt: list[str]) -> RunResult | None:
        """Create the Jobs of ``group`` (one, or --parallel of them), wait for all, mark each success
        done (oldest first). A failure stops the backfill: returns its result; None when all passed."""
        made: list[tuple[datetime, str]] = []
        job: Obj = {}
        for t in group:
            self._use_slot(t)
            n = len(self.done) + len(made) + 1
            self._update_step("verified", f"backfill: slot {n}/{len(self.todo)} next: {rfc3339_z(t)}")
            job = self.create()
            self._hook("created")
            made.append((t, self.job_name))
        if len(made) == 1:  # one at a time: run-manual's wait, with its progress
            states = {made[0][1]: self.wait(job, deadline)}
        else:
            self.r.step(f"waiting for {len(made)} Jobs: {', '.join(n for _, n in made)}")
            states = wait_for_jobs(self.c, {n for _, n in made}, deadline=deadline, clock=self.clock,
                                   stats=self.wait_stats)
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
                         f"suspended. To go on: cronctl restore {self.name} -n {self.ns}, then the "
                         f"same backfill again (it skips the slots that have a Job, the failed one "
                         f"too: delete its Job on purpose to run it again)", self.record, None, nxt)

    def _lost_meanwhile(self) -> list[datetime]:
        """Slots that passed while this backfill held the CronJob suspended and have no Job."""
        start = self.record.get("suspended_at")
        if not start:
            return []
        from cronctl.procedure.slot import schedule_of

        now = self.clock.now()
        sched = schedule_of(self.cj)[0]
        jobs, _ = self.c.list_jobs()
        out = []
        for t in sched.runs(parse_rfc3339(start) - timedelta(seconds=1), MAX_SLOTS):
            if t > now:
                break
            slot = resolve(self.cj, t, latest=False, now=now)
            if not standing_for(self.cj, jobs, t, slot.job_name) and rfc3339_z(t) not in self.record["slots"]:
                out.append(t)
        if out:
            self.r.step(f"--catch-up all: {len(out)} slot(s) passed during the backfill: "
                        + ", ".join(rfc3339_z(t) for t in out))
            self.record["slots"] += [rfc3339_z(t) for t in out]
        return out


def backfill(cluster: Cluster, opts: BackfillOptions, clock: Clock, reporter: Reporter) -> RunResult:
    return _Backfill(cluster, opts, clock, reporter).run()


__all__ = ["BackfillOptions", "backfill", "choose_slots", "read_done", "MAX_SLOTS"]
