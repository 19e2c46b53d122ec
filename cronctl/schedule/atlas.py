"""The Atlas dialect (docs/BACKGROUND.md §2.2; its source calls it "Chapter 31 - Finite Jobs and Time-Based Work").

Pure: no I/O, never reads the clock. This is NOT the Kubernetes dialect; it is modelled for
operators who compare the two (``cronctl explain --dialect atlas``). What the seed states, and
what this module does:

- exactly five whitespace-separated fields, minute hour day-of-month month weekday, bounds
  0-59, 0-23, 1-31, 1-12, 0-6; comma lists, ranges, ``*`` and positive steps; no names, no
  ``?``, no descriptors, no ``@every``, no seconds or year field, no TZ= prefix;
- ``matches`` needs ALL five fields (day-of-month AND weekday; no robfig OR rule);
- ``Next`` truncates to the minute, starts at the following minute and steps one absolute minute
  at a time, matching the local wall clock in the schedule's IANA location, for at most a
  year-sized number of minute increments; nothing found -> zero time (``None`` here);
- ``RunOnce``: base = LastScheduleAt, else CreatedAt; the due list is the EARLIEST occurrences
  after the base through now, at most the missed limit (100 when unset or <= 0). A delayed
  controller therefore replays a backlog instead of picking only the latest time.

Assumptions where the seed is silent (stated so a reader can check them against the source):
the horizon is 366 x 24 x 60 minute increments; a step needs ``*`` or a range (``*/15``,
``10-50/20``): a step on a single number (``5/15``) is refused rather than guessed; numbers are
plain digits (no sign); empty list items are refused; a missing timezone means UTC.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from cronctl.errors import ScheduleError
from cronctl.timeutil import UTC

HORIZON_MINUTES = 366 * 24 * 60
DEFAULT_MISSED_LIMIT = 100
_MINUTE = timedelta(minutes=1)

_FIELDS = (("minute", 0, 59), ("hour", 0, 23), ("day-of-month", 1, 31), ("month", 1, 12),
           ("weekday", 0, 6))


@dataclass(frozen=True)
class AtlasSchedule:
    """A parsed Atlas schedule. Field tuples are sorted; weekday 0 = Sunday."""

    expr: str
    zone: str
    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    days_of_month: tuple[int, ...]
    months: tuple[int, ...]
    days_of_week: tuple[int, ...]
    # Present so that describe() and the DST report treat both dialects alike. Atlas has no
    # star bit (its rule is always AND), no TZ prefix and no @every.
    zone_from_prefix: bool = False
    dom_star: bool = False
    dow_star: bool = False
    every: None = None
    descriptor: None = None

    @property
    def tzinfo(self) -> ZoneInfo:
        return load_zone(self.zone)

    def matches(self, local: datetime) -> bool:
        """All five fields against the wall clock of ``local`` (Atlas ``matches``)."""
        return (local.minute in self.minutes and local.hour in self.hours
                and local.day in self.days_of_month and local.month in self.months
                and local.isoweekday() % 7 in self.days_of_week)

    def next_after(self, instant: datetime) -> datetime | None:
        """The first match at or after the minute following ``instant`` (aware), as aware UTC.

        None when nothing matches within the year-sized horizon (Atlas returns the zero time).
        """
        if instant.tzinfo is None:
            raise ValueError("next_after needs an aware datetime")
        try:
            return self._next_after(instant)
        except OverflowError:  # the search ran past year 9999: nothing that datetime can name
            return None

    def _next_after(self, instant: datetime) -> datetime | None:
        tz = self.tzinfo
        u = instant.astimezone(UTC).replace(second=0, microsecond=0) + _MINUTE
        minutes, hours = set(self.minutes), set(self.hours)
        used = 0
        while used < HORIZON_MINUTES:
            local = u.astimezone(tz)
            if (local.month in self.months and local.day in self.days_of_month
                    and local.isoweekday() % 7 in self.days_of_week):
                if local.hour in hours:
                    if local.minute in minutes:
                        return u
                    later = [m for m in self.minutes if m > local.minute]
                    step = (later[0] if later else 60) - local.minute
                else:
                    step = 60 - local.minute
            else:
                step = 1440 - (local.hour * 60 + local.minute)
            # The jump above is the minute-by-minute walk compressed: every skipped minute has
            # the same non-matching wall-clock field. That holds only while the UTC offset stays
            # the same, so across a DST change we fall back to single minutes (the seed's walk).
            step = min(step, HORIZON_MINUTES - used)
            if step > 1:
                target = u + step * _MINUTE
                if target.astimezone(tz).utcoffset() != local.utcoffset():
                    step = 1
            u += step * _MINUTE
            used += step
        return None

    def runs(self, after: datetime, count: int) -> list[datetime]:
        """Up to ``count`` consecutive occurrences after ``after`` (UTC)."""
        out: list[datetime] = []
        t: datetime | None = after
        while len(out) < count:
            t = self.next_after(t) if t is not None else None
            if t is None:
                break
            out.append(t)
        return out

    def due(self, base: datetime, now: datetime, missed_limit: int | None = None) -> list[datetime]:
        """Atlas ``Between``: the earliest occurrences in (base, now], at most the missed limit."""
        limit = missed_limit if missed_limit is not None and missed_limit > 0 else DEFAULT_MISSED_LIMIT
        out: list[datetime] = []
        t = base
        while len(out) < limit:
            n = self.next_after(t)
            if n is None or n > now:
                break
            out.append(n)
            t = n
        return out


def load_zone(name: str) -> ZoneInfo:
    """An IANA zone, or ScheduleError naming it."""
    try:
        return ZoneInfo(name)
    except (KeyError, ValueError, OSError):
        raise ScheduleError(f"unknown time zone {name!r}") from None


_LATE = ("Atlas's CreateCronJob stores the schedule unchecked; this error appears later, "
         "when Controller.RunOnce parses it")


def parse_atlas(expr: str, tz: str | None = None) -> AtlasSchedule:
    """Parse an Atlas five-field expression in the IANA location ``tz`` (None or '' = UTC).

    Raises ScheduleError naming the field and the value at fault (with a hint that Atlas itself
    only notices in RunOnce, not at creation).
    """
    try:
        return _parse_atlas(expr, tz)
    except ScheduleError as e:
        raise ScheduleError(e.message, hint=_LATE) from None


def _parse_atlas(expr: str, tz: str | None) -> AtlasSchedule:
    zone = tz or "UTC"
    load_zone(zone)
    fields = expr.split()
    if not fields:
        raise ScheduleError(f"atlas: empty schedule {expr!r}")
    if fields[0].startswith("@"):
        raise ScheduleError(f"atlas: descriptors such as {fields[0]!r} are not supported in {expr!r}; "
                            "write five numeric fields")
    if len(fields) != 5:
        raise ScheduleError(f"atlas: expected exactly 5 fields, found {len(fields)} in {expr!r}")
    sets = [_parse_field(f, name, lo, hi, expr) for f, (name, lo, hi) in zip(fields, _FIELDS)]
    return AtlasSchedule(expr=expr, zone=zone, minutes=sets[0], hours=sets[1], days_of_month=sets[2],
                         months=sets[3], days_of_week=sets[4])


def _parse_field(text: str, name: str, lo: int, hi: int, expr: str) -> tuple[int, ...]:
    values: set[int] = set()
    for item in text.split(","):
        if item == "":
            raise ScheduleError(f"atlas: empty list item in {name} '{text}' in {expr!r}")
        base, slash, step_text = item.partition("/")
        step = 1
        if slash:
            step = _number(step_text, name, item, expr, what="step")
            if step <= 0:
                raise ScheduleError(f"atlas: bad {name} step '{item}' in {expr!r}: must be positive")
        if base == "*":
            start, end = lo, hi
        elif "-" in base:
            a, _, b = base.partition("-")
            start = _number(a, name, item, expr)
            end = _number(b, name, item, expr)
            if start > end:
                raise ScheduleError(f"atlas: bad {name} '{item}' in {expr!r}: range start after end")
        else:
            start = end = _number(base, name, item, expr)
            if slash:
                raise ScheduleError(f"atlas: bad {name} '{item}' in {expr!r}: a step needs '*' or a range "
                                    f"(e.g. '{start}-{hi}/{step}')")
        for v in (start, end):
            if v < lo:
                raise ScheduleError(f"atlas: bad {name} '{item}' in {expr!r}: {v} below minimum ({lo})")
            if v > hi:
                raise ScheduleError(f"atlas: bad {name} '{item}' in {expr!r}: {v} above maximum ({hi})")
        values.update(range(start, end + 1, step))
    return tuple(sorted(values))


def _number(text: str, name: str, item: str, expr: str, *, what: str = "value") -> int:
    # Strict: digits only. Names (MON, JAN), '?', '+5', 'L', 'W', '#' are all refused.
    if not text.isascii() or not text.isdigit():
        raise ScheduleError(f"atlas: bad {name} '{item}' in {expr!r}: {what} {text!r} is not a number "
                            "(Atlas takes numbers only: no names, '?', L, W or #)")
    return int(text)
