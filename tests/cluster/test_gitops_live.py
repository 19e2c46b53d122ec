"""The hold under a GitOps controller, on the real control plane.

Argo CD cannot be built here (its gitops-engine module does not build with this Go), so it is
stood in for at the API level, as it acts on a CronJob: ``SelfHeal`` re-applies the manifest every
few seconds with server-side apply, ``--force-conflicts`` and field manager ``argocd-controller``
(what self-heal does), or with client-side apply, which leaves the last-applied annotation. The
manifest carries Argo CD's tracking annotation and pins ``suspend: false``. Everything else (the
API server's managedFields, the CronJob controller starting a scheduled Job once the suspend is
undone) is the real thing. Flux's kustomize-controller itself runs in tests/cluster/test_flux_live.py.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml

from cluster_support import (cronctl, cronjob_body, early_in_a_minute, list_jobs, owned_jobs, read_cronjob, run_kubectl,
                             run_record, start_cronctl, wait_for)

pytestmark = [pytest.mark.cluster]
UTC = timezone.utc
ARGO = "argocd-controller"
TRACKING = "argocd.argoproj.io/tracking-id"


def argo_manifest(ns: str, name: str, **kw: Any) -> dict[str, Any]:
    body = cronjob_body(name, **kw)
    body["metadata"].update(namespace=ns, annotations={TRACKING: f"orders:batch/CronJob:{ns}/{name}"})
    body["spec"]["suspend"] = False  # Git says false: what self-heal puts back
    return body


class SelfHeal:
    """Argo CD's self-heal at the API level: the manifest applied now, then again every ``every``
    seconds in a thread, until :meth:`stop`. ``reverts`` are the times (UTC, when kubectl returned)
    of the applies that changed the object, that is set ``spec.suspend`` back to false."""

    def __init__(self, kubeconfig: str, k8s: Any, manifest: dict[str, Any], *, every: float = 3.0,
                 server_side: bool = True) -> None:
        self.kubeconfig, self.k8s, self.every, self.server_side = kubeconfig, k8s, every, server_side
        self.ns, self.name = manifest["metadata"]["namespace"], manifest["metadata"]["name"]
        self.file = Path(tempfile.mkdtemp(prefix="cronctl-selfheal-")) / "cronjob.yaml"
        self.file.write_text(yaml.safe_dump(manifest))
        self.reverts: list[datetime] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self.errors: list[str] = []

    def apply(self) -> None:
        args = (["apply", "--server-side", "--force-conflicts", f"--field-manager={ARGO}"] if self.server_side
                else ["apply", f"--field-manager={ARGO}"])
        run_kubectl(self.kubeconfig, *args, "-f", str(self.file))

    def start(self) -> "SelfHeal":
        self.apply()
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def _argo_time(self) -> str | None:
        cj = read_cronjob(self.k8s, self.ns, self.name)
        return next((m.get("time") for m in cj["metadata"].get("managedFields") or [] if m.get("manager") == ARGO
                     and not m.get("subresource")), None)

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            try:
                # an apply of the same manifest that changes anything moves the manager's time: the
                # only field someone else changes here is spec.suspend, so that apply is a revert
                before = self._argo_time()
                self.apply()
                done = datetime.now(UTC)
                if self._argo_time() != before:
                    self.reverts.append(done)
            except (AssertionError, subprocess.SubprocessError) as e:
                self.errors.append(str(e))


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@pytest.mark.compat
def test_run_manual_refuses_under_argo_cd_self_heal_before_any_write(kubeconfig: str, namespace: str, k8s: Any,
                                                                      tmp_path: Path) -> None:
    heal = SelfHeal(kubeconfig, k8s, argo_manifest(namespace, "orders-sync")).start()
    try:
        before = read_cronjob(k8s, namespace, "orders-sync")
        r = cronctl(["run-manual", "orders-sync", "-n", namespace, "--yes"], kubeconfig, run_dir=tmp_path)
        after = read_cronjob(k8s, namespace, "orders-sync")
    finally:
        heal.stop()
    assert r.returncode == 3, r.stderr
    # the plan says who manages it and how, then the one-line refusal with the remedy
    assert "managed by Argo CD (Application orders)" in r.stderr and "sets spec.suspend=false" in r.stderr
    assert "refusing to suspend" in r.stderr and "nothing was changed" in r.stderr
    assert "ignoreDifferences" in r.stderr and "RespectIgnoreDifferences=true" in r.stderr
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
    assert list_jobs(k8s, namespace) == []
    # --gitops refuse / pause refuse the same way; status and explain name the tool
    p = cronctl(["pause", "orders-sync", "-n", namespace, "--reason", "incident", "--yes"], kubeconfig)
    assert p.returncode == 3 and "ignoreDifferences" in p.stderr, p.stderr
    s = json.loads(cronctl(["status", "orders-sync", "-n", namespace, "-o", "json"], kubeconfig).stdout)
    assert s["gitops"]["tool"] == "argocd" and s["gitops"]["sets_suspend"] is True
    assert s["gitops"]["suspend_value"] is False and s["gitops"]["source"] == "Application orders"
    e = cronctl(["explain", "cronjob/orders-sync", "-n", namespace], kubeconfig)
    assert e.returncode == 0 and "GitOps" in e.stdout and "Argo CD" in e.stdout, e.stderr
    lint = cronctl(["lint", "orders-sync", "-n", namespace, "-o", "json"], kubeconfig)
    assert "CJ034" in lint.stdout, lint.stdout


def test_client_side_apply_by_argo_cd_is_detected_from_the_last_applied_configuration(
        kubeconfig: str, namespace: str, k8s: Any) -> None:
    heal = SelfHeal(kubeconfig, k8s, argo_manifest(namespace, "orders-sync"), server_side=False)
    heal.apply()
    cj = read_cronjob(k8s, namespace, "orders-sync")
    assert "kubectl.kubernetes.io/last-applied-configuration" in cj["metadata"]["annotations"]
    s = json.loads(cronctl(["status", "orders-sync", "-n", namespace, "-o", "json"], kubeconfig).stdout)
    assert (s["gitops"]["tool"], s["gitops"]["sets_suspend"], s["gitops"]["suspend_value"]) == ("argocd", True, False)
    r = cronctl(["run-manual", "orders-sync", "-n", namespace, "--yes", "--dry-run"], kubeconfig)
    assert r.returncode == 0 and "REFUSED" in r.stderr, r.stderr


@pytest.mark.compat
def test_ignore_under_self_heal_reports_each_revert_within_2s_fights_once_then_names_the_duplicate(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path) -> None:
    """The trial of the issue replayed with --gitops ignore: a */1 Forbid CronJob re-applied every 3 s;
    the manual Job runs 75 s, so a minute boundary passes after the hold is lost."""
    manifest = argo_manifest(namespace, "orders-sync", schedule="*/1 * * * *", duration=75)
    # made just after a minute boundary, so no scheduled Job is due between the plan and the suspend
    early_in_a_minute(lo=2, hi=15)  # a fresh minute
    heal = SelfHeal(kubeconfig, k8s, manifest, every=3.0).start()
    try:
        p = start_cronctl(["run-manual", "orders-sync", "-n", namespace, "--yes", "--gitops", "ignore",
                           "--settle", "2s", "--timeout", "5m", "-o", "json"], kubeconfig, run_dir=tmp_path)
        out, err = p.communicate(timeout=300)
    finally:
        heal.stop()
    # the run went on, but a scheduled Job ran beside it: exit 10 (DUPLICATE, docs/EXIT_CODES.md)
    assert p.returncode == 10, err
    rec = run_record(tmp_path)
    guard = rec["hold_guard"]
    assert len(guard["reverts"]) == 2 and guard["gave_up"] is True, guard
    assert all(r["by"] == ARGO for r in guard["reverts"])
    assert guard["reverts"][0]["suspended_again"] is True
    # each revert was seen within 2 s of the apply that made it (the stand-in's own clock)
    assert len(heal.reverts) >= 2
    for seen, applied in zip(guard["reverts"], heal.reverts):
        lag = (utc(seen["seen"]) - applied).total_seconds()
        assert lag <= 2.0, (seen, applied)
    assert "hold reverted: spec.suspend was set back to false by argocd-controller" in err
    assert "hold lost" in err and "stops fighting" in err
    # the scheduled Job the controller started while the hold was lost: named, never deleted
    cj = read_cronjob(k8s, namespace, "orders-sync")
    scheduled = [j["metadata"]["name"] for j in owned_jobs(k8s, namespace, cj)
                 if "batch.kubernetes.io/cronjob-scheduled-timestamp" in (j["metadata"].get("annotations") or {})]
    assert scheduled and guard["duplicate_risk"] and set(guard["duplicate_risk"]) <= set(scheduled), (guard, scheduled)
    assert f"DUPLICATE: Job {guard['duplicate_risk'][0]}" in err
    assert [b["cause"] for b in guard["beside"]] == ["revert"] * len(guard["beside"]), guard["beside"]
    assert f"the hold had been reverted by {ARGO}" in err
    # the restore does not claim it un-suspended anything: it says who did, and clears the record
    assert "suspend was false already" in err and "argocd-controller" in err
    assert not any(k.startswith("cronctl.dev/") and k != "cronctl.dev/runs" for k in cj["metadata"]["annotations"])
    events = k8s.core.list_namespaced_event(namespace, field_selector="involvedObject.name=orders-sync").items
    reasons = [e.reason for e in events]
    assert "CronctlHoldReverted" in reasons and "CronctlHoldLost" in reasons and "CronctlDuplicate" in reasons


@pytest.mark.compat
def test_on_revert_stop_stops_fighting_at_the_first_revert_and_status_tells_a_revert_from_a_forgery(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path) -> None:
    manifest = argo_manifest(namespace, "orders-sync", duration=40)
    heal = SelfHeal(kubeconfig, k8s, manifest, every=3.0).start()
    try:
        p = start_cronctl(["run-manual", "orders-sync", "-n", namespace, "--yes", "--gitops", "ignore",
                           "--on-revert", "stop", "--settle", "1s", "--timeout", "3m"], kubeconfig, run_dir=tmp_path)
        # while the run holds it and the hold is lost, status says so (not "UNCONFIRMED")
        wait_for("the run's Job", lambda: list_jobs(k8s, namespace) or None, 60)
        wait_for("the revert", lambda: heal.reverts or None, 30)
        s = json.loads(cronctl(["status", "orders-sync", "-n", namespace, "-o", "json"], kubeconfig).stdout)
        overview = cronctl(["status", "-n", namespace], kubeconfig).stdout
        out, err = p.communicate(timeout=200)
    finally:
        heal.stop()
    assert s["record_confirmed"] is True and s["record_unconfirmed"] is None, s["record_unconfirmed"]
    assert s["hold_reverted"] and "argocd-controller" in s["hold_reverted"]
    assert "THE HOLD WAS REVERTED" in s["explanation"]
    assert "HOLD REVERTED" in overview and "UNCONFIRMED" not in overview
    assert p.returncode == 0, err
    guard = run_record(tmp_path)["hold_guard"]
    assert len(guard["reverts"]) == 1 and guard["gave_up"] is True and "suspended_again" not in guard["reverts"][0]
    assert "--on-revert stop" in err


def test_a_pause_undone_by_self_heal_shows_in_status(kubeconfig: str, namespace: str, k8s: Any) -> None:
    heal = SelfHeal(kubeconfig, k8s, argo_manifest(namespace, "orders-sync"), every=2.0).start()
    try:
        r = cronctl(["pause", "orders-sync", "-n", namespace, "--reason", "incident 42", "--gitops", "ignore",
                     "--yes"], kubeconfig)
        assert r.returncode == 0, r.stderr
        wait_for(f"the revert (stand-in errors: {heal.errors})", lambda: heal.reverts or None, 30)
    finally:
        heal.stop()
    s = json.loads(cronctl(["status", "orders-sync", "-n", namespace, "-o", "json"], kubeconfig).stdout)
    assert s["suspend"] is False and s["pause"] is not None
    assert "NOT suspended" in s["explanation"] and "argocd-controller" in s["explanation"]
    overview = cronctl(["status", "-n", namespace], kubeconfig).stdout
    assert "PAUSE UNDONE" in overview
    # resume cleans the pause up and says who undid it
    res = cronctl(["resume", "orders-sync", "-n", namespace, "--yes"], kubeconfig)
    assert res.returncode == 0 and "argocd-controller" in res.stderr + res.stdout, res.stderr
    assert not any(k.startswith("cronctl.dev/pause") and k != "cronctl.dev/pauses" for k in
                   read_cronjob(k8s, namespace, "orders-sync")["metadata"].get("annotations") or {})


def test_a_plain_cronjob_is_held_as_before_and_says_no_gitops_controller(kubeconfig: str, namespace: str,
                                                                          k8s: Any, tmp_path: Path) -> None:
    k8s.batch.create_namespaced_cron_job(namespace, cronjob_body("plain", duration=2))
    r = cronctl(["run-manual", "plain", "-n", namespace, "--yes", "--settle", "1s", "-o", "json"], kubeconfig,
                run_dir=tmp_path)
    assert r.returncode == 0, r.stderr
    rec = run_record(tmp_path)
    assert rec["plan"]["gitops"]["tool"] is None and rec["plan"]["gitops"]["strategy"] == "plain"
    assert rec["hold_guard"]["reverts"] == [] and rec["hold_guard"]["gave_up"] is False
    assert "cronctl.dev/gitops-hold" not in (read_cronjob(k8s, namespace, "plain")["metadata"].get("annotations") or {})

