"""`--catch-up latest|none` on the real controller: with `none` the slot the controller would start
on un-suspend is marked processed first (status.lastScheduleTime), nothing starts, the slots given
up are listed, and the next slot still starts on time; `latest` is the controller's own catch-up.
For `resume` and for `run-manual` (its restore)."""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from cluster_support import cronctl, cronjob_body, list_jobs, read_cronjob, run_record, wait_for

pytestmark = [pytest.mark.cluster, pytest.mark.compat]
UTC = timezone.utc
TS = "batch.kubernetes.io/cronjob-scheduled-timestamp"


def z(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def scheduled(k8s: Any, ns: str) -> dict[str, dict[str, Any]]:
    return {j["metadata"]["annotations"][TS]: j for j in list_jobs(k8s, ns)
            if TS in (j["metadata"].get("annotations") or {}) and not j["metadata"]["name"].endswith("-manual")}


def minute_floor(t: datetime) -> datetime:
    return t.replace(second=0, microsecond=0)


def test_resume_with_catch_up_none_starts_nothing_and_the_next_slot_runs_on_time(
        kubeconfig: str, namespace: str, k8s: Any) -> None:
    k8s.batch.create_namespaced_cron_job(namespace, cronjob_body("quiet", schedule="*/1 * * * *", policy="Allow",
                                                                duration=1))
    r = cronctl(["pause", "quiet", "-n", namespace, "--reason", "maintenance", "--yes"], kubeconfig)
    assert r.returncode == 0, r.stderr
    # let at least one slot pass while paused, and resume well inside the next minute
    paused_at = datetime.now(UTC)
    slot = minute_floor(paused_at) + timedelta(minutes=1)
    time.sleep(max(0.0, (slot + timedelta(seconds=5) - datetime.now(UTC)).total_seconds()))
    before = set(scheduled(k8s, namespace))
    r = cronctl(["resume", "quiet", "-n", namespace, "--catch-up", "none", "--yes", "-o", "json"], kubeconfig)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    latest = minute_floor(datetime.now(UTC))
    assert doc["given_up"] and doc["given_up"][-1] == z(latest), doc
    cj = read_cronjob(k8s, namespace, "quiet")
    assert cj["spec"]["suspend"] is False and cj["status"]["lastScheduleTime"] == z(latest)
    # nothing starts for the given-up slot (the controller syncs at once on un-suspend) ...
    time.sleep(12)
    assert set(scheduled(k8s, namespace)) == before, "a catch-up Job started although --catch-up none"
    # ... and the next slot starts on time
    nxt = latest + timedelta(minutes=1)
    job = wait_for(f"the Job for {z(nxt)}", lambda: scheduled(k8s, namespace).get(z(nxt)), 90)
    created = datetime.strptime(job["metadata"]["creationTimestamp"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    delay = (created - nxt).total_seconds()
    print(f"next slot after resume --catch-up none: created {delay:.0f}s after {z(nxt)}")
    assert delay <= 10, delay
    # the pause left no Job or event behind: --since reaches back to it
    h = json.loads(cronctl(["history", "quiet", "-n", namespace, "--since", "10m", "-o", "json"], kubeconfig).stdout)
    slots = {s["slot"]: s for s in h["cronjobs"][0]["slots"]}
    assert slots[z(latest)]["verdict"] == "missed-suspended", slots[z(latest)]


def test_run_manual_with_catch_up_none_restores_without_a_catch_up_and_records_what_was_given_up(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path) -> None:
    # every 2 minutes, Jobs of 70 s: after a scheduled Job ends there are ~50 s without any, in which
    # the manual run starts; it runs 70 s, so the next slot passes while the CronJob is suspended
    k8s.batch.create_namespaced_cron_job(namespace, cronjob_body("long", schedule="*/2 * * * *", policy="Forbid",
                                                                duration=70))
    first = wait_for("a first scheduled Job", lambda: scheduled(k8s, namespace), 150)
    slot0 = datetime.strptime(next(iter(first)), "%Y-%m-%dT%H:%M:%S%z").astimezone(UTC)
    wait_for("it to finish", lambda: all((j.get("status") or {}).get("completionTime")
                                         for j in scheduled(k8s, namespace).values()) or None, 120)
    assert datetime.now(UTC) < slot0 + timedelta(seconds=105), "too late to start inside the idle window"
    r = cronctl(["run-manual", "long", "-n", namespace, "--yes", "--settle", "2s", "--catch-up", "none",
                 "--timeout", "5m"], kubeconfig, run_dir=tmp_path)
    assert r.returncode == 0, r.stderr
    rec = run_record(tmp_path)
    given = rec["catch_up"]["given_up"]
    lost = z(slot0 + timedelta(minutes=2))
    assert rec["catch_up"]["mode"] == "none" and given == [lost], rec.get("catch_up")
    cj = read_cronjob(k8s, namespace, "long")
    assert cj["spec"]["suspend"] is False and cj["status"]["lastScheduleTime"] == lost
    time.sleep(12)
    assert lost not in scheduled(k8s, namespace), "the controller ran the slot given up"
    assert "nothing starts (--catch-up none)" in r.stdout + r.stderr
