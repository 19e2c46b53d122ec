"""The Kubernetes boundary (cronctl.kube.KubeCluster) against the real API server: pagination,
error translation, watch from a list's resourceVersion, identity and access reviews."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cronctl.errors import Conflict, NotFound
from cronctl.kube import connect
from cluster_support import create_cronjob

pytestmark = pytest.mark.cluster


def _job(name: str) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "labels": {"set": "k"}},
            "spec": {"template": {"metadata": {"annotations": {"sim.cronctl.dev/duration-seconds": "inf"}},
                                  "spec": {"restartPolicy": "Never",
                                           "containers": [{"name": "c", "image": "busybox:1.36"}]}}}}


def test_lists_are_paginated_and_carry_kind_and_the_list_resource_version(kubeconfig: str, namespace: str,
                                                                         k8s: Any) -> None:
    c = connect(kubeconfig, None, namespace)
    c.page_size = 2
    for i in range(5):
        c.create_job(_job(f"j{i}"))
    before = c.request_count
    items, rv = c.list_jobs(label_selector="set=k")
    assert sorted(j["metadata"]["name"] for j in items) == [f"j{i}" for i in range(5)]
    assert c.request_count - before == 3  # 2 + 2 + 1
    assert all(j["kind"] == "Job" and j["apiVersion"] == "batch/v1" for j in items)
    assert int(rv) >= max(int(j["metadata"]["resourceVersion"]) for j in items)
    one, _ = c.list_jobs(field_selector="metadata.name=j3")
    assert [j["metadata"]["name"] for j in one] == ["j3"]


def test_api_errors_become_cronctl_errors_naming_the_object(kubeconfig: str, namespace: str, k8s: Any) -> None:
    c = connect(kubeconfig, None, namespace)
    with pytest.raises(NotFound, match=f"cronjob {namespace}/absent not found"):
        c.get_cronjob("absent")
    assert c.get_job("absent") is None
    c.create_job(_job("dup"))
    with pytest.raises(Conflict, match=f"job {namespace}/dup already exists"):
        c.create_job(_job("dup"))
    cj = create_cronjob(k8s, namespace, "guarded")
    c.patch_cronjob("guarded", {"metadata": {"labels": {"a": "1"}}}, resource_version=cj["metadata"]["resourceVersion"])
    with pytest.raises(Conflict):  # the read is stale now: the guard refuses the blind write
        c.patch_cronjob("guarded", {"spec": {"suspend": True}}, resource_version=cj["metadata"]["resourceVersion"])
    raw = json.loads(k8s.batch.read_namespaced_cron_job("guarded", namespace, _preload_content=False).data)
    assert raw["spec"]["suspend"] is False and raw["metadata"]["labels"] == {"a": "1"}
    assert c.create_job(_job("dry"), dry_run=True)["metadata"]["name"] == "dry"
    assert c.get_job("dry") is None


def test_a_watch_from_the_lists_resource_version_sees_the_next_change(kubeconfig: str, namespace: str,
                                                                     k8s: Any) -> None:
    c = connect(kubeconfig, None, namespace)
    c.create_job(_job("w"))
    _items, rv = c.list_jobs(field_selector="metadata.name=w")
    k8s.batch.patch_namespaced_job("w", namespace, {"metadata": {"labels": {"seen": "yes"}}})
    for typ, obj in c.watch_jobs(resource_version=rv, field_selector="metadata.name=w", timeout_seconds=10):
        if typ == "MODIFIED" and (obj["metadata"].get("labels") or {}).get("seen") == "yes":
            assert obj["kind"] == "Job"
            break
    else:
        pytest.fail("the watch ended without the change")


def test_identity_access_review_version_and_url_come_from_the_server(kubeconfig: str, namespace: str) -> None:
    c = connect(kubeconfig, None, namespace)
    assert c.whoami() not in ("", "unknown")
    assert c.can_i("patch", "cronjobs", group="batch")[0] is True  # admin; denials: test_status_restore.py
    assert c.server_version().startswith("v1.")
    assert c.server_url().startswith("https://127.0.0.1:")
