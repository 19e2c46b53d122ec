"""The incident of docs/BACKGROUND.md §4.4 replayed through cronctl on the real control plane.

The incident: a ``*/1``-style Forbid CronJob, a manual Job that ran for minutes, and scheduled
Jobs started beside it (Forbid only looks at ``.status.active``). Through ``cronctl run-manual``
the same manual run (about 150 s) must have no scheduled Job overlapping it, and after the restore
the catch-up Job the controller starts (or does not start) must be exactly the one cronctl
predicted before un-suspending.

Two CronJobs run side by side to share the wait: ``startingDeadlineSeconds: 120`` (the seed's
value: the latest missed minute is always inside the window, so a catch-up is certain) and
``5`` (the restore is timed to land ~40 s after a minute boundary: no catch-up). In both cases
what cronctl predicted before un-suspending must be what the controller does.
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from cluster_support import (create_cronjob, cronctl, cronctl_env, early_in_a_minute, owned_jobs, read_job,
                             sleep_until, start_cronctl, wait_for)

pytestmark = [pytest.mark.cluster, pytest.mark.compat]  # run on every supported version
UTC = timezone.utc
SCHEDULED_AT = "batch.kubernetes.io/cronjob-scheduled-timestamp"


def _t(s: str) -> datetime:
    return datetime.fromisoformat(s.replace("Z", "+00:00")).astimezone(UTC)


def _interval(job: dict[str, Any], now: datetime) -> tuple[datetime, datetime]:
    st = job.get("status") or {}
    start = _t(st.get("startTime") or job["metadata"]["creationTimestamp"])
    end = st.get("completionTime")
    if not end:
        for c in st.get("conditions") or []:
            if c["type"] in ("Complete", "Failed") and c["status"] == "True":
                end = c["lastTransitionTime"]
    return start, _t(end) if end else now


def test_seed_004_manual_run_has_no_overlapping_scheduled_job_and_the_catch_up_is_the_predicted_one(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path) -> None:
    # Start at second 3-8 of a minute: the fresh CronJobs are suspended long before their first
    # slot, and the restore (~156 s later) lands ~40 s after a minute boundary — inside the 120 s
    # deadline, far outside the 5 s one.
    early_in_a_minute(lo=3, hi=8)
    cases = {"mp-orders-sync": 120, "mp-orders-sync-tight": 5}
    cjs = {name: create_cronjob(k8s, namespace, name, schedule="*/1 * * * *", deadline=d, duration=150,
                                tz="Europe/Moscow", log="synced orders (incident replay)")
           for name, d in cases.items()}
    procs = {name: start_cronctl(["run-manual", name, "-n", namespace, "--yes", "--settle", "3s", "--timeout", "5m",
                                  "--reason", "incident replay", "-o", "json"], kubeconfig,
                                 env=cronctl_env(tmp_path / name)) for name in cases}
    results = {name: p.communicate(timeout=420) for name, p in procs.items()}
    for name, p in procs.items():
        assert p.returncode == 0, (name, results[name][1])

    for name, cj in cjs.items():
        rec = json.loads(results[name][0])
        pred = rec["prediction"]
        # the restore's prediction is said once, before un-suspending; the line after it says what was done
        lines = results[name][1].splitlines()
        said = [ln for ln in lines if ln.startswith("• ") and pred["text"] in ln]
        assert len(said) == 1 and said[0].startswith("• restore: set suspend back"), lines
        assert any(ln.startswith("• restored cronjob") and pred["text"] not in ln for ln in lines), lines
        restored_at = _t(rec["restored_at"])
        manual = read_job(k8s, namespace, f"{name}-manual")
        assert manual is not None
        m_start, m_end = _interval(manual, datetime.now(UTC))
        assert m_end - m_start >= timedelta(seconds=140)
        if name == "mp-orders-sync":
            assert pred["decision"] == "create", pred  # the latest missed minute is < 60 s old, D = 120
        else:
            assert pred["decision"] != "create", pred  # the latest missed minute is ~40 s old, D = 5
        if pred["decision"] == "create":
            catch_up = wait_for(f"the predicted catch-up Job {pred['job_name']}",
                                lambda: read_job(k8s, namespace, pred["job_name"]), 30)
            assert _t(catch_up["metadata"]["annotations"][SCHEDULED_AT]) == _t(pred["catch_up_for"])
            created = _t(catch_up["metadata"]["creationTimestamp"])
            assert restored_at - timedelta(seconds=2) <= created <= restored_at + timedelta(seconds=15)
            # cronctl watched for it after un-suspending and saw what it had predicted
            assert rec["restore_check"] == {"expected_job": pred["job_name"], "seen": True,
                                            "created": catch_up["metadata"]["creationTimestamp"]}, rec
        else:
            assert "restore_check" not in rec  # nothing predicted, nothing to watch for
            # give the controller's immediate post-unsuspend sync time to (not) act
            sleep_until(restored_at + timedelta(seconds=10))
        now = datetime.now(UTC)
        jobs = owned_jobs(k8s, namespace, cj)
        scheduled = [j for j in jobs if SCHEDULED_AT in (j["metadata"].get("annotations") or {})]
        # the only Job for a slot at or before the restore is the predicted catch-up (or none)
        caught_up = sorted(j["metadata"]["name"] for j in scheduled
                           if _t(j["metadata"]["annotations"][SCHEDULED_AT]) <= restored_at)
        assert caught_up == ([pred["job_name"]] if pred["decision"] == "create" else []), (name, pred)
        # and no scheduled Job ran at the same time as the manual one (the seed's 412 duplicates)
        for j in scheduled:
            s, e = _interval(j, now)
            assert e <= m_start or s >= m_end, f"{j['metadata']['name']} overlaps {name}-manual"

        st = cronctl(["status", name, "-n", namespace, "-o", "json"], kubeconfig)
        assert st.returncode == 0, st.stderr
        s_json = json.loads(st.stdout)
        by_name = {j["name"]: j for j in s_json["jobs"]}
        assert by_name[f"{name}-manual"]["origin"] == "manual"
        assert all(by_name[j["metadata"]["name"]]["origin"] == "scheduled" for j in scheduled)
        assert not any(f"{name}-manual" in g["jobs"] for g in s_json["overlaps"])
        print(f"\nMEASURE {name}: prediction={pred['text']!r} suspended_beyond_job="
              f"{rec.get('suspended_beyond_job_seconds')}s api_requests={rec['api_requests']}")
