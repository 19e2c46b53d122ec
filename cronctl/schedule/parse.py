"""robfig/cron v3.0.1 ``ParseStandard``, reproduced exactly, and the :class:`Schedule` it returns.

What Kubernetes accepts is what this accepts (see docs/SEMANTICS.md §1): the ``TZ=``/``CRON_TZ=``
prefix, exact-match descriptors, ``@every`` with Go durations, five whitespace-separated fields,
comma lists with empty items skipped, ``*``/``?`` in every field, ranges, steps, ``N/S`` meaning
``N``-max, the ``*-5`` quirk, Go ``strconv.Atoi`` numbers (``+5``, ``05``), three-letter names in
month and day-of-week only, and the star bits that decide the day-of-month/day-of-week rule.

Every failure raises :class:`~cronctl.errors.ScheduleError` (as :class:`CronParseError`, which
also carries upstream's own error text in ``upstream``); nothing else escapes. Inputs on which
upstream panics (``"TZ=UTC"`` without a space) are clear errors here.

Pure and light: stdlib only (``from cronctl.schedule import parse`` imports no yaml/kubernetes).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
import functools
from functools import cached_property
from typing import TYPE_CHECKING

from cronctl.durations import GO_UNITS, parse_units
from cronctl.durations import go_quote as go_quote
from cronctl.durations import DurationError as _DurationError
from cronctl.errors import ScheduleError
from cronctl.schedule.walk import SpecWalker, Zone, civil_from_days, from_datetime_floor, get_zone

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["CronParseError", "Schedule", "parse", "parse_standard", "format_schedule",
           "load_location", "FIELD_NAMES"]

FIELD_NAMES = ("minute", "hour", "day-of-month", "month", "day-of-week")

_STAR_BIT = 1 << 63
# Go's unicode.IsSpace (what strings.Fields and strings.TrimSpace split/trim on). Python's
# str.isspace() also counts U+001C..U+001F, which Go does not.
_GO_SPACE = frozenset("\t\n\v\f\r \u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
                      "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")

_MONTH_NAMES = {"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7,
                "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12}
_DOW_NAMES = {"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6}
# (min, max, names) per field, as spec.go's bounds
_BOUNDS: tuple[tuple[int, int, dict[str, int] | None], ...] = (
    (0, 59, None), (0, 23, None), (1, 31, None), (1, 12, _MONTH_NAMES), (0, 6, _DOW_NAMES))

_DESCRIPTORS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
_INT64_MAX = (1 << 63) - 1


class CronParseError(ScheduleError):
    """A schedule robfig/cron v3 rejects. ``str(e)`` is cronctl's message (names the field and the
    value); ``upstream`` is the error text the Kubernetes controller would print (what appears in
    its UnparseableSchedule event)."""

    def __init__(self, message: str, *, upstream: str, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.upstream = upstream


# ---------------------------------------------------------------------------------------------
# Go helpers
# ---------------------------------------------------------------------------------------------

def go_fields(s: str) -> list[str]:
    """strings.Fields: split on runs of Go whitespace, no empty items."""
    out: list[str] = []
    cur: list[str] = []
    for ch in s:
        if ch in _GO_SPACE:
            if cur:
                out.append("".join(cur))
                cur = []
        else:
            cur.append(ch)
    if cur:
        out.append("".join(cur))
    return out


def go_trim_space(s: str) -> str:
    """strings.TrimSpace with Go's whitespace set."""
    i, j = 0, len(s)
    while i < j and s[i] in _GO_SPACE:
        i += 1
    while j > i and s[j - 1] in _GO_SPACE:
        j -= 1
    return s[i:j]


class _AtoiError(Exception):
    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind  # "invalid syntax" | "value out of range"


def go_atoi(s: str) -> int:
    """strconv.Atoi on 64-bit Go: optional sign, ASCII digits only, int64 range."""
    body = s[1:] if s[:1] in ("+", "-") else s
    if not body or any(not ("0" <= c <= "9") for c in body):
        raise _AtoiError("invalid syntax")
    digits = body.lstrip("0") or "0"
    if len(digits) > 19:  # also keeps int() away from Python's 4300-digit limit
        raise _AtoiError("value out of range")
    v = int(digits)
    if s[:1] == "-":
        v = -v
    if v > _INT64_MAX or v < -_INT64_MAX - 1:
        raise _AtoiError("value out of range")
    return v


