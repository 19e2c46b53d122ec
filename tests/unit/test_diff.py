"""`cronctl diff`: one test per case of issue 38's "Why", on the pure verdict (cronctl/change.py) and
through the command line against a saved dump (offline: --from-dump, --now).

The expected Jobs and instants are worked out by hand from docs/SEMANTICS.md §4 (the slot, the
controller's requeue at Next(...) + 100 ms, the deadline window), and the Job names with
tests/builders.slotname, not read back from the code under test."""

from __future__ import annotations

import copy
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from cronctl.change import assess, merged
from tests.builders import T, cronjob, manifest, slotname, z

NOW = T(10, 30)  # 2026-12-02 10:30 UTC
SCHEMA = json.loads((Path(__file__).parents[1] / "data" / "sarif-schema-2.1.0.json").read_text())


def hourly(**kw: Any) -> dict[str, Any]:
    """An hourly CronJob that last ran at 10:00 (the slot of the apply's hour)."""
    kw.setdefault("last", T(10, 0))
    kw.setdefault("created", T(0, 0, day=1))
    return cronjob("0 * * * *", **kw)


def edited(live: dict[str, Any], **spec: Any) -> dict[str, Any]:
    """``live``'s manifest with spec fields changed (None: removed), merged as kubectl would apply it."""
    want = copy.deepcopy(live)
    del want["status"]
    for k, v in spec.items():
        if v is None:
            want["spec"].pop(k, None)
        else:
            want["spec"][k] = v
    return merged(live, want, manager="kubectl")


def kinds(c: Any) -> set[str]:
    return {e.kind for e in c.effects}


# --- Why 1: editing a schedule makes the controller run at once -----------------------------------

def test_a_schedule_edit_with_a_slot_since_the_last_run_starts_that_slot_at_the_next_sync() -> None:
    live = hourly()
    c = assess(live, edited(live, schedule="15 10 * * *"), NOW)
    # the 10:15 slot of the new schedule lies between lastScheduleTime (10:00) and the apply (10:30);
    # updateCronJob only moves the requeue, so the sync that starts it is the old schedule's 11:00:00.1
    assert c.job_name == slotname(T(10, 15)) and c.slot == T(10, 15)
    assert c.sync_at == T(11, 0) + timedelta(milliseconds=100)
    assert c.kinds == ("immediate",) and c.acts_now
    assert [(ch.field, ch.before, ch.after) for ch in c.changes] == [("schedule", "0 * * * *", "15 10 * * *")]


def test_a_schedule_edit_without_a_slot_since_the_last_run_has_no_effect_now() -> None:
    live = hourly()
    c = assess(live, edited(live, schedule="45 * * * *"), NOW)
    assert not c.acts_now and c.kinds == ()
    assert c.next_before[0] == T(11, 0) and c.next_after[0] == T(10, 45)
    # its first sync is the new schedule's own requeue, a normal run, not a catch-up
    assert c.sync_at == T(10, 45) + timedelta(milliseconds=100) and c.slot == T(10, 45)


# --- Why 2: changing timeZone ----------------------------------------------------------------------

def test_a_time_zone_change_that_makes_a_slot_due_starts_it() -> None:
    live = cronjob("0 16 * * *", last=T(16, 0, day=1), created=T(0, 0, day=1))
    # 16:00 in Asia/Kolkata (+05:30) is 10:30 UTC: due at the apply
    c = assess(live, edited(live, timeZone="Asia/Kolkata"), NOW)
    assert c.kinds == ("immediate",) and c.slot == T(10, 30)
    assert c.job_name == slotname(T(10, 30))
    assert c.zone_before is None and c.zone_after == "Asia/Kolkata"
    assert c.next_after[0] == T(10, 30, day=3)


# --- Why 3: unsuspending ---------------------------------------------------------------------------

def test_unsuspending_starts_the_most_recent_missed_run_and_says_what_is_never_made_up() -> None:
    live = hourly(suspend=True, last=T(7, 0))
    c = assess(live, edited(live, suspend=False), NOW)
    assert c.kinds == ("catch-up",) and c.sync_at == NOW  # any change but schedule/timeZone syncs at once
    assert c.job_name == slotname(T(10, 0))
    dropped = [e.text for e in c.effects if e.kind == "dropped"]
    assert dropped and dropped[0].startswith("2 other missed run(s)")  # 08:00 and 09:00


