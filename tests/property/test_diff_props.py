"""`cronctl diff` over random schedule, zone, deadline and suspend edits: its prediction is the
controller model's decision on the object after the edit (docs/SEMANTICS.md §4), at the sync
``updateCronJob`` leads to; and what it calls "now" is what that decision does to a slot already past.

Checked for every edit, each against the model or plain arithmetic, not against diff's own words:
* the Job diff says the controller creates is the one :func:`cronctl.schedule.decide` creates on the
  new object at that sync, named ``<name>-<unix minutes of the slot>``;
* an edit that leaves schedule and timeZone alone is synced at the apply; one that changes either is
  synced no later than the new schedule's first run after the apply (+100 ms), and never before it;
* the slot lies inside the deadline window of the sync, after lastScheduleTime, and is a run of the
  new schedule;
* diff says the apply acts now exactly when the model creates a Job for a slot already past that the
  unedited CronJob would not have created at the apply, or deletes a running Job.
"""

from __future__ import annotations

import copy
from datetime import datetime, timedelta, timezone
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from cronctl.change import assess, merged
from cronctl.schedule import decide, parse

UTC = timezone.utc
NOW = datetime(2026, 3, 29, 0, 40, 17, tzinfo=UTC)  # the night Europe's clocks go forward
SCHEDULES = ["0 * * * *", "*/5 * * * *", "15 10 * * *", "30 2 * * *", "0 9 * * 1-5", "*/7 3-5 * * *",
             "0 0 1 * *", "45 23 * * 6", "@daily", "@hourly", "10,40 * * * *", "0 */3 * * *"]
ZONES = [None, "UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe"]
DEADLINES = [None, 0, 30, 300, 3600, 86400]


def _cronjob(schedule: str, tz: str | None, deadline: int | None, suspend: bool, last: datetime | None,
             policy: str, active: list[str]) -> dict[str, Any]:
    spec: dict[str, Any] = {"schedule": schedule, "suspend": suspend, "concurrencyPolicy": policy,
                            "jobTemplate": {"spec": {}}}
    if tz is not None:
        spec["timeZone"] = tz
    if deadline is not None:
        spec["startingDeadlineSeconds"] = deadline
    status: dict[str, Any] = {}
    if last is not None:
        status["lastScheduleTime"] = last.strftime("%Y-%m-%dT%H:%M:%SZ")
    if active:
        status["active"] = [{"name": a} for a in active]
    managed = [{"manager": "kubectl", "operation": "Apply",
                "fieldsV1": {"f:spec": {f"f:{k}": {} for k in spec}}}]
    return {"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": {"name": "cj", "namespace": "ns", "uid": "u", "creationTimestamp": "2026-01-01T00:00:00Z",
                         "managedFields": managed},
            "spec": spec, "status": status}


side = st.fixed_dictionaries({
    "schedule": st.sampled_from(SCHEDULES), "tz": st.sampled_from(ZONES), "deadline": st.sampled_from(DEADLINES),
    "suspend": st.booleans(), "policy": st.sampled_from(["Allow", "Forbid", "Replace"]),
})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(before=side, after=side, last_ago=st.one_of(st.none(), st.integers(0, 9 * 86400)),
       active=st.booleans())
@example(  # a slot due anyway (the controller is about to start it): the edit does not cause it
    before={"schedule": "*/5 * * * *", "tz": None, "deadline": None, "suspend": False, "policy": "Allow"},
    after={"schedule": "*/5 * * * *", "tz": None, "deadline": None, "suspend": False, "policy": "Forbid"},
    last_ago=1200, active=False)
