"""Helpers of the tests on the real node (``scripts/cluster up --node real``, fixture ``real_node``):
Jobs and CronJobs whose container is a real ``/bin/sh`` of the local shell image, and reading
what the kubelet reported about them.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from cluster_support import cronjob_body

#: the local images (scripts/realnode.py makes them from Debian packages; no registry is reached)
SHELL_IMAGE = "cronctl.local/shell:1"
#: every test on the real node is in this group: one xdist worker, so one real node, runs them
REALNODE_MARKS = [pytest.mark.cluster, pytest.mark.realnode, pytest.mark.xdist_group("realnode")]


def shell_container(script: str, *, name: str = "main", memory: str | None = None) -> dict[str, Any]:
    """A container of the shell image that runs `script` with /bin/sh -c (never pulled: no registry)."""
    c: dict[str, Any] = {"name": name, "image": SHELL_IMAGE, "imagePullPolicy": "Never",
                         "command": ["/bin/sh", "-c", script]}
    if memory:
        c["resources"] = {"limits": {"memory": memory}, "requests": {"memory": memory}}
    return c


def shell_job_template(script: str, *, backoff: int = 0, restart: str = "Never", grace: int | None = None,
                       deadline: int | None = None, memory: str | None = None) -> dict[str, Any]:
    pod: dict[str, Any] = {"restartPolicy": restart, "containers": [shell_container(script, memory=memory)]}
    if grace is not None:
        pod["terminationGracePeriodSeconds"] = grace
    spec: dict[str, Any] = {"backoffLimit": backoff, "template": {"spec": pod}}
    if deadline is not None:
        spec["activeDeadlineSeconds"] = deadline
    return {"spec": spec}


def shell_cronjob(name: str, script: str, *, backoff: int = 0, grace: int | None = None, deadline: int | None = None,
                  memory: str | None = None, **kw: Any) -> dict[str, Any]:
    """cronjob_body with a jobTemplate whose one container runs `script` for real."""
    return cronjob_body(name, job_template=shell_job_template(script, backoff=backoff, grace=grace, deadline=deadline,
                                                              memory=memory), **kw)


def job_pods(k8s: Any, ns: str, job: str) -> list[dict[str, Any]]:
    data = k8s.core.list_namespaced_pod(ns, label_selector=f"job-name={job}", _preload_content=False).data
    return list(json.loads(data)["items"])


def terminated(pod: dict[str, Any], container: str = "main") -> dict[str, Any] | None:
    """The container's `state.terminated` as the kubelet reported it (None while it has not ended)."""
    for s in (pod.get("status") or {}).get("containerStatuses") or []:
        if s["name"] == container:
            return (s.get("state") or {}).get("terminated")
    return None
