"""Hostile input, second round (issue 26): no internal error from any field, files that are files,
one value on one line.

Every attack is a small hand-made dump run through the real entry point (``run_cli``) of each
offline command; the answer is a result or one ``error:`` line with exit 5, never exit 70.
"""

from __future__ import annotations

import copy
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from conftest import RunCli
from cronctl import model
from cronctl.errors import BadInput, ExitCode
from cronctl.timeutil import parse_rfc3339

UTC = timezone.utc

CRONJOB: dict[str, Any] = {
    "apiVersion": "batch/v1", "kind": "CronJob",
    "metadata": {"name": "orders-sync", "namespace": "shop", "uid": "u1",
                 "creationTimestamp": "2026-12-01T09:00:00Z"},
    "spec": {"schedule": "*/10 * * * *", "timeZone": "Europe/Berlin", "startingDeadlineSeconds": 300,
             "suspend": False, "jobTemplate": {"spec": {"backoffLimit": 0, "template": {"spec": {
                 "restartPolicy": "Never", "containers": [{"name": "sync", "image": "sync:1"}]}}}}},
    "status": {"lastScheduleTime": "2026-12-02T11:00:00Z"},
}
JOB: dict[str, Any] = {
    "apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "orders-sync-29412060", "namespace": "shop", "uid": "j1",
                 "creationTimestamp": "2026-12-02T11:00:00Z",
                 "annotations": {model.SCHEDULED_TS: "2026-12-02T12:00:00+01:00"},
                 "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob", "name": "orders-sync",
                                      "uid": "u1", "controller": True}]},
    "status": {"startTime": "2026-12-02T11:00:01Z", "completionTime": "2026-12-02T11:00:30Z",
               "conditions": [{"type": "Complete", "status": "True",
                               "lastTransitionTime": "2026-12-02T11:00:30Z"}]},
}
POD: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "orders-sync-29412060-abcde", "namespace": "shop",
                 "labels": {"job-name": "orders-sync-29412060"}, "creationTimestamp": "2026-12-02T11:00:00Z"},
    "status": {"phase": "Succeeded", "startTime": "2026-12-02T11:00:01Z",
               "conditions": [{"type": "Ready", "status": "False", "lastProbeTime": "2026-12-02T11:00:00Z"}]},
}
EVENT: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Event", "metadata": {"name": "orders-sync.1", "namespace": "shop"},
    "involvedObject": {"kind": "CronJob", "name": "orders-sync", "namespace": "shop", "uid": "u1"},
    "reason": "SuccessfulCreate", "message": "Created job orders-sync-29412060", "type": "Normal",
    "firstTimestamp": "2026-12-02T11:00:00Z", "lastTimestamp": "2026-12-02T11:00:00Z",
}
#: the latest time in the typed fields of the dump above (the Job's completion)
LATEST = "2026-12-02T11:00:30Z"


def objects() -> list[dict[str, Any]]:
    return copy.deepcopy([CRONJOB, JOB, POD, EVENT])


def write(path: Path, items: list[dict[str, Any]]) -> str:
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return str(path)


# every offline command: {f} is the file, {out} a fresh output path
COMMANDS: dict[str, list[str]] = {
    "history": ["history", "--from-dump", "{f}", "-o", "json"],
    "bundle": ["bundle", "--from-dump", "{f}", "--out", "{out}", "-o", "json"],
    "lint": ["lint", "-f", "{f}", "-o", "json"],
    "alerts": ["alerts", "-f", "{f}"],
    "explain": ["explain", "-f", "{f}", "-o", "json"],
}


def run(run_cli: RunCli, tmp_path: Path, command: str, f: str) -> Any:
    argv = [a.replace("{f}", f).replace("{out}", str(tmp_path / f"out-{command}")) for a in COMMANDS[command]]
    return run_cli(*argv)


def assert_no_internal_error(res: Any) -> None:
    assert res.exit_code != ExitCode.INTERNAL, res.stderr
    assert "internal error" not in res.stderr and "Traceback" not in res.stderr, res.stderr


def assert_bad_input(res: Any, *words: str) -> None:
    assert res.exit_code == ExitCode.BAD_INPUT, (res.exit_code, res.stderr)
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("error: ")]
    assert len(lines) == 1, res.stderr
    for w in words:
        assert w in lines[0], lines[0]


# -- "now" of a dump comes from its checked timestamps only -----------------------------------------

