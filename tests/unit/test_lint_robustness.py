"""lint never crashes on a malformed object: any JSON value at any field it reads gives findings
or none, never an exception (a broken manifest must be reported, not traceback)."""

from __future__ import annotations

import copy
from datetime import datetime, timezone
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from cronctl.lint.engine import lint_object

NOW = datetime(2026, 12, 2, 12, tzinfo=timezone.utc)
BASE: dict[str, Any] = {
    "kind": "CronJob", "metadata": {"name": "x", "namespace": "ns", "annotations": {}},
    "spec": {"schedule": "30 2 * * *", "timeZone": "America/New_York", "concurrencyPolicy": "Forbid",
             "jobTemplate": {"spec": {"activeDeadlineSeconds": 90000, "template": {"spec": {
                 "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox",
                                                           "command": ["sh", "-c", "a; b | c || true"]}]}}}}},
}
PATHS = [
    ("metadata",), ("metadata", "name"), ("metadata", "annotations"), ("spec",), ("spec", "schedule"),
    ("spec", "timeZone"), ("spec", "startingDeadlineSeconds"), ("spec", "concurrencyPolicy"),
    ("spec", "successfulJobsHistoryLimit"), ("spec", "failedJobsHistoryLimit"), ("spec", "jobTemplate"),
    ("spec", "jobTemplate", "spec"), ("spec", "jobTemplate", "spec", "activeDeadlineSeconds"),
    ("spec", "jobTemplate", "spec", "backoffLimit"), ("spec", "jobTemplate", "spec", "ttlSecondsAfterFinished"),
    ("spec", "jobTemplate", "spec", "template"), ("spec", "jobTemplate", "spec", "template", "spec"),
    ("spec", "jobTemplate", "spec", "template", "spec", "containers"),
    ("spec", "jobTemplate", "spec", "template", "spec", "serviceAccountName"),
    ("spec", "jobTemplate", "spec", "podFailurePolicy"), ("spec", "jobTemplate", "spec", "backoffLimitPerIndex"),
    ("spec", "jobTemplate", "spec", "template", "spec", "initContainers"),
]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False) | st.text(max_size=20)
    | st.sampled_from(["@daily", "0 0 30 2 *", "TZ=UTC 0 * * * *", "Europe/Berlin", "Mars/Base", "", "Replace"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(PATHS), json_values), min_size=1, max_size=4))
def test_lint_survives_any_value_in_any_field(edits: list[tuple[tuple[str, ...], Any]]) -> None:
    obj = copy.deepcopy(BASE)
    for path, value in edits:
        node: Any = obj
        for key in path[:-1]:
            if not isinstance(node, dict):
                break
            node = node.setdefault(key, {})
        else:
            if isinstance(node, dict):
                node[path[-1]] = value
    for f in lint_object(obj, NOW):
        assert f.severity in ("error", "warning", "info") and f.message


def test_a_history_limit_of_millions_on_a_leap_day_schedule_is_no_overflow() -> None:
    """Found by tests/property/test_dump_fuzz.py: 5,041,448 x a 4-year interval overflowed timedelta
    in the history-limit rule (exit 70); the run-manual plan would have walked 5 million slots."""
    from datetime import datetime, timezone

    from cronctl.lint.rules import check_successful_history_short
    from cronctl.procedure.predict import REMOVAL_RUNS_MAX, history_limit_removal

    now = datetime(2026, 12, 2, 11, 35, tzinfo=timezone.utc)
    cj = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "leap", "namespace": "shop"},
          "spec": {"schedule": "0 0 29 2 *", "timeZone": "Europe/Berlin", "successfulJobsHistoryLimit": 5041448,
                   "jobTemplate": {"spec": {}}}}
    assert check_successful_history_short(cj, now) == []
    text, info = history_limit_removal(cj, now)
    assert "deleted once 5041448 newer Job(s)" in text and info["earliest_if_succeeded"] is None
    assert REMOVAL_RUNS_MAX < 5041448
