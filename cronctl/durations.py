"""One duration grammar for every duration flag: Go's ``time.ParseDuration`` (what kubectl accepts
for ``--timeout``, ``--since``, ...) plus ``d`` (24h), and a bare number meaning seconds.

Pure: no clock, no I/O. Values are integer nanoseconds, as Go's ``time.Duration``.

Grammar (Go's, https://pkg.go.dev/time#ParseDuration, with one more unit and one more form)::

    duration := [+-] ( "0" | number | ( number unit )+ )
    number   := digits [ "." [ digits ] ] | "." digits
    unit     := ns | us | µs (U+00B5) | μs (U+03BC) | ms | s | m | h | d      (d = 24h exactly)

- ``1h30m``, ``1.5h``, ``300ms``, ``-1h``, ``1d12h``, ``.5s``, ``1.s``: as Go reads them (``d``
  is not Go's: cronctl adds it because a week back is ``7d``, not ``168h``).
- A bare number is seconds: ``90`` = ``90s``, ``2.5`` = ``2.5s``. Go refuses it ("missing unit");
  cronctl's ``--timeout``, ``--settle``, ``--since``, ``--max-age``, ``--until`` and
  ``--expected-duration`` always took bare seconds, so every duration flag does.
- Leading and trailing blanks are ignored. Nothing else is a duration: ``1e3``, ``nan``,
  ``1h 30m``, ``1H``, ``1y`` are refused.
- Fractions are read exactly as Go reads them (the fraction through a float64, truncated to whole
  nanoseconds), so a value Go accepts means the same nanoseconds here.
- The total must fit Go's ``time.Duration`` (int64 nanoseconds, about 292 years); beyond that is
  :class:`DurationTooLong`.

Which values a flag accepts (zero, negative, how long) is the caller's business: see
:class:`Bounds` and :func:`check`.
"""

from __future__ import annotations

from dataclasses import dataclass

from cronctl.errors import BadInput, BadUsage

#: Go's units (time.unitMap), in nanoseconds
GO_UNITS: dict[str, int] = {
    "ns": 1, "us": 1_000, "\u00b5s": 1_000, "\u03bcs": 1_000, "ms": 1_000_000,
    "s": 1_000_000_000, "m": 60_000_000_000, "h": 3_600_000_000_000,
}
SECOND = GO_UNITS["s"]
DAY = 24 * GO_UNITS["h"]
#: cronctl's units: Go's plus ``d`` = 24h
UNITS: dict[str, int] = {**GO_UNITS, "d": DAY}

_INT64_MAX = (1 << 63) - 1
_EXAMPLES = "90s, 15m, 1h30m, 1.5h or 1d12h"


class DurationError(BadInput):
    """Text that is not a duration. ``reason`` is Go's own wording ("unknown unit "y"", ...), without
    the text or any flag: the caller names what was being read."""

    def __init__(self, text: str, reason: str, *, what: str = "duration") -> None:
        super().__init__(f"bad {what} {text!r}: {reason}")
        self.text = text
        self.reason = reason


class DurationTooLong(DurationError):
    """Well-formed, but longer than Go's ``time.Duration`` holds (int64 nanoseconds)."""


def go_quote(s: str) -> str:
    """strconv.Quote (close enough for messages: escapes quotes, backslashes, non-printables)."""
    out = ['"']
    for ch in s:
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif ch in "\a\b\f\n\r\t\v":
            out.append({"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
                        "\t": "\\t", "\v": "\\v"}[ch])
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