def _probe_of_9999(items: list[dict[str, Any]]) -> None:
    items[2]["status"]["conditions"][0]["lastProbeTime"] = "9999-12-31T23:59:59Z"


def _configmap_of_9999(items: list[dict[str, Any]]) -> None:
    items.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "shop"},
                  "data": {"time": "9999-12-31T23:59:59Z", "lastTimestamp": "9999-12-31T23:59:59Z"}})


@pytest.mark.parametrize("command", ["history", "bundle"])
@pytest.mark.parametrize("plant", [_probe_of_9999, _configmap_of_9999], ids=["pod-lastProbeTime", "configmap"])
def test_now_of_a_dump_never_comes_from_a_key_nobody_checks(run_cli: RunCli, tmp_path: Path, command: str,
                                                            plant: Any) -> None:
    items = objects()
    plant(items)
    res = run(run_cli, tmp_path, command, write(tmp_path / "d.json", items))
    assert_no_internal_error(res)
    assert res.exit_code == 0, res.stderr
    if command == "history":
        assert json.loads(res.stdout)["now"] == LATEST
    else:
        doc = json.loads((tmp_path / "out-bundle" / "bundle.json").read_text())
        assert doc["collected"]["now"] == LATEST
        assert doc["collected"]["now_source"] == "latest timestamp in the dump"


# -- years outside MIN_YEAR..MAX_YEAR ----------------------------------------------------------------

def _annotate(index: int, key: str, value: str, **extra: Any) -> Any:
    def plant(items: list[dict[str, Any]]) -> None:
        items[index]["metadata"].setdefault("annotations", {})[key] = value
        for k, v in extra.items():
            items[index]["metadata"]["annotations"][k] = v
        if key.startswith("cronctl.dev/paused"):
            items[index]["spec"]["suspend"] = True
            items[index]["spec"]["timeZone"] = "Asia/Tokyo"
    return plant


YEARS = {
    "paused-until-9999": (_annotate(0, model.ANN_PAUSED_UNTIL, "9999-12-31T23:59:59Z",
                                    **{model.ANN_PAUSED_BY: "ops", model.ANN_PAUSED_AT: "2026-12-01T00:00:00Z"}),
                          "metadata.annotations.cronctl.dev/paused-until: year 9999"),
    "paused-at-0001": (_annotate(0, model.ANN_PAUSED_AT, "0001-01-01T00:00:00Z",
                                 **{model.ANN_PAUSED_BY: "ops", model.ANN_PAUSED_UNTIL: "2026-12-01T00:00:00Z"}),
                       "metadata.annotations.cronctl.dev/paused-at: year 1"),
    "scheduled-ts-year-0-in-utc": (_annotate(1, model.SCHEDULED_TS, "0001-01-01T00:00:00+01:00"),
                                   "metadata.annotations.batch.kubernetes.io/cronjob-scheduled-timestamp: year 1"),
    "start-time-1969": (lambda items: items[1]["status"].update(startTime="1969-12-31T23:59:59Z"),
                        "status.startTime: year 1969 is outside 1970..9000"),
}


@pytest.mark.parametrize("command", ["history", "bundle"])
@pytest.mark.parametrize("case", YEARS)
def test_a_year_out_of_range_is_exit_5_naming_the_field(run_cli: RunCli, tmp_path: Path, command: str,
                                                        case: str) -> None:
    plant, words = YEARS[case]
    items = objects()
    plant(items)
    res = run(run_cli, tmp_path, command, write(tmp_path / "d.json", items))
    assert_bad_input(res, words)


@pytest.mark.parametrize("command", ["lint", "alerts", "explain"])
def test_a_pause_until_the_year_9999_is_exit_5_for_the_cronjob_readers(run_cli: RunCli, tmp_path: Path,
                                                                       command: str) -> None:
    plant, words = YEARS["paused-until-9999"]
    items = objects()
    plant(items)
    assert_bad_input(run(run_cli, tmp_path, command, write(tmp_path / "d.json", items)), words)


@pytest.mark.parametrize("value", ["9999-12-31T23:59:59Z", "0001-01-01T00:00:00Z", "0001-01-01T00:00:00+01:00",
                                   "9999-12-31T23:59:59-01:00", "1969-12-31T23:59:59Z"])
