"""Every Job made beside a hold is named, on the real control plane (docs/commands/run-manual.md,
"Jobs beside the run").

A CronJob controller whose cache has not seen the suspend yet creates the Job of a slot at or
before the suspend after cronctl has checked that nothing runs: the duplicate of seed 004, made
by the controller itself. It cannot be made to lag on demand, so the test does what such a
controller does, through the API: during the hold it creates a Job owned by the CronJob with the
controller's name and scheduled-timestamp annotation for the last slot before the suspend. The
same is done with a Job made like ``kubectl create job --from`` (another client). The run must
name each Job on the terminal, in its record and in an Event, say its cause, and exit with
``DUPLICATE`` (10); history names the Job as a duplicate made during the hold.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from cluster_support import (cronctl, create_cronjob, minute_floor, read_cronjob, run_record, sleep_until,
                             slot_job_name, start_cronctl, wait_for)

pytestmark = [pytest.mark.cluster, pytest.mark.compat]
UTC = timezone.utc
SCHEDULED_AT = "batch.kubernetes.io/cronjob-scheduled-timestamp"
DUPLICATE = 10  # ExitCode.DUPLICATE, docs/EXIT_CODES.md


def _utc(s: str) -> datetime:
    return datetime.fromisoformat(s.replace("Z", "+00:00")).astimezone(UTC)


def _forged_job(cj: dict[str, Any], name: str, *, slot: datetime | None) -> dict[str, Any]:
    """A Job owned by the CronJob, from its template, as the controller (``slot`` given: its name
    and scheduled-timestamp annotation) or ``kubectl create job --from`` (instantiate: manual) makes it."""
    tmpl = cj["spec"]["jobTemplate"]
    meta: dict[str, Any] = {"name": name, "labels": dict((tmpl.get("metadata") or {}).get("labels") or {}),
                            "annotations": dict((tmpl.get("metadata") or {}).get("annotations") or {}),
                            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob",
                                                 "name": cj["metadata"]["name"], "uid": cj["metadata"]["uid"],
                                                 "controller": True, "blockOwnerDeletion": True}]}
    if slot is not None:
        meta["annotations"][SCHEDULED_AT] = slot.strftime("%Y-%m-%dT%H:%M:%SZ")
    else:
        meta["annotations"]["cronjob.kubernetes.io/instantiate"] = "manual"
    spec = json.loads(json.dumps(tmpl["spec"]))
    # it ends (2 s on the pod simulator) long before the manual Job: the restore then goes ahead (a
    # Job beside it still running would rightly refuse the restore, exit 3, leaving it suspended)
    spec["template"]["metadata"]["annotations"]["sim.cronctl.dev/duration-seconds"] = "2"
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": spec}


@pytest.mark.parametrize("kind", ["stale-cache", "another-client"])
def test_a_job_made_beside_the_hold_is_named_with_its_cause_and_the_run_exits_duplicate(
        kind: str, kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path) -> None:
    # One slot T after the CronJob's creation that no Job stands for: hourly at the next minute, made
    # suspended with a 10 s starting deadline, un-suspended 15 s after T (the controller then drops
    # T: too late to start, no Job, no event). The next slot is an hour away: the real controller
    # makes no Job during the test, so every Job beside the run is the one this test makes.
    now = datetime.now(UTC)
    slot = minute_floor(now) + timedelta(minutes=1 if now.second < 50 else 2)
    create_cronjob(k8s, namespace, "orders-sync", schedule=f"{slot.minute} * * * *", tz="Etc/UTC", duration=25,
                   suspend=True, deadline=10)
    sleep_until(slot + timedelta(seconds=15))
    k8s.batch.patch_namespaced_cron_job("orders-sync", namespace, {"spec": {"suspend": False}})
    p = start_cronctl(["run-manual", "orders-sync", "-n", namespace, "--yes", "--settle", "2s", "--catch-up", "none",
                       "--timeout", "3m"], kubeconfig, run_dir=tmp_path)
    # the manual Job exists: the checks are over, so only the guard can see what comes now
    manual = wait_for("the manual Job", lambda: next(
        (j for j in k8s.batch.list_namespaced_job(namespace).items
         if (j.metadata.annotations or {}).get("cronctl.dev/run-id")), None), 60)
    cj = read_cronjob(k8s, namespace, "orders-sync")
    assert cj["spec"]["suspend"] is True
    if kind == "stale-cache":
        # T, the last slot before the suspend, as a controller with a stale cache makes its Job
        forged = _forged_job(cj, slot_job_name("orders-sync", slot), slot=slot)
    else:
        forged = _forged_job(cj, "orders-sync-by-hand", slot=None)
    k8s.batch.create_namespaced_job(namespace, forged)
    name = forged["metadata"]["name"]
    out, err = p.communicate(timeout=240)
    assert p.returncode == DUPLICATE, (p.returncode, err[-3000:])
    # named on the terminal, with its cause
    assert f"DUPLICATE: Job {name}" in err, err
    cause_words = ("had not seen the suspend yet" if kind == "stale-cache" else "not made by the CronJob controller")
    assert cause_words in err, err
    # in the record, with its creation time against the suspend's
    rec = run_record(tmp_path)
    beside = rec["hold_guard"]["beside"]
    assert [b["job"] for b in beside] == [name], beside
    assert beside[0]["cause"] == kind
    made = _utc(k8s.batch.read_namespaced_job(name, namespace).metadata.creation_timestamp.isoformat())
    assert _utc(beside[0]["created"]) == made
    assert beside[0]["after_suspend_seconds"] == pytest.approx(
        (made - _utc(beside[0]["suspended"])).total_seconds(), abs=0.1)
    assert beside[0]["after_suspend_seconds"] >= 0
    assert rec["exit_code"] == DUPLICATE
    # as an Event on the CronJob
    events = k8s.core.list_namespaced_event(namespace, field_selector="involvedObject.name=orders-sync").items
    dup = [e for e in events if e.reason == "CronctlDuplicate"]
    assert dup and name in dup[0].message, [(e.reason, e.message) for e in events]
    # the restore still happened, and the Job was left alone (never deleted)
    assert read_cronjob(k8s, namespace, "orders-sync")["spec"]["suspend"] is False
    assert k8s.batch.read_namespaced_job(name, namespace) is not None
    assert manual.metadata.name != name
    if kind == "stale-cache":
        # history names the same Job as a duplicate made during the hold, on its slot's row
        h = cronctl(["history", "orders-sync", "-n", namespace, "-o", "json", "--since", "2h"], kubeconfig)
        assert h.returncode in (0, 8), h.stderr
        rows = [r for r in json.loads(h.stdout)["cronjobs"][0]["slots"] if name in json.dumps(r)]
        assert rows and "DUPLICATE: made during the hold of cronctl run" in rows[0]["reason"], rows
