"""The schedule engine: Kubernetes-exact parsing, walking and controller decisions.

Pure (stdlib + zoneinfo), never reads the clock. Public API (see notes/ENGINE_API.md)::

    from cronctl.schedule import parse, Schedule, validate_for_api, decide, Decision, job_name
"""

from __future__ import annotations

from cronctl.schedule.parse import CronParseError, Schedule, parse

__all__ = ["CronParseError", "Decision", "Schedule", "decide", "job_name", "parse",
           "validate_for_api"]


def __getattr__(name: str) -> object:
    # controller/validate are pure too, but loaded on first use to keep `import parse` minimal
    if name in ("decide", "Decision", "job_name"):
        from cronctl.schedule import controller

        return getattr(controller, name)
    if name == "validate_for_api":
        from cronctl.schedule import validate

        return validate.validate_for_api
    raise AttributeError(name)
