"""bundle.json, byte for byte, against golden files; and the one place it is made.

The analysis returns frozen dataclasses (:mod:`cronctl.bundle.result`) and
:mod:`cronctl.bundle.document` alone turns them into bundle.json. The goldens
(tests/golden/bundle/<case>.bundle.json) were made from the code before that (cf859c2, where the
analysis and the assembly built the document as they went), by :func:`regenerate` run over that
checkout, so they hold the typed results to what users got before, not to themselves. The cases:
the golden dumps of the reports, and incident-004 with what no dump of them has (a finished cronctl
run kept on the CronJob, a GitOps tool that writes spec.suspend, a CronJob suspended by hand).
``cronctl_version`` is written ``<version>`` in the goldens (the only field a release changes).
``CRONCTL_REGEN_GOLDEN=1`` rewrites them from the code under test: review the diff by hand.
"""

from __future__ import annotations

import dataclasses
import json
import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "bundle"
REGEN = os.environ.get("CRONCTL_REGEN_GOLDEN") == "1"
DUMPS = sorted(p.name[: -len(".dump.yaml")] for p in GOLDEN.glob("*.dump.yaml"))
#: a case made of a golden dump by changing its objects: (the dump, the change)
VARIANTS = {"incident-004-held-by-hand": "incident-004"}
CASES = DUMPS + sorted(VARIANTS)


def _held_by_hand(objs: list[dict[str, Any]]) -> None:
    """incident-004's CronJob suspended by hand (managedFields say who), under Argo CD, and with the
    record of a finished cronctl run that held it 10:20-10:42 (its Job, record and events gone)."""
    cj = next(o for o in objs if o["kind"] == "CronJob")
    cj["spec"]["suspend"] = True
    meta = cj["metadata"]
    meta.setdefault("annotations", {})["cronctl.dev/runs"] = json.dumps([{
        "run_id": "r-41", "operator": "alice", "reason": "INC-7 reprocess", "job_name": "mp-orders-sync-manual",
        "occurrence": "", "suspended_at": "2026-12-02T10:20:00Z", "restored_at": "2026-12-02T10:42:00Z",
        "last_step": "succeeded", "original_suspend": False, "restored_to": False}])
    meta["managedFields"] = [
        {"manager": "argocd-controller", "operation": "Apply", "apiVersion": "batch/v1", "time": "2026-12-02T09:00:00Z",
         "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:schedule": {}, "f:suspend": {}}}},
        {"manager": "kubectl-patch", "operation": "Update", "apiVersion": "batch/v1", "time": "2026-12-02T11:21:00Z",
         "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:suspend": {}}}},
    ]


def render(case: str) -> str:
    """bundle.json of ``case`` as ``cronctl bundle --from-dump`` writes it (now: ``<dump>.now``,
    collected 5 minutes later), ``cronctl_version`` written ``<version>``."""
    from cronctl import __version__
    from cronctl.bundle.analyse import Options
    from cronctl.bundle.assemble import build_bundle
    from cronctl.bundle.dump import load_dump
    from cronctl.lint.engine import findings_as_data
    from cronctl.timeutil import parse_rfc3339

    dump = VARIANTS.get(case, case)
    now = parse_rfc3339((GOLDEN / f"{dump}.now").read_text().strip())
    here = os.getcwd()
    os.chdir(GOLDEN)  # bundle.json names the dump file as given: keep it relative
    try:
        raw = load_dump(f"{dump}.dump.yaml", namespace=None, now=now, collected_at=now + timedelta(minutes=5))
    finally:
        os.chdir(here)
    if case in VARIANTS:
        _held_by_hand(raw.cronjobs)
    text = build_bundle(raw, None, Options(now=now), lint=findings_as_data).files["bundle.json"].decode("utf-8")
    version = f'"cronctl_version":{json.dumps(__version__)}'
    assert text.count(version) == 1
    return text.replace(version, '"cronctl_version":"<version>"')


