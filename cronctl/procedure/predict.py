"""What the CronJob controller will do next, from the schedule engine's controller model.

Wraps :func:`cronctl.schedule.decide` with the CronJob's real fields (docs/SEMANTICS.md §4.2-4.4):
``lastScheduleTime``, ``creationTimestamp``, ``startingDeadlineSeconds``, ``timeZone`` and now.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from cronctl import model
from cronctl.errors import CronctlError
from cronctl.timeutil import rfc3339_local, rfc3339_z
from cronctl.versions import behaviour_for


@dataclass(frozen=True)
class Prediction:
    """The controller's next move if the CronJob's suspend became ``suspended`` at ``now``."""

    now: datetime
    suspended: bool
    decision: str                      # "create" | "no-unmet" | "forbid-active" | "already-processed"
    #                                    | "suspended" | "error"
    catch_up_for: datetime | None      # the one missed time it starts right away
    job_name: str | None
    missed: int = 0                    # runs missed in the window the controller looks at
    never_made_up: int = 0
    too_many: bool = False             # TooManyMissedTimes warning
    next_runs: tuple[datetime, ...] = ()
    error: str | None = None
    text: str = ""
    events: tuple[str, ...] = field(default_factory=tuple)
    existing_job: str | None = None    # a Job already named for catch_up_for (not the controller's)
    adopts: bool | None = None         # whether this server's controller adopts it (versions.py)
    server_version: str | None = None
    deadline_dropped: tuple[datetime, ...] = ()  # runs startingDeadlineSeconds drops for good
    waiting_for: tuple[str, ...] = ()  # Forbid: the active Jobs the due slot waits for
    replaces: tuple[str, ...] = ()     # Replace: the active Jobs deleted before the new one
    never_times: tuple[datetime, ...] = ()  # the slots never made up (never_made_up counts them)

    def as_dict(self) -> dict[str, Any]:
        return {
            "now": rfc3339_z(self.now), "suspended": self.suspended, "decision": self.decision,
            "catch_up_for": rfc3339_z(self.catch_up_for) if self.catch_up_for else None,
            "job_name": self.job_name, "missed": self.missed, "never_made_up": self.never_made_up,
            "too_many_missed": self.too_many, "next_runs": [rfc3339_z(t) for t in self.next_runs],
            "error": self.error, "text": self.text, "events": list(self.events),
            "existing_job": self.existing_job, "adopts_existing_job": self.adopts,
            "server_version": self.server_version,
            "deadline_dropped": [rfc3339_z(t) for t in self.deadline_dropped],
            "waiting_for": list(self.waiting_for), "replaces": list(self.replaces),
            "never_made_up_slots": [rfc3339_z(t) for t in self.never_times],
        }


def _zone_time(t: datetime, zone: str | None) -> str:
    if not zone:
        return rfc3339_z(t)
    try:
        from zoneinfo import ZoneInfo

        return f"{rfc3339_local(t.astimezone(ZoneInfo(zone)))} ({rfc3339_z(t)})"
    except Exception:  # unknown zone: the engine reports it; show UTC here
        return rfc3339_z(t)


def schedule_words(cronjob: model.Obj) -> str:
    """The schedule in words if the describer can, else the raw expression."""
    from cronctl.schedule import parse
    from cronctl.schedule.describe import describe

    v = model.cronjob_view(cronjob)
    try:
        return f"{describe(parse(v.schedule, v.time_zone), v.time_zone)} ({v.schedule})"
    except CronctlError:
        return v.schedule


def never_fires(cronjob: model.Obj) -> str | None:
    """Why the CronJob's schedule can never fire (``0 0 31 2 *``), or None (it fires, or cannot be read)."""
    from cronctl.schedule import parse
    from cronctl.schedule.describe import never_fires_reason

    v = model.cronjob_view(cronjob)
    try:
        sched = parse(v.schedule, v.time_zone)
    except CronctlError:
        return None
    return None if sched.every is not None else never_fires_reason(sched)


def next_runs(cronjob: model.Obj, now: datetime, count: int = 3) -> list[datetime]:
    """The next ``count`` runs after ``now``; none when the schedule does not parse."""
    from cronctl.schedule import parse

    v = model.cronjob_view(cronjob)
    try:
        return list(parse(v.schedule, v.time_zone).runs(now, count))
    except CronctlError:
        return []


