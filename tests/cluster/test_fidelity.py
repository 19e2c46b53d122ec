"""The local control plane is the real thing: the real CronJob and Job controllers act on it.

These tests prove what cronctl's other cluster tests rely on (issue 3, item 4): scheduled Jobs
come from the real cronjob controller with its naming and annotation, the incident of docs/BACKGROUND.md §4.4
reproduces, Jobs fail by the real backoff accounting, and logs flow through the API server from
the pod simulator's kubelet endpoint.

The two CronJob scenarios wait for a minute boundary; a module fixture creates both at once so
they share one wait (and ``xdist_group`` keeps them on one worker under ``--dist loadgroup``).
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml

from cluster_support import run_kubectl, slot_job_name, wait_for

RESOURCES = Path(__file__).resolve().parent.parent / "resources" / "fidelity"
SCHEDULED_AT = "batch.kubernetes.io/cronjob-scheduled-timestamp"

pytestmark = [pytest.mark.cluster, pytest.mark.compat]  # run on every supported version


def manifest(name: str) -> dict[str, Any]:
    return dict(yaml.safe_load((RESOURCES / name).read_text()))


def condition(obj: Any, ctype: str) -> Any:
    for c in (obj.status.conditions or []) if obj.status else []:
        if c.type == ctype and c.status == "True":
            return c
    return None


# ---------------------------------------------------------------------------------------------
# CronJob scenarios (a) and (b): set up together, one minute-boundary wait for both
# ---------------------------------------------------------------------------------------------

class Scenarios:
    def __init__(self, every_minute_ns: str, incident_ns: str, manual_created: datetime):
        self.every_minute_ns = every_minute_ns
        self.incident_ns = incident_ns
        self.manual_created = manual_created


@pytest.fixture(scope="module")
def cronjob_scenarios(k8s: Any, kubeconfig: str, namespace_factory: Any) -> Iterator[Scenarios]:
    # a manual Job made in the last seconds of a minute could be overtaken by that minute's
    # scheduled Job; start just after the boundary instead so the order is certain
    sec = datetime.now(timezone.utc).second
    if sec >= 55:
        time.sleep(61 - sec)
    ns_a = namespace_factory.create("every-minute")
    ns_b = namespace_factory.create("seed-004-incident")
    k8s.batch.create_namespaced_cron_job(ns_a, manifest("every-minute-cronjob.yaml"))
    k8s.batch.create_namespaced_cron_job(ns_b, manifest("mp-orders-sync-cronjob.yaml"))
    # exactly what the on-call engineer ran in that incident
    run_kubectl(kubeconfig, "-n", ns_b, "create", "job", "mp-orders-sync-fix", "--from=cronjob/mp-orders-sync")
    manual = k8s.batch.read_namespaced_job("mp-orders-sync-fix", ns_b)
    yield Scenarios(ns_a, ns_b, manual.metadata.creation_timestamp)
    namespace_factory.delete(ns_a)
    namespace_factory.delete(ns_b)


def scheduled_jobs(k8s: Any, ns: str) -> list[Any]:
    return [j for j in k8s.batch.list_namespaced_job(ns).items if SCHEDULED_AT in (j.metadata.annotations or {})]


@pytest.mark.xdist_group("minute-boundary")
def test_a_every_minute_cronjob_gets_a_scheduled_job_named_by_unix_minutes_that_completes(
        k8s: Any, cronjob_scenarios: Scenarios) -> None:
    ns = cronjob_scenarios.every_minute_ns
    jobs = wait_for("the controller's first scheduled Job", lambda: scheduled_jobs(k8s, ns), timeout=90)
    job = jobs[0]
    slot = datetime.fromisoformat(job.metadata.annotations[SCHEDULED_AT])
    assert slot.second == 0 and slot.microsecond == 0
    assert slot.utcoffset() == timedelta(0)  # no timeZone: the controller-manager's zone (UTC)
    assert job.metadata.name == slot_job_name("every-minute", slot)
    owner = job.metadata.owner_references[0]
    assert (owner.kind, owner.name, owner.controller, owner.block_owner_deletion) == \
        ("CronJob", "every-minute", True, True)
    # the controller creates the Job, then writes the CronJob's status: a reader can come between
    lst = wait_for("status.lastScheduleTime",
                   lambda: k8s.batch.read_namespaced_cron_job("every-minute", ns).status.last_schedule_time, timeout=30)
    assert lst == slot
    done = wait_for("the scheduled Job to complete",
                    lambda: condition(k8s.batch.read_namespaced_job(job.metadata.name, ns), "Complete"), timeout=30)
    assert done.status == "True"
    finished = k8s.batch.read_namespaced_job(job.metadata.name, ns)
    assert finished.status.succeeded == 1


@pytest.mark.xdist_group("minute-boundary")
def test_b_forbid_cronjob_still_starts_its_scheduled_job_while_a_manual_job_runs(
        k8s: Any, cronjob_scenarios: Scenarios) -> None:
    ns = cronjob_scenarios.incident_ns
    manual = k8s.batch.read_namespaced_job("mp-orders-sync-fix", ns)
    # the manual Job is what `kubectl create job --from` makes (docs/SEMANTICS.md section 5)
    assert manual.metadata.annotations.get("cronjob.kubernetes.io/instantiate") == "manual"
    assert SCHEDULED_AT not in manual.metadata.annotations
    owner = manual.metadata.owner_references[0]
    assert (owner.kind, owner.name, owner.controller, owner.block_owner_deletion) == \
        ("CronJob", "mp-orders-sync", True, None)

    jobs = wait_for("the scheduled Job despite Forbid", lambda: scheduled_jobs(k8s, ns), timeout=90)
    job = jobs[0]
    slot = datetime.fromisoformat(job.metadata.annotations[SCHEDULED_AT])
    assert slot.utcoffset() == timedelta(hours=3)  # the CronJob's zone, Europe/Moscow
    assert job.metadata.name == slot_job_name("mp-orders-sync", slot)
    assert job.metadata.creation_timestamp > cronjob_scenarios.manual_created

    # ... while the manual one was still running (its pod runs 150 s)
    manual = k8s.batch.read_namespaced_job("mp-orders-sync-fix", ns)
    assert (manual.status.active or 0) == 1
    assert not condition(manual, "Complete") and not condition(manual, "Failed")
    cj = k8s.batch.read_namespaced_cron_job("mp-orders-sync", ns)
    active = {r.name for r in cj.status.active or []}
    assert "mp-orders-sync-fix" not in active  # the manual Job never blocks Forbid

    def unexpected_job_events() -> list[Any]:
        evs = k8s.core.list_namespaced_event(ns, field_selector="involvedObject.name=mp-orders-sync,reason=UnexpectedJob")
        return evs.items

    events = wait_for("an UnexpectedJob event", unexpected_job_events, timeout=30)
    ev = events[0]
    assert ev.type == "Warning"
    assert ev.involved_object.kind == "CronJob"
    assert ev.source.component == "cronjob-controller"
    assert ev.message == "Saw a job that the controller did not create or forgot: mp-orders-sync-fix"


# ---------------------------------------------------------------------------------------------
# Jobs and pods: seconds, not minutes
# ---------------------------------------------------------------------------------------------

def test_c_job_with_backoff_limit_1_fails_after_two_failed_pods(k8s: Any, namespace: str) -> None:
    k8s.batch.create_namespaced_job(namespace, manifest("failing-job.yaml"))
    # first pod fails after 1 s, the controller waits its 10 s pod-failure backoff, second fails
    failed = wait_for("Job always-fails to fail",
                      lambda: condition(k8s.batch.read_namespaced_job("always-fails", namespace), "Failed"),
                      timeout=60)
    assert failed.reason == "BackoffLimitExceeded"
    job = k8s.batch.read_namespaced_job("always-fails", namespace)
    assert job.status.failed == 2 and not job.status.succeeded
    pods = k8s.core.list_namespaced_pod(namespace, label_selector="job-name=always-fails").items
    assert len(pods) == 2
    for p in pods:
        assert p.status.phase == "Failed"
        term = p.status.container_statuses[0].state.terminated
        assert (term.exit_code, term.reason) == (3, "Error")


def _pod_phase(k8s: Any, ns: str, name: str, phase: str) -> Any:
    p = k8s.core.read_namespaced_pod(name, ns)
    return p if p.status.phase == phase else None


def test_d_pod_log_returns_the_simulated_text_through_the_api_server(k8s: Any, namespace: str) -> None:
    k8s.core.create_namespaced_pod(namespace, manifest("log-pod.yaml"))
    wait_for("pod talker to succeed", lambda: _pod_phase(k8s, namespace, "talker", "Succeeded"), timeout=30)
    text = k8s.core.read_namespaced_pod_log("talker", namespace)
    lines = text.splitlines()
    assert lines[1:3] == ["fetched 42 orders", "pushed 42 orders to the marketplace"]
    assert "started" in lines[0] and "exited with code 0" in lines[-1] and len(lines) == 4
    assert k8s.core.read_namespaced_pod_log("talker", namespace, tail_lines=2).splitlines() == lines[-2:]
    assert k8s.core.read_namespaced_pod_log("talker", namespace, limit_bytes=7) == text[:7]
    stamped = k8s.core.read_namespaced_pod_log("talker", namespace, timestamps=True).splitlines()
    for raw, line in zip(stamped, lines):
        ts, rest = raw.split(" ", 1)
        assert rest == line
        assert abs(datetime.fromisoformat(ts.replace("Z", "+00:00")[:26] + "+00:00")
                   - datetime.now(timezone.utc)) < timedelta(minutes=2)


def test_on_failure_pod_restarts_in_place_and_previous_log_is_served(k8s: Any, namespace: str) -> None:
    k8s.core.create_namespaced_pod(namespace, manifest("crashing-pod.yaml"))

    def restarted() -> Any:
        p = k8s.core.read_namespaced_pod("crasher", namespace)
        cs = (p.status.container_statuses or [None])[0]
        return p if cs is not None and cs.restart_count >= 1 else None

    pod = wait_for("a restart in place", restarted, timeout=30)
    cs = pod.status.container_statuses[0]
    assert pod.status.phase == "Running"
    assert cs.last_state.terminated.exit_code == 1
    previous = k8s.core.read_namespaced_pod_log("crasher", namespace, previous=True)
    assert "connection refused" in previous and "exited with code 1" in previous


def test_node_is_ready_untainted_and_its_lease_is_renewed(k8s: Any) -> None:
    from kubernetes import client

    node = k8s.core.read_node("cronctl-sim")
    assert condition(node, "Ready") is not None
    assert not node.spec.taints
    lease = client.CoordinationV1Api(k8s.api).read_namespaced_lease("cronctl-sim", "kube-node-lease")
    assert datetime.now(timezone.utc) - lease.spec.renew_time < timedelta(seconds=25)


def test_a_deleted_running_pod_is_finished_and_disappears(k8s: Any, namespace: str) -> None:
    k8s.core.create_namespaced_pod(namespace, manifest("forever-pod.yaml"))
    wait_for("pod forever to run", lambda: _pod_phase(k8s, namespace, "forever", "Running"), timeout=30)
    k8s.core.delete_namespaced_pod("forever", namespace)  # default 30 s grace: the kubelet's job to end it

    def gone() -> bool:
        names = [p.metadata.name for p in k8s.core.list_namespaced_pod(namespace).items]
        return "forever" not in names

    wait_for("the deleted pod to disappear", gone, timeout=10)


# ---------------------------------------------------------------------------------------------
# scripts/cluster itself
# ---------------------------------------------------------------------------------------------

def _cluster(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(Path(__file__).resolve().parents[2] / "scripts" / "cluster"), *args],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)


def test_a_second_cluster_up_leaves_the_running_processes_alone(kubeconfig: str) -> None:
    import os

    if os.environ.get("CRONCTL_TEST_KUBECONFIG"):
        pytest.skip("CRONCTL_TEST_KUBECONFIG: the cluster was not started by scripts/cluster")
    before = _cluster("status")
    assert before.returncode == 0, before.stdout
    again = _cluster("up")
    assert again.returncode == 0 and "already running" in again.stderr
    pids = lambda out: [ln.split()[3] for ln in out.splitlines() if " running pid " in ln]  # noqa: E731
    assert pids(_cluster("status").stdout) == pids(before.stdout) and len(pids(before.stdout)) == 4


def test_the_admin_kubeconfig_verifies_the_server_certificate(kubeconfig: str) -> None:
    import base64
    import socket
    import ssl
    import tempfile
    from urllib.parse import urlsplit

    cfg = yaml.safe_load(Path(kubeconfig).read_text())
    cluster = cfg["clusters"][0]["cluster"]
    assert "insecure-skip-tls-verify" not in cluster
    url = urlsplit(cluster["server"])
    assert url.hostname == "127.0.0.1"
    with tempfile.NamedTemporaryFile("wb", suffix=".crt") as ca:
        ca.write(base64.b64decode(cluster["certificate-authority-data"]))
        ca.flush()
        ctx = ssl.create_default_context(cafile=ca.name)
        with socket.create_connection((url.hostname, url.port), timeout=5) as raw:
            with ctx.wrap_socket(raw, server_hostname=url.hostname) as tls:
                assert tls.getpeercert() is not None
    # and a client that does not trust our CA is refused
    with socket.create_connection((url.hostname, url.port), timeout=5) as raw:
        with pytest.raises(ssl.SSLCertVerificationError):
            ssl.create_default_context().wrap_socket(raw, server_hostname=url.hostname)
