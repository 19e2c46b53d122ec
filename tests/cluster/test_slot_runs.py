"""Slot-named manual runs (``run-manual --occurrence T|latest``) on the real controller of the version
under test: the manual Job is THE Job of slot T (the controller's name and annotation), the controller
never makes a second one, ``status.lastScheduleTime`` is T afterwards, and the next slot starts on
time — also on 1.34-1.36, whose controller cannot adopt an existing slot-named Job
(kubernetes/kubernetes#136918) and, without the lastScheduleTime patch, backs off and starts the next
slot late (52 s on 1.36.3; docs/SEMANTICS.md §6.1). The next-slot delay is measured and printed (``-s``: MEASURE lines).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable

import pytest

from cluster_support import (create_cronjob, cronctl, early_in_a_minute, list_jobs, owned_jobs, read_cronjob,
                             read_job, record_annotations, run_record, service_account_kubeconfig, slot_job_name,
                             terminal, wait_for_slot_job)

pytestmark = [pytest.mark.cluster, pytest.mark.compat]  # run on every supported version
UTC = timezone.utc
SCHEDULED_TS = "batch.kubernetes.io/cronjob-scheduled-timestamp"
MAX_NEXT_SLOT_DELAY = 10.0


def z(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def ts(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def server_version(k8s: Any) -> str:
    from kubernetes import client

    return str(client.VersionApi(k8s.api).get_code().git_version)


def standing_for(k8s: Any, ns: str, cj: dict[str, Any], t: datetime) -> list[str]:
    """Names of the Jobs that stand for slot t: its name, or the scheduled-timestamp/occurrence annotation."""
    name = slot_job_name(cj["metadata"]["name"], t)
    out = []
    for j in owned_jobs(k8s, ns, cj):
        a = j["metadata"].get("annotations") or {}
        claims = {ts(v) for v in (a.get(SCHEDULED_TS), a.get("cronctl.dev/occurrence")) if v}
        if j["metadata"]["name"] == name or t in claims:
            out.append(j["metadata"]["name"])
    return sorted(out)


def next_slot_delay(k8s: Any, ns: str, cj: dict[str, Any], t: datetime,
                    also: Callable[[], None] = lambda: None) -> float:
    """Wait for the controller's Job of slot t + 1 min; return its creation delay after the slot (s).
    ``also`` runs on every poll (assertions that must hold the whole time)."""
    nxt = t + timedelta(minutes=1)
    job = wait_for_slot_job(k8s, ns, cj["metadata"]["name"], nxt,
                            timeout=max(5.0, (nxt - datetime.now(UTC)).total_seconds()) + 90, also=also) or {}
    assert ts(job["metadata"]["annotations"][SCHEDULED_TS]) == nxt
    assert "cronctl.dev/run-id" not in job["metadata"]["annotations"]  # the controller's own
    return (ts(job["metadata"]["creationTimestamp"]) - nxt).total_seconds()


def check_slot_job(job: dict[str, Any], cj: dict[str, Any], t: datetime, rec: dict[str, Any]) -> None:
    m = job["metadata"]
    a = m["annotations"]
    assert m["name"] == slot_job_name(cj["metadata"]["name"], t)
    assert a[SCHEDULED_TS] == z(t)  # no timeZone: the controller writes UTC with Z
    assert a["cronjob.kubernetes.io/instantiate"] == "manual"
    assert a["cronctl.dev/occurrence"] == z(t) and a["cronctl.dev/run-id"] == rec["run_id"]
    assert m["ownerReferences"][0]["uid"] == cj["metadata"]["uid"]
    for c in job["spec"]["template"]["spec"]["containers"] + job["spec"]["template"]["spec"]["initContainers"]:
        assert {"name": "CRONCTL_OCCURRENCE", "value": z(t)} in c["env"], c["name"]
    assert terminal(job) == "Complete"


def measure(k8s: Any, what: str, delay: float) -> None:
    print(f"\nMEASURE {server_version(k8s)} {what}: next slot's Job created {delay:.1f} s after its time")


def test_the_latest_slot_run_is_the_slots_only_job_and_the_next_slot_starts_on_time(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path) -> None:
    # A */1 CronJob created just after a minute boundary T (the controller never runs T: it was
    # created after it); the on-call engineer runs T by hand.
    t = early_in_a_minute()
    cj = create_cronjob(k8s, namespace, "tick", schedule="*/1 * * * *", duration=3)
    # (T is named: `--occurrence latest` never picks a slot before the CronJob's creation, issue 34)
    r = cronctl(["run-manual", "tick", "-n", namespace, "--occurrence", z(t), "--yes", "--settle", "2s",
                 "-o", "json"], kubeconfig, run_dir=tmp_path)
    finished = datetime.now(UTC)
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert rec == run_record(tmp_path)
    assert rec["slot"]["at"] == z(t)
    assert rec["job_name"] == slot_job_name("tick", t) and rec["occurrence"] == z(t)
    assert rec["plan"]["slot"]["job_name"] == rec["job_name"] and rec["plan"]["last_schedule_time"]["patch"] is True
    assert rec["last_schedule_time"]["patched"] is True and rec["last_schedule_time"]["value"] == z(t)
    assert f"slot {z(t)}" in r.stderr and "lastScheduleTime" in r.stderr  # the plan says both
    assert finished < t + timedelta(minutes=1), "the run must end before the next slot for this test to mean much"

    check_slot_job(read_job(k8s, namespace, slot_job_name("tick", t)) or {}, cj, t, rec)
    after = read_cronjob(k8s, namespace, "tick")
    assert after["status"]["lastScheduleTime"] == z(t)
    assert after["spec"]["suspend"] is False and record_annotations(after) == {}

    def one_job_for_t() -> None:
        assert standing_for(k8s, namespace, cj, t) == [slot_job_name("tick", t)]

    delay = next_slot_delay(k8s, namespace, cj, t, also=one_job_for_t)
    measure(k8s, "unsuspended CronJob, run-manual --occurrence latest", delay)
    assert delay <= MAX_NEXT_SLOT_DELAY
    one_job_for_t()
    assert ts(read_cronjob(k8s, namespace, "tick")["status"]["lastScheduleTime"]) >= t + timedelta(minutes=1)


def test_a_missed_slot_run_by_hand_on_a_suspended_cronjob_is_never_wanted_again(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path) -> None:
    # The CronJob is suspended at slot T (created before it), so on un-suspend the controller wants
    # T. After the manual run for T, lastScheduleTime = T tells it T is done; without it, 1.34-1.36
    # meet the slot-named Job, cannot adopt it, back off and start the next slot late.
    cj = create_cronjob(k8s, namespace, "held", schedule="*/1 * * * *", suspend=True, duration=3)
    t = early_in_a_minute(after=ts(cj["metadata"]["creationTimestamp"]))
    version = server_version(k8s)

    # an operator without the cronjobs/status permission is told what this version's controller does
    operator_kubeconfig = operator_without_status(k8s, kubeconfig, namespace, tmp_path)
    d = cronctl(["run-manual", "held", "-n", namespace, "--occurrence", "latest", "--dry-run"],
                str(operator_kubeconfig), run_dir=tmp_path / "dry")
    assert d.returncode == 0, d.stderr
    plan = " ".join(d.stderr.split())
    assert "NOT patched (no permission to patch cronjobs/status)" in plan
    adopts = "the controller adopts it" in plan
    assert adopts is version.startswith("v1.37"), plan
    assert ("retries with back-off" in plan) is (not adopts)
    assert "only when confirmed" in plan

    r = cronctl(["run-manual", "held", "-n", namespace, "--occurrence", z(t), "--yes", "--settle", "2s",
                 "-o", "json"], kubeconfig, run_dir=tmp_path / "run")
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert rec["slot"]["at"] == z(t) and rec["slot"]["latest"] is False
    assert rec["last_schedule_time"]["patched"] is True and rec["last_schedule_time"]["previous"] is None
    check_slot_job(read_job(k8s, namespace, slot_job_name("held", t)) or {}, cj, t, rec)
    after = read_cronjob(k8s, namespace, "held")
    assert after["spec"]["suspend"] is True and record_annotations(after) == {}  # it was suspended before
    assert after["status"]["lastScheduleTime"] == z(t)
    # the controller's answer, asked by the restore: nothing to catch up
    assert rec["prediction"]["decision"] != "create", rec["prediction"]

    if datetime.now(UTC) >= t + timedelta(seconds=50):
        pytest.fail("the run took too long: the next slot is too close to tell a late start")
    warned_before = warnings(k8s, namespace)
    unsuspended = datetime.now(UTC).replace(microsecond=0)
    k8s.batch.patch_namespaced_cron_job("held", namespace, {"spec": {"suspend": False}})

    def one_job_for_t_and_no_back_off() -> None:
        assert standing_for(k8s, namespace, cj, t) == [slot_job_name("held", t)]

    delay = next_slot_delay(k8s, namespace, cj, t, also=one_job_for_t_and_no_back_off)
    measure(k8s, "suspended CronJob, slot run by hand, then un-suspended", delay)
    assert delay <= MAX_NEXT_SLOT_DELAY
    one_job_for_t_and_no_back_off()
    # No new Warning after the un-suspend. (While the manual Job ran, controller syncs warned
    # UnexpectedJob about it: an unfinished child not in .status.active, as for any manual Job.
    # Timestamps have 1 s resolution: a warning is new if it was not there, or counted less, before
    # the un-suspend and it was last seen in a later second.)
    late = [(k, v) for k, v in warnings(k8s, namespace).items()
            if v[0] > warned_before.get(k, (0, ""))[0] and ts(v[1]) > unsuspended]
    assert late == [], late


def warnings(k8s: Any, ns: str) -> dict[tuple[str, str], tuple[int, str]]:
    """Warning events by (reason, message): (count, last seen)."""
    evs = json.loads(k8s.core.list_namespaced_event(ns, _preload_content=False).data)["items"]
    return {(str(e.get("reason")), str(e.get("message"))): (int(e.get("count") or 1),
                                                           str(e.get("lastTimestamp") or e.get("eventTime")))
            for e in evs if e.get("type") == "Warning"}


def operator_without_status(k8s: Any, kubeconfig: str, ns: str, tmp_path: Path) -> Path:
    """A ServiceAccount with examples/rbac-operator.yaml's rules minus cronjobs/status."""
    from kubernetes import client

    k8s.core.create_namespaced_service_account(ns, {"metadata": {"name": "oncall"}})
    rbac = client.RbacAuthorizationV1Api(k8s.api)
    rbac.create_namespaced_role(ns, {"metadata": {"name": "oncall"}, "rules": [
        {"apiGroups": ["batch"], "resources": ["cronjobs"], "verbs": ["get", "patch"]},
        {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["get", "list", "watch", "create"]},
        {"apiGroups": [""], "resources": ["pods", "events"], "verbs": ["list"]},
        {"apiGroups": [""], "resources": ["pods/log"], "verbs": ["get"]}]})
    rbac.create_namespaced_role_binding(ns, {
        "metadata": {"name": "oncall"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "oncall"},
        "subjects": [{"kind": "ServiceAccount", "name": "oncall", "namespace": ns}]})
    return service_account_kubeconfig(k8s, kubeconfig, ns, "oncall", tmp_path / "oncall.kubeconfig")