def predict(cronjob: model.Obj, now: datetime, *, suspended: bool, unsuspending: bool = True,
            jobs: list[model.Obj] | None = None, server_version: str | None = None) -> Prediction:
    """What the controller does at its next sync if ``spec.suspend`` becomes ``suspended`` now.

    Un-suspending triggers an immediate sync (docs/SEMANTICS.md §4.4) that starts only the most recent
    missed time, if inside ``startingDeadlineSeconds``; the engine reproduces that, quirks
    included. Staying suspended: the controller starts nothing. ``unsuspending=False`` words the
    result for a CronJob that is not suspended now ("due now" instead of "catch-up").

    ``jobs`` (the namespace's Jobs) and ``server_version`` let it say what happens when a Job
    named for the slot already exists, which depends on the version (:mod:`cronctl.versions`).
    """
    view = model.cronjob_view(cronjob)
    tz = view.zone  # the times in the words: in the zone the schedule runs in
    runs = tuple(next_runs(cronjob, now))
    if suspended:
        # status asks about a CronJob as it is (unsuspending=False): whoever suspended it, no run is
        # implied; a restore asks about the value before the run
        return Prediction(now=now, suspended=True, decision="suspended", catch_up_for=None, job_name=None,
                          next_runs=runs,
                          text=("it stays suspended (it was suspended before the run): the controller starts nothing"
                                if unsuspending else "it is suspended: the controller starts nothing"))
    deadline = view.starting_deadline
    try:
        d = view.decide(now)  # a field of the wrong type or a negative deadline: BadInput/ScheduleError
    except CronctlError as e:
        return Prediction(now=now, suspended=False, decision="error", catch_up_for=None, job_name=None,
                          next_runs=runs, error=e.message, text=f"the controller cannot schedule it: {e.message}")
    never = len(d.never_made_up)
    dropped = len(d.deadline_dropped)
    lost = ""
    if never:
        lost = f"{never} earlier missed run(s) will never be made up"
        if dropped:
            lost += f", {dropped} of them dropped by startingDeadlineSeconds={deadline}"
    existing_job: str | None = None
    adopts: bool | None = None
    if d.decision == "create" and d.most_recent is not None:
        text = (f"a catch-up Job for {_zone_time(d.most_recent, tz)} will start right away"
                if unsuspending else f"a Job for {_zone_time(d.most_recent, tz)} is due now")
        text += f" ({d.job_name})"
        if (d.job_name and d.job_name not in view.active
                and any(model.name_of(j) == d.job_name for j in jobs or [])):
            beh = behaviour_for(server_version)
            adopts = beh.adopts_slot_job
            text = beh.adoption_text(d.job_name, _zone_time(d.most_recent, tz))
            existing_job = d.job_name
        if d.replaces:
            text += f"; concurrencyPolicy Replace deletes {', '.join(d.replaces)} first"
        if never:
            text += f"; {lost}"
        if d.missed == "many":
            text += "; the controller will also warn TooManyMissedTimes"
    elif d.decision == "forbid-active" and d.most_recent is not None:
        text = (f"no Job yet: the slot {_zone_time(d.most_recent, tz)} waits for {', '.join(d.waiting_for)} "
                "(concurrencyPolicy Forbid, JobAlreadyActive); the controller starts it when that Job "
                "ends if no newer slot has come by then, otherwise the newer one")
        if never:
            text += f"; {lost}"
    elif d.decision == "error":
        text = f"no catch-up Job: the controller reports an error ({d.error})"
    else:
        nxt = f"; the next run is at {_zone_time(runs[0], tz)}" if runs else ""
        text = ("no catch-up Job" if unsuspending else "nothing is due now") + nxt
        if never:
            text += f" ({lost.replace('earlier missed', 'missed')})"
    return Prediction(now=now, suspended=False, decision=d.decision, catch_up_for=d.most_recent,
                      job_name=d.job_name, missed=len(d.missed_runs), never_made_up=never,
                      too_many=d.missed == "many", next_runs=runs, error=d.error, text=text,
                      events=tuple(d.events), existing_job=existing_job, adopts=adopts,
                      server_version=server_version, deadline_dropped=tuple(d.deadline_dropped),
                      waiting_for=tuple(d.waiting_for), replaces=tuple(d.replaces),
                      never_times=tuple(d.never_made_up))


#: the most slots :func:`history_limit_removal` walks to name the Job that deletes the manual one
REMOVAL_RUNS_MAX = 1000