def _go_lower(s: str) -> str:
    # Go's strings.ToLower uses simple case mapping: U+0130 lowers to plain "i" (Python: "i̇").
    return s.replace("\u0130", "i").lower()


def go_parse_duration(orig: str) -> int:
    """time.ParseDuration, in nanoseconds. Raises _DurationError with Go's message (the one
    grammar of cronctl.durations, with Go's units only: no ``d``, no bare number)."""
    return parse_units(orig, GO_UNITS)


# ---------------------------------------------------------------------------------------------
# Zones
# ---------------------------------------------------------------------------------------------

def load_location(name: str, *, local_zone: str = "UTC") -> str:
    """time.LoadLocation: returns the IANA name the walk uses ("" and "UTC" give "UTC", "Local"
    gives ``local_zone``, the controller's zone). Raises ScheduleError for unknown zones."""
    if name in ("", "UTC"):
        return "UTC"
    if name == "Local":
        name = local_zone
        if name in ("", "UTC"):
            return "UTC"
    try:
        get_zone(name)
    except LookupError:
        raise ScheduleError(f"unknown time zone '{name}'", hint=zone_suggestion(name)) from None
    return name


@functools.lru_cache(maxsize=1)
def _known_zones() -> tuple[str, ...]:
    """Every IANA name of the zone database, sorted: read once per process (walking the tzdata files
    took 20 ms, and lint of a file with many CronJobs in unknown zones asked for every one)."""
    import zoneinfo

    try:
        return tuple(sorted(zoneinfo.available_timezones()))
    except OSError:
        return ()


@functools.lru_cache(maxsize=256)  # lint's rules ask for each CronJob's zone more than once
def zone_suggestion(name: str) -> str | None:
    """"did you mean ...?" for an unknown zone: the same name in other case, else the closest IANA
    names (difflib, as close as a typo: ``Europe/Berln`` -> ``Europe/Berlin``); None when nothing is."""
    import difflib

    known = _known_zones()
    if not known:
        return None
    same = [z for z in known if z.lower() == name.lower()]
    close = same or difflib.get_close_matches(name, known, n=3, cutoff=0.8)
    if not close:
        return None
    return f"did you mean {' or '.join(close)}?" + (" (zone names are case-sensitive)" if same else "")


_LINKS: dict[str, str] | None = None


def zone_link_target(name: str) -> str | None:
    """The canonical zone an IANA *link* points to (``Europe/Kiev`` -> ``Europe/Kyiv``, ``EST`` ->
    ``America/Panama`` in tzdata 2024b+), or None for a canonical zone or an unknown one. The links
    (the database's ``backward`` names, kept for old configurations) are read from the ``L`` lines
    of the ``tzdata.zi`` files present: the system's and the tzdata package's. ``UTC`` and the
    ``Etc/`` names are not reported."""
    global _LINKS
    if _LINKS is None:
        import glob
        import sysconfig

        links: dict[str, str] = {}
        paths = ["/usr/share/zoneinfo/tzdata.zi",
                 *glob.glob(sysconfig.get_paths()["purelib"] + "/tzdata/zoneinfo/tzdata.zi")]
        for path in paths:
            try:
                with open(path, encoding="utf-8") as f:
                    for line in f:
                        if line.startswith("L "):
                            parts = line.split()
                            if len(parts) == 3:
                                links[parts[2]] = parts[1]
            except OSError:
                continue
        _LINKS = links
    if name in ("UTC", "Etc/UTC") or name.startswith("Etc/"):
        return None
    return _LINKS.get(name)


def format_schedule(expr: str, tz: str | None) -> str:
    """The controller's ``formatSchedule``: a schedule containing ``TZ`` is used as is (its
    prefix wins over ``timeZone``); otherwise ``timeZone`` becomes a ``TZ=`` prefix."""
    if "TZ" in expr:
        return expr
    if tz is not None:
        return f"TZ={tz} {expr}"
    return expr


# ---------------------------------------------------------------------------------------------
# The parser
# ---------------------------------------------------------------------------------------------

def _short(text: str, limit: int = 80) -> str:
    """A value as shown in a message: long input is cut (messages stay one readable line)."""
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _bad(field: int, item: str, expr: str, reason: str, upstream: str,
         hint: str | None = None) -> CronParseError:
    return CronParseError(f"bad {FIELD_NAMES[field]} '{_short(item)}' in '{_short(expr)}': "
                          f"{_short(reason)}", upstream=upstream, hint=hint)


