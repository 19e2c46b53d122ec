"""``cronctl status``: a CronJob at a glance, and an explanation of any run record on it.

The service returns typed results (:class:`Status`, :class:`Overview`); ``cronctl.cli.status`` makes
the ``-o json`` document (and the text) of them, and masks it (cronctl.redact): run records, pauses
and past runs hold text anyone with patch wrote.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from cronctl import gitops, model
from cronctl.cluster import Cluster, Obj
from cronctl.procedure.base import server_version_if_needed
from cronctl.procedure.predict import Prediction, never_fires, next_runs, predict, schedule_words
from cronctl.slotrows import SlotRow, Window
from cronctl.timeutil import human_duration, rfc3339_z


@dataclass(frozen=True)
class JobLine:
    """One child Job as ``status`` lists it: its record, and what status says beside it."""

    record: model.JobRecord
    active_in_status: bool  # named in the CronJob's .status.active
    overlapping: bool  # in one of the overlap groups


@dataclass(frozen=True)
class Status:
    """Everything ``cronctl status CRONJOB`` shows, at ``now``. Unmasked: the CLI masks what it prints."""

    name: str  # as asked for
    namespace: str
    now: datetime
    view: model.CronJobView  # schedule, zone, policy, deadline, suspend, checkpoints, active
    schedule_words: str
    record: model.RunRecord | None
    record_unconfirmed: str | None  # why the record is not cronctl's (model.record_unconfirmed), or None
    explanation: str
    jobs: tuple[JobLine, ...]  # by creation, then name
    overlaps: tuple[model.OverlapGroup, ...]
    next_runs: tuple[datetime, ...]
    controller_next: Prediction  # as it is now
    after_restore: Prediction | None  # with the record's original suspend
    if_unsuspended: Prediction | None  # suspended by a pause or by someone else: un-suspended now
    recent_slots: tuple[SlotRow, ...]  # the latest rows of cronctl.history.slot_history
    pause: model.Pause | None
    past_runs: tuple[model.PastRun, ...]
    gitops: gitops.GitOps
    hold_reverted: str | None  # who set spec.suspend back under a hold or a pause


@dataclass(frozen=True)
class OverviewRun:
    """The run record of an overview row: where the run is, and whether its process is gone."""

    record: model.RunRecord
    stale: bool  # its holder's process is gone at an early step
    confirmed: bool
    words: str


@dataclass(frozen=True)
class OverviewRow:
    """One CronJob of ``cronctl status`` without a name (:func:`overview_row`)."""

    view: model.CronJobView
    schedule_words: str
    suspended_by: str | None
    run: OverviewRun | None
    last_job: model.JobRecord | None  # the newest child Job
    lost: int
    failed: int  # slots whose run failed (history's outcome), in the same window
    duplicate: int
    window: Window | None  # history's evidence window
    history_error: str | None
    next_run: datetime | None  # None while suspended
    gitops: gitops.GitOps
    hold_reverted: str | None


@dataclass(frozen=True)
class Overview:
    """``cronctl status`` without a name: one row per CronJob, and the lists it could not read."""

    now: datetime
    namespace: str | None  # None: every namespace
    rows: tuple[OverviewRow, ...]
    missing: tuple[str, ...]


def _t(d: datetime | None) -> str | None:
    return rfc3339_z(d) if d else None


def explain_record(cj: Obj, rec: model.RunRecord | None, manual: Obj | None, now: datetime,
                   children: list[Obj] | None = None) -> str:
    """One paragraph: what state a (possibly interrupted) manual run left, and what to do next.

    ``children`` (the CronJob's Jobs) lets it warn about a manual Job cronctl did not start that
    is running while the CronJob is not suspended: the incident of docs/BACKGROUND.md §4.4 in the making.
    """
    ns, name = model.meta(cj).get("namespace", ""), model.name_of(cj)
    restore = f"cronctl restore {name} -n {ns}"
    if rec is None:
        pause = model.read_pause(cj)
        if pause is not None and not model.is_suspended(cj):
            return (f"paused by {pause.by}, but NOT suspended: {model.hold_reverted(cj)}; the pause was undone "
                    f"and the controller schedules it (a GitOps controller puts Git's spec.suspend back: cronctl "
                    f"runbook gitops)")
        if model.is_suspended(cj):
            return ("suspended, with no cronctl run record: someone suspended it by other means; "
                    "cronctl restore will not guess its earlier value")
        loose = [model.name_of(j) for j in children or []
                 if model.origin(j) == "manual" and not model.is_finished(j)]
        if loose:
            return (f"not suspended while manual Job {', '.join(loose)} runs: it is not in .status.active, "
                    f"so concurrencyPolicy does not see it and scheduled Jobs can start beside it "
                    f"(a second run beside the scheduled one); use cronctl run-manual for manual runs")
        never = never_fires(cj)
        if never is not None:  # not "normally": nothing will ever start
            return f"not suspended, but {never}: the controller never starts a Job for it"
        return "not suspended and no manual run in progress: the controller schedules it normally"
    began = model.when(rec.started)  # a garbled timestamp must not stop status from explaining the rest
    age = f" ({human_duration(now - began)} ago)" if began is not None else ""
    head = (f"held by manual run {rec.run_id} of {rec.operator or 'unknown'}, started {rec.started}{age}, "
            f"last step '{rec.step}'" + (f" ({rec.note})" if rec.note else "")
            + f"; suspend was {str(rec.original_suspend).lower()} before it")
    reverted = "" if rec.original_suspend else model.hold_reverted(cj)
    if reverted:
        # the record is cronctl's, the hold is not: someone else (a GitOps controller) set it back
        head += (f". THE HOLD WAS REVERTED: {reverted}; the CronJob is NOT suspended although the run holds it, "
                 f"so the controller can start a scheduled Job beside the manual one")
    unconfirmed = model.record_unconfirmed(cj)
    if unconfirmed:
        head += (f". This record is UNCONFIRMED ({unconfirmed}): cronctl restore refuses it without --force; "
                 f"check with {rec.operator or 'its operator'} first")
    if manual is None:
        if rec.step in ("suspended", "verified", "aborted"):
            nxt = (f"the manual Job {rec.job_name} was never created; if the run's process is gone, "
                   f"`{restore}` sets suspend back to {str(rec.original_suspend).lower()}")
        elif rec.step in ("interrupted", "timeout", "error"):
            nxt = (f"the manual Job {rec.job_name} does not exist: the run stopped ({rec.step}) before creating it"
                   f" (the note says when) or it was deleted since; `{restore}` sets suspend back to "
                   f"{str(rec.original_suspend).lower()}")
        else:
            nxt = (f"the manual Job {rec.job_name} does not exist (deleted?); `{restore}` sets suspend back "
                   f"to {str(rec.original_suspend).lower()}")
    else:
        outcome = model.job_outcome(manual)
        if outcome is None:
            nxt = (f"the manual Job {rec.job_name} is still running; the CronJob must stay suspended until it "
                   f"ends; then `{restore}`")
        elif outcome == "Complete":
            nxt = (f"the manual Job {rec.job_name} completed at {_t(model.finished_at(manual))}; only the "
                   f"restore is left: `{restore}`")
        else:
            nxt = (f"the manual Job {rec.job_name} FAILED; check its logs (the run directory named in the note, "
                   f"or cronctl bundle {name} -n {ns}) and any partly applied work, then either "
                   f"`cronctl run-manual {name} -n {ns} --retry` (runs it again, still suspended) or `{restore}`")
    return head + ". " + nxt


def collect_status(cluster: Cluster, name: str, now: datetime,
                   ledger: tuple[str | None, str] | None = None) -> Status:
    """Everything ``cronctl status`` shows (:class:`Status`). ``ledger`` (URL or None for the
    default, the cluster's name in it): the latest slots are judged with what cronctl record kept too."""
    cj = cluster.get_cronjob(name)
    jobs, _ = cluster.list_jobs()
    children = [j for j in jobs if model.owned_by(j, cj)]
    children.sort(key=lambda j: (str(model.meta(j).get("creationTimestamp", "")), model.name_of(j)))
    rec = model.read_record(cj)
    view = model.cronjob_view(cj)
    manual = next((j for j in children if rec and model.name_of(j) == rec.job_name), None)
    suspended = model.is_suspended(cj)
    version = server_version_if_needed(cluster, jobs)
    pred_now = predict(cj, now, suspended=suspended, unsuspending=False, jobs=jobs, server_version=version)
    pred_restore = (predict(cj, now, suspended=rec.original_suspend, jobs=jobs, server_version=version)
                    if rec else None)
    # suspended by a pause or by someone else: what un-suspending now would start (resume, kubectl)
    pred_resume = (predict(cj, now, suspended=False, jobs=jobs, server_version=version)
                   if suspended and rec is None else None)
    records = [model.job_record(j, name, now) for j in children]
    groups = model.overlap_groups(records)  # a sweep: 2,000 hung Jobs are one group, not 1,999,000 pairs
    overlapping = {n for g in groups for n in g.names}
    return Status(
        name=name, namespace=cluster.namespace, now=now, view=view, schedule_words=schedule_words(cj),
        record=rec, record_unconfirmed=model.record_unconfirmed(cj) if rec else None,
        explanation=explain_record(cj, rec, manual, now, children),
        jobs=tuple(JobLine(r, active_in_status=r.name in view.active, overlapping=r.name in overlapping)
                   for r in records),
        overlaps=tuple(groups), next_runs=tuple(next_runs(cj, now, 5)),
        controller_next=pred_now, after_restore=pred_restore, if_unsuspended=pred_resume,
        recent_slots=tuple(_recent_slots(cluster, cj, jobs, now, ledger)), pause=model.read_pause(cj),
        past_runs=tuple(model.read_runs(cj)), gitops=gitops.detect(cj), hold_reverted=_hold_reverted(cj, rec))


def _hold_reverted(cj: Obj, rec: model.RunRecord | None) -> str | None:
    """Who set spec.suspend back under a run's hold or a pause (None when nothing holds it, or it holds)."""
    held = (rec is not None and not rec.original_suspend) or (rec is None and model.read_pause(cj) is not None)
    return (model.hold_reverted(cj) or None) if held else None


#: how many of the latest slots ``status`` shows (``cronctl history`` shows them all)
RECENT_SLOTS = 6


def _recent_slots(cluster: Cluster, cj: Obj, jobs: list[Obj], now: datetime,
                  ledger: tuple[str | None, str] | None = None) -> list[SlotRow]:
    """The latest slots with their verdicts (the same judgement as ``cronctl history``), from the
    CronJob's own events; without permission to list events they are judged from the Jobs alone.
    With ``ledger``, the Jobs and events cronctl record kept are added, and its suspend spans."""
    from cronctl.errors import ApiError, PermissionMissing
    from cronctl.history import Options, slot_history

    try:
        events = cluster.list_events(
            field_selector=f"involvedObject.kind=CronJob,involvedObject.name={model.name_of(cj)}")
    except (ApiError, PermissionMissing):
        events = []
    opts = Options(now=now)
    if ledger is not None:
        from cronctl.ledger.facts import merge
        from cronctl.ledger.store import evidence_for

        ev = evidence_for(ledger[0], ledger[1], namespace=cluster.namespace, name=model.name_of(cj),
                          since=now - timedelta(days=8), strict=True)
        jobs, events = merge(jobs, ev.jobs), merge(events, ev.events)
        opts = Options(now=now, suspensions=ev.suspensions)
    h = slot_history(cj, jobs, events, opts)
    recent = h["slots"][-RECENT_SLOTS:]
    if ledger is not None:  # each slot's effect, where cronctl claim wrote rows for namespace/name
        from cronctl.ledger.claimstore import with_effects

        wf = f"{cluster.namespace}/{model.name_of(cj)}"
        recent = with_effects(ledger[0], {wf: recent}, now)[wf]
    return recent


def overview_row(cj: Obj, jobs: list[Obj], events: list[Obj], now: datetime,
                 holder_alive: Callable[[str], bool | None] | None = None,
                 suspensions: Mapping[str, list[tuple[datetime, datetime | None, str]]] | None = None) -> OverviewRow:
    """One CronJob of ``cronctl status`` without a name: its schedule in words, zone, who
    suspended it (a run record, a pause, or unknown), a run in progress or a stale record, the
    last outcome, lost, failed and duplicate slots in the evidence window, the next run. Pure."""
    from cronctl.history import DUPLICATE, LOST, Options, slot_history

    view = model.cronjob_view(cj)
    rec = model.read_record(cj)
    pause = model.read_pause(cj)
    suspended = model.is_suspended(cj)
    by = None
    seen = gitops.detect(cj)
    reverted = _hold_reverted(cj, rec)
    if reverted:
        by = f"NO: hold reverted by {(gitops.reverted_by(cj) or gitops.SuspendOwner('unknown', '?', None)).manager}"
    if suspended:
        by = (f"run {rec.run_id} of {rec.operator or 'unknown'}" if rec else
              f"pause by {pause.by}" + (" (PAST ITS UNTIL)" if pause.overdue(now) else "") if pause else
              "unknown (not cronctl)")
    run = None
    if rec is not None:
        alive = holder_alive(rec.holder) if holder_alive and rec.holder else None
        stale = alive is False and rec.step in ("suspended", "verified", "created")
        unconfirmed = model.record_unconfirmed(cj)
        words = ((f"STALE record {rec.run_id} (step {rec.step}; its process {rec.holder} is gone): "
                  f"cronctl status {model.name_of(cj)} explains, restore finishes") if stale else
                 f"run {rec.run_id} at step {rec.step} since {rec.started}")
        if reverted:
            words = f"HOLD REVERTED under run {rec.run_id} ({reverted}): " + words
        if unconfirmed:
            words = (f"UNCONFIRMED record {rec.run_id} of {rec.operator or 'unknown'} ({unconfirmed}): "
                     f"restore refuses it without --force; " + words)
        run = OverviewRun(rec, stale=stale, confirmed=unconfirmed is None, words=words)
    children = sorted((j for j in jobs if model.owned_by(j, cj)),
                      key=lambda j: (str(model.meta(j).get("creationTimestamp", "")), model.name_of(j)))
    last = children[-1] if children else None
    h = slot_history(cj, children, events, Options(now=now, suspensions=suspensions or {}))
    lost = sum(h["counts"].get(v, 0) for v in LOST)
    dup = sum(h["counts"].get(v, 0) for v in DUPLICATE)
    failed = sum(1 for r in h["slots"] if r["outcome"] == "failed")
    runs = next_runs(cj, now, 1)
    return OverviewRow(
        view=view, schedule_words=schedule_words(cj), suspended_by=by, run=run,
        last_job=model.job_record(last, view.name, now) if last else None, lost=lost, failed=failed,
        duplicate=dup, window=h.get("window"), history_error=h.get("error"),
        next_run=runs[0] if runs and not suspended else None, gitops=seen, hold_reverted=reverted)


def collect_overview(cluster: Cluster, *, all_namespaces: bool, now: datetime,
                     holder_alive: Callable[[str], bool | None] | None = None,
                     ledger: tuple[str | None, str] | None = None) -> Overview:
    """``cronctl status`` without a name: one :func:`overview_row` per CronJob of the namespace (or
    of all), read namespace by namespace; ``missing`` names the lists the caller may not read.
    With ``ledger`` (URL or None for the default, the cluster's name in it) the Jobs and events
    cronctl record kept are judged too (the last 8 days, one read for the whole overview), and its
    exact suspend spans."""
    from cronctl.procedure.history import by_namespace, list_cronjobs

    missing: list[str] = []
    rows: list[OverviewRow] = []
    kept_jobs: dict[str, list[Obj]] = {}
    kept_events: dict[str, list[Obj]] = {}
    suspensions: dict[str, list[tuple[datetime, datetime | None, str]]] = {}
    if ledger is not None:
        from cronctl.ledger.store import evidence_for

        ev = evidence_for(ledger[0], ledger[1], namespace=None if all_namespaces else cluster.namespace, name=None,
                          since=now - timedelta(days=8), strict=True)
        for o in ev.jobs:
            kept_jobs.setdefault(str(model.meta(o).get("namespace") or ""), []).append(o)
        for o in ev.events:
            kept_events.setdefault(str(model.meta(o).get("namespace") or ""), []).append(o)
        suspensions = ev.suspensions
    for ns, cjs, jobs, events in by_namespace(cluster, list_cronjobs(cluster, all_namespaces=all_namespaces),
                                              missing):
        if ledger is not None:
            from cronctl.ledger.facts import merge

            jobs, events = merge(jobs, kept_jobs.get(ns, [])), merge(events, kept_events.get(ns, []))
        rows += [overview_row(cj, jobs, events, now, holder_alive, suspensions)
                 for cj in sorted(cjs, key=model.name_of)]
    return Overview(now=now, namespace=None if all_namespaces else cluster.namespace, rows=tuple(rows),
                    missing=tuple(missing))
