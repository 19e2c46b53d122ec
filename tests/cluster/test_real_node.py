"""The real node (``scripts/cluster up --node real``): a Job's container is a real process whose
output and exit code come back through the API, and ``down`` leaves nothing of the node behind."""

from __future__ import annotations

import os
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from cluster_support import wait_for
from realnode_support import REALNODE_MARKS, job_pods, shell_job_template, terminated

pytestmark = REALNODE_MARKS


def _job(name: str, script: str, **kw: Any) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, **shell_job_template(script, **kw)}


def _run_to_end(k8s: Any, ns: str, name: str, script: str, timeout: float = 120) -> dict[str, Any]:
    k8s.batch.create_namespaced_job(ns, _job(name, script))
    return wait_for(f"job {name}'s container to end",
                    lambda: next((p for p in job_pods(k8s, ns, name) if terminated(p)), None), timeout)


def test_a_jobs_container_is_a_real_process_whose_output_and_exit_code_come_back(real_node: Any, real_namespace: str) -> None:
    k8s, ns = real_node.k8s, real_namespace
    # what only a real process can say: its own hostname (the pod's name), its pid in the pod's pid
    # namespace, and a line on stderr
    # ($$ would be Kubernetes' escape of $ in a command: the shell reads its own pid from /proc instead)
    pod = _run_to_end(k8s, ns, "smoke", 'echo "hello from $(hostname)"; read -r pid _ </proc/self/stat; '
                                        'echo "pid $pid"; echo oops >&2; exit 3')
    name = pod["metadata"]["name"]
    t = terminated(pod)
    assert t is not None and t["exitCode"] == 3 and t["reason"] == "Error", t
    assert t["containerID"].startswith("containerd://")
    assert pod["spec"]["nodeName"] == "127.0.0.1"
    # pods/log goes from the API server to the kubelet (its serving certificate, the API server's
    # client certificate) and back: what the process wrote, stdout and stderr
    log = k8s.core.read_namespaced_pod_log(name, ns, container="main")
    # stdout and stderr are two pipes read apart: each keeps its order, not their interleaving
    lines = log.splitlines()
    assert sorted(lines) == sorted([f"hello from {name}", "pid 1", "oops"]), lines
    assert lines.index(f"hello from {name}") < lines.index("pid 1")
    job = wait_for("the Job to fail", lambda: next((c for c in (k8s.batch.read_namespaced_job(name="smoke", namespace=ns)
                                                                  .status.conditions or [])
                                                    if c.type == "Failed" and c.status == "True"), None), 60)
    assert job.reason == "BackoffLimitExceeded"


def _node_processes(state: Path) -> list[str]:
    from harness import cluster

    c = cluster.Cluster(state)
    mnt_file = state / "run" / "node-ns.mnt"
    return list(c.real.leftovers(mnt_file.read_text().strip() if mnt_file.exists() else None))


def test_down_leaves_no_process_mount_netns_cgroup_or_link_and_a_second_node_does_not_disturb_the_first(
        real_node: Any, real_namespace: str) -> None:
    from harness import cluster, requested_k8s_version
    from tests.conftest import _k8s_for, create_test_namespace

    state = Path(tempfile.mkdtemp(prefix="cronctl-real2-"))
    try:
        t0 = time.monotonic()
        info = cluster.up(version=requested_k8s_version(), state=state, node="real")
        print(f"second real node up in {time.monotonic() - t0:.1f}s")
        k8s2 = _k8s_for(str(info.kubeconfig))
        ns2 = create_test_namespace(k8s2, "t-second-node")
        k8s2.batch.create_namespaced_job(ns2, _job("sleeper", "echo started; sleep 600"))
        wait_for("the sleeper to run", lambda: any(
            (s.get("state") or {}).get("running") for p in job_pods(k8s2, ns2, "sleeper")
            for s in (p.get("status") or {}).get("containerStatuses") or []), 120)
        during = _node_processes(state)
        # while it runs there is something to leave behind: the node's processes and its bridge
        assert any(x.startswith("process") for x in during) and any(x.startswith("network link") for x in during), during
        netns = sorted((state / "node" / "containerd" / "state").rglob("cni-*"))
        mnt_ns = (state / "run" / "node-ns.mnt").read_text().strip()
        # the first node keeps running its own pods meanwhile
        pod = _run_to_end(real_node.k8s, real_namespace, "first", "echo still here; exit 0")
        assert terminated(pod)["exitCode"] == 0  # type: ignore[index]
    finally:
        cluster.down(state)
    left = _node_processes(state)
    assert left == []
    # no process is left in the node's mount namespace, so the kernel dropped its mounts and with
    # them the pods' network namespace files; none of those mounts is visible on the host either
    assert not [p for p in os.listdir("/proc") if p.isdigit() and _readlink(f"/proc/{p}/ns/mnt") == mnt_ns]
    mounts = Path("/proc/self/mountinfo").read_text()
    assert str(state) not in mounts
    assert netns == [] or all(str(n) not in mounts for n in netns)
    # and the first node is still Ready
    node = real_node.k8s.core.read_node("127.0.0.1")
    assert any(c.type == "Ready" and c.status == "True" for c in node.status.conditions)


def _readlink(p: str) -> str | None:
    try:
        return os.readlink(p)
    except OSError:
        return None


def test_job_creation_to_running_container_is_measured(real_node: Any, real_namespace: str) -> None:
    """Not a benchmark: the time from a Job's creation to its container running, printed (-s shows
    it), with a generous bound so a broken node shows as a failure and not as a hang."""
    k8s, ns = real_node.k8s, real_namespace
    pod = _run_to_end(k8s, ns, "timed", "exit 0")
    created = datetime.fromisoformat(k8s.batch.read_namespaced_job("timed", ns).metadata.creation_timestamp.isoformat())
    started = datetime.fromisoformat(terminated(pod)["startedAt"].replace("Z", "+00:00"))  # type: ignore[index]
    took = (started - created).total_seconds()
    print(f"Job created -> container started: {took:.1f}s")
    assert 0 <= took < 60