def _parse_int_or_name(s: str, field: int, item: str, expr: str) -> int:
    names = _BOUNDS[field][2]
    if names is not None:
        v = names.get(_go_lower(s))
        if v is not None:
            return v
    return _must_parse_int(s, field, item, expr)


def _must_parse_int(s: str, field: int, item: str, expr: str) -> int:
    try:
        num = go_atoi(s)
    except _AtoiError as e:
        up = f"failed to parse int from {s}: strconv.Atoi: parsing {go_quote(s)}: {e.kind}"
        if e.kind == "value out of range":
            raise _bad(field, item, expr, "number too large", up) from None
        if s == "":
            what = "a number is missing"
        elif field == 3:
            what = f"'{s}' is not a number or a month name (jan..dec)"
        elif field == 4:
            what = f"'{s}' is not a number or a day name (sun..sat)"
        else:
            what = f"'{s}' is not a number"
        hint = None
        if any(c in s for c in "LW#H"):
            hint = "L, W, # and H are not supported by the Kubernetes cron parser"
        elif field in (3, 4) and s.isalpha() and len(s) != 3:
            hint = "names must be exactly three letters (e.g. mon, jan)"
        raise _bad(field, item, expr, what, up, hint) from None
    if num < 0:
        raise _bad(field, item, expr, f"negative number ({num})",
                   f"negative number ({num}) not allowed: {item}")
    return num


def _get_range(item: str, field: int, expr: str) -> int:
    lo_b, hi_b, _names = _BOUNDS[field]
    range_and_step = item.split("/")
    low_and_high = range_and_step[0].split("-")
    single = len(low_and_high) == 1
    extra = 0
    if low_and_high[0] in ("*", "?"):
        start, end = lo_b, hi_b
        extra = _STAR_BIT
    else:
        start = _parse_int_or_name(low_and_high[0], field, item, expr)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _parse_int_or_name(low_and_high[1], field, item, expr)
        else:
            raise _bad(field, item, expr, "more than one '-'", f"too many hyphens: {item}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _must_parse_int(range_and_step[1], field, item, expr)
        if single:
            end = hi_b  # "N/step" means "N-max/step"
        if step > 1:
            extra = 0
    else:
        raise _bad(field, item, expr, "more than one '/'", f"too many slashes: {item}")
    if start < lo_b:
        raise _bad(field, item, expr, f"below minimum ({lo_b})",
                   f"beginning of range ({start}) below minimum ({lo_b}): {item}")
    if end > hi_b:
        hint = "Sunday is 0; 7 is not accepted" if field == 4 and end == 7 else None
        raise _bad(field, item, expr, f"above maximum ({hi_b})",
                   f"end of range ({end}) above maximum ({hi_b}): {item}", hint)
    if start > end:
        raise _bad(field, item, expr, f"range start {start} is after its end {end} (ranges do not wrap)",
                   f"beginning of range ({start}) beyond end of range ({end}): {item}")
    if step == 0:
        raise _bad(field, item, expr, "step must be a positive number",
                   f"step of range should be a positive number: {item}")
    bits = 0
    for v in range(start, end + 1, step):
        bits |= 1 << v
    return bits | extra


def _get_field(text: str, field: int, expr: str) -> int:
    bits = 0
    for item in text.split(","):
        if item == "":
            continue  # strings.FieldsFunc skips empty list items
        bits |= _get_range(item, field, expr)
    return bits


def _values(bits: int, lo: int, hi: int) -> tuple[int, ...]:
    return tuple(v for v in range(lo, hi + 1) if (bits >> v) & 1)


_ALL = {f: sum(1 << v for v in range(_BOUNDS[f][0], _BOUNDS[f][1] + 1)) | _STAR_BIT
        for f in range(5)}


def parse_standard(spec: str, *, expr: str | None = None, local_zone: str = "UTC",
                   prefixed_by_us: bool = False) -> Schedule:
    """``cron.ParseStandard(spec)``. ``expr`` is the text to show in messages and to keep as
    ``Schedule.expr`` (defaults to ``spec``); ``prefixed_by_us`` marks a ``TZ=`` prefix that
    came from ``timeZone`` (formatSchedule), not from the user's text."""
    shown = spec if expr is None else expr
    if not isinstance(spec, str):
        raise CronParseError("the schedule must be a string", upstream="empty spec string")
    if len(spec) == 0:
        raise CronParseError("empty schedule", upstream="empty spec string")
    zone = local_zone if local_zone else "UTC"
    from_prefix = False
    if spec.startswith("TZ=") or spec.startswith("CRON_TZ="):
        i = spec.find(" ")
        eq = spec.find("=")
        if i < 0:
            raise CronParseError(
                f"'{shown}': a TZ=/CRON_TZ= prefix must be followed by a space and the schedule",
                upstream="panic: runtime error: slice bounds out of range [:-1]",
                hint="the Kubernetes cron parser crashes (panics) on this input")
        name = spec[eq + 1:i]
        try:
            zone = load_location(name, local_zone=zone)
        except ScheduleError as e:
            up = f"provided bad location {name}: unknown time zone {name}"
            if prefixed_by_us:
                raise CronParseError(f"unknown time zone '{name}'", upstream=up, hint=e.hint) from None
            raise CronParseError(f"unknown time zone '{name}' in '{shown}'", upstream=up, hint=e.hint) from None
        from_prefix = not prefixed_by_us
        spec = go_trim_space(spec[i:])
    if spec.startswith("@"):
        return _parse_descriptor(spec, shown, zone, from_prefix)
    fields = go_fields(spec)
    if len(fields) != 5:
        up = f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]"
        raise CronParseError(
            f"expected exactly 5 fields (minute hour day-of-month month day-of-week), found "
            f"{len(fields)} in '{shown}'", upstream=up,
            hint="seconds and year fields are not supported" if len(fields) in (6, 7) else None)
    bits = [_get_field(fields[f], f, shown) for f in range(5)]
    return _make(shown, zone, from_prefix, bits, None, None)