def _job_for(cj: dict[str, Any], name: str, annotations: dict[str, str]) -> dict[str, Any]:
    tmpl = cj["spec"]["jobTemplate"]
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "annotations": annotations, "ownerReferences": [
                {"apiVersion": "batch/v1", "kind": "CronJob", "name": cj["metadata"]["name"],
                 "uid": cj["metadata"]["uid"], "controller": True}]},
            "spec": tmpl["spec"]}


NEW_YEAR = datetime(datetime.now(UTC).year, 1, 1, tzinfo=UTC)  # the latest slot of "0 0 1 1 *"


@pytest.mark.parametrize("how", ["slot-name", "scheduled-timestamp", "occurrence"])
def test_a_job_that_already_stands_for_the_slot_stops_the_run_before_anything_changes(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path, how: str) -> None:
    cj = create_cronjob(k8s, namespace, "yearly", schedule="0 0 1 1 *")  # its latest slot: January 1st
    existing = {"slot-name": (slot_job_name("yearly", NEW_YEAR), {}),
                "scheduled-timestamp": ("yearly-by-controller", {SCHEDULED_TS: z(NEW_YEAR)}),
                # the same instant written with another offset
                "occurrence": ("yearly-manual", {"cronctl.dev/occurrence": (NEW_YEAR + timedelta(hours=3)).strftime(
                    "%Y-%m-%dT%H:%M:%S+03:00")})}[how]
    k8s.batch.create_namespaced_job(namespace, _job_for(cj, *existing))
    before = read_cronjob(k8s, namespace, "yearly")
    # (January 1st is named: it is before the CronJob's creation, which `--occurrence latest` never picks)
    r = cronctl(["run-manual", "yearly", "-n", namespace, "--occurrence", z(NEW_YEAR), "--yes", "--settle", "1s"],
                kubeconfig, run_dir=tmp_path)
    assert r.returncode == 3, r.stderr
    assert f"job {namespace}/{existing[0]} " in r.stderr and "nothing was changed" in r.stderr
    assert "Traceback" not in r.stderr and len([ln for ln in r.stderr.splitlines() if ln.startswith("error:")]) == 1
    after = read_cronjob(k8s, namespace, "yearly")
    assert after["spec"] == before["spec"] and after["spec"]["suspend"] is False
    # (the controller may write status meanwhile: lastSuccessfulTime when that Job completes)
    assert record_annotations(after) == {} and after["metadata"]["generation"] == before["metadata"]["generation"]
    assert after["metadata"].get("annotations") == before["metadata"].get("annotations")
    assert [j["metadata"]["name"] for j in list_jobs(k8s, namespace)] == [existing[0]]
    assert list(tmp_path.iterdir()) == []  # not even a run directory


