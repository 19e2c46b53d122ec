"""cronctl's hold under the real Flux kustomize-controller (tests/cluster/flux_support.py): the
``annotate`` strategy of ``--gitops auto`` keeps ``spec.suspend`` through many of Flux's intervals,
no scheduled Job runs beside the manual one, and the reconcile annotation is put back afterwards.
Without it (``--gitops ignore``) Flux undoes the hold and the guard says so."""

from __future__ import annotations

import json
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from cluster_support import (cronctl, cronjob_body, minute_floor, owned_jobs, read_cronjob, run_record,
                             start_cronctl, wait_for)
from flux_support import Flux, flux  # noqa: F401 (flux: the fixture)

pytestmark = [pytest.mark.cluster, pytest.mark.compat, pytest.mark.xdist_group("flux")]
UTC = timezone.utc
INTERVAL = 5  # seconds: the Kustomization's spec.interval
RECONCILE = "kustomize.toolkit.fluxcd.io/reconcile"
SCHEDULED = "batch.kubernetes.io/cronjob-scheduled-timestamp"


class SuspendWatch:
    """Reads spec.suspend every 0.5 s in a thread; ``unsuspended`` holds the times (at the start of the
    read) it was false."""

    def __init__(self, k8s: Any, ns: str, name: str) -> None:
        self.k8s, self.ns, self.name = k8s, ns, name
        self.unsuspended: list[datetime] = []
        self.reads = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(0.5):
            began = datetime.now(UTC)
            if read_cronjob(self.k8s, self.ns, self.name)["spec"].get("suspend") is not True:
                self.unsuspended.append(began)
            self.reads += 1

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


def test_run_manual_holds_through_flux_intervals_with_the_reconcile_annotation_and_puts_it_back(
        flux: Flux, kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path) -> None:
    # One slot, 2 to 3 minutes ahead (hourly at that minute, UTC): no slot is near the suspend, so no
    # Job can come from a controller cache that has not seen it yet, however slow Flux's first apply
    # is on a loaded machine (CI once saw the */1 version's suspend land in the second of a slot, and
    # the controller's Job for it beside the manual one: the guard now names such a Job and the run
    # exits 10, see test_hold_beside.py). The manual Job runs 200 s: the slot comes while it runs.
    slot = minute_floor(datetime.now(UTC)) + timedelta(minutes=3)
    body = cronjob_body("orders-sync", schedule=f"{slot.minute} * * * *", tz="Etc/UTC", suspend=False, duration=200)
    managed = flux.manage(namespace, [body], interval=f"{INTERVAL}s")
    # --wait-active: should Flux's first apply be slower than the slot, the run waits for its Job
    p = start_cronctl(["run-manual", "orders-sync", "-n", namespace, "--yes", "--settle", "1s", "--catch-up",
                       "none", "--wait-active", "--timeout", "9m"], kubeconfig, run_dir=tmp_path)
    wait_for("the suspend", lambda: read_cronjob(k8s, namespace, "orders-sync")["spec"].get("suspend") or None, 30)
    held_from = time.monotonic()
    watch = SuspendWatch(k8s, namespace, "orders-sync")
    try:
        out, err = p.communicate(timeout=600)
    finally:
        watch.stop()
    held = time.monotonic() - held_from
    assert p.returncode == 0, err
    assert datetime.now(UTC) > slot, "the slot passed while the CronJob was held"
    rec = run_record(tmp_path)
    assert rec["plan"]["gitops"]["tool"] == "flux" and rec["plan"]["gitops"]["strategy"] == "annotate"
    assert f"{RECONCILE}=disabled set for the hold" in err
    # held through several of Flux's intervals, and not one read saw it un-suspended before the restore
    assert held > 6 * INTERVAL, held
    restored = datetime.fromisoformat(rec["restored_at"].replace("Z", "+00:00"))
    # restored_at is written after the restore's patch returned: a read begun within the second before
    # it may already see the restore (CI saw one 4 ms before); any earlier one would be Flux's revert
    assert [t for t in watch.unsuspended if t < restored - timedelta(seconds=1)] == [], watch.unsuspended
    assert rec["hold_guard"]["reverts"] == []
    # no scheduled Job made during the hold (--catch-up none: nothing after the restore either), as
    # the cluster shows it and as the guard reports it (a failure here is a real duplicate, named)
    assert rec["hold_guard"]["beside"] == [], rec["hold_guard"]
    cj = read_cronjob(k8s, namespace, "orders-sync")
    suspended = datetime.fromisoformat(rec["suspended_at"].replace("Z", "+00:00")).replace(microsecond=0)
    beside = [j["metadata"]["name"] for j in owned_jobs(k8s, namespace, cj)
              if SCHEDULED in (j["metadata"].get("annotations") or {})
              and datetime.fromisoformat(j["metadata"]["creationTimestamp"].replace("Z", "+00:00")) >= suspended]
    assert beside == [], beside
    # the annotation is put back (it was absent), and Flux manages it again: a kubectl patch is undone
    ann = cj["metadata"].get("annotations") or {}
    assert RECONCILE not in ann and "cronctl.dev/gitops-hold" not in ann, ann
    assert cj["spec"]["suspend"] is False
    assert "annotation kustomize.toolkit.fluxcd.io/reconcile removed" in err
    # the restore under Flux judges its write of suspend by diff's rule too (issue 38, item 4):
    # --catch-up none set lastScheduleTime past the slot, so nothing is made at the write
    assert "at the write, by cronctl diff's rule: no Job is created or deleted at the write" in err, err
    managed.reconcile_now()


