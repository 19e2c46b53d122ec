"""A parsed schedule in plain English, true to the dialect's day rule.

Pure: no I/O, no clock. The text is built from the *parsed* value sets, not from the source
text, so ``5/15``, ``5-59/15`` and ``5,20,35,50`` read the same, and names (``MON-FRI``) come
out as English day names.

The one place where robfig/cron surprises people is the day rule (docs/SEMANTICS.md §2): when
neither day-of-month nor day-of-week carries the "star bit", a day matches if EITHER field
matches ("on day 13 of the month, or on Fridays"). The Atlas dialect (docs/BACKGROUND.md §2.2) always needs
BOTH ("on day 13 of the month, if it is a Friday"). :func:`describe` says which.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Protocol, Sequence

WEEKDAYS = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")
# Longest each month can be (February: 29, leap years).
MONTH_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)

FIELD_NAMES = ("minute", "hour", "day-of-month", "month", "day-of-week")

# Up to this many (hour, minute) pairs are listed one by one ("at 06:30, 10:30 and 14:30").
_LIST_TIMES_MAX = 6


class Fields(Protocol):
    """What :func:`describe` needs: the parsed value sets of a five-field schedule.

    ``cronctl.schedule.Schedule`` (robfig dialect) and ``cronctl.schedule.atlas.AtlasSchedule``
    both provide it.
    """

    @property
    def zone(self) -> str: ...
    @property
    def zone_from_prefix(self) -> bool: ...
    @property
    def minutes(self) -> tuple[int, ...]: ...
    @property
    def hours(self) -> tuple[int, ...]: ...
    @property
    def days_of_month(self) -> tuple[int, ...]: ...
    @property
    def months(self) -> tuple[int, ...]: ...
    @property
    def days_of_week(self) -> tuple[int, ...]: ...
    @property
    def dom_star(self) -> bool: ...
    @property
    def dow_star(self) -> bool: ...
    @property
    def every(self) -> timedelta | None: ...


def go_duration(d: timedelta) -> str:
    """A whole-second duration written as Go writes it, without zero parts: ``1h30m``, ``90s`` -> ``1m30s``."""
    total = int(d.total_seconds())
    h, rest = divmod(total, 3600)
    m, s = divmod(rest, 60)
    parts = [f"{h}h" if h else "", f"{m}m" if m else "", f"{s}s" if s else ""]
    return "".join(parts) or "0s"


def join_words(items: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    if not items:
        return ""
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + " and " + items[-1]


def ordinal(n: int) -> str:
    if 10 <= n % 100 <= 20:
        suffix = "th"
    else:
        suffix = {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _step_of(values: Sequence[int], hi: int, lo: int | None = None) -> int | None:
    """The step when ``values`` is ``start, start+k, ...`` running up to the field's maximum.

    Needs k >= 2 and 3 values, or 2 values starting at the field's minimum ``lo`` (``*/30``).
    """
    if len(values) < 2 or (len(values) == 2 and (lo is None or values[0] != lo)):
        return None
    k = values[1] - values[0]
    if k < 2:
        return None
    if any(b - a != k for a, b in zip(values, values[1:])):
        return None
    if values[-1] + k <= hi:  # stops early: a range with a step, not "to the end"
        return None
    return k


def _ap_step(values: Sequence[int]) -> int | None:
    """The step k >= 2 of an arithmetic progression of at least 3 values, wherever it ends."""
    if len(values) < 3:
        return None
    k = values[1] - values[0]
    if k < 2 or any(b - a != k for a, b in zip(values, values[1:])):
        return None
    return k


def _contiguous(values: Sequence[int]) -> bool:
    return len(values) >= 2 and values[-1] - values[0] == len(values) - 1


def _hhmm(h: int, m: int) -> str:
    return f"{h:02d}:{m:02d}"


def never_fires_reason(s: Fields, *, and_rule: bool = False) -> str | None:
    """Why the schedule can never fire, or None when it can.

    Two causes exist: a field made only of commas (robfig parses it to an empty set), and a
    day-of-month that no listed month has (``0 0 30 2 *``): robfig does not check dates exist.
    With the robfig OR rule a restricted day-of-week rescues any day-of-month.
    """
    for name, vals in zip(FIELD_NAMES, (s.minutes, s.hours, s.days_of_month, s.months, s.days_of_week)):
        if not vals:
            return f"the {name} field has no values (only commas): this schedule never fires"
    dom_decides = (not s.dom_star) and (s.dow_star or and_rule)
    if not dom_decides:
        return None
    if any(d <= MONTH_DAYS[m - 1] for m in s.months for d in s.days_of_month):
        return None
    days = [str(d) for d in s.days_of_month]
    months = [MONTHS[m - 1] for m in s.months]
    noun = "day" if len(days) == 1 else "days"
    verb = "exists" if len(days) == 1 else "exist"
    return f"{noun} {join_words(days)} of {join_words(months)} never {verb}: this schedule never fires"


def _time_phrase(minutes: tuple[int, ...], hours: tuple[int, ...]) -> str:
    all_min = len(minutes) == 60
    all_hr = len(hours) == 24
    if len(minutes) * len(hours) <= _LIST_TIMES_MAX:
        return "at " + join_words([_hhmm(h, m) for h in hours for m in minutes])
    if len(minutes) == 1:
        m = minutes[0]
        if all_hr:
            return "every hour, on the hour" if m == 0 else f"every hour at minute {m}"
        k = _step_of(hours, 23, 0)
        if k is not None:
            return f"every {k} hours from {_hhmm(hours[0], m)}"
        k = _ap_step(hours)
        if k is not None:  # a stepped range that stops early: 0-20/2
            return f"every {k} hours from {_hhmm(hours[0], m)} through {_hhmm(hours[-1], m)}"
        if _contiguous(hours):
            return f"every hour from {_hhmm(hours[0], m)} through {_hhmm(hours[-1], m)}"
        return "at " + join_words([_hhmm(h, m) for h in hours])
    # Several minutes per hour.
    k = _step_of(minutes, 59, 0)
    if all_min:
        every = "every minute"
    elif k is not None and minutes[0] == 0:
        every = f"every {k} minutes"
    else:
        every = ""
    if every:
        if all_hr:
            return every
        if len(hours) == 1 or _contiguous(hours):
            return f"{every} from {_hhmm(hours[0], minutes[0])} through {_hhmm(hours[-1], minutes[-1])}"
        return f"{every} during hours {_hours_words(hours)}"
    if k is not None:
        mins = f"every {k} minutes from minute {minutes[0]}"
    elif _contiguous(minutes) and len(minutes) >= 3:
        mins = f"at minutes {minutes[0]} through {minutes[-1]}"
    else:
        mins = "at minutes " + join_words([str(m) for m in minutes])
    if all_hr:
        return f"{mins} of every hour"
    return f"{mins} during hours {_hours_words(hours)}"


def _hours_words(hours: tuple[int, ...]) -> str:
    if _contiguous(hours) and len(hours) >= 3:
        return f"{hours[0]:02d} through {hours[-1]:02d}"
    return join_words([f"{h:02d}" for h in hours])


def _dom_phrase(days: tuple[int, ...]) -> str:
    if len(days) == 1:
        return f"on day {days[0]} of the month"
    k = _step_of(days, 31)
    if k is not None:
        return f"on every {ordinal(k)} day of the month from day {days[0]}"
    if _contiguous(days) and len(days) >= 3:
        return f"on days {days[0]} through {days[-1]} of the month"
    return "on days " + join_words([str(d) for d in days]) + " of the month"


def _dow_phrase(dows: tuple[int, ...]) -> str:
    if tuple(dows) == (1, 2, 3, 4, 5):
        return "on weekdays (Monday through Friday)"
    if tuple(dows) == (0, 6):
        return "on weekends (Saturday and Sunday)"
    if _contiguous(dows) and len(dows) >= 3:
        return f"on {WEEKDAYS[dows[0]]} through {WEEKDAYS[dows[-1]]}"
    return "on " + join_words([WEEKDAYS[d] + "s" for d in dows])


def _dow_if(dows: tuple[int, ...]) -> str:
    """The AND-rule clause: 'if it is a Friday'."""
    if tuple(dows) == (1, 2, 3, 4, 5):
        return "if it is a weekday (Monday through Friday)"
    names = [WEEKDAYS[d] for d in dows]
    if _contiguous(dows) and len(dows) >= 3:
        return f"if it is a {names[0]} through {names[-1]}"
    return "if it is a " + join_words(names).replace(" and ", " or ")


def _day_phrase(s: Fields, and_rule: bool) -> str:
    dom_all = len(s.days_of_month) == 31
    dow_all = len(s.days_of_week) == 7
    if and_rule:
        # Atlas: both fields must match; a full field simply matches every day.
        if dom_all and dow_all:
            return "every day"
        if dow_all:
            return _dom_phrase(s.days_of_month)
        if dom_all:
            return _dow_phrase(s.days_of_week)
        return f"{_dom_phrase(s.days_of_month)}, {_dow_if(s.days_of_week)}"
    # robfig (spec.go dayMatches): a star bit on either field -> AND, i.e. the other decides.
    if s.dom_star and s.dow_star:
        return "every day"
    if s.dow_star:
        return "every day" if dom_all else _dom_phrase(s.days_of_month)
    if s.dom_star:
        return "every day" if dow_all else _dow_phrase(s.days_of_week)
    # robfig: neither field starred -> OR. A full list (1-31, 0-6) is not a star, so it makes
    # every day match whatever the other field says.
    either = f"{_dom_phrase(s.days_of_month)}, or {_dow_phrase(s.days_of_week)}"
    if dom_all or dow_all:
        return f"every day ({either}: robfig/cron matches a day when EITHER field matches)"
    return either


def _month_phrase(months: tuple[int, ...]) -> str:
    if len(months) == 12:
        return ""
    if _contiguous(months) and len(months) >= 3:
        return f"in {MONTHS[months[0] - 1]} through {MONTHS[months[-1] - 1]}"
    return "in " + join_words([MONTHS[m - 1] for m in months])


def zone_phrase(s: Fields, time_zone: str | None) -> str:
    """Where the wall clock is read: the prefix zone, spec.timeZone, or the controller's local zone."""
    if s.zone_from_prefix:
        return f"in {s.zone} (from the TZ= prefix in the schedule, which wins over spec.timeZone)"
    if time_zone is None:
        return f"in the controller's local zone ({s.zone})"
    return f"in {s.zone}"


