"""Helpers shared by the tests on the real control plane: the one CronJob builder, reading objects
back, waiting (for anything: ``wait_for``; for the slots of a schedule: ``slot_job_name``,
``early_in_a_minute``, ``sleep_until``, ``wait_for_slot_job``), and (re-exported from
``tests/harness.py``) cronctl run as a process and kubectl.

Setup and assertions go through the kubernetes client (``k8s`` fixture) with raw JSON, never
through cronctl's own code; cronctl itself is run as a separate process, exactly as an operator
runs it (exit code, stdout, stderr).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, TypeVar

import pytest
import yaml

from harness import ROOT, cronctl, cronctl_env, kubectl_path, on_a_terminal, run_kubectl, start_cronctl

__all__ = ["ROOT", "cronctl", "cronctl_env", "kubectl_path", "on_a_terminal", "run_kubectl", "start_cronctl"]

T = TypeVar("T")
RECORD_PREFIX = "cronctl.dev/"
YEARLY = "0 0 1 1 *"
_DEFAULT: Any = object()


def bare_job_template(container: str = "c", image: str = "busybox:1.36") -> dict[str, Any]:
    """A jobTemplate with one container and nothing else (no pod-simulator annotations)."""
    return {"spec": {"template": {"spec": {"restartPolicy": "Never",
                                           "containers": [{"name": container, "image": image}]}}}}


# The default schedule is yearly, so the controller creates no Job of its own during a test
# (a */1 CronJob can start one between the test's create and cronctl's suspend, which cronctl
# rightly refuses); tests about the controller's own Jobs pass a schedule.
def cronjob_body(name: str, *, schedule: str = YEARLY, suspend: bool = False, policy: str | None = "Forbid",
                 tz: str | None = None, deadline: int | None = None, history: int | None = 10,
                 duration: float = 3, exit_code: int | None = 0, log: str = "hello from the job", backoff: int = 0,
                 containers: list[dict[str, Any]] | None = None, job_metadata: dict[str, Any] | None = _DEFAULT,
                 job_template: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    """The one CronJob builder of the tests (a plain dict, as the API takes it).

    The Job's pod is run by the pod simulator: ``duration`` seconds, then ``exit_code`` (None: the
    simulator's default), printing ``log``. By default its pod has an init container and a ``main``
    container (busybox), and the jobTemplate carries labels and an annotation (what
    ``kubectl create job --from`` must copy); ``containers`` replaces the pod's containers (then no
    init container), ``job_metadata=None`` leaves the jobTemplate's metadata out, ``job_template``
    replaces the whole jobTemplate. ``history`` is both history limits (None: the API defaults).
    ``spec`` sets further spec fields last; a None value removes the field.
    """
    if job_template is None:
        sim = {"sim.cronctl.dev/duration-seconds": str(duration), "sim.cronctl.dev/exit-code": str(exit_code),
               "sim.cronctl.dev/log": log}
        if exit_code is None:
            del sim["sim.cronctl.dev/exit-code"]
        pod: dict[str, Any] = {"restartPolicy": "Never"}
        if containers is None:
            pod["initContainers"] = [{"name": "prepare", "image": "busybox:1.36"}]
            pod["containers"] = [{"name": "main", "image": "busybox:1.36", "env": [{"name": "MODE", "value": "sync"}]}]
        else:
            pod["containers"] = containers
        job_template = {"spec": {"backoffLimit": backoff, "template": {"metadata": {"annotations": sim}, "spec": pod}}}
        if job_metadata is _DEFAULT:
            job_metadata = {"labels": {"app": name, "tier": "batch"}, "annotations": {"team": "integrations"}}
        if job_metadata is not None:
            job_template = {"metadata": job_metadata, **job_template}
    body: dict[str, Any] = {
        "schedule": schedule, "concurrencyPolicy": policy, "suspend": suspend,
        "successfulJobsHistoryLimit": history, "failedJobsHistoryLimit": history,
        "jobTemplate": job_template, "startingDeadlineSeconds": deadline, "timeZone": tz,
    }
    body.update(spec)
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name},
            "spec": {k: v for k, v in body.items() if v is not None}}


def create_cronjob(k8s: Any, ns: str, name: str, **kw: Any) -> dict[str, Any]:
    k8s.batch.create_namespaced_cron_job(ns, cronjob_body(name, **kw))
    return read_cronjob(k8s, ns, name)


def read_cronjob(k8s: Any, ns: str, name: str) -> dict[str, Any]:
    return dict(json.loads(k8s.batch.read_namespaced_cron_job(name, ns, _preload_content=False).data))


def list_jobs(k8s: Any, ns: str) -> list[dict[str, Any]]:
    return list(json.loads(k8s.batch.list_namespaced_job(ns, _preload_content=False).data)["items"])


def read_job(k8s: Any, ns: str, name: str) -> dict[str, Any] | None:
    for j in list_jobs(k8s, ns):
        if j["metadata"]["name"] == name:
            return j
    return None


#: cronctl's trail of finished runs: kept on purpose after the record is cleared (not part of the record)
RUNS_ANNOTATION = "cronctl.dev/runs"


def record_annotations(cj: dict[str, Any]) -> dict[str, str]:
    """cronctl's annotations on the CronJob but the trail of finished runs: the run record (and a pause)."""
    return {k: v for k, v in (cj["metadata"].get("annotations") or {}).items()
            if k.startswith(RECORD_PREFIX) and k != RUNS_ANNOTATION}


def terminal(job: dict[str, Any]) -> str | None:
    for c in (job.get("status") or {}).get("conditions") or []:
        if c["type"] in ("Complete", "Failed") and c["status"] == "True":
            return str(c["type"])
    return None


