"""`cronctl lint -f FILE` end to end through the real CLI entry point (no cluster needed)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from cronctl.cli import main
from cronctl.errors import ExitCode

ANSI = re.compile(r"\x1b\[")

BAD = """\
apiVersion: batch/v1
kind: CronJob
metadata: {name: never-runs, namespace: ops}
spec:
  schedule: "30 2 * * *"
  timeZone: America/New_York
  startingDeadlineSeconds: 0
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: c, image: busybox}]
"""

WARN_ONLY = """\
apiVersion: v1
kind: List
items:
- apiVersion: batch/v1
  kind: CronJob
  metadata: {name: nightly, namespace: ops}
  spec:
    schedule: "0 3 * * *"
    timeZone: Etc/UTC
    startingDeadlineSeconds: 600
    jobTemplate:
      spec:
        template:
          spec:
            restartPolicy: Never
            containers: [{name: c, image: busybox}]
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: not-a-cronjob}
"""


def run(capfd: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["lint", "--now", "2026-12-02T12:00:00Z", *args])
    o, e = capfd.readouterr()
    return code, o, e


@pytest.fixture
def bad(tmp_path: Path) -> str:
    p = tmp_path / "bad.yaml"
    p.write_text(BAD)
    return str(p)


@pytest.fixture
def warn_only(tmp_path: Path) -> str:
    p = tmp_path / "list.yaml"
    p.write_text(WARN_ONLY)
    return str(p)


def test_an_error_finding_exits_8_and_the_table_names_rule_object_and_fix(capfd, bad) -> None:
    code, o, e = run(capfd, "-f", bad)
    assert code == ExitCode.FINDINGS == 8
    assert "CJ003" in o and "ops/never-runs" in o and "fix:" in o
    assert "2027-03-14" in o  # the DST gap, named by date
    assert "1 CronJob checked: 1 error" in o
    assert not ANSI.search(o + e)
    # piped (a CI log): one line per finding, whole, then its why and fix; nothing folded at 80 columns
    lines = o.splitlines()
    row = next(i for i, t in enumerate(lines) if "CJ003" in t)
    assert lines[row].split()[:3] == ["error", "CJ003", "ops/never-runs"] and len(lines[row]) > 80
    assert lines[row + 1].startswith("    why: ") and lines[row + 2].startswith("    fix: ")
    assert e == ""


def test_warnings_pass_by_default_and_fail_with_fail_on_warning(capfd, warn_only) -> None:
    assert run(capfd, "-f", warn_only)[0] == 0
    assert run(capfd, "-f", warn_only, "--fail-on", "warning")[0] == 8
    assert run(capfd, "-f", warn_only, "--fail-on", "none")[0] == 0


def test_json_output_lists_findings_with_a_summary(capfd, bad, warn_only) -> None:
    code, o, _ = run(capfd, "-f", bad, "-f", warn_only, "-o", "json", "--fail-on", "none")
    assert code == 0
    doc = json.loads(o)
    assert doc["checked"] == 2  # the ConfigMap is not counted
    assert doc["summary"]["error"] == 1
    f = next(x for x in doc["findings"] if x["rule"] == "CJ003")
    assert f["field"] == "spec.startingDeadlineSeconds" and f["severity"] == "error"
    assert f["object"] == {"kind": "CronJob", "namespace": "ops", "name": "never-runs", "source": bad}


def test_sarif_output_validates_against_the_official_schema(capfd, bad) -> None:
    code, o, _ = run(capfd, "-f", bad, "-o", "sarif")
    assert code == 8
    log = json.loads(o)
    schema = json.loads((Path(__file__).parents[1] / "data" / "sarif-schema-2.1.0.json").read_text())
    jsonschema.validators.validator_for(schema)(schema).validate(log)
    assert any(r["ruleId"] == "CJ006" for r in log["runs"][0]["results"])


def test_a_name_argument_limits_a_file_to_that_cronjob(capfd, bad, warn_only) -> None:
    code, o, e = run(capfd, "-f", bad, "-f", warn_only, "nightly", "-o", "json")
    assert code == 0
    assert {f["object"]["name"] for f in json.loads(o)["findings"]} == {"nightly"}
    assert "no CronJob named nightly" in e  # said for bad.yaml, on stderr


@pytest.mark.parametrize(("content", "needle"), [
    (None, "no such file"),
    ("kind: CronJob\nspec: [unclosed\n", "malformed YAML"),
    ("- just\n- a list\n", "not a Kubernetes object"),
])
def test_a_bad_file_is_one_line_on_stderr_with_exit_5(capfd, tmp_path: Path, content: str | None, needle: str) -> None:
    p = tmp_path / "in.yaml"
    if content is not None:
        p.write_text(content)
    code, o, e = run(capfd, "-f", str(p))
    assert code == ExitCode.BAD_INPUT == 5
    assert o == ""
    assert e.count("\n") == 1 and e.startswith("error: ") and needle in e and "Traceback" not in e


def test_a_bad_now_is_bad_input(capfd, bad) -> None:
    code = main(["lint", "-f", bad, "--now", "yesterday"])
    _, e = capfd.readouterr()
    assert code == 5 and "--now" in e


def test_rules_lists_the_catalogue_without_touching_a_cluster(capfd) -> None:
    from cronctl.lint.rules import RULES

    code, o, e = run(capfd, "--rules", "-o", "json", "--kubeconfig", "/nonexistent")
    assert code == 0 and e == ""
    doc = json.loads(o)
    assert [r["id"] for r in doc] == [r.id for r in RULES]
    assert doc[2] == {"id": "CJ003", "name": "starting-deadline-zero", "severity": "error",
                      "summary": "spec.startingDeadlineSeconds is 0", "why": RULES[2].why, "fix": RULES[2].fix}
    code, o, _ = run(capfd, "--rules")
    assert code == 0 and "CJ024" in o and "fix:" in o
    # piped: every rule's summary whole on its row, its why and fix whole under it (nothing folded)
    lines = o.splitlines()
    for r in RULES:
        row = next(i for i, t in enumerate(lines) if t.startswith(r.id + " "))
        assert lines[row].endswith(r.summary) and lines[row + 1] == r.name
        assert lines[row + 2] == f"    why: {r.why}" and lines[row + 3] == f"    fix: {r.fix}"


# -- lint in CI: directories, -R, several files, stdin (issue 34 item 6) -----------------------------

CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n"


def tree(root: Path) -> dict[str, Path]:
    """deploy/ with a CronJob in YAML, one in JSON (a List), a ConfigMap, a README and a subdirectory."""
    (root / "deploy" / "more").mkdir(parents=True)
    files = {"bad": root / "deploy" / "a-bad.yaml", "list": root / "deploy" / "b-list.yml",
             "cm": root / "deploy" / "c-settings.yaml", "readme": root / "deploy" / "README.md",
             "deep": root / "deploy" / "more" / "deep.json"}
    files["bad"].write_text(BAD)
    files["list"].write_text(WARN_ONLY)
    files["cm"].write_text(CONFIGMAP)
    files["readme"].write_text("# not a manifest: [unclosed\n")
    files["deep"].write_text(json.dumps({"apiVersion": "batch/v1", "kind": "CronJob",
                                         "metadata": {"name": "deep", "namespace": "ops"},
                                         "spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": {}}}}))
    return files


def sources(o: str) -> set[str]:
    return {f["object"]["source"] for f in json.loads(o)["findings"]}


def test_a_directory_is_its_manifests_and_r_adds_its_subdirectories(capfd, tmp_path: Path) -> None:
    files = tree(tmp_path)
    code, o, e = run(capfd, "-f", str(tmp_path / "deploy"), "-o", "json")
    assert code == ExitCode.FINDINGS  # bad.yaml's error
    assert json.loads(o)["checked"] == 2  # never-runs and nightly; README.md is not read, more/ not entered
    assert sources(o) == {str(files["bad"]), str(files["list"])}
    assert e == f"{files['cm']}: no CronJob, skipped\n"
    code, o, e = run(capfd, "-f", str(tmp_path / "deploy"), "-R", "-o", "json", "--fail-on", "none")
    assert code == 0 and json.loads(o)["checked"] == 3 and str(files["deep"]) in sources(o)
    assert run(capfd, "-f", str(tmp_path / "deploy" / "more"), "--recursive", "-o", "json")[0] == 0


def test_a_file_without_a_cronjob_is_skipped_and_the_exit_code_is_the_findings_alone(capfd, tmp_path: Path) -> None:
    files = tree(tmp_path)
    code, o, e = run(capfd, "-f", str(files["cm"]), "-f", str(files["list"]))
    assert code == 0 and "1 CronJob checked" in o and e == f"{files['cm']}: no CronJob, skipped\n"
    code, o, e = run(capfd, "-f", str(files["cm"]), "-f", str(files["bad"]))
    assert code == ExitCode.FINDINGS and "1 CronJob checked: 1 error" in o
    code, o, e = run(capfd, "-f", str(files["cm"]))
    assert code == 0 and o == "0 CronJobs checked: no findings\n" and "skipped" in e


def test_several_files_take_one_f_each_as_in_kubectl_and_a_second_path_is_a_usage_error(
        capfd, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = tree(tmp_path)
    monkeypatch.chdir(files["bad"].parent)  # b-list.yml is a valid CronJob name: the path check comes first
    code, o, _ = run(capfd, "-f", "a-bad.yaml", "-f", "b-list.yml", "-o", "json", "--fail-on", "none")
    assert code == 0 and json.loads(o)["checked"] == 2
    code, o, e = run(capfd, "-f", "a-bad.yaml", "b-list.yml")
    assert code == ExitCode.USAGE and o == ""
    assert e == ("error: b-list.yml is a file, not a CronJob name: give each file its own -f "
                 "(-f ... -f b-list.yml), or a directory\n")
    code, _, e = run(capfd, "-f", "a-bad.yaml", "more")
    assert code == ExitCode.USAGE and "more is a directory, not a CronJob name" in e


def test_manifests_on_standard_input(tmp_path: Path) -> None:
    import subprocess
    import sys

    def lint(*args: str, stdin: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "cronctl", "lint", "--now", "2026-12-02T12:00:00Z", *args],
                              input=stdin, capture_output=True, text=True, timeout=60)

    r = lint("-f", "-", "-o", "json", stdin=BAD)
    assert r.returncode == ExitCode.FINDINGS, r.stderr
    assert json.loads(r.stdout)["checked"] == 1 and sources(r.stdout) == {"-"}
    r = lint("-f", "-", stdin=CONFIGMAP)
    assert r.returncode == 0 and r.stderr == "standard input: no CronJob, skipped\n"


@pytest.mark.parametrize(("args", "code", "needle"), [
    (["-f", "{empty}"], ExitCode.BAD_INPUT, "is a directory without any *.yaml, *.yml or *.json file (-R reads"),
    (["-R"], ExitCode.USAGE, "-R/--recursive reads the directories of -f: give -f DIR"),
])
def test_an_empty_directory_and_r_without_f_are_one_line_errors(capfd, tmp_path: Path, args: list[str], code: int,
                                                                needle: str) -> None:
    (tmp_path / "empty").mkdir()
    got, o, e = run(capfd, *[a.replace("{empty}", str(tmp_path / "empty")) for a in args])
    assert got == code and o == "" and e.count("\n") == 1 and needle in e
