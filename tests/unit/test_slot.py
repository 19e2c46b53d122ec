"""Which slot ``run-manual --occurrence T|latest`` stands for (cronctl.procedure.slot, pure)."""

from __future__ import annotations

import functools
from datetime import datetime, timedelta, timezone

import pytest

from builders import cronjob, job
from cronctl.errors import BadInput, ExitCode
from cronctl.procedure.slot import last_schedule_plan, resolve, slot_at_or_before, standing_for
from cronctl.schedule import parse

UTC = timezone.utc


# this file's CronJob: sync, uid u-1, created at the start of 2026
cj = functools.partial(cronjob, name="sync", uid="u-1", created="2026-01-01T00:00:00Z")


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


NOW = at("2026-12-02T10:07:30Z")


def test_a_slot_gets_the_controllers_name_and_annotation() -> None:
    s = resolve(cj("*/5 * * * *"), at("2026-12-02T10:05:00Z"), latest=False, now=NOW)
    assert s.at == at("2026-12-02T10:05:00Z")
    assert s.job_name == f"sync-{int(s.at.timestamp()) // 60}" == "sync-29936765"
    assert s.scheduled_timestamp == "2026-12-02T10:05:00Z"


def test_the_annotation_is_in_the_cronjobs_zone_as_the_controller_writes_it() -> None:
    # 30 6 * * 1-5 in Moscow (UTC+3): Wednesday 2026-12-02 06:30 local = 03:30Z
    s = resolve(cj("30 6 * * 1-5", tz="Europe/Moscow"), at("2026-12-02T06:30:00+03:00"), latest=False, now=NOW)
    assert s.at == at("2026-12-02T03:30:00Z")
    assert s.scheduled_timestamp == "2026-12-02T06:30:00+03:00"
    assert s.shown == "2026-12-02T06:30:00+03:00 (2026-12-02T03:30:00Z)"


def test_an_instant_that_is_not_a_slot_is_refused_naming_the_nearest_slots() -> None:
    with pytest.raises(BadInput) as e:
        resolve(cj("*/5 * * * *"), at("2026-12-02T10:03:00Z"), latest=False, now=NOW)
    assert e.value.exit_code == ExitCode.BAD_INPUT
    msg = e.value.message
    assert "\n" not in msg and "not a slot" in msg
    assert "2026-12-02T10:00:00Z before and 2026-12-02T10:05:00Z after" in msg


def test_a_sub_second_instant_is_not_a_slot() -> None:
    with pytest.raises(BadInput, match="not a slot"):
        resolve(cj("*/5 * * * *"), at("2026-12-02T10:05:00.5Z"), latest=False, now=NOW)


def test_a_slot_in_the_future_is_refused() -> None:
    with pytest.raises(BadInput) as e:
        resolve(cj("*/5 * * * *"), at("2026-12-02T10:10:00Z"), latest=False, now=NOW)
    assert "in the future" in e.value.message and "latest slot so far is 2026-12-02T10:05:00Z" in e.value.message


def test_latest_is_the_latest_slot_at_or_before_now() -> None:
    assert resolve(cj("*/5 * * * *"), None, latest=True, now=NOW).at == at("2026-12-02T10:05:00Z")
    s = resolve(cj("*/5 * * * *"), None, latest=True, now=at("2026-12-02T10:10:00Z"))
    assert s.at == at("2026-12-02T10:10:00Z") and s.latest  # at now: inclusive
    # a sparse schedule: the first of January, months back
    # a slot at creationTimestamp is not the CronJob's (the controller's first is after it): created before
    assert resolve(cj("0 0 1 1 *", created="2025-12-31T23:00:00Z"), None, latest=True,
                   now=NOW).at == at("2026-01-01T00:00:00Z")
    # weekdays only: on a Sunday the latest is Friday's
    s = resolve(cj("30 6 * * 1-5", tz="Europe/Moscow"), None, latest=True, now=at("2026-12-06T12:00:00Z"))
    assert s.at == at("2026-12-04T03:30:00Z")


def test_dst_spring_forward_has_no_slot_in_the_gap() -> None:
    # Europe/Berlin 2026-03-29: 02:00 CET -> 03:00 CEST; 02:30 does not exist that day
    berlin = cj("30 2 * * *", tz="Europe/Berlin")
    now = at("2026-04-01T00:00:00Z")
    for gap in ("2026-03-29T02:30:00+01:00", "2026-03-29T02:30:00+02:00", "2026-03-29T03:30:00+02:00"):
        with pytest.raises(BadInput) as e:
            resolve(berlin, at(gap), latest=False, now=now)
        assert ("the nearest slots are 2026-03-28T02:30:00+01:00 (2026-03-28T01:30:00Z) before and "
                "2026-03-30T02:30:00+02:00 (2026-03-30T00:30:00Z) after") in e.value.message, gap
    # the days around it are slots, with their own offsets
    assert resolve(berlin, at("2026-03-28T02:30:00+01:00"), latest=False, now=now).scheduled_timestamp == \
        "2026-03-28T02:30:00+01:00"
    assert resolve(berlin, at("2026-03-30T02:30:00+02:00"), latest=False, now=now).scheduled_timestamp == \
        "2026-03-30T02:30:00+02:00"
    # latest on the evening of the gap day is the day before
    assert resolve(berlin, None, latest=True, now=at("2026-03-29T20:00:00Z")).at == at("2026-03-28T01:30:00Z")