def wait_for(what: str, probe: Callable[[], T | None], timeout: float, every: float = 0.5) -> T:
    """Call `probe` until it returns something truthy; fail naming `what` after `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        got = probe()
        if got:
            return got
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(every)


# --- the slots of a schedule ----------------------------------------------------------------------

def slot_job_name(cronjob: str, slot: datetime) -> str:
    """The controller's name for the Job of ``slot`` (getJobName: the slot in Unix minutes)."""
    return f"{cronjob}-{int(slot.timestamp()) // 60}"


def minute_floor(t: datetime) -> datetime:
    """The minute boundary at or before t."""
    return t.replace(second=0, microsecond=0)


def sleep_until(t: datetime) -> None:
    """Sleep until the wall clock reaches t (an aware datetime); at once if it has."""
    time.sleep(max(0.0, (t - datetime.now(timezone.utc)).total_seconds()))


def early_in_a_minute(after: datetime | None = None, lo: float = 1.0, hi: float = 12.0) -> datetime:
    """Sleep until now is lo..hi s past a minute boundary (later than ``after``); return that boundary."""
    while True:
        now = datetime.now(timezone.utc)
        slot = minute_floor(now)
        if (after is None or slot > after) and lo <= (now - slot).total_seconds() <= hi:
            return slot
        if (after is None or slot > after) and (now - slot).total_seconds() < lo:
            nxt = slot + timedelta(seconds=lo)
        else:
            nxt = slot + timedelta(minutes=1, seconds=lo)
        time.sleep(max(0.2, (nxt - now).total_seconds()))


def wait_for_slot_job(k8s: Any, ns: str, cronjob: str, slot: datetime, timeout: float, *,
                      also: Callable[[], None] | None = None, every: float = 0.5,
                      required: bool = True) -> dict[str, Any] | None:
    """Wait up to ``timeout`` s for the Job of ``slot`` that the controller names for it; return it.

    ``also`` runs on every poll (assertions that must hold the whole time). When the Job does not
    come, the test fails naming it and the slot; with ``required=False`` the answer is None.
    """
    name = slot_job_name(cronjob, slot)
    deadline = time.monotonic() + timeout
    while True:
        if also is not None:
            also()
        job = read_job(k8s, ns, name)
        if job:
            return job
        if time.monotonic() > deadline:
            if required:
                pytest.fail(f"timed out after {timeout:.0f}s waiting for the controller's Job {name} of slot "
                            f"{slot.astimezone(timezone.utc):%Y-%m-%dT%H:%M:%SZ}")
            return None
        time.sleep(every)


@contextmanager
def private_control_plane(prefix: str) -> Iterator[tuple[Any, Any]]:
    """(ClusterInfo, K8s) of a control plane of the caller's own (its own state directory, ports and
    etcd; the run's Kubernetes version), for the tests that stop and start its parts so that no
    other test is hurt; taken down at the end. Fails the test when it does not start."""
    import tempfile

    from kubernetes import client, config

    from harness import ClusterError, cluster, requested_k8s_version
    from tests.conftest import K8s

    state = tempfile.mkdtemp(prefix=prefix)
    try:
        info = cluster.up(version=requested_k8s_version(), state=state)
    except ClusterError as e:
        pytest.fail(f"private cluster did not start: {e}", pytrace=False)
    api = config.new_client_from_config(config_file=str(info.kubeconfig))
    k8s = K8s(api=api, core=client.CoreV1Api(api), batch=client.BatchV1Api(api), events=client.EventsV1Api(api))
    try:
        yield info, k8s
    finally:
        cluster.down(state)


def service_account_kubeconfig(k8s: Any, admin_kubeconfig: str, ns: str, account: str, path: Path) -> Path:
    """Write to `path` (mode 0600) a kubeconfig that acts as ServiceAccount `account` of `ns`.

    The token is a fresh one-hour TokenRequest; the server and CA come from the admin
    kubeconfig's current context, and the namespace `ns` is the context's default. The account
    and its RBAC must already exist.
    """
    token = k8s.core.create_namespaced_service_account_token(
        account, ns, {"spec": {"expirationSeconds": 3600}}).status.token
    admin = yaml.safe_load(Path(admin_kubeconfig).read_text())
    ctx = next(c for c in admin["contexts"] if c["name"] == admin["current-context"])
    cluster = next(c for c in admin["clusters"] if c["name"] == ctx["context"]["cluster"])
    kc = {"apiVersion": "v1", "kind": "Config", "clusters": [cluster],
          "users": [{"name": account, "user": {"token": token}}],
          "contexts": [{"name": account, "context": {"cluster": cluster["name"], "user": account,
                                                     "namespace": ns}}],
          "current-context": account}
    path.write_text(yaml.safe_dump(kc))
    path.chmod(0o600)
    return path


def run_record(run_dir: Path) -> dict[str, Any]:
    recs = sorted(run_dir.glob("*/record.json"))
    assert len(recs) == 1, f"expected one run directory in {run_dir}, found {recs}"
    rec = dict(json.loads(recs[0].read_text()))
    # every key the run wrote is one its type names (mypy checks the code's keys; this, the file's)
    from cronctl.procedure.steps.run_document import RunDocument

    assert set(rec) <= RunDocument.__optional_keys__, set(rec) - RunDocument.__optional_keys__
    return rec


def owned_jobs(k8s: Any, ns: str, cj: dict[str, Any]) -> list[dict[str, Any]]:
    uid = cj["metadata"]["uid"]
    return [j for j in list_jobs(k8s, ns)
            if any(r.get("uid") == uid and r.get("controller") for r in j["metadata"].get("ownerReferences") or [])]
