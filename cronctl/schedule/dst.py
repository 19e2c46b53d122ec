"""DST gaps and folds that touch a list of runs: which run will not happen, which happens twice.

Pure: no I/O, no clock. Works for both dialects, because both read the schedule against the
wall clock of its zone and both behave the same way at a transition (checked against the
upstream vectors for robfig, docs/SEMANTICS.md §3; by construction for the Atlas minute walk):

- spring forward (gap): a wall time inside the gap does not exist, so a run there is SKIPPED,
  not moved later. ``30 2 * * *`` America/New_York has no run on 2026-03-08
  (clocks go 02:00 EST -> 03:00 EDT at 2026-03-08T07:00:00Z); the next is 2026-03-09T06:30:00Z.
- fall back (fold): a wall time inside the fold exists twice, so a run there happens TWICE, once
  in each offset. ``30 1 * * *`` New York on 2026-11-01 (02:00 EDT -> 01:00 EST at 06:00:00Z):
  05:30Z (01:30 EDT) and 06:30Z (01:30 EST).

The transition instants come from the zone's own data (zoneinfo), found by scanning the
offset and bisecting to the second.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from datetime import date, datetime, timedelta
from typing import Any, Sequence
from zoneinfo import ZoneInfo

from cronctl.schedule.describe import Fields
from cronctl.timeutil import UTC

# The longest gap/fold handled minute by minute (Pacific/Apia skipped a whole day in 2011).
_MAX_SPAN = timedelta(hours=49)
_FIRST = datetime(1, 1, 3, tzinfo=UTC)
_LAST = datetime(9999, 12, 29, tzinfo=UTC)


@dataclass(frozen=True)
class Transition:
    """One change of the zone's UTC offset: the first instant (UTC) with the new offset."""

    at: datetime
    offset_before: timedelta
    offset_after: timedelta
    abbr_before: str
    abbr_after: str

    @property
    def kind(self) -> str:
        return "gap" if self.offset_after > self.offset_before else "fold"

    @property
    def wall_start(self) -> datetime:
        """Naive local time where the skipped (gap) or repeated (fold) wall-clock span begins."""
        naive = self.at.replace(tzinfo=None)
        return naive + min(self.offset_before, self.offset_after)

    @property
    def wall_end(self) -> datetime:
        naive = self.at.replace(tzinfo=None)
        return naive + max(self.offset_before, self.offset_after)


@dataclass(frozen=True)
class DstEvent:
    """A transition that touches the runs, with the runs it changes.

    ``skipped``: wall times (naive, local) the schedule names that do not exist (gap).
    ``repeated``: (wall time, first UTC instant, second UTC instant) for each run made twice (fold).
    ``extra``: UTC instants of runs the walk makes at a time the fields do not name (robfig's
    hour/minute stepping in real time across the change, e.g. ``*/5 1 * * *`` Lord Howe at 02:30).
    ``lost``: UTC instants the fields name, that exist once on the wall clock, and that the walk
    still never runs (the same real-time stepping: after Lord Howe's 30-minute fall-back on
    2026-04-05 the walk lands on :30, so ``0 3 * * *`` has no run that day; upstream vector).
    """

    transition: Transition
    zone: str
    skipped: tuple[datetime, ...]
    repeated: tuple[tuple[datetime, datetime, datetime], ...]
    extra: tuple[datetime, ...] = ()
    lost: tuple[datetime, ...] = ()

    @property
    def kind(self) -> str:
        return self.transition.kind

    def message(self) -> str:
        """One sentence for people."""
        parts = [p for p in (self._skip_or_repeat(), self._extra(), self._lost()) if p]
        return "; ".join(parts)

    def _head(self) -> str:
        t = self.transition
        day = t.wall_start.date().isoformat()
        at = t.at.strftime("%Y-%m-%dT%H:%M:%SZ")
        if self.kind == "gap":
            return (f"{day}: clocks in {self.zone} jump from {t.wall_start:%H:%M} {t.abbr_before} to "
                    f"{t.wall_end:%H:%M} {t.abbr_after} (at {at})")
        return (f"{day}: clocks in {self.zone} go back from {t.wall_end:%H:%M} {t.abbr_before} to "
                f"{t.wall_start:%H:%M} {t.abbr_after} (at {at})")

    def _extra(self) -> str:
        if not self.extra:
            return ""
        tz = ZoneInfo(self.zone)
        when = ", ".join(f"{r.astimezone(tz):%a %Y-%m-%d %H:%M} {r.astimezone(tz).tzname()} ({r:%H:%MZ})"
                         for r in self.extra)
        lead = "" if self.skipped or self.repeated else f"{self._head()}: "
        return (f"{lead}the controller also runs at {when}, a time the schedule does not name "
                "(robfig steps hours and minutes in real time across the change)")

    def _lost(self) -> str:
        if not self.lost:
            return ""
        tz = ZoneInfo(self.zone)
        when = ", ".join(f"{r.astimezone(tz):%a %Y-%m-%d %H:%M} {r.astimezone(tz).tzname()} ({r:%H:%MZ})"
                         for r in self.lost)
        lead = "" if self.skipped or self.repeated or self.extra else f"{self._head()}: "
        return (f"{lead}the controller never runs at {when}, although the schedule names it "
                "(robfig steps hours and minutes in real time across the change)")

    def _skip_or_repeat(self) -> str:
        if not self.skipped and not self.repeated:
            return ""
        t = self.transition
        head = self._head()
        if self.kind == "gap":
            return f"{head}: {_runs_words(self.skipped)} will not happen (skipped, not moved later)"
        if len(self.repeated) == 1:
            w, a, b = self.repeated[0]
            return (f"{head}: the run at {w:%H:%M} happens twice, at {a:%H:%MZ} ({t.abbr_before}) "
                    f"and {b:%H:%MZ} ({t.abbr_after})")
        walls = [w for w, _, _ in self.repeated]
        return f"{head}: {_runs_words(walls)} each happen twice, once in {t.abbr_before} and once in {t.abbr_after}"


