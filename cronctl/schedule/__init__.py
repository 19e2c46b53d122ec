"""The schedule engine: Kubernetes-exact parsing, walking and controller decisions.

Pure (stdlib + zoneinfo), never reads the clock. Public API::

    from cronctl.schedule import parse, Schedule, validate_for_api, decide, Decision, job_name
"""

from __future__ import annotations

from cronctl.schedule.controller import Decision, decide, job_name
from cronctl.schedule.parse import CronParseError, Schedule, parse
from cronctl.schedule.validate import validate_for_api

__all__ = ["CronParseError", "Decision", "Schedule", "decide", "job_name", "parse",
           "validate_for_api"]
