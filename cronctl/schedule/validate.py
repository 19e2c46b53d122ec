"""The API server's own checks on a CronJob's schedule, timeZone and name.

A copy of ``pkg/apis/batch/validation`` (``validateCronJobSpec``, ``validateScheduleFormat``,
``validateTimeZone``, ``ValidateCronJobCreate``), kept apart from the parser because the
controller parses things the API server refuses (a ``TZ=`` prefix on objects created before the
rule). Messages are the API server's, in its ``<field>: Invalid value: "<v>": <why>`` form.
Pure: stdlib only.
"""

from __future__ import annotations

import re

from cronctl.errors import ScheduleError
from cronctl.schedule.parse import CronParseError, go_quote, parse_standard
from cronctl.schedule.walk import get_zone

__all__ = ["validate_for_api", "validate_time_zone", "MAX_CRONJOB_NAME"]

MAX_CRONJOB_NAME = 52  # 63 (DNS-1035 label) - 11 for the "-<minutes>" suffix of Job names

# https://data.iana.org/time-zones/theory.html#naming, with 0-9 and + tolerated (upstream regex)
_TZ_PART = re.compile(r"[A-Za-z.\-_0-9+]{1,14}")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_UNSET = object()


def _invalid(path: str, value: str, why: str) -> str:
    return f"{path}: Invalid value: {go_quote(value)}: {why}"


def validate_time_zone(time_zone: str | None) -> list[str]:
    """``validateTimeZone``: nil is fine; "" and names Go cannot load or that break the IANA
    naming rules are refused; ``Local`` (any case) is refused."""
    if time_zone is None:
        return []
    path = "spec.timeZone"
    if len(time_zone) == 0:
        return [_invalid(path, time_zone, "timeZone must be nil or non-empty string")]
    for part in time_zone.split("/"):
        if part in (".", "..") or part.startswith("-") or not _TZ_PART.fullmatch(part):
            return [_invalid(path, time_zone, f"unknown time zone {time_zone}")]
    out: list[str] = []
    if time_zone.lower() == "local":
        out.append(_invalid(path, time_zone,
                            "timeZone must be an explicit time zone as defined in "
                            "https://www.iana.org/time-zones"))
    if time_zone != "UTC" and time_zone != "Local":
        try:
            get_zone(time_zone)
        except LookupError:
            out.append(_invalid(path, time_zone, f"unknown time zone {time_zone}"))
    return out


def validate_for_api(expr: str, time_zone: str | None, *, name: str | None = None,
                     create: bool = True, old_expr: str | None = None,
                     old_time_zone: object = _UNSET) -> list[str]:
    """The API server's checks on create (``create=True``) or update (``old_expr`` = the stored
    schedule; ``old_time_zone`` = the stored timeZone, when known). Returns the messages the API
    server would give, ``[]`` when it would accept the object."""
    out: list[str] = []
    if not isinstance(expr, str):
        raise ScheduleError("the schedule must be a string")
    if len(expr) == 0:
        out.append("spec.schedule: Required value")
    else:
        allow_tz = (not create) and old_expr is not None and "TZ" in old_expr
        try:
            parse_standard(expr)
        except CronParseError as e:
            out.append(_invalid("spec.schedule", expr, e.upstream))
        except ScheduleError as e:
            out.append(_invalid("spec.schedule", expr, str(e)))
        if allow_tz and "TZ" in expr and time_zone is not None:
            out.append(_invalid("spec.schedule", expr,
                                "cannot use both timeZone field and TZ or CRON_TZ in schedule"))
        elif not allow_tz and "TZ" in expr:
            out.append(_invalid("spec.schedule", expr,
                                "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
    if create or old_time_zone is _UNSET or old_time_zone != time_zone:
        out.extend(validate_time_zone(time_zone))
    if name is not None:
        if create and len(name) > MAX_CRONJOB_NAME:
            out.append(_invalid("metadata.name", name,
                                f"must be no more than {MAX_CRONJOB_NAME} characters"))
        if len(name) > 253 or not _DNS1123_SUBDOMAIN.fullmatch(name):
            out.append(_invalid(
                "metadata.name", name,
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                "characters, '-' or '.', and must start and end with an alphanumeric character"))
    return out
