"""cronctl's audit trail on the real control plane: an Event on the CronJob for each change, and
the finished run kept in ``cronctl.dev/runs`` after its record is cleared and after the history
limit deleted its manual Job; status, history and the bundle read it."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from cluster_support import (RUNS_ANNOTATION, cronctl, create_cronjob, read_cronjob, read_job,
                             record_annotations, wait_for)

pytestmark = [pytest.mark.cluster, pytest.mark.compat]  # run on every supported version


def _events(k8s: Any, ns: str, name: str) -> list[Any]:
    return [e for e in k8s.core.list_namespaced_event(ns, field_selector=f"involvedObject.name={name}").items
            if e.involved_object.kind == "CronJob"]


def test_a_run_leaves_events_and_its_account_outlives_the_record_and_the_deleted_manual_job(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path) -> None:
    body = create_cronjob(k8s, namespace, "ledger", duration=2)
    # a history limit of 0: the controller deletes the finished manual Job at its next sync
    k8s.batch.patch_namespaced_cron_job("ledger", namespace, {"spec": {"successfulJobsHistoryLimit": 0}})
    assert body["metadata"]["name"] == "ledger"
    r = cronctl(["run-manual", "ledger", "-n", namespace, "--yes", "--settle", "1s", "--reason", "INC-42 re-run",
                 "--occurrence", "2026-12-01T00:00:00Z", "--ad-hoc-occurrence", "-o", "json"],
                kubeconfig, run_dir=tmp_path)
    assert r.returncode == 0, r.stderr
    done = json.loads(r.stdout)
    run_id = done["run_id"]
    # the plan said when the history limit removes the manual Job
    assert "next sync after it succeeded" in done["plan"]["job_removal"]["if_succeeded"]

    # one Event per change, naming the run, the operator and the reason
    evs = _events(k8s, namespace, "ledger")
    ours = {e.reason: e for e in evs if e.source and e.source.component == "cronctl"}
    assert {"CronctlSuspended", "CronctlJobCreated", "CronctlRestored"} <= set(ours), sorted(ours)
    for reason in ("CronctlSuspended", "CronctlJobCreated", "CronctlRestored"):
        assert run_id in ours[reason].message and "INC-42 re-run" in ours[reason].message, ours[reason].message
    assert "ledger-manual" in ours["CronctlJobCreated"].message

    # the record is gone, the run stays in cronctl.dev/runs (written by cronctl: field manager)
    cj = read_cronjob(k8s, namespace, "ledger")
    assert record_annotations(cj) == {} and cj["spec"]["suspend"] is False
    (kept,) = json.loads(cj["metadata"]["annotations"][RUNS_ANNOTATION])
    assert (kept["run_id"], kept["reason"], kept["last_step"], kept["job_name"]) == (
        run_id, "INC-42 re-run", "succeeded", "ledger-manual")
    assert kept["occurrence"] == "2026-12-01T00:00:00Z" and kept["restored_to"] is False
    assert kept["operator"] and kept["operator"] != "unknown"

    # the controller's history limit deletes the manual Job; the account does not depend on it
    wait_for("the history limit to delete the manual Job", lambda: read_job(k8s, namespace, "ledger-manual") is None
             or None, 90)
    s = json.loads(cronctl(["status", "ledger", "-n", namespace, "-o", "json"], kubeconfig).stdout)
    assert [p["run_id"] for p in s["past_runs"]] == [run_id]
    text = cronctl(["status", "ledger", "-n", namespace], kubeconfig)
    assert text.returncode == 0 and f"cronctl run {run_id} of" in text.stdout and "INC-42 re-run" in text.stdout

    out = tmp_path / "bundle"
    b = cronctl(["bundle", "ledger", "-n", namespace, "--out", str(out), "-o", "json"], kubeconfig, run_dir=tmp_path)
    assert b.returncode == 0, b.stderr
    doc = json.loads((out / "bundle.json").read_text())
    periods = doc["cronjobs"][0]["suspended_periods"]
    assert any(run_id in p["source"] and "INC-42 re-run" in p["source"] and p["end"] for p in periods), periods
    assert "INC-42 re-run" in (out / "REPORT.md").read_text()


def test_the_plan_is_about_the_end_of_the_run_and_an_unannounced_catch_up_is_asked_again(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path) -> None:
    from cluster_support import on_a_terminal, run_record

    # */1, no deadline: whatever slot passes while suspended is started at the restore. The Job runs
    # 75 s, but the operator said 1 s: the plan foresees no slot passing and no catch-up.
    create_cronjob(k8s, namespace, "tick", schedule="*/1 * * * *", duration=2, policy="Forbid")
    wait_for("the controller's first Job", lambda: k8s.batch.list_namespaced_job(namespace).items or None, 90)

    def quiet() -> bool | None:  # every Job done, and early enough in the minute to start the run
        done = all(j.status.completion_time for j in k8s.batch.list_namespaced_job(namespace).items)
        return (done and 5 <= datetime.now(timezone.utc).second <= 30) or None

    wait_for("no Job running, early in a minute", quiet, 120)
    k8s.batch.patch_namespaced_cron_job("tick", namespace, {"spec": {"jobTemplate": {"spec": {"template": {
        "metadata": {"annotations": {"sim.cronctl.dev/duration-seconds": "75"}}}}}}})
    code, raw = on_a_terminal(["run-manual", "tick", "-n", namespace, "--settle", "1s", "--expected-duration", "1s"],
                              kubeconfig, cwd=tmp_path, run_dir=tmp_path, answers=["y", "n"], timeout=240)
    screen = raw.decode("utf-8", "replace")
    rec = run_record(tmp_path)
    assert rec["plan"]["end"]["expected_seconds"] == 1.0 and rec["plan"]["end"]["from"] == "--expected-duration"
    assert "would start what the plan did not announce" in screen, screen[-3000:]
    assert code == 3, screen[-3000:]
    assert rec["unannounced_catch_up"]["decision"] == "create"
    cj = read_cronjob(k8s, namespace, "tick")
    assert cj["spec"]["suspend"] is True and record_annotations(cj)["cronctl.dev/step"] == "succeeded"
    r = cronctl(["restore", "tick", "-n", namespace, "--yes", "--catch-up", "none"], kubeconfig)
    assert r.returncode == 0, r.stderr
