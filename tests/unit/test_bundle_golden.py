"""Golden files: the rendered reports and bundle.json for fixed dump inputs.

Pairs are found by glob: ``tests/golden/bundle/<case>.dump.yaml`` is rendered (now = the
``# now:`` given in ``<case>.now``, collected at now + 5 min) and compared with
``<case>.REPORT.md`` / ``<case>.report.html``. Regenerate on purpose only, with
``CRONCTL_REGEN_GOLDEN=1``, and review the diff by hand.
"""

from __future__ import annotations

import json
import os
from datetime import timedelta
from pathlib import Path

import jsonschema
import pytest

from cronctl.bundle.analyse import Options
from cronctl.bundle.assemble import build_bundle
from cronctl.bundle.dump import load_dump
from cronctl.bundle.render import render_html, render_markdown
from cronctl.timeutil import parse_rfc3339

GOLDEN = Path(__file__).parent.parent / "golden" / "bundle"
SCHEMA = Path(__file__).parent.parent.parent / "cronctl" / "data" / "bundle.schema.json"
CASES = sorted(p.name[: -len(".dump.yaml")] for p in GOLDEN.glob("*.dump.yaml"))
REGEN = os.environ.get("CRONCTL_REGEN_GOLDEN") == "1"


def _bundle(case: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    monkeypatch.chdir(GOLDEN)  # the report names the dump file as given: keep it relative
    now = parse_rfc3339((GOLDEN / f"{case}.now").read_text().strip())
    raw = load_dump(f"{case}.dump.yaml", namespace=None, now=now, collected_at=now + timedelta(minutes=5))
    return build_bundle(raw, None, Options(now=now)).doc


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("kind", ["REPORT.md", "report.html"])
def test_the_rendered_report_matches_its_golden_file(case: str, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = _bundle(case, monkeypatch)
    got = render_markdown(doc) if kind == "REPORT.md" else render_html(doc)
    expected = GOLDEN / f"{case}.{kind}"
    if REGEN:
        expected.write_text(got)
    assert expected.exists(), f"no golden file {expected.name}; run with CRONCTL_REGEN_GOLDEN=1 and review it"
    assert got == expected.read_text()


@pytest.mark.parametrize("case", CASES)
def test_bundle_json_of_the_golden_input_is_valid_against_the_schema(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = _bundle(case, monkeypatch)
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(json.loads(json.dumps(doc)))


def test_the_schema_rejects_an_unknown_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = json.loads(json.dumps(_bundle(CASES[0], monkeypatch)))
    doc["cronjobs"][0]["occurrences"][0]["verdict"] = "maybe"
    with pytest.raises(jsonschema.ValidationError, match="maybe"):
        jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text())).validate(doc)


def test_the_golden_cases_exist() -> None:
    assert {"incident-004", "billing-two-cronjobs"} <= set(CASES)