def test_unsuspending_with_a_short_deadline_starts_nothing() -> None:
    live = hourly(suspend=True, last=T(7, 0), deadline=600)  # the window is 10:20..10:30: no slot
    c = assess(live, edited(live, suspend=False), NOW)
    assert not c.acts_now and c.job_name is None
    assert any(e.kind == "dropped" and e.text.startswith("the 3 run(s) missed while suspended") for e in c.effects)


def test_unsuspending_together_with_a_schedule_change_defers_the_sync_and_starts_no_catch_up() -> None:
    live = hourly(suspend=True, last=T(7, 0))
    c = assess(live, edited(live, suspend=False, schedule="30 * * * *"), NOW)
    # no immediate sync (updateCronJob), a suspended CronJob has no pending requeue: the new one,
    # Next(10:30) + 100 ms = 11:30:00.1, starts the 11:30 run on time and nothing else
    assert c.sync_at == T(11, 30) + timedelta(milliseconds=100) and c.slot == T(11, 30)
    assert not c.acts_now


# --- Why 4: lowering or removing startingDeadlineSeconds ---------------------------------------------

def test_removing_the_deadline_of_a_long_suspended_cronjob_warns_too_many_missed_start_times() -> None:
    applied = [{"manager": "kubectl", "operation": "Apply",
                "fieldsV1": {"f:spec": {"f:suspend": {}, "f:startingDeadlineSeconds": {}}}}]
    live = hourly(suspend=True, last=T(10, 0, day=1) - timedelta(days=6), deadline=300, managed=applied)
    c = assess(live, edited(live, suspend=False, startingDeadlineSeconds=None), NOW)
    assert c.kinds == ("catch-up",) and c.slot == T(10, 0)
    assert "too-many" in kinds(c)
    assert c.as_dict()["tooManyMissed"] is True


def test_a_deadline_of_zero_means_the_unsuspend_starts_nothing() -> None:
    live = hourly(suspend=True, last=T(7, 0))
    c = assess(live, edited(live, suspend=False, startingDeadlineSeconds=0), NOW)
    assert c.job_name is None and not c.acts_now


# --- Why 5: concurrencyPolicy Replace --------------------------------------------------------------

def test_replace_with_a_waiting_slot_deletes_the_running_job_at_once() -> None:
    # Forbid held the 10:00 slot back for the 09:00 Job, still running; Replace syncs at once,
    # deletes it and starts 10:00
    live = hourly(policy="Forbid", last=T(9, 0), active=[slotname(T(9, 0))])
    c = assess(live, edited(live, concurrencyPolicy="Replace"), NOW)
    assert c.replaces == (slotname(T(9, 0)),) and c.job_name == slotname(T(10, 0))
    assert "replace" in c.kinds and c.acts_now


def test_replace_with_nothing_due_deletes_nothing_now_and_says_the_next_run_will() -> None:
    live = hourly(policy="Forbid", active=[slotname(T(10, 0))])
    c = assess(live, edited(live, concurrencyPolicy="Replace"), NOW)
    assert not c.acts_now and c.replaces == ()
    later = [e.text for e in c.effects if e.kind == "replace"]
    assert later and slotname(T(10, 0)) in later[0] and "11:00" in later[0]


# --- Why 6: a template change ----------------------------------------------------------------------

