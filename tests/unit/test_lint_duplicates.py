"""CJ032 duplicate-work, the one rule over the whole set of CronJobs checked together: what counts
as the same work, when two copies share a slot (warning) or not (info), and that the engine and
`cronctl lint -f a.yaml -f b.yaml` run it across everything given."""

from __future__ import annotations

import copy
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

import builders
from cronctl.cli import main
from cronctl.lint.engine import lint_object, lint_objects, lint_sources
from cronctl.lint.rules import RULES, RULES_BY_ID

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=timezone.utc)  # a Wednesday
POD = "spec.jobTemplate.spec.template.spec"


def cronjob(name: str, schedule: str = "*/10 * * * *", ns: str | None = "integrations", zone: str = "Etc/UTC",
            image: str = "registry.local:5000/team/sync:1.4", **container: Any) -> dict[str, Any]:
    """A CronJob manifest (builders.cronjob: no uid, no creation, no suspend) of one container ``sync``."""
    c = {"name": "sync", "image": image, "args": ["--orders"], **container}
    return builders.cronjob(schedule, name=name, namespace=ns, tz=zone, uid=None, created=None, suspend=None,
                            pod={"restartPolicy": "Never"}, containers=[c])


def dupes(*cjs: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """name -> (severity, message) of each CJ032 finding."""
    _, found = lint_objects(list(cjs), NOW)
    return {f.object_name: (f.severity, f.message) for f in found if f.rule == "CJ032"}


def test_it_is_the_only_rule_over_the_set() -> None:
    assert [r.id for r in RULES if r.check_set is not None] == ["CJ032"]
    assert all((r.check is None) == (r.check_set is not None) for r in RULES)


def test_two_copies_on_the_same_slots_both_get_a_warning_naming_the_other() -> None:
    found = dupes(cronjob("orders-sync"), cronjob("orders-sync-v2"))
    assert set(found) == {"orders-sync", "orders-sync-v2"}
    sev, msg = found["orders-sync"]
    assert sev == "warning"
    assert "integrations/orders-sync-v2 ('*/10 * * * *' in Etc/UTC)" in msg
    assert "image registry.local:5000/team/sync" in msg  # the registry port is not a tag
    assert "both run at 2026-12-02T12:10:00Z" in msg  # the first slot after NOW
    assert "integrations/orders-sync" in found["orders-sync-v2"][1]


def test_slots_meeting_in_another_zone_are_found() -> None:
    # 12:30 in Berlin (UTC+1 in December) is 11:30Z: a */10 slot; the next is tomorrow
    found = dupes(cronjob("a"), cronjob("b", "30 12 * * *", zone="Europe/Berlin"))
    assert found["a"][0] == "warning" and "both run at 2026-12-03T11:30:00Z" in found["a"][1]


def test_sparse_schedules_are_compared_over_their_next_runs() -> None:
    # the 1st of the month at 03:00 and Mondays at 03:00 first meet on Monday 2027-02-01, two months
    # ahead: the monthly schedule's next three runs are always compared
    found = dupes(cronjob("monthly", "0 3 1 * *"), cronjob("mondays", "0 3 * * 1"))
    assert found["mondays"][0] == "warning" and "both run at 2027-02-01T03:00:00Z" in found["mondays"][1]


def test_copies_whose_slots_never_meet_are_info() -> None:
    # one job split over two schedules: 09:30 and 14:45 cannot be one cron expression
    found = dupes(cronjob("morning", "30 9 * * *"), cronjob("afternoon", "45 14 * * *"))
    assert {sev for sev, _ in found.values()} == {"info"}
    assert "do not meet" in found["morning"][1]


def test_tag_and_digest_do_not_make_the_work_different() -> None:
    found = dupes(cronjob("old", image="registry.local:5000/team/sync:1.3"),
                  cronjob("new", image="registry.local:5000/team/sync@sha256:" + "a" * 64))
    assert set(found) == {"old", "new"}


@pytest.mark.parametrize("change", [
    {"args": ["--invoices"]},
    {"command": ["/app/sync"]},
    {"env": [{"name": "TENANT", "value": "b"}]},
    {"envFrom": [{"configMapRef": {"name": "tenant-b"}}]},
    {"image": "registry.local:5000/team/other:1.4"},
    {"image": "registry.local:5000/sync:1.4"},
])
def test_a_different_command_args_env_or_image_is_different_work(change: dict[str, Any]) -> None:
    assert dupes(cronjob("a"), cronjob("b", **change)) == {}


def test_different_volumes_are_different_work() -> None:
    a, b = cronjob("a"), cronjob("b")
    b["spec"]["jobTemplate"]["spec"]["template"]["spec"]["volumes"] = [{"name": "cfg", "configMap": {"name": "b"}}]
    assert dupes(a, b) == {}


def test_other_namespaces_are_not_compared() -> None:
    # the same manifest per tenant namespace reads that namespace's ConfigMaps and Secrets
    assert dupes(cronjob("sync", ns="tenant-a"), cronjob("sync", ns="tenant-b")) == {}


def test_a_suspended_copy_does_no_work() -> None:
    paused = cronjob("old")
    paused["spec"]["suspend"] = True
    assert dupes(cronjob("new"), paused) == {}
    three = dupes(cronjob("new"), paused, cronjob("newer"))
    assert set(three) == {"new", "newer"} and "integrations/old " not in three["new"][1]


def test_the_same_object_given_twice_is_no_copy() -> None:
    assert dupes(cronjob("sync"), copy.deepcopy(cronjob("sync"))) == {}


def test_lint_ignore_drops_only_the_annotated_objects_finding() -> None:
    quiet = cronjob("quiet")
    quiet["metadata"]["annotations"] = {"cronctl.dev/lint-ignore": "CJ032"}
    assert set(dupes(cronjob("loud"), quiet)) == {"loud"}


def test_many_copies_are_named_up_to_five() -> None:
    found = dupes(*[cronjob(f"c{i}") for i in range(8)])
    assert len(found) == 8
    assert "and 2 more" in found["c0"][1] and "c7" not in found["c0"][1]


def test_lint_object_sees_one_cronjob_alone() -> None:
    assert not [f for f in lint_object(cronjob("a"), NOW) if f.rule == "CJ032"]


def test_sources_keep_their_file_and_order() -> None:
    checked, found = lint_sources([("a.yaml", [cronjob("a"), {"kind": "ConfigMap"}]), ("b.yaml", [cronjob("b")])],
                                  NOW)
    assert checked == 2
    mine = [(f.object_name, f.source) for f in found if f.rule == "CJ032"]
    assert mine == [("a", "a.yaml"), ("b", "b.yaml")]
    assert [f.object_name for f in found] == sorted(f.object_name for f in found)  # a's findings, then b's


def test_unparseable_or_missing_parts_do_not_crash() -> None:
    broken = cronjob("x", schedule="not a schedule")
    no_image = cronjob("y")
    del no_image["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["image"]
    garbage = {"kind": "CronJob", "metadata": {"name": "z", "namespace": "integrations"}, "spec": "oops"}
    found = dupes(broken, cronjob("x2", schedule="also bad"), no_image, garbage, cronjob("y2"))
    # y (no image) is compared with nothing; a schedule that does not parse meets no slot: info
    assert set(found) == {"x", "x2", "y2"} and {s for s, _ in found.values()} == {"info"}


# --------------------------------------------------------------------------- through the CLI


def _write(tmp_path: Path, name: str, *docs: dict[str, Any]) -> str:
    p = tmp_path / name
    p.write_text(yaml.safe_dump_all(docs))
    return str(p)


def test_cli_compares_cronjobs_across_files_and_sarif_stays_valid(capfd, tmp_path: Path) -> None:
    a = _write(tmp_path, "a.yaml", cronjob("orders-sync"))
    b = _write(tmp_path, "b.yaml", cronjob("orders-sync-copy"))
    code = main(["lint", "--now", "2026-12-02T12:00:00Z", "-f", a, "-f", b, "-o", "json", "--fail-on", "none"])
    doc = json.loads(capfd.readouterr().out)
    assert code == 0 and doc["checked"] == 2
    found = {(f["object"]["name"], f["object"]["source"]) for f in doc["findings"] if f["rule"] == "CJ032"}
    assert found == {("orders-sync", a), ("orders-sync-copy", b)}

    code = main(["lint", "--now", "2026-12-02T12:00:00Z", "-f", a, "-f", b, "-o", "sarif", "--fail-on", "warning"])
    log = json.loads(capfd.readouterr().out)
    assert code == 8
    schema = json.loads((Path(__file__).parents[1] / "data" / "sarif-schema-2.1.0.json").read_text())
    jsonschema.validators.validator_for(schema)(schema).validate(log)
    results = [r for r in log["runs"][0]["results"] if r["ruleId"] == "CJ032"]
    assert len(results) == 2 and {r["level"] for r in results} == {"warning"}


def test_cli_with_a_name_checks_only_that_cronjob(capfd, tmp_path: Path) -> None:
    a = _write(tmp_path, "a.yaml", cronjob("orders-sync"), cronjob("orders-sync-copy"))
    code = main(["lint", "--now", "2026-12-02T12:00:00Z", "-f", a, "orders-sync", "-o", "json", "--fail-on", "none"])
    doc = json.loads(capfd.readouterr().out)
    assert code == 0 and doc["checked"] == 1
    assert not [f for f in doc["findings"] if f["rule"] == "CJ032"]


def test_rule_listing_includes_the_set_rule(capfd) -> None:
    assert main(["lint", "--rules", "-o", "json"]) == 0
    doc = json.loads(capfd.readouterr().out)
    assert {"id": "CJ032", "name": "duplicate-work", "severity": "warning",
            "summary": RULES_BY_ID["CJ032"].summary, "why": RULES_BY_ID["CJ032"].why,
            "fix": RULES_BY_ID["CJ032"].fix} in doc