def _runs_words(walls: Sequence[datetime]) -> str:
    if len(walls) == 1:
        return f"the run at {walls[0]:%H:%M}"
    if len(walls) <= 4:
        return "the runs at " + ", ".join(f"{w:%H:%M}" for w in walls[:-1]) + f" and {walls[-1]:%H:%M}"
    return f"{len(walls)} runs from {walls[0]:%H:%M} through {walls[-1]:%H:%M}"


def transitions(zone: str, start: datetime, end: datetime) -> list[Transition]:
    """Every offset change of ``zone`` in (start, end], in order.

    Read from the engine's transition table (:meth:`Zone.segment`), so the work is one step per
    transition, not one per half day: a window of a thousand years (an ancient
    ``lastScheduleTime``) costs what its few hundred transitions cost.
    """
    from cronctl.schedule.walk import get_zone

    try:
        tz = ZoneInfo(zone)
        z = get_zone(zone)
    except (KeyError, ValueError, OSError, LookupError):
        return []
    out: list[Transition] = []
    # Keep a day away from datetime's limits so that local conversions cannot overflow.
    a = int(max(start.astimezone(UTC), _FIRST).timestamp())
    stop = int(min(end.astimezone(UTC), _LAST).timestamp())
    u = a
    while u < stop:
        _lo, hi, off_before = z.segment(u)
        if hi > stop:
            break
        off_after = z.offset(hi)
        if off_after != off_before:
            before = datetime.fromtimestamp(hi - 1, tz)
            after = datetime.fromtimestamp(hi, tz)
            out.append(Transition(at=datetime.fromtimestamp(hi, UTC),
                                  offset_before=timedelta(seconds=off_before),
                                  offset_after=timedelta(seconds=off_after),
                                  abbr_before=before.tzname() or "", abbr_after=after.tzname() or ""))
        u = hi
    return out


def wall_matches(s: Fields, wall: datetime, *, and_rule: bool = False) -> bool:
    """Does the schedule name this wall-clock time (naive, local)? robfig day rule unless ``and_rule``."""
    if wall.minute not in s.minutes or wall.hour not in s.hours or wall.month not in s.months:
        return False
    dom = wall.day in s.days_of_month
    dow = wall.isoweekday() % 7 in s.days_of_week
    # robfig spec.go dayMatches: AND when either field has the star bit, else OR. Atlas: AND.
    if and_rule or s.dom_star or s.dow_star:
        return dom and dow
    return dom or dow


def dst_events(s: Fields, after: datetime, runs: Sequence[datetime], *, and_rule: bool = False) -> list[DstEvent]:
    """The gaps and folds between ``after`` and the last of ``runs`` that change a run.

    A gap is reported when the schedule names a wall time inside it (that run will not happen);
    a fold when it names a wall time inside it (that run happens twice); either when a run lands
    at a time the fields do not name (robfig's real-time stepping across the change: ``extra``).
    Transitions that change no run are left out. ``@every`` schedules ignore zones: always [].
    """
    if s.every is not None or not runs:
        return []
    end = max(runs)
    found = transitions(s.zone, after, end)
    extra = _unnamed_runs(s, runs) if not and_rule else []
    lost = _lost_runs(s, after, end) if not and_rule else []
    out: list[DstEvent] = []
    for t in found:
        if t.wall_end - t.wall_start > _MAX_SPAN:
            continue
        named: list[datetime] = []
        w = t.wall_start
        while w < t.wall_end:
            if wall_matches(s, w, and_rule=and_rule):
                named.append(w)
            w += timedelta(minutes=1)
        # robfig: an unnamed run belongs to the last change at or before it.
        mine = tuple(r for r in extra if _owner(found, r) is t)
        mine_lost = tuple(r for r in lost if _owner(found, r) is t)
        rep = []
        if t.kind == "fold":
            for w in named:
                first = (w - t.offset_before).replace(tzinfo=UTC)
                second = (w - t.offset_after).replace(tzinfo=UTC)
                if after < second and first <= end:
                    rep.append((w, first, second))
        skipped = tuple(named) if t.kind == "gap" else ()
        if skipped or rep or mine or mine_lost:
            out.append(DstEvent(t, s.zone, skipped, tuple(rep), mine, mine_lost))
    return out


