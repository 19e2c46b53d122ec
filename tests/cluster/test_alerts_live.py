"""`cronctl alerts` on live CronJobs: the rules for one CronJob and for a namespace, read from the
API server, accepted by promtool; a pause's --until read from the CronJob becomes the rule's end."""

from __future__ import annotations

import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import yaml

from cluster_support import create_cronjob, cronctl
from tool_support import promtool

def test_rules_for_live_cronjobs_pass_promtool_and_follow_a_pause(kubeconfig: str, namespace: str, k8s: Any,
                                                                  tmp_path: Path) -> None:
    create_cronjob(k8s, namespace, "orders", schedule="0 9 * * 1-5", tz="Europe/Berlin", deadline=300)
    create_cronjob(k8s, namespace, "sweep", schedule="*/10 * * * *")
    one = cronctl(["alerts", "cronjob/orders", "-n", namespace, "--format", "rules", "--windows"], kubeconfig)
    assert one.returncode == 0, one.stderr
    (win,) = yaml.safe_load(one.stdout)
    assert win["cronjob"] == f"{namespace}/orders" and win["base_gap"] == 24 * 3600
    assert win["grace"]["start_delay"] == 300  # startingDeadlineSeconds read from the live object

    until = (datetime.now(timezone.utc) + timedelta(days=2)).replace(microsecond=0)
    paused = cronctl(["pause", "sweep", "-n", namespace, "--reason", "maintenance", "--until",
                      until.strftime("%Y-%m-%dT%H:%M:%SZ"), "--yes"], kubeconfig)
    assert paused.returncode == 0, paused.stderr
    every = cronctl(["alerts", "-n", namespace, "--format", "rules"], kubeconfig)
    assert every.returncode == 0, every.stderr
    doc = yaml.safe_load(every.stdout)
    assert [g["name"] for g in doc["groups"]] == [f"cronctl.{namespace}.orders", f"cronctl.{namespace}.sweep",
                                                  "cronctl.rules"]
    sweep_suspended = next(r for r in doc["groups"][1]["rules"] if r["alert"] == "CronJobSuspendedTooLong")
    assert str(int(until.timestamp()) + 600) in sweep_suspended["expr"]  # the pause's end + the margin
    path = tmp_path / "rules.yaml"
    path.write_text(every.stdout)
    check = subprocess.run([promtool(), "check", "rules", str(path)], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr

    missing = cronctl(["alerts", "cronjob/nope", "-n", namespace], kubeconfig)
    assert missing.returncode == 6 and "nope" in missing.stderr