def _make(expr: str, zone: str, from_prefix: bool, bits: list[int], descriptor: str | None,
          every: timedelta | None) -> Schedule:
    return Schedule(
        expr=expr, zone=zone, zone_from_prefix=from_prefix,
        minutes=_values(bits[0], 0, 59), hours=_values(bits[1], 0, 23),
        days_of_month=_values(bits[2], 1, 31), months=_values(bits[3], 1, 12),
        days_of_week=_values(bits[4], 0, 6),
        dom_star=bool(bits[2] & _STAR_BIT), dow_star=bool(bits[4] & _STAR_BIT),
        descriptor=descriptor, every=every)


def _parse_descriptor(spec: str, shown: str, zone: str, from_prefix: bool) -> Schedule:
    a = _ALL
    if spec in ("@yearly", "@annually"):
        bits = [1, 1, 1 << 1, 1 << 1, a[4]]
    elif spec == "@monthly":
        bits = [1, 1, 1 << 1, a[3], a[4]]
    elif spec == "@weekly":
        bits = [1, 1, a[2], a[3], 1]
    elif spec in ("@daily", "@midnight"):
        bits = [1, 1, a[2], a[3], a[4]]
    elif spec == "@hourly":
        bits = [1, a[1], a[2], a[3], a[4]]
    elif spec.startswith("@every "):
        text = spec[len("@every "):]
        try:
            ns = go_parse_duration(text)
        except _DurationError as e:
            msg = e.reason
            reason = msg.removeprefix("time: ").replace(f" {go_quote(text)}", "")
            raise CronParseError(
                f"bad duration '{text}' in '{shown}': {reason} (Go durations: e.g. 90m, 1h30m, "
                f"units ns us ms s m h)", upstream=f"failed to parse duration {spec}: {msg}") from None
        if ns < 1_000_000_000:
            ns = 1_000_000_000
        secs = ns // 1_000_000_000  # sub-second part dropped (robfig Every)
        return Schedule(expr=shown, zone=zone, zone_from_prefix=from_prefix, minutes=(),
                        hours=(), days_of_month=(), months=(), days_of_week=(),
                        dom_star=False, dow_star=False, descriptor="@every",
                        every=timedelta(seconds=secs))
    else:
        hint = None
        if spec.strip().lower() in _DESCRIPTORS:
            hint = "descriptors are matched exactly: lower case, no extra spaces"
        elif spec.startswith("@reboot"):
            hint = "@reboot is not supported by Kubernetes"
        raise CronParseError(
            f"unknown descriptor '{spec}' in '{shown}' (accepted: @yearly, @annually, @monthly, "
            f"@weekly, @daily, @midnight, @hourly, @every <duration>)",
            upstream=f"unrecognized descriptor: {spec}", hint=hint)
    return _make(shown, zone, from_prefix, bits, spec, None)