def history_limit_removal(cronjob: model.Obj, now: datetime) -> tuple[str, dict[str, Any]]:
    """When the CronJob's history limits (or the Job's TTL) will delete the manual Job: the
    controller owns it and counts it with the scheduled Jobs, so the fixed name that stops a second
    run lasts only that long. Cleanup runs at every sync: the oldest finished Jobs beyond
    ``successfulJobsHistoryLimit`` (default 3) / ``failedJobsHistoryLimit`` (default 1) are deleted,
    oldest by start time, and the manual Job is the newest. Returns the plan's words and a dict."""
    view = model.cronjob_view(cronjob)
    ok, failed = view.history.successful, view.history.failed
    ttl = view.job_ttl
    # the slot of the Job that deletes it, walked for limits up to REMOVAL_RUNS_MAX (int32 limits of
    # millions would walk millions of slots: beyond it the plan names no slot)
    runs = next_runs(cronjob, now, min(max(ok, failed, 1), REMOVAL_RUNS_MAX))
    info: dict[str, Any] = {"successful_jobs_history_limit": ok, "failed_jobs_history_limit": failed,
                            "ttl_seconds_after_finished": ttl}

    def after(n: int, what: str) -> str:
        if n == 0:
            return f"deleted at the controller's next sync after it {what} (its history limit is 0)"
        at = f"; the earliest is the Job for {rfc3339_z(runs[n - 1])}" if len(runs) >= n else ""
        return f"deleted once {n} newer Job(s) of this CronJob have {what}{at}"

    ok_words, failed_words = after(ok, "succeeded"), after(failed, "failed")
    info.update(if_succeeded=ok_words, if_failed=failed_words,
                earliest_if_succeeded=rfc3339_z(runs[ok - 1]) if 0 < ok <= len(runs) else None)
    text = f"if it succeeds: {ok_words}; if it fails: {failed_words}"
    if ttl is not None:
        text += f"; ttlSecondsAfterFinished={ttl} deletes it {ttl}s after it finishes, if sooner"
    return text + ". Its record, logs and job.json stay in the run directory, and the run in cronctl.dev/runs", info


#: how many recent successful Jobs the expected run time is the median of
RECENT_FOR_DURATION = 5


def expected_duration(cronjob: model.Obj, jobs: list[model.Obj], now: datetime,
                      given: float | None = None) -> tuple[float | None, str]:
    """How long the manual Job is expected to run, in seconds, and how that is known: ``given``
    (``--expected-duration``), else the median run time of the CronJob's last successful Jobs,
    else ``activeDeadlineSeconds`` (an upper bound), else unknown (None)."""
    if given is not None:
        return given, "--expected-duration"
    done = sorted((j for j in jobs if model.owned_by(j, cronjob) and model.job_outcome(j) == "Complete"
                   and model.started(j) is not None), key=lambda j: model.started(j) or now)
    secs = [d.total_seconds() for j in done[-RECENT_FOR_DURATION:] for d in (model.duration(j, now),)
            if d is not None]
    if secs:
        from statistics import median

        return median(secs), f"the median of the last {len(secs)} successful Job(s)"
    ads = model.cronjob_view(cronjob).job_active_deadline
    if ads is not None and ads > 0:
        return float(ads), "activeDeadlineSeconds (an upper bound)"
    return None, "unknown (no successful Job to learn from, no activeDeadlineSeconds; --expected-duration says it)"


def suspend_change(cronjob: model.Obj, now: datetime, *, suspended: bool, last_schedule: datetime | None = None,
                   jobs: list[model.Obj] | None = None, server_version: str | None = None) -> Any:
    """What writing ``spec.suspend = suspended`` (and, for ``--catch-up none``, ``status.lastScheduleTime
    = last_schedule`` first) makes the controller do at the write: :func:`cronctl.change.assess`, the
    rule ``cronctl diff`` applies to any change, so resume, restore and diff say one thing (a
    :class:`cronctl.change.Change`)."""
    import copy

    from cronctl.change import assess

    after = copy.deepcopy(cronjob)
    after.setdefault("spec", {})["suspend"] = suspended
    if last_schedule is not None:
        after.setdefault("status", {})["lastScheduleTime"] = rfc3339_z(last_schedule)
    return assess(cronjob, after, now, jobs=jobs, server_version=server_version)


def change_words(chg: Any) -> str:
    """A plan's line for a :func:`suspend_change`: what the write makes happen at once, in words."""
    if chg.unchanged or not chg.changes:
        return "the write changes nothing the controller schedules by"
    said = [e.text for e in chg.effects]
    if not any(e.now for e in chg.effects):
        said.insert(0, "no Job is created or deleted at the write")
    return "; ".join(said)
