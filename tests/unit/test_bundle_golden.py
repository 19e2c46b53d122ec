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
from cronctl.lint.engine import findings_as_data
from cronctl.bundle.dump import load_dump
from cronctl.bundle.render import render_html, render_markdown
from cronctl.history import LOST
from cronctl.timeutil import parse_rfc3339

GOLDEN = Path(__file__).parent.parent / "golden" / "bundle"
SCHEMA = Path(__file__).parent.parent.parent / "cronctl" / "data" / "bundle.schema.json"
CASES = sorted(p.name[: -len(".dump.yaml")] for p in GOLDEN.glob("*.dump.yaml"))
REGEN = os.environ.get("CRONCTL_REGEN_GOLDEN") == "1"


def _bundle(case: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    monkeypatch.chdir(GOLDEN)  # the report names the dump file as given: keep it relative
    now = parse_rfc3339((GOLDEN / f"{case}.now").read_text().strip())
    raw = load_dump(f"{case}.dump.yaml", namespace=None, now=now, collected_at=now + timedelta(minutes=5))
    return build_bundle(raw, None, Options(now=now), lint=findings_as_data).doc


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
    assert {"incident-004", "billing-two-cronjobs", "orders-fast-catch-up"} <= set(CASES)


def test_the_issue_s_catch_up_deleted_by_the_history_limit_is_not_lost(monkeypatch: pytest.MonkeyPatch) -> None:
    # issue 10 item 5: the restore's catch-up orders-fast-29937148 (16:28) ran and the history
    # limit deleted it at 16:32:22 (when orders-fast-29937152 completed, the 4th success after it)
    cj = _bundle("orders-fast-catch-up", monkeypatch)["cronjobs"][0]  # type: ignore[index]
    occ = {o["expected"][11:16]: o for o in cj["occurrences"]}
    assert occ["16:28"]["verdict"] == "ran-late" and occ["16:28"]["jobs_gone"] == ["orders-fast-29937148"]
    assert "un-suspended (cronctl at 2026-12-02T16:28:50Z)" in occ["16:28"]["reason"]
    assert occ["16:29"]["verdict"] == "skipped-forbid"  # the catch-up still ran then
    assert "2026-12-02T16:28:00Z" not in cj["lost_history"]
    # issue 34: lost_history named no slot at all (it looked for a verdict "lost" that does not exist)
    assert cj["lost_history"] == [o["expected"] for o in cj["occurrences"] if o["verdict"] in LOST]
    assert "2026-12-02T16:29:00Z" in cj["lost_history"]
    # the runs that failed (16:33, 16:36) are their own list; 16:33's Job is gone, its events say it failed
    assert cj["failed_history"] == ["2026-12-02T16:33:00Z", "2026-12-02T16:36:00Z"]
    assert cj["summary"]["failed"] == 2 and occ["16:36"]["slot_outcome"] == "failed"
    gone = {g["name"]: g for g in cj["removed_jobs"]}
    assert gone["orders-fast-29937148"]["deleted"] == "2026-12-02T16:32:22Z"
    assert gone["orders-fast-29937153"]["failure_reason"] == "BackoffLimitExceeded"
    assert "failedJobsHistoryLimit=1" in gone["orders-fast-29937153"]["removed"]
    # which build ran: 2.3.1 failed at 16:36, 2.3.2 ran from 16:37
    images = {j["name"][-2:]: j["pods"][0]["containers"][0]["image_id"][-4:] for j in cj["jobs"]}
    assert images == {"56": "1111", "57": "2222", "58": "2222", "59": "2222"}
