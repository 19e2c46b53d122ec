"""`cronctl backfill` on the real controller: the outage of docs/BACKGROUND.md §4.4 compressed to minutes. The
CronJob is paused through an outage, resumed with `--catch-up none` (nothing starts), `history`
shows the lost slots, and `backfill --missed` runs each exactly once, as the slot's own Job; run
again it finds nothing to do. A failing slot stops the backfill with the CronJob suspended."""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from cluster_support import (cronctl, cronjob_body, list_jobs, minute_floor, read_cronjob, run_record, sleep_until,
                             slot_job_name, wait_for)

pytestmark = [pytest.mark.cluster, pytest.mark.compat]
UTC = timezone.utc
TS = "batch.kubernetes.io/cronjob-scheduled-timestamp"


def by_slot(k8s: Any, ns: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for j in list_jobs(k8s, ns):
        ann = j["metadata"].get("annotations") or {}
        slot = ann.get(TS) or ann.get("cronctl.dev/occurrence")
        if slot:
            out.setdefault(slot, []).append(j["metadata"]["name"])
    return out


def history(kubeconfig: str, ns: str, name: str, *extra: str) -> tuple[int, dict[str, Any]]:
    r = cronctl(["history", name, "-n", ns, "-o", "json", *extra], kubeconfig)
    return r.returncode, json.loads(r.stdout)["cronjobs"][0]


def test_the_outage_replayed_lost_slots_are_backfilled_once_each(kubeconfig: str, namespace: str, k8s: Any,
                                                                 tmp_path: Path) -> None:
    k8s.batch.create_namespaced_cron_job(namespace, cronjob_body("orders", schedule="*/1 * * * *", policy="Forbid",
                                                                duration=2))
    wait_for("a first scheduled Job", lambda: by_slot(k8s, namespace), 90)
    r = cronctl(["pause", "orders", "-n", namespace, "--reason", "payment provider down (INC-4711)", "--yes"],
                kubeconfig)
    assert r.returncode == 0, r.stderr
    paused = datetime.now(UTC)
    # the outage: two slots pass while paused
    sleep_until(minute_floor(paused) + timedelta(minutes=2, seconds=5))
    r = cronctl(["resume", "orders", "-n", namespace, "--catch-up", "none", "--yes", "-o", "json"], kubeconfig)
    assert r.returncode == 0, r.stderr
    given = json.loads(r.stdout)["given_up"]
    assert len(given) >= 2, given
    code, h = history(kubeconfig, namespace, "orders", "--fail-on", "lost")
    lost = [s["slot"] for s in h["slots"] if s["verdict"] == "missed-suspended"]
    assert code == 8 and set(given) <= set(lost), (given, [(s["slot"], s["verdict"]) for s in h["slots"]])
    # the plan changes nothing
    before = by_slot(k8s, namespace)
    r = cronctl(["backfill", "orders", "-n", namespace, "--missed", "--dry-run", "--yes"], kubeconfig)
    assert r.returncode == 0, r.stderr
    assert all(s in r.stderr for s in lost) and by_slot(k8s, namespace) == before
    assert read_cronjob(k8s, namespace, "orders")["spec"]["suspend"] is False
    # the backfill: each lost slot once, oldest first, as the controller would have named its Job
    r = cronctl(["backfill", "orders", "-n", namespace, "--missed", "--yes", "--settle", "1s",
                 "--reason", "INC-4711 catch-up"], kubeconfig, run_dir=tmp_path)
    assert r.returncode == 0, r.stderr
    rec = run_record(tmp_path)
    assert rec["done"] == sorted(lost) and rec["kind"] == "backfill"
    assert 0 < rec["suspended_seconds"] < 300, rec.get("suspended_seconds")
    print(f"\nMEASURE backfill of {len(lost)} slot(s) (Jobs of about 2 s, one at a time, settle 1s): the CronJob "
          f"was suspended {rec['suspended_seconds']:.1f} s")
    after = by_slot(k8s, namespace)
    for s in lost:
        job = slot_job_name("orders", datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC))
        assert after.get(s) == [job], (s, after.get(s))
    assert all(len(v) == 1 for v in after.values()), after  # none ran twice
    cj = read_cronjob(k8s, namespace, "orders")
    assert cj["spec"]["suspend"] is False and not any(k == "cronctl.dev/run-id" for k in
                                                      (cj["metadata"].get("annotations") or {}))
    _, h = history(kubeconfig, namespace, "orders")
    verdicts = {s["slot"]: s["verdict"] for s in h["slots"]}
    assert all(verdicts[s] == "ran" for s in lost), verdicts
    assert h["counts"]["duplicate"] == 0
    # again: nothing left of those slots
    r = cronctl(["backfill", "orders", "-n", namespace, "--missed", "--yes", "--settle", "1s"], kubeconfig,
                run_dir=tmp_path / "again")
    assert r.returncode == 0, r.stderr
    again = tmp_path / "again"
    ran_again = set(run_record(again)["slots"]) if list(again.glob("*/record.json")) else set()
    assert not ran_again & set(lost), ran_again  # only slots lost during the backfill itself, if any


