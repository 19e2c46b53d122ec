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

import copy
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from cronctl import model
from cronctl.cluster import WatchExpired
from cronctl.errors import ApiError, Conflict, Refused
from cronctl.procedure.base import QuietReporter
from cronctl.procedure.run_manual import RunOptions, run_manual
from cronctl.procedure.wait import WaitTimeout, ride_out, wait_for_jobs

UTC = timezone.utc
Obj = dict[str, Any]


class FakeClock:
    def __init__(self) -> None:
        self.t = 1000.0
        self.wall = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
        self.sleeps: list[float] = []

    def now(self) -> datetime:
        return self.wall + timedelta(seconds=self.t - 1000.0)

    def monotonic(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.t += seconds


def job(name: str, rv: str, outcome: str | None = None) -> Obj:
    conds = []
    if outcome:
        conds = [{"type": "SuccessCriteriaMet" if outcome == "Complete" else "FailureTarget", "status": "True"},
                 {"type": outcome, "status": "True"}]
    return {"metadata": {"name": name, "resourceVersion": rv}, "status": {"conditions": conds}}


class FakeCluster:
    """Scripted Cluster: each list/watch call pops the next scripted answer; anything else fails."""

    namespace = "ns"

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.request_count = 0
        self.lists: list[tuple[list[Obj], str]] = []
        self.watches: list[list[Any]] = []     # each: events (type, obj) or an exception to raise
        self.watch_calls: list[dict[str, Any]] = []
        self.cronjob: Obj | None = None
        self.patch_faults: list[Exception] = []
        self.patches: list[Obj] = []
        self.created: list[Obj] = []
        self.events: list[Obj] = []

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"FakeCluster does not implement {name!r}: use the real control plane")

    def list_jobs(self, *, label_selector: str | None = None, field_selector: str | None = None
                  ) -> tuple[list[Obj], str]:
        self.request_count += 1
        assert self.lists, "unexpected list_jobs"
        return self.lists.pop(0)

    def watch_jobs(self, *, resource_version: str, field_selector: str | None = None,
                   label_selector: str | None = None, timeout_seconds: int = 60) -> Iterator[tuple[str, Obj]]:
        self.request_count += 1
        self.watch_calls.append({"rv": resource_version, "timeout": timeout_seconds, "fs": field_selector})
        assert self.watches, "unexpected watch_jobs"
        script = self.watches.pop(0)

        def gen() -> Iterator[tuple[str, Obj]]:
            for item in script:
                if isinstance(item, Exception):
                    raise item
                yield item
            # the server closed the watch after timeout_seconds (or the connection dropped)
            self.clock.t += timeout_seconds if not script else 0

        return gen()

    # -- for run_manual's suspend race ----------------------------------------------------------
    def server_url(self) -> str:
        return "https://fake"

    def get_cronjob(self, name: str) -> Obj:
        self.request_count += 1
        assert self.cronjob is not None
        return copy.deepcopy(self.cronjob)

    def can_i(self, verb: str, resource: str, **kw: Any) -> tuple[bool, str]:
        return True, ""

    def get_job(self, name: str) -> Obj | None:
        return None

    def whoami(self) -> str:
        return "alice"

    def create_event(self, body: Obj) -> Obj:
        self.request_count += 1
        self.events.append(body)
        return body

    def patch_cronjob(self, name: str, patch: Obj, *, resource_version: str) -> Obj:
        self.request_count += 1
        if self.patch_faults:
            raise self.patch_faults.pop(0)
        assert self.cronjob is not None
        assert resource_version == self.cronjob["metadata"]["resourceVersion"], "unguarded patch"
        self.patches.append(patch)
        ann = self.cronjob["metadata"].setdefault("annotations", {})
        for k, v in ((patch.get("metadata") or {}).get("annotations") or {}).items():
            if v is None:
                ann.pop(k, None)
            else:
                ann[k] = v
        if "spec" in patch:
            self.cronjob["spec"].update(patch["spec"])
        self.cronjob["metadata"]["resourceVersion"] = str(int(resource_version) + 1)
        return copy.deepcopy(self.cronjob)


def test_the_fake_fails_loudly_on_any_verb_it_does_not_script() -> None:
    c = FakeCluster(FakeClock())
    with pytest.raises(AssertionError, match="does not implement 'list_pods'"):
        c.list_pods()
    with pytest.raises(AssertionError, match="unexpected list_jobs"):
        c.list_jobs()


