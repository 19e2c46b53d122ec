"""`cronctl explain` end to end: text, JSON, YAML, files, and every error path with its exit code.

Expected values come from docs/SEMANTICS.md and the upstream vectors (tests/data/vectors), never from
this command's own output. Most tests call ``cronctl.cli.main([...])`` and read stdout and stderr
separately; a few run the installed entry point in a subprocess (exit code, no traceback, no
kubernetes import).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import RunCli
from cronctl.cli import main
from cronctl.errors import ExitCode
from harness import cronctl

ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "tests" / "data" / "vectors" / "controller-sample.jsonl"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(["explain", *args])
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    rc, out, err = run(capsys, *args, "-o", "json")
    assert rc == 0, err
    return json.loads(out)


# --- next runs and DST ------------------------------------------------------------------------

NY_GAP = ("30 2 * * *", "--tz", "America/New_York", "--from", "2026-03-07T00:00:00Z", "--count", "3")


def test_the_spring_forward_day_has_no_run_and_the_next_is_0630z(capsys: pytest.CaptureFixture[str]) -> None:
    # docs/SEMANTICS.md §3: `30 2 * * *` America/New_York: no run on 2026-03-08; next 2026-03-09T06:30:00Z.
    r = run_json(capsys, *NY_GAP)
    assert [n["utc"] for n in r["next"]] == ["2026-03-07T07:30:00Z", "2026-03-09T06:30:00Z", "2026-03-10T06:30:00Z"]
    assert [n["local"] for n in r["next"]] == [
        "2026-03-07T02:30:00-05:00", "2026-03-09T02:30:00-04:00", "2026-03-10T02:30:00-04:00"]
    assert [n["weekday"] for n in r["next"]] == ["Sat", "Mon", "Tue"]
    assert r["schedule"] == "30 2 * * *"
    assert r["timeZone"] == "America/New_York"
    assert r["description"] == "at 02:30 every day, in America/New_York"
    [gap] = r["dst"]
    assert gap["kind"] == "gap"
    assert gap["transition"] == "2026-03-08T07:00:00Z"  # 02:00 EST -> 03:00 EDT
    assert (gap["offsetBefore"], gap["offsetAfter"]) == ("-05:00", "-04:00")
    assert gap["skipped"] == ["2026-03-08T02:30"]
    assert "controller" not in r


def test_the_fall_back_day_runs_twice(capsys: pytest.CaptureFixture[str]) -> None:
    # docs/SEMANTICS.md §3: `30 1 * * *` New York on 2026-11-01 at 05:30Z (EDT) and 06:30Z (EST).
    r = run_json(capsys, "30 1 * * *", "--tz", "America/New_York", "--from", "2026-10-31T12:00:00Z", "--count", "3")
    assert [n["utc"] for n in r["next"]] == ["2026-11-01T05:30:00Z", "2026-11-01T06:30:00Z", "2026-11-02T06:30:00Z"]
    assert [n["local"] for n in r["next"]][:2] == ["2026-11-01T01:30:00-04:00", "2026-11-01T01:30:00-05:00"]
    [fold] = r["dst"]
    assert fold["kind"] == "fold" and fold["transition"] == "2026-11-01T06:00:00Z"
    assert fold["repeated"] == [{"wall": "2026-11-01T01:30", "utc": ["2026-11-01T05:30:00Z", "2026-11-01T06:30:00Z"]}]


def test_text_output_shows_both_zones_the_weekday_and_the_skipped_run(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run(capsys, *NY_GAP)
    assert rc == 0 and err == ""
    assert "at 02:30 every day, in America/New_York" in out
    assert "Mon 2026-03-09 02:30 -04:00" in out
    assert "Mon 2026-03-09 06:30Z" in out
    # No run on 03-08: the list says the wall time does not exist instead of listing a run.
    assert "Sun 2026-03-08 02:30 does not exist: no run (DST gap)" in out
    assert "2026-03-08 02:30 -0" not in out
    assert "the run at 02:30 will not happen" in out
    assert "2026-03-08T07:00:00Z" in out


def test_yaml_output_is_the_same_document_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    as_json = run_json(capsys, *NY_GAP)
    rc, out, _ = run(capsys, *NY_GAP, "-o", "yaml")
    assert rc == 0
    assert yaml.safe_load(out) == as_json


def test_no_zone_means_the_controllers_local_zone_utc(capsys: pytest.CaptureFixture[str]) -> None:
    r = run_json(capsys, "0 0 13 * 5", "--from", "2026-03-01T00:00:00Z", "--count", "2")
    # vectors group syntax: the 13th OR Fridays -> Fri 03-06, Fri 03-13.
    assert [n["utc"] for n in r["next"]] == ["2026-03-06T00:00:00Z", "2026-03-13T00:00:00Z"]
    assert r["timeZone"] is None and r["zone"] == "UTC" and r["zoneSource"] == "controller-local"
    assert r["description"] == "at 00:00 on day 13 of the month, or on Fridays, in the controller's local zone (UTC)"
    assert any("no timeZone" in w for w in r["warnings"])


def test_a_schedule_that_never_fires_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    r = run_json(capsys, "0 0 30 2 *", "--from", "2026-01-01T00:00:00Z", "--allow-never")
    assert r["neverFires"] is True and r["next"] == []
    assert r["description"] == "day 30 of February never exists: this schedule never fires"


def test_the_atlas_dialect_ands_the_day_fields(capsys: pytest.CaptureFixture[str]) -> None:
    r = run_json(capsys, "0 0 13 * 5", "--dialect", "atlas", "--from", "2026-01-01T00:00:00Z", "--count", "2")
    # Friday the 13ths of 2026 (calendar): Feb 13, Mar 13.
    assert [n["utc"] for n in r["next"]] == ["2026-02-13T00:00:00Z", "2026-03-13T00:00:00Z"]
    assert r["dialect"] == "atlas"


def test_the_atlas_due_list_is_the_earliest_runs_up_to_the_limit(capsys: pytest.CaptureFixture[str]) -> None:
    # docs/BACKGROUND.md §2.4, exercise 3: three-minute delay, missed limit two -> the two earliest minutes.
    r = run_json(capsys, "* * * * *", "--dialect", "atlas", "--created", "2026-01-01T00:00:00Z",
                 "--now", "2026-01-01T00:03:00Z", "--missed-limit", "2")
    c = r["controller"]
    assert c["due"] == ["2026-01-01T00:01:00Z", "2026-01-01T00:02:00Z"]
    assert c["missedLimit"] == 2 and c["moreDue"] is True and c["base"] == "2026-01-01T00:00:00Z"


# --- the controller's decision (vectors) --------------------------------------------------------

def _vector_lines() -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in VECTORS.read_text().splitlines() if line.strip()]
    # Lines computed with another controller local zone cannot be expressed on the command line
    # (cronctl explain assumes the controller runs in UTC); unparseable schedules are error paths.
    return [d for d in rows if d.get("controller_local_tz") is None and d["decision"] != "unparseable-schedule"]


@pytest.mark.parametrize("v", _vector_lines(), ids=lambda d: f"{d['group']}:{d['expr']}:{d['now']}")
def test_the_controller_object_matches_the_upstream_vector(capsys: pytest.CaptureFixture[str], v: dict[str, Any]) -> None:
    args = [v["expr"], "--name", v["name"], "--created", v["creationTimestamp"], "--now", v["now"], "--allow-never"]
    if v["tz"]:
        args += ["--tz", v["tz"]]
    if v["lastScheduleTime"]:
        args += ["--last-schedule", v["lastScheduleTime"]]
    if v["startingDeadlineSeconds"] is not None:
        args += ["--starting-deadline", str(v["startingDeadlineSeconds"])]
    c = run_json(capsys, *args)["controller"]
    assert c["now"].startswith(v["now"][:19])
    assert c["mostRecent"] == v["most_recent"]
    assert c["missed"] == v["missed"] or v["mrst_error"]
    assert c["jobName"] == v.get("job_name")
    assert c["scheduledTimestamp"] == v.get("scheduled_timestamp_annotation")
    # the controller's requeue (next run + 100 ms), printed in whole seconds like every time (docs/OUTPUT.md)
    requeue = v.get("requeue_at")
    assert c["nextWakeUp"] == (re.sub(r"\.\d+Z$", "Z", requeue) if requeue else requeue)
    assert c["events"] == (v.get("events") or [])
    if v["most_recent"] is None and v.get("exact_most_recent"):
        assert c["estimateSkipped"] == v["exact_most_recent"]


def test_the_decision_is_said_in_words_with_the_runs_never_made_up(capsys: pytest.CaptureFixture[str]) -> None:
    # vectors hourly-last: last run 10:00, now 13:30 -> starts 13:00 (mycronjob-29454540); 11:00, 12:00 are lost.
    rc, out, _ = run(capsys, "0 * * * *", "--name", "mycronjob", "--created", "2026-01-01T00:00:00Z",
                     "--last-schedule", "2026-01-01T10:00:00Z", "--now", "2026-01-01T13:30:00Z", "--suspended")
    assert rc == 0
    assert "unsuspending now would start one Job for 13:00 UTC on Thu 2026-01-01 (mycronjob-29454540)" in out
    assert "2 earlier runs are never made up" in out


def test_a_run_missed_because_of_a_dst_gap_is_explained_in_the_controller_window(
        capsys: pytest.CaptureFixture[str]) -> None:
    # vectors dst "spring-forward day, 02:30 missing": last 03-07 07:30Z, now 03-08 12:00Z -> no-unmet.
    r = run_json(capsys, "30 2 * * *", "--tz", "America/New_York", "--created", "2026-01-01T00:00:00Z",
                 "--last-schedule", "2026-03-07T07:30:00Z", "--now", "2026-03-08T12:00:00Z")
    c = r["controller"]
    assert c["decision"] == "no-unmet" and c["missedRunsCount"] == 0
    [gap] = c["dst"]
    assert gap["transition"] == "2026-03-08T07:00:00Z" and gap["skipped"] == ["2026-03-08T02:30"]
    assert any("the run at 02:30 will not happen" in s for s in c["summary"])


@pytest.mark.parametrize(("args", "kinds"), [
    # New York springs forward at 2026-03-08T07:00:00Z (02:30 does not exist); the sync is at 12:00Z
    (("30 2 * * *", "--tz", "America/New_York", "--last-schedule", "2026-03-07T07:30:00Z",
      "--now", "2026-03-08T12:00:00Z"), ["gap"]),
    # Berlin falls back at 2026-10-25T01:00:00Z; noon is never inside the fold: no run is changed
    (("0 12 * * *", "--tz", "Europe/Berlin", "--last-schedule", "2026-10-24T10:00:00Z",
      "--now", "2026-10-25T05:00:00Z"), []),
])
def test_the_instant_of_the_sync_is_not_called_a_run_the_schedule_does_not_name(
        capsys: pytest.CaptureFixture[str], args: tuple[str, ...], kinds: list[str]) -> None:
    # bug fix: the end of the controller's window (now) went to the DST analysis as a run, so after a
    # change in the window the summary said "the controller also runs at Sun 2026-03-08 08:00 EDT (12:00Z),
    # a time the schedule does not name" (and a fold that changes no run was listed for it)
    c = run_json(capsys, *args, "--created", "2026-01-01T00:00:00Z")["controller"]
    assert c["decision"] == "no-unmet" and c["missedRuns"] == []
    assert [d["kind"] for d in c["dst"]] == kinds and [d["extra"] for d in c["dst"]] == [[] for _ in kinds]
    assert not [s for s in c["summary"] if "also runs at" in s or "does not name" in s]


def test_a_missed_run_at_a_time_the_schedule_does_not_name_is_still_called_one(
        capsys: pytest.CaptureFixture[str]) -> None:
    # Santiago skips Sunday 2026-09-06 00:00 -04 (04:00Z -> 01:00 -03): robfig's walk runs the
    # Saturday-only '0 1 * * 6' on Sunday 01:00 -03 (tests/unit/test_dst_report.py); at 12:00Z it is missed
    c = run_json(capsys, "0 1 * * 6", "--tz", "America/Santiago", "--created", "2026-01-01T00:00:00Z",
                 "--last-schedule", "2026-09-05T05:00:00Z", "--now", "2026-09-06T12:00:00Z")["controller"]
    assert (c["decision"], c["missedRuns"]) == ("create", ["2026-09-06T04:00:00Z"])
    [gap] = c["dst"]
    assert [x["utc"] for x in gap["extra"]] == ["2026-09-06T04:00:00Z"]
    [said] = [s for s in c["summary"] if "does not name" in s]
    assert "also runs at Sun 2026-09-06 01:00 -03 (04:00Z), a time" in said and "12:00Z" not in said


def test_too_many_missed_times_is_called_out_and_still_runs(capsys: pytest.CaptureFixture[str]) -> None:
    # vectors hourly-creation: created 00:00, now day 5 05:00 -> n = 101 -> "many", still created.
    r = run_json(capsys, "0 * * * *", "--name", "mycronjob", "--created", "2026-01-01T00:00:00Z",
                 "--now", "2026-01-05T05:00:00Z")
    c = r["controller"]
    assert c["missed"] == "many" and c["jobName"] == "mycronjob-29459820"
    assert any("TooManyMissedTimes" in s for s in c["summary"])


def test_the_estimate_flaw_is_explained(capsys: pytest.CaptureFixture[str]) -> None:
    # docs/SEMANTICS.md §4.2: `0 9 * * 1-5`, last run Wed 09:00, resumed Sat 12:00: Friday 09:00 is not run.
    rc, out, _ = run(capsys, "0 9 * * 1-5", "--created", "2025-12-01T00:00:00Z",
                     "--last-schedule", "2026-01-07T09:00:00Z", "--now", "2026-01-10T12:00:00Z")
    assert rc == 0
    assert "09:00 UTC on Fri 2026-01-09 was missed" in out
    assert "finds no time to run" in out


def test_a_zero_starting_deadline_never_runs(capsys: pytest.CaptureFixture[str]) -> None:
    r = run_json(capsys, "* * * * *", "--created", "2026-01-01T00:00:00Z", "--now", "2026-01-01T01:00:30Z",
                 "--starting-deadline", "0")
    c = r["controller"]
    assert c["mostRecent"] is None and c["jobName"] is None
    assert any("never starts a Job" in s for s in c["summary"])


# --- files ------------------------------------------------------------------------------------

MANIFEST = textwrap.dedent("""\
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: not-a-cronjob}
    ---
    apiVersion: batch/v1
    kind: CronJob
    metadata:
      name: mp-orders-sync
      namespace: integrations
    spec:
      schedule: "*/10 * * * *"
      timeZone: Europe/Moscow
      jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}
    ---
    apiVersion: batch/v1
    kind: CronJob
    metadata:
      name: nightly
      namespace: billing
    spec:
      schedule: "30 2 * * *"
      timeZone: America/New_York
      jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}
    """)


def test_every_cronjob_in_a_multi_document_file_is_explained(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    f = tmp_path / "cronjobs.yaml"
    f.write_text(MANIFEST)
    r = run_json(capsys, "-f", str(f), "--from", "2026-03-07T00:00:00Z", "--count", "2")
    assert [(x["namespace"], x["name"]) for x in r] == [("integrations", "mp-orders-sync"), ("billing", "nightly")]
    # Moscow is UTC+3 all year: 00:00 MSK = 21:00Z the day before.
    assert r[0]["next"][0] == {"utc": "2026-03-07T00:10:00Z", "local": "2026-03-07T03:10:00+03:00", "weekday": "Sat"}
    assert [n["utc"] for n in r[1]["next"]] == ["2026-03-07T07:30:00Z", "2026-03-09T06:30:00Z"]
    assert r[1]["dst"][0]["skipped"] == ["2026-03-08T02:30"]


def test_a_kubectl_list_in_json_is_explained_with_its_status(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # What `kubectl get cronjobs -o json` prints: a List whose items carry creationTimestamp and status.
    doc = {"apiVersion": "v1", "kind": "List", "items": [{
        "apiVersion": "batch/v1", "kind": "CronJob",
        "metadata": {"name": "mycronjob", "namespace": "default", "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {"schedule": "0 * * * *", "suspend": True, "jobTemplate": {"spec": {}}},
        "status": {"lastScheduleTime": "2026-01-01T10:00:00Z"}}]}
    f = tmp_path / "list.json"
    f.write_text(json.dumps(doc))
    [r] = run_json(capsys, "-f", str(f), "--now", "2026-01-01T13:30:00Z")
    c = r["controller"]
    # vectors hourly-last: most recent 13:00, job mycronjob-29454540; suspended -> nothing now.
    assert c["suspended"] is True
    assert c["mostRecent"] == "2026-01-01T13:00:00Z" and c["jobName"] == "mycronjob-29454540"
    assert r["next"][0]["utc"] == "2026-01-01T14:00:00Z"


def test_an_atlas_cli_manifest_from_seed_000_is_explained_in_the_atlas_dialect(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    f = tmp_path / "atlas.yaml"
    f.write_text(textwrap.dedent("""\
        name: atlas-report-schedule
        schedule: "0 9 * * 1-5"
        timezone: Europe/Belgrade
        concurrencyPolicy: Forbid
        jobTemplate:
          image: busybox:1.36
          command: ["sh", "-c", "printf 'atlas report\\\\n'"]
          resources:
            cpu: 100m
            memory: 1Mi
        """))
    [r] = run_json(capsys, "-f", str(f), "--from", "2026-10-12T12:00:00Z", "--count", "1")
    assert r["dialect"] == "atlas" and r["name"] == "atlas-report-schedule"
    # Seed fixture: 09:00 Belgrade on 2026-10-13 is 07:00Z (a Tuesday).
    assert r["next"] == [{"utc": "2026-10-13T07:00:00Z", "local": "2026-10-13T09:00:00+02:00", "weekday": "Tue"}]


# --- errors -----------------------------------------------------------------------------------

def _bad_yaml(tmp: Path) -> str:
    f = tmp / "manifest.yaml"
    f.write_text("apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: x\n  labels: [a, b\n")
    return str(f)


def _no_cronjob(tmp: Path) -> str:
    f = tmp / "deploy.yaml"
    f.write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n")
    return str(f)


def _bad_schedule_in_file(tmp: Path) -> str:
    f = tmp / "cj.yaml"
    f.write_text("apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: broken, namespace: ns1}\n"
                 "spec: {schedule: '0 0 32 * *', jobTemplate: {spec: {}}}\n")
    return str(f)


ERRORS = [
    (["0 0 32 * *"], ExitCode.BAD_INPUT, "error: bad day-of-month '32' in '0 0 32 * *'"),
    (["0 0 * * *", "--tz", "Mars/Base"], ExitCode.BAD_INPUT, "Mars/Base"),
    (["0 0 * * * *"], ExitCode.BAD_INPUT, "found 6 in '0 0 * * * *'"),
    (["TZ=UTC"], ExitCode.BAD_INPUT, "prefix must be followed by a space"),
    (["0 0 * * *", "--now", "yesterday"], ExitCode.BAD_INPUT, "error: bad --now 'yesterday'"),
    (["0 0 * * *", "--from", "2026-01-01T00:00:00"], ExitCode.BAD_INPUT, "error: bad --from"),
    (["0 0 * * *", "--from", "0001-01-01T00:00:00Z"], ExitCode.BAD_INPUT, "year 1 is outside 1970..9000"),
    (["0 0 * * *", "--created", "1969-12-31T23:59:59Z"], ExitCode.BAD_INPUT, "bad --created '1969-12-31T23:59:59Z': year 1969"),
    (["0 0 * * *", "--now", "9001-01-01T00:00:00Z"], ExitCode.BAD_INPUT, "year 9001 is outside 1970..9000"),
    (["0 0 * * *", "--now", "9999-12-31T00:00:00Z"], ExitCode.BAD_INPUT, "error: bad --now"),
    (["0 0 * * *", "--starting-deadline", "60"], ExitCode.BAD_INPUT, "need --created or --last-schedule"),
    (["0 0 * * *", "--dialect", "quartz"], ExitCode.USAGE, "bad --dialect 'quartz'"),  # a choice, as click's: 2
    (["0 9 * * MON", "--dialect", "atlas"], ExitCode.BAD_INPUT, "atlas: bad weekday 'MON'"),
    (["-f", "{tmp}/missing.yaml"], ExitCode.BAD_INPUT, "missing.yaml: no such file"),
    (["-f", "{tmp}"], ExitCode.BAD_INPUT, "is a directory"),
    (["-f", "{bad_yaml}"], ExitCode.BAD_INPUT, "manifest.yaml:6:1: malformed YAML"),
    (["-f", "{no_cronjob}"], ExitCode.BAD_INPUT, "no CronJob in file (found: Deployment)"),
    (["-f", "{bad_schedule}"], ExitCode.BAD_INPUT, "cronjob ns1/broken: bad day-of-month '32'"),
    (["cronjob/x", "--dialect", "atlas"], ExitCode.BAD_INPUT, "not to a live Kubernetes CronJob"),
    (["0 0 * * *", "--count", "-1"], ExitCode.USAGE, "error: bad --count -1: must be 0 or more"),
    (["0 0 * * *", "--count", "10001"], ExitCode.USAGE, "error: bad --count 10001: at most 10000 runs are listed"),
    ([], ExitCode.USAGE, ""),
    (["0 0 * * *", "-f", "x.yaml"], ExitCode.USAGE, "exactly one"),
]


@pytest.mark.parametrize(("args", "code", "fragment"), ERRORS, ids=lambda x: repr(x)[:60])
def test_bad_input_gets_one_line_and_its_exit_code(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                   args: list[str], code: int, fragment: str) -> None:
    subs = {"tmp": str(tmp_path), "bad_yaml": _bad_yaml(tmp_path) if "{bad_yaml}" in args else "",
            "no_cronjob": _no_cronjob(tmp_path) if "{no_cronjob}" in args else "",
            "bad_schedule": _bad_schedule_in_file(tmp_path) if "{bad_schedule}" in args else ""}
    argv = [a.format(**subs) for a in args]
    rc = _main_explain(argv)
    cap = capsys.readouterr()
    assert rc == code, cap.err
    assert cap.out == ""
    assert fragment in cap.err
    assert "Traceback" not in cap.err
    if code == ExitCode.BAD_INPUT:
        # One line naming the problem; an optional "hint:" line may follow it.
        first, *rest = cap.err.strip().splitlines()
        assert first.startswith("error: ")
        assert all(line.startswith("hint: ") for line in rest)


def _main_explain(argv: list[str]) -> int:
    return main(["explain", *argv])


def test_the_entry_point_exits_5_on_a_bad_field_without_a_traceback() -> None:
    p = cronctl(["explain", "0 0 32 * *"], script=True)
    assert p.returncode == 5
    assert p.stdout == ""
    assert p.stderr.strip() == "error: bad day-of-month '32' in '0 0 32 * *': above maximum (31)"


def test_explain_exits_5_on_malformed_yaml_naming_line_and_column(tmp_path: Path, run_cli: RunCli) -> None:
    f = _bad_yaml(tmp_path)
    p = run_cli("explain", "-f", f)
    assert p.exit_code == 5
    assert p.stderr.startswith(f"error: {f}:6:1:") and "malformed YAML" in p.stderr
    assert "Traceback" not in p.stderr


def test_explain_never_imports_kubernetes() -> None:
    code = ("import sys\nfrom cronctl.cli import main\n"
            "rc = main(['explain', '0 9 * * 1-5', '--tz', 'Europe/Berlin', '-o', 'json'])\n"
            "bad = sorted(m for m in sys.modules if m == 'kubernetes' or m.startswith('kubernetes.'))\n"
            "print(rc, len(bad), file=sys.stderr)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert p.stderr.strip().splitlines()[-1] == "0 0"
    assert json.loads(p.stdout)["schedule"] == "0 9 * * 1-5"


# --- golden text output -----------------------------------------------------------------------
# tests/golden/explain/<case>.args (a JSON argv list; "{here}" = that directory) is paired with
# <case>.out (the expected stdout). CRONCTL_REGEN_GOLDEN=1 rewrites the .out files; every .out was
# then checked by hand against docs/SEMANTICS.md and the vectors before it was committed.

GOLDEN = ROOT / "tests" / "golden" / "explain"


@pytest.mark.parametrize("case", sorted(GOLDEN.glob("*.args")), ids=lambda p: p.stem)
def test_text_output_matches_the_golden_file(capsys: pytest.CaptureFixture[str], case: Path) -> None:
    argv = [a.replace("{here}", str(GOLDEN)) for a in json.loads(case.read_text())]
    rc, out, err = run(capsys, *argv)
    assert rc == 0, err
    expected = case.with_suffix(".out")
    shown = out.replace(str(GOLDEN), "{here}")
    if os.environ.get("CRONCTL_REGEN_GOLDEN") == "1":
        expected.write_text(shown)
    assert expected.exists(), f"{expected.name} missing: run with CRONCTL_REGEN_GOLDEN=1 and check it by hand"
    assert shown == expected.read_text()


# --- the documented contract ------------------------------------------------------------------

def _documented_fields(table_after: str) -> set[str]:
    """Backticked names in the first column of the table in docs/OUTPUT.md (explain's JSON contract)
    that follows ``table_after``."""
    import re

    text = (ROOT / "docs" / "OUTPUT.md").read_text()
    start = text.index("## `cronctl explain` `-o json` / `-o yaml`: the contract")
    end = text.find("\n## ", start + 1)
    section = text[start:end if end >= 0 else len(text)]
    rest = section[section.index(table_after):]
    rows = []
    for line in rest.splitlines()[1:]:
        if line.startswith("|"):
            rows.append(line)
        elif rows:
            break
    names: set[str] = set()
    for row in rows[2:]:  # skip the header and the |---| line
        names.update(re.findall(r"`([A-Za-z]+)`", row.split("|")[1]))
    return names


def test_the_json_fields_are_exactly_the_documented_ones(capsys: pytest.CaptureFixture[str]) -> None:
    r = run_json(capsys, "30 2 * * *", "--tz", "America/New_York", "--name", "nightly", "--created",
                 "2026-03-01T00:00:00Z", "--now", "2026-03-09T12:00:00Z", "--from", "2026-03-07T00:00:00Z")
    assert set(r) == _documented_fields("## `cronctl explain` `-o json` / `-o yaml`: the contract")
    assert set(r["controller"]) == _documented_fields("`controller` (dialect `kubernetes`")
    assert set(r["dst"][0]) == _documented_fields("`dst[]`:")
    assert set(r["next"][0]) == {"utc", "local", "weekday"}


def test_an_atlas_manifest_missed_limit_is_ignored_as_the_atlas_cli_does(capsys: pytest.CaptureFixture[str],
                                                                         tmp_path: Path) -> None:
    # docs/BACKGROUND.md §2.5: the CLI envelope "does not forward missedScheduleLimit ... from YAML": default 100.
    f = tmp_path / "atlas.yaml"
    f.write_text('name: r\nschedule: "* * * * *"\nmissedScheduleLimit: 2\njobTemplate: {image: busybox}\n')
    [r] = run_json(capsys, "-f", str(f), "--created", "2026-01-01T00:00:00Z", "--now", "2026-01-01T03:00:00Z")
    c = r["controller"]
    assert c["missedLimit"] == 100 and c["dueCount"] == 100
    assert c["due"][0] == "2026-01-01T00:01:00Z" and c["due"][-1] == "2026-01-01T01:40:00Z"
    assert r["zone"] == "UTC" and r["zoneSource"] == "default-utc"


def test_atlas_says_when_its_one_year_horizon_finds_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    # docs/BACKGROUND.md §2.2: Next searches a year-sized number of minutes; Feb 29 2028 is further than that.
    r = run_json(capsys, "0 0 29 2 *", "--dialect", "atlas", "--from", "2026-06-01T00:00:00Z", "--allow-never")
    assert r["next"] == [] and r["neverFires"] is True
    assert any("one-year search horizon" in w for w in r["warnings"])


@pytest.mark.parametrize(("text", "fragment"), [
    ("kind: CronJob\nmetadata: [1]\nspec: {schedule: '* * * * *'}\n", "cronjob (no name): metadata: expected a mapping, got a list"),
    ("kind: CronJob\nmetadata: {name: x}\nstatus: [1]\nspec: {schedule: '* * * * *'}\n", "cronjob x: status: expected a mapping, got a list"),
    ("kind: CronJob\nmetadata: {name: x}\nspec: {schedule: 5}\n", "cronjob x: spec.schedule: expected a string, got an integer (5)"),
    ("kind: CronJob\nmetadata: {name: x}\nspec: {schedule: '* * * * *', timeZone: 5}\n", "cronjob x: spec.timeZone: expected a string, got an integer (5)"),
    ("kind: CronJob\nmetadata: {name: x, creationTimestamp: soon}\nspec: {schedule: '* * * * *'}\n",
     "cronjob x: bad metadata.creationTimestamp 'soon'"),
    ("kind: CronJob\nmetadata: {name: x}\nspec: {schedule: '* * * * *', startingDeadlineSeconds: abc}\n",
     "cronjob x: spec.startingDeadlineSeconds: expected an integer, got a string ('abc')"),
    ("[1, 2]", "document 1 is not a Kubernetes object"),
])
def test_a_malformed_cronjob_object_is_bad_input_naming_it(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                           text: str, fragment: str) -> None:
    f = tmp_path / "objs.yaml"
    f.write_text(text)
    rc, out, err = run(capsys, "-f", str(f))
    assert rc == ExitCode.BAD_INPUT and out == ""
    assert err.startswith(f"error: {f}: ") and fragment in err
    assert "Traceback" not in err


# --- layers -----------------------------------------------------------------------------------

def test_the_explain_service_and_pure_modules_import_no_cli_kube_or_yaml() -> None:
    code = ("import sys\nimport cronctl.explain, cronctl.schedule.describe, cronctl.schedule.dst, "
            "cronctl.schedule.atlas\n"
            "heavy = ('typer', 'rich', 'click', 'kubernetes', 'yaml', 'jinja2')\n"
            "print(sorted({m.split('.')[0] for m in sys.modules if m.split('.')[0] in heavy}))\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[]"


@pytest.mark.parametrize("module", ["cronctl/explain.py", "cronctl/schedule/describe.py",
                                    "cronctl/schedule/dst.py", "cronctl/schedule/atlas.py"])
def test_the_pure_modules_never_read_the_clock(module: str) -> None:
    import ast

    tree = ast.parse((ROOT / module).read_text())
    calls = {f"{n.func.value.id}.{n.func.attr}" for n in ast.walk(tree)
             if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)}
    assert not calls & {"datetime.now", "datetime.utcnow", "datetime.today", "time.time", "date.today",
                        "time.monotonic", "time.perf_counter"}


def test_json_lists_the_run_robfigs_walk_never_lands_on_after_lord_howes_half_hour_fall_back(
        capsys: pytest.CaptureFixture[str]) -> None:
    # Upstream vector (group dst): after 2026-04-04T11:00Z `0 3 * * *` Lord_Howe first runs at
    # 2026-04-05T16:30Z, so Sunday 2026-04-05 03:00 +10:30 (= 2026-04-04T16:30:00Z) never runs.
    data = run_json(capsys, "0 3 * * *", "--tz", "Australia/Lord_Howe",
                    "--from", "2026-04-03T12:00:00Z", "--count", "3")
    assert [n["utc"] for n in data["next"]] == ["2026-04-03T16:00:00Z", "2026-04-05T16:30:00Z", "2026-04-06T16:30:00Z"]
    lost = [x for d in data["dst"] for x in d["lost"]]
    assert [x["utc"] for x in lost] == ["2026-04-04T16:30:00Z"]
    assert lost[0]["local"] == "2026-04-05T03:00:00+10:30"
    code, out, _ = run(capsys, "0 3 * * *", "--tz", "Australia/Lord_Howe",
                       "--from", "2026-04-03T12:00:00Z", "--count", "3")
    assert code == 0
    assert "Sun 2026-04-05 03:00 +10:30: no run" in out


def test_runs_dropped_by_the_deadline_are_named_in_json_and_words(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("*/10 * * * *", "--tz", "Europe/Moscow", "--created", "2026-12-01T00:00:00Z", "--last-schedule",
            "2026-12-02T11:00:00Z", "--now", "2026-12-02T11:35:00Z", "--starting-deadline", "120")
    c = run_json(capsys, *args)["controller"]
    lost = ["2026-12-02T11:10:00Z", "2026-12-02T11:20:00Z", "2026-12-02T11:30:00Z"]
    assert c["decision"] == "no-unmet"
    assert c["deadlineDropped"] == lost and c["deadlineDroppedCount"] == 3
    assert c["neverMadeUp"] == lost and c["neverMadeUpCount"] == 3
    rc, out, _ = run(capsys, *args)
    assert rc == 0 and "3 runs (14:10, 14:20, 14:30 MSK on Wed 2026-12-02) dropped by startingDeadlineSeconds=120" in out


def test_forbid_and_an_active_job_are_part_of_the_decision(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("*/1 * * * *", "--last-schedule", "2026-12-02T16:19:00Z", "--now", "2026-12-02T16:20:05Z",
            "--name", "orders", "--concurrency-policy", "Forbid", "--active", "orders-29937139")
    c = run_json(capsys, *args)["controller"]
    assert c["decision"] == "forbid-active" and c["waitingFor"] == ["orders-29937139"]
    assert any("JobAlreadyActive" in e for e in c["events"])
    rc, _, err = run(capsys, "* * * * *", "--last-schedule", "2026-12-02T16:19:00Z", "--concurrency-policy", "Sometimes")
    assert rc == 2 and "bad --concurrency-policy" in err  # a choice: exit 2, as click's


# --- the typed result and its document (issue 24, item 1) --------------------------------------

def test_the_service_returns_frozen_typed_results_and_the_cli_makes_the_document() -> None:
    # the service's result is typed; the -o json document, and a live CronJob's GitOps tool beside
    # it, is made in cli/ (the service's result is never added to)
    import dataclasses
    from datetime import datetime, timezone

    from cronctl.cli.explain import explanation_doc
    from cronctl.explain import DstChange, Explanation, KubeController, explain_object
    from cronctl.gitops import detect

    utc = timezone.utc
    obj = {"apiVersion": "batch/v1", "kind": "CronJob",
           "metadata": {"name": "nightly", "namespace": "shop", "creationTimestamp": "2026-03-01T00:00:00Z"},
           "spec": {"schedule": "30 2 * * *", "timeZone": "America/New_York", "suspend": True},
           "status": {"lastScheduleTime": "2026-03-07T07:30:00Z"}}
    e = explain_object(obj, after=datetime(2026, 3, 7, tzinfo=utc), now=datetime(2026, 3, 8, 7, 30, tzinfo=utc),
                       count=2, api_create=False, with_controller=True)
    assert isinstance(e, Explanation) and isinstance(e.controller, KubeController)
    with pytest.raises(dataclasses.FrozenInstanceError):
        e.name = "other"  # type: ignore[misc]
    # 2026-03-08 02:30 does not exist in New York (02:00 EST -> 03:00 EDT at 07:00Z)
    assert [(i.utc, i.local.isoformat(), i.weekday) for i in e.next] == [
        (datetime(2026, 3, 7, 7, 30, tzinfo=utc), "2026-03-07T02:30:00-05:00", "Sat"),
        (datetime(2026, 3, 9, 6, 30, tzinfo=utc), "2026-03-09T02:30:00-04:00", "Mon")]
    [gap] = e.dst
    assert isinstance(gap, DstChange) and gap.event.kind == "gap"
    # suspended: this sync does nothing; unsuspending would find no time passed since 03-07 07:30Z
    assert (e.controller.actual.decision, e.controller.unsuspended.decision) == ("suspended", "no-unmet")
    doc = explanation_doc(e)
    assert (list(doc)[:2], doc["controller"]["decision"], "gitops" in doc) == (["namespace", "name"], "suspended", False)
    assert doc["next"][1] == {"utc": "2026-03-09T06:30:00Z", "local": "2026-03-09T02:30:00-04:00", "weekday": "Mon"}
    live = explanation_doc(e, detect(obj))
    assert list(live) == [*doc, "gitops"] and live["gitops"]["tool"] is None and "words" in live["gitops"]
    assert explanation_doc(e) == doc  # making the document changed nothing
