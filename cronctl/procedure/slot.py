"""Slot-named manual runs: which instant ``run-manual --occurrence T|latest`` stands for (pure).

A *slot* is an instant at which the CronJob's schedule fires, computed exactly as the controller
computes it (the schedule engine, in ``spec.timeZone``). A manual run for slot T gets the name
and the scheduled-timestamp annotation the controller itself would give T's Job, so the
controller never starts a second Job for T. No I/O and no clock here: ``now`` is a parameter.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from cronctl import model
from cronctl.errors import BadInput, option
from cronctl.schedule import Schedule, job_name, parse
from cronctl.schedule.controller import scheduled_timestamp_annotation
from cronctl.timeutil import rfc3339_z

#: How far back the nearest slot at or before an instant is looked for, widening step by step
#: (a dense schedule is answered by the first window; robfig's Next gives up after 5 years).
_LOOKBACK = (timedelta(hours=2), timedelta(days=2), timedelta(days=35), timedelta(days=400),
             timedelta(days=5 * 366))


@dataclass(frozen=True)
class Slot:
    """Slot ``at`` of a CronJob: the Job name and annotation the controller gives it."""

    at: datetime                 # UTC
    time_zone: str | None        # spec.timeZone as written (None: the controller's zone, UTC)
    job_name: str                # <cronjob>-<unix minutes>
    scheduled_timestamp: str     # batch.kubernetes.io/cronjob-scheduled-timestamp value
    latest: bool = False         # resolved from --occurrence latest

    @property
    def shown(self) -> str:
        """The slot in the CronJob's zone and in UTC: ``2026-03-28T02:30:00+01:00 (2026-03-28T01:30:00Z)``."""
        return show(self.at, self.time_zone)

    def as_dict(self) -> dict[str, object]:
        return {"at": rfc3339_z(self.at), "local": self.scheduled_timestamp, "time_zone": self.time_zone,
                "job_name": self.job_name, "scheduled_timestamp": self.scheduled_timestamp,
                "latest": self.latest}


def show(t: datetime, time_zone: str | None) -> str:
    """``t`` in ``time_zone`` (as the controller's annotation writes it) and in UTC."""
    utc = rfc3339_z(t)
    local = scheduled_timestamp_annotation(t, time_zone) if time_zone else utc
    return utc if local == utc else f"{local} ({utc})"


def schedule_of(cronjob: model.Obj) -> tuple[Schedule, str, str | None]:
    """The CronJob's parsed schedule, its text and ``spec.timeZone``; ScheduleError (exit 5) if bad."""
    view = model.cronjob_view(cronjob)
    tz = view.time_zone or None
    return parse(view.schedule, tz), view.schedule, tz


def is_slot(sched: Schedule, t: datetime) -> bool:
    """Whether the controller's walk fires exactly at ``t``."""
    runs = sched.runs(t - timedelta(seconds=1), 1)
    return bool(runs) and runs[0] == t


def slot_at_or_before(sched: Schedule, t: datetime) -> datetime | None:
    """The latest slot ``<= t``, or None when there is none in the last 5 years."""
    for back in _LOOKBACK:
        runs = sched.runs_between(t - back, t)
        if runs:
            return runs[-1]
    return None


def slot_after(sched: Schedule, t: datetime) -> datetime | None:
    """The first slot ``> t`` (None: nothing within 5 years)."""
    return sched.next_after(t)


def resolve(cronjob: model.Obj, occurrence: datetime | None, *, latest: bool, now: datetime) -> Slot:
    """The slot ``--occurrence`` names (``latest``: the latest slot at or before ``now``).

    BadInput (exit 5, one line) when the schedule has no fixed slots (``@every``), ``occurrence``
    is not a slot (naming the nearest slots before and after), or it is in the future.
    """
    sched, expr, tz = schedule_of(cronjob)
    name = model.name_of(cronjob)
    where = f"cronjob {model.meta(cronjob).get('namespace', '')}/{name}"
    zone = f" in {tz}" if tz else ""
    if sched.every is not None:
        raise BadInput(f"{where} runs '{expr}', a constant delay without fixed slots: {option('occurrence')} cannot "
                       f"name a slot of it; use {option('ad_hoc_occurrence')} with an instant")
    if latest:
        t = slot_at_or_before(sched, now)
        if t is None:
            raise BadInput(f"{where}: '{expr}'{zone} has no slot in the 5 years before now "
                           f"({rfc3339_z(now)}); there is no latest slot to run")
        created = model.when(model.meta(cronjob).get("creationTimestamp"))
        if created is not None and t <= created:
            # controller: the first slot it considers is the first after creationTimestamp (earliest =
            # creation, Next(earliest) is strictly later): one at or before it was never the CronJob's
            first = slot_after(sched, created)
            raise BadInput(f"{where} was created at {rfc3339_z(created)}, after its latest slot {show(t, tz)}: it has "
                           f"had no slot yet (the first is {_shown_or_none(first, tz)}), so there is no latest slot "
                           "to run",
                           hint=f"run it without {option('occurrence')}, or with {option('ad_hoc_occurrence')} for an "
                                "instant of your choosing")
    else:
        assert occurrence is not None
        t = occurrence
        if not is_slot(sched, t):
            before = slot_at_or_before(sched, t)
            after = slot_after(sched, t)
            raise BadInput(
                f"{option('occurrence')} {show(t, tz)} is not a slot of {where} ('{expr}'{zone}): the nearest slots are "
                f"{show(before, tz) if before else 'none in 5 years'} before and "
                f"{show(after, tz) if after else 'none in 5 years'} after",
                hint=f"name one of them, use {option('occurrence')} latest, or {option('ad_hoc_occurrence')} to run "
                     "under the fixed name for an instant the controller does not know")
        if t > now:
            raise BadInput(f"{option('occurrence')} {show(t, tz)} is in the future (now {rfc3339_z(now)}); the latest slot "
                           f"so far is {_shown_or_none(slot_at_or_before(sched, now), tz)}",
                           hint="a slot can be run by hand only once its time has come")
    return Slot(at=t, time_zone=tz, job_name=job_name(name, t),
                scheduled_timestamp=scheduled_timestamp_annotation(t, tz), latest=latest)


