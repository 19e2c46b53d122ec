"""`cronctl history` against what the real CronJob controller did: a Forbid overlap, a suspension
and its un-suspend catch-up, a duplicate made beside a scheduled Job (as `kubectl create job
--from` makes one), and Jobs the history limit deleted. The controller-down and deadline cases
run on a private control plane in test_faults.py.

The CronJobs run `*/1`, so each test waits for real minutes; the slot times are read from the
Jobs the controller created, never assumed."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

import jsonschema
import pytest

from cluster_support import (ROOT, cronctl, cronjob_body, list_jobs, minute_floor, read_cronjob, sleep_until,
                             slot_job_name, wait_for)

pytestmark = [pytest.mark.cluster, pytest.mark.compat]
UTC = timezone.utc
SCHEMA = json.loads((ROOT / "cronctl" / "data" / "history.schema.json").read_text())
TS = "batch.kubernetes.io/cronjob-scheduled-timestamp"


def z(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def slot_of(job: dict[str, Any]) -> datetime:
    return datetime.strptime(job["metadata"]["annotations"][TS], "%Y-%m-%dT%H:%M:%S%z").astimezone(UTC)


def make(k8s: Any, ns: str, name: str, **spec: Any) -> dict[str, Any]:
    k8s.batch.create_namespaced_cron_job(ns, cronjob_body(name, schedule="*/1 * * * *", duration=spec.pop("duration", 1),
                                                         policy=spec.pop("policy", "Allow"), **spec))
    return read_cronjob(k8s, ns, name)


def scheduled_jobs(k8s: Any, ns: str, name: str) -> list[dict[str, Any]]:
    return sorted((j for j in list_jobs(k8s, ns) if TS in (j["metadata"].get("annotations") or {})
                   and j["metadata"]["name"].startswith(name + "-")), key=slot_of)


def history(kubeconfig: str, ns: str, name: str) -> dict[str, dict[str, Any]]:
    r = cronctl(["history", name, "-n", ns, "-o", "json"], kubeconfig)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, SCHEMA)
    return {s["slot"]: s for s in doc["cronjobs"][0]["slots"] if s["verdict"] != "dst-skipped"}


def test_forbid_refuses_a_slot_while_a_long_job_runs_and_the_next_waits(kubeconfig: str, namespace: str,
                                                                         k8s: Any) -> None:
    make(k8s, namespace, "long", policy="Forbid", duration=140)
    t0 = slot_of(wait_for("the first scheduled Job", lambda: scheduled_jobs(k8s, namespace, "long"), 90)[0])
    t1, t2 = t0 + timedelta(minutes=1), t0 + timedelta(minutes=2)
    # the first Job runs ~140 s: t1 and t2 come while it is active; when it ends (after t2) the
    # controller starts only t2, late
    wait_for("the Job for t2", lambda: [j for j in scheduled_jobs(k8s, namespace, "long") if slot_of(j) == t2], 240)
    h = history(kubeconfig, namespace, "long")
    assert h[z(t0)]["verdict"] in ("ran", "running")
    assert h[z(t1)]["verdict"] == "skipped-forbid", h[z(t1)]
    assert h[z(t2)]["verdict"] in ("ran-late", "running"), h[z(t2)]
    assert h[z(t2)]["start_delay_seconds"] > 10
    if h[z(t2)]["verdict"] == "ran-late":
        assert "Forbid waited for" in h[z(t2)]["reason"]
    r = cronctl(["history", "long", "-n", namespace, "--fail-on", "lost"], kubeconfig)
    assert r.returncode == 8 and "skipped-forbid" in r.stdout


def test_a_suspension_loses_the_slots_and_the_un_suspend_catch_up_runs_the_latest(kubeconfig: str, namespace: str,
                                                                                 k8s: Any) -> None:
    make(k8s, namespace, "pause")
    t0 = slot_of(wait_for("the first scheduled Job", lambda: scheduled_jobs(k8s, namespace, "pause"), 90)[0])
    k8s.batch.patch_namespaced_cron_job("pause", namespace, {"spec": {"suspend": True}})
    t1, t2 = t0 + timedelta(minutes=1), t0 + timedelta(minutes=2)
    sleep_until(t2 + timedelta(seconds=15))
    k8s.batch.patch_namespaced_cron_job("pause", namespace, {"spec": {"suspend": False}})
    wait_for("the catch-up Job", lambda: [j for j in scheduled_jobs(k8s, namespace, "pause") if slot_of(j) == t2], 60)
    h = history(kubeconfig, namespace, "pause")
    assert h[z(t0)]["verdict"] == "ran"
    assert h[z(t1)]["verdict"] == "missed-suspended", h[z(t1)]["reason"]
    # the catch-up may still be running when history reads it: late either way, and why
    assert h[z(t2)]["verdict"] in ("ran-late", "running") and "un-suspended" in h[z(t2)]["reason"], h[z(t2)]
    assert h[z(t2)]["start_delay_seconds"] >= 15


def test_a_job_created_beside_the_scheduled_one_for_the_same_slot_is_a_duplicate(kubeconfig: str, namespace: str,
                                                                                   k8s: Any) -> None:
    from cronctl import model

    cj = make(k8s, namespace, "twice", duration=30)
    first = wait_for("the first scheduled Job", lambda: scheduled_jobs(k8s, namespace, "twice"), 90)[0]
    t0 = slot_of(first)
    # what `kubectl create job --from=cronjob/twice` makes (owner reference, instantiate: manual),
    # plus the occurrence it claims
    body = model.build_manual_job(cj, "twice-by-hand", extra_annotations={model.ANN_OCCURRENCE: z(t0)})
    k8s.batch.create_namespaced_job(namespace, body)
    h = history(kubeconfig, namespace, "twice")
    assert h[z(t0)]["verdict"] == "duplicate", h[z(t0)]
    assert set(h[z(t0)]["jobs"]) == {first["metadata"]["name"], "twice-by-hand"}
    r = cronctl(["history", "twice", "-n", namespace, "--fail-on", "duplicate"], kubeconfig)
    assert r.returncode == 8


def test_jobs_the_history_limit_deleted_still_count_as_run_from_their_events(kubeconfig: str, namespace: str,
                                                                             k8s: Any) -> None:
    make(k8s, namespace, "keep1", successfulJobsHistoryLimit=1)
    seen: set[str] = set()

    def three_created() -> bool:
        seen.update(j["metadata"]["name"] for j in scheduled_jobs(k8s, namespace, "keep1"))
        return len(seen) >= 3

    wait_for("three scheduled Jobs", three_created, 240, every=1)
    wait_for("the history limit to delete the older ones",
             lambda: len(scheduled_jobs(k8s, namespace, "keep1")) <= 2, 60)
    existing = {j["metadata"]["name"] for j in scheduled_jobs(k8s, namespace, "keep1")}
    gone = sorted(seen - existing)
    assert gone
    h = history(kubeconfig, namespace, "keep1")
    by_job = {j: s for s in h.values() for j in s["jobs"]}
    for name in gone:
        s = by_job[name]
        assert s["verdict"] == "ran", s
        assert s["job_details"][0]["exists"] is False and s["job_details"][0]["stands_by"] == "event"


def test_a_job_created_by_hand_beside_a_slot_named_run_is_a_duplicate_and_no_third_run_is_let_through(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Any) -> None:
    from cronctl import model

    # suspended: the controller makes no Job, so the slot-named manual run is the slot's only Job ...
    cj = make(k8s, namespace, "handrun", suspend=True)
    sleep_until(minute_floor(datetime.strptime(cj["metadata"]["creationTimestamp"], "%Y-%m-%dT%H:%M:%SZ")
                             .replace(tzinfo=UTC)) + timedelta(minutes=1, seconds=2))
    r = cronctl(["run-manual", "handrun", "-n", namespace, "--occurrence", "latest", "--yes", "--settle", "1s",
                 "-o", "json"], kubeconfig, run_dir=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    t, slot_job = doc["occurrence"], doc["job_name"]
    assert slot_job == slot_job_name("handrun", datetime.strptime(t, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC))
    assert history(kubeconfig, namespace, "handrun")[t]["verdict"] == "ran"
    # ... until someone runs `kubectl create job --from=cronjob/handrun` for the same occurrence
    body = model.build_manual_job(read_cronjob(k8s, namespace, "handrun"), "handrun-by-hand",
                                  extra_annotations={model.ANN_OCCURRENCE: t})
    k8s.batch.create_namespaced_job(namespace, body)
    h = history(kubeconfig, namespace, "handrun")
    assert h[t]["verdict"] == "duplicate" and set(h[t]["jobs"]) == {slot_job, "handrun-by-hand"}, h[t]
    assert cronctl(["history", "handrun", "-n", namespace, "--fail-on", "duplicate"], kubeconfig).returncode == 8
    # cronctl lets no third run through: neither a slot run nor a backfill of that slot
    r = cronctl(["run-manual", "handrun", "-n", namespace, "--occurrence", t, "--yes"], kubeconfig, run_dir=tmp_path)
    assert r.returncode == 3 and "already" in r.stderr, r.stderr
    r = cronctl(["backfill", "handrun", "-n", namespace, "--slot", t, "--yes"], kubeconfig, run_dir=tmp_path)
    assert r.returncode == 0 and "already stands for it" in r.stderr, r.stderr
    assert sorted(j["metadata"]["name"] for j in list_jobs(k8s, namespace)) == sorted([slot_job, "handrun-by-hand"])


def test_the_fleet_page_of_a_live_namespace_has_a_row_per_cronjob_under_the_kubeconfig_context(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Any) -> None:
    import os
    import re
    import stat

    import yaml

    for name in ("orders-sync", "reports"):
        k8s.batch.create_namespaced_cron_job(namespace, cronjob_body(name))
    page = tmp_path / "fleet.html"
    r = cronctl(["history", "-n", namespace, "--since", "1h", "--html", str(page), "-o", "json"], kubeconfig)
    assert r.returncode == 0, r.stderr
    jsonschema.validate(json.loads(r.stdout), SCHEMA)  # stdout stays the JSON; the page's line is on stderr
    assert f"page written to {page}: 2 CronJob(s)" in r.stderr
    assert stat.S_IMODE(os.stat(page).st_mode) == 0o600
    html = page.read_text()
    context = yaml.safe_load(open(kubeconfig))["current-context"]
    assert f"<h2>Cluster {context}</h2>" in html and f"Namespace {namespace} (2)" in html
    assert re.findall(r'<tr id="r\d+"><th title="[^"]*">([a-z-]+)<small>', html) == ["orders-sync", "reports"]
    assert "Content-Security-Policy" in html and "<script" not in html