def test_the_lenient_reader_takes_a_time_out_of_range_as_absent(value: str) -> None:
    # a live object is not checked like a file: its evidence is read as absent instead
    assert model.when(value) is None
    pause = model.read_pause({"metadata": {"annotations": {model.ANN_PAUSED_BY: "ops",
                                                           model.ANN_PAUSED_UNTIL: value}}})
    assert pause is not None and pause.until is None


def test_an_offset_that_leaves_the_years_of_datetime_is_bad_input_not_an_overflow() -> None:
    with pytest.raises(BadInput, match="outside the years"):
        parse_rfc3339("0001-01-01T00:00:00+01:00")
    assert parse_rfc3339("2026-12-02T12:00:00+01:00") == datetime(2026, 12, 2, 11, tzinfo=UTC)


# -- deadlines at the int64 maximum ------------------------------------------------------------------

INT64_MAX = 2 ** 63 - 1


def _starting_deadline(items: list[dict[str, Any]]) -> None:
    items[0]["spec"]["startingDeadlineSeconds"] = INT64_MAX


def _active_deadline(items: list[dict[str, Any]]) -> None:
    items[0]["spec"]["concurrencyPolicy"] = "Forbid"
    items[0]["spec"]["jobTemplate"]["spec"]["activeDeadlineSeconds"] = INT64_MAX
    items[1]["spec"] = {"activeDeadlineSeconds": INT64_MAX}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("plant", [_starting_deadline, _active_deadline], ids=["startingDeadline", "activeDeadline"])
def test_a_deadline_at_the_int64_maximum_saturates(run_cli: RunCli, tmp_path: Path, command: str,
                                                   plant: Any) -> None:
    items = objects()
    plant(items)
    res = run(run_cli, tmp_path, command, write(tmp_path / "d.json", items))
    assert_no_internal_error(res)
    assert res.exit_code == 0, res.stderr
    if command == "lint":  # the finding still names the value as written
        assert str(INT64_MAX) in res.stdout


def test_arithmetic_on_a_deadline_saturates_at_the_documented_cap() -> None:
    assert model.capped_seconds(INT64_MAX).total_seconds() == model.MAX_DEADLINE_SECONDS
    assert model.capped_seconds(-INT64_MAX).total_seconds() == -model.MAX_DEADLINE_SECONDS
    assert model.capped_seconds(300).total_seconds() == 300
    # the cap is longer than any span between two times cronctl accepts: the answer is unchanged
    span = datetime(model.MAX_YEAR, 12, 31, tzinfo=UTC) - datetime(model.MIN_YEAR, 1, 1, tzinfo=UTC)
    assert span < model.capped_seconds(INT64_MAX)


# -- a Job name that would be a slot past MAX_YEAR ------------------------------------------------------

@pytest.mark.parametrize("command", COMMANDS)
def test_an_event_about_a_job_named_for_the_year_11968_is_no_slot(run_cli: RunCli, tmp_path: Path,
                                                                  command: str) -> None:
    items = objects()
    items[3]["message"] = "Created job orders-sync-5258964000"
    gone = copy.deepcopy(items[3])
    gone["metadata"]["name"] = "orders-sync.2"
    gone["reason"], gone["message"] = "SawCompletedJob", "Saw completed job: orders-sync-5258964000, status: Complete"
    items.append(gone)
    res = run(run_cli, tmp_path, command, write(tmp_path / "d.json", items))
    assert_no_internal_error(res)
    assert res.exit_code == 0, res.stderr


@pytest.mark.parametrize("name, slot", [
    ("t-5258964000", None),  # the year 11968
    ("t-" + "\u0662\u0669\u0664\u0661\u0662\u0660\u0666\u0660", None),  # Arabic-Indic digits: int() takes them
    ("t-29412060", datetime(2025, 12, 3, 1, 0, tzinfo=UTC)),
])
def test_a_controller_job_name_stands_for_a_slot_only_in_the_years_cronctl_handles(
        name: str, slot: datetime | None) -> None:
    assert model.slot_of_name(name, "t") == slot


# -- an integer of thousands of digits ----------------------------------------------------------------

def _long_int_json(tmp_path: Path) -> str:
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": objects()})
    f = tmp_path / "d.json"
    f.write_text(text.replace('"backoffLimit": 0', '"backoffLimit": ' + "9" * 5000))
    return str(f)


def _long_int_yaml(tmp_path: Path) -> str:
    import yaml

    f = tmp_path / "d.yaml"
    f.write_text(yaml.safe_dump_all(objects()).replace("backoffLimit: 0", "backoffLimit: " + "9" * 5000))
    return str(f)


