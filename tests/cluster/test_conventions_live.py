"""The conventions of issue 10 item 7 on the real control plane: CronJob name completion in a real
bash, "not found" naming the namespaces where the CronJob is, and a refusal after the suspend
saying exactly what it changed and set back."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from cluster_support import (create_cronjob, cronctl, cronctl_env, read_cronjob, read_job, record_annotations,
                             start_cronctl, wait_for)
from completion_support import bash_complete


def test_bash_completes_the_cronjob_names_of_the_namespace_given_by_n(kubeconfig: str, namespace: str,
                                                                      k8s: Any) -> None:
    for name in ("alpha", "alpine", "beta"):
        create_cronjob(k8s, namespace, name)
    assert bash_complete("cronctl", "status", "-n", namespace, "al", KUBECONFIG=kubeconfig) == ["alpha", "alpine"]
    assert bash_complete("cronctl", "explain", "-n", namespace, "cronjob/b", KUBECONFIG=kubeconfig) == [
        "cronjob/beta"]
    assert namespace in bash_complete("cronctl", "run-manual", "-n", namespace[:-2], KUBECONFIG=kubeconfig)


def test_not_found_names_the_namespace_where_the_cronjob_is(kubeconfig: str, namespace: str, namespace_factory: Any,
                                                            k8s: Any) -> None:
    other = namespace_factory.create("elsewhere")
    try:
        create_cronjob(k8s, other, "lost-orders")
        r = cronctl(["status", "lost-orders", "-n", namespace], kubeconfig)
        assert r.returncode == 6, r.stderr
        assert r.stderr.strip().splitlines() == [
            f"error: cronjob lost-orders not found in namespace {namespace}; it exists in {other} (use -n {other})"]
        r = cronctl(["explain", "cronjob/nowhere", "-n", namespace], kubeconfig)
        assert r.returncode == 6 and r.stderr.strip() == f"error: cronjob {namespace}/nowhere not found"
    finally:
        namespace_factory.delete(other)


def test_a_job_appearing_after_the_suspend_is_refused_saying_what_was_set_back(kubeconfig: str, namespace: str,
                                                                               k8s: Any, tmp_path: Path) -> None:
    cj = create_cronjob(k8s, namespace, "late", duration=1)
    # run-manual pauses right after its suspend; a Job the controller "was creating" appears then
    p = start_cronctl(["run-manual", "late", "-n", namespace, "--yes", "--settle", "1s"], kubeconfig,
                      env=cronctl_env(tmp_path, CRONCTL_TEST_PAUSE_AFTER_STEP="suspended:20"))
    try:
        wait_for("the suspend", lambda: read_cronjob(k8s, namespace, "late")["spec"]["suspend"] or None, 60)
        k8s.batch.create_namespaced_job(namespace, {
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "late-29900000",
                         "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob", "name": "late",
                                              "uid": cj["metadata"]["uid"], "controller": True}]},
            "spec": {"template": {  # the pod simulator runs it for 120 s: still running at the verify
                "metadata": {"annotations": {"sim.cronctl.dev/duration-seconds": "120"}},
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox:1.36"}]}}}})
        t0 = time.monotonic()
        _out, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 3, err
    assert time.monotonic() - t0 < 120
    line = next(x for x in err.splitlines() if x.startswith("error: "))
    assert line.startswith(f"error: cronjob {namespace}/late has unfinished child Jobs: late-29900000; "
                           f"cronctl suspended cronjob {namespace}/late at "), line
    assert " and set suspend back to false at " in line and line.endswith("; nothing else changed, nothing created")
    after = read_cronjob(k8s, namespace, "late")
    # the record is gone; its account stays in the runs history (and Events)
    assert after["spec"]["suspend"] is False and set(record_annotations(after)) <= {"cronctl.dev/runs"}
    assert read_job(k8s, namespace, "late-manual") is None
