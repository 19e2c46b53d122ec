"""`cronctl lint` against live CronJobs on the real control plane: one, all in a namespace,
all namespaces; findings match what we created."""

from __future__ import annotations

import json
from typing import Any

from cluster_support import cronjob_body
from cronctl.cli import main

DIGEST = "busybox@sha256:" + "b" * 64


# everything the lint rules ask for, so only what a test changes is found
CLEAN_JOB_TEMPLATE = {"spec": {
    "activeDeadlineSeconds": 300, "backoffLimit": 1,
    "podFailurePolicy": {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [3]}}]},
    "template": {"spec": {"restartPolicy": "Never", "serviceAccountName": "sync",
                          "containers": [{"name": "c", "image": DIGEST, "resources": {
                              "requests": {"cpu": "10m", "memory": "16Mi"}, "limits": {"memory": "16Mi"}}}]}}}}


def cronjob(name: str, **spec: Any) -> dict[str, Any]:
    return cronjob_body(name, schedule="*/10 * * * *", tz="Etc/UTC", suspend=True, deadline=120,
                        successfulJobsHistoryLimit=200, failedJobsHistoryLimit=5, job_template=CLEAN_JOB_TEMPLATE,
                        **spec)


def lint(capfd: Any, kubeconfig: str, *args: str) -> tuple[int, Any, str]:
    code = main(["lint", "--kubeconfig", kubeconfig, "-o", "json", *args])
    out, err = capfd.readouterr()
    return code, json.loads(out) if out.strip() else None, err


def test_lint_live_cronjobs_one_namespace_and_all_namespaces(capfd, k8s, kubeconfig, namespace) -> None:
    k8s.batch.create_namespaced_cron_job(namespace, cronjob("clean"))
    k8s.batch.create_namespaced_cron_job(namespace, cronjob("never-runs", startingDeadlineSeconds=0))

    code, doc, _ = lint(capfd, kubeconfig, "-n", namespace)
    assert code == 8  # CJ003 is an error
    assert doc["checked"] == 2
    assert [(f["object"]["name"], f["rule"]) for f in doc["findings"]] == [("never-runs", "CJ003")]
    assert doc["findings"][0]["object"]["namespace"] == namespace
    assert doc["findings"][0]["object"]["source"] is None

    code, doc, _ = lint(capfd, kubeconfig, "-n", namespace, "cronjob/clean")
    assert code == 0 and doc["checked"] == 1 and doc["findings"] == []

    code, doc, _ = lint(capfd, kubeconfig, "--all-namespaces", "--fail-on", "none")
    assert code == 0
    mine = {(f["object"]["namespace"], f["object"]["name"], f["rule"]) for f in doc["findings"]}
    assert (namespace, "never-runs", "CJ003") in mine
    assert not any(ns == namespace and n == "clean" for ns, n, _ in mine)


def test_lint_of_a_missing_cronjob_is_exit_6(capfd, kubeconfig, namespace) -> None:
    code, doc, err = lint(capfd, kubeconfig, "-n", namespace, "nope")
    assert code == 6 and doc is None
    assert err.strip() == f"error: cronjob {namespace}/nope not found"


def test_lint_of_an_empty_namespace_says_so_on_stderr(capfd, kubeconfig, namespace) -> None:
    code, doc, err = lint(capfd, kubeconfig, "-n", namespace)
    assert code == 0 and doc["checked"] == 0
    assert f"no CronJobs in namespace {namespace}" in err