def test_pause_under_flux_holds_with_the_annotation_and_resume_puts_back_its_earlier_value(
        flux: Flux, kubeconfig: str, namespace: str, k8s: Any) -> None:
    body = cronjob_body("nightly-export", suspend=False)
    body["metadata"]["annotations"] = {RECONCILE: "enabled"}  # an earlier value, which resume must put back
    managed = flux.manage(namespace, [body], interval=f"{INTERVAL}s")
    r = cronctl(["pause", "nightly-export", "-n", namespace, "--reason", "incident 7", "--yes"], kubeconfig)
    assert r.returncode == 0, r.stderr
    assert read_cronjob(k8s, namespace, "nightly-export")["metadata"]["annotations"][RECONCILE] == "disabled"
    time.sleep(3 * INTERVAL)
    assert read_cronjob(k8s, namespace, "nightly-export")["spec"]["suspend"] is True, "Flux undid the pause"
    res = cronctl(["resume", "nightly-export", "-n", namespace, "--yes", "-o", "json"], kubeconfig)
    assert res.returncode == 0, res.stderr
    # resume under Flux says what its write makes the controller do, by diff's rule (issue 38, item 4)
    doc = json.loads(res.stdout)
    assert doc["change"]["createsJob"] == doc["prediction"]["job_name"], doc
    assert "at the write, by cronctl diff's rule: " in res.stderr
    cj = read_cronjob(k8s, namespace, "nightly-export")
    assert cj["spec"]["suspend"] is False and cj["metadata"]["annotations"][RECONCILE] == "enabled"
    # the pause is gone; its account stays in the trail resume keeps (cronctl.dev/pauses)
    assert not any(k.startswith("cronctl.dev/pause") and k != "cronctl.dev/pauses"
                   for k in cj["metadata"]["annotations"])
    managed.reconcile_now()


def test_a_plain_hold_under_flux_is_undone_and_the_guard_names_kustomize_controller(
        flux: Flux, kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path) -> None:
    flux.manage(namespace, [cronjob_body("orders-sync", suspend=False, duration=25)], interval=f"{INTERVAL}s")
    r = cronctl(["run-manual", "orders-sync", "-n", namespace, "--yes", "--gitops", "ignore", "--settle", "1s",
                 "--timeout", "3m"], kubeconfig, run_dir=tmp_path)
    assert r.returncode == 0, r.stderr
    guard = run_record(tmp_path)["hold_guard"]
    assert guard["reverts"] and guard["reverts"][0]["by"] == "kustomize-controller", guard
    assert "hold reverted: spec.suspend was set back to false by kustomize-controller" in r.stderr
