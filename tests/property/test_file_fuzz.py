"""Hypothesis: random mutations of a valid manifest and of a valid dump never produce a traceback.

Every command that reads a file (``explain -f``, ``lint -f``, ``bundle --from-dump``, ``history
--from-dump``) is run in-process through ``cronctl.cli.main``, which maps cronctl's errors to exit
codes and lets anything else escape: an escaping exception fails the test. Exit codes must be in
the documented set (0, 5 bad input, 6 not found, 8 findings). The mutations are the hand-written
file's usual mistakes: a wrong type anywhere (``startingDeadlineSeconds: "30"``, a string
``jobTemplate``, an integer name, ``suspend: "false"``), a list where a mapping belongs, a key
removed, unquoted YAML timestamps, years 0001 and 9999, huge integers.
"""

from __future__ import annotations

import copy
import os
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cronctl.cli import main

UTC = timezone.utc
NOW = "2026-12-02T11:35:00Z"
DUMP = Path(__file__).parent.parent / "golden" / "bundle" / "incident-004.dump.yaml"
DOCUMENTED = {0, 5, 6, 8}

MANIFEST: dict[str, Any] = {
    "apiVersion": "batch/v1", "kind": "CronJob",
    "metadata": {"name": "orders-sync", "namespace": "shop", "creationTimestamp": "2026-12-01T09:00:00Z",
                 "annotations": {"cronctl.dev/side-effects": "none"}, "labels": {"app": "orders"}},
    "spec": {
        "schedule": "*/10 * * * *", "timeZone": "Europe/Berlin", "startingDeadlineSeconds": 300,
        "concurrencyPolicy": "Forbid", "suspend": False, "successfulJobsHistoryLimit": 3,
        "failedJobsHistoryLimit": 3,
        "jobTemplate": {"metadata": {"labels": {"app": "orders"}}, "spec": {
            "backoffLimit": 0, "activeDeadlineSeconds": 600, "ttlSecondsAfterFinished": 86400,
            "template": {"metadata": {"annotations": {"a": "b"}}, "spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "sync", "image": "registry/sync:1.2", "command": ["/app/sync"],
                                "args": ["--orders"], "env": [{"name": "MODE", "value": "full"}]}]}}}},
    },
    "status": {"lastScheduleTime": "2026-12-02T10:00:00Z", "lastSuccessfulTime": "2026-12-02T10:00:40Z",
               "active": [{"name": "orders-sync-29936760", "namespace": "shop"}]},
}


def _small_dump() -> dict[str, Any]:
    items = yaml.safe_load(DUMP.read_text())["items"]
    keep: list[dict[str, Any]] = []
    for kind, n in (("CronJob", 1), ("Job", 2), ("Pod", 2), ("Event", 3)):
        keep.extend([o for o in items if o.get("kind") == kind][:n])
    return {"apiVersion": "v1", "kind": "List", "items": keep}


DUMP_DOC = _small_dump()

HOSTILE = st.one_of(
    st.sampled_from(["30", "false", "true", "", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z",
                     "1000-01-01T00:00:00Z", "2026-12-02T11:00:00Z", "2026-12-02", "soon", "* * * * *",
                     "@every 1s", "Europe/Berlin", "Forbid", "Replace", "x" * 300, "TZ=Mars/Olympus 0 0 * * *"]),
    st.integers(min_value=-(2 ** 70), max_value=2 ** 70), st.sampled_from([0, -1, 1, 2 ** 31, 2 ** 63]),
    st.booleans(), st.none(), st.floats(allow_nan=True, allow_infinity=True),
    st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)),
    st.just([]), st.just({}), st.lists(st.integers(), max_size=2), st.lists(st.text(max_size=3), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.text(max_size=8),
)


def _paths(x: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(x, dict):
        for k, v in x.items():
            out.extend(_paths(v, prefix + (k,)))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            out.extend(_paths(v, prefix + (i,)))
    return out


@st.composite
def mutated(draw: st.DrawFn, base: dict[str, Any]) -> dict[str, Any]:
    doc = copy.deepcopy(base)
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = [p for p in _paths(doc) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent: Any = doc
        for k in path[:-1]:
            parent = parent[k]
        how = draw(st.sampled_from(["replace", "replace", "replace", "delete", "wrap"]))
        if how == "delete":
            if isinstance(parent, dict):
                del parent[path[-1]]
            else:
                parent.pop(path[-1])
        elif how == "wrap":
            parent[path[-1]] = [parent[path[-1]]]
        else:
            parent[path[-1]] = draw(HOSTILE)
    return doc


def _run(doc: Any, *args: str) -> int:
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "in.yaml"
        f.write_text(yaml.safe_dump(doc, sort_keys=False))
        argv = [a.replace("{file}", str(f)).replace("{out}", str(Path(d) / "bundle")) for a in args]
        return main(argv)


# CRONCTL_FUZZ_EXAMPLES=1000 for a longer hunt
FUZZ = settings(max_examples=int(os.environ.get("CRONCTL_FUZZ_EXAMPLES", "60")), deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@FUZZ
@given(mutated(MANIFEST))
def test_a_mutated_manifest_never_gives_explain_a_traceback(doc: dict[str, Any]) -> None:
    assert _run(doc, "explain", "-f", "{file}", "--now", NOW, "-o", "json") in DOCUMENTED


@FUZZ
@given(mutated(MANIFEST))
def test_a_mutated_manifest_never_gives_lint_a_traceback(doc: dict[str, Any]) -> None:
    assert _run(doc, "lint", "-f", "{file}", "--now", NOW, "-o", "json") in DOCUMENTED


@FUZZ
@given(mutated(DUMP_DOC))
def test_a_mutated_dump_never_gives_bundle_a_traceback(doc: dict[str, Any]) -> None:
    assert _run(doc, "bundle", "--from-dump", "{file}", "--all", "--out", "{out}", "-o", "json") in DOCUMENTED


@FUZZ
@given(mutated(DUMP_DOC))
def test_a_mutated_dump_never_gives_history_a_traceback(doc: dict[str, Any]) -> None:
    assert _run(doc, "history", "--from-dump", "{file}", "-o", "json") in DOCUMENTED
