"""Hostile input, third round, on the real control plane (issue 39): anyone who may annotate a
CronJob writes a 2,000-deep JSON value (10 KB, which the API server accepts) into its last-applied
configuration and into ``cronctl.dev/runs``. ``cronctl record`` keeps running and keeps the CronJob
(and masks its env's password in an Event that repeats it, read from the SQLite file itself);
``status`` (one CronJob and the overview), ``lint``, ``history`` and ``bundle`` answer; none exits 70.
A recent slot's reason with a newline in it prints as one line.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from cluster_support import cronctl, create_cronjob, start_cronctl

pytestmark = [pytest.mark.cluster]

DEEP = '{"spec":' * 2000 + "1" + "}" * 2000
SECRET = "Vq7Rm2Kx9Lw4Tb8Np"


def _raw(path: Path) -> str:
    con = sqlite3.connect(path)
    try:
        return "\n".join(repr(r) for t in ("cronjobs", "events", "logs", "jobs")
                         for r in con.execute(f"SELECT * FROM {t}"))
    finally:
        con.close()


def test_a_deep_annotation_stops_neither_the_recorder_nor_a_reader(kubeconfig: str, namespace: str, k8s: Any,
                                                                  tmp_path: Path) -> None:
    create_cronjob(k8s, namespace, "deep", schedule="*/1 * * * *", duration=1)
    k8s.batch.patch_namespaced_cron_job("deep", namespace, {
        "metadata": {"annotations": {"kubectl.kubernetes.io/last-applied-configuration": DEEP,
                                     "cronctl.dev/runs": DEEP}},
        "spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [{
            "name": "main", "image": "busybox", "env": [{"name": "DB_PASSWORD", "value": SECRET}]}]}}}}}})
    k8s.core.create_namespaced_event(namespace, {
        "metadata": {"name": "deep.echo", "namespace": namespace},
        "involvedObject": {"kind": "CronJob", "name": "deep", "namespace": namespace,
                           "uid": json.loads(k8s.batch.read_namespaced_cron_job(
                               "deep", namespace, _preload_content=False).data)["metadata"]["uid"]},
        "reason": "Rejected", "message": f"login refused for password {SECRET}\nforged: ran", "type": "Warning",
        "firstTimestamp": "2026-12-07T00:00:00Z", "lastTimestamp": "2026-12-07T00:00:00Z", "count": 1})
    # "paused by" with a newline: the overview's row stays one line
    create_cronjob(k8s, namespace, "paused", suspend=True)
    k8s.batch.patch_namespaced_cron_job("paused", namespace, {"metadata": {"annotations": {
        "cronctl.dev/paused-by": "alice\nforged: ran", "cronctl.dev/paused-at": "2026-12-07T00:00:00Z",
        "cronctl.dev/pause-reason": "maintenance\nforged: ran"}}})
    ledger = tmp_path / "ledger.sqlite"
    rec = start_cronctl(["record", "-n", namespace, "--ledger", str(ledger), "--status-every", "5s"], kubeconfig,
                        run_dir=tmp_path / "rec")
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and rec.poll() is None:
            try:
                if ledger.exists() and "deep.echo" in _raw(ledger):
                    break
            except sqlite3.OperationalError:  # the recorder is creating its tables
                pass
            time.sleep(2)
        time.sleep(8)  # a status line or two more
        assert rec.poll() is None, "the recorder stopped"
    finally:
        rec.send_signal(signal.SIGTERM)
        try:
            _out, err = rec.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            rec.kill()
            raise
    assert rec.returncode == 0, err
    assert "Traceback" not in err and "internal error" not in err, err
    assert "rows written" in err
    raw = _raw(ledger)
    assert "'deep'" in raw and "deep.echo" in raw  # the CronJob and the Event are kept
    assert SECRET not in raw  # the env value and its echo in the Event, masked before they were stored
    for args in (["status", "deep", "-n", namespace], ["status", "-n", namespace], ["status", "paused", "-n", namespace],
                 ["lint", "deep", "-n", namespace, "--fail-on", "none"],
                 ["history", "deep", "-n", namespace, "--since", "1h"],
                 ["history", "deep", "-n", namespace, "--since", "1h", "--ledger", str(ledger)],
                 ["bundle", "deep", "-n", namespace, "--out", str(tmp_path / "b")]):
        r = cronctl(args, kubeconfig, run_dir=tmp_path / "runs")
        assert r.returncode == 0, (args, r.returncode, r.stderr[-1000:])
        assert "Traceback" not in r.stderr, (args, r.stderr)
        assert not any(line.strip().startswith("forged: ran") for line in r.stdout.splitlines()), (args, r.stdout)
        assert SECRET not in r.stdout + r.stderr, args
