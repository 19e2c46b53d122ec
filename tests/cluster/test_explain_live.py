"""`cronctl explain cronjob/NAME` against the real local control plane.

The CronJob is created suspended so the real controller never runs it; the expected runs are
docs/SEMANTICS.md §3's (`30 2 * * *` America/New_York: none on 2026-03-08, next 2026-03-09T06:30Z) and
the starting point is the object's own creationTimestamp (§4.2: no lastScheduleTime yet).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from cluster_support import bare_job_template, cronjob_body
from cronctl.cli import main
from cronctl.errors import ExitCode


def test_a_live_cronjob_is_explained_from_the_api_server(capsys: pytest.CaptureFixture[str], kubeconfig: str,
                                                         namespace: str, k8s: Any) -> None:
    k8s.batch.create_namespaced_cron_job(namespace, cronjob_body(
        "nightly", schedule="30 2 * * *", tz="America/New_York", suspend=True, deadline=300, policy=None, history=None,
        job_template=bare_job_template()))
    created = k8s.batch.read_namespaced_cron_job("nightly", namespace).metadata.creation_timestamp
    rc = main(["explain", "cronjob/nightly", "-n", namespace, "--kubeconfig", kubeconfig,
               "--from", "2026-03-07T00:00:00Z", "--count", "2", "-o", "json"])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    r = json.loads(cap.out)
    assert (r["namespace"], r["name"]) == (namespace, "nightly")
    assert r["schedule"] == "30 2 * * *" and r["timeZone"] == "America/New_York"
    assert [n["utc"] for n in r["next"]] == ["2026-03-07T07:30:00Z", "2026-03-09T06:30:00Z"]
    c = r["controller"]
    assert c["suspended"] is True and c["decision"] == "suspended"
    # earliest = creationTimestamp, or now - startingDeadlineSeconds if later (it is: now is the clock).
    assert c["earliest"] >= created.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert r["warnings"] == []  # an existing object: the create-only API rules do not apply


def test_a_missing_cronjob_exits_not_found(capsys: pytest.CaptureFixture[str], kubeconfig: str,
                                           namespace: str) -> None:
    rc = main(["explain", "cronjob/absent", "-n", namespace, "--kubeconfig", kubeconfig])
    cap = capsys.readouterr()
    assert rc == ExitCode.NOT_FOUND
    assert cap.out == ""
    assert "absent" in cap.err and "not found" in cap.err
    assert "Traceback" not in cap.err