def _long_hex_yaml(tmp_path: Path) -> str:
    import yaml

    f = tmp_path / "d.yaml"
    f.write_text(yaml.safe_dump_all(objects()).replace("backoffLimit: 0", "backoffLimit: 0x" + "f" * 3000))
    return str(f)


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("make", [_long_int_json, _long_int_yaml, _long_hex_yaml], ids=["json", "yaml", "yaml-hex"])
def test_an_integer_of_thousands_of_digits_is_bad_input(run_cli: RunCli, tmp_path: Path, command: str,
                                                        make: Any) -> None:
    res = run(run_cli, tmp_path, command, make(tmp_path))
    assert_bad_input(res, "an integer longer than the limit of 640 digits (MAX_INT_DIGITS)")


def test_the_int_string_limit_is_set_around_the_loader_and_given_back(tmp_path: Path) -> None:
    import sys

    from cronctl.manifest import load_objects

    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)  # PYTHONINTMAXSTRDIGITS=0: no limit in this process
    try:
        with pytest.raises(BadInput, match="MAX_INT_DIGITS"):
            load_objects(_long_int_json(tmp_path))
        assert sys.get_int_max_str_digits() == 0
        assert len(load_objects(write(tmp_path / "ok.json", objects()))) == 4
    finally:
        sys.set_int_max_str_digits(old)


# -- a lone surrogate (JSON "\ud800": no UTF-8 can hold it) ---------------------------------------------

def _surrogates(items: list[dict[str, Any]]) -> None:
    items[3]["message"] = "Created job orders-sync-29412060 \ud800 end"
    items[0]["metadata"]["annotations"] = {"team/owner": "ops \udfff"}
    items[1]["status"]["conditions"].append({"type": "Failed", "status": "False", "message": "x\udc80"})


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_lone_surrogate_is_escaped_never_a_unicode_encode_error(run_cli: RunCli, tmp_path: Path, command: str,
                                                                  fmt: str) -> None:
    items = objects()
    _surrogates(items)
    argv = [a.replace("{f}", write(tmp_path / "d.json", items)).replace("{out}", str(tmp_path / "out"))
            for a in COMMANDS[command]]
    if fmt == "text" and "-o" in argv:
        i = argv.index("-o")
        del argv[i:i + 2]
    res = run_cli(*argv)
    assert_no_internal_error(res)
    assert res.exit_code == 0, res.stderr
    res.stdout.encode("utf-8"), res.stderr.encode("utf-8")  # what a real terminal or pipe would be given
    if command == "bundle":
        for f in (tmp_path / "out").iterdir():
            f.read_bytes().decode("utf-8")
        assert "\\ud800" in (tmp_path / "out" / "bundle.json").read_text()


# -- -f and --from-dump read regular files only -------------------------------------------------------

def _special(tmp_path: Path, kind: str) -> str:
    import os
    import socket

    if kind == "fifo":
        p = tmp_path / "dump.fifo"
        os.mkfifo(p)
        return str(p)
    if kind == "socket":
        p = tmp_path / "s.sock"
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(p))  # left bound: the test's tmp_path goes with it
        return str(p)
    if kind == "directory":
        return str(tmp_path)
    return "/dev/zero"  # a character device: endless reads


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("kind, words", [("fifo", "is a FIFO (named pipe), not a regular file"),
                                         ("device", "is a character device, not a regular file"),
                                         ("socket", "is a socket, not a regular file"),
                                         ("directory", "is a directory")])
def test_a_file_argument_that_is_no_regular_file_is_refused_before_reading(tmp_path: Path, command: str, kind: str,
                                                                           words: str) -> None:
    # in a child process with a hard timeout: a blocking read of a FIFO would hang the test otherwise
    import subprocess
    import sys

    path = _special(tmp_path, kind)
    argv = [a.replace("{f}", path).replace("{out}", str(tmp_path / "out")) for a in COMMANDS[command]]
    p = subprocess.run([sys.executable, "-m", "cronctl", *argv], capture_output=True, text=True, timeout=20,
                       stdin=subprocess.DEVNULL)
    assert p.returncode == ExitCode.BAD_INPUT, p.stderr
    errors = [ln for ln in p.stderr.splitlines() if ln.startswith("error: ")]
    assert len(errors) == 1 and words in errors[0] and path in errors[0], p.stderr
    assert not (tmp_path / "out").exists()