def parse_units(orig: str, units: dict[str, int]) -> int:
    """Go's ``time.ParseDuration`` over the given unit table, in nanoseconds.

    With :data:`GO_UNITS` it is Go's function, message for message (``time: invalid duration "x"``,
    ``time: missing unit in duration "1"``, ``time: unknown unit "y" in duration "1y"``); the error
    is :class:`DurationError` (``DurationTooLong`` when only the size is wrong).
    """
    s = orig
    d = 0
    neg = False
    q = go_quote(orig)

    def invalid() -> DurationError:
        return DurationError(orig, f"time: invalid duration {q}")

    def too_long() -> DurationError:
        return DurationTooLong(orig, f"time: invalid duration {q}")

    if s and s[0] in "+-":
        neg = s[0] == "-"
        s = s[1:]
    if s == "0":  # the one number without a unit Go takes
        return 0
    if s == "":
        raise invalid()
    while s:
        if not (s[0] == "." or "0" <= s[0] <= "9"):
            raise invalid()
        # the integer part; Go stops at 1<<63 (an overflow is "invalid duration")
        i = 0
        v = 0
        while i < len(s) and "0" <= s[i] <= "9":
            v = v * 10 + ord(s[i]) - 48
            if v > 1 << 63:
                # Go: leadingInt overflows; the rest of the text is not looked at
                raise too_long()
            i += 1
        pre = i > 0
        s = s[i:]
        # the fraction: Go keeps the digits that fit an int64 and drops the rest
        f, scale, post = 0, 1.0, False
        if s and s[0] == ".":
            s = s[1:]
            i = 0
            overflow = False
            while i < len(s) and "0" <= s[i] <= "9":
                if not overflow:
                    if f > _INT64_MAX // 10:
                        overflow = True
                    else:
                        y = f * 10 + ord(s[i]) - 48
                        if y > 1 << 63:
                            overflow = True
                        else:
                            f = y
                            scale *= 10
                i += 1
            post = i > 0
            s = s[i:]
        if not pre and not post:  # "." alone
            raise invalid()
        i = 0
        while i < len(s) and not (s[i] == "." or "0" <= s[i] <= "9"):
            i += 1
        if i == 0:
            raise DurationError(orig, f"time: missing unit in duration {q}")
        u = s[:i]
        s = s[i:]
        unit = units.get(u)
        if unit is None:
            raise DurationError(orig, f"time: unknown unit {go_quote(u)} in duration {q}")
        if v > (1 << 63) // unit:
            raise too_long()
        v *= unit
        if f > 0:
            # Go: float64(f) * (float64(unit) / scale), truncated
            v += int(float(f) * (float(unit) / scale))
            if v > 1 << 63:
                raise too_long()
        d += v
        if d > 1 << 63:
            raise too_long()
    if neg:
        return -d
    if d > _INT64_MAX:
        raise too_long()
    return d


def _bare_number(s: str) -> bool:
    body = s[1:] if s[:1] in "+-" else s
    if not body or body == ".":
        return False
    whole, dot, frac = body.partition(".")
    return (whole == "" or whole.isascii() and whole.isdigit()) and (frac == "" or frac.isascii() and frac.isdigit())


def parse(text: str) -> int:
    """cronctl's duration text -> nanoseconds (see the module docstring for the grammar).

    Raises :class:`DurationError` (``DurationTooLong`` past int64 nanoseconds), whose ``reason``
    says in words what a duration looks like.
    """
    s = text.strip()
    if _bare_number(s):
        s += "s"  # a bare number is seconds, read by the same rules as "90s"
    try:
        return parse_units(s, UNITS)
    except DurationTooLong:
        raise DurationTooLong(text, "too long") from None
    except DurationError as e:
        why = e.reason.split(" in duration ")[0].removeprefix("time: ")
        if why.startswith("invalid duration"):
            why = "not a duration"
        raise DurationError(text, f"{why}; expected a duration like {_EXAMPLES} (a bare number is seconds)") \
            from None


