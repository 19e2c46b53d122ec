"""The hold guard names every Job beside the run, with its cause (cronctl/procedure/guard.py), and
history puts the guard's word on the slot's row. The same on the real control plane:
tests/cluster/test_hold_beside.py."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from builders import cronjob, event, job, slotname
from cronctl import model
from cronctl.errors import ExitCode
from cronctl.history import Options, slot_history
from cronctl.procedure.base import Audit, QuietReporter
from cronctl.procedure.guard import HoldGuard
from fake_cluster import FakeClock, FakeCluster

UTC = timezone.utc
SUSPEND = datetime(2026, 12, 2, 12, 0, 30, tzinfo=UTC)
SLOT = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


def _guard(jobs: list[Any], reverts: list[dict[str, Any]] | None = None,
           before: frozenset[str] = frozenset()) -> tuple[HoldGuard, FakeCluster, QuietReporter]:
    cj = cronjob("*/1 * * * *", suspend=True)
    c = FakeCluster(cj, jobs, clock=FakeClock())
    r = QuietReporter()
    g = HoldGuard(c, "cj", "run-1", FakeClock(), r, Audit(c, r, FakeClock()), since=SUSPEND, before=before)
    g.reverts.extend(reverts or [])
    g._look_for_duplicates(cj)
    return g, c, r


def _made_by(j: Any, manager: str, at: datetime) -> Any:
    j["metadata"]["managedFields"] = [
        {"manager": "kube-controller-manager", "operation": "Update", "subresource": "status",
         "time": at.strftime("%Y-%m-%dT%H:%M:%SZ")},
        {"manager": manager, "operation": "Update", "time": at.strftime("%Y-%m-%dT%H:%M:%SZ")}]
    return j


def test_a_controller_job_for_a_slot_before_the_suspend_made_after_it_is_a_stale_cache_duplicate() -> None:
    made = SUSPEND + timedelta(seconds=3)
    j = _made_by(job(slotname(SLOT), slot=SLOT, created=made), "kube-controller-manager", made)
    g, c, r = _guard([j])
    assert [b["job"] for b in g.beside] == [slotname(SLOT)]
    b = g.beside[0]
    assert (b["cause"], b["after_suspend_seconds"], b["by"]) == ("stale-cache", 3.0, "kube-controller-manager")
    assert b["slot"] == "2026-12-02T12:00:00Z" and b["suspended"] == "2026-12-02T12:00:30Z"
    assert any("DUPLICATE: Job" in line and "had not seen the suspend yet" in line for line in r.lines), r.lines
    assert [e["reason"] for e in c.events_created] == ["CronctlDuplicate"]
    assert g.account()["duplicate_risk"] == [slotname(SLOT)]


def test_a_job_made_before_the_suspend_or_by_this_run_is_not_named() -> None:
    before = job(slotname(SLOT), slot=SLOT, created=SUSPEND - timedelta(seconds=5))
    ours = job("cj-manual", operator="alice", run_id="run-1", created=SUSPEND + timedelta(seconds=20))
    g, c, _ = _guard([before, ours])
    assert g.beside == [] and c.events_created == []


def test_a_job_made_in_the_suspends_second_is_named_unless_the_plan_listed_it() -> None:
    # CI, stop 43: a child Job made and started before cronctl ran fell in the suspend's second
    # (creationTimestamp has 1 s precision) and was named a duplicate; the plan's list (read before
    # the suspend) proves it was there before
    made = SUSPEND.replace(microsecond=0)
    listed = _made_by(job("cj-fix", manual=True, created=made, uid="uid-fix"), "kubectl-create", made)
    unlisted = _made_by(job("cj-other", manual=True, created=made, uid="uid-other"), "kubectl-create", made)
    g, _, _ = _guard([listed, unlisted], before=frozenset({"uid-fix"}))
    assert [b["job"] for b in g.beside] == ["cj-other"]


def test_a_job_by_kubectl_create_job_from_is_another_client() -> None:
    made = SUSPEND + timedelta(seconds=40)
    j = _made_by(job("cj-by-hand", manual=True, created=made), "kubectl-create", made)
    g, _, _ = _guard([j])
    assert (g.beside[0]["cause"], g.beside[0]["by"]) == ("another-client", "kubectl-create")
    assert "not made by the CronJob controller" in g.words()


def test_a_controller_job_after_a_seen_revert_names_who_reverted_the_hold() -> None:
    later = SLOT + timedelta(minutes=1)
    j = job(slotname(later), slot=later, created=later + timedelta(seconds=1))
    revert = {"by": "argocd-controller", "at": "2026-12-02T12:00:50Z", "seen": "2026-12-02T12:00:51Z"}
    g, _, _ = _guard([j], [revert])
    assert (g.beside[0]["cause"], g.beside[0]["revert_by"]) == ("revert", "argocd-controller")
    assert "the hold had been reverted by argocd-controller" in g.words()


def test_a_controller_job_for_a_later_slot_without_a_seen_revert_says_so() -> None:
    later = SLOT + timedelta(minutes=1)
    g, _, _ = _guard([job(slotname(later), slot=later, created=later)])
    assert g.beside[0]["cause"] == "not-seen-revert"


def test_a_job_is_named_once_however_often_the_guard_looks() -> None:
    made = SUSPEND + timedelta(seconds=3)
    g, c, _ = _guard([job(slotname(SLOT), slot=SLOT, created=made)])
    g._look_for_duplicates(c.cronjob)
    assert len(g.beside) == 1 and len(c.events_created) == 1


@pytest.mark.parametrize(("code", "beside", "want"), [
    (ExitCode.OK, True, ExitCode.DUPLICATE), (ExitCode.OK, False, ExitCode.OK),
    (ExitCode.JOB_FAILED, True, ExitCode.JOB_FAILED), (ExitCode.TIMEOUT, True, ExitCode.TIMEOUT)])
def test_only_a_run_that_would_end_well_exits_duplicate(code: ExitCode, beside: bool, want: ExitCode) -> None:
    from cronctl.procedure.steps.hold_guard import with_duplicates

    class Ctx:
        guard: Any = None

    made = SUSPEND + timedelta(seconds=3)
    ctx = Ctx()
    ctx.guard, _, _ = _guard([job(slotname(SLOT), slot=SLOT, created=made)] if beside else [])
    assert with_duplicates(ctx, code) == want  # type: ignore[arg-type]


def test_history_names_the_job_the_guard_named_on_its_slots_row() -> None:
    made = SUSPEND + timedelta(seconds=3)
    cj = cronjob("*/1 * * * *", created=SLOT - timedelta(minutes=5))
    j = job(slotname(SLOT), slot=SLOT, created=made, done=made + timedelta(seconds=10))
    words = f"Job {slotname(SLOT)} for slot 2026-12-02T12:00:00Z created 3s after the suspend: the controller " \
            "had not seen the suspend yet (its cache lagged the write)"
    ev = event("CronctlDuplicate", f"cronctl run run-1: {words}", made)
    h = slot_history(cj, [j], [ev], Options(now=SLOT + timedelta(minutes=2), since=SLOT - timedelta(minutes=3)))
    row = next(r for r in h["slots"] if r["slot"] == "2026-12-02T12:00:00Z")
    assert "DUPLICATE: made during the hold of cronctl run run-1" in row["reason"], row
    assert "had not seen the suspend yet" in row["reason"]
    others = [r for r in h["slots"] if r["slot"] != "2026-12-02T12:00:00Z"]
    assert all("DUPLICATE" not in r["reason"] for r in others)
    assert model.creator(j) is None  # (a Job without managedFields: nobody named)
