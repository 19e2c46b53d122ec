"""The CronJobs whose ``cronctl status -o json`` documents are kept as golden files
(tests/golden/status/, compared by tests/unit/test_status_document.py, written by
tests/golden/status/regenerate.py): each scenario, and :func:`render`, which runs the command the
way a user types it, in this process, over the fake of our Cluster boundary.

This module imports no cronctl code at its top: the generator runs it against whichever
cronctl is importable (the code of an older commit, to make the goldens from it).

Each scenario is rendered three ways (:data:`VIEWS`): ``status cj -n ns -o json``, the
namespace's overview ``status -n ns -o json`` and ``status -A -o json``. The CLI's
``cronctl.kube.connect`` hands it the :class:`~fake_cluster.FakeCluster` of the scenario, its
clock reads :data:`NOW` and this host is called :data:`HOST` (a run record's holder on it whose
process is gone is stale); $CRONCTL_LEDGER is unset for the run.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from unittest import mock

from builders import T, cronjob, job, job_already_active, scheduled, slotname, successful_create, z
from fake_cluster import FakeCluster

Obj = dict[str, Any]
NOW = T(12, 0)  # FakeClock's 2026-12-02T12:00Z
HOST = "oncall-laptop"
#: a pid above Linux's PID_MAX_LIMIT (2**22): never a live process
GONE_PID = 4194999

VIEWS: dict[str, list[str]] = {
    "status": ["status", "cj", "-n", "ns", "-o", "json"],
    "overview": ["status", "-n", "ns", "-o", "json"],
    "overview-all": ["status", "-A", "-o", "json"],
}


@dataclass(frozen=True)
class Scenario:
    name: str
    what: str
    cronjob: Obj
    jobs: list[Obj] = field(default_factory=list)
    events: list[Obj] = field(default_factory=list)


def _cronctl_wrote(*annotations: str, suspend: bool = True, at: datetime = T(11, 5)) -> list[Obj]:
    """managedFields: cronctl's own write of these annotations (and spec.suspend): a confirmed record."""
    fields: Obj = {"f:metadata": {"f:annotations": {f"f:{k}": {} for k in annotations}}}
    if suspend:
        fields["f:spec"] = {"f:suspend": {}}
    return [{"manager": "cronctl", "operation": "Update", "time": z(at), "fieldsV1": fields}]


def _record(run_id: str = "r1", *, operator: str = "alice", reason: str = "re-run the 11:00 export",
            step: str = "waiting", started: datetime = T(11, 5), holder: str = "bastion-2/3141",
            original_suspend: bool = False, job_name: str = "cj-manual-r1") -> dict[str, str]:
    """A run record's annotations, as run-manual writes them (cronctl.model.RunRecord.to_annotations)."""
    return {"cronctl.dev/run-id": run_id, "cronctl.dev/original-suspend": str(original_suspend).lower(),
            "cronctl.dev/operator": operator, "cronctl.dev/reason": reason, "cronctl.dev/job-name": job_name,
            "cronctl.dev/step": step, "cronctl.dev/started": z(started), "cronctl.dev/holder": holder,
            "cronctl.dev/updated": z(started + timedelta(minutes=1)), "cronctl.dev/occurrence": z(T(11, 0)),
            "cronctl.dev/note": "run dir /var/tmp/cronctl/r1"}


def _past(run_id: str, operator: str, reason: str, held: tuple[datetime, datetime], last_step: str,
          forced: bool = False) -> Obj:
    """One entry of cronctl.dev/runs (cronctl.model.PastRun.as_dict)."""
    return {"run_id": run_id, "operator": operator, "reason": reason, "job_name": f"cj-manual-{run_id}",
            "occurrence": z(held[0].replace(minute=0)), "suspended_at": z(held[0]), "restored_at": z(held[1]),
            "last_step": last_step, "original_suspend": False, "restored_to": False, "forced": forced}


HOSTILE_OPERATOR = "mallory\x1b[2J\x1b]0;owned\x07\r password=Hunter-22x"
HOSTILE_REASON = "rotate creds\nDB password=Hunter-22x \u202eevil\x1b[31m red"