def _unnamed_runs(s: Fields, runs: Sequence[datetime]) -> list[datetime]:
    """Runs at instants the fields do not name (only robfig's walk makes them, next to a DST change)."""
    matches = getattr(s, "matches", None)
    if matches is None:
        return []
    return [r for r in runs if not matches(r)]


def _lost_runs(s: Fields, after: datetime, end: datetime) -> list[datetime]:
    """Instants the fields name (existing once on the wall clock) that robfig's walk never runs."""
    deviations = getattr(s, "wall_clock_deviations", None)
    if deviations is None:
        return []
    skipped, _extra = deviations(after, end)
    return list(skipped)


def _owner(found: Sequence[Transition], run: datetime) -> Transition | None:
    before = [t for t in found if t.at <= run]
    return before[-1] if before else (found[0] if found else None)


# --------------------------------------------------------------------------- DST hits
# How a schedule's runs on a transition's local day differ from a DST-free wall clock: lint's two DST
# rules (CJ gap/fold) and the dst runbook ask the same question, so it lives here, once.

DST_HORIZON = timedelta(days=731)  # "within the next two years"


def wall_schedule(sched: Any) -> Any:
    """The same fields evaluated in UTC, i.e. on a wall clock without DST: the reference that
    shows which wall-clock slots a zone's transitions remove or repeat."""
    from cronctl.schedule import parse

    expr: str = sched.expr
    if sched.zone_from_prefix:
        expr = expr.strip().split(None, 1)[1]
    return parse(expr, "UTC")


@lru_cache(maxsize=128)  # a lint run asks for the same zone and window for many CronJobs
def _zone_transitions(zone: str, start: datetime, end: datetime) -> tuple[Transition, ...]:
    return tuple(transitions(zone, start, end))


def zone_transitions(zone: str, start: datetime, end: datetime) -> list[Transition]:
    """Every UTC-offset change of ``zone`` in (start, end] (the engine's finder, cached).

    ``start`` is cut to the whole second (tz rules change offsets at whole seconds), so that a
    clock reading with microseconds neither misses a change nor splits the cache."""
    return list(_zone_transitions(zone, start.replace(microsecond=0), end))


@dataclass(frozen=True)
class DstHit:
    transition: Transition
    local_date: date
    slots: tuple[datetime, ...]  # naive wall-clock times of the schedule inside the gap/fold
    wall_runs: int  # runs that day on a DST-free wall clock
    zone_runs: int  # runs that day as the controller (engine) walks the real zone
    zone_instants: tuple[datetime, ...]  # the engine's UTC runs inside the fold (doubles)


def dst_hits(sched: Any, now: datetime, horizon: timedelta = DST_HORIZON) -> list[DstHit]:
    """See :func:`_dst_hits`; cached per schedule, now and horizon (both DST rules ask)."""
    return list(_dst_hits_cached(sched.expr, sched.zone, now, horizon))


@lru_cache(maxsize=1024)
def _dst_hits_cached(expr: str, zone: str, now: datetime, horizon: timedelta) -> tuple[DstHit, ...]:
    from cronctl.schedule import parse

    return tuple(_dst_hits(parse(expr, zone), now, horizon))


def _dst_hits(sched: Any, now: datetime, horizon: timedelta) -> list[DstHit]:
    """The zone's transitions within ``horizon`` after ``now`` that change how often the schedule
    runs on that local day, by comparing the engine's walk in the real zone with its walk on a
    DST-free wall clock (UTC) for the same fields.

    A schedule that fires every hour is left out: its runs follow real hours (docs/SEMANTICS.md §3), so a
    transition only relabels them."""
    from zoneinfo import ZoneInfo

    if sched.every is not None or sched.zone in ("UTC", "Etc/UTC") or len(sched.hours) == 24:
        return []  # @every ignores zones; every-hour schedules keep real-time spacing
    z = ZoneInfo(sched.zone)
    wall = wall_schedule(sched)
    one = timedelta(seconds=1)
    hits: list[DstHit] = []
    for tr in zone_transitions(sched.zone, now, now + horizon):
        lo, hi = (tr.wall_start, tr.wall_end)
        slots = wall.runs_between(lo.replace(tzinfo=UTC) - one, hi.replace(tzinfo=UTC) - one)
        if not slots:
            continue
        day = lo.date()
        midnight = datetime(day.year, day.month, day.day, tzinfo=UTC)
        wall_runs = len(wall.runs_between(midnight - one, midnight + timedelta(days=1) - one))
        around = sched.runs_between(tr.at - timedelta(days=2), tr.at + timedelta(days=2))
        zone_day = [r for r in around if r.astimezone(z).date() == day]
        in_fold = tuple(r for r in zone_day if lo <= r.astimezone(z).replace(tzinfo=None) < hi)
        if len(zone_day) != wall_runs:
            hits.append(DstHit(tr, day, tuple(s.replace(tzinfo=None) for s in slots), wall_runs,
                               len(zone_day), in_fold))
    return hits
