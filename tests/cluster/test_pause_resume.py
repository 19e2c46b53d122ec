"""`cronctl pause` / `cronctl resume` on the real control plane: who, why and until when on the
CronJob, refusals that change nothing, what resuming starts, and status/lint/history telling a
pause past its until."""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from cluster_support import cronctl, cronjob_body, read_cronjob, wait_for

pytestmark = [pytest.mark.cluster]
UTC = timezone.utc
PAUSE_KEYS = ("cronctl.dev/paused-by", "cronctl.dev/paused-at", "cronctl.dev/pause-reason",
              "cronctl.dev/paused-until")


def pause_annotations(cj: dict[str, Any]) -> dict[str, str]:
    return {k: v for k, v in (cj["metadata"].get("annotations") or {}).items() if k in PAUSE_KEYS}


def test_pause_records_who_why_and_until_and_resume_clears_it(kubeconfig: str, namespace: str, k8s: Any) -> None:
    k8s.batch.create_namespaced_cron_job(namespace, cronjob_body("nightly", schedule="*/1 * * * *", policy="Allow"))
    r = cronctl(["pause", "nightly", "-n", namespace, "--reason", "db migration", "--until", "2h", "--yes"],
                kubeconfig)
    assert r.returncode == 0, r.stderr
    cj = read_cronjob(k8s, namespace, "nightly")
    ann = pause_annotations(cj)
    assert cj["spec"]["suspend"] is True and ann["cronctl.dev/pause-reason"] == "db migration"
    assert ann["cronctl.dev/paused-by"] and ann["cronctl.dev/paused-by"] != "unknown"
    until = datetime.strptime(ann["cronctl.dev/paused-until"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert timedelta(minutes=119) < until - datetime.now(UTC) <= timedelta(hours=2)
    # a second pause is refused and changes nothing
    again = cronctl(["pause", "nightly", "-n", namespace, "--reason", "other", "--yes"], kubeconfig)
    assert again.returncode == 3 and "already paused by" in again.stderr
    assert pause_annotations(read_cronjob(k8s, namespace, "nightly")) == ann
    s = json.loads(cronctl(["status", "nightly", "-n", namespace, "-o", "json"], kubeconfig).stdout)
    assert s["pause"]["reason"] == "db migration" and s["pause"]["overdue"] is False
    # a slot passes while paused: history says by whom and why
    now = datetime.now(UTC)
    time.sleep(61 - now.second + 12)
    h = json.loads(cronctl(["history", "nightly", "-n", namespace, "-o", "json"], kubeconfig).stdout)
    missed = [x for x in h["cronjobs"][0]["slots"] if x["verdict"] == "missed-suspended"]
    assert missed and all("paused by" in x["reason"] and "db migration" in x["reason"] for x in missed), missed
    # resume says what the controller will start, un-suspends and removes the pause
    res = cronctl(["resume", "nightly", "-n", namespace, "--yes", "-o", "json"], kubeconfig)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["prediction"]["decision"] == "create" and doc["prediction"]["job_name"].startswith("nightly-")
    # the plan's line by diff's rule (issue 38, item 4) names the same Job, made at the write
    assert doc["change"]["createsJob"] == doc["prediction"]["job_name"] and doc["change"]["actsNow"] is True
    assert f"at the write, by cronctl diff's rule: creates Job {doc['change']['createsJob']} at once" in res.stderr
    cj = read_cronjob(k8s, namespace, "nightly")
    assert cj["spec"]["suspend"] is False and pause_annotations(cj) == {}
    # the catch-up it predicted is the one the controller starts
    wait_for(f"the catch-up Job {doc['prediction']['job_name']}",
             lambda: k8s.batch.list_namespaced_job(namespace, field_selector=f"metadata.name={doc['prediction']['job_name']}").items,
             60)


def test_pause_and_resume_refuse_and_change_nothing(kubeconfig: str, namespace: str, k8s: Any) -> None:
    k8s.batch.create_namespaced_cron_job(namespace, cronjob_body("held"))
    r = cronctl(["pause", "held", "-n", namespace, "--yes"], kubeconfig)
    assert r.returncode == 5 and "--reason" in r.stderr
    r = cronctl(["pause", "held", "-n", namespace, "--reason", "x", "--until", "2020-01-01T00:00:00Z", "--yes"],
                kubeconfig)
    assert r.returncode == 2 and "not in the future" in r.stderr  # a flag value out of its range: usage, exit 2
    r = cronctl(["pause", "held", "-n", namespace, "--reason", "x", "--until", "soonish", "--yes"], kubeconfig)
    assert r.returncode == 2 and "bad --until" in r.stderr
    assert read_cronjob(k8s, namespace, "held")["spec"]["suspend"] is False
    # a run-manual's record holds the CronJob: neither pause nor resume touches it
    record = {"cronctl.dev/run-id": "r-1", "cronctl.dev/operator": "bob", "cronctl.dev/step": "waiting",
              "cronctl.dev/original-suspend": "false", "cronctl.dev/job-name": "held-manual"}
    k8s.batch.patch_namespaced_cron_job("held", namespace, {"spec": {"suspend": True},
                                                            "metadata": {"annotations": record}})
    for args in (["pause", "held", "--reason", "x"], ["resume", "held"]):
        r = cronctl([*args, "-n", namespace, "--yes"], kubeconfig)
        assert r.returncode == 3 and "held by run r-1 of bob" in r.stderr, r.stderr
    cj = read_cronjob(k8s, namespace, "held")
    assert cj["spec"]["suspend"] is True and pause_annotations(cj) == {}
    # without a terminal and without --yes: refused
    k8s.batch.patch_namespaced_cron_job("held", namespace, {"metadata": {"annotations": {k: None for k in record}}})
    r = cronctl(["resume", "held", "-n", namespace], kubeconfig)
    assert r.returncode == 3 and "--yes" in r.stderr
    assert read_cronjob(k8s, namespace, "held")["spec"]["suspend"] is True


def test_a_pause_past_its_until_is_flagged_by_status_and_lint(kubeconfig: str, namespace: str, k8s: Any) -> None:
    k8s.batch.create_namespaced_cron_job(namespace, cronjob_body("brief"))
    # an --until a little ahead; on a loaded machine cronctl once started after it had passed (the
    # matrix run of stop 44: "--until ... is not in the future", rightly refused): then further ahead
    for ahead in (10, 30, 90):
        until = (datetime.now(UTC) + timedelta(seconds=ahead)).strftime("%Y-%m-%dT%H:%M:%SZ")
        r = cronctl(["pause", "brief", "-n", namespace, "--reason", "short window", "--until", until, "--yes"],
                    kubeconfig)
        if "is not in the future" not in r.stderr:
            break
    assert r.returncode == 0, r.stderr
    wait_for("the pause to be past its until", lambda: datetime.now(UTC) > datetime.strptime(
        until, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC) + timedelta(seconds=1), 120)
    s = json.loads(cronctl(["status", "brief", "-n", namespace, "-o", "json"], kubeconfig).stdout)
    assert s["pause"]["overdue"] is True
    text = cronctl(["status", "brief", "-n", namespace], kubeconfig).stdout
    assert "PAST ITS UNTIL" in text
    lint = cronctl(["lint", "-n", namespace, "cronjob/brief", "-o", "json", "--fail-on", "none"], kubeconfig)
    assert lint.returncode == 0, lint.stderr
    assert any(f["rule"] == "CJ025" for f in json.loads(lint.stdout)["findings"]), lint.stdout


def test_a_secret_in_the_reason_is_masked_by_pause_status_and_resume(kubeconfig: str, namespace: str,
                                                                      k8s: Any) -> None:
    # the reason is stored on the CronJob as written (it is the cluster's object); what cronctl
    # prints of it (pause, status text and -o json, the overview, resume) is masked like run-manual's
    secret = "Hunter2-s3cret-value"
    k8s.batch.create_namespaced_cron_job(namespace, cronjob_body("masked", schedule="0 3 * * *", policy="Allow"))
    outs = [cronctl(["pause", "masked", "-n", namespace, "--reason", f"rotating DB_PASSWORD={secret}", "--yes"],
                    kubeconfig)]
    assert outs[0].returncode == 0, outs[0].stderr
    assert secret in pause_annotations(read_cronjob(k8s, namespace, "masked"))["cronctl.dev/pause-reason"]
    outs += [cronctl(["status", "masked", "-n", namespace], kubeconfig),
             cronctl(["status", "masked", "-n", namespace, "-o", "json"], kubeconfig),
             cronctl(["status", "-n", namespace, "-o", "json"], kubeconfig),
             cronctl(["resume", "masked", "-n", namespace, "--yes", "-o", "json"], kubeconfig)]
    for r in outs:
        assert r.returncode == 0, r.stderr
        assert secret not in r.stdout + r.stderr, r.args
    assert "DB_PASSWORD=<redacted" in outs[1].stdout  # masked where it was, not dropped
    assert json.loads(outs[4].stdout)["pause"]["reason"].startswith("rotating DB_PASSWORD=<redacted")
