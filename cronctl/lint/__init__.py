"""Risk checks for CronJobs: pure rules over CronJob dicts (``rules``), the runner (``engine``)
and SARIF 2.1.0 output (``sarif``). No I/O, no clock: ``now`` is a parameter."""

from __future__ import annotations

from cronctl.lint.engine import Finding, lint_object, lint_objects, lint_sources, summarize
from cronctl.lint.rules import RULES, Rule, SEVERITIES

__all__ = ["Finding", "RULES", "Rule", "SEVERITIES", "lint_object", "lint_objects", "lint_sources", "summarize"]