def test_a_failing_slot_stops_the_backfill_and_it_goes_on_after_restore(kubeconfig: str, namespace: str,
                                                                        k8s: Any, tmp_path: Path) -> None:
    body = cronjob_body("fails", schedule="*/1 * * * *", policy="Forbid", duration=1, exit_code=1, suspend=True)
    k8s.batch.create_namespaced_cron_job(namespace, body)
    created = datetime.strptime(read_cronjob(k8s, namespace, "fails")["metadata"]["creationTimestamp"],
                                "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    first = minute_floor(created) + timedelta(minutes=1)
    sleep_until(first + timedelta(minutes=1, seconds=3))
    r = cronctl(["backfill", "fails", "-n", namespace, "--from", first.strftime("%Y-%m-%dT%H:%M:%SZ"),
                 "--to", (first + timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ"), "--yes", "--settle", "1s"],
                kubeconfig, run_dir=tmp_path)
    assert r.returncode == 1, r.stderr
    rec = run_record(tmp_path)
    bad = cronctl(["backfill", "fails", "-n", namespace, "--slot", first.strftime("%Y-%m-%dT%H:%M:%SZ"),
                   "--parallel", "2", "--yes"], kubeconfig)
    assert bad.returncode == 5 and "needs concurrencyPolicy Allow" in bad.stderr  # Forbid: one at a time
    assert rec["failed_slot"] == first.strftime("%Y-%m-%dT%H:%M:%SZ") and rec["done"] == []
    cj = read_cronjob(k8s, namespace, "fails")
    assert cj["spec"]["suspend"] is True and cj["metadata"]["annotations"]["cronctl.dev/step"] == "failed"
    assert "cronctl restore fails" in r.stdout + r.stderr
    # status explains it, restore finishes it (it was suspended before: it stays suspended)
    s = cronctl(["status", "fails", "-n", namespace], kubeconfig)
    assert s.returncode == 0 and "failed" in s.stdout
    assert cronctl(["restore", "fails", "-n", namespace, "--yes"], kubeconfig).returncode == 0
    # again: the failed slot has its Job and is skipped, the next one runs (and fails too)
    r = cronctl(["backfill", "fails", "-n", namespace, "--from", first.strftime("%Y-%m-%dT%H:%M:%SZ"),
                 "--to", (first + timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ"), "--yes", "--settle", "1s"],
                kubeconfig, run_dir=tmp_path / "again")
    assert "already stands for it" in r.stderr
    assert run_record(tmp_path / "again")["slots"] == [(first + timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ")]


def test_a_backfill_killed_after_its_first_slot_is_finished_by_restore_and_the_same_command(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path) -> None:
    # suspended from the start: the controller makes no Job; three slots pass
    body = cronjob_body("resumable", schedule="*/1 * * * *", policy="Forbid", duration=1, suspend=True)
    k8s.batch.create_namespaced_cron_job(namespace, body)
    created = datetime.strptime(read_cronjob(k8s, namespace, "resumable")["metadata"]["creationTimestamp"],
                                "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    first = minute_floor(created) + timedelta(minutes=1)
    slots = [first + timedelta(minutes=i) for i in range(3)]
    sleep_until(slots[-1] + timedelta(seconds=3))
    span = ["--from", slots[0].strftime("%Y-%m-%dT%H:%M:%SZ"), "--to", slots[-1].strftime("%Y-%m-%dT%H:%M:%SZ")]
    # SIGKILL right after the first slot is done (the test-only hook, as kill -9 would)
    r = cronctl(["backfill", "resumable", "-n", namespace, *span, "--yes", "--settle", "1s"], kubeconfig,
                run_dir=tmp_path / "a", CRONCTL_TEST_KILL_AFTER_STEP="slot-done")
    assert r.returncode == -9, (r.returncode, r.stderr)
    cj = read_cronjob(k8s, namespace, "resumable")
    assert cj["spec"]["suspend"] is True and "cronctl.dev/run-id" in cj["metadata"]["annotations"]
    s = cronctl(["status", "resumable", "-n", namespace, "-o", "json"], kubeconfig)
    assert s.returncode == 0 and json.loads(s.stdout)["record"] is not None
    # a second backfill is refused while the record holds the CronJob; restore finishes the run
    r = cronctl(["backfill", "resumable", "-n", namespace, *span, "--yes"], kubeconfig, run_dir=tmp_path / "b")
    assert r.returncode == 3 and "held by run" in r.stderr
    assert cronctl(["restore", "resumable", "-n", namespace, "--yes"], kubeconfig).returncode == 0
    # the same command goes on: the first slot is skipped, the other two run, each once
    r = cronctl(["backfill", "resumable", "-n", namespace, *span, "--yes", "--settle", "1s"], kubeconfig,
                run_dir=tmp_path / "c")
    assert r.returncode == 0, r.stderr
    rec = run_record(tmp_path / "c")
    z_ = [t.strftime("%Y-%m-%dT%H:%M:%SZ") for t in slots]
    assert rec["done"] == z_[1:] and [x["slot"] for x in rec["skipped"]] == z_[:1]
    jobs = by_slot(k8s, namespace)
    assert all(len(jobs.get(t, [])) == 1 for t in z_), jobs


def test_parallel_slots_under_allow_then_resume_catch_up_all_runs_the_rest(kubeconfig: str, namespace: str,
                                                                           k8s: Any, tmp_path: Path) -> None:
    body = cronjob_body("wide", schedule="*/1 * * * *", policy="Allow", duration=8, suspend=True)
    k8s.batch.create_namespaced_cron_job(namespace, body)
    created = datetime.strptime(read_cronjob(k8s, namespace, "wide")["metadata"]["creationTimestamp"],
                                "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    slots = [minute_floor(created) + timedelta(minutes=i) for i in (1, 2, 3)]
    z_ = [t.strftime("%Y-%m-%dT%H:%M:%SZ") for t in slots]
    sleep_until(slots[-1] + timedelta(seconds=3))
    r = cronctl(["backfill", "wide", "-n", namespace, "--slot", z_[0], "--slot", z_[1], "--parallel", "2", "--yes",
                 "--settle", "1s"], kubeconfig, run_dir=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "waiting for 2 Jobs" in r.stderr and run_record(tmp_path)["done"] == z_[:2]
    # both ran at the same time: each started before the other finished
    jobs = {j["metadata"]["name"]: j for j in list_jobs(k8s, namespace)}
    a, b = (jobs[n] for n in sorted(jobs))
    assert a["status"]["startTime"] < b["status"]["completionTime"] and b["status"]["startTime"] < \
        a["status"]["completionTime"]
    assert read_cronjob(k8s, namespace, "wide")["spec"]["suspend"] is True  # it was suspended before
    # resume --catch-up all: the remaining lost slot(s) first, then un-suspended with nothing to catch up
    r = cronctl(["resume", "wide", "-n", namespace, "--catch-up", "all", "--yes"], kubeconfig, run_dir=tmp_path / "r")
    assert r.returncode == 0, r.stderr
    cj = read_cronjob(k8s, namespace, "wide")
    assert cj["spec"]["suspend"] is False
    got = by_slot(k8s, namespace)
    assert all(got.get(t) and len(got[t]) == 1 for t in z_), got
    assert all(len(v) == 1 for v in got.values()), got