def parse(expr: str, tz: str | None = None, *, local_zone: str = "UTC") -> Schedule:
    """Parse a CronJob schedule exactly as Kubernetes does.

    ``tz`` is ``spec.timeZone`` (IANA name; None = the controller's local zone, ``local_zone``,
    UTC by default). As the controller's ``formatSchedule`` does, a schedule containing ``TZ``
    is used as is (a ``TZ=``/``CRON_TZ=`` prefix wins over ``tz``); otherwise ``tz`` becomes a
    ``TZ=`` prefix. Raises ScheduleError (a :class:`CronParseError` for syntax) naming the field
    and value.
    """
    if not isinstance(expr, str):
        raise ScheduleError(f"the schedule must be a string, not {type(expr).__name__}")
    if tz is not None and not isinstance(tz, str):
        raise ScheduleError(f"the time zone must be a string, not {type(tz).__name__}")
    if "TZ" not in expr and tz is not None:
        load_location(tz, local_zone=local_zone)  # unknown zone: clear error, not a parse error
        return parse_standard(f"TZ={tz} {expr}", expr=expr, local_zone=local_zone,
                              prefixed_by_us=True)
    return parse_standard(expr, local_zone=local_zone)


# ---------------------------------------------------------------------------------------------
# The schedule
# ---------------------------------------------------------------------------------------------

def _mask(values: tuple[int, ...]) -> int:
    m = 0
    for v in values:
        m |= 1 << v
    return m


