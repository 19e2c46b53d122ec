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
                 "_loaded")

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


class SpecWalker:
    """``SpecSchedule.Next`` for one parsed schedule in one zone.

    ``next_exact`` is a line-by-line port of spec.go on Go time semantics (the reference).
    ``next`` is the fast path: it finds the next match in wall-clock time with table lookups and
    returns it when the zone's offset is constant over every instant the Go walk would touch
    (from the first reset point, minus a day, to the result, plus a day). Otherwise (near a DST
    or other offset change) it falls back to ``_next_jumping``: the same port with runs of single
    steps replaced by one jump where the offset is constant. All three give the same answers;
    the property tests and the vectors check that.
    """

    __slots__ = ("minute", "hour", "dom", "month", "dow", "dom_star", "dow_star", "zone",
                 "_nmin", "_nhour", "_nmon", "_days", "_first_min", "_first_hour", "_seg", "_cday")

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
        self._first_min = self._nmin[0]
        self._first_hour = self._nhour[0]
        self._days: dict[int, tuple[int, ...]] = {}
        self._seg: tuple[int, int, int] = (0, 0, 0)  # last zone segment (lo, hi, offset)
        # last local day seen: (day number, month and day match, year, month, day)
        self._cday: tuple[int, bool, int, int, int] = (-1 << 62, False, 0, 0, 0)

    # -- day rule ---------------------------------------------------------------------------
    def day_matches(self, day: int, weekday: int) -> bool:
        """robfig ``dayMatches``: AND when either field has the star bit, otherwise OR."""
        dm = (self.dom >> day) & 1
        wm = (self.dow >> weekday) & 1
        if self.dom_star or self.dow_star:
            return bool(dm and wm)
        return bool(dm or wm)

    def _month_days(self, y: int, m: int) -> tuple[int, ...]:
        """The matching days of a month, sorted (cached per month)."""
        key = y * 13 + m
        r = self._days.get(key)
        if r is None:
            first = days_from_civil(y, m, 1)
            wd0 = (first + 4) % 7
            r = tuple(d for d in range(1, days_in_month(y, m) + 1)
                      if self.day_matches(d, (wd0 + d - 1) % 7))
            if len(self._days) > 4096:
                self._days.clear()
            self._days[key] = r
        return r

    # -- Go-exact reference walk --------------------------------------------------------------
    def _fields(self, u: int) -> tuple[int, int, int, int, int, int, int]:
        w = u + self.zone.offset(u)
        days, sod = divmod(w, 86400)
        y, m, d = civil_from_days(days)
        return y, m, d, sod // 3600, (sod // 60) % 60, sod % 60, (days + 4) % 7

    def next_exact(self, u0: int) -> int | None:
        """spec.go ``Next`` for the instant ``u0`` (whole seconds; the input's sub-second part is
        dropped by the caller). Returns Unix seconds, or None for Go's zero time."""
        z = self.zone
        fields = self._fields
        u = u0 + 1
        added = False
        y, mo, d, h, mi, s, wd = fields(u)
        year_limit = y + 5
        while True:  # WRAP:
            if y > year_limit:
                return None
            wrapped = False
            while not (self.month >> mo) & 1:
                if not added:
                    added = True
                    u = z.date(wall_seconds(y, mo, 1, 0, 0, 0))
                    y, mo, d, h, mi, s, wd = fields(u)
                u = z.date(wall_seconds(y, mo + 1, d, h, mi, s))  # AddDate(0, 1, 0)
                y, mo, d, h, mi, s, wd = fields(u)
                if mo == 1:
                    wrapped = True
                    break
            if wrapped:
                continue
            while not self.day_matches(d, wd):
                if not added:
                    added = True
                    u = z.date(wall_seconds(y, mo, d, 0, 0, 0))
                    y, mo, d, h, mi, s, wd = fields(u)
                u = z.date(wall_seconds(y, mo, d + 1, h, mi, s))  # AddDate(0, 0, 1)
                y, mo, d, h, mi, s, wd = fields(u)
                if h != 0:  # midnight did not exist (or was doubled): move back to hour 0
                    u += (24 - h) * 3600 if h > 12 else -h * 3600
                    y, mo, d, h, mi, s, wd = fields(u)
                if d == 1:
                    wrapped = True
                    break
            if wrapped:
                continue
            while not (self.hour >> h) & 1:
                if not added:
                    added = True
                    u = z.date(wall_seconds(y, mo, d, h, 0, 0))
                    y, mo, d, h, mi, s, wd = fields(u)
                u += 3600
                y, mo, d, h, mi, s, wd = fields(u)
                if h == 0:
                    wrapped = True
                    break
            if wrapped:
                continue
            while not (self.minute >> mi) & 1:
                if not added:
                    added = True
                    u -= u % 60  # t.Truncate(time.Minute): absolute, not wall-clock
                    y, mo, d, h, mi, s, wd = fields(u)
                u += 60
                y, mo, d, h, mi, s, wd = fields(u)
                if mi == 0:
                    wrapped = True
                    break
            if wrapped:
                continue
            while s != 0:  # the seconds field is always "0" for ParseStandard
                if not added:
                    added = True
                u += 1
                y, mo, d, h, mi, s, wd = fields(u)
                if s == 0:
                    wrapped = True
                    break
            if wrapped:
                continue
            return u

    def _next_jumping(self, u0: int) -> int | None:
        """``next_exact`` with its loops' single steps replaced by one jump wherever the zone's
        offset is constant over the jump (then every skipped step is plain wall arithmetic and
        cannot match or wrap). Used by ``next`` near offset changes."""
        const = self.zone.constant_between
        nmon, nhour, nmin = self._nmon, self._nhour, self._nmin
        z = self.zone
        fields = self._fields
        u = u0 + 1
        added = False
        y, mo, d, h, mi, s, wd = fields(u)
        year_limit = y + 5
        while True:  # WRAP:
            if y > year_limit:
                return None
            wrapped = False
            while not (self.month >> mo) & 1:
                if not added:
                    added = True
                    u = z.date(wall_seconds(y, mo, 1, 0, 0, 0))
                    y, mo, d, h, mi, s, wd = fields(u)
                if d <= 28:
                    nm = nmon[mo + 1] if mo < 12 else -1
                    dd = (days_from_civil(y, nm, d) if nm > 0 else days_from_civil(y + 1, 1, d)) \
                        - days_from_civil(y, mo, d)
                    tgt = u + dd * 86400
                    if const(u - _MARGIN, tgt + _MARGIN):
                        u = tgt
                        y, mo, d, h, mi, s, wd = fields(u)
                        if mo == 1:
                            wrapped = True
                            break
                        continue
                u = z.date(wall_seconds(y, mo + 1, d, h, mi, s))  # AddDate(0, 1, 0)
                y, mo, d, h, mi, s, wd = fields(u)
                if mo == 1:
                    wrapped = True
                    break
            if wrapped:
                continue
            while not self.day_matches(d, wd):
                if not added:
                    added = True
                    u = z.date(wall_seconds(y, mo, d, 0, 0, 0))
                    y, mo, d, h, mi, s, wd = fields(u)
                if h == 0:
                    mdays = self._month_days(y, mo)
                    i = bisect.bisect_right(mdays, d)
                    nd = mdays[i] if i < len(mdays) else days_in_month(y, mo) + 1
                    tgt = u + (nd - d) * 86400
                    if const(u - _MARGIN, tgt + _MARGIN):
                        u = tgt
                        y, mo, d, h, mi, s, wd = fields(u)
                        if d == 1:
                            wrapped = True
                            break
                        continue
                u = z.date(wall_seconds(y, mo, d + 1, h, mi, s))  # AddDate(0, 0, 1)
                y, mo, d, h, mi, s, wd = fields(u)
                if h != 0:  # midnight did not exist (or was doubled): move back to hour 0
                    u += (24 - h) * 3600 if h > 12 else -h * 3600
                    y, mo, d, h, mi, s, wd = fields(u)
                if d == 1:
                    wrapped = True
                    break
            if wrapped:
                continue
            while not (self.hour >> h) & 1:
                if not added:
                    added = True
                    u = z.date(wall_seconds(y, mo, d, h, 0, 0))
                    y, mo, d, h, mi, s, wd = fields(u)
                nh = nhour[h + 1]
                tgt = u + ((nh if nh > 0 else 24) - h) * 3600
                if const(u, tgt):
                    u = tgt
                    y, mo, d, h, mi, s, wd = fields(u)
                    if h == 0:
                        wrapped = True
                        break
                    continue
                u += 3600
                y, mo, d, h, mi, s, wd = fields(u)
                if h == 0:
                    wrapped = True
                    break
            if wrapped:
                continue
            while not (self.minute >> mi) & 1:
                if not added:
                    added = True
                    u -= u % 60  # t.Truncate(time.Minute): absolute, not wall-clock
                    y, mo, d, h, mi, s, wd = fields(u)
                nmi = nmin[mi + 1]
                tgt = u + ((nmi if nmi > 0 else 60) - mi) * 60
                if const(u, tgt):
                    u = tgt
                    y, mo, d, h, mi, s, wd = fields(u)
                    if mi == 0:
                        wrapped = True
                        break
                    continue
                u += 60
                y, mo, d, h, mi, s, wd = fields(u)
                if mi == 0:
                    wrapped = True
                    break
            if wrapped:
                continue
            while s != 0:  # the seconds field is always "0" for ParseStandard
                if not added:
                    added = True
                tgt = u + 60 - s
                if const(u, tgt):
                    u = tgt
                    y, mo, d, h, mi, s, wd = fields(u)
                    if s == 0:
                        wrapped = True
                        break
                    continue
                u += 1
                y, mo, d, h, mi, s, wd = fields(u)
                if s == 0:
                    wrapped = True
                    break
            if wrapped:
                continue
            return u

    # -- fast path ----------------------------------------------------------------------------
    def _naive(self, w: int, year_limit: int) -> int | None:
        """Smallest wall time >= ``w`` (wall seconds, whole) matching the fields, in plain
        wall-clock arithmetic; None past ``year_limit``."""
        days, sod = divmod(w, 86400)
        h, r = divmod(sod, 3600)
        mi, s = divmod(r, 60)
        if s:
            mi += 1
            if mi == 60:
                mi = 0
                h += 1
                if h == 24:
                    h = 0
                    days += 1
        y, m, d = civil_from_days(days)
        nmon = self._nmon
        nhour = self._nhour
        nmin = self._nmin
        while True:
            if y > year_limit:
                return None
            nm = nmon[m]
            if nm != m:
                if nm < 0:
                    y += 1
                    m = nmon[1]
                    if m < 0:
                        return None
                    if y > year_limit:
                        return None
                else:
                    m = nm
                d, h, mi = 1, 0, 0
            mdays = self._month_days(y, m)
            i = bisect.bisect_left(mdays, d)
            if i == len(mdays):
                m += 1
                if m == 13:
                    m = 1
                    y += 1
                d, h, mi = 1, 0, 0
                continue
            if mdays[i] != d:
                d = mdays[i]
                h, mi = 0, 0
            nh = nhour[h]
            if nh < 0:
                d += 1
                h, mi = 0, 0
                if d > days_in_month(y, m):
                    d = 1
                    m += 1
                    if m == 13:
                        m = 1
                        y += 1
                continue
            if nh != h:
                h = nh
                mi = 0
            nmi = nmin[mi]
            if nmi < 0:
                h += 1
                mi = 0
                if h == 24:
                    h = 0
                    d += 1
                    if d > days_in_month(y, m):
                        d = 1
                        m += 1
                        if m == 13:
                            m = 1
                            y += 1
                continue
            return (days_from_civil(y, m, d) * 86400) + nh * 3600 + nmi * 60

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

    def next(self, u0: int) -> int | None:
        """spec.go ``Next`` for ``u0`` (whole Unix seconds): the fast path with exact fallback.

        Fast path: the smallest matching wall time at or after ``u0 + 1`` in the offset of
        ``u0 + 1``, accepted when that offset holds from a day before the Go walk's first reset
        point (start of the day, or of the month when the month does not match) to a day after
        the result: then every ``time.Date``/``Add`` of the Go walk is plain wall arithmetic.
        """
        u = u0 + 1
        seg_lo, seg_hi, off = self._seg
        if not (seg_lo <= u < seg_hi):
            self._seg = seg = self.zone.segment(u)
            seg_lo, seg_hi, off = seg
        if off % 60:
            return self._next_jumping(u0)
        w = u + off
        days, sod = divmod(w, 86400)
        cday, cok, y, m, d = self._cday
        if days != cday:
            y, m, d = civil_from_days(days)
            cok = bool((self.month >> m) & 1) and self.day_matches(d, (days + 4) % 7)
            self._cday = (days, cok, y, m, d)
        if cok:
            # this local day matches: the answer is later today or on a later day of this month
            h, r = divmod(sod, 3600)
            mi, sec = divmod(r, 60)
            if sec:
                mi += 1
            res = -1
            if (self.hour >> h) & 1:
                nmi = self._nmin[mi]
                if nmi >= 0:
                    res = w - sod + h * 3600 + nmi * 60
            if res < 0:
                fm = self._first_min
                if fm >= 0:
                    nh = self._nhour[h + 1]
                    if nh > 0:
                        res = w - sod + nh * 3600 + fm * 60
                    else:
                        fh = self._first_hour
                        mdays = self._month_days(y, m)
                        i = bisect.bisect_right(mdays, d)
                        if fh >= 0 and i < len(mdays):
                            nd = mdays[i]
                            res = w - sod + (nd - d) * 86400 + fh * 3600 + fm * 60
                            # the next call starts on that (matching) day: remember it
                            self._cday = (days + nd - d, True, y, m, nd)
            if res >= 0:
                if seg_lo <= w - sod - off - _MARGIN and res - off + _MARGIN < seg_hi:
                    return res - off
                return self._next_jumping(u0)
        month_ok = (self.month >> m) & 1
        res2 = self._naive(w, y + 5)
        # The lowest instant the Go walk touches is its first reset point: start of the month
        # when the month does not match, else the start of the day.
        lo = u - sod if month_ok else u - sod - (d - 1) * 86400
        lo -= _MARGIN
        if res2 is None:
            hi = days_from_civil(y + 6, 1, 1) * 86400 + _MARGIN
        else:
            hi = res2 - off + _MARGIN
        if seg_lo <= lo and hi < seg_hi:
            return None if res2 is None else res2 - off
        if self.zone.constant_between(lo, hi):
            return None if res2 is None else res2 - off
        return self._next_jumping(u0)
