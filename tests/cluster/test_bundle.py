"""`cronctl bundle` against the real control plane (kube-apiserver, controller-manager, podsim).

Setup goes through the kubernetes client and the real kubectl (the manual Job is made exactly as
in docs/BACKGROUND.md §4.4: ``kubectl create job --from``); cronctl runs as a separate process, as an operator
runs it. Each test waits for real minute ticks of the CronJob controller, so the tests run in
parallel groups under xdist.
"""

from __future__ import annotations

import json
import stat
import subprocess
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from cluster_support import cronctl, cronjob_body, early_in_a_minute, run_kubectl, service_account_kubeconfig, wait_for

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "cronctl" / "data" / "bundle.schema.json").read_text())
TOKEN = "tok-4f9a8b7c6d5e"  # a literal env value that must never reach the bundle
LOG = "sync start\nPOST https://bot:hunter2@upstream.example/orders\nAuthorization: Bearer abcdefgh12345678\nsync done"


def cronjob(name: str, schedule: str, *, suspend: bool = False, duration: float = 90, log: str = LOG,
            policy: str = "Forbid") -> dict[str, Any]:
    """The incident's CronJob: Moscow time, a secret-looking literal env value, a chatty log."""
    return cronjob_body(name, schedule=schedule, tz="Europe/Moscow", policy=policy, suspend=suspend,
                        duration=duration, log=log, exit_code=None, job_metadata=None, history=None,
                        successfulJobsHistoryLimit=10,
                        containers=[{"name": "sync", "image": "registry.example/mp-orders-sync:1.4.2",
                                     "env": [{"name": "API_TOKEN", "value": TOKEN},
                                             {"name": "LOG_LEVEL", "value": "info"}]}])


def jobs(k8s: Any, ns: str) -> list[dict[str, Any]]:
    return list(json.loads(k8s.batch.list_namespaced_job(ns, _preload_content=False).data)["items"])


def events(k8s: Any, ns: str) -> list[dict[str, Any]]:
    return list(json.loads(k8s.core.list_namespaced_event(ns, _preload_content=False).data)["items"])


def check_files(out: Path) -> dict[str, Any]:
    """The bundle's common guarantees; returns bundle.json."""
    assert stat.S_IMODE(out.stat().st_mode) == 0o700
    for p in out.rglob("*"):
        assert stat.S_IMODE(p.stat().st_mode) == (0o700 if p.is_dir() else 0o600), p
    r = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=out, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads((out / "bundle.json").read_text())
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)
    for p in out.rglob("*"):
        if p.is_file():
            text = p.read_text(errors="replace")
            assert TOKEN not in text and "hunter2" not in text and "abcdefgh12345678" not in text, p
    return dict(doc)