def test_diff_predicts_the_model_decision_after_the_edit(before: dict[str, Any], after: dict[str, Any],
                                                         last_ago: int | None, active: bool) -> None:
    last = None if last_ago is None else (NOW - timedelta(seconds=last_ago)).replace(microsecond=0)
    running = ["cj-running"] if active else []
    live = _cronjob(before["schedule"], before["tz"], before["deadline"], before["suspend"], last, before["policy"],
                    running)
    want = copy.deepcopy(_cronjob(after["schedule"], after["tz"], after["deadline"], after["suspend"], None,
                                  after["policy"], []))
    del want["status"]
    new = merged(live, want, manager="kubectl")
    c = assess(live, new, NOW)
    if c.unchanged:
        assert not c.acts_now and c.decision is None
        return
    moved = before["schedule"] != after["schedule"] or before["tz"] != after["tz"]
    sched = parse(after["schedule"], after["tz"])
    first = sched.next_after(NOW)
    if not moved:
        assert c.sync_at == NOW
    elif c.sync_at is not None:
        assert c.sync_at >= NOW
        if first is not None:
            assert c.sync_at <= first + timedelta(milliseconds=100)
    if c.sync_at is None:
        assert c.job_name is None and not c.acts_now
        return
    created = datetime(2026, 1, 1, tzinfo=UTC)
    model = decide(after["schedule"], time_zone=after["tz"], name="cj", created=created, last_schedule=last,
                   starting_deadline=after["deadline"], now=c.sync_at, suspended=after["suspend"],
                   concurrency_policy=after["policy"], active=running)
    made = model.job_name if model.decision == "create" else None
    assert c.job_name == made
    if made is not None:
        slot = model.most_recent
        assert slot is not None and c.slot == slot
        assert made == f"cj-{int(slot.timestamp()) // 60}"
        assert slot <= c.sync_at and (last is None or slot > last)
        if after["deadline"] is not None:
            assert slot > c.sync_at - timedelta(seconds=after["deadline"])
        assert sched.next_after(slot - timedelta(seconds=1)) == slot  # a run of the new schedule
        assert c.replaces == (tuple(running) if after["policy"] == "Replace" else ())
    unedited = decide(before["schedule"], time_zone=before["tz"], name="cj", created=created, last_schedule=last,
                      starting_deadline=before["deadline"], now=NOW, suspended=before["suspend"],
                      concurrency_policy=before["policy"], active=running)
    due_anyway = unedited.decision == "create" and unedited.job_name == made
    past = made is not None and c.slot is not None and c.slot <= NOW and not due_anyway
    assert c.acts_now == (past or bool(c.replaces))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(side=side, last_ago=st.one_of(st.none(), st.integers(0, 9 * 86400)), active=st.booleans(),
       give_up=st.booleans())
def test_resume_and_restore_say_what_diff_says(side: dict[str, Any], last_ago: int | None, active: bool,
                                               give_up: bool) -> None:
    # issue 38, item 4: the plan of resume/restore (procedure.predict.predict) and the rule of diff
    # (change.assess, through predict.suspend_change) name the same Job for the same slot, and the
    # same runs never made up; --catch-up none (lastScheduleTime moved to the slot first) starts nothing
    from cronctl.procedure.predict import predict, suspend_change

    last = None if last_ago is None else (NOW - timedelta(seconds=last_ago)).replace(microsecond=0)
    live = _cronjob(side["schedule"], side["tz"], side["deadline"], True, last, side["policy"],
                    ["cj-running"] if active else [])
    pred = predict(live, NOW, suspended=False)
    if give_up and pred.catch_up_for is not None:
        chg = suspend_change(live, NOW, suspended=False, last_schedule=pred.catch_up_for)
        assert chg.job_name is None and not chg.acts_now
        return
    chg = suspend_change(live, NOW, suspended=False)
    assert [c.field for c in chg.changes] == ["suspend"]
    assert chg.job_name == (pred.job_name if pred.decision == "create" else None), (pred, chg.effects)
    assert chg.slot == (pred.catch_up_for if pred.decision == "create" else None)
    if pred.decision == "create":
        assert chg.decision is not None and list(chg.decision.never_made_up) == list(pred.never_times)
        assert chg.acts_now == (pred.catch_up_for is not None and pred.catch_up_for <= NOW)
    stay = suspend_change(live, NOW, suspended=True)
    assert stay.job_name is None and not stay.acts_now