# -- the sanitiser: zero-width characters and separators are shown as escapes ---------------------------

ZERO_WIDTH = ["\u180e", "\u200b", "\u200c", "\u200d", "\u200e", "\u200f", "\u2060", "\u2061", "\u2064", "\ufeff"]
SEPARATORS = ["\u2028", "\u2029"]


@pytest.mark.parametrize("ch", ZERO_WIDTH + SEPARATORS, ids=lambda c: f"U+{ord(c):04X}")
def test_zero_width_and_separator_characters_are_shown_as_escapes(ch: str) -> None:
    from cronctl.textsafe import is_visible, json_visible, md_code, md_text, visible

    value = f"orders{ch}-sync"
    assert visible(value) == f"orders\\u{ord(ch):04x}-sync"
    assert visible(value, multiline=True) == f"orders\\u{ord(ch):04x}-sync"
    assert not is_visible(value)
    assert ch not in md_text(value) and ch not in md_code(value)
    text = json.dumps({"name": value}, ensure_ascii=False)
    assert json.loads(json_visible(text)) == {"name": value} and ch not in json_visible(text)


# -- one value, one line: every string field of a dump, every offline command ----------------------------

#: what a hostile value carries: a forged line, CR, OSC 52 (clipboard), RLO, a line separator and a
#: zero-width space; the marker must never start a line of output
MARKER = "FORGED bundle written to /etc/cron.d"
HOSTILE = f"x\n{MARKER}\r\n{MARKER}\r\x1b]52;c;SGk=\x07\u202e\u2028{MARKER}\u200b\u2029y"


