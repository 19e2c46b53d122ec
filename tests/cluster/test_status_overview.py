"""`cronctl status` without a name: one line per CronJob of the namespace (or of every namespace
with -A) on the real control plane: who suspended it (a run record, a pause, or someone else), a
stale record whose process is gone, the last Job's outcome and the next run; `lint` flags the
CronJob a failed run left suspended (CJ026)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cluster_support import cronctl, cronjob_body

pytestmark = [pytest.mark.cluster]


def test_the_overview_tells_who_suspended_each_cronjob_and_which_run_is_stale_or_failed(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Any) -> None:
    for name, kw in (("plain", {}), ("paused", {}), ("killed", {}), ("failing", {"exit_code": 1}),
                     ("by-kubectl", {"suspend": True})):
        k8s.batch.create_namespaced_cron_job(namespace, cronjob_body(name, duration=1, **kw))
    assert cronctl(["pause", "paused", "-n", namespace, "--reason", "db migration", "--yes"],
                   kubeconfig).returncode == 0
    r = cronctl(["run-manual", "killed", "-n", namespace, "--yes", "--settle", "1s"], kubeconfig,
                run_dir=tmp_path / "k", CRONCTL_TEST_KILL_AFTER_STEP="created")
    assert r.returncode == -9, r.stderr
    r = cronctl(["run-manual", "failing", "-n", namespace, "--yes", "--settle", "1s"], kubeconfig,
                run_dir=tmp_path / "f")
    assert r.returncode == 1, r.stderr
    r = cronctl(["status", "-n", namespace, "-o", "json"], kubeconfig)
    assert r.returncode == 0, r.stderr
    rows = {c["cronjob"]: c for c in json.loads(r.stdout)["cronjobs"]}
    assert sorted(rows) == ["by-kubectl", "failing", "killed", "paused", "plain"]
    assert rows["plain"]["suspend"] is False and rows["plain"]["suspended_by"] is None
    assert rows["plain"]["next_run"] is not None and rows["plain"]["run"] is None
    assert rows["paused"]["suspended_by"].startswith("pause by ")
    assert rows["by-kubectl"]["suspended_by"] == "unknown (not cronctl)" and rows["by-kubectl"]["next_run"] is None
    killed = rows["killed"]
    assert killed["suspended_by"].startswith("run ") and killed["run"]["stale"] is True, killed
    assert killed["run"]["step"] == "created" and killed["last_job"]["name"] == "killed-manual"
    failing = rows["failing"]
    assert failing["run"]["step"] == "failed" and failing["run"]["stale"] is False
    assert failing["last_job"] == {**failing["last_job"], "name": "failing-manual", "outcome": "Failed"}
    # the text table: one line per CronJob, the stale record called out
    r = cronctl(["status", "-n", namespace], kubeconfig)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split()[:3] == ["NAME", "SCHEDULE", "ZONE"] and len([ln for ln in lines if ln.startswith(
        ("plain ", "paused ", "killed ", "failing ", "by-kubectl "))]) == 5, r.stdout
    assert f"(!) {namespace}/killed: STALE record" in r.stdout
    # -A has the namespace column and these rows among others
    r = cronctl(["status", "-A", "-o", "json"], kubeconfig)
    assert r.returncode == 0, r.stderr
    mine = [c for c in json.loads(r.stdout)["cronjobs"] if c["namespace"] == namespace]
    assert len(mine) == 5
    # lint: the failed run left it suspended
    r = cronctl(["lint", "-n", namespace, "-o", "json", "--fail-on", "none"], kubeconfig)
    found = {(f["object"]["name"], f["rule"]) for f in json.loads(r.stdout)["findings"]}
    assert ("failing", "CJ026") in found and ("plain", "CJ026") not in found, found


def test_the_overview_of_a_namespace_without_cronjobs_exits_6(kubeconfig: str, namespace: str) -> None:
    r = cronctl(["status", "-n", namespace], kubeconfig)
    assert r.returncode == 6 and "no CronJob in namespace" in r.stderr, (r.returncode, r.stderr)
