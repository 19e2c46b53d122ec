"""The Kubernetes CronJob controller's scheduling decision for one sync, exactly (docs/SEMANTICS.md §4).

A copy of ``syncCronJob``'s scheduling part (cronjob_controllerv2.go) and of utils.go's
``mostRecentScheduleTime``, ``nextScheduleTime``, ``nextScheduleTimeDuration``, ``getJobName``
and the scheduled-timestamp annotation, including the estimate's known flaw: when gaps between
runs vary, ``t1 + (n-2)·Δ`` can land after the real latest missed run and the controller then
starts nothing. Next to upstream's answer, :func:`decide` lists every missed run one by one so a
user can be told which runs are never made up.

Pure: ``now`` is a parameter; times in and out are aware datetimes (outputs UTC). Internally all
arithmetic is on integer microseconds (the controller's ``now`` has sub-second precision).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import lru_cache

from cronctl.errors import ScheduleError
from cronctl.schedule.parse import (
    CronParseError,
    Schedule,
    format_schedule,
    go_quote,
    load_location,
    parse_standard,
)
from cronctl.schedule.walk import civil_from_days, get_zone
from cronctl.timeutil import UTC

_MAX_UNIX = 253402300799 - 86400 * 366  # keep instants inside datetime's range (year 9998)

__all__ = ["Decision", "decide", "job_name", "most_recent_schedule_time", "update_requeue",
           "scheduled_timestamp_annotation", "MISSED_LIST_LIMIT", "NEXT_SCHEDULE_DELTA_US"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
US = 1_000_000
NEXT_SCHEDULE_DELTA_US = 100_000  # nextScheduleDelta = 100 ms
MANY_MISSED = 100  # numberOfMissedSchedules > 100 => "many" (TooManyMissedTimes)
# Runs listed one by one at most (missed_truncated says when more exist). The controller itself
# never lists them (it starts only the most recent, found by its estimate), so the work here is
# bounded by this cap, not by the age of lastScheduleTime: a CronJob whose lastScheduleTime is
# 1000-01-01 costs at most this many Next() calls (a week of every-minute runs).
MISSED_LIST_LIMIT = 10_000
TOO_MANY_MSG = ("too many missed start times. Set or decrease .spec.startingDeadlineSeconds or "
                "check clock skew")
SMALL_GAP_MSG = "time difference between two schedules is less than 1 second"


@dataclass(frozen=True)
class Decision:
    """What the CronJob controller does in one sync at ``now`` (and what it silently skips)."""

    earliest: datetime  # earliest time considered (lastScheduleTime/creation, moved by deadline)
    most_recent: datetime | None  # the ONE time the controller would start now, or None
    missed: str  # "none" | "few" | "many" (many => TooManyMissedTimes warning, still runs)
    error: str | None  # e.g. schedule never fires -> InvalidSchedule
    decision: str  # create | no-unmet | suspended | invalid-schedule | unparseable-schedule |
    #                unknown-time-zone | missed-deadline | already-processed | forbid-active
    job_name: str | None  # "<name>-<unix minutes of most_recent>"
    scheduled_timestamp: str | None  # batch.kubernetes.io/cronjob-scheduled-timestamp value
    next_wakeup: datetime | None  # requeue instant (Next(base) + 100ms); None: no requeue
    events: tuple[str, ...]  # "Warning TooManyMissedTimes: ...", "Normal SuccessfulCreate: ..."
    missed_runs: tuple[datetime, ...]  # EVERY run in (earliest, now], one by one (exact)
    never_made_up: tuple[datetime, ...]  # runs the controller will never start: those the
    #   deadline dropped, then every missed run but the one it starts (or leaves waiting)
    estimate_skipped: datetime | None  # latest exact missed run when the estimate picks none
    # --- more of upstream's output and of the exact walk -------------------------------------
    earliest_nodeadline: datetime | None = None  # mostRecentScheduleTime without the deadline
    most_recent_nodeadline: datetime | None = None  # (what nextScheduleTimeDuration uses)
    missed_nodeadline: str | None = None
    error_nodeadline: str | None = None
    requeue_after_ns: int | None = None  # the controller's requeue duration, in nanoseconds
    new_last_schedule: datetime | None = None  # status.lastScheduleTime after this sync
    parsed_spec: str | None = None  # the string the controller parses (formatSchedule)
    missed_count: int = 0  # len(missed_runs), unless more than MISSED_LIST_LIMIT (truncated)
    missed_truncated: bool = False
    deadline_dropped: tuple[datetime, ...] = field(default=())  # runs in (last/creation,
    #   earliest] that startingDeadlineSeconds drops without any event (capped like missed_runs)
    estimate_n: int | None = None  # numberOfMissedSchedules, the controller's estimate
    waiting_for: tuple[str, ...] = ()  # forbid-active: the active Jobs the slot waits for
    replaces: tuple[str, ...] = ()  # create under Replace: the active Jobs deleted first


# ---------------------------------------------------------------------------------------------
# time helpers (integer microseconds)
# ---------------------------------------------------------------------------------------------

def _us(dt: datetime) -> int:
    if not isinstance(dt, datetime) or dt.tzinfo is None or dt.utcoffset() is None:
        raise ScheduleError(f"an aware datetime is needed, got {dt!r}")
    d = dt - _EPOCH
    return (d.days * 86400 + d.seconds) * US + d.microseconds


def _dt(us: int) -> datetime:
    return _EPOCH + timedelta(microseconds=us)


def _next_us(sched: Schedule, us: int) -> int | None:
    """``schedule.Next(t)`` on microseconds: drops the sub-second part, strictly later."""
    r = sched.next_unix(us // US)
    return None if r is None or r > _MAX_UNIX else r * US


def job_name(cronjob_name: str, scheduled: datetime) -> str:
    """``getJobName``: ``<name>-<scheduled Unix seconds / 60>`` (Go integer division)."""
    secs = _us(scheduled) // US
    minutes = abs(secs) // 60 * (1 if secs >= 0 else -1)
    return f"{cronjob_name}-{minutes}"


def scheduled_timestamp_annotation(scheduled: datetime, time_zone: str | None, *,
                                   local_zone: str = "UTC") -> str:
    """``scheduledTime.In(time.LoadLocation(timeZone or "")).Format(time.RFC3339)``: nil gives
    UTC with ``Z``; a zone gives its offset (``Z`` again whenever the offset is zero)."""
    zone_name = load_location(time_zone or "", local_zone=local_zone)
    secs = _us(scheduled) // US
    off = get_zone(zone_name).offset(secs)
    days, sod = divmod(secs + off, 86400)
    y, m, d = civil_from_days(days)
    base = f"{y:04d}-{m:02d}-{d:02d}T{sod // 3600:02d}:{sod // 60 % 60:02d}:{sod % 60:02d}"
    if off == 0:
        return base + "Z"
    sign = "+" if off > 0 else "-"
    a = abs(off) // 60
    return f"{base}{sign}{a // 60:02d}:{a % 60:02d}"


def _rfc1123z_utc(us: int) -> str:
    return _dt(us).strftime("%a, %d %b %Y %H:%M:%S +0000")


# ---------------------------------------------------------------------------------------------
# utils.go
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Mrst:
    earliest: int
    most_recent: int | None
    missed: str
    error: str | None
    n: int | None


def most_recent_schedule_time(sched: Schedule, *, created_us: int, last_us: int | None,
                              deadline: int | None, now_us: int,
                              include_deadline: bool) -> _Mrst:
    """``mostRecentScheduleTime``: the estimate arithmetic copied exactly."""
    earliest = created_us if last_us is None else last_us
    if include_deadline and deadline is not None:
        scheduling_deadline = now_us - deadline * US
        if scheduling_deadline > earliest:
            earliest = scheduling_deadline
    t1 = _next_us(sched, earliest)
    if t1 is None:
        # Go: t1 is the zero time; Next(zero) is (for schedules that never fire) zero again, so
        # t2 - t1 rounds to 0 s: the "less than 1 second" error.
        return _Mrst(earliest, None, "none", SMALL_GAP_MSG, None)
    t2 = _next_us(sched, t1)
    if now_us < t1:
        return _Mrst(earliest, None, "none", None, None)
    if t2 is not None and now_us < t2:
        return _Mrst(earliest, t1, "none", None, None)
    if t2 is None:
        return _Mrst(earliest, None, "none", SMALL_GAP_MSG, None)
    diff_ns = (t2 - t1) * 1000
    between = (diff_ns + 500_000_000) // 1_000_000_000  # Round(time.Second), positive
    if between < 1:
        return _Mrst(earliest, None, "none", SMALL_GAP_MSG, None)
    elapsed = (now_us - t1) // US  # int64(now.Sub(t1).Seconds()), positive here
    n = elapsed // between + 1
    potential = t1 + (n - 2) * between * US
    # upstream walks Next() from potential up to now; when the first gap is the largest of the
    # schedule (Fri -> Mon for weekdays), potential lies far back and that walk is long (centuries
    # for an ancient lastScheduleTime). The last run of the same chain is found backwards from now.
    most_recent = _latest_run(sched, potential, now_us)
    missed = "many" if n > MANY_MISSED else ("few" if n > 0 else "none")
    return _Mrst(earliest, most_recent, missed, None, n)


def _requeue(sched: Schedule, *, created_us: int, last_us: int | None, deadline: int | None,
             now_us: int) -> int | None:
    """``nextScheduleTimeDuration`` as an absolute instant (µs): Next(base) + 100 ms."""
    m = most_recent_schedule_time(sched, created_us=created_us, last_us=last_us,
                                  deadline=deadline, now_us=now_us, include_deadline=False)
    if m.error is not None:
        base = now_us
    elif m.most_recent is None:
        base = m.earliest if m.missed == "none" else now_us
    else:
        base = m.most_recent
    nxt = _next_us(sched, base)
    if nxt is None:
        return None  # Go: zero time + 100ms - now, a huge negative duration (immediate requeue)
    return nxt + NEXT_SCHEDULE_DELTA_US


def update_requeue(expr: str, *, time_zone: str | None, created: datetime,
                   last_schedule: datetime | None, starting_deadline: int | None, now: datetime,
                   controller_tz: str | None = None) -> datetime | None:
    """When ``updateCronJob`` requeues a CronJob whose schedule or timeZone an update changed:
    ``nextScheduleTimeDuration`` of the new object at ``now`` (docs/SEMANTICS.md §4.5), as an
    instant; None when the new schedule does not parse (the controller then requeues nothing: it
    records UnParseableCronJobSchedule) or never fires."""
    local = controller_tz or "UTC"
    try:
        sched = _parsed(format_schedule(expr, time_zone), expr, local, time_zone is not None and "TZ" not in expr)
    except (CronParseError, ScheduleError):
        return None
    wake = _requeue(sched, created_us=_us(created), last_us=None if last_schedule is None else _us(last_schedule),
                    deadline=starting_deadline, now_us=_us(now))
    return None if wake is None else _dt(wake)


# ---------------------------------------------------------------------------------------------
# exact listing of missed runs
# ---------------------------------------------------------------------------------------------

def _runs_in(sched: Schedule, lo_us: int, hi_us: int, limit: int) -> tuple[list[int], bool]:
    """Runs t with lo < t <= hi (each Next of the previous, from lo), at most ``limit``."""
    out: list[int] = []
    t = _next_us(sched, lo_us)
    while t is not None and t <= hi_us:
        if len(out) >= limit:
            return out, True
        out.append(t)
        t = _next_us(sched, t)
    return out, False


def _latest_run(sched: Schedule, lo_us: int, hi_us: int) -> int | None:
    """The last run in (lo, hi] of the chain of Next calls started at lo, found without listing
    them all: walk from ever earlier starting points (a Next chain from any point in between
    joins the same runs, except across @every, whose rhythm is anchored to its start)."""
    if sched.every is not None:
        step = int(sched.every.total_seconds()) * US
        first = _next_us(sched, lo_us)
        if first is None or first > hi_us:
            return None
        return first + ((hi_us - first) // step) * step
    window = 2 * 86400 * US
    while True:
        start = max(lo_us, hi_us - window)
        runs, _ = _runs_in(sched, start, hi_us, 1 << 30)
        if runs:
            return runs[-1]
        if start == lo_us:
            return None
        window *= 4


# ---------------------------------------------------------------------------------------------
# syncCronJob (scheduling part)
# ---------------------------------------------------------------------------------------------

def decide(expr: str, *, time_zone: str | None, name: str, created: datetime,
           last_schedule: datetime | None, starting_deadline: int | None, now: datetime,
           suspended: bool = False, controller_tz: str | None = None,
           concurrency_policy: str | None = None, active: Sequence[str] = ()) -> Decision:
    """The CronJob controller's scheduling decision for one sync at ``now``.

    ``expr``/``time_zone`` are spec.schedule/spec.timeZone, ``created`` the creationTimestamp,
    ``last_schedule`` status.lastScheduleTime, ``starting_deadline`` startingDeadlineSeconds,
    ``controller_tz`` the kube-controller-manager's local zone (None = UTC),
    ``concurrency_policy`` spec.concurrencyPolicy and ``active`` the names in status.active: a
    slot whose Job name is active counts as processed; Forbid with any active Job gives
    ``forbid-active`` (JobAlreadyActive: the slot waits, started at a later sync if the Job ends
    before a newer slot and inside the deadline); Replace deletes every active Job first
    (``replaces``). Suspended CronJobs
    get ``decision="suspended"`` with no requeue (the controller computes nothing); call again
    with ``suspended=False`` to see what unsuspending now would do. Raises ScheduleError only for
    bad arguments (naive datetimes, an unknown ``controller_tz``).
    """
    local = controller_tz or "UTC"
    if local != "UTC":
        load_location(local)
    now_us = _us(now)
    created_us = _us(created)
    last_us = None if last_schedule is None else _us(last_schedule)
    if starting_deadline is not None and starting_deadline < 0:
        raise ScheduleError(f"startingDeadlineSeconds must be >= 0, got {starting_deadline}")
    base_earliest = created_us if last_us is None else last_us
    earliest = base_earliest
    if starting_deadline is not None and now_us - starting_deadline * US > earliest:
        earliest = now_us - starting_deadline * US

    def stop(decision: str, events: list[str], *, parsed: str | None = None,
             error: str | None = None) -> Decision:
        return Decision(earliest=_dt(earliest), most_recent=None, missed="none", error=error,
                        decision=decision, job_name=None, scheduled_timestamp=None,
                        next_wakeup=None, events=tuple(events), missed_runs=(),
                        never_made_up=(), estimate_skipped=None, parsed_spec=parsed)

    events: list[str] = []
    # step 5: a timeZone Go cannot load
    if time_zone is not None:
        try:
            load_location(time_zone, local_zone=local)
        except ScheduleError:
            events.append(f"Warning UnknownTimeZone: invalid timeZone: {go_quote(time_zone)}: "
                          f"unknown time zone {time_zone}")
            return stop("unknown-time-zone", events)
    # step 6: suspended: nothing computed, nothing recorded, no requeue
    spec = format_schedule(expr, time_zone)
    try:
        sched = _parsed(spec, expr, local, time_zone is not None and "TZ" not in expr)
    except CronParseError as e:
        if suspended:
            return stop("suspended", [], parsed=spec)
        if "TZ" in expr:
            events.append(_unsupported(expr))
        events.append(f"Warning UnparseableSchedule: unparseable schedule: {go_quote(expr)} : "
                      f"{e.upstream}")
        return stop("unparseable-schedule", events, parsed=spec)
    if suspended:
        runs, trunc = _runs_in(sched, earliest, now_us, MISSED_LIST_LIMIT)
        return Decision(earliest=_dt(earliest), most_recent=None, missed="none", error=None,
                        decision="suspended", job_name=None, scheduled_timestamp=None,
                        next_wakeup=None, events=(), missed_runs=tuple(_dt(r) for r in runs),
                        never_made_up=(), estimate_skipped=None, parsed_spec=spec,
                        missed_count=len(runs), missed_truncated=trunc)
    if "TZ" in expr:
        events.append(_unsupported(expr))

    kw = dict(created_us=created_us, last_us=last_us, deadline=starting_deadline, now_us=now_us)
    m = most_recent_schedule_time(sched, include_deadline=True, **kw)  # type: ignore[arg-type]
    nd = most_recent_schedule_time(sched, include_deadline=False, **kw)  # type: ignore[arg-type]

    runs, trunc = _runs_in(sched, m.earliest, now_us, MISSED_LIST_LIMIT)
    exact_latest = (runs[-1] if not trunc else _latest_run(sched, m.earliest, now_us)) if runs else None
    dropped: list[int] = []
    if m.earliest > base_earliest:
        dropped, _ = _runs_in(sched, base_earliest, m.earliest, MISSED_LIST_LIMIT)

    gone = tuple(_dt(r) for r in dropped)  # dropped by the deadline: lost whatever happens next
    common = dict(
        earliest_nodeadline=_dt(nd.earliest), most_recent_nodeadline=_opt(nd.most_recent),
        missed_nodeadline=nd.missed, error_nodeadline=nd.error, parsed_spec=spec,
        missed_count=len(runs), missed_truncated=trunc,
        deadline_dropped=gone, estimate_n=m.n,
        missed_runs=tuple(_dt(r) for r in runs))

    # nextScheduleTime
    scheduled: int | None = m.most_recent
    if scheduled is not None and scheduled > now_us:
        scheduled = None
    if scheduled is None and m.error is not None:
        events.append(f"Warning InvalidSchedule: invalid schedule: {expr} : {m.error}")
        return Decision(earliest=_dt(m.earliest), most_recent=None, missed=m.missed,
                        error=m.error, decision="invalid-schedule", job_name=None,
                        scheduled_timestamp=None, next_wakeup=None, events=tuple(events),
                        never_made_up=gone + tuple(_dt(r) for r in runs), estimate_skipped=None,
                        **common)  # type: ignore[arg-type]
    skipped = None
    if exact_latest is not None and (scheduled is None or scheduled < exact_latest):
        skipped = _dt(exact_latest)
    if scheduled is None:
        wake = _requeue(sched, **kw)  # type: ignore[arg-type]
        return Decision(earliest=_dt(m.earliest), most_recent=None, missed=m.missed, error=None,
                        decision="no-unmet", job_name=None, scheduled_timestamp=None,
                        next_wakeup=_opt(wake), events=tuple(events),
                        never_made_up=gone + tuple(_dt(r) for r in runs), estimate_skipped=skipped,
                        requeue_after_ns=None if wake is None else (wake - now_us) * 1000,
                        **common)  # type: ignore[arg-type]
    if m.missed == "many":
        events.append(f"Warning TooManyMissedTimes: {TOO_MANY_MSG}")
    never = gone + tuple(_dt(r) for r in runs if r != scheduled)
    name_ = job_name(name, _dt(scheduled))
    if starting_deadline is not None and scheduled + starting_deadline * US < now_us:
        # unreachable with the current code (the deadline already moved earliest); kept as upstream
        events.append(f"Warning MissSchedule: Missed scheduled time to start a job: "
                      f"{_rfc1123z_utc(scheduled)}")
        wake = _requeue(sched, **kw)  # type: ignore[arg-type]
        return Decision(earliest=_dt(m.earliest), most_recent=_dt(scheduled), missed=m.missed,
                        error=None, decision="missed-deadline", job_name=None,
                        scheduled_timestamp=None, next_wakeup=_opt(wake), events=tuple(events),
                        never_made_up=gone + tuple(_dt(r) for r in runs), estimate_skipped=skipped,
                        requeue_after_ns=None if wake is None else (wake - now_us) * 1000,
                        **common)  # type: ignore[arg-type]
    processed = (last_us is not None and last_us == scheduled) or name_ in active
    forbid = concurrency_policy == "Forbid" and len(active) > 0
    if processed or forbid:
        if not processed:
            events.append("Normal JobAlreadyActive: Not starting job because prior execution is "
                          "running and concurrency policy is Forbid")
        wake = _requeue(sched, **kw)  # type: ignore[arg-type]
        return Decision(earliest=_dt(m.earliest), most_recent=_dt(scheduled), missed=m.missed,
                        error=None, decision="already-processed" if processed else "forbid-active",
                        job_name=name_, scheduled_timestamp=None, next_wakeup=_opt(wake),
                        events=tuple(events), never_made_up=never, estimate_skipped=skipped,
                        requeue_after_ns=None if wake is None else (wake - now_us) * 1000,
                        waiting_for=() if processed else tuple(active),
                        **common)  # type: ignore[arg-type]
    replaces = tuple(active) if concurrency_policy == "Replace" else ()
    events.extend(f"Normal SuccessfulDelete: Deleted job {j}" for j in replaces)
    annotation = scheduled_timestamp_annotation(_dt(scheduled), time_zone, local_zone=local)
    events.append(f"Normal SuccessfulCreate: Created job {name_}")
    # requeue is computed on the updated object: lastScheduleTime = the scheduled time
    wake = _requeue(sched, created_us=created_us, last_us=scheduled, deadline=starting_deadline,
                    now_us=now_us)
    return Decision(earliest=_dt(m.earliest), most_recent=_dt(scheduled), missed=m.missed,
                    error=None, decision="create", job_name=name_, scheduled_timestamp=annotation,
                    next_wakeup=_opt(wake), events=tuple(events), never_made_up=never,
                    estimate_skipped=skipped,
                    requeue_after_ns=None if wake is None else (wake - now_us) * 1000,
                    new_last_schedule=_dt(scheduled), replaces=replaces,
                    **common)  # type: ignore[arg-type]


@lru_cache(maxsize=512)
def _parsed(spec: str, expr: str, local: str, prefixed_by_us: bool) -> Schedule:
    """``parse_standard``, once per schedule: a fleet (``diff`` of 500 CronJobs, ``history -A``)
    repeats a few schedules, and a Schedule is not changed by walking it."""
    return parse_standard(spec, expr=expr, local_zone=local, prefixed_by_us=prefixed_by_us)


def _opt(us: int | None) -> datetime | None:
    return None if us is None else _dt(us)


def _unsupported(expr: str) -> str:
    return (f"Warning UnsupportedSchedule: CRON_TZ or TZ used in schedule {go_quote(expr)} is "
            "not officially supported, see "
            "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details")