def regenerate() -> None:
    """Write every golden from whichever cronctl is importable (run it over the old checkout)."""
    for case in CASES:
        (GOLDEN / f"{case}.bundle.json").write_text(render(case), encoding="utf-8")


@pytest.mark.parametrize("case", CASES)
def test_bundle_json_matches_its_golden_file(case: str) -> None:
    got = render(case)
    expected = GOLDEN / f"{case}.bundle.json"
    if REGEN:
        expected.write_text(got, encoding="utf-8")
    assert expected.exists(), f"no golden file {expected.name}; run with CRONCTL_REGEN_GOLDEN=1 and review it"
    assert got == expected.read_text(encoding="utf-8")


def test_every_golden_bundle_json_has_its_case() -> None:
    assert sorted(p.name for p in GOLDEN.glob("*.bundle.json")) == sorted(f"{c}.bundle.json" for c in CASES)


def test_the_variant_has_what_the_dumps_lack() -> None:
    (cj,) = json.loads(render("incident-004-held-by-hand"))["cronjobs"]
    assert cj["gitops"]["tool"] == "argocd" and cj["spec"]["suspend"] is True
    current, finished = cj["suspended_periods"][:2]
    assert current["end"] is None and "kubectl-patch" in current["source"]
    # a finished run's period keeps the key order bundle.json always gave it
    assert list(finished) == ["start", "end", "inferred", "lost", "source"] and "alice" in finished["source"]
    assert list(current) == ["start", "end", "source", "inferred", "lost"]


def _incident() -> tuple[Any, Any]:
    from cronctl.bundle.dump import load_dump
    from cronctl.timeutil import parse_rfc3339

    now = parse_rfc3339((GOLDEN / "incident-004.now").read_text().strip())
    return load_dump(str(GOLDEN / "incident-004.dump.yaml"), namespace=None, now=now, collected_at=now), now


def test_the_analysis_is_frozen_dataclasses_and_its_record_is_the_document_s() -> None:
    from cronctl.bundle.analyse import Options, analyse, analyse_cronjob
    from cronctl.bundle.document import cronjob_record

    raw, now = _incident()
    args = (raw.cronjobs[0], raw.jobs, raw.pods, raw.events, Options(now=now))
    a = analyse(*args)
    for part in (a, a.schedule, a.active, a.window, a.jobs[0], a.jobs[0].pods[0], a.occurrences[0], a.overlaps[0]):
        assert dataclasses.is_dataclass(part)
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(part, dataclasses.fields(part)[0].name, None)
    assert analyse_cronjob(*args) == cronjob_record(a)
    assert a.jobs[0].record.name == cronjob_record(a)["jobs"][0]["name"]


def test_bundle_json_is_the_document_of_the_bundle_s_result() -> None:
    from cronctl.bundle.analyse import Options
    from cronctl.bundle.assemble import build_bundle
    from cronctl.bundle.document import bundle_doc, bundle_json

    raw, now = _incident()
    b = build_bundle(raw, None, Options(now=now))
    assert bundle_doc(b.result) == b.doc
    assert b.files["bundle.json"] == bundle_json(b.doc)
    assert [c.analysis.view.name for c in b.result.cronjobs] == [c["name"] for c in b.doc["cronjobs"]]
    assert b.result.partial is b.doc["partial"] is False


def test_the_json_summary_is_made_in_the_cli_of_each_cronjob_s_summary() -> None:
    from cronctl.bundle.analyse import Options
    from cronctl.bundle.assemble import build_bundle
    from cronctl.cli.bundle import summary_doc

    raw, now = _incident()
    doc = build_bundle(raw, None, Options(now=now)).doc
    s = summary_doc("out", doc)
    assert list(s) == ["path", "namespace", "partial", "missing", "cronjobs"]
    assert s["cronjobs"] == [c["summary"] for c in doc["cronjobs"]] and s["namespace"] == "integrations"