def format_go(ns: int) -> str:
    """Go's ``time.Duration.String``: ``1h30m0s``, ``1.5s``, ``300ms``, ``-1h0m0s``, ``0s``.

    :func:`parse` reads every such string back to the same nanoseconds.
    """
    if ns == 0:
        return "0s"
    neg = ns < 0
    u = -ns if neg else ns
    if u < SECOND:
        # ns, µs (Go writes U+00B5) or ms, with a fraction
        if u < 1_000:
            body = f"{u}ns"
        elif u < 1_000_000:
            body = _frac(u, 3) + "\u00b5s"
        else:
            body = _frac(u, 6) + "ms"
    else:
        secs, frac_ns = divmod(u, SECOND)
        h, rest = divmod(secs, 3600)
        m, s = divmod(rest, 60)
        sec = str(s) + (("." + f"{frac_ns:09d}".rstrip("0")) if frac_ns else "") + "s"
        body = (f"{h}h{m}m" if h else f"{m}m" if m else "") + sec
    return ("-" if neg else "") + body


def _frac(v: int, digits: int) -> str:
    whole, frac = divmod(v, 10 ** digits)
    f = f"{frac:0{digits}d}".rstrip("0")
    return f"{whole}.{f}" if f else str(whole)


def format_short(ns: int) -> str:
    """A whole-second duration for people, in cronctl's units without zero parts: ``1d12h``,
    ``1h30m``, ``90s`` -> ``1m30s``, ``0s``. Sub-second remainders are written as Go would."""
    if ns < 0:
        return "-" + format_short(-ns)
    secs, frac_ns = divmod(ns, SECOND)
    d, rest = divmod(secs, 86400)
    h, rest = divmod(rest, 3600)
    m, s = divmod(rest, 60)
    parts = [f"{d}d" if d else "", f"{h}h" if h else "", f"{m}m" if m else ""]
    if frac_ns:
        parts.append(format_go(s * SECOND + frac_ns))
    elif s:
        parts.append(f"{s}s")
    return "".join(parts) or "0s"


@dataclass(frozen=True)
class Bounds:
    """What a flag accepts of a well-formed duration. ``low`` is the smallest allowed value (1ns =
    "more than 0"), ``high`` the largest; ``why`` says, in a refusal of a too-small value, what the
    value is for."""

    low: int = 1
    high: int = 3650 * DAY
    why: str = ""


class OutOfBounds(BadUsage):
    """A well-formed duration outside its :class:`Bounds` (exit 2: the command line cannot mean it).
    ``reason`` names no flag."""

    def __init__(self, text: str, reason: str, *, what: str = "duration") -> None:
        super().__init__(f"bad {what} {text!r}: {reason}")
        self.text = text
        self.reason = reason


class BeyondLimit(BadInput):
    """Longer than the hard limit every duration has (``MAX_DURATION``, exit 5 like the other limits)."""

    def __init__(self, text: str, reason: str, *, what: str = "duration") -> None:
        super().__init__(f"bad {what} {text!r}: {reason}")
        self.text = text
        self.reason = reason


#: The hard limit of any duration: a horizon or a wait must end (docs/LIMITS.md "Limits").
MAX_DURATION = 3650 * DAY


def check(text: str, ns: int, bounds: Bounds) -> int:
    """``ns`` when inside ``bounds``, else :class:`OutOfBounds` (too small or too large for the
    flag) or :class:`BeyondLimit` (past :data:`MAX_DURATION`)."""
    if ns > MAX_DURATION:
        raise BeyondLimit(text, f"at most {MAX_DURATION // DAY}d (MAX_DURATION)")
    if ns < 0 and bounds.low >= 0:
        raise OutOfBounds(text, "must not be negative")
    if ns < bounds.low:
        if bounds.low == 1:
            why = "must be more than 0"
        else:
            why = f"must be at least {format_short(bounds.low)}"
        raise OutOfBounds(text, why + (f" ({bounds.why})" if bounds.why else ""))
    if ns > bounds.high:
        raise OutOfBounds(text, f"must be at most {format_short(bounds.high)}")
    return ns


def read(text: str, bounds: Bounds = Bounds()) -> int:
    """:func:`parse` then :func:`check`: nanoseconds of a duration the caller accepts."""
    try:
        ns = parse(text)
    except DurationTooLong:
        raise BeyondLimit(text, f"at most {MAX_DURATION // DAY}d (MAX_DURATION)") from None
    return check(text, ns, bounds)
