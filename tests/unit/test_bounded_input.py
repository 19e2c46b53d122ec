"""Hostile and hand-written files: bounded work, and one answer for typed fields (issue 12, items 5-6).

Each attack is replayed through the real entry point (``cronctl.cli.main``) on every command that
reads a file; each gets exit 5 and one line naming the limit or the field, never a traceback, a
runaway or a wrong answer.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import RunCli
from cronctl import manifest
from cronctl.cli import main
from cronctl.errors import BadInput, ExitCode
from cronctl.procedure.backfill import read_done
from cronctl.schedule import decide
from cronctl.schedule.controller import MISSED_LIST_LIMIT
from cronctl.schedule.dst import transitions

UTC = timezone.utc
NOW = "2026-12-02T11:35:00Z"

CRONJOB: dict[str, Any] = {
    "apiVersion": "batch/v1", "kind": "CronJob",
    "metadata": {"name": "orders-sync", "namespace": "shop", "creationTimestamp": "2026-12-01T09:00:00Z"},
    "spec": {"schedule": "*/10 * * * *", "timeZone": "Europe/Berlin", "startingDeadlineSeconds": 300,
             "suspend": False, "jobTemplate": {"spec": {"backoffLimit": 0, "template": {"spec": {
                 "restartPolicy": "Never", "containers": [{"name": "sync", "image": "sync:1"}]}}}}},
    "status": {"lastScheduleTime": "2026-12-02T11:00:00Z"},
}

# every command that reads a file: {file} is the file, {out} a fresh output path
READERS = {
    "explain": ["explain", "-f", "{file}", "--now", NOW, "-o", "json"],
    "lint": ["lint", "-f", "{file}", "--now", NOW, "-o", "json"],
    "bundle": ["bundle", "--from-dump", "{file}", "--all", "--now", NOW, "--out", "{out}", "-o", "json"],
    "history": ["history", "--from-dump", "{file}", "--now", NOW, "-o", "json"],
}


def _run(capfd: pytest.CaptureFixture[str], tmp_path: Path, text: str, command: str) -> tuple[int, str, str]:
    f = tmp_path / "in.yaml"
    f.write_text(text)
    argv = [a.replace("{file}", str(f)).replace("{out}", str(tmp_path / "bundle")) for a in READERS[command]]
    code = main(argv)
    out, err = capfd.readouterr()
    return code, out, err


def _error_line(err: str) -> str:
    """The one ``error: ...`` line, last on stderr (bundle prints its progress line first)."""
    lines = err.splitlines()
    assert sum(ln.startswith("error: ") for ln in lines) == 1 and lines[-1].startswith("error: "), err
    return lines[-1]


def _list(*objs: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "List", "items": list(objs)}


def _with(path: str, value: Any) -> dict[str, Any]:
    doc = json.loads(json.dumps(CRONJOB))
    *parents, last = path.split(".")
    cur = doc
    for p in parents:
        cur = cur[p]
    cur[last] = value
    return doc


def _bomb() -> str:
    """A 'billion laughs' document of about 1 KB (9 levels of 9 aliases each)."""
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    head = yaml.safe_dump(_list(CRONJOB), sort_keys=False)
    return head + "bomb:\n" + "".join(f"  {ln}\n" for ln in lines)


# -- bounded work ---------------------------------------------------------------------------------

@pytest.mark.parametrize("command", READERS)
def test_an_alias_bomb_is_refused_naming_the_limit(capfd: pytest.CaptureFixture[str], tmp_path: Path,
                                                   command: str) -> None:
    text = _bomb()
    assert len(text) < 2000
    code, out, err = _run(capfd, tmp_path, text, command)
    assert code == ExitCode.BAD_INPUT, err
    assert "MAX_ALIAS_NODES" in _error_line(err) and "Traceback" not in err


@pytest.mark.parametrize("command", READERS)
def test_a_recursive_alias_is_refused(capfd: pytest.CaptureFixture[str], tmp_path: Path, command: str) -> None:
    text = yaml.safe_dump(_list(CRONJOB), sort_keys=False) + "loop: &l {self: *l}\n"
    code, _, err = _run(capfd, tmp_path, text, command)
    assert code == ExitCode.BAD_INPUT and "recursive alias" in err


@pytest.mark.parametrize("command", READERS)
def test_json_nested_50000_deep_is_refused_naming_the_limit(capfd: pytest.CaptureFixture[str], tmp_path: Path,
                                                            command: str) -> None:
    n = 50_000
    text = json.dumps(_list(CRONJOB))[:-1] + ', "deep": ' + "[" * n + "]" * n + "}"
    code, _, err = _run(capfd, tmp_path, text, command)
    assert code == ExitCode.BAD_INPUT and "MAX_DEPTH" in err and "Traceback" not in err


def test_yaml_nested_deeper_than_the_limit_is_refused(tmp_path: Path) -> None:
    deep = "".join(" " * i + f"k{i}:\n" for i in range(manifest.MAX_DEPTH + 5)) + " " * (manifest.MAX_DEPTH + 5) + "x: 1\n"
    with pytest.raises(BadInput, match=r"nested deeper than the limit of 100 levels \(MAX_DEPTH\)"):
        manifest.parse_documents(deep, source="deep.yaml")


def test_the_same_mapping_reached_twice_by_aliases_within_the_limits_is_read() -> None:
    docs = manifest.parse_documents("d: &d {a: 1}\nx: *d\ny: [*d, *d]\n", source="ok.yaml")
    assert docs == [{"d": {"a": 1}, "x": {"a": 1}, "y": [{"a": 1}, {"a": 1}]}]


def test_a_file_over_the_size_limit_is_refused_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(manifest, "MAX_FILE_BYTES", 1024)
    f = tmp_path / "big.yaml"
    f.write_text(yaml.safe_dump(CRONJOB) + "#" * 2000 + "\n")
    with pytest.raises(BadInput, match=r"big.yaml: larger than the limit of .*MAX_FILE_BYTES"):
        manifest.load_objects(str(f))


def test_yaml_is_read_with_libyaml_when_pyyaml_has_it() -> None:
    loader = manifest._loader()
    if getattr(yaml, "__with_libyaml__", False):
        assert issubclass(loader, yaml.CSafeLoader)
    else:  # pragma: no cover - a PyYAML built without libyaml
        assert issubclass(loader, yaml.SafeLoader)


def test_count_is_capped_with_a_clear_error(capfd: pytest.CaptureFixture[str]) -> None:
    code = main(["explain", "* * * * *", "--count", "10000000"])
    _, err = capfd.readouterr()
    assert code == ExitCode.USAGE and "at most 10000 runs" in err and "MAX_COUNT" not in err


@pytest.mark.parametrize("since", ["36500000d", "3651d", "99999999999999999999h"])
def test_a_duration_beyond_ten_years_is_refused(capfd: pytest.CaptureFixture[str], tmp_path: Path,
                                                since: str) -> None:
    f = tmp_path / "d.yaml"
    f.write_text(yaml.safe_dump(_list(CRONJOB)))
    code = main(["history", "--from-dump", str(f), "--since", since])
    _, err = capfd.readouterr()
    assert code == ExitCode.USAGE and "at most 3650d" in err and "MAX_DURATION" not in err


def test_a_backfill_ledger_nested_too_deep_is_bad_input(tmp_path: Path) -> None:
    f = tmp_path / "done.jsonl"
    f.write_text('{"scheduled_for": "2026-12-02T10:00:00Z", "x": ' + "[" * 50_000 + "]" * 50_000 + "}\n")
    with pytest.raises(BadInput, match="MAX_DEPTH"):
        read_done(str(f))


def test_an_ancient_last_schedule_time_costs_the_listing_cap_not_the_centuries() -> None:
    # lastScheduleTime 1000-01-01 in a DST zone: 54 million missed runs; the controller starts only
    # the most recent, and the listing stops at the cap (this took >100 s and 1.1 GB before).
    d = decide("*/10 * * * *", time_zone="Europe/Berlin", name="slow",
               created=datetime(1000, 1, 1, tzinfo=UTC), last_schedule=datetime(1000, 1, 1, tzinfo=UTC),
               starting_deadline=None, now=datetime(2026, 12, 2, 11, 5, tzinfo=UTC))
    assert d.decision == "create" and d.most_recent == datetime(2026, 12, 2, 11, 0, tzinfo=UTC)
    assert d.missed == "many" and d.missed_truncated
    assert len(d.missed_runs) == d.missed_count == MISSED_LIST_LIMIT == 10_000


def test_the_most_recent_weekday_run_after_centuries_is_exact() -> None:
    # weekdays: the estimate's first gap (Fri -> Mon) is the largest, so upstream's walk from its
    # estimate is centuries long; found backwards from now instead. 2026-12-02 is a Wednesday.
    d = decide("0 9 * * 1-5", time_zone="America/Santiago", name="w",
               created=datetime(1000, 1, 1, tzinfo=UTC), last_schedule=None, starting_deadline=None,
               now=datetime(2026, 12, 2, 13, 0, tzinfo=UTC))
    assert d.most_recent == datetime(2026, 12, 2, 12, 0, tzinfo=UTC)  # 09:00 -03 in Santiago


def test_transitions_over_a_thousand_years_start_with_the_zones_first_change() -> None:
    # Europe/Berlin: LMT (+0:53:28) -> CET on 1893-04-01 00:00 local = 1893-03-31T23:06:32Z
    found = transitions("Europe/Berlin", datetime(1000, 1, 1, tzinfo=UTC), datetime(2026, 12, 2, tzinfo=UTC))
    assert found[0].at == datetime(1893, 3, 31, 23, 6, 32, tzinfo=UTC)
    assert found[-1].at == datetime(2026, 10, 25, 1, 0, tzinfo=UTC) and found[-1].kind == "fold"


def test_explain_of_an_ancient_manifest_says_the_count_was_cut(capfd: pytest.CaptureFixture[str],
                                                               tmp_path: Path) -> None:
    doc = _with("status.lastScheduleTime", "1970-01-01T00:00:00Z")  # MIN_YEAR: 2.9 million missed runs
    doc["spec"].pop("startingDeadlineSeconds")
    code, out, err = _run(capfd, tmp_path, yaml.safe_dump(doc), "explain")
    assert code == 0, err
    ctl = json.loads(out)[0]["controller"]
    assert ctl["missedRunsTruncated"] is True and ctl["missedRunsCount"] == 10_000
    assert ctl["mostRecent"] == "2026-12-02T11:30:00Z"


# -- one answer for typed fields ------------------------------------------------------------------

WRONG = [
    ("spec.startingDeadlineSeconds", "30", "spec.startingDeadlineSeconds: expected an integer, got a string ('30')"),
    ("spec.suspend", "false", "spec.suspend: expected a boolean, got a string ('false')"),
    ("spec.jobTemplate", "run-it", "spec.jobTemplate: expected a mapping, got a string ('run-it')"),
    ("metadata.name", 123, "metadata.name: expected a string, got an integer (123)"),
    ("status.lastScheduleTime", "0001-01-01T00:00:00Z", "status.lastScheduleTime: year 1 is outside 1970..9000"),
    ("status.lastScheduleTime", "9999-12-31T23:59:59Z", "status.lastScheduleTime: year 9999 is outside 1970..9000"),
    ("metadata.creationTimestamp", ["2026"], "metadata.creationTimestamp: expected an RFC3339 time, got a list"),
    ("spec.jobTemplate.spec.template.spec.containers", {"name": "x"},
     "spec.jobTemplate.spec.template.spec.containers: expected a list, got a mapping"),
    ("status.active", [["orders-sync-1"]], "status.active[0]: expected a mapping, got a list"),
    ("metadata.annotations", {"cronctl.dev/side-effects": True},
     "metadata.annotations.cronctl.dev/side-effects: expected a string, got a boolean (True) (quote it)"),
    ("spec.successfulJobsHistoryLimit", 2 ** 40, "spec.successfulJobsHistoryLimit: 1099511627776 is out of range"),
    ("spec", ["a"], "spec: expected a mapping, got a list"),
]


@pytest.mark.parametrize("command", READERS)
@pytest.mark.parametrize("path, value, message", WRONG, ids=[f"{p}={v!r}"[:40] for p, v, _ in WRONG])
def test_a_wrong_type_is_exit_5_naming_the_field_from_every_command(
        capfd: pytest.CaptureFixture[str], tmp_path: Path, command: str, path: str, value: Any,
        message: str) -> None:
    code, out, err = _run(capfd, tmp_path, yaml.safe_dump(_list(_with(path, value))), command)
    assert code == ExitCode.BAD_INPUT, err
    line = _error_line(err).replace("cronjob shop/(no name)", "cronjob shop/orders-sync")
    assert "in.yaml: cronjob shop/orders-sync: " + message in line and out == ""


@pytest.mark.parametrize("command", ["explain", "bundle"])
def test_an_unquoted_yaml_timestamp_is_read_as_the_timestamp_it_is(capfd: pytest.CaptureFixture[str],
                                                                   tmp_path: Path, command: str) -> None:
    # PyYAML makes `lastScheduleTime: 2026-12-02T11:00:00Z` a datetime; it was silently ignored
    doc = _with("spec.startingDeadlineSeconds", None)  # earliest = lastScheduleTime itself
    text = yaml.safe_dump(_list(doc)).replace("'2026-12-02T11:00:00Z'", "2026-12-02T11:00:00Z")
    assert "lastScheduleTime: 2026-12-02T11:00:00Z\n" in text
    if command == "explain":
        code, out, err = _run(capfd, tmp_path, text, command)
        assert code == 0, err
        assert json.loads(out)[0]["controller"]["earliest"] == "2026-12-02T11:00:00Z"
    else:
        f = tmp_path / "dump.yaml"
        f.write_text(text.replace("2026-12-01T09:00:00Z", "2026-12-01T09:00:00Z"))
        code = main(["bundle", "--from-dump", str(f), "--all", "--out", str(tmp_path / "b"), "-o", "json"])
        capfd.readouterr()
        assert code == 0
        collected = json.loads((tmp_path / "b" / "bundle.json").read_text())["collected"]
        assert collected["now"] == "2026-12-02T11:00:00Z"
        assert collected["now_source"] == "latest timestamp in the dump"


def test_lint_of_a_file_without_a_cronjob_says_so_and_skips_it(capfd: pytest.CaptureFixture[str],
                                                                tmp_path: Path) -> None:
    # issue 34 item 6: in CI a ConfigMap beside the CronJobs is not a failure (it was exit 5)
    text = yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})
    code, out, err = _run(capfd, tmp_path, text, "lint")
    assert code == ExitCode.OK and "no CronJob, skipped" in err and json.loads(out)["checked"] == 0


@pytest.mark.parametrize("command", READERS)
def test_the_valid_object_used_above_is_accepted_by_every_command(capfd: pytest.CaptureFixture[str],
                                                                  tmp_path: Path, command: str) -> None:
    code, out, err = _run(capfd, tmp_path, yaml.safe_dump(_list(CRONJOB)), command)
    assert code in (0, ExitCode.FINDINGS), err
    assert out


def test_standard_input_goes_through_the_same_loader(run_cli: RunCli) -> None:
    doc = _with("spec.suspend", "false")
    r = run_cli("explain", "-f", "-", "--now", NOW, stdin=yaml.safe_dump(doc))
    assert r.exit_code == ExitCode.BAD_INPUT
    assert r.stderr == "error: -: cronjob shop/orders-sync: spec.suspend: expected a boolean, got a string ('false')\n"
