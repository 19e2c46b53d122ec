"""Every suspend in the evidence (issue 34 item 3), on the real controller with `cronctl record` running:
a `*/1` CronJob is paused (`pause --until 1h --reason ...`) across a slot and resumed 25 s after that
slot, so the controller starts the missed slot late as its catch-up; then someone suspends and
un-suspends it with `kubectl patch` (field manager kubectl-patch).

`bundle --ledger` must list the pause with its reason and the suspend by hand with its field manager
under `suspended_periods` and on the report's timeline, `history --ledger` must name the pause and its
reason in the catch-up Job's row and in the slot it lost; the live bundle and history (no ledger) name
the pause from what resume keeps on the CronJob (cronctl.dev/pauses)."""

from __future__ import annotations

import json
import signal
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from cluster_support import cronctl, cronjob_body, list_jobs, run_kubectl, sleep_until, start_cronctl, wait_for

pytestmark = [pytest.mark.cluster]
UTC = timezone.utc
TS = "batch.kubernetes.io/cronjob-scheduled-timestamp"
REASON = "db migration 4711"


def scheduled_jobs(k8s: Any, ns: str) -> list[dict[str, Any]]:
    return [j for j in list_jobs(k8s, ns) if TS in (j["metadata"].get("annotations") or {})]


def test_a_pause_and_a_suspend_by_hand_are_periods_of_the_bundle_and_causes_in_history(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path) -> None:
    k8s.batch.create_namespaced_cron_job(namespace, cronjob_body("nightly", schedule="*/1 * * * *", duration=2))
    ledger = f"sqlite:///{tmp_path / 'ledger.sqlite'}"
    rec = start_cronctl(["record", "-n", namespace, "--ledger", ledger, "--status-every", "10s"], kubeconfig,
                        run_dir=tmp_path / "rec")
    try:
        time.sleep(3)  # the recorder has listed the CronJob unsuspended
        p = cronctl(["pause", "nightly", "-n", namespace, "--until", "1h", "--reason", REASON, "--yes"], kubeconfig)
        assert p.returncode == 0, p.stderr
        paused_at = datetime.now(UTC)
        # a slot passes while paused; resume 25 s after it, so its catch-up is late (over 10 s)
        lost = (paused_at + timedelta(minutes=1)).replace(second=0, microsecond=0)
        sleep_until(lost + timedelta(seconds=25))
        r = cronctl(["resume", "nightly", "-n", namespace, "--yes"], kubeconfig)
        assert r.returncode == 0, r.stderr
        catch_up = wait_for("the catch-up Job of the lost slot", lambda: next(
            (j for j in scheduled_jobs(k8s, namespace) if j["metadata"]["annotations"][TS] == lost.strftime(
                "%Y-%m-%dT%H:%M:%SZ") and (j.get("status") or {}).get("succeeded")), None), 60)
        # a suspend by hand, and its end (field manager kubectl-patch)
        run_kubectl(kubeconfig, "patch", "cronjob", "nightly", "-n", namespace, "-p", '{"spec":{"suspend":true}}')
        time.sleep(4)
        run_kubectl(kubeconfig, "patch", "cronjob", "nightly", "-n", namespace, "-p", '{"spec":{"suspend":false}}')
        time.sleep(4)  # the recorder writes what it saw
    finally:
        rec.send_signal(signal.SIGTERM)
        out, err = rec.communicate(timeout=60)
    assert rec.returncode == 0, err

    # bundle --ledger: the pause (with its reason) and the suspend by hand (with its field manager)
    b = cronctl(["bundle", "nightly", "-n", namespace, "--ledger", ledger, "--out", str(tmp_path / "b")], kubeconfig)
    assert b.returncode == 0, b.stderr
    (cj,) = json.loads((tmp_path / "b" / "bundle.json").read_text())["cronjobs"]
    periods = [p for p in cj["suspended_periods"] if not p["inferred"]]
    pause = [p for p in periods if REASON in p["source"]]
    assert len(pause) == 1 and pause[0]["start"] <= lost.strftime("%Y-%m-%dT%H:%M:%SZ") <= pause[0]["end"], periods
    assert pause[0]["source"].startswith("paused by ") and "until " in pause[0]["source"] \
        and "resumed by " in pause[0]["source"], pause
    assert pause[0]["lost"] == 0  # the lost slot was caught up: it ran late, not lost
    by_hand = [p for p in periods if "kubectl-patch" in p["source"]]
    assert len(by_hand) == 1 and by_hand[0]["end"] is not None and REASON not in by_hand[0]["source"], periods
    assert len(periods) == 2, periods  # the ledger's span of the pause is the pause, not a third period
    html = (tmp_path / "b" / "report.html").read_text()
    assert REASON in html and "kubectl-patch" in html  # on the timeline, as the periods' hover titles
    assert REASON in (tmp_path / "b" / "REPORT.md").read_text()

    # history --ledger: the catch-up Job's row names the pause and its reason
    for extra in (["--ledger", ledger], []):
        h = cronctl(["history", "nightly", "-n", namespace, "--since", "30m", "-o", "json", *extra], kubeconfig)
        assert h.returncode == 0, h.stderr
        rows = {s["slot"]: s for s in json.loads(h.stdout)["cronjobs"][0]["slots"]}
        row = rows[lost.strftime("%Y-%m-%dT%H:%M:%SZ")]
        assert row["verdict"] == "ran-late" and catch_up["metadata"]["name"] in row["jobs"], row
        assert "the catch-up the controller starts when the CronJob is un-suspended: cronctl resume of the pause" \
            in row["reason"] and REASON in row["reason"], (extra, row)

    # live, without the ledger: the pause is kept on the CronJob by resume
    b = cronctl(["bundle", "nightly", "-n", namespace, "--out", str(tmp_path / "live")], kubeconfig)
    assert b.returncode == 0, b.stderr
    (cj,) = json.loads((tmp_path / "live" / "bundle.json").read_text())["cronjobs"]
    assert [p for p in cj["suspended_periods"] if REASON in p["source"] and p["end"]], cj["suspended_periods"]