def scenarios() -> list[Scenario]:
    rec = _record()
    stale = _record("r7", step="created", holder=f"{HOST}/{GONE_PID}", job_name="cj-manual-r7")
    hostile = _record("r9", operator=HOSTILE_OPERATOR, reason=HOSTILE_REASON, job_name="cj-manual-r9")
    return [
        Scenario(
            "zoned-forbid", "a zoned Forbid CronJob with a done, a failed and a running Job, and a skipped slot",
            cronjob("*/10 * * * *", tz="Europe/Berlin", policy="Forbid", deadline=200, last=T(11, 50),
                    last_ok=T(11, 30, 21), active=[slotname(T(11, 50))], resource_version="7"),
            [scheduled(T(11, 30), took=20), scheduled(T(11, 40), took=95, outcome="Failed", why="BackoffLimitExceeded"),
             scheduled(T(11, 50), took=None)],
            [successful_create(slotname(T(11, 50)), T(11, 50, 1)), job_already_active(T(11, 20, 0))]),
        Scenario(
            "unzoned-no-policy", "no zone, no policy, no deadline: hourly, two done Jobs",
            cronjob("0 * * * *", last=T(11, 0), last_ok=T(11, 0, 31)),
            [scheduled(T(10, 0), took=30), scheduled(T(11, 0), took=30)]),
        Scenario(
            "held-by-run", "suspended by a confirmed cronctl run record; its manual Job runs",
            cronjob("*/15 * * * *", tz="UTC", policy="Forbid", suspend=True, last=T(11, 0),
                    annotations=rec, managed=_cronctl_wrote(*rec)),
            [scheduled(T(11, 0), took=40),
             job("cj-manual-r1", created=T(11, 6), operator="alice", occurrence=T(11, 0), manual=True)]),
        Scenario(
            "paused", "paused with cronctl pause, past its until",
            cronjob("30 2 * * *", tz="America/New_York", suspend=True, last=T(7, 30),
                    annotations={"cronctl.dev/paused-by": "bob", "cronctl.dev/paused-at": z(T(8, 0)),
                                 "cronctl.dev/pause-reason": "warehouse migration (CHG-1234)",
                                 "cronctl.dev/paused-until": z(T(11, 0))},
                    suspend_written=T(8, 0))),
        Scenario(
            "past-runs", "not held: three finished runs kept in cronctl.dev/runs",
            cronjob("*/30 * * * *", policy="Replace", last=T(11, 30),
                    annotations={"cronctl.dev/runs": json.dumps([
                        _past("r2", "alice", "backfill", (T(8, 1), T(8, 9)), "succeeded"),
                        _past("r3", "bob", "", (T(9, 1), T(9, 20)), "failed"),
                        _past("r4", "", "stuck", (T(10, 2), T(10, 40)), "interrupted", forced=True),
                    ])}),
            [scheduled(T(11, 0), took=60), scheduled(T(11, 30), took=70)]),
        Scenario(
            "stale-holder", "a run record at step created whose process on this host is gone (unconfirmed)",
            cronjob("*/5 * * * *", suspend=True, last=T(11, 0), annotations=stale),
            [scheduled(T(11, 0), took=10)]),
        Scenario(
            "pile-up", "Allow: 22 hung Jobs of a */1 schedule overlap (more than the document names)",
            cronjob("*/1 * * * *", policy="Allow", last=T(11, 59),
                    active=[slotname(T(11, 38) + timedelta(minutes=i)) for i in range(22)]),
            [scheduled(T(11, 38) + timedelta(minutes=i), took=None) for i in range(22)]),
        Scenario(
            "suspended-by-someone", "suspended with kubectl patch: no run record, no pause",
            cronjob("0 */2 * * *", tz="Asia/Tokyo", policy="Forbid", suspend=True, last=T(10, 0),
                    suspend_written=T(10, 30)),
            [scheduled(T(10, 0), took=300)]),
        Scenario(
            "cron-tz-prefix", "a CRON_TZ= prefix in the schedule, no spec.timeZone",
            cronjob("CRON_TZ=Asia/Kolkata 30 */2 * * *", policy="Forbid", last=T(10, 30)),
            [scheduled(T(8, 30), took=45), scheduled(T(10, 30), took=50, outcome="Failed")]),
        Scenario(
            "hostile-record", "a run record whose operator and reason hold escapes, a newline and a password",
            cronjob("*/20 * * * *", suspend=True, last=T(11, 0), annotations=hostile,
                    managed=_cronctl_wrote(*hostile)),
            [job("cj-manual-r9", created=T(11, 6), done=T(11, 8), operator=HOSTILE_OPERATOR, run_id="r9",
                 occurrence=T(11, 0), manual=True)]),
    ]


def by_name() -> dict[str, Scenario]:
    return {s.name: s for s in scenarios()}


class _Fixed:
    """The scenarios' clock: the wall reads :data:`NOW` always; waits and deadlines are the machine's."""

    def now(self) -> datetime:
        return NOW

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)


def environment() -> Any:
    """The run's Environment (cronctl.cli.env) with the scenarios' clock, for ``main(environment=)``;
    None for an older cronctl whose commands built their own clock (``_world`` patches that one)."""
    from cronctl.cli import env

    if not hasattr(env, "of"):  # an older cronctl: no Environment handed to the commands
        return None
    return env.Environment(clock=_Fixed())


@contextlib.contextmanager
def _world(sc: Scenario) -> Iterator[None]:
    """The CLI's world for one run: the scenario's fake cluster and this host's name. The fixed clock
    is the run's Environment's (:func:`environment`); an older cronctl's own SystemClock is patched."""
    from cronctl.procedure import base

    def connect(kubeconfig: str | None, context: str | None, namespace: str | None, **_: object) -> FakeCluster:
        return FakeCluster(sc.cronjob, sc.jobs, events=sc.events, listed=True)

    env = {k: v for k, v in os.environ.items() if k != "CRONCTL_LEDGER"}
    with contextlib.ExitStack() as stack:
        if hasattr(base, "SystemClock"):
            stack.enter_context(mock.patch.object(base, "SystemClock", _Fixed))
        stack.enter_context(mock.patch("cronctl.kube.connect", connect))
        stack.enter_context(mock.patch.object(socket, "gethostname", lambda: HOST))
        stack.enter_context(mock.patch.dict(os.environ, env, clear=True))
        yield


def render(sc: Scenario, view: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``cronctl`` with :data:`VIEWS` ``[view]`` over the scenario."""
    from cronctl.cli import main

    out, err = io.StringIO(), io.StringIO()
    with _world(sc):
        code = main(list(VIEWS[view]), stdout=out, stderr=err, environment=environment())
    return code, out.getvalue(), err.getvalue()


def golden_name(case: str, view: str) -> str:
    return f"{case}.{view}.json"