def test_a_template_change_leaves_the_running_job_on_the_old_template() -> None:
    live = hourly(active=[slotname(T(10, 0))], containers=[{"name": "c", "image": "app:1"}])
    want = copy.deepcopy(live)
    del want["status"]
    want["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["image"] = "app:2"
    c = assess(live, merged(live, want, manager="kubectl"), NOW)
    assert c.template_changed and not c.acts_now
    assert [e.kind for e in c.effects] == ["old-template"] and slotname(T(10, 0)) in c.effects[0].text


# --- creation, no change, DST ---------------------------------------------------------------------

def test_a_new_cronjob_runs_nothing_at_once() -> None:
    c = assess(None, merged(None, manifest("fresh", "*/5 * * * *"), manager="kubectl"), NOW)
    assert not c.exists and not c.acts_now and c.next_after[0] == T(10, 35)


def test_an_apply_that_changes_nothing_is_no_update() -> None:
    live = hourly()
    c = assess(live, edited(live), NOW)
    assert c.unchanged and c.decision is None and not c.effects


def test_moving_a_schedule_into_the_night_brings_in_dst_nights() -> None:
    live = cronjob("0 12 * * *", tz="Europe/Berlin", last=T(11, 0), created=T(0, 0, day=1))
    c = assess(live, edited(live, schedule="30 2 * * *"), NOW)
    assert [(n.date, n.what) for n in c.dst_added] == [("2027-03-28", "skipped"), ("2027-10-31", "doubled")]
    assert c.kinds == ("dst",) and not c.acts_now
    back = assess(edited(live, schedule="30 2 * * *"), live, NOW)  # and back again: the nights go
    assert [n.date for n in back.dst_removed] == ["2027-03-28", "2027-10-31"]


# --- the offline merge ------------------------------------------------------------------------------

def test_offline_merge_keeps_a_field_another_manager_owns_and_drops_ours() -> None:
    managed = [{"manager": "cronctl", "operation": "Update", "fieldsV1": {"f:spec": {"f:suspend": {}}}},
               {"manager": "kubectl", "operation": "Apply",
                "fieldsV1": {"f:spec": {"f:schedule": {}, "f:startingDeadlineSeconds": {}}}}]
    live = hourly(suspend=True, deadline=60, managed=managed)
    want = manifest("cj", "0 * * * *")  # names neither suspend nor the deadline
    after = merged(live, want, manager="kubectl")
    assert after["spec"]["suspend"] is True  # cronctl's pause stays
    assert "startingDeadlineSeconds" not in after["spec"]  # the apply's own field, left out: removed
    assert after["status"] == live["status"]


# --- through the command line, offline ------------------------------------------------------------

@pytest.fixture
def dump(tmp_path: Path) -> Path:
    items = [hourly(name="mail"), hourly(name="paused", suspend=True, last=T(7, 0)),
             hourly(name="busy", policy="Forbid", last=T(9, 0), active=[slotname(T(9, 0), "busy")])]
    p = tmp_path / "dump.yaml"
    p.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    return p


def write(tmp_path: Path, *objs: dict[str, Any]) -> Path:
    p = tmp_path / "change.yaml"
    p.write_text(yaml.safe_dump_all(objs))
    return p


def test_cli_exit_1_and_json_name_the_job_a_schedule_edit_starts(run_cli: Any, dump: Path, tmp_path: Path) -> None:
    f = write(tmp_path, manifest("mail", "15 10 * * *"))
    r = run_cli("diff", "-f", str(f), "--from-dump", str(dump), "--now", z(NOW), "-o", "json")
    assert r.exit_code == 1, r.stderr
    doc = json.loads(r.stdout)
    (cj,) = doc["cronjobs"]
    assert cj["createsJob"] == slotname(T(10, 15), "mail") and cj["slot"] == z(T(10, 15))
    assert cj["failOnKinds"] == ["immediate"] and doc["fails"] is True


def test_cli_text_says_it_in_plain_words_first(run_cli: Any, dump: Path, tmp_path: Path) -> None:
    f = write(tmp_path, manifest("paused", "0 * * * *", suspend=False))
    r = run_cli("diff", "-f", str(f), "--from-dump", str(dump), "--now", z(NOW))
    assert r.exit_code == 1, r.stderr
    first = r.stdout.splitlines()[0]
    assert first == f"ns/paused: applying this creates Job {slotname(T(10, 0), 'paused')} (catch-up)"
    assert "  suspend: true -> false" in r.stdout.splitlines()


def test_cli_fail_on_chooses_what_fails(run_cli: Any, dump: Path, tmp_path: Path) -> None:
    f = write(tmp_path, manifest("mail", "15 10 * * *"))
    args = ["diff", "-f", str(f), "--from-dump", str(dump), "--now", z(NOW)]
    assert run_cli(*args, "--fail-on", "replace").exit_code == 0
    assert run_cli(*args, "--fail-on", "replace", "--fail-on", "immediate").exit_code == 1
    g = write(tmp_path, manifest("mail", "30 2 * * *", tz="Europe/Berlin"))
    args = ["diff", "-f", str(g), "--from-dump", str(dump), "--now", z(NOW)]
    assert run_cli(*args, "--fail-on", "dst").exit_code == 1


def test_cli_set_is_a_what_if_without_a_file(run_cli: Any, dump: Path) -> None:
    r = run_cli("diff", "busy", "--set", "concurrencyPolicy=Replace", "--from-dump", str(dump), "--now", z(NOW),
                "-o", "json")
    assert r.exit_code == 1, r.stderr
    (cj,) = json.loads(r.stdout)["cronjobs"]
    assert cj["deletesJobs"] == [slotname(T(9, 0), "busy")] and cj["createsJob"] == slotname(T(10, 0), "busy")
    r = run_cli("diff", "mail", "--set", "schedule=45 * * * *", "--from-dump", str(dump), "--now", z(NOW))
    assert r.exit_code == 0, r.stderr


def test_cli_sarif_is_valid_and_points_at_the_file(run_cli: Any, dump: Path, tmp_path: Path) -> None:
    f = write(tmp_path, manifest("mail", "15 10 * * *"))
    r = run_cli("diff", "-f", str(f), "--from-dump", str(dump), "--now", z(NOW), "-o", "sarif")
    assert r.exit_code == 1, r.stderr
    log = json.loads(r.stdout)
    cls = jsonschema.validators.validator_for(SCHEMA)
    cls(SCHEMA).validate(log)
    (res,) = log["runs"][0]["results"]
    assert res["ruleId"] == "CD001" and res["level"] == "error"
    loc = res["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"].endswith("change.yaml") and loc["region"]["startLine"] >= 1


@pytest.mark.parametrize("args, code, words", [
    (["diff"], 2, "give -f FILE"),
    (["diff", "mail", "--set", "color=red"], 5, "bad --set 'color=red'"),
    (["diff", "mail", "--set", "startingDeadlineSeconds=-1"], 5, "whole number"),
    (["diff", "mail", "--set", "schedule=61 * * * *"], 5, "minute"),
    (["diff", "ghost", "--set", "suspend=true"], 6, "ghost"),
])
def test_cli_bad_input_is_one_line_and_its_code(run_cli: Any, dump: Path, args: list[str], code: int,
                                                words: str) -> None:
    r = run_cli(*args, "--from-dump", str(dump), "--now", z(NOW))
    assert r.exit_code == code, (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert words in lines[-1] and "Traceback" not in r.stderr
    assert len(lines) == 1 or code == 2  # a usage error comes with click's usage lines


def test_cli_ledger_supplies_the_live_status(run_cli: Any, tmp_path: Path) -> None:
    from cronctl.ledger.store import open_ledger

    url = f"sqlite:///{tmp_path / 'ledger.sqlite'}"
    led = open_ledger(url)
    try:
        with led.writing() as w:
            w.cronjob("c1", hourly(name="paused", suspend=True, last=T(7, 0)), T(10, 0))
    finally:
        led.close()
    r = run_cli("diff", "paused", "--set", "suspend=false", "--ledger", url, "--now", z(NOW), "-o", "json")
    assert r.exit_code == 1, r.stderr
    (cj,) = json.loads(r.stdout)["cronjobs"]
    assert cj["createsJob"] == slotname(T(10, 0), "paused") and cj["failOnKinds"] == ["catch-up"]
    assert json.loads(r.stdout)["source"] == "the ledger"


def test_cli_sarif_without_effects_has_no_results(run_cli: Any, dump: Path, tmp_path: Path) -> None:
    f = write(tmp_path, manifest("mail", "45 * * * *"))
    r = run_cli("diff", "-f", str(f), "--from-dump", str(dump), "--now", z(NOW), "-o", "sarif")
    assert r.exit_code == 0, r.stderr
    log = json.loads(r.stdout)
    assert log["runs"][0]["results"] == [] and {x["id"] for x in log["runs"][0]["tool"]["driver"]["rules"]} == {
        "CD001", "CD002", "CD003", "CD004"}


def test_explain_if_applied_takes_no_schedule_and_no_file(run_cli: Any, tmp_path: Path) -> None:
    f = write(tmp_path, manifest("mail", "45 * * * *"))
    for extra in (["-f", str(f)], ["@daily"]):
        r = run_cli("explain", "--if-applied", str(f), *extra)
        assert r.exit_code == 2 and "--if-applied FILE takes no -f and no SCHEDULE" in r.stderr, r.stderr
