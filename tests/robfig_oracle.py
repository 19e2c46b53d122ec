"""The oracle for the schedule engine: robfig/cron v3.0.1 ``SpecSchedule.Next`` (spec.go), ported
line by line, one step at a time, with the Go source beside each line.

Production has one walk, ``cronctl.schedule.walk.SpecWalker.next``, which follows the same loops
but jumps over the steps that cannot match. The tests compare that walk with this port (and both
with the reference vectors of the real robfig/cron in tests/data/vectors). The port shares only the
Go ``time`` helpers of ``cronctl.schedule.walk`` (``Zone.date`` = ``time.Date``, ``Zone.offset``,
the civil calendar), which tests/unit/test_dst_tables.py checks against ``zoneinfo``.

Import it from a test as ``from robfig_oracle import robfig_next, robfig_runs`` (tests/ is on
``sys.path``, like ``completion_support``).
"""

from __future__ import annotations

from datetime import datetime

from cronctl.schedule.parse import Schedule
from cronctl.schedule.walk import SpecWalker, civil_from_days, wall_seconds


def _fields(w: SpecWalker, u: int) -> tuple[int, int, int, int, int, int, int]:
    """(year, month, day, hour, minute, second, weekday) of instant ``u`` in the walker's zone."""
    wall = u + w.zone.offset(u)
    days, sod = divmod(wall, 86400)
    y, m, d = civil_from_days(days)
    return y, m, d, sod // 3600, (sod // 60) % 60, sod % 60, (days + 4) % 7


def _day_matches(w: SpecWalker, d: int, wd: int) -> bool:
    # func dayMatches(s *SpecSchedule, t time.Time) bool {
    #     var (
    #         domMatch bool = 1<<uint(t.Day())&s.Dom > 0
    #         dowMatch bool = 1<<uint(t.Weekday())&s.Dow > 0
    #     )
    #     if s.Dom&starBit > 0 || s.Dow&starBit > 0 {
    #         return domMatch && dowMatch
    #     }
    #     return domMatch || dowMatch
    # }
    dom_match = (w.dom >> d) & 1 == 1
    dow_match = (w.dow >> wd) & 1 == 1
    if w.dom_star or w.dow_star:
        return dom_match and dow_match
    return dom_match or dow_match


def robfig_next(w: SpecWalker, u0: int) -> int | None:
    """spec.go ``Next`` for the instant ``u0`` (whole Unix seconds): Unix seconds, or None for
    Go's zero time (nothing within five years)."""
    z = w.zone
    # t = t.Add(1*time.Second - time.Duration(t.Nanosecond())*time.Nanosecond)
    u = u0 + 1
    # added := false
    added = False
    y, mo, d, h, mi, s, wd = _fields(w, u)
    # yearLimit := t.Year() + 5
    year_limit = y + 5
    while True:  # WRAP:
        # if t.Year() > yearLimit { return time.Time{} }
        if y > year_limit:
            return None
        wrapped = False
        # for 1<<uint(t.Month())&s.Month == 0 {
        while not (w.month >> mo) & 1:
            # if !added { added = true; t = time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, loc) }
            if not added:
                added = True
                u = z.date(wall_seconds(y, mo, 1, 0, 0, 0))
                y, mo, d, h, mi, s, wd = _fields(w, u)
            # t = t.AddDate(0, 1, 0)
            u = z.date(wall_seconds(y, mo + 1, d, h, mi, s))
            y, mo, d, h, mi, s, wd = _fields(w, u)
            # if t.Month() == time.January { goto WRAP }
            if mo == 1:
                wrapped = True
                break
        if wrapped:
            continue
        # for !dayMatches(s, t) {
        while not _day_matches(w, d, wd):
            # if !added { added = true; t = time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc) }
            if not added:
                added = True
                u = z.date(wall_seconds(y, mo, d, 0, 0, 0))
                y, mo, d, h, mi, s, wd = _fields(w, u)
            # t = t.AddDate(0, 0, 1)
            u = z.date(wall_seconds(y, mo, d + 1, h, mi, s))
            y, mo, d, h, mi, s, wd = _fields(w, u)
            # if t.Hour() != 0 {
            #     if t.Hour() > 12 { t = t.Add(time.Duration(24-t.Hour()) * time.Hour)
            #     } else { t = t.Add(time.Duration(-t.Hour()) * time.Hour) }
            # }
            if h != 0:
                u += (24 - h) * 3600 if h > 12 else -h * 3600
                y, mo, d, h, mi, s, wd = _fields(w, u)
            # if t.Day() == 1 { goto WRAP }
            if d == 1:
                wrapped = True
                break
        if wrapped:
            continue
        # for 1<<uint(t.Hour())&s.Hour == 0 {
        while not (w.hour >> h) & 1:
            # if !added { added = true; t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), 0, 0, 0, loc) }
            if not added:
                added = True
                u = z.date(wall_seconds(y, mo, d, h, 0, 0))
                y, mo, d, h, mi, s, wd = _fields(w, u)
            # t = t.Add(1 * time.Hour)
            u += 3600
            y, mo, d, h, mi, s, wd = _fields(w, u)
            # if t.Hour() == 0 { goto WRAP }
            if h == 0:
                wrapped = True
                break
        if wrapped:
            continue
        # for 1<<uint(t.Minute())&s.Minute == 0 {
        while not (w.minute >> mi) & 1:
            # if !added { added = true; t = t.Truncate(time.Minute) }
            if not added:
                added = True
                u -= u % 60  # absolute, not wall-clock (Go's zero time is a whole minute of Unix time)
                y, mo, d, h, mi, s, wd = _fields(w, u)
            # t = t.Add(1 * time.Minute)
            u += 60
            y, mo, d, h, mi, s, wd = _fields(w, u)
            # if t.Minute() == 0 { goto WRAP }
            if mi == 0:
                wrapped = True
                break
        if wrapped:
            continue
        # for 1<<uint(t.Second())&s.Second == 0 {   (ParseStandard: the seconds field is "0")
        while s != 0:
            # if !added { added = true; t = t.Truncate(time.Second) }   (whole seconds already)
            if not added:
                added = True
            # t = t.Add(1 * time.Second)
            u += 1
            y, mo, d, h, mi, s, wd = _fields(w, u)
            # if t.Second() == 0 { goto WRAP }
            if s == 0:
                wrapped = True
                break
        if wrapped:
            continue
        # return t.In(origLocation)
        return u


def robfig_chain(sched: Schedule, start: datetime, n: int) -> list[int | None]:
    """``n`` successive ``Next`` calls of the oracle from ``start`` (floor whole seconds), as Unix
    seconds; None (Go's zero time) and everything after it is None. Not for ``@every``."""
    w = sched._walker
    u: int | None = int(start.timestamp() // 1)
    out: list[int | None] = []
    for _ in range(n):
        u = None if u is None else robfig_next(w, u)
        out.append(u)
    return out