@dataclass(frozen=True)
class Schedule:
    """A parsed schedule (robfig ``SpecSchedule`` or ``ConstantDelaySchedule``) and its walk."""

    expr: str  # the text as given
    zone: str  # IANA name the walk uses ("UTC" when tz is None and no prefix)
    zone_from_prefix: bool  # True when the zone came from a TZ=/CRON_TZ= prefix
    minutes: tuple[int, ...]  # sorted values of each field (empty: field made only of commas)
    hours: tuple[int, ...]
    days_of_month: tuple[int, ...]
    months: tuple[int, ...]
    days_of_week: tuple[int, ...]  # 0 = Sunday
    dom_star: bool  # robfig "star bit" of day-of-month (* or ? with no step / step 1)
    dow_star: bool
    descriptor: str | None  # "@daily", "@hourly", "@every", ... when written as a descriptor
    every: timedelta | None  # @every <d> (ConstantDelaySchedule), rounded as robfig does

    def __getstate__(self) -> dict[str, object]:
        # pickle/deepcopy the fields only, not the cached walker (it holds a lock)
        return {f: getattr(self, f) for f in self.__dataclass_fields__}

    @cached_property
    def _walker(self) -> SpecWalker:
        return SpecWalker(_mask(self.minutes), _mask(self.hours), _mask(self.days_of_month),
                          _mask(self.months), _mask(self.days_of_week), self.dom_star,
                          self.dow_star, self._zone)

    @cached_property
    def _zone(self) -> Zone:
        return get_zone(self.zone)

    @cached_property
    def _delay(self) -> int:
        return 0 if self.every is None else int(self.every.total_seconds())

    def next_unix(self, secs: int) -> int | None:
        """``Next`` on whole Unix seconds (the instant's sub-second part already dropped)."""
        if self.every is not None:
            return secs + self._delay
        return self._walker.next(secs)

    def next_after(self, instant: datetime) -> datetime | None:
        """The first run strictly after ``instant`` (aware), as an aware UTC datetime; None when
        nothing fires within 5 years (upstream returns Go's zero time)."""
        secs = _floor_secs(instant)
        r = self.next_unix(secs)
        return None if r is None or r > _MAX_UNIX else _to_dt(r)

    def _stepper(self) -> Callable[[int], int | None]:
        if self.every is not None:
            delay = self._delay
            return lambda u: u + delay
        return self._walker.next

    def matches(self, instant: datetime) -> bool:
        """Whether ``instant`` (aware) matches the fields in the schedule's local wall time, with
        robfig's day-of-month/day-of-week rule. Every run ``next_after`` returns matches, except
        where spec.go's real-time stepping crosses an offset change (a skipped midnight, Lord
        Howe's 30-minute shift): then upstream runs at a time the fields do not name, and so does
        this engine; ``matches`` lets callers point such runs out. Always True for ``@every``."""
        if self.every is not None:
            return True
        secs = _floor_secs(instant)
        w = secs + self._zone.offset(secs)
        days, sod = divmod(w, 86400)
        _y, m, d = civil_from_days(days)
        walker = self._walker
        return (sod % 60 == 0 and (walker.minute >> (sod // 60 % 60)) & 1 == 1
                and (walker.hour >> (sod // 3600)) & 1 == 1 and (walker.month >> m) & 1 == 1
                and walker.day_matches(d, (days + 4) % 7))

    def wall_clock_deviations(self, after: datetime, until: datetime
                              ) -> tuple[tuple[datetime, ...], tuple[datetime, ...]]:
        """Where upstream's walk departs from a plain wall-clock reading of the schedule, for the
        chain of runs after ``after`` up to ``until``: ``(skipped, extra)``.

        ``skipped``: instants whose local wall time matches the fields but that the controller
        never runs (beyond the normal DST rule: a wall time in a spring-forward gap does not
        exist, so it is not expected at all; a fall-back fold is expected twice). ``extra``: runs
        at wall times the fields do not name. Both come from spec.go stepping hours and minutes
        in real time across an offset change (e.g. Lord Howe's 30-minute fall-back loses the next
        whole-hour runs; Santiago's skipped midnight turns a Saturday 01:00 run into Sunday's).
        Only the 3 days after each offset change are compared (all known cases are there).
        ``@every`` has none."""
        if self.every is not None:
            return ((), ())
        a = _floor_secs(after)
        b = min(_floor_secs(until), _MAX_UNIX)
        if b <= a:
            return ((), ())
        z = self._zone
        walker = self._walker
        windows: list[tuple[int, int]] = []
        u = a - 3 * 86400
        while u <= b:
            seg_lo, seg_hi, _off = z.segment(u)
            if seg_hi > b or seg_hi >= (1 << 61):
                break
            lo_w, hi_w = max(a, seg_hi - 86400), min(b, seg_hi + 3 * 86400)
            if lo_w < hi_w:
                if windows and lo_w <= windows[-1][1]:
                    windows[-1] = (windows[-1][0], hi_w)
                else:
                    windows.append((lo_w, hi_w))
            u = seg_hi
        if not windows:
            return ((), ())
        actual = [int(t.timestamp()) for t in self.runs_between(after, _to_dt(windows[-1][1]))]
        skipped: list[int] = []
        extra: list[int] = []
        for lo_w, hi_w in windows:
            got = {t for t in actual if lo_w < t <= hi_w}
            want = set(walker.wall_matches(lo_w, hi_w))
            skipped.extend(want - got)
            extra.extend(got - want)
        return (tuple(_to_dt(t) for t in sorted(skipped)), tuple(_to_dt(t) for t in sorted(extra)))

    def runs(self, after: datetime, count: int) -> list[datetime]:
        """Up to ``count`` successive runs strictly after ``after`` (each Next of the previous)."""
        out: list[datetime] = []
        append = out.append
        u: int | None = _floor_secs(after)
        nxt = self._stepper()
        fts = datetime.fromtimestamp
        for _ in range(count):
            u = nxt(u)  # type: ignore[arg-type]
            if u is None or u > _MAX_UNIX:
                break
            append(fts(u, _UTC))
        return out

    def runs_between(self, after: datetime, until: datetime) -> list[datetime]:
        """Every run with ``after < t <= until``."""
        out: list[datetime] = []
        append = out.append
        end = min(_floor_secs(until), _MAX_UNIX)
        u: int | None = _floor_secs(after)
        nxt = self._stepper()
        fts = datetime.fromtimestamp
        while True:
            u = nxt(u)  # type: ignore[arg-type]
            if u is None or u > end:
                break
            append(fts(u, _UTC))
        return out


_MAX_UNIX = 253402300799 - 86400 * 366  # keep results inside datetime's range
_UTC = timezone.utc


def _floor_secs(instant: datetime) -> int:
    if not isinstance(instant, datetime):
        raise ScheduleError(f"expected a datetime, got {type(instant).__name__}")
    try:
        secs, _micros = from_datetime_floor(instant)
    except ValueError:
        raise ScheduleError(f"naive datetime {instant.isoformat()}: an aware instant is needed") from None
    return secs


def _to_dt(u: int) -> datetime:
    return datetime.fromtimestamp(u, _UTC)
