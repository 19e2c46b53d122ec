"""robfig/cron v3.0.1 ``SpecSchedule.Next()`` and ``ConstantDelaySchedule.Next()``, exactly.

The walk works on Go's ``time`` package semantics, on integer Unix seconds.

robfig/cron's ``Next()`` mixes wall-clock arithmetic (``time.Date``, ``AddDate``) with absolute
arithmetic (``t.Add``), and which of the two is used decides what happens in DST gaps and folds.
So the walk here does not use Python's ``datetime`` arithmetic (whose fold/gap rules differ);
it uses these helpers, which copy Go's rules:

* an instant is an ``int`` of Unix seconds; its wall clock in a zone is ``u + offset(u)``;
* ``Zone.date`` resolves a (normalised) wall time the way ``time.Date`` does: look the offset up at
  the wall time read as UTC, then once more at the instant that offset gives, and use the second
  one (``W - off(W - off(W))``). In a gap this gives the pre-gap wall time read with the post-gap
  offset in zones west of UTC and the other way round east of it, exactly as Go does.

Pure: stdlib only.
"""

from __future__ import annotations

import bisect
import threading
import zoneinfo
from datetime import datetime, timedelta, timezone

GO_ZERO_UNIX = -62135596800  # Go's zero time (0001-01-01T00:00:00Z) as Unix seconds
_UTC = timezone.utc