def _shown_or_none(t: datetime | None, tz: str | None) -> str:
    return show(t, tz) if t else "none in 5 years"


def standing_for(cronjob: model.Obj, jobs: list[model.Obj], at: datetime, name: str) -> list[model.Obj]:
    """Jobs that already stand for instant ``at``: one named ``name``, or any Job owned by the
    CronJob whose scheduled-timestamp or cronctl occurrence annotation is that instant."""
    out = []
    for j in jobs:
        if model.name_of(j) == name:
            out.append(j)
        elif model.owned_by(j, cronjob) and at in (model.scheduled_for(j), model.occurrence(j)):
            out.append(j)
    return out


def lost_while_held(cronjob: model.Obj, jobs: list[model.Obj], since: datetime, now: datetime,
                    limit: int = 500) -> list[datetime]:
    """Slots from ``since`` to ``now`` (oldest first, at most ``limit``) that no Job stands for:
    the slots a suspension lost (run-manual/backfill ``--catch-up all``, restore ``--catch-up all``)."""
    out = []
    for t in schedule_of(cronjob)[0].runs(since - timedelta(seconds=1), limit):
        if t > now:
            break
        if not standing_for(cronjob, jobs, t, resolve(cronjob, t, latest=False, now=now).job_name):
            out.append(t)
    return out


def describe_job(j: model.Obj) -> str:
    """``job ns/name (scheduled|manual, created ..., Complete|Failed|still running)``."""
    m = model.meta(j)
    return (f"job {m.get('namespace', '')}/{model.name_of(j)} ({model.origin(j)}, created "
            f"{m.get('creationTimestamp', '?')}, {model.job_outcome(j) or 'still running'})")


@dataclass(frozen=True)
class LastSchedulePlan:
    """Whether ``status.lastScheduleTime`` is to be set to the slot after a successful run."""

    patch: bool
    why: str
    current: datetime | None
    #: without the patch the controller still counts the slot as due (it is after lastScheduleTime,
    #: or with none after the CronJob's creation): it would try to start it and meet the Job's name
    needed: bool = False


def last_schedule_plan(cronjob: model.Obj, slot: Slot) -> LastSchedulePlan:
    """Patch when T is later than ``status.lastScheduleTime``; with it unset, also when T is before
    the CronJob's creation, unless a slot lies between T and the creation: then lastScheduleTime = T
    would make the controller consider that slot, which it otherwise never runs (and it never
    wants T either, so nothing is lost)."""
    current = model.last_schedule_time(cronjob)
    t = slot.at
    tz = slot.time_zone
    if current is not None:
        if current >= t:
            return LastSchedulePlan(False, f"status.lastScheduleTime is {show(current, tz)}, not earlier than the "
                                           f"slot: the controller already counts the slot as done", current)
        return LastSchedulePlan(True, f"status.lastScheduleTime {show(current, tz)} -> {show(t, tz)}", current,
                                needed=True)
    created = model.created(cronjob)
    if created is not None and t < created:
        try:
            sched = schedule_of(cronjob)[0]
        except BadInput:
            sched = None
        between = slot_after(sched, t) if sched is not None else None
        if between is not None and between <= created:
            return LastSchedulePlan(False, f"status.lastScheduleTime is unset and the CronJob was created "
                                           f"{rfc3339_z(created)}, after the slot: the controller never runs the "
                                           f"slot, and setting it would make the controller consider "
                                           f"{show(between, tz)}", None)
        return LastSchedulePlan(True, f"status.lastScheduleTime unset -> {show(t, tz)}", None)
    return LastSchedulePlan(True, f"status.lastScheduleTime unset -> {show(t, tz)}", None, needed=True)