def test_an_instant_that_is_not_a_slot_exits_5_and_ad_hoc_keeps_the_fixed_name(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path) -> None:
    before = create_cronjob(k8s, namespace, "hourly", schedule="15 * * * *", tz="Europe/Berlin")
    now = datetime.now(UTC)
    off_slot = now.replace(minute=40, second=0, microsecond=0) - timedelta(hours=1)
    r = cronctl(["run-manual", "hourly", "-n", namespace, "--occurrence", z(off_slot), "--yes"], kubeconfig,
                run_dir=tmp_path)
    assert r.returncode == 5, r.stderr
    err = [ln for ln in r.stderr.splitlines() if ln.startswith("error:")]
    assert len(err) == 1 and "is not a slot" in err[0] and "before and" in err[0] and "after" in err[0], r.stderr
    assert ":15:00+" in err[0]  # the nearest slots, in the CronJob's zone
    assert "Traceback" not in r.stderr

    future = now.replace(minute=15, second=0, microsecond=0) + timedelta(hours=2)
    r = cronctl(["run-manual", "hourly", "-n", namespace, "--occurrence", z(future), "--yes"], kubeconfig,
                run_dir=tmp_path)
    assert r.returncode == 5 and "in the future" in r.stderr, r.stderr

    r = cronctl(["run-manual", "hourly", "-n", namespace, "--occurrence", "latest", "--job-name", "mine", "--yes"],
                kubeconfig, run_dir=tmp_path)
    assert r.returncode == 5 and "--job-name" in r.stderr, r.stderr

    after = read_cronjob(k8s, namespace, "hourly")
    assert after["spec"] == before["spec"] and record_annotations(after) == {}
    assert list_jobs(k8s, namespace) == [] and list(tmp_path.iterdir()) == []

    # --ad-hoc-occurrence: today's behaviour (fixed name, annotation), with a warning
    d = cronctl(["run-manual", "hourly", "-n", namespace, "--occurrence", z(off_slot), "--ad-hoc-occurrence",
                 "--dry-run", "-o", "json"], kubeconfig, run_dir=tmp_path)
    assert d.returncode == 0, d.stderr
    job = json.loads(d.stdout)
    assert job["metadata"]["name"] == "hourly-manual"
    assert job["metadata"]["annotations"]["cronctl.dev/occurrence"] == z(off_slot)
    assert SCHEDULED_TS not in job["metadata"]["annotations"]
    assert "the controller does not know this instant" in " ".join(d.stderr.split())


