"""`cronctl lint -o sarif` is valid SARIF 2.1.0: checked against the official OASIS schema
(tests/data/sarif-schema-2.1.0.json, errata01 version) with jsonschema."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import jsonschema
import pytest

from cronctl.lint.engine import lint_object
from cronctl.lint.rules import RULES
from cronctl.lint.sarif import object_line, to_sarif

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=timezone.utc)
SCHEMA = json.loads((Path(__file__).parents[1] / "data" / "sarif-schema-2.1.0.json").read_text())

MANIFEST = """\
apiVersion: batch/v1
kind: CronJob
metadata:
  name: mp-orders-sync
  namespace: integrations
spec:
  schedule: "*/10 * * * *"
  startingDeadlineSeconds: 0
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - name: sync
            image: busybox:1.36
"""


@pytest.fixture
def findings() -> list:
    import yaml

    return lint_object(yaml.safe_load(MANIFEST), NOW, source="deploy/cron jobs.yaml")


def validator() -> jsonschema.protocols.Validator:
    cls = jsonschema.validators.validator_for(SCHEMA)
    cls.check_schema(SCHEMA)
    return cls(SCHEMA, format_checker=cls.FORMAT_CHECKER)


def test_the_schema_file_is_the_official_sarif_2_1_0_schema() -> None:
    assert SCHEMA["id"].endswith("/sarif-schema-2.1.0.json")
    assert SCHEMA["properties"]["version"]["enum"] == ["2.1.0"]


def test_a_log_with_findings_validates_against_the_official_schema(findings: list) -> None:
    log = to_sarif(findings, tool_version="0.1.0", texts={"deploy/cron jobs.yaml": MANIFEST})
    validator().validate(log)
    assert len(log["runs"][0]["results"]) == len(findings) > 5


def test_an_empty_log_validates_too() -> None:
    validator().validate(to_sarif([], tool_version="0.1.0"))


def test_a_broken_log_is_rejected_by_the_validator(findings: list) -> None:
    log = to_sarif(findings, tool_version="0.1.0")
    log["runs"][0]["results"][0]["level"] = "fatal"  # not a SARIF level
    with pytest.raises(jsonschema.ValidationError):
        validator().validate(log)


def test_results_point_at_their_rule_level_file_and_line(findings: list) -> None:
    log = to_sarif(findings, tool_version="0.1.0", texts={"deploy/cron jobs.yaml": MANIFEST})
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.id for r in RULES]
    by_rule = {r["ruleId"]: r for r in run["results"]}
    zero = by_rule["CJ003"]
    assert rules[zero["ruleIndex"]]["id"] == "CJ003"
    assert zero["level"] == "error"
    assert by_rule["CJ001"]["level"] == "warning"
    assert by_rule["CJ021"]["level"] == "note"  # info -> note
    phys = zero["locations"][0]["physicalLocation"]
    assert phys["artifactLocation"]["uri"] == "deploy/cron%20jobs.yaml"
    assert phys["region"]["startLine"] == 4  # "  name: mp-orders-sync"
    assert zero["properties"]["field"] == "spec.startingDeadlineSeconds"
    assert "integrations/mp-orders-sync" in zero["message"]["text"]


def test_live_findings_have_a_logical_location_only() -> None:
    import yaml

    found = lint_object(yaml.safe_load(MANIFEST), NOW)
    log = to_sarif(found, tool_version="0.1.0")
    validator().validate(log)
    loc = log["runs"][0]["results"][0]["locations"][0]
    assert "physicalLocation" not in loc
    assert loc["logicalLocations"][0]["fullyQualifiedName"].startswith("integrations/cronjobs/mp-orders-sync#")


@pytest.mark.parametrize(("text", "line"), [
    (MANIFEST, 4),
    ('{\n  "metadata": {\n    "name": "mp-orders-sync",\n', 3),
    ("metadata:\n  name: other\n", None),
])
def test_object_line_finds_the_name_in_yaml_and_json(text: str, line: int | None) -> None:
    assert object_line(text, "mp-orders-sync") == line
