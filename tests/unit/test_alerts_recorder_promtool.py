"""`promtool test rules` on every rule of `cronctl alerts --source recorder`, with synthetic series
of the recorder's metrics (docs/METRICS.md).

The rules read only timestamps the series carry and promtool's own clock (which starts at the Unix
epoch), so the scenarios keep their times small: a gauge of 600 is "ten minutes after promtool's
start". Each test says, from the scenario alone, when an alert must be quiet and when it fires.
The annotations are dropped (promtool compares them literally; `promtool check rules` checks their
templates below).
"""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from cronctl import alerts as al

from tool_support import promtool

NAMES = al.RECORDER_ALERT_NAMES
TARGET = {"instance": "recorder:9108", "job": "cronctl-recorder"}
SHOP = {"namespace": "shop", "cronjob": "invoices"}
CALM = {"namespace": "shop", "cronjob": "healthy"}


def _series(metric: str, labels: dict[str, str], values: str) -> dict[str, str]:
    text = ", ".join(f"{k}={json.dumps(v)}" for k, v in {**labels, **TARGET}.items())
    return {"series": f"{metric}{{{text}}}", "values": values}


def _alert(labels: dict[str, str], severity: str) -> dict[str, Any]:
    return {"exp_labels": {**labels, **TARGET, "severity": severity}}