def _string_fields(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The path of every string in the dump (the kinds, apiVersions and Job-name links excepted:
    an object of another kind is not read at all)."""
    out: list[tuple[Any, ...]] = []
    if isinstance(node, dict):
        for k, v in node.items():
            out += _string_fields(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _string_fields(v, path + (i,))
    elif isinstance(node, str) and path[-1] not in ("kind", "apiVersion"):
        out.append(path)
    return out


def _hostile_items() -> list[dict[str, Any]]:
    items = objects()
    items[0]["metadata"]["annotations"] = {"team/owner": "ops", model.ANN_PAUSE_REASON: "r"}
    items[0]["metadata"]["labels"] = {"app": "orders"}
    items[1]["status"]["conditions"].append({"type": "FailureTarget", "status": "False", "reason": "R",
                                             "message": "m"})
    items.append({**copy.deepcopy(EVENT), "metadata": {"name": "orders-sync.2", "namespace": "shop"},
                  "involvedObject": {"kind": "Job", "name": "orders-sync-29412060", "namespace": "shop"},
                  "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit",
                  "type": "Warning"})
    return items


FIELDS = _string_fields(_hostile_items())
#: and the keys: an annotation's or a label's name
KEYS = [(0, "metadata", "annotations"), (0, "metadata", "labels")]


def _plant(items: list[dict[str, Any]], path: tuple[Any, ...], key: bool) -> None:
    node: Any = items
    for p in path[:-1]:
        node = node[p]
    if key:
        node[path[-1]] = {HOSTILE: "v", **node[path[-1]]}
    else:
        node[path[-1]] = HOSTILE


#: the characters that act on a terminal or start a line of their own (\n ends a line; \t is kept)
def _acting(text: str) -> list[str]:
    from cronctl.textsafe import visible

    return sorted({c for c in text if c not in "\n\t" and visible(c) != c})


def assert_one_value_one_line(res: Any, hostile: str = HOSTILE) -> None:
    for stream in (res.stdout, res.stderr):
        assert not _acting(stream), (_acting(stream), stream[-2000:])
        for line in stream.splitlines():
            assert not line.lstrip().startswith(MARKER.split()[0]), (line, stream[-2000:])


def _cases() -> list[Any]:
    out = [pytest.param(p, False, id="/".join(map(str, p))) for p in FIELDS]
    out += [pytest.param(p, True, id="key:" + "/".join(map(str, p))) for p in KEYS]
    return out


#: every offline command, and the variants that print more: history's --fail-on summary
PRINTERS = {**COMMANDS, "history-fail-on": ["history", "--from-dump", "{f}", "--fail-on", "lost",
                                             "--fail-on", "duplicate", "-o", "json"]}


@pytest.mark.parametrize("command", PRINTERS)
@pytest.mark.parametrize("path, key", _cases())
def test_a_hostile_value_in_any_string_field_stays_on_its_line(run_cli: RunCli, tmp_path: Path, command: str,
                                                              path: tuple[Any, ...], key: bool) -> None:
    items = _hostile_items()
    _plant(items, path, key)
    f = write(tmp_path / "d.json", items)
    argv = [a.replace("{f}", f).replace("{out}", str(tmp_path / "out")) for a in PRINTERS[command]]
    if "-o" in argv:  # text: what a person reads on a terminal
        i = argv.index("-o")
        del argv[i:i + 2]
    res = run_cli(*argv)
    assert_no_internal_error(res)
    assert_one_value_one_line(res)
    if res.exit_code in (0, 8) and command != "alerts":  # and the machine output: the same data, escaped
        res = run_cli(*argv, "-o", "json") if command != "bundle" else res
        assert_one_value_one_line(res)


#: a file name as a shell glob hands it over: Linux allows every byte but / and NUL
HOSTILE_NAME = HOSTILE.replace("/", "\u2215")


@pytest.mark.parametrize("command", PRINTERS)
def test_a_hostile_file_name_stays_on_its_line(run_cli: RunCli, tmp_path: Path, command: str) -> None:
    f = write(tmp_path / HOSTILE_NAME, _hostile_items())
    argv = [a.replace("{f}", f).replace("{out}", str(tmp_path / "out")) for a in PRINTERS[command]]
    if "-o" in argv:
        i = argv.index("-o")
        del argv[i:i + 2]
    res = run_cli(*argv)
    assert_no_internal_error(res)
    assert_one_value_one_line(res)
    missing = run_cli(*[a.replace(f, f + "-gone") for a in argv])  # the error naming it
    assert missing.exit_code == ExitCode.BAD_INPUT
    assert_one_value_one_line(missing)


@pytest.mark.parametrize("argv", [
    ["explain", "-f", "{f}", "{f}"],  # explain -f *.yaml: the second file is an extra argument
    ["explain", "-f", "{f}", "{f}", "{f}"],
    ["explain", "--count", "{f}", "@daily"],
    ["lint", "-f", "{f}", "{f}", "{f}"],
    ["history", "--from-dump", "{f}", "--fail-on", "{f}"],
    ["bundle", "--from-dump", "{f}", "--out", "{f}-out", "{f}"],
    ["alerts", "-f", "{f}", "{f}", "{f}"],
    ["explain", "--{f}"],
], ids=lambda a: " ".join(a))
def test_a_hostile_file_name_in_a_usage_error_stays_on_its_line(run_cli: RunCli, tmp_path: Path,
                                                                argv: list[str]) -> None:
    f = write(tmp_path / HOSTILE_NAME, _hostile_items())
    res = run_cli(*[a.replace("{f}", f) for a in argv])
    assert_no_internal_error(res)
    assert res.exit_code != 0
    assert_one_value_one_line(res)


# -- -o json and bundle.json: the same data, every acting character as \uXXXX ----------------------------

JSON_HOSTILE = "a\x85b\x9b31mc\u202ed\u2028e\u2029f\u200bg\ufeffh\u2060i\x1b]52;c;SGk=\x07j"


@pytest.mark.parametrize("command", ["history", "bundle", "lint", "explain", "history-sarif"])
def test_json_output_escapes_c1_bidi_separators_and_zero_width(run_cli: RunCli, tmp_path: Path,
                                                               command: str) -> None:
    items = objects()
    items[3]["message"] = f"Created job orders-sync-29412060 {JSON_HOSTILE}"
    items[0]["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["command"] = [
        "sh", "-c", f"echo {JSON_HOSTILE}"]
    items[0]["metadata"]["annotations"] = {"team/owner": JSON_HOSTILE}
    f = write(tmp_path / "d.json", items)
    argv = (["lint", "-f", f, "-o", "sarif"] if command == "history-sarif" else
            [a.replace("{f}", f).replace("{out}", str(tmp_path / "out")) for a in COMMANDS[command]])
    res = run_cli(*argv)
    assert_no_internal_error(res)
    texts = [res.stdout] + ([(tmp_path / "out" / "bundle.json").read_text()] if command == "bundle" else [])
    for text in texts:
        assert text.strip(), res.stderr
        assert not _acting(text), _acting(text)
        json.loads(text)  # still JSON
    for text in texts[-1:] if command == "bundle" else []:
        assert "\\u202e" in text and "\\u0085" in text and "\\u200b" in text  # the data is there, escaped


# -- --missed-limit has a documented cap ---------------------------------------------------------------

@pytest.mark.parametrize("limit, code", [("10000", 0), ("10001", ExitCode.USAGE),
                                         ("100000000", ExitCode.USAGE), ("0", 0), ("-5", 0)])
def test_the_missed_limit_is_capped(run_cli: RunCli, limit: str, code: int) -> None:
    import time

    t0 = time.monotonic()
    res = run_cli("explain", "* * * * *", "--dialect", "atlas", "--last-schedule", "2000-01-01T00:00:00Z",
                  "--now", "2026-01-01T00:00:00Z", "--missed-limit", limit, "-o", "json")
    assert res.exit_code == code, res.stderr
    assert time.monotonic() - t0 < 30  # 100,000,000 took 93 s before the cap
    if code:  # a flag's value past its cap: exit 2 like any bad value of it (issue 34), the cap in words
        lines = [ln for ln in res.stderr.splitlines() if ln.startswith("error: ")]
        assert lines == [f"error: bad --missed-limit {limit}: at most 10000 due runs are started per pass"], res.stderr


# -- REPORT.md: no link made of data, GFM's autolinks included --------------------------------------------

LINKS = ["https://evil.example/login", "HTTP://evil.example", "ftp://evil.example/x", "www.evil.example",
         "(www.evil.example/path)", "1http://evil.example", "ops@evil.example", "mailto:ops@evil.example",
         "xmpp:ops@evil.example/res", "a.b+c@evil-x.example.org,", "*https://evil.example*",
         "<https://evil.example>", "[x](https://evil.example)", "![i](https://evil.example/i.png)"]


def _gfm(markdown: str) -> str:
    cmarkgfm = pytest.importorskip("cmarkgfm")
    return str(cmarkgfm.github_flavored_markdown_to_html(markdown))


@pytest.mark.parametrize("value", LINKS)
def test_markdown_text_makes_no_link_in_a_real_gfm_renderer(value: str) -> None:
    from cronctl.textsafe import md_code, md_text

    for md in (md_text(f"job said {value} then"), f"| a | {md_text(value)} |\n|---|---|\n| {md_text(value)} | x |",
               md_code(value)):
        html = _gfm(md)
        assert "<a " not in html and "<img" not in html, (md, html)
    # and the text is all there, as it was written
    assert "evil" in _gfm(md_text(value)) and "\\:" not in _gfm(md_text(value))


def test_the_report_of_a_hostile_dump_has_only_its_own_links(run_cli: RunCli, tmp_path: Path) -> None:
    def report(items: list[dict[str, Any]], name: str) -> str:
        res = run_cli("bundle", "--from-dump", write(tmp_path / f"{name}.json", items), "--out", str(tmp_path / name))
        assert res.exit_code == 0, res.stderr
        return _gfm((tmp_path / name / "REPORT.md").read_text())

    clean = report(objects(), "clean")
    items = objects()
    text = " ".join(LINKS)
    items[3]["message"] = f"Created job orders-sync-29412060 {text}"
    items[0]["metadata"]["annotations"] = {"team/runbook": text, "team/owner": "ops@evil.example"}
    items[1]["status"]["conditions"].append({"type": "FailureTarget", "status": "True", "reason": "www.evil.example",
                                             "message": text})
    hostile = report(items, "hostile")
    assert "evil.example" in hostile
    assert hostile.count("<a ") == clean.count("<a ") and hostile.count("<img") == clean.count("<img")


# -- --now of the offline readers: the same years as a file's times ---------------------------------------

@pytest.mark.parametrize("command", ["history", "bundle", "lint", "alerts"])
@pytest.mark.parametrize("now, year", [("9999-12-31T23:59:59Z", 9999), ("0001-01-01T00:00:00Z", 1),
                                       ("1969-12-31T23:59:59Z", 1969)])
def test_now_out_of_range_is_exit_5_naming_the_flag(run_cli: RunCli, tmp_path: Path, command: str, now: str,
                                                    year: int) -> None:
    f = write(tmp_path / "d.json", objects())
    argv = [a.replace("{f}", f).replace("{out}", str(tmp_path / "out")) for a in COMMANDS[command]]
    res = run_cli(*argv, "--now", now)
    assert_bad_input(res, f"bad --now '{now}': year {year} is outside 1970..9000")
    assert not (tmp_path / "out").exists()