def test_control_without_the_status_permission_the_next_slot_is_late_before_1_37(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path) -> None:
    """The same situation as above, run by an operator who may not patch cronjobs/status: the run
    goes on with --yes, lastScheduleTime is NOT set, and the record says so. That is what the
    patch saves us from: 1.37 adopts the slot-named Job and the next slot is on time; 1.34-1.36
    back off and it is late."""
    from cronctl.versions import behaviour_for

    version = server_version(k8s)
    adopts = behaviour_for(version).adopts_slot_job
    cj = create_cronjob(k8s, namespace, "bare", schedule="*/1 * * * *", suspend=True, duration=2)
    operator_kubeconfig = operator_without_status(k8s, kubeconfig, namespace, tmp_path)
    t = early_in_a_minute(after=ts(cj["metadata"]["creationTimestamp"]))
    name = slot_job_name("bare", t)
    r = cronctl(["run-manual", "bare", "-n", namespace, "--occurrence", "latest", "--yes", "--settle", "1s",
                 "-o", "json"], str(operator_kubeconfig), run_dir=tmp_path / "run")
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert rec["job_name"] == name and rec["plan"]["last_schedule_time"]["permission"] is False
    assert rec["last_schedule_time"]["patched"] is False
    assert rec["last_schedule_time"]["why"] == "no permission to patch cronjobs/status"
    warned = " ".join(r.stderr.split())
    assert "lastScheduleTime not set to" in warned and ("adopts it" in warned) is bool(adopts)
    assert not (read_cronjob(k8s, namespace, "bare").get("status") or {}).get("lastScheduleTime")

    k8s.batch.patch_namespaced_cron_job("bare", namespace, {"spec": {"suspend": False}})
    nxt = t + timedelta(minutes=1)
    give_up = nxt + timedelta(seconds=150)
    job = wait_for_slot_job(k8s, namespace, "bare", nxt, (give_up - datetime.now(UTC)).total_seconds(),
                            required=False)
    assert standing_for(k8s, namespace, cj, t) == [name]  # never a second Job for T, on any version
    if job is None:
        print(f"\nMEASURE {version} control, no cronjobs/status permission (lastScheduleTime not set): next "
              f"slot's Job not created within {(give_up - nxt).total_seconds():.0f} s of its time")
        assert not adopts, "1.37 adopts the Job: the next slot must be on time"
        return
    delay = (ts(job["metadata"]["creationTimestamp"]) - nxt).total_seconds()
    print(f"\nMEASURE {version} control, no cronjobs/status permission (lastScheduleTime not set): next slot's "
          f"Job created {delay:.1f} s after its time")
    # 1.37 adopts the Job: the next slot is on time. Older versions retry the create of T with
    # exponential back-off (their requeue for the next slot is lost), so the next slot waits for a
    # retry: 26-31 s late in four quiet runs here, but on time when a retry happened to fall just
    # after it (a loaded machine): measured and printed, asserted only for the adopting versions
    if adopts:
        assert delay <= MAX_NEXT_SLOT_DELAY, delay
