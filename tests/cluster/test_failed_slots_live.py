"""A CronJob that fails every slot, on the real control plane (issue 34 item 1): the controller makes
each Job on time, the pod simulator exits 1 (``sim.cronctl.dev/exit-code``), the Job controller marks
it Failed (BackoffLimitExceeded, backoffLimit 0). Every reader of the slots must say so: ``history``
(text and -o json), ``status`` (one CronJob and the overview) and the fleet page; none may call the
CronJob healthy. A CronJob beside it that succeeds is the control.

The CronJobs run ``*/1``: the test waits for two failed slots (about three minutes)."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from cluster_support import ROOT, cronctl, cronjob_body, list_jobs, terminal, wait_for

pytestmark = [pytest.mark.cluster]
UTC = timezone.utc
SCHEMA = json.loads((ROOT / "cronctl" / "data" / "history.schema.json").read_text())
TS = "batch.kubernetes.io/cronjob-scheduled-timestamp"


def _slot(job: dict[str, Any]) -> str:
    t = datetime.strptime(job["metadata"]["annotations"][TS], "%Y-%m-%dT%H:%M:%S%z").astimezone(UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _finished(k8s: Any, ns: str, name: str, outcome: str) -> list[dict[str, Any]]:
    return [j for j in list_jobs(k8s, ns) if TS in (j["metadata"].get("annotations") or {})
            and j["metadata"]["name"].startswith(name + "-") and terminal(j) == outcome]


def _run(kubeconfig: str, *args: str) -> str:
    r = cronctl(list(args), kubeconfig)
    assert r.returncode == 0, r.stderr
    return str(r.stdout)


def test_a_cronjob_that_fails_every_slot_is_failed_in_history_status_and_the_fleet_page(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path) -> None:
    for name, code in (("failing-sync", 1), ("fine", 0)):
        k8s.batch.create_namespaced_cron_job(namespace, cronjob_body(name, schedule="*/1 * * * *", duration=1,
                                                                     exit_code=code, policy="Allow", backoff=0))
    failed = wait_for("two failed Jobs of failing-sync", lambda: (lambda js: js if len(js) >= 2 else None)(
        _finished(k8s, namespace, "failing-sync", "Failed")), 240, every=2)
    wait_for("a succeeded Job of fine", lambda: _finished(k8s, namespace, "fine", "Complete"), 120, every=2)
    slots = sorted(_slot(j) for j in failed)

    # history -o json: the verdict says a Job was made; the outcome says it failed, and why
    doc = json.loads(_run(kubeconfig, "history", "-n", namespace, "-o", "json"))
    jsonschema.validate(doc, SCHEMA)
    hs = {h["name"]: h for h in doc["cronjobs"]}
    rows = {r["slot"]: r for r in hs["failing-sync"]["slots"]}
    for s in slots:
        assert rows[s]["verdict"] in ("ran", "ran-late"), rows[s]
        assert (rows[s]["outcome"], rows[s]["failure_reason"]) == ("failed", "BackoffLimitExceeded"), rows[s]
    assert hs["failing-sync"]["outcome_counts"]["failed"] >= 2
    assert hs["failing-sync"]["outcome_counts"]["succeeded"] == 0
    assert hs["fine"]["outcome_counts"]["failed"] == 0 and hs["fine"]["outcome_counts"]["succeeded"] >= 1

    # the text table: an outcome column beside the verdict
    text = _run(kubeconfig, "history", "failing-sync", "-n", namespace)
    for s in slots:
        line = next(x for x in text.splitlines() if f"{s[11:16]}Z" in x)
        assert re.search(r"\b(ran|ran-late)\s+failed\s", line), line
    assert re.search(r"; failed \d+$", next(x for x in text.splitlines() if x.startswith("  ran ")))

    # status of the CronJob: the recent slots say FAILED and count them
    one = _run(kubeconfig, "status", "failing-sync", "-n", namespace)
    assert "FAILED (BackoffLimitExceeded)" in one
    assert re.search(r"\(!\) \d+ of the last \d+ slots failed", one), one
    recent = json.loads(_run(kubeconfig, "status", "failing-sync", "-n", namespace, "-o", "json"))["recent_slots"]
    assert sum(1 for r in recent if r["outcome"] == "failed") >= 2

    # the overview: a FAILED count per CronJob
    ov = {r["cronjob"]: r for r in json.loads(_run(kubeconfig, "status", "-n", namespace, "-o", "json"))["cronjobs"]}
    assert ov["failing-sync"]["failed"] >= 2 and ov["fine"]["failed"] == 0
    table = _run(kubeconfig, "status", "-n", namespace).splitlines()
    at = table[0].index(" FAILED ") + 1  # the columns are aligned: the count starts under its head
    failing_line = next(x for x in table if x.startswith("failing-sync"))
    assert int(failing_line[at:].split()[0]) >= 2, (table[0], failing_line)

    # the fleet page: the failure colour, counted, and never "none lost"
    page = tmp_path / "fleet.html"
    line = _run(kubeconfig, "history", "-n", namespace, "--html", str(page))
    assert re.search(r"failed \d+ in 1,", line), line
    html = page.read_text()
    summary = re.search(r'<th title="[^"]*/failing-sync .*?<td class="sum ([a-z]+)">([^<]*)</td>', html, re.S)
    assert summary and summary.group(1) == "failed" and summary.group(2).startswith("failed "), summary
    assert "none lost" not in summary.group(2)
    row = re.search(r'<th title="[^"]*/failing-sync .*?</tr>', html, re.S)
    assert row and 'class="vf' in row.group(0)
    fine = re.search(r'<th title="[^"]*/fine .*?<td class="sum ([a-z]+)">', html, re.S)
    assert fine and fine.group(1) == "ok"
