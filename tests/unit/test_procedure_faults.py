"""Procedure behaviour under faults a real API server cannot be made to produce at one exact step.

A FakeCluster of OUR protocol (cronctl.cluster.Cluster) is used ONLY for: a watch that drops at
a chosen event, a 410 Gone at a chosen reconnect, the API server becoming unreachable during a
reconnect, and a 409 from a competing write landing exactly between cronctl's read and its
patch. Everything else is tested on the real control plane (tests/cluster/); the same faults
at an unchosen moment (a restarted kube-apiserver, a real 410 after an etcd compaction, a server
that is down at the start or at the restore) are produced for real by scripts/cluster's drill
verbs in tests/cluster/test_faults.py. The fake fails loudly on any verb it does not script.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest

from builders import T, cronjob, job
from cronctl import model
from cronctl.cluster import WatchExpired
from cronctl.errors import ApiError, Conflict, Refused
from cronctl.procedure.base import QuietReporter
from cronctl.procedure.run_manual import RunOptions, run_manual
from cronctl.procedure.wait import WaitTimeout, ride_out, wait_for_jobs
from fake_cluster import FakeClock, FakeCluster

UTC = timezone.utc
Obj = dict[str, Any]
ENDED: dict[str, Any] = dict(done=T(12, 1), interim=True)  # a watched Job that finished at 12:01
YEARLY: dict[str, Any] = dict(schedule="0 0 1 1 *", uid="u1", resource_version="5", generation=1,
                              created="2026-12-01T00:00:00Z", annotations={}, containers=[{"name": "c", "image": "i"}])


def test_the_fake_fails_loudly_on_any_verb_it_does_not_script() -> None:
    c = FakeCluster(clock=FakeClock(), lists=[])
    with pytest.raises(AssertionError, match="does not implement 'create_job'"):
        c.create_job({})
    with pytest.raises(AssertionError, match="unexpected list_jobs"):
        c.list_jobs()


def test_a_watch_dropped_mid_way_is_resumed_from_the_last_resource_version_seen() -> None:
    clock = FakeClock()
    c = FakeCluster(clock=clock, lists=[([job("j", resource_version="10")], "10")])
    c.watches = [[("MODIFIED", job("j", resource_version="11"))],                       # drops after one event
                 [("BOOKMARK", {"metadata": {"resourceVersion": "15"}}),
                  ("MODIFIED", job("j", resource_version="16", outcome="Complete", **ENDED))]]
    state = wait_for_jobs(c, {"j"}, deadline=clock.t + 3600, clock=clock)
    assert model.job_outcome(state["j"] or {}) == "Complete"
    assert [w["rv"] for w in c.watch_calls] == ["10", "11"]
    assert c.watch_calls[0]["fs"] == "metadata.name=j"


def test_a_410_gone_on_reconnect_makes_it_read_again_and_see_the_finished_job() -> None:
    clock = FakeClock()
    c = FakeCluster(clock=clock, lists=[([job("j", resource_version="10")], "10"),
                                        ([job("j", resource_version="99", outcome="Failed", **ENDED)], "99")])
    c.watches = [[WatchExpired("too old", status=410)]]
    stats: dict[str, int] = {}
    state = wait_for_jobs(c, {"j"}, deadline=clock.t + 3600, clock=clock, stats=stats)
    assert model.job_outcome(state["j"] or {}) == "Failed"
    assert stats["relists"] == 1 and c.lists == [] and c.watches == []


def test_an_unreachable_server_during_reconnect_is_retried_until_it_answers() -> None:
    clock = FakeClock()
    c = FakeCluster(clock=clock, lists=[([job("j", resource_version="10")], "10")])
    c.watches = [[ApiError("cannot reach the API server at https://fake: connection refused", reason="Unreachable")],
                 [("MODIFIED", job("j", resource_version="12", outcome="Complete", **ENDED))]]
    stats: dict[str, int] = {}
    state = wait_for_jobs(c, {"j"}, deadline=clock.t + 3600, clock=clock, stats=stats)
    assert model.is_finished(state["j"] or {})
    assert stats["reconnect_errors"] == 1 and clock.sleeps == [2.0]


def _refused() -> ApiError:
    return ApiError("cannot reach the API server at https://fake: connection refused", reason="Unreachable")


def _answers(*script: Any) -> Any:
    """A call that raises or returns the scripted items in turn."""
    items = list(script)

    def call() -> Any:
        item = items.pop(0)
        if isinstance(item, Exception):
            raise item
        return item
    return call


def test_ride_out_tries_again_every_two_seconds_while_the_server_is_unreachable() -> None:
    clock = FakeClock()
    told: list[str] = []
    stats: dict[str, int] = {}
    got = ride_out(_answers(_refused(), _refused(), "ok"), deadline=clock.t + 60, clock=clock, stats=stats,
                   on_unreachable=lambda e: told.append(e.message))
    assert got == "ok" and clock.sleeps == [2.0, 2.0] and stats["reconnect_errors"] == 2
    assert told == [_refused().message] * 2


@pytest.mark.parametrize("status,reason", [(503, "ServiceUnavailable"), (429, "TooManyRequests")])
def test_ride_out_waits_through_a_shutting_down_or_throttling_server(status: int, reason: str) -> None:
    # a kube-apiserver in graceful shutdown answers 503 "apiserver is shutting down" before it closes
    clock = FakeClock()
    err = ApiError(f"HTTP {status} {reason}: apiserver is shutting down", status=status, reason=reason)
    assert ride_out(_answers(err, "ok"), deadline=clock.t + 60, clock=clock) == "ok"
    assert clock.sleeps == [2.0]
    c = FakeCluster(clock=clock, lists=[([job("j", resource_version="10")], "10")])
    c.watches = [[err], [("MODIFIED", job("j", resource_version="12", outcome="Complete", **ENDED))]]
    stats: dict[str, int] = {}
    assert model.is_finished(wait_for_jobs(c, {"j"}, deadline=clock.t + 3600, clock=clock, stats=stats)["j"] or {})
    assert stats["reconnect_errors"] == 1


def test_ride_out_gives_up_at_the_deadline_with_the_last_error() -> None:
    clock = FakeClock()
    with pytest.raises(ApiError, match="connection refused"):
        ride_out(_answers(*[_refused()] * 10), deadline=clock.t + 3, clock=clock)
    assert clock.sleeps == [2.0, 1.0] and clock.t == 1003.0


def test_ride_out_lets_any_other_error_through_at_once() -> None:
    clock = FakeClock()
    with pytest.raises(ApiError, match="500"):
        ride_out(_answers(ApiError("HTTP 500", status=500, reason="InternalError"), "ok"),
                 deadline=clock.t + 60, clock=clock)
    with pytest.raises(Conflict):
        ride_out(_answers(Conflict("modified"), "ok"), deadline=clock.t + 60, clock=clock)
    assert clock.sleeps == []


def test_an_unreachable_server_at_the_first_read_of_the_wait_is_ridden_out() -> None:
    clock = FakeClock()
    c = FakeCluster(clock=clock, lists=[([job("j", resource_version="10")], "10")])
    real_list = c.list_jobs
    calls = _answers(_refused(), None)

    def list_once_refused(**kw: Any) -> tuple[list[Obj], str]:
        calls()  # the first call raises: the API server restarting as the wait begins
        return real_list(**kw)

    c.list_jobs = list_once_refused  # type: ignore[method-assign]
    c.watches = [[("MODIFIED", job("j", resource_version="11", outcome="Complete", **ENDED))]]
    stats: dict[str, int] = {}
    state = wait_for_jobs(c, {"j"}, deadline=clock.t + 3600, clock=clock, stats=stats)
    assert model.is_finished(state["j"] or {}) and stats["reconnect_errors"] == 1 and clock.sleeps == [2.0]


def test_any_other_api_error_during_the_wait_is_not_swallowed() -> None:
    clock = FakeClock()
    c = FakeCluster(clock=clock, lists=[([job("j", resource_version="10")], "10")])
    c.watches = [[ApiError("HTTP 500", status=500, reason="InternalError")]]
    with pytest.raises(ApiError, match="500"):
        wait_for_jobs(c, {"j"}, deadline=clock.t + 3600, clock=clock)


def test_one_deadline_bounds_the_whole_wait_across_reconnects() -> None:
    clock = FakeClock()
    c = FakeCluster(clock=clock, lists=[([job("j", resource_version="10")], "10")])
    c.watches = [[], [], []]  # every watch ends with nothing after its timeout
    with pytest.raises(WaitTimeout) as e:
        wait_for_jobs(c, {"j"}, deadline=clock.t + 100, clock=clock)
    assert e.value.state["j"] is not None
    assert sum(w["timeout"] for w in c.watch_calls) <= 101
    assert clock.t >= 1100


def test_a_job_deleted_while_waiting_ends_the_wait_as_gone() -> None:
    clock = FakeClock()
    c = FakeCluster(clock=clock, lists=[([job("j", resource_version="10")], "10")])
    c.watches = [[("DELETED", job("j", resource_version="11"))]]
    assert wait_for_jobs(c, {"j"}, deadline=clock.t + 60, clock=clock) == {"j": None}


def test_a_competing_status_update_between_read_and_patch_is_retried_with_a_fresh_read(tmp_path: Any) -> None:
    clock = FakeClock()
    c = FakeCluster(clock=clock, lists=[])
    c.cronjob = cronjob(**YEARLY)
    c.lists = [([], "1")]  # plan
    c.patch_faults = [Conflict("the object has been modified")]
    c.cronjob["metadata"]["resourceVersion"] = "5"
    # stop right after the suspend: the verify step needs the real control plane
    opts = RunOptions(cronjob="cj", yes=True, settle=0, run_dir=str(tmp_path), after_step=_stop_after("suspended"))
    with pytest.raises(_Stop):
        run_manual(c, opts, clock, QuietReporter())
    [p] = c.patches
    assert p["spec"] == {"suspend": True}
    assert p["metadata"]["annotations"][model.ANN_ORIGINAL_SUSPEND] == "false"
    assert c.cronjob["spec"]["suspend"] is True


def test_a_lock_taken_between_read_and_patch_refuses_without_changing_anything(tmp_path: Any) -> None:
    clock = FakeClock()
    c = FakeCluster(clock=clock, lists=[])
    c.cronjob = cronjob(**YEARLY)
    c.lists = [([], "1")]

    class Race(Conflict):
        pass

    def take_lock() -> None:
        assert c.cronjob is not None
        c.cronjob["metadata"]["annotations"].update(model.RunRecord(
            run_id="other", original_suspend=False, operator="bob", reason="", job_name="cj-manual",
            step="suspended", started="2026-12-02T11:59:59Z").to_annotations())
        c.cronjob["spec"]["suspend"] = True
        c.cronjob["metadata"]["resourceVersion"] = "6"

    real_patch = c.patch_cronjob

    def patch_losing_the_race(name: str, patch: Obj, *, resource_version: str) -> Obj:
        if resource_version == "5":
            take_lock()
            raise Race("the object has been modified")
        return real_patch(name, patch, resource_version=resource_version)

    c.patch_cronjob = patch_losing_the_race  # type: ignore[method-assign]
    with pytest.raises(Refused, match="held by run other of bob"):
        run_manual(c, RunOptions(cronjob="cj", yes=True, run_dir=str(tmp_path)), clock, QuietReporter())
    assert c.patches == []
    assert c.cronjob["metadata"]["annotations"][model.ANN_RUN_ID] == "other"


class _Stop(Exception):
    pass


def _stop_after(step: str) -> Any:
    def hook(done: str) -> None:
        if done == step:
            raise _Stop(done)
    return hook