def test_a_constant_delay_schedule_has_no_slots() -> None:
    with pytest.raises(BadInput, match="without fixed slots"):
        resolve(cj("@every 5m"), None, latest=True, now=NOW)


def test_a_bad_schedule_or_zone_is_bad_input() -> None:
    with pytest.raises(BadInput):
        resolve(cj("61 * * * *"), None, latest=True, now=NOW)
    with pytest.raises(BadInput):
        resolve(cj("* * * * *", tz="Mars/Olympus"), None, latest=True, now=NOW)


def test_slot_at_or_before_looks_back_years() -> None:
    sched = parse("0 0 29 2 *")  # leap days only
    assert slot_at_or_before(sched, NOW) == at("2024-02-29T00:00:00Z")
    assert slot_at_or_before(parse("* * * * *"), at("2026-12-02T10:07:00Z")) == at("2026-12-02T10:07:00Z")


def test_a_job_stands_for_the_slot_by_name_or_by_an_owned_jobs_annotation() -> None:
    c = cj("*/5 * * * *")
    t = at("2026-12-02T10:05:00Z")
    name = "sync-29936765"
    assert standing_for(c, [job(name, cj_uid=None)], t, name) != []
    sched = job("sync-other", owner=c,
                annotations={"batch.kubernetes.io/cronjob-scheduled-timestamp": "2026-12-02T13:05:00+03:00"})
    assert standing_for(c, [sched], t, name) == [sched]
    manual = job("sync-manual", owner=c, annotations={"cronctl.dev/occurrence": "2026-12-02T10:05:00Z"})
    assert standing_for(c, [manual], t, name) == [manual]
    # not owned by this CronJob, or another instant: not standing for it
    stranger = job("x", cj="sync", cj_uid="u-2", annotations={"cronctl.dev/occurrence": "2026-12-02T10:05:00Z"})
    other = job("sync-manual", owner=c, annotations={"cronctl.dev/occurrence": "2026-12-02T10:00:00Z"})
    assert standing_for(c, [stranger, other], t, name) == []


def test_last_schedule_time_is_patched_only_forward_and_never_uncovers_a_slot() -> None:
    c = cj("*/5 * * * *", created="2026-12-02T09:00:00Z")
    s = resolve(c, at("2026-12-02T10:05:00Z"), latest=False, now=NOW)
    p = last_schedule_plan(c, s)
    assert p.patch and p.needed and p.current is None  # unset, created before T: the controller wants T
    p = last_schedule_plan(cj("*/5 * * * *", created="2026-12-02T09:00:00Z", last="2026-12-02T09:55:00Z"), s)
    assert p.patch and p.needed and p.current == at("2026-12-02T09:55:00Z")
    for later in ("2026-12-02T10:05:00Z", "2026-12-02T10:10:00Z"):
        p = last_schedule_plan(cj("*/5 * * * *", created="2026-12-02T09:00:00Z", last=later), s)
        assert not p.patch and "not earlier" in p.why
    # created just after T, no slot between: harmless (and the record says the slot ran)
    p = last_schedule_plan(cj("*/5 * * * *", created="2026-12-02T10:05:01Z"), s)
    assert p.patch and not p.needed
    # created after T and after the next slot: lastScheduleTime = T would make 10:10 due
    p = last_schedule_plan(cj("*/5 * * * *", created="2026-12-02T10:11:00Z"), s)
    assert not p.patch and "2026-12-02T10:10:00Z" in p.why


def test_latest_slot_names_are_unix_minutes_for_every_minute_of_an_hour() -> None:
    base = at("2026-12-02T10:00:00Z")
    for m in range(60):
        t = base + timedelta(minutes=m)
        s = resolve(cj("* * * * *"), None, latest=True, now=t + timedelta(seconds=59))
        assert s.at == t and s.job_name == f"sync-{int(t.timestamp()) // 60}"


@pytest.mark.parametrize("created", ["2026-12-02T10:05:00Z", "2026-12-02T10:06:10Z"])
def test_latest_is_never_a_slot_from_before_the_cronjob_existed(created: str) -> None:
    # issue 34 item 15: created at 10:06:10, '*/5' had its latest slot at 10:05, which was never its own
    # (the controller's first slot is the first after creationTimestamp; one at it is not either)
    with pytest.raises(BadInput) as e:
        resolve(cronjob(name="sync", created=created, schedule="*/5 * * * *"), None, latest=True, now=NOW)
    assert (f"was created at {created}, after its latest slot 2026-12-02T10:05:00Z: it has had no slot yet "
            "(the first is 2026-12-02T10:10:00Z)") in e.value.message
    s = resolve(cronjob(name="sync", created="2026-12-02T10:04:59Z", schedule="*/5 * * * *"), None, latest=True, now=NOW)
    assert s.at == at("2026-12-02T10:05:00Z")