def test_a_watch_dropped_mid_way_is_resumed_from_the_last_resource_version_seen() -> None:
    clock = FakeClock()
    c = FakeCluster(clock)
    c.lists = [([job("j", "10")], "10")]
    c.watches = [[("MODIFIED", job("j", "11"))],                       # drops after one event
                 [("BOOKMARK", {"metadata": {"resourceVersion": "15"}}), ("MODIFIED", job("j", "16", "Complete"))]]
    state = wait_for_jobs(c, {"j"}, deadline=clock.t + 3600, clock=clock)
    assert model.job_outcome(state["j"] or {}) == "Complete"
    assert [w["rv"] for w in c.watch_calls] == ["10", "11"]
    assert c.watch_calls[0]["fs"] == "metadata.name=j"


def test_a_410_gone_on_reconnect_makes_it_read_again_and_see_the_finished_job() -> None:
    clock = FakeClock()
    c = FakeCluster(clock)
    c.lists = [([job("j", "10")], "10"), ([job("j", "99", "Failed")], "99")]
    c.watches = [[WatchExpired("too old", status=410)]]
    stats: dict[str, int] = {}
    state = wait_for_jobs(c, {"j"}, deadline=clock.t + 3600, clock=clock, stats=stats)
    assert model.job_outcome(state["j"] or {}) == "Failed"
    assert stats["relists"] == 1 and c.lists == [] and c.watches == []


def test_an_unreachable_server_during_reconnect_is_retried_until_it_answers() -> None:
    clock = FakeClock()
    c = FakeCluster(clock)
    c.lists = [([job("j", "10")], "10")]
    c.watches = [[ApiError("cannot reach the API server at https://fake: connection refused", reason="Unreachable")],
                 [("MODIFIED", job("j", "12", "Complete"))]]
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
    c = FakeCluster(clock)
    c.lists = [([job("j", "10")], "10")]
    c.watches = [[err], [("MODIFIED", job("j", "12", "Complete"))]]
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
    c = FakeCluster(clock)
    c.lists = [([job("j", "10")], "10")]
    real_list = c.list_jobs
    calls = _answers(_refused(), None)

    def list_once_refused(**kw: Any) -> tuple[list[Obj], str]:
        calls()  # the first call raises: the API server restarting as the wait begins
        return real_list(**kw)

    c.list_jobs = list_once_refused  # type: ignore[method-assign]
    c.watches = [[("MODIFIED", job("j", "11", "Complete"))]]
    stats: dict[str, int] = {}
    state = wait_for_jobs(c, {"j"}, deadline=clock.t + 3600, clock=clock, stats=stats)
    assert model.is_finished(state["j"] or {}) and stats["reconnect_errors"] == 1 and clock.sleeps == [2.0]


def test_any_other_api_error_during_the_wait_is_not_swallowed() -> None:
    clock = FakeClock()
    c = FakeCluster(clock)
    c.lists = [([job("j", "10")], "10")]
    c.watches = [[ApiError("HTTP 500", status=500, reason="InternalError")]]
    with pytest.raises(ApiError, match="500"):
        wait_for_jobs(c, {"j"}, deadline=clock.t + 3600, clock=clock)


def test_one_deadline_bounds_the_whole_wait_across_reconnects() -> None:
    clock = FakeClock()
    c = FakeCluster(clock)
    c.lists = [([job("j", "10")], "10")]
    c.watches = [[], [], []]  # every watch ends with nothing after its timeout
    with pytest.raises(WaitTimeout) as e:
        wait_for_jobs(c, {"j"}, deadline=clock.t + 100, clock=clock)
    assert e.value.state["j"] is not None
    assert sum(w["timeout"] for w in c.watch_calls) <= 101
    assert clock.t >= 1100


def test_a_job_deleted_while_waiting_ends_the_wait_as_gone() -> None:
    clock = FakeClock()
    c = FakeCluster(clock)
    c.lists = [([job("j", "10")], "10")]
    c.watches = [[("DELETED", job("j", "11"))]]
    assert wait_for_jobs(c, {"j"}, deadline=clock.t + 60, clock=clock) == {"j": None}


def _cronjob(annotations: dict[str, str] | None = None) -> Obj:
    return {"metadata": {"name": "cj", "namespace": "ns", "uid": "u1", "resourceVersion": "5", "generation": 1,
                         "creationTimestamp": "2026-12-01T00:00:00Z", "annotations": dict(annotations or {})},
            "spec": {"schedule": "0 0 1 1 *", "suspend": False,
                     "jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}}}},
            "status": {}}


def test_a_competing_status_update_between_read_and_patch_is_retried_with_a_fresh_read(tmp_path: Any) -> None:
    clock = FakeClock()
    c = FakeCluster(clock)
    c.cronjob = _cronjob()
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
    c = FakeCluster(clock)
    c.cronjob = _cronjob()
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