def days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of the proleptic Gregorian date (Howard Hinnant's algorithm)."""
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def civil_from_days(z: int) -> tuple[int, int, int]:
    """(year, month, day) of a day number since 1970-01-01."""
    z += 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return (y + (m <= 2), m, d)


def wall_seconds(y: int, mo: int, d: int, h: int, mi: int, s: int) -> int:
    """Go's ``time.Date`` normalisation of a wall time, as seconds of that wall time read as UTC."""
    yq, m0 = divmod(mo - 1, 12)
    return (days_from_civil(y + yq, m0 + 1, 1) + d - 1) * 86400 + h * 3600 + mi * 60 + s


class Zone:
    """A time zone as Go's ``*time.Location`` behaves for instants in Unix seconds.

    ``offset(u)`` is the UTC offset in seconds at instant ``u``. It is answered from a sorted table
    of transitions (``trans``: instants where the offset changes; ``offs[i]``: the offset from
    ``trans[i-1]`` up to ``trans[i]``), built from the zone's data through ``zoneinfo`` and extended
    lazily year by year, so the hot path is a ``bisect`` with no ``datetime`` objects.
    """

    __slots__ = ("name", "fixed", "trans", "offs", "_zi", "_lo", "_hi", "_lock", "_step",
                 "_loaded", "_moved")

    _WINDOW = 366 * 86400
    _FAR = 1 << 62

    def __init__(self, name: str, zi: zoneinfo.ZoneInfo | None) -> None:
        self.name = name
        self._zi = zi
        self._lock = threading.Lock()
        self.trans: list[int] = []  # instants where the offset changes (first second of the new one)
        self.offs: list[int] = []  # offs[i]: offset before trans[i] (and after trans[i-1])
        self.fixed: int | None = 0 if zi is None else None
        self._lo = 0  # the table is complete for instants in [_lo, _hi)
        self._hi = 0
        self._step = 3 * 3600  # sampling step when the TZif data cannot be read directly
        self._loaded = False
        # (change, time of day) -> days next to that offset change whose wall time of day
        # time.Date moves (see walls_exist)
        self._moved: dict[tuple[int, int], tuple[int, ...]] = {}

    def _load_explicit(self) -> None:
        """Fill the table from the zone's TZif transitions, read the way ``zoneinfo`` reads them
        (TZPATH first, then the ``tzdata`` package), so both agree. Instants after the last
        listed transition follow the file's POSIX TZ footer: found by sampling ``zoneinfo``
        (which implements the footer) once a day and bisecting. When the private reader is not
        available, the whole table is built by sampling every 3 hours instead."""
        self._loaded = True
        try:
            from zoneinfo import _common, _tzpath

            path = _tzpath.find_tzfile(self.name)
            if path is not None:
                with open(path, "rb") as f:
                    data = _common.load_data(f)
            else:
                with _common.load_tzdata(self.name) as f:
                    data = _common.load_data(f)
            trans_idx, trans_utc, utcoff, _isdst, _abbr, tz_str = data
        except Exception:  # pragma: no cover - depends on the Python build
            return
        has_rules = tz_str is not None and b"," in tz_str  # a footer with DST rules
        if not trans_utc:
            if not has_rules:
                self.fixed = self._probe(0)
            return
        trans: list[int] = []
        offs: list[int] = [self._probe(int(trans_utc[0]) - 1)]
        for t, i in zip(trans_utc, trans_idx):
            o = int(utcoff[i])
            if o != offs[-1]:
                trans.append(int(t))
                offs.append(o)
        # the listed data must agree with zoneinfo itself, or it is not used
        for t, o in zip(trans[-4:], offs[-4:]):
            if self._probe(t) != o:  # pragma: no cover
                return
        self.trans = trans
        self.offs = offs
        self._lo = -self._FAR
        self._hi = int(trans_utc[-1]) + 1 if has_rules else self._FAR
        self._step = 86400

    def _probe(self, u: int) -> int:
        """The offset at ``u`` straight from zoneinfo (slow path, only used to build the table)."""
        zi = self._zi
        if zi is None:
            return 0
        u = max(min(u, 253402300799 - 2 * 86400), -62135596800 + 2 * 86400)
        off = datetime.fromtimestamp(u, zi).utcoffset()
        return 0 if off is None else int(off.total_seconds())

    def _find_changes(self, a: int, b: int, oa: int) -> tuple[list[int], list[int]]:
        """Offset changes at instants in (a, b], given the offset ``oa`` at ``a``: sampled every
        ``_step`` seconds, each change located to the second by bisection."""
        ts: list[int] = []
        os_: list[int] = []
        step = self._step
        prev_u, prev_o = a, oa
        while prev_u < b:
            nu = min(prev_u + step, b)
            no = self._probe(nu)
            if no == prev_o:
                prev_u = nu
                continue
            lo, hi = prev_u, nu  # offset(lo) == prev_o, offset(hi) != prev_o
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if self._probe(mid) == prev_o:
                    lo = mid
                else:
                    hi = mid
            prev_o = self._probe(hi)
            ts.append(hi)
            os_.append(prev_o)
            prev_u = hi  # rescan the rest of the window: there may be a second change in it
        return ts, os_

    def _cover(self, u: int) -> None:
        """Make the table complete around ``u`` (whole windows, lazily, both directions)."""
        with self._lock:
            if not self._loaded:
                self._load_explicit()
            if self.fixed is not None:
                return
            if not self.offs:
                y = civil_from_days(u // 86400)[0]
                self._lo = self._hi = days_from_civil(y, 1, 1) * 86400
                self.offs = [self._probe(self._lo)]
            while self._hi <= u:
                a = self._hi
                b = a + self._WINDOW
                ts, os_ = self._find_changes(a, b, self.offs[-1])
                if ts:
                    # new lists, offs before trans: a concurrent reader never indexes past offs
                    self.offs = self.offs + os_
                    self.trans = self.trans + ts
                self._hi = b
            while self._lo > u:
                b = self._lo
                a = b - self._WINDOW
                oa = self._probe(a)
                ts, os_ = self._find_changes(a, b, oa)
                self.trans[0:0] = ts
                self.offs = [oa] + os_ + self.offs[1:]
                self._lo = a

    def offset(self, u: int) -> int:
        """UTC offset in seconds at instant ``u``."""
        if self.fixed is not None:
            return self.fixed
        if not (self._lo <= u < self._hi):
            self._cover(u)
            if self.fixed is not None:
                return self.fixed
        return self.offs[bisect.bisect_right(self.trans, u)]

    def segment(self, u: int) -> tuple[int, int, int]:
        """(lo, hi, offset): an interval ``lo <= u < hi`` over which the offset is constant
        (``hi`` may stop early at the end of the table's coverage; never too wide)."""
        if self.fixed is not None:
            return (-self._FAR, self._FAR, self.fixed)
        if not (self._lo <= u < self._hi):
            self._cover(u)
            if self.fixed is not None:
                return (-self._FAR, self._FAR, self.fixed)
        trans = self.trans
        i = bisect.bisect_right(trans, u)
        lo = trans[i - 1] if i > 0 else self._lo
        hi = trans[i] if i < len(trans) else self._hi
        return (lo, hi, self.offs[i])

    def constant_between(self, lo: int, hi: int) -> bool:
        """True when the offset does not change at any instant in (lo, hi]."""
        if self.fixed is not None:
            return True
        if not (self._lo <= lo and hi < self._hi):
            self._cover(lo)
            self._cover(hi)
            if self.fixed is not None:
                return True
        i = bisect.bisect_right(self.trans, lo)
        return i == len(self.trans) or self.trans[i] > hi

    def date(self, w: int) -> int:
        """Go ``time.Date`` in this zone for the wall time ``w`` (wall seconds read as UTC)."""
        return w - self.offset(w - self.offset(w))

    def walls_exist(self, d0: int, d1: int, tod: int) -> bool:
        """True when ``time.Date`` keeps the wall time ``tod`` (seconds, ``0 <= tod < 86400``) of
        every local day ``d0 < day <= d1`` (day numbers since 1970-01-01): the instant it gives
        shows that same wall time (a wall time in a gap comes back moved; one in a fold comes back
        as one of its two instants, which is fine). Only days within two days of an offset change
        can fail; those are tried, and remembered per change."""
        if self.fixed is not None:
            return True
        a = (d0 - 2) * 86400
        b = (d1 + 3) * 86400
        if not (self._lo <= a and b < self._hi):
            self._cover(a)
            self._cover(b)
            if self.fixed is not None:
                return True
        trans = self.trans
        for k in range(bisect.bisect_left(trans, a), bisect.bisect_right(trans, b)):
            t = trans[k]
            moved = self._moved.get((t, tod))
            if moved is None:
                c = t // 86400
                moved = tuple(day for day in range(c - 3, c + 4)
                              if self._wall_of(self.date(day * 86400 + tod)) != day * 86400 + tod)
                if len(self._moved) > 4096:
                    self._moved.clear()
                self._moved[(t, tod)] = moved
            for day in moved:
                if d0 < day <= d1:
                    return False
        return True

    def _wall_of(self, u: int) -> int:
        return u + self.offset(u)


_zones: dict[str, Zone] = {}
_zones_lock = threading.Lock()


def get_zone(name: str) -> Zone:
    """The :class:`Zone` for an IANA name ("UTC" is the fixed zero-offset zone). Raises
    ``LookupError`` for names Go's ``time.LoadLocation`` would refuse or cannot find."""
    z = _zones.get(name)
    if z is not None:
        return z
    if name == "UTC":
        z = Zone("UTC", None)
    else:
        if ".." in name or name.startswith(("/", "\\")) or "\x00" in name:
            raise LookupError(name)
        try:
            zi = zoneinfo.ZoneInfo(name)
        except Exception:  # ZoneInfoNotFoundError, ValueError, OSError, IsADirectoryError ...
            raise LookupError(name) from None
        z = Zone(name, zi)
    with _zones_lock:
        _zones[name] = z
    return z


def to_datetime(u: int) -> datetime:
    """Unix seconds to an aware UTC datetime."""
    return datetime(1970, 1, 1, tzinfo=_UTC) + timedelta(seconds=u)


def from_datetime_floor(dt: datetime) -> tuple[int, int]:
    """An aware datetime as (floor Unix seconds, microseconds)."""
    if dt.tzinfo is None or dt.utcoffset() is None:
        raise ValueError("naive datetime")
    delta = dt - datetime(1970, 1, 1, tzinfo=_UTC)
    secs = delta.days * 86400 + delta.seconds
    return secs, delta.microseconds



_DIM = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def days_in_month(y: int, m: int) -> int:
    if m == 2 and (y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)):
        return 29
    return _DIM[m]


def _next_table(bits: int, size: int) -> tuple[int, ...]:
    """t[i] = smallest v >= i with bit v set, or -1; one extra slot at the end (= -1)."""
    out = [-1] * (size + 1)
    nxt = -1
    for i in range(size - 1, -1, -1):
        if (bits >> i) & 1:
            nxt = i
        out[i] = nxt
    return tuple(out)


_MARGIN = 86400  # > any UTC offset: Go's time.Date looks the offset up at the wall time read as UTC
_UNPROVEN = -(1 << 62)  # SpecWalker._jump_days: the jump may differ from the single steps


class SpecWalker:
    """robfig/cron v3.0.1 ``SpecSchedule.Next`` (spec.go) for one parsed schedule in one zone.

    ``next`` follows spec.go's loops (month, day, hour, minute, second; a loop that runs past the
    end of its field goes back to the year check: spec.go's ``goto WRAP``) with spec.go's resets,
    and replaces a run of single steps that cannot match by one jump where the jump provably lands
    on the instant the single steps would reach:

    * hour, minute and second steps are absolute (``t.Add``): a jump over several of them is the
      same when the zone's offset does not change within it;
    * day and month steps are wall-clock (``AddDate``, i.e. ``time.Date``). From a time of day
      before 01:00 (where spec.go's resets put the walk), the steps visit that time of day on the
      following days (each day of a matching month, the 1st of the others) up to the first day
      whose month and day match, or up to the first year past the five-year limit (where the
      ``goto WRAP`` returns the zero time). The walk goes there at once when ``time.Date`` keeps
      every visited wall time (``Zone.walls_exist``: only days next to an offset change can move).

    Anything else (a wall time moved by a gap, an offset change within an hour jump) takes spec.go's
    single steps. The line-by-line port of spec.go is the tests' oracle (tests/robfig_oracle.py);
    property tests and the vectors of the real robfig/cron compare this walk with it.
    """

    __slots__ = ("minute", "hour", "dom", "month", "dow", "dom_star", "dow_star", "zone",
                 "_nmin", "_nhour", "_nmon", "_days", "_seg", "_cday")

    def __init__(self, minute: int, hour: int, dom: int, month: int, dow: int,
                 dom_star: bool, dow_star: bool, zone: Zone) -> None:
        self.minute = minute
        self.hour = hour
        self.dom = dom
        self.month = month
        self.dow = dow
        self.dom_star = dom_star
        self.dow_star = dow_star
        self.zone = zone
        self._nmin = _next_table(minute, 60)
        self._nhour = _next_table(hour, 24)
        self._nmon = _next_table(month, 13)
        self._days: dict[int, tuple[int, ...]] = {}
        self._seg: tuple[int, int, int] = (0, 0, 0)  # last zone segment (lo, hi, offset)
        # last local day seen: (day number, year, month, day, day rule matches)
        self._cday: tuple[int, int, int, int, bool] = (-1 << 62, 0, 0, 0, False)

    # -- fields -------------------------------------------------------------------------------
    def day_matches(self, day: int, weekday: int) -> bool:
        """robfig ``dayMatches``: AND when either field has the star bit, otherwise OR."""
        dm = (self.dom >> day) & 1
        wm = (self.dow >> weekday) & 1
        if self.dom_star or self.dow_star:
            return bool(dm and wm)
        return bool(dm or wm)

    def _month_days(self, y: int, m: int, first: int) -> tuple[int, ...]:
        """The days of month (y, m), whose 1st is day number ``first``, that ``day_matches``,
        sorted. They depend only on the month's length and the weekday of its 1st: 28 cases at
        most, each computed once."""
        dim = days_in_month(y, m)
        wd0 = (first + 4) % 7
        key = dim * 7 + wd0
        r = self._days.get(key)
        if r is None:
            r = tuple(d for d in range(1, dim + 1) if self.day_matches(d, (wd0 + d - 1) % 7))
            self._days[key] = r
        return r

    def _next_day(self, day: int, y: int, m: int, d: int,
                  year_limit: int) -> tuple[int, int, int, int] | None:
        """The first day after ``day`` (= (y, m, d)) whose month and day match, in a year up to
        ``year_limit``, as (day number, year, month, day); None when there is none."""
        first = day - d + 1
        if (self.month >> m) & 1:
            mdays = self._month_days(y, m, first)
            i = bisect.bisect_right(mdays, d)
            if i < len(mdays):
                return (first + mdays[i] - 1, y, m, mdays[i])
        nmon = self._nmon
        while True:
            m = nmon[m + 1]
            if m < 0:
                y += 1
                m = nmon[1]
                if m < 0 or y > year_limit:
                    return None
            first = days_from_civil(y, m, 1)
            mdays = self._month_days(y, m, first)
            if mdays:
                return (first + mdays[0] - 1, y, m, mdays[0])

    # -- Go time on the cached offset segment ---------------------------------------------------
    def _fields(self, u: int) -> tuple[int, int, int, int, int, int, bool]:
        """(year, month, day, hour, minute, second, day rule matches) of instant ``u``."""
        lo, hi, off = self._seg
        if not lo <= u < hi:
            self._seg = seg = self.zone.segment(u)
            lo, hi, off = seg
        days, sod = divmod(u + off, 86400)
        c = self._cday
        if c[0] != days:
            y, m, d = civil_from_days(days)
            c = (days, y, m, d, self.day_matches(d, (days + 4) % 7))
            self._cday = c
        return c[1], c[2], c[3], sod // 3600, sod // 60 % 60, sod % 60, c[4]

    def _date(self, w: int) -> int:
        """Go ``time.Date`` for the wall time ``w``: the cached segment's offset when the instant
        is more than a day inside it (then both of ``Zone.date``'s lookups land in it)."""
        lo, hi, off = self._seg
        u = w - off
        if lo + _MARGIN <= u < hi - _MARGIN:
            return u
        return self.zone.date(w)

    def _constant(self, a: int, b: int) -> bool:
        """No offset change at any instant in (a, b]."""
        lo, hi, _off = self._seg
        return (lo <= a and b < hi) or self.zone.constant_between(a, b)

    def _jump_days(self, y: int, mo: int, d: int, tod: int, year_limit: int) -> int | None:
        """Where spec.go's month and day loops, stepping from the wall time ``tod`` (seconds,
        under an hour) of day (y, mo, d), arrive: that time of the first later day whose month
        and day match (an instant), or the January 1st past ``year_limit`` (None: the zero
        time). On the way they visit that time of each day of a matching month and of the 1st
        of the others; the jump holds when ``time.Date`` keeps all of those wall times, else
        ``_UNPROVEN``."""
        here = days_from_civil(y, mo, d)
        nxt = self._next_day(here, y, mo, d, year_limit)
        to = days_from_civil(year_limit + 1, 1, 1) if nxt is None else nxt[0]
        lo, hi, _off = self._seg
        if not (lo <= (here - 2) * 86400 and (to + 3) * 86400 < hi) \
                and not self.zone.walls_exist(here, to, tod):
            return _UNPROVEN
        if nxt is None:
            return None
        self._cday = (*nxt, True)  # the day the walk lands on: its fields are known
        return self._date(to * 86400 + tod)

    # -- the walk -----------------------------------------------------------------------------
    def next(self, u0: int) -> int | None:
        """spec.go ``Next`` for ``u0`` (whole Unix seconds; the caller drops the sub-second part):
        Unix seconds, or None for Go's zero time (nothing within five years).

        The common case first, from the cached offset segment and day: the start's day matches
        and the offset holds over every instant the walk touches (from its first reset, with a
        day's margin for ``time.Date``'s lookups, to the answer). Then spec.go's loops are plain
        wall-clock arithmetic and end on the day's next matching minute, or else on the first
        matching minute of the next matching day. Otherwise ``_walk``."""
        u = u0 + 1  # t.Add(1*time.Second - nanoseconds)
        lo, hi, off = self._seg
        if lo <= u < hi and not off % 60:
            days, sod = divmod(u + off, 86400)
            c = self._cday
            if c[0] == days and c[4] and (self.month >> c[2]) & 1:
                nhour, nmin = self._nhour, self._nmin
                hh, mm = divmod((sod + 59) // 60, 60)  # the next whole minute
                nh = nhour[hh]
                nm = nmin[0]
                if nh == hh:
                    if nmin[mm] >= 0:
                        nm = nmin[mm]
                    else:
                        nh = nhour[hh + 1]
                if nh >= 0 and nm >= 0:
                    t = u - sod + nh * 3600 + nm * 60
                    # the hour loop's reset (time.Date) only when this hour does not match
                    if (self.hour >> (sod // 3600)) & 1:
                        low = u - sod % 60
                    else:
                        low = u - sod % 3600 - _MARGIN
                    if lo <= low and t < hi:
                        return t
                elif nhour[0] >= 0 and nm >= 0:
                    nxt = self._next_day(days, c[1], c[2], c[3], c[1] + 5)
                    if nxt is not None:
                        t = u - sod + (nxt[0] - days) * 86400 + nhour[0] * 3600 + nm * 60
                        if lo <= u - sod % 3600 - _MARGIN and t + _MARGIN < hi:
                            self._cday = (*nxt, True)  # the next call starts on that day
                            return t
        return self._walk(u)

    def _walk(self, u: int) -> int | None:
        """spec.go's loops from ``u`` (the start plus one second), with their jumps."""
        months, hours, minutes = self.month, self.hour, self.minute
        nhour, nmin = self._nhour, self._nmin
        fields, date, constant = self._fields, self._date, self._constant
        added = False
        y, mo, d, h, mi, s, dm = fields(u)
        year_limit = y + 5
        while True:  # WRAP:
            if y > year_limit:
                return None
            if not ((months >> mo) & 1 and dm):
                # the month loop, then the day loop (each steps once after its reset, unchecked)
                month_loop = not (months >> mo) & 1
                if not added:
                    added = True
                    u = date(wall_seconds(y, mo, 1 if month_loop else d, 0, 0, 0))
                    y, mo, d, h, mi, s, dm = fields(u)
                while True:
                    if h == 0 and (d == 1 if month_loop else (months >> mo) & 1):
                        r = self._jump_days(y, mo, d, mi * 60 + s, year_limit)
                        if r != _UNPROVEN:
                            if r is None:
                                return None
                            u = r
                            y, mo, d, h, mi, s, dm = fields(u)
                            wrap = True  # month and day match there: the WRAP checks pass
                            break
                    if month_loop:
                        u = date(wall_seconds(y, mo + 1, d, h, mi, s))  # t.AddDate(0, 1, 0)
                        y, mo, d, h, mi, s, dm = fields(u)
                        if mo == 1:
                            wrap = True
                            break
                        month_loop = not (months >> mo) & 1
                        if not month_loop and dm:
                            wrap = False  # on to the hour loop
                            break
                    else:
                        u = date(wall_seconds(y, mo, d + 1, h, mi, s))  # t.AddDate(0, 0, 1)
                        y, mo, d, h, mi, s, dm = fields(u)
                        if h != 0:  # midnight did not exist (or was doubled): back to hour 0
                            u += (24 - h) * 3600 if h > 12 else -h * 3600
                            y, mo, d, h, mi, s, dm = fields(u)
                        if d == 1 or dm:
                            # WRAP, or on to the hour loop (the month is not checked again: a
                            # moved midnight can leave it without passing a 1st)
                            wrap = d == 1
                            break
                if wrap:
                    continue
            if not (hours >> h) & 1:
                if not added:
                    added = True
                    u = date(wall_seconds(y, mo, d, h, 0, 0))
                    y, mo, d, h, mi, s, dm = fields(u)
                while True:
                    nh = nhour[h + 1]
                    step = ((nh if nh > 0 else 24) - h) * 3600
                    u += step if constant(u, u + step) else 3600  # t.Add(1 * time.Hour), jumped
                    y, mo, d, h, mi, s, dm = fields(u)
                    if h == 0 or (hours >> h) & 1:
                        break
                if h == 0:
                    continue  # WRAP
            if not (minutes >> mi) & 1:
                if not added:
                    added = True
                    u -= u % 60  # t.Truncate(time.Minute): absolute, not wall-clock
                    y, mo, d, h, mi, s, dm = fields(u)
                while True:
                    nm = nmin[mi + 1]
                    step = ((nm if nm > 0 else 60) - mi) * 60
                    u += step if constant(u, u + step) else 60  # t.Add(1 * time.Minute), jumped
                    y, mo, d, h, mi, s, dm = fields(u)
                    if mi == 0 or (minutes >> mi) & 1:
                        break
                if mi == 0:
                    continue  # WRAP
            if s != 0:  # the seconds field is always "0" for ParseStandard
                added = True
                while s != 0:
                    step = 60 - s
                    u += step if constant(u, u + step) else 1  # t.Add(1 * time.Second), jumped
                    y, mo, d, h, mi, s, dm = fields(u)
                continue  # WRAP (the seconds loop ends on second 0 only)
            return u

    # -- the schedule in plain wall-clock time --------------------------------------------------
    def _naive(self, w: int, year_limit: int) -> int | None:
        """Smallest wall time >= ``w`` (wall seconds) matching the fields, in plain wall-clock
        arithmetic, on a whole minute; None past ``year_limit``."""
        w = -(-w // 60) * 60
        days, sod = divmod(w, 86400)
        y, m, d = civil_from_days(days)
        fh, fm = self._nhour[0], self._nmin[0]
        if y > year_limit or fh < 0 or fm < 0:
            return None
        if (self.month >> m) & 1 and self.day_matches(d, (days + 4) % 7):
            h, mi = sod // 3600, sod // 60 % 60
            nh = self._nhour[h]
            if nh == h:
                nmi = self._nmin[mi]
                if nmi >= 0:
                    return w - sod + h * 3600 + nmi * 60
                nh = self._nhour[h + 1]
            if nh >= 0:
                return w - sod + nh * 3600 + fm * 60
        nxt = self._next_day(days, y, m, d, year_limit)
        return None if nxt is None else nxt[0] * 86400 + fh * 3600 + fm * 60

    def wall_matches(self, lo: int, hi: int) -> list[int]:
        """Every instant ``lo < t <= hi`` whose local wall time matches the fields (whole
        minutes): what a wall-clock reading of the schedule expects. A wall time in a gap is in
        no offset segment (no instant), one in a fold is in two (two instants)."""
        out: list[int] = []
        u = lo + 1
        while u <= hi:
            seg_lo, seg_hi, off = self.zone.segment(u)
            end = min(hi, seg_hi - 1)
            w = u + off
            while True:
                days = w // 86400
                y = civil_from_days(days)[0]
                r = self._naive(w, y + 1)
                if r is None:
                    if y + 1 > civil_from_days((end + off) // 86400)[0]:
                        break
                    w = days_from_civil(y + 2, 1, 1) * 86400
                    continue
                if r - off > end:
                    break
                out.append(r - off)
                w = r + 60
            u = end + 1
        return out