def describe(s: Fields, time_zone: str | None = None, *, and_rule: bool = False) -> str:
    """The schedule in one English sentence.

    ``time_zone`` is what the caller gave as ``spec.timeZone`` (None = the controller's local
    zone, which the sentence says). ``and_rule`` selects the Atlas day rule (both day fields
    must match) instead of robfig's OR rule.
    """
    if s.every is not None:
        # robfig ConstantDelaySchedule: next = previous + delay, anchored on the controller's
        # earliest time; no zone, no DST.
        return f"every {go_duration(s.every)}, counted from the last run, ignoring time zones"
    never = never_fires_reason(s, and_rule=and_rule)
    if never is not None:
        return never
    time = _time_phrase(s.minutes, s.hours)
    parts = [time]
    day = _day_phrase(s, and_rule)
    month = _month_phrase(s.months)
    dom_decides = (not s.dom_star) and (s.dow_star or and_rule) and len(s.days_of_week) == 7
    if dom_decides and len(s.days_of_month) == 1 and len(s.months) == 1:
        # "on February 29" reads better than "on day 29 of the month in February".
        day, month = f"on {MONTHS[s.months[0] - 1]} {s.days_of_month[0]}", ""
    # "every day" only after fixed times of day ("at 09:00 every day"); "every 15 minutes" and
    # "at minutes 0 and 30 of every hour" already say it.
    if day != "every day" or (time.startswith("at ") and "hour" not in time):
        parts.append(day)
    if month:
        parts.append(month)
    text = " ".join(parts)
    notes = _partial_dates(s, and_rule)
    if notes:
        text += f" ({notes})"
    return f"{text}, {zone_phrase(s, time_zone)}"


def _partial_dates(s: Fields, and_rule: bool) -> str:
    """A note when some listed days do not exist in some months (day 31, Feb 29)."""
    dom_decides = (not s.dom_star) and (s.dow_star or and_rule)
    if not dom_decides:
        return ""
    if s.days_of_month == (29,) and s.months == (2,):
        return "leap years only"
    if len(s.days_of_month) == 1:
        d = s.days_of_month[0]
        short = [m for m in s.months if d > MONTH_DAYS[m - 1]]
        if short:
            return f"months without a day {d} are skipped"
        if d == 29 and 2 in s.months:
            return "February only in leap years"
    elif s.days_of_month and min(s.days_of_month) > 28 and 2 in s.months:
        return "February only in leap years" if 29 in s.days_of_month else ""
    return ""
