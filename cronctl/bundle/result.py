"""What the incident bundle found, as typed results. PURE (dataclasses only).

:func:`cronctl.bundle.analyse.analyse` returns one :class:`CronJobAnalysis` per CronJob, and
:func:`cronctl.bundle.assemble.build_bundle` wraps them in a :class:`BundleResult`. Nothing here is
JSON: times are datetimes (or, where the judgement of :mod:`cronctl.history` hands them over as its
rows' RFC3339 text, that text), and :mod:`cronctl.bundle.document` alone makes bundle.json of them.

Some parts are still the dict rows of the modules that make them (an Event of
:func:`cronctl.events.events_for`, an unexpected Job of :func:`cronctl.events.unexpected_jobs`, the
source of lastSuccessfulTime of :func:`cronctl.history.last_success_source`, a lint finding): they
are typed :data:`Row` here and put into the document as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from cronctl import model
from cronctl.events import EventRecord, GoneJob
from cronctl.gitops import GitOps
from cronctl.history import LOST, VERDICTS
from cronctl.schedule.controller import Decision

#: a record another module makes as a dict today (an Event, an unexpected Job, a lint finding)
Row = dict[str, Any]


@dataclass(frozen=True)
class ScheduleFindings:
    """The schedule from the engine: what the controller decides now (and, suspended, what
    un-suspending now would start), the times due since its checkpoint, the next runs."""

    zone: str  # the zone the schedule runs in ("UTC" when it cannot be parsed)
    zone_from_prefix: bool
    error: str | None  # why the controller model says nothing (a bad field or schedule)
    base: datetime  # lastScheduleTime, else the creation time
    base_source: str
    now: datetime
    due: tuple[datetime, ...]
    due_truncated: bool
    next_runs: tuple[datetime, ...]
    decision: Decision | None
    if_unsuspended: Decision | None  # a suspended CronJob only


@dataclass(frozen=True)
class Active:
    """``.status.active`` against the children that have not finished."""

    from_status: tuple[str, ...]
    unfinished_children: tuple[str, ...]

    @property
    def not_in_status(self) -> tuple[str, ...]:
        return tuple(n for n in self.unfinished_children if n not in self.from_status)

    @property
    def stale_in_status(self) -> tuple[str, ...]:
        return tuple(n for n in self.from_status if n not in self.unfinished_children)


#: a pod of one of the CronJob's Jobs, and its container statuses: the one pod view (cronctl.model)
Pod = model.PodView
Container = model.ContainerView


@dataclass(frozen=True)
class Job:
    """A child Job: its record (:class:`cronctl.model.JobRecord`), the occurrence it stands for,
    its failure and its pods."""

    record: model.JobRecord
    in_status_active: bool
    occurrence: str | None  # the scheduled time (as the occurrence names it) it ran for
    failure: model.Failure | None
    pods: tuple[Pod, ...]

    @property
    def duration_seconds(self) -> int | None:
        d = self.record.duration  # model.run_time
        return int(d.total_seconds()) if d is not None else None

    @property
    def delay_seconds(self) -> int | None:
        r = self.record
        return int((r.created - r.scheduled_for).total_seconds()) if r.created and r.scheduled_for else None


@dataclass(frozen=True)
class RemovedJob:
    """A Job the events name that no longer exists (:func:`cronctl.events.gone_jobs`)."""

    gone: GoneJob
    occurrence: str | None


@dataclass(frozen=True)
class Window:
    """The scheduled times judged: (start, end], at most ``max_occurrences`` of them."""

    start: datetime | None  # None: the schedule could not be read
    end: datetime
    truncated: bool


@dataclass(frozen=True)
class Occurrence:
    """A scheduled time with its verdict: a slot of :func:`cronctl.history.slot_history` (times as
    its rows give them, RFC3339 text), with its first Job's times."""

    expected: str
    expected_local: str
    jobs: tuple[str, ...]
    created: str | None
    started: str | None
    completed: str | None
    outcome: str | None  # of the first Job; None while it runs
    slot_outcome: str  # what became of the slot's run (cronctl.slotrows.slot_outcome): succeeded, failed, ...
    failure_reason: str | None  # with slot_outcome failed: the failed Job's reason
    jobs_gone: tuple[str, ...]
    delay_seconds: int | None
    manual_overlap: tuple[Any, ...]
    verdict: str
    reason: str
    effect: Mapping[str, Any] | None = None  # cronctl claim's effect (bundle --ledger, a workflow with claim rows)