@pytest.mark.xdist_group("bundle-incident")
def test_the_seed_004_incident_shows_the_overlap_the_duplicate_and_unexpectedjob(
        k8s: Any, kubeconfig: str, namespace: str, tmp_path: Path) -> None:
    # start just after a minute boundary so the manual Job surely runs across the next tick
    early_in_a_minute(lo=2, hi=50)
    # 180 s Jobs: the manual one still runs when the bundle reads it, however slow the waits below
    # (with 90 s it had ended on a loaded machine: the matrix run of stop 44, 1.37.2)
    k8s.batch.create_namespaced_cron_job(namespace, cronjob("mp-orders-sync", "* * * * *", duration=180))
    run_kubectl(kubeconfig, "-n", namespace, "create", "job", "mp-orders-sync-fix", "--from=cronjob/mp-orders-sync")
    # the controller creates the next minute's Job although the manual one runs (Forbid sees
    # only .status.active) and warns UnexpectedJob
    wait_for("a scheduled Job", lambda: [j for j in jobs(k8s, namespace)
                                         if j["metadata"]["name"] != "mp-orders-sync-fix"
                                         and (j.get("status") or {}).get("startTime")], timeout=100, every=1.0)
    wait_for("UnexpectedJob", lambda: [e for e in events(k8s, namespace) if e["reason"] == "UnexpectedJob"],
             timeout=30, every=1.0)
    wait_for("a log line from the manual Job's pod", lambda: [
        p for p in json.loads(k8s.core.list_namespaced_pod(namespace, _preload_content=False).data)["items"]
        if p["metadata"]["name"].startswith("mp-orders-sync-fix")
        and "running" in (((p.get("status") or {}).get("containerStatuses") or [{}])[0].get("state") or {})],
        timeout=30, every=1.0)

    out = tmp_path / "bundle"
    r2 = cronctl(["bundle", "mp-orders-sync", "-n", namespace, "--out", str(out), "-o", "json"], kubeconfig, cwd=tmp_path)
    assert r2.returncode == 0, r2.stderr
    summary = json.loads(r2.stdout)
    assert summary["path"] == str(out) and summary["partial"] is False
    doc = check_files(out)
    cj = doc["cronjobs"][0]

    manual = [j for j in cj["jobs"] if j["origin"] == "manual"]
    scheduled = [j for j in cj["jobs"] if j["origin"] == "scheduled"]
    assert [j["name"] for j in manual] == ["mp-orders-sync-fix"] and scheduled
    assert manual[0]["in_status_active"] is False and manual[0]["scheduled_for"] is None
    first = scheduled[0]
    assert first["scheduled_for"] is not None and first["scheduled_for"].endswith(":00Z")
    # the overlap between the manual Job and the scheduled one
    pair = [o for o in cj["overlaps"] if {n["name"] for n in o["jobs"]} == {"mp-orders-sync-fix", first["name"]}]
    assert pair and pair[0]["seconds"] > 0
    # that scheduled time names the manual Job that ran beside it (one Job stands for the slot)
    occ = [o for o in cj["occurrences"] if o["expected"] == first["scheduled_for"]]
    assert occ and occ[0]["manual_overlap"] == ["mp-orders-sync-fix"], occ
    assert "mp-orders-sync-fix ran at the same time" in occ[0]["reason"]
    # the UnexpectedJob warning, highlighted
    unexpected = [e for e in cj["events"] if e["reason"] == "UnexpectedJob"]
    assert unexpected and unexpected[0]["highlight"] and unexpected[0]["type"] == "Warning"
    assert "mp-orders-sync-fix" in unexpected[0]["message"]
    assert cj["summary"]["unexpected_job_events"] >= 1
    # a running manual Job is one the controller's .status.active does not list (the bundle's own
    # record of the Job says whether it still ran when read)
    assert ("mp-orders-sync-fix" in cj["active"]["not_in_status"]) == bool(manual[0]["running"]), manual[0]
    # who, when, versions
    c = doc["collected"]
    assert c["source"] == "cluster" and c["server_version"].startswith("v1.") and c["by"] not in (None, "unknown")
    assert c["request_count"] >= 6
    # logs read through the API server, secrets masked, same value -> same placeholder
    logs = [lg for lg in cj["logs"] if lg["file"]]
    assert logs, cj["logs"]
    text = (out / logs[0]["file"]).read_text()
    assert "sync start" in text and "https://<redacted:" in text and "Bearer <redacted:" in text
    objs = yaml.safe_load((out / "objects.yaml").read_text())
    kinds = {o["kind"] for o in objs["items"]}
    assert {"CronJob", "Job", "Pod", "Event"} <= kinds
    assert all("managedFields" not in o["metadata"] for o in objs["items"])
    cron = [o for o in objs["items"] if o["kind"] == "CronJob"][0]
    env = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["env"]
    placeholder = env[0]["value"]
    assert placeholder.startswith("<redacted:") and env[1]["value"] == "info"
    pod_envs = [o["spec"]["containers"][0]["env"][0]["value"] for o in objs["items"] if o["kind"] == "Pod"]
    assert pod_envs and set(pod_envs) == {placeholder}
    # the HTML shows the timeline with a manual bar and an overlap
    html = (out / "report.html").read_text()
    assert '<rect class="job manual"' in html, html
    assert '<rect class="overlap"' in html, (cj["overlaps"], [(j["name"], j["started"], j["created"], j["completed"], j["running"]) for j in cj["jobs"]], cj["schedule"]["now"])
    assert "UnexpectedJob" in (out / "REPORT.md").read_text()

    # a per-log cap cuts the logs the real API server returns (limitBytes) and says so
    r4 = cronctl(["bundle", "mp-orders-sync", "-n", namespace, "--out", str(tmp_path / "capped"),
                  "--max-log-bytes", "60", "--since", "1h"], kubeconfig, cwd=tmp_path)
    assert r4.returncode == 0, r4.stderr
    capped = json.loads((tmp_path / "capped" / "bundle.json").read_text())
    clogs = [lg for lg in capped["cronjobs"][0]["logs"] if lg["file"]]
    # the 60th byte falls inside the POST line (after the simulator's start line and "sync
    # start"): whole lines only are kept, so the half credential never reaches the bundle
    assert clogs and all(lg["truncated"] and 0 < lg["bytes"] <= 60 for lg in clogs)
    for lg in clogs:
        text = (tmp_path / "capped" / lg["file"]).read_text()
        assert text.endswith("sync start\n") and len(text.encode()) == lg["bytes"] and "POST" not in text
    assert capped["collected"]["options"]["since_seconds"] == 3600

    # the same objects, dumped by kubectl, give the same analysis offline (logs absent, said so)
    dump = tmp_path / "dump.yaml"
    dump.write_text(run_kubectl(kubeconfig, "-n", namespace, "get", "cronjob,jobs,pods,events", "-o", "yaml").stdout)
    r3 = cronctl(["bundle", "--from-dump", str(dump), "--now", c["now"], "--out", str(tmp_path / "offline")],
                 kubeconfig, cwd=tmp_path)
    assert r3.returncode == 0, r3.stderr
    off = json.loads((tmp_path / "offline" / "bundle.json").read_text())
    ocj = off["cronjobs"][0]
    assert off["logs_note"] and off["collected"]["source"] == "dump"
    assert [(o["expected"], o["verdict"]) for o in ocj["occurrences"] if o["expected"] <= c["now"]][:1] == \
        [(o["expected"], o["verdict"]) for o in cj["occurrences"]][:1]
    names = [tuple(n["name"] for n in o["jobs"]) for o in ocj["overlaps"]]
    assert tuple(n["name"] for n in pair[0]["jobs"]) in names