def _run(tmp_path: Path, opts: al.RecorderAlertOptions, series: list[dict[str, str]],
         checks: list[tuple[str, str, list[dict[str, Any]]]], only: str) -> None:
    groups = copy.deepcopy(al.recorder_rules(opts))
    for g in groups:
        g["rules"] = [r for r in g["rules"] if r["alert"] == only]
        for r in g["rules"]:
            r.pop("annotations")
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"groups": [g for g in groups if g["rules"]]}))
    tests = [{"eval_time": t, "alertname": only, "exp_alerts": exp} for t, _name, exp in checks]
    doc = {"rule_files": ["rules.yaml"], "evaluation_interval": "1m",
           "tests": [{"interval": "1m", "input_series": series, "alert_rule_test": tests}]}
    (tmp_path / "test.yaml").write_text(yaml.safe_dump(doc, width=10**6))
    r = subprocess.run([promtool(), "test", "rules", "test.yaml"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, (r.stdout + r.stderr)[-6000:]


OPTS = al.RecorderAlertOptions()


def test_the_rules_pass_promtool_check_with_their_annotations(tmp_path: Path) -> None:
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"groups": al.recorder_rules(OPTS)}))
    r = subprocess.run([promtool(), "check", "rules", "rules.yaml"], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"{len(NAMES)} rules found" in r.stdout


def test_a_lost_slot_fires_at_the_first_evaluation_after_it_closed_and_for_the_window(tmp_path: Path) -> None:
    # invoices: its 3-minute slot closed as missed (the counter goes 0 -> 1 at 3m); a suspension by
    # choice (missed-suspended) and a healthy CronJob's runs never fire
    series = [_series("cronctl_slots_total", {**SHOP, "verdict": "missed"}, "0 0 0 1+0x30"),
              _series("cronctl_slots_total", {**SHOP, "verdict": "missed-suspended"}, "0 1 2 3 4+0x30"),
              _series("cronctl_slots_total", {**CALM, "verdict": "ran"}, "0+1x34"),
              _series("cronctl_slots_total", {**CALM, "verdict": "missed"}, "0+0x34")]
    lost = [_alert({**SHOP, "verdict": "missed"}, "critical")]
    _run(tmp_path, OPTS, series, [("2m", "", []), ("3m", "", lost), ("17m", "", lost), ("19m", "", [])],
         NAMES["lost"])


def test_each_lost_verdict_fires_and_a_second_loss_fires_again(tmp_path: Path) -> None:
    series = [_series("cronctl_slots_total", {**SHOP, "verdict": v}, "0 0 0 1+0x40") for v in al.LOST_ALERTED]
    series.append(_series("cronctl_slots_total", {**CALM, "verdict": "skipped-forbid"}, "0+0x20 1+0x20"))
    expect = [_alert({**SHOP, "verdict": v}, "critical") for v in al.LOST_ALERTED]
    _run(tmp_path, OPTS, series,
         [("3m", "", expect), ("20m", "", []), ("21m", "", [_alert({**CALM, "verdict": "skipped-forbid"}, "critical")])],
         NAMES["lost"])


def test_a_failed_slot_fires_for_the_window_and_a_cronjob_that_fails_every_slot_keeps_it_firing(
        tmp_path: Path) -> None:
    # invoices: one slot's run failed at 3m; nightly fails every slot (each 5 minutes); the healthy
    # CronJob's counter stays 0 (it is exported at 0 from the start, so a first failure is an increase)
    nightly = {**SHOP, "cronjob": "nightly"}
    series = [_series("cronctl_slots_failed_total", SHOP, "0 0 0 1+0x30"),
              _series("cronctl_slots_failed_total", nightly, "0 0 0 0 0 1+0x4 2+0x4 3+0x4 4+0x4 5+0x4 6+0x4 7+0x4"),
              _series("cronctl_slots_failed_total", CALM, "0+0x34")]
    _run(tmp_path, OPTS, series, [
        ("2m", "", []),
        ("3m", "", [_alert(SHOP, "critical")]),
        ("17m", "", [_alert(SHOP, "critical"), _alert(nightly, "critical")]),
        ("19m", "", [_alert(nightly, "critical")]),
        ("30m", "", [_alert(nightly, "critical")])], NAMES["failed"])


def test_a_duplicate_fires_on_a_doubled_slot_and_on_a_job_beside_a_manual_one(tmp_path: Path) -> None:
    series = [_series("cronctl_slots_total", {**SHOP, "verdict": "duplicate"}, "0 0 1+0x30"),
              _series("cronctl_slots_beside_manual_total", SHOP, "0+0x30"),
              _series("cronctl_cronjob_jobs_beside_manual", SHOP, "0+0x30"),
              # healthy: a manual Job runs beside a scheduled one from 5m to 7m, then the slot closes
              _series("cronctl_slots_total", {**CALM, "verdict": "duplicate"}, "0+0x30"),
              _series("cronctl_cronjob_jobs_beside_manual", CALM, "0 0 0 0 0 1 1 0+0x20"),
              _series("cronctl_slots_beside_manual_total", CALM, "0+0x9 1+0x20")]
    _run(tmp_path, OPTS, series, [
        ("1m", "", []),
        ("2m", "", [_alert({**SHOP, "verdict": "duplicate"}, "critical")]),
        ("5m", "", [_alert({**SHOP, "verdict": "duplicate"}, "critical"), _alert(CALM, "critical")]),
        ("8m", "", [_alert({**SHOP, "verdict": "duplicate"}, "critical")]),
        ("10m", "", [_alert({**SHOP, "verdict": "duplicate"}, "critical"), _alert(CALM, "critical")]),
        ("26m", "", [])], NAMES["duplicate"])


def test_no_success_fires_after_due_plus_margin_unless_suspended_or_paused(tmp_path: Path) -> None:
    # due at 600 (10m), margin 600: fires once time() - 600 > 600, from 21m (1260 s); 20m is 1200: quiet
    series = []
    for cj, suspended, paused in ((SHOP, "0", "0"), ({**SHOP, "cronjob": "off"}, "1", "0"),
                                  ({**SHOP, "cronjob": "paused"}, "0", "1")):
        series += [_series("cronctl_cronjob_success_due_timestamp_seconds", cj, "600+0x30"),
                   _series("cronctl_cronjob_suspended", cj, f"{suspended}+0x30"),
                   _series("cronctl_cronjob_paused", cj, f"{paused}+0x30")]
    # a CronJob that succeeded in time: its due moved on
    series += [_series("cronctl_cronjob_success_due_timestamp_seconds", CALM, "600+0x10 1800+0x20"),
               _series("cronctl_cronjob_suspended", CALM, "0+0x30"), _series("cronctl_cronjob_paused", CALM, "0+0x30")]
    _run(tmp_path, OPTS, series, [("20m", "", []), ("21m", "", [_alert(SHOP, "critical")])], NAMES["stale"])


def test_a_run_near_the_interval_fires_and_an_idle_cronjob_does_not(tmp_path: Path) -> None:
    # started at 60, interval 600, 0.8: fires once time() - 60 > 480, from 10m (600); 9m (540) is quiet
    series = [_series("cronctl_cronjob_oldest_running_start_timestamp_seconds", SHOP, "60+0x20"),
              _series("cronctl_cronjob_interval_seconds", SHOP, "600+0x20"),
              _series("cronctl_cronjob_oldest_running_start_timestamp_seconds", CALM, "0+0x20"),
              _series("cronctl_cronjob_interval_seconds", CALM, "60+0x20")]
    _run(tmp_path, OPTS, series, [("9m", "", []), ("10m", "", [_alert(SHOP, "warning")])], NAMES["long-run"])


def test_a_pause_past_its_until_and_a_hold_past_max_hold_fire(tmp_path: Path) -> None:
    paused, held = SHOP, {**SHOP, "cronjob": "held"}
    series = [_series("cronctl_cronjob_paused", paused, "1+0x20"),
              _series("cronctl_cronjob_pause_until_timestamp_seconds", paused, "300+0x20"),
              _series("cronctl_cronjob_hold_active", paused, "0+0x20"),
              _series("cronctl_cronjob_hold_since_timestamp_seconds", paused, "0+0x20"),
              _series("cronctl_cronjob_paused", held, "0+0x20"),
              _series("cronctl_cronjob_pause_until_timestamp_seconds", held, "0+0x20"),
              _series("cronctl_cronjob_hold_active", held, "1+0x20"),
              _series("cronctl_cronjob_hold_since_timestamp_seconds", held, "60+0x20"),
              # paused with no --until: never overdue here (CronJobSuspendedTooLong covers it)
              _series("cronctl_cronjob_paused", CALM, "1+0x20"),
              _series("cronctl_cronjob_pause_until_timestamp_seconds", CALM, "0+0x20")]
    opts = al.RecorderAlertOptions(max_hold=600)
    _run(tmp_path, opts, series, [("5m", "", []), ("6m", "", [_alert(paused, "warning")]),
                                  ("11m", "", [_alert(paused, "warning")]),
                                  ("12m", "", [_alert(paused, "warning"), _alert(held, "warning")])],
         NAMES["overdue-hold"])


def test_suspended_with_no_pause_or_hold_fires_after_max_suspend(tmp_path: Path) -> None:
    series = []
    for cj, paused, hold in ((SHOP, "0", "0"), ({**SHOP, "cronjob": "p"}, "1", "0"), ({**SHOP, "cronjob": "h"}, "0", "1")):
        series += [_series("cronctl_cronjob_suspended", cj, "1+0x20"), _series("cronctl_cronjob_paused", cj, f"{paused}+0x20"),
                   _series("cronctl_cronjob_hold_active", cj, f"{hold}+0x20")]
    _run(tmp_path, al.RecorderAlertOptions(max_suspend=600), series,
         [("9m", "", []), ("10m", "", [_alert(SHOP, "warning")])], NAMES["suspended"])


@pytest.mark.parametrize("case", ["target down", "no lease holder"])
def test_the_recorder_down_fires_after_two_minutes(tmp_path: Path, case: str) -> None:
    if case == "target down":
        series = [_series("up", {}, "1 1 1 0+0x10"), _series("cronctl_recorder_lease_holder", {}, "1 1 1 _x10")]
        fired = [{"exp_labels": {**TARGET, "severity": "critical"}}]
    else:  # both replicas up, neither holds the Lease (the holder's API access broke)
        series = [_series("up", {}, "1+0x12"), _series("cronctl_recorder_lease_holder", {}, "1 1 1 0+0x10")]
        fired = [{"exp_labels": {"severity": "critical"}}]
    _run(tmp_path, OPTS, series, [("2m", "", []), ("4m", "", []), ("5m", "", fired)], NAMES["recorder-down"])


def test_the_recorder_lagging_fires_after_five_minutes_of_lag_or_a_half_full_buffer(tmp_path: Path) -> None:
    lagging, filling = {"instance": "a"}, {"instance": "b"}
    series = [{"series": 'cronctl_recorder_lag_seconds{instance="a"}', "values": "1 1 120+0x10"},
              {"series": 'cronctl_recorder_buffer_items{instance="a"}', "values": "0+0x12"},
              {"series": 'cronctl_recorder_buffer_capacity{instance="a"}', "values": "100+0x12"},
              {"series": 'cronctl_recorder_lag_seconds{instance="b"}', "values": "1+0x12"},
              {"series": 'cronctl_recorder_buffer_items{instance="b"}', "values": "0 0 0 60+0x10"},
              {"series": 'cronctl_recorder_buffer_capacity{instance="b"}', "values": "100+0x12"}]
    _run(tmp_path, OPTS, series, [
        ("6m", "", []),
        ("7m", "", [{"exp_labels": {**lagging, "severity": "critical"}}]),
        ("8m", "", [{"exp_labels": {**lagging, "severity": "critical"}}, {"exp_labels": {**filling, "severity": "critical"}}]),
    ], NAMES["recorder-lag"])


def test_namespace_and_cronjob_narrow_every_slot_rule(tmp_path: Path) -> None:
    groups = al.recorder_rules(al.RecorderAlertOptions(namespace="shop", cronjob="invoices"))
    slot_rules = groups[0]["rules"]
    assert len(slot_rules) == 7
    for r in slot_rules:
        for line in r["expr"].splitlines():
            for metric in ("cronctl_slots_total{", "cronctl_slots_failed_total{", "cronctl_cronjob_"):
                if metric in line:
                    assert 'namespace="shop", cronjob="invoices"' in line, line


def test_an_ambiguous_effect_fires_while_the_row_stays_ambiguous(tmp_path: Path) -> None:
    # issue 36: the claim rows' effects by workflow; shop/invoices has one ambiguous occurrence from
    # 3m to 8m (reconciled then); done and refused duplicates never fire this alert
    inv, calm = {"workflow": "shop/invoices"}, {"workflow": "shop/healthy"}
    series = [_series("cronctl_claim_occurrences", {**inv, "effect": "ambiguous"}, "0 0 0 1+0x4 0+0x5"),
              _series("cronctl_claim_occurrences", {**inv, "effect": "done"}, "5+1x12"),
              _series("cronctl_claim_occurrences", {**calm, "effect": "refused-duplicate"}, "1+0x12"),
              _series("cronctl_claim_occurrences", {**calm, "effect": "done"}, "5+1x12")]
    fired = [_alert({**inv, "effect": "ambiguous"}, "critical")]
    _run(tmp_path, OPTS, series, [("2m", "", []), ("3m", "", fired), ("7m", "", fired), ("8m", "", [])],
         NAMES["ambiguous"])


def test_a_refused_claimer_fires_once_per_new_refusal_for_the_window(tmp_path: Path) -> None:
    # the conflicts gauge of shop/invoices goes 2 -> 3 at 5m (a second Job for a done occurrence);
    # shop/healthy's stays at 4 (old refusals) and never fires; rows pruned (the gauge falls) never fire
    inv, calm, pruned = {"workflow": "shop/invoices"}, {"workflow": "shop/healthy"}, {"workflow": "shop/old"}
    series = [_series("cronctl_claim_conflicts", inv, "2+0x4 3+0x30"),
              _series("cronctl_claim_conflicts", calm, "4+0x34"),
              _series("cronctl_claim_conflicts", pruned, "6+0x4 0+0x30")]
    fired = [_alert(inv, "warning")]
    _run(tmp_path, al.RecorderAlertOptions(window=600), series,
         [("4m", "", []), ("5m", "", fired), ("14m", "", fired), ("16m", "", [])], NAMES["conflict"])


def test_namespace_and_cronjob_narrow_the_effect_rules_by_the_default_workflow_key() -> None:
    only = al.recorder_rules(al.RecorderAlertOptions(namespace="shop", cronjob="invoices"))[1]["rules"]
    assert [r["alert"] for r in only] == [NAMES["ambiguous"], NAMES["conflict"]]
    assert all('workflow="shop/invoices"' in r["expr"] for r in only), only
    ns = al.recorder_rules(al.RecorderAlertOptions(namespace="shop"))[1]["rules"]
    assert all('workflow=~"shop/.*"' in r["expr"] for r in ns), ns
