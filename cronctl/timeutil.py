"""Small, pure time helpers shared by every layer: RFC3339 in and out, kubectl-style durations.

Nothing here reads the clock.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from cronctl.errors import BadInput

UTC = timezone.utc


def parse_rfc3339(text: str, *, what: str = "time") -> datetime:
    """Parse an RFC3339 / ISO-8601 instant into an aware UTC datetime.

    ``Z`` and numeric offsets are accepted; a value without an offset is refused, because an
    instant whose zone is guessed is exactly the bug this tool exists to avoid.
    """
    s = text.strip()
    if s.endswith(("Z", "z")):
        s = s[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(s)
    except ValueError:
        raise BadInput(f"bad {what} {text!r}: expected RFC3339, e.g. 2026-03-08T06:30:00Z") from None
    if dt.tzinfo is None:
        raise BadInput(f"bad {what} {text!r}: no offset; add Z or +HH:MM")
    try:
        return dt.astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:00:00+01:00 is in the year 0 in UTC
        raise BadInput(f"bad {what} {text!r}: outside the years 1..9999 in UTC") from None


def rfc3339_z(dt: datetime) -> str:
    """An aware datetime as RFC3339 in UTC ending in ``Z``, in whole seconds (the fraction cut off).

    One precision in every output (docs/OUTPUT.md): the API's own times (``metav1.Time``) are whole
    seconds, and an Event's ``eventTime`` (microseconds), a clock reading or the controller's wake-up
    100 ms after a slot once printed their fractions beside them, as ``.123456``, ``.1`` or nothing.
    isoformat, not strftime: three times faster (a 90-day history formats ~100,000 times), and
    always a four-digit year."""
    return dt.astimezone(UTC).replace(tzinfo=None, microsecond=0).isoformat() + "Z"


def rfc3339_z_opt(dt: datetime | None) -> str | None:
    """:func:`rfc3339_z`, or None for an absent time (a document's null)."""
    return None if dt is None else rfc3339_z(dt)


def rfc3339_in_zone(dt: datetime, zone: str) -> str:
    """An aware datetime as RFC3339 in the IANA ``zone``, with its offset (:func:`rfc3339_local`);
    as it is when the zone is unknown (the schedule's error says so)."""
    try:
        from zoneinfo import ZoneInfo

        return rfc3339_local(dt.astimezone(ZoneInfo(zone)))
    except Exception:
        return rfc3339_local(dt)


def rfc3339_local(dt: datetime) -> str:
    """An aware datetime as RFC3339 with its own offset (``Z`` for UTC, as Go's time.RFC3339 does)."""
    s = dt.isoformat(timespec="seconds")
    return s[:-6] + "Z" if s.endswith("+00:00") else s


def local_and_utc(dt: datetime, zone: str | None) -> str:
    """An instant for people, in the CronJob's zone with UTC beside it:
    ``2026-12-03 09:00 CET (08:00 UTC)``; the UTC date is written when it differs
    (``2026-12-03 00:30 CET (2026-12-02 23:30 UTC)``), seconds only when not zero. Without a zone, in
    UTC or in an unknown zone (the engine reports that one): ``2026-12-03 08:00 UTC``. Machine output
    (-o json) stays RFC3339 UTC; this is for text.
    """
    u = dt.astimezone(UTC)
    fmt = "%H:%M:%S" if u.second else "%H:%M"
    utc = f"{u:%Y-%m-%d} {u.strftime(fmt)} UTC"
    if not zone or zone in ("UTC", "Etc/UTC"):
        return utc
    try:
        from zoneinfo import ZoneInfo

        loc = u.astimezone(ZoneInfo(zone))
    except (ValueError, KeyError, OSError):  # ZoneInfoNotFoundError is a KeyError
        return utc
    if loc.utcoffset() == timedelta(0) and loc.tzname() == "UTC":
        return utc
    same_day = loc.date() == u.date()
    return (f"{loc:%Y-%m-%d} {loc.strftime(fmt)} {loc.tzname()} "
            f"({u.strftime(fmt) if same_day else utc[:-4]} UTC)")


def human_duration(d: timedelta | float) -> str:
    """A duration the way kubectl prints ages (k8s.io/apimachinery HumanDuration): 12s, 6m5s, 3h, 2d4h."""
    total = d.total_seconds() if isinstance(d, timedelta) else float(d)
    seconds = int(total)
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 60 * 2:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 10:
        s = seconds % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = seconds // 3600
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"