@pytest.mark.xdist_group("bundle-suspend")
def test_a_suspended_period_shows_lost_runs_and_what_will_never_be_made_up(
        k8s: Any, kubeconfig: str, namespace: str, tmp_path: Path) -> None:
    # @every 15s (robfig ConstantDelaySchedule, accepted by the API) gives several ticks quickly
    k8s.batch.create_namespaced_cron_job(namespace, cronjob("report", "@every 15s", suspend=True, duration=1))
    created = datetime.now(timezone.utc)
    time.sleep(max(0.0, 50 - (datetime.now(timezone.utc) - created).total_seconds()))
    out = tmp_path / "b.tar.gz"
    r = cronctl(["bundle", "report", "-n", namespace, "--out", str(out)], kubeconfig, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "missed-suspended" in r.stdout
    subprocess.run(["tar", "-xzf", str(out), "-C", str(tmp_path)], check=True)
    doc = check_files(tmp_path / "b")
    cj = doc["cronjobs"][0]
    lost = [o for o in cj["occurrences"] if o["verdict"] == "missed-suspended"]
    assert len(lost) >= 3, cj["occurrences"]
    assert all(o["reason"].startswith("suspended (spec.suspend set by") for o in lost)
    assert cj["jobs"] == []
    period = cj["suspended_periods"][0]
    assert period["end"] is None and period["lost"] == len(lost) and period["inferred"] is False
    assert cj["schedule"]["decision"]["decision"] == "suspended"
    # unsuspending now would start only the latest missed time; the others are never made up
    assert cj["schedule"]["if_unsuspended"]["decision"] == "create"
    assert cj["never_made_up"] == [o["expected"] for o in lost][:-1] or \
        len(cj["never_made_up"]) == len(cj["schedule"]["due"]) - 1
    # --all lists the namespace's CronJobs (one list call) and bundles each
    k8s.batch.create_namespaced_cron_job(namespace, cronjob("second", "0 4 * * *", duration=1))
    r2 = cronctl(["bundle", "--all", "-n", namespace, "--out", str(tmp_path / "all"), "-o", "json"],
                 kubeconfig, cwd=tmp_path)
    assert r2.returncode == 0, r2.stderr
    assert [c["name"] for c in json.loads(r2.stdout)["cronjobs"]] == ["report", "second"]


@pytest.mark.xdist_group("bundle-rbac")
def test_a_service_account_without_pods_log_gets_a_partial_bundle_that_says_so(
        k8s: Any, kubeconfig: str, namespace: str, tmp_path: Path) -> None:
    from kubernetes import client

    k8s.batch.create_namespaced_cron_job(namespace, cronjob("nightly", "0 3 * * *", duration=1))
    run_kubectl(kubeconfig, "-n", namespace, "create", "job", "nightly-manual", "--from=cronjob/nightly")
    wait_for("the manual Job to complete", lambda: [
        j for j in jobs(k8s, namespace) if any(c["type"] == "Complete" and c["status"] == "True"
                                               for c in (j.get("status") or {}).get("conditions") or [])],
             timeout=60, every=1.0)
    # a reader who may list everything but not read logs (no pods/log, no secrets)
    k8s.core.create_namespaced_service_account(namespace, {"metadata": {"name": "reader"}})
    rbac = client.RbacAuthorizationV1Api(k8s.api)
    rbac.create_namespaced_role(namespace, {"metadata": {"name": "bundle-reader"}, "rules": [
        {"apiGroups": ["batch"], "resources": ["cronjobs", "jobs"], "verbs": ["get", "list"]},
        {"apiGroups": [""], "resources": ["pods", "events"], "verbs": ["get", "list"]}]})
    rbac.create_namespaced_role_binding(namespace, {
        "metadata": {"name": "bundle-reader"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "bundle-reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": namespace}]})
    sa_kubeconfig = service_account_kubeconfig(k8s, kubeconfig, namespace, "reader", tmp_path / "reader.kubeconfig")

    out = tmp_path / "partial"
    r2 = cronctl(["bundle", "nightly", "--out", str(out)], str(sa_kubeconfig), cwd=tmp_path)
    assert r2.returncode == 0, r2.stderr
    assert "PARTIAL" in r2.stdout and "pods/log" in r2.stdout
    doc = check_files(out)
    assert doc["partial"] is True
    assert doc["collected"]["by"] == f"system:serviceaccount:{namespace}:reader"
    miss = [m for m in doc["missing"] if m["what"] == "pods/log"]
    assert len(miss) == 1 and "forbidden" in miss[0]["reason"]
    cj = doc["cronjobs"][0]
    assert [j["name"] for j in cj["jobs"]] == ["nightly-manual"] and cj["jobs"][0]["outcome"] == "Complete"
    assert cj["logs"] and all(lg["file"] is None and "forbidden" in (lg["missing"] or "") for lg in cj["logs"])
    assert "PARTIAL BUNDLE" in (out / "REPORT.md").read_text()
    assert "PARTIAL BUNDLE" in (out / "report.html").read_text()
    assert not (out / "logs").exists()
    # the Secret API was never touched: the reader may not read secrets and nothing failed on it
    assert not [m for m in doc["missing"] if "secret" in m["what"]]


