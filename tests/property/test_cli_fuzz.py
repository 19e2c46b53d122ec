"""Hypothesis drives every offline command's argument parser and file reader in-process, through
the real ``cronctl.cli.main``: explain with random schedules, zones and flags; ``lint -f``,
``explain -f``, ``bundle --from-dump`` and ``history --from-dump`` with random YAML and JSON
files (CronJob-shaped, List-shaped, or anything). Whatever the input, the answer is an exit code
from the documented set (cronctl.errors.ExitCode, INTERNAL excluded), never a traceback and never
``internal error:`` (issue 12: "one boundary for the unexpected").
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from cronctl.cli import main
from cronctl.errors import ExitCode

DOCUMENTED = {int(c) for c in ExitCode} - {int(ExitCode.INTERNAL)}
# derandomized (the same examples on every run) and without the shrink phase (a failure reports the
# command line and file it failed on, unshrunk, in bounded time); CRONCTL_FUZZ_EXAMPLES=N searches deeper
SETTINGS = settings(max_examples=int(os.environ.get("CRONCTL_FUZZ_EXAMPLES", "60")), deadline=None,
                    derandomize=True, phases=[Phase.explicit, Phase.generate],
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# Found by this test, not in this change's scope: wrong types in a file still end as an internal
# error (exit 70): explain -f on an integer name; bundle on `startingDeadlineSeconds: "30"`, a string
# jobTemplate, `successfulJobsHistoryLimit: []`; history on the last two and on
# `lastScheduleTime: 0001-01-01`. Issue 12 item 6 (one answer for typed fields) fixes them; remove
# these marks then (the summary shows XPASS). The explicit examples below replay the issue's shapes.
TYPED_FIELDS = pytest.mark.xfail(strict=False, reason="issue 12 item 6: wrong types in a file are an internal error")


def _cronjob_list(**spec: Any) -> dict[str, Any]:
    meta = {"name": spec.pop("name", "a"), "namespace": "ns1", "creationTimestamp": "2026-12-01T00:00:00Z"}
    cj = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": meta,
          "spec": {"schedule": "*/10 * * * *", "jobTemplate": {"spec": {"template": {"spec": {
              "containers": [{"name": "c", "image": "busybox"}]}}}}, **spec},
          "status": {"lastScheduleTime": "2026-12-02T09:00:00Z"}}
    return {"apiVersion": "v1", "kind": "List", "items": [cj]}


ISSUE_SHAPES = [_cronjob_list(startingDeadlineSeconds="30"), _cronjob_list(jobTemplate="x"), _cronjob_list(name=5),
                _cronjob_list(successfulJobsHistoryLimit=[]), _cronjob_list(suspend="false")]


def run(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


def check(args: list[str]) -> None:
    code, _out, err = run(args)
    assert "Traceback" not in err and "internal error" not in err, (args, err)
    assert code in DOCUMENTED, (args, code, err)


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    # a live path (cronjob/NAME) must end as bad input (no kubeconfig), never reach a real cluster
    monkeypatch.setenv("KUBECONFIG", "/nonexistent/cronctl-fuzz-kubeconfig")
    monkeypatch.delenv("CRONCTL_DEBUG", raising=False)


FIELDS = ["*", "*/5", "0", "30", "59", "60", "1-5", "5-1", "1,2,3", "?", "L", "MON-FRI", "JAN", "0/15", "*/0",
          "-1", "32", "1-", ",", "2#1", "", "999999999999", "a"]
SCHEDULES = st.one_of(
    st.lists(st.sampled_from(FIELDS), min_size=1, max_size=7).map(" ".join),
    st.sampled_from(["@daily", "@hourly", "@weekly", "@monthly", "@yearly", "@annually", "@midnight",
                     "@every 1h30m", "@every 0s", "@every -1m", "@every 1x", "@reboot", "@"]),
    st.builds(lambda z, s: f"{z}{s}", st.sampled_from(["TZ=", "CRON_TZ=", "TZ=Europe/Berlin ", "TZ=Nope/X "]),
              st.sampled_from(["0 3 * * *", "*/10 * * * *", ""])),
    st.text(max_size=30),
)
ZONES = st.one_of(st.sampled_from(["UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe",
                                   "Europe/Moscow", "Local", "", "../etc/passwd", "Etc/GMT+14", "EST5EDT"]),
                  st.text(max_size=15))
INSTANTS = st.one_of(
    st.datetimes(min_value=__import__("datetime").datetime(1970, 1, 1),
                 max_value=__import__("datetime").datetime(2100, 1, 1)).map(lambda d: d.isoformat() + "Z"),
    st.sampled_from(["2026-03-29T01:30:00+01:00", "2026-11-01T01:30:00-04:00", "yesterday", "", "2026-13-01T00:00:00Z",
                     "2026-02-30T00:00:00Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "2026-01-01"]),
    st.text(max_size=12),
)


@st.composite
def explain_args(draw: st.DrawFn) -> list[str]:
    args = ["explain", draw(SCHEDULES)]
    for flag, values in [("--tz", ZONES), ("--from", INSTANTS), ("--now", INSTANTS), ("--created", INSTANTS),
                         ("--last-schedule", INSTANTS),
                         ("--count", st.integers(-2, 40).map(str)),
                         ("--starting-deadline", st.one_of(st.integers(-5, 10**6).map(str), st.text(max_size=4))),
                         ("--concurrency-policy", st.sampled_from(["Allow", "Forbid", "Replace", "forbid", "x"])),
                         ("--active", st.text(max_size=10)), ("--name", st.text(max_size=60)),
                         ("--dialect", st.sampled_from(["kubernetes", "atlas", "robfig", ""])),
                         ("--missed-limit", st.integers(-3, 200).map(str)),
                         ("-o", st.sampled_from(["text", "json", "yaml", "xml"]))]:
        if draw(st.booleans()):
            args += [flag, draw(values)]
    if draw(st.booleans()):
        args.append("--suspended")
    return args


@SETTINGS
@given(explain_args())
def test_explain_with_any_schedule_zone_and_flags_answers_with_a_documented_code(args: list[str]) -> None:
    check(args)


# ------------------------------------------------------------------------------------------- files
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**12), st.floats(allow_nan=False, width=32),
                    st.text(max_size=12), st.sampled_from(["2026-12-02T10:00:00Z", "1000-01-01T00:00:00Z", "Forbid",
                                                           "Europe/Berlin", "*/10 * * * *", "30", "true"]))
JSONISH = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                        st.dictionaries(st.text(max_size=8), inner, max_size=3)),
                       max_leaves=12)


def _maybe(draw: st.DrawFn, good: Any) -> Any:
    """The real value most of the time, anything else sometimes (wrong types, missing, null)."""
    return good if draw(st.integers(0, 3)) else draw(JSONISH)


@st.composite
def cronjob(draw: st.DrawFn) -> Any:
    m = lambda good: _maybe(draw, good)  # noqa: E731
    container = m({"name": "c", "image": m("busybox:1"), "command": m(["sh", "-c", "true"]),
                   "env": m([{"name": "TOKEN", "value": m("s3cr3t")}])})
    return {
        "apiVersion": m("batch/v1"), "kind": "CronJob",
        "metadata": m({"name": m("job-a"), "namespace": m("ns1"), "creationTimestamp": m("2026-12-01T00:00:00Z"),
                       "uid": m("u-1"), "annotations": m({"cronctl.dev/note": m("x")})}),
        "spec": m({"schedule": m(draw(SCHEDULES)), "timeZone": m(draw(ZONES)), "suspend": m(False),
                   "concurrencyPolicy": m("Forbid"), "startingDeadlineSeconds": m(200),
                   "successfulJobsHistoryLimit": m(3), "failedJobsHistoryLimit": m(1),
                   "jobTemplate": m({"spec": m({"template": m({"spec": m({
                       "restartPolicy": m("Never"), "containers": m([container])})})})})}),
        "status": m({"lastScheduleTime": m("2026-12-02T09:00:00Z"), "active": m([])}),
    }


@st.composite
def job_or_event(draw: st.DrawFn) -> Any:
    m = lambda good: _maybe(draw, good)  # noqa: E731
    if draw(st.booleans()):
        return {"apiVersion": "batch/v1", "kind": "Job",
                "metadata": m({"name": m("job-a-29936760"), "namespace": m("ns1"),
                               "creationTimestamp": m("2026-12-02T10:00:00Z"),
                               "annotations": m({"batch.kubernetes.io/cronjob-scheduled-timestamp":
                                                 m("2026-12-02T10:00:00Z")}),
                               "ownerReferences": m([{"kind": "CronJob", "name": m("job-a"), "uid": m("u-1"),
                                                      "controller": m(True)}])}),
                "status": m({"startTime": m("2026-12-02T10:00:01Z"), "completionTime": m("2026-12-02T10:01:00Z"),
                             "conditions": m([{"type": m("Complete"), "status": m("True")}])})}
    return {"apiVersion": "v1", "kind": "Event", "reason": m("SuccessfulCreate"), "message": m("Created job x"),
            "type": m("Normal"), "count": m(1), "lastTimestamp": m("2026-12-02T10:00:01Z"),
            "metadata": m({"name": m("e1"), "namespace": m("ns1")}),
            "involvedObject": m({"kind": m("CronJob"), "name": m("job-a"), "namespace": m("ns1")})}


DOCUMENTS = st.one_of(
    st.builds(lambda items: {"apiVersion": "v1", "kind": "List", "items": items},
              st.lists(st.one_of(cronjob(), job_or_event()), max_size=5)),
    cronjob(),
    JSONISH,
)


def _write(doc: Any, fmt: str, text: str | None) -> Path:
    fd, name = tempfile.mkstemp(suffix=".json" if fmt == "json" else ".yaml", prefix="cronctl-fuzz-")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        if text is not None:
            f.write(text)
        elif fmt == "json":
            json.dump(doc, f)
        else:
            yaml.safe_dump(doc, f)
    return Path(name)


FILE_INPUT = st.tuples(DOCUMENTS, st.sampled_from(["json", "yaml"]),
                       st.one_of(st.none(), st.none(), st.none(), st.text(max_size=60)))


def _with_issue_shapes(test: Any) -> Any:
    for doc in ISSUE_SHAPES:
        test = example(file_input=(doc, "yaml", None))(test)
    return test


@pytest.mark.parametrize("command", ["lint", pytest.param("explain", marks=TYPED_FIELDS),
                                     pytest.param("bundle", marks=TYPED_FIELDS),
                                     pytest.param("history", marks=TYPED_FIELDS)])
@SETTINGS
@given(file_input=FILE_INPUT)
@_with_issue_shapes
def test_every_file_reader_answers_any_file_with_a_documented_code(command: str, file_input: tuple[Any, str, str | None]
                                                                  ) -> None:
    doc, fmt, text = file_input
    path = _write(doc, fmt, text)
    try:
        with tempfile.TemporaryDirectory(prefix="cronctl-fuzz-out-") as out:
            args = {
                "lint": ["lint", "-f", str(path)],
                "explain": ["explain", "-f", str(path), "--count", "2", "--now", "2026-12-02T11:00:00Z"],
                "bundle": ["bundle", "--all", "-n", "ns1", "--from-dump", str(path), "--now", "2026-12-02T11:00:00Z",
                           "--out", os.path.join(out, "b"), "-o", "json"],
                "history": ["history", "-A", "--from-dump", str(path), "--now", "2026-12-02T11:00:00Z"],
            }[command]
            check(args)
    finally:
        path.unlink()