@dataclass(frozen=True)
class Overlap:
    """A span in which two or more of the CronJob's Jobs ran at once (:class:`cronctl.model.OverlapGroup`),
    with the origin of the first :data:`cronctl.model.MAX_OVERLAP_NAMES` it names."""

    group: model.OverlapGroup
    jobs: tuple[tuple[str, str], ...]  # (name, origin)

    @property
    def ongoing(self) -> bool:
        return self.group.running >= 2

    @property
    def job_count(self) -> int:
        return len(self.group.names)


@dataclass(frozen=True)
class SuspendedPeriod:
    """A known (or inferred) period the CronJob was held suspended, and how many slots it lost.

    Times as RFC3339 text: they are compared with the occurrences' slots (history's rows) and an
    inferred period is made of them."""

    start: str | None
    end: str | None  # None: suspended now
    source: str
    inferred: bool
    lost: int
    run: bool = False  # a finished cronctl run held it (cronctl.dev/runs)


@dataclass(frozen=True)
class CronJobAnalysis:
    """The incident analysis of one CronJob (:func:`cronctl.bundle.analyse.analyse`)."""

    view: model.CronJobView  # the spec and the checkpoint
    created: datetime  # creationTimestamp, else now
    last_successful_from: Row | None  # which Job set lastSuccessfulTime (cronctl.history)
    schedule: ScheduleFindings
    active: Active
    jobs: tuple[Job, ...]
    removed_jobs: tuple[RemovedJob, ...]
    window: Window
    occurrences: tuple[Occurrence, ...]
    overlaps: tuple[Overlap, ...]
    never_made_up: tuple[datetime, ...]
    suspended_periods: tuple[SuspendedPeriod, ...]
    events: tuple[EventRecord, ...]
    unexpected_jobs: tuple[Row, ...]
    notes: tuple[str, ...]
    gitops: GitOps | None  # present only when a GitOps tool manages the CronJob

    @property
    def verdict_counts(self) -> dict[str, int]:
        counts = {v: 0 for v in VERDICTS}
        for o in self.occurrences:
            counts[o.verdict] += 1
        return counts

    @property
    def lost_history(self) -> tuple[str, ...]:
        """The slots whose work was not done and will not be (:data:`cronctl.history.LOST`)."""
        return tuple(o.expected for o in self.occurrences if o.verdict in LOST)

    @property
    def failed_history(self) -> tuple[str, ...]:
        """The slots whose run failed (a Job was made, none of those standing for it succeeded)."""
        return tuple(o.expected for o in self.occurrences if o.slot_outcome == "failed")

    @property
    def event_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for ev in self.events:
            counts[ev["reason"]] = counts.get(ev["reason"], 0) + int(ev["count"])
        return dict(sorted(counts.items()))


@dataclass(frozen=True)
class BundledLog:
    """A container log of the bundle: the file it is in (None: not read, ``missing`` says why)."""

    pod: str
    container: str
    previous: bool
    file: str | None
    bytes: int
    truncated: bool
    missing: str | None


@dataclass(frozen=True)
class BundledCronJob:
    """One CronJob of the bundle: its analysis, its lint findings and its logs."""

    analysis: CronJobAnalysis
    lint: tuple[Row, ...]
    logs: tuple[BundledLog, ...]


@dataclass(frozen=True)
class Collected:
    """Where, when and how the evidence was read."""

    at: datetime
    by: str | None
    source: str  # cluster | dump
    dump_file: str | None
    namespace: str
    server: str | None  # its credentials masked (cronctl.redact.safe_url)
    server_version: str | None
    now: datetime
    now_source: str
    options: Mapping[str, Any]
    request_count: int | None


@dataclass(frozen=True)
class MissingRead:
    """A read that could not be made (its reason masked): the bundle is partial."""

    what: str
    reason: str
    object: str | None


@dataclass(frozen=True)
class Counts:
    cronjobs: int
    jobs: int
    pods: int
    events: int
    logs: int


@dataclass(frozen=True)
class BundleResult:
    """What the bundle found: every CronJob's analysis and how the evidence was read."""

    collected: Collected
    missing: tuple[MissingRead, ...]
    logs_note: str | None
    values_masked: int
    distinct_values: int
    counts: Counts
    cronjobs: tuple[BundledCronJob, ...]

    @property
    def partial(self) -> bool:
        return bool(self.missing)