@pytest.mark.xdist_group("bundle-history-limit")
def test_a_slot_whose_job_the_history_limit_deleted_ran_and_a_manual_job_s_success_is_told(
        k8s: Any, kubeconfig: str, namespace: str, tmp_path: Path) -> None:
    # issue 10 item 5 on the real controller: with successfulJobsHistoryLimit 1 the first scheduled
    # Job is deleted when the second completes (SuccessfulDelete); the bundle must say its slot ran
    body = cronjob("hist", "* * * * *", duration=3, log="hist run")
    body["spec"].update(successfulJobsHistoryLimit=1, failedJobsHistoryLimit=1)
    k8s.batch.create_namespaced_cron_job(namespace, body)

    def deleted() -> list[str]:
        return [e["message"].split()[-1] for e in events(k8s, namespace)
                if e["reason"] == "SuccessfulDelete" and e["involvedObject"]["name"] == "hist"]

    first = wait_for("the history limit to delete the first scheduled Job", deleted, timeout=200, every=2.0)[0]
    # then a manual run while the CronJob is suspended: its completion becomes lastSuccessfulTime,
    # and the limit (1) deletes the second scheduled Job too
    k8s.batch.patch_namespaced_cron_job("hist", namespace, {"spec": {"suspend": True}})
    run_kubectl(kubeconfig, "-n", namespace, "create", "job", "hist-manual", "--from=cronjob/hist")

    def moved() -> str | None:
        m = [j for j in jobs(k8s, namespace) if j["metadata"]["name"] == "hist-manual"]
        done = (m[0].get("status") or {}).get("completionTime") if m else None
        cj = json.loads(k8s.batch.read_namespaced_cron_job("hist", namespace, _preload_content=False).data)
        return done if done and (cj.get("status") or {}).get("lastSuccessfulTime") == done else None

    manual_done = wait_for("lastSuccessfulTime to be the manual Job's completion", moved, timeout=90, every=1.0)
    wait_for("the second scheduled Job to be deleted", lambda: len(deleted()) >= 2 or None, timeout=60, every=1.0)

    out = tmp_path / "bundle"
    r2 = cronctl(["bundle", "hist", "-n", namespace, "--out", str(out)], kubeconfig, cwd=tmp_path)
    assert r2.returncode == 0, r2.stderr
    cj = check_files(out)["cronjobs"][0]
    gone = {g["name"]: g for g in cj["removed_jobs"]}
    assert first in gone and gone[first]["removed_by"] == "history-limit", gone
    assert {"CronJob/SuccessfulCreate", "CronJob/SuccessfulDelete"} <= set(gone[first]["known_from"])
    slot = gone[first]["scheduled_for"]
    occ = [o for o in cj["occurrences"] if o["expected"] == slot]
    assert occ and occ[0]["verdict"] in ("ran", "ran-late") and occ[0]["jobs_gone"] == [first], occ
    assert "deleted by the CronJob controller's history limit" in occ[0]["reason"]
    assert slot not in cj["lost_history"]
    src = cj["checkpoint"]["last_successful_from"]
    assert (src["job"], src["from_manual"], src["time"]) == ("hist-manual", True, manual_done), src
    assert any(n.startswith(f"lastSuccessfulTime {manual_done} comes from the manual Job hist-manual")
               for n in cj["notes"]), cj["notes"]
    # which build ran (the simulator reports imageID sim://<image>)
    [mj] = [j for j in cj["jobs"] if j["name"] == "hist-manual"]
    c = mj["pods"][0]["containers"][0]
    assert (c["image"], c["image_id"], c["exit_code"]) == ("registry.example/mp-orders-sync:1.4.2",
                                                          "sim://registry.example/mp-orders-sync:1.4.2", 0)
    md = (out / "REPORT.md").read_text()
    assert "### Jobs that are gone" in md and f"`{first}`" in md and "not a scheduled run" in md
