"""The ledger's proof on the real controller (issue 27): a `*/1` CronJob with history limits of 1
runs six slots under two `cronctl record`s side by side, one writing SQLite and one PostgreSQL. One slot is held
by Forbid (a Job that runs 90 s, past startingDeadlineSeconds), one is lost to a suspend made by hand.
Then every Job and Event of the namespace is deleted, as the history limit and the event TTL do.
`history --ledger` must still give every slot's verdict and Job name, from either ledger, where the
cluster alone can no longer say; `bundle --ledger` must carry the Jobs' logs, `status --ledger`
the same verdicts, and `backfill --missed --ledger` must choose only the two lost slots.

The slot times are read from the Jobs the controller created, never assumed."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from cluster_support import (ROOT, cronctl, cronjob_body, list_jobs, sleep_until, slot_job_name, start_cronctl,
                             wait_for)

pytestmark = [pytest.mark.cluster, pytest.mark.compat]
UTC = timezone.utc
SCHEMA = json.loads((ROOT / "cronctl" / "data" / "history.schema.json").read_text())
TS = "batch.kubernetes.io/cronjob-scheduled-timestamp"
SIM_DURATION = "sim.cronctl.dev/duration-seconds"


def z(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def slot_of(job: dict[str, Any]) -> datetime:
    return datetime.strptime(job["metadata"]["annotations"][TS], "%Y-%m-%dT%H:%M:%S%z").astimezone(UTC)


def scheduled(k8s: Any, ns: str) -> dict[datetime, dict[str, Any]]:
    return {slot_of(j): j for j in list_jobs(k8s, ns) if TS in (j["metadata"].get("annotations") or {})}


def duration_of(job: dict[str, Any]) -> str | None:
    """The simulated run time the Job was made with (its pod template's annotation)."""
    return ((job["spec"]["template"].get("metadata") or {}).get("annotations") or {}).get(SIM_DURATION)


def set_duration(k8s: Any, ns: str, seconds: int) -> None:
    k8s.batch.patch_namespaced_cron_job("ledg", ns, {"spec": {"jobTemplate": {"spec": {"template": {
        "metadata": {"annotations": {SIM_DURATION: str(seconds)}}}}}}})


def history(kubeconfig: str, ns: str, *extra: str) -> dict[str, dict[str, Any]]:
    r = cronctl(["history", "ledg", "-n", ns, "--since", "30m", "-o", "json", *extra], kubeconfig)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, SCHEMA)
    return {s["slot"]: s for s in doc["cronjobs"][0]["slots"]}


def test_the_ledger_keeps_every_slot_after_kubernetes_deletes_the_evidence(kubeconfig: str, namespace: str,
                                                                          k8s: Any, postgres_url: str,
                                                                          tmp_path: Path) -> None:
    k8s.batch.create_namespaced_cron_job(namespace, cronjob_body(
        "ledg", schedule="*/1 * * * *", policy="Forbid", history=1, deadline=20, duration=2,
        log="hello from the ledger job\nDB_PASSWORD=hunter2-is-not-a-password"))
    # one recorder per backend, side by side over the same six minutes (each ledger has its own Lease)
    ledgers = {"sqlite": f"sqlite:///{tmp_path / 'ledger.sqlite'}", "postgresql": postgres_url}
    recs = {b: start_cronctl(["record", "-n", namespace, "--ledger", url, "--status-every", "20s"], kubeconfig,
                             run_dir=tmp_path / f"rec-{b}") for b, url in ledgers.items()}
    try:
        jobs: dict[datetime, dict[str, Any]] = {}

        def seen() -> dict[datetime, dict[str, Any]]:  # every scheduled Job seen so far (the history limit is 1)
            jobs.update(scheduled(k8s, namespace))
            return jobs

        def slot_job(k: int) -> dict[str, Any] | None:
            return seen().get(t0 + timedelta(minutes=k))

        def first_long() -> dict[str, Any] | None:
            return next((j for _, j in sorted(seen().items()) if duration_of(j) == "90"), None)

        wait_for("the first scheduled Job", seen, 90)
        set_duration(k8s, namespace, 90)  # t1's Job runs past t2 + startingDeadlineSeconds: Forbid holds t2
        # t1 is the first Job made from the 90 s template, not the Job after the first one seen: on a
        # loaded machine (CI) the first Job was seen only as the next slot's Job was made from the old
        # template, and the test waited for a Forbid that could not come
        t0 = slot_of(wait_for("the first 90 s Job", first_long, 140)) - timedelta(minutes=1)
        set_duration(k8s, namespace, 2)
        wait_for("t3's Job", lambda: slot_job(3), 160)
        k8s.batch.patch_namespaced_cron_job("ledg", namespace, {"spec": {"suspend": True}})  # by hand, over t4
        sleep_until(t0 + timedelta(minutes=4, seconds=30))  # past the deadline: un-suspending makes no catch-up
        k8s.batch.patch_namespaced_cron_job("ledg", namespace, {"spec": {"suspend": False}})
        wait_for("t5's Job to finish", lambda: any(c["type"] == "Complete" for c in ((slot_job(5) or {}).get(
            "status") or {}).get("conditions") or []), 90)
        time.sleep(5)  # the recorder takes the log tail when it sees the Job finish
        # what the history limit and the event TTL do, for all of them at once
        k8s.batch.delete_collection_namespaced_job(namespace, propagation_policy="Background")
        k8s.core.delete_collection_namespaced_event(namespace)
        wait_for("the Jobs to be gone", lambda: not list_jobs(k8s, namespace), 60)
        time.sleep(3)
    finally:
        errs = {}
        for b, rec in recs.items():
            rec.send_signal(signal.SIGTERM)
            try:
                errs[b] = rec.communicate(timeout=60)[1]
            except subprocess.TimeoutExpired:
                rec.kill()
                raise
    for b, rec in recs.items():
        assert rec.returncode == 0, errs[b]
        assert "rows written" in errs[b] and "Traceback" not in errs[b]
    for ledger_url in ledgers.values():
        _judged(kubeconfig, namespace, ledger_url, t0, jobs, tmp_path)


