"""No command that reads the cluster prints a planted secret (issue 26: "lint, history, status and
every other printer go through the same redactor"): the offline test
(tests/unit/test_redact_planted.py) reads the planted dump from a file; here the same CronJob, its
manual Job with a run record's reason and the kubelet Event quoting a hook are created on the real
API server and every reading command runs against it, in each output format it has: status (one
CronJob and the namespace overview), explain cronjob/X, history, lint, alerts, bundle (default and
--redact strict) and run-manual's --dry-run plan.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from cluster_support import read_cronjob
from harness import cronctl
from planted_secrets import PLANTED, leaks_in, planted_dump

pytestmark = [pytest.mark.cluster]


def _plant(k8s: Any, ns: str, tmp_path: Path) -> str:
    """The planted dump's CronJob, manual Job and hook Event, created in ``ns``; the CronJob's name."""
    items = yaml.safe_load(planted_dump(tmp_path).read_text())["items"]
    src = next(i for i in items if i["kind"] == "CronJob")
    name = src["metadata"]["name"]
    spec = copy.deepcopy(src["spec"])
    spec.update(schedule="0 0 1 1 *", suspend=False)  # yearly: the controller starts nothing meanwhile
    spec.pop("timeZone", None)
    k8s.batch.create_namespaced_cron_job(ns, {
        "apiVersion": "batch/v1", "kind": "CronJob",
        "metadata": {"name": name, "annotations": src["metadata"]["annotations"]}, "spec": spec})
    cj = read_cronjob(k8s, ns, name)
    manual = next(i for i in items if i["kind"] == "Job" and i["metadata"]["name"] == "mp-orders-sync-fix")
    job_spec = copy.deepcopy(spec["jobTemplate"]["spec"])
    k8s.batch.create_namespaced_job(ns, {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": f"{name}-fix", "annotations": manual["metadata"]["annotations"],
                     "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob", "name": name,
                                          "uid": cj["metadata"]["uid"], "controller": True}]},
        "spec": job_spec})
    ev = next(i for i in items if i["kind"] == "Event")
    k8s.core.create_namespaced_event(ns, {
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": f"{name}-fix.planted"},
        "involvedObject": {"apiVersion": "batch/v1", "kind": "Job", "name": f"{name}-fix", "namespace": ns},
        "reason": "FailedPostStartHook", "type": "Warning", "message": ev["message"],
        "source": {"component": "kubelet"}, "count": 1,
        "firstTimestamp": cj["metadata"]["creationTimestamp"], "lastTimestamp": cj["metadata"]["creationTimestamp"]})
    return str(name)


def test_no_command_that_reads_the_cluster_prints_a_planted_secret(
        k8s: Any, kubeconfig: str, namespace: str, tmp_path: Path) -> None:
    name = _plant(k8s, namespace, tmp_path)
    # the values really are on the API server (else the test below proves nothing)
    served = yaml.safe_dump([read_cronjob(k8s, namespace, name),
                             k8s.batch.read_namespaced_job(f"{name}-fix", namespace).to_dict(),
                             [e.message for e in k8s.core.list_namespaced_event(namespace).items]])
    assert not [k for k, v in PLANTED.items() if v not in served], served
    ns = ["-n", namespace]
    commands = [["status", name, *ns, *o] for o in ([], ["-o", "json"])]
    commands += [["status", *ns, *o] for o in ([], ["-o", "json"])]
    commands += [["explain", f"cronjob/{name}", *ns, *o] for o in ([], ["-o", "json"])]
    commands += [["history", name, *ns, *o] for o in ([], ["-o", "json"], ["-o", "yaml"])]
    commands += [["lint", *ns, "--fail-on", "none", *o] for o in ([], ["-o", "json"], ["-o", "sarif"])]
    commands += [["alerts", *ns]]
    commands += [["bundle", name, *ns, "--out", str(tmp_path / f"b{i}"), *o]
                 for i, o in enumerate(([], ["--redact", "strict"]))]
    commands += [["run-manual", name, *ns, "--dry-run"]]
    leaks: list[str] = []
    for args in commands:
        r = cronctl(args, kubeconfig, cwd=tmp_path)
        assert r.returncode in (0, 8), (args, r.returncode, r.stderr)
        leaks += leaks_in(" ".join(args[:1] + args[4:]), r.stdout + r.stderr)
    files = [f for f in sorted(tmp_path.glob("b*/**/*")) if f.is_file()]
    assert len(files) >= 10  # two bundles were written
    for f in files:
        leaks += leaks_in(str(f.relative_to(tmp_path)), f.read_text(errors="replace"))
    assert not leaks
