"""`cronctl bundle` on the command line, offline (--from-dump): outputs, files and exit codes."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest

from cronctl.cli import main

DUMP = Path(__file__).parent.parent / "golden" / "bundle" / "incident-004.dump.yaml"
NOW = "2026-12-02T11:35:00Z"


def test_json_output_is_the_summary_and_the_bundle_is_written(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "b"
    code = main(["bundle", "--from-dump", str(DUMP), "--now", NOW, "--out", str(out), "-o", "json"])
    o, e = capfd.readouterr()
    assert code == 0, e
    s = json.loads(o)
    assert s["path"] == str(out) and s["namespace"] == "integrations" and s["partial"] is False
    assert s["cronjobs"][0]["verdicts"]["missed"] == 1 and s["cronjobs"][0]["unexpected_job_events"] == 9
    assert sorted(p.name for p in out.iterdir()) == ["REPORT.md", "SHA256SUMS", "bundle.json", "objects.yaml",
                                                     "report.html"]
    assert "collecting a bundle" in e  # progress goes to stderr, data to stdout


def test_text_output_names_the_path_and_the_verdicts(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    code = main(["bundle", "mp-orders-sync", "-n", "integrations", "--from-dump", str(DUMP), "--now", NOW,
                 "--out", str(tmp_path / "b.tar.gz")])
    o, _ = capfd.readouterr()
    assert code == 0
    assert f"bundle written to {tmp_path / 'b.tar.gz'}" in o
    assert ("ran 6, ran-late 2, running 1, missed 1; overlaps 3; UnexpectedJob 9 (9 about Jobs made by hand outside "
            "cronctl), JobAlreadyActive 5") in o
    with tarfile.open(tmp_path / "b.tar.gz") as tar:
        assert "b/objects.yaml" in tar.getnames()


def test_the_bundles_own_objects_yaml_reads_back_to_the_same_analysis(tmp_path: Path,
                                                                       capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["bundle", "--from-dump", str(DUMP), "--now", NOW, "--out", str(tmp_path / "a")]) == 0
    assert main(["bundle", "--from-dump", str(tmp_path / "a" / "objects.yaml"), "--now", NOW,
                 "--out", str(tmp_path / "b")]) == 0
    capfd.readouterr()
    a = json.loads((tmp_path / "a" / "bundle.json").read_text())["cronjobs"][0]
    b = json.loads((tmp_path / "b" / "bundle.json").read_text())["cronjobs"][0]
    for key in ("occurrences", "overlaps", "jobs", "events", "active", "schedule"):
        assert a[key] == b[key], key


@pytest.mark.parametrize("args, code, message", [
    (["--all"], 5, "truncated"),
    (["nope"], 6, "cronjob integrations/nope not in"),
])
def test_a_bad_dump_or_a_missing_cronjob_is_one_line_and_a_distinct_exit_code(
        tmp_path: Path, capfd: pytest.CaptureFixture[str], args: list[str], code: int, message: str) -> None:
    dump = DUMP
    if code == 5:
        text = DUMP.read_text()
        dump = tmp_path / "cut.yaml"
        dump.write_text(text[: len(text) * 2 // 3].rsplit("\n", 1)[0] + "\n")
    got = main(["bundle", *args, "--from-dump", str(dump), "--out", str(tmp_path / "o")])
    o, e = capfd.readouterr()
    assert got == code
    errors = [line for line in e.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and message in errors[0] and "Traceback" not in e
    assert o == "" and not (tmp_path / "o").exists()


def test_bad_since_and_window_values_are_usage_errors(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    # every bad value of a duration flag exits 2 (issue 34: --timeout 0 and --timeout abc disagreed)
    assert main(["bundle", "--from-dump", str(DUMP), "--since", "soon", "--out", str(tmp_path / "o")]) == 2
    assert main(["bundle", "--from-dump", str(DUMP), "--window", "1y", "--out", str(tmp_path / "o")]) == 2
    _, e = capfd.readouterr()
    assert "bad --since 'soon'" in e and "bad --window '1y'" in e


def test_a_live_bundle_needs_a_name_or_all(capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["bundle"]) == 2
    assert "give a CRONJOB name, --all (every CronJob of the namespace) or -A" in capfd.readouterr().err


def test_an_existing_output_is_refused_and_kept(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "evidence.txt").write_text("keep me")
    assert main(["bundle", "--from-dump", str(DUMP), "--out", str(tmp_path / "o")]) == 3
    assert (tmp_path / "o" / "evidence.txt").read_text() == "keep me"
    assert "already exists" in capfd.readouterr().err


def test_every_time_in_the_bundle_and_the_history_is_in_whole_seconds(tmp_path: Path,
                                                                      capfd: pytest.CaptureFixture[str]) -> None:
    """Issue 34 item 15: an events.k8s.io Event's microseconds, the controller's wake-up 100 ms after
    a slot and a --now with a fraction gave `.123456Z`, `.1Z` and `Z` side by side (docs/OUTPUT.md)."""
    import re

    import yaml

    docs = list(yaml.safe_load_all(DUMP.read_text()))
    docs.append({"apiVersion": "events.k8s.io/v1", "kind": "Event",
                 "metadata": {"name": "micro", "namespace": "integrations", "creationTimestamp": "2026-12-02T11:05:00Z"},
                 "regarding": {"kind": "CronJob", "name": "mp-orders-sync", "namespace": "integrations"},
                 "reason": "JobAlreadyActive", "note": "Not starting job because prior execution is running",
                 "type": "Normal", "eventTime": "2026-12-02T11:05:00.123456Z",
                 "series": {"count": 2, "lastObservedTime": "2026-12-02T11:06:00.654321Z"},
                 "reportingController": "cronjob-controller", "reportingInstance": "kcm", "action": "Create"})
    dump = tmp_path / "dump.yaml"
    dump.write_text(yaml.safe_dump_all(docs))
    fraction = re.compile(r"\d\d:\d\d:\d\d\.\d+(Z|[+-]\d\d:\d\d)")
    now = "2026-12-02T11:35:00.250000Z"
    assert main(["bundle", "--from-dump", str(dump), "--now", now, "--out", str(tmp_path / "b")]) == 0
    for name in ("bundle.json", "REPORT.md", "report.html"):
        text = (tmp_path / "b" / name).read_text()
        assert not fraction.search(text), (name, fraction.search(text))
    assert '"first":"2026-12-02T11:05:00Z","last":"2026-12-02T11:06:00Z"' in (tmp_path / "b" / "bundle.json").read_text()
    assert main(["history", "--from-dump", str(dump), "--now", now, "-o", "json"]) == 0
    o, _ = capfd.readouterr()
    assert '"2026-12-02T11:35:00Z"' in o and not fraction.search(o)