def _judged(kubeconfig: str, namespace: str, ledger_url: str, t0: datetime, jobs: dict[datetime, dict[str, Any]],
            tmp_path: Path) -> None:
    """What history, status, bundle and backfill say from ``ledger_url`` once the cluster lost it all."""
    tmp_path = tmp_path / ledger_url.split(":")[0]
    tmp_path.mkdir(exist_ok=True)
    slots = [t0 + timedelta(minutes=k) for k in range(6)]
    want = ["ran", "ran", "skipped-forbid", "ran", "missed-suspended", "ran"]
    names = {t: jobs[t]["metadata"]["name"] for t in slots if t in jobs}
    assert sorted(names) == [slots[k] for k in (0, 1, 3, 5)]  # the controller did what the test set up

    got = history(kubeconfig, namespace, "--ledger", ledger_url)
    assert [got[z(t)]["verdict"] for t in slots] == want, {z(t): (got[z(t)]["verdict"], got[z(t)]["reason"])
                                                           for t in slots}
    for t, name in names.items():
        assert got[z(t)]["jobs"] == [name]
        assert [d["source"] for d in got[z(t)]["job_details"]] == ["ledger"]
    assert "recorded in the ledger" in got[z(slots[4])]["reason"]
    # the cluster alone has lost it: no Job and no event is left to say that t0..t5 ran
    bare = history(kubeconfig, namespace)
    assert not any(bare[z(t)]["verdict"] == "ran" for t in slots)

    # the ledger alone (no API request), by the cluster's name the recorder used (the context)
    context = yaml.safe_load(Path(kubeconfig).read_text())["current-context"]
    alone = history(kubeconfig, namespace, "--ledger", ledger_url, "--cluster", context)
    assert [alone[z(t)]["verdict"] for t in slots] == want

    out = tmp_path / "bundle"
    r = cronctl(["bundle", "ledg", "-n", namespace, "--ledger", ledger_url, "--out", str(out), "-o", "json"],
                kubeconfig)
    assert r.returncode == 0, r.stderr
    doc = json.loads((out / "bundle.json").read_text())
    logs = [lg for cj in doc["cronjobs"] for lg in cj["logs"] if lg["container"] == "main"]
    logged = {lg["pod"].rsplit("-", 1)[0] for lg in logs}
    # the four Jobs the cluster deleted, from the ledger; the CronJob runs on meanwhile, so a Job of
    # a later slot may be live in the cluster by now (the bundle reads its logs there)
    # (and a Job of a slot before t0, when the first 90 s Job was not the second one): those of t0..t5
    assert logged & {slot_job_name("ledg", t) for t in slots} == set(names.values()), logged
    logs = [lg for lg in logs if lg["pod"].rsplit("-", 1)[0] in names.values()]
    text = (out / logs[0]["file"]).read_text()
    assert "hello from the ledger job" in text and "hunter2-is-not-a-password" not in text

    # status judges its latest slots with the ledger too
    r = cronctl(["status", "ledg", "-n", namespace, "--ledger", ledger_url, "-o", "json"], kubeconfig)
    assert r.returncode == 0, r.stderr
    recent = {s["slot"]: s["verdict"] for s in json.loads(r.stdout)["recent_slots"]}
    assert all(recent[z(t)] == v for t, v in zip(slots, want) if z(t) in recent) and len(recent) >= 5
    # backfill --missed runs only what was lost: with the ledger, not the slots whose Jobs were deleted
    r = cronctl(["backfill", "ledg", "-n", namespace, "--missed", "--since", "30m", "--ledger", ledger_url,
                 "--dry-run", "--yes", "-o", "json"], kubeconfig, run_dir=tmp_path / "backfill")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["slots"] == [z(slots[2]), z(slots[4])]
