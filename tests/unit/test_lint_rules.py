"""Each lint rule on a table of CronJobs: a positive and a negative case per rule, expectations
derived by hand from the Kubernetes semantics (docs/SEMANTICS.md) and the tz rules (not from the code)."""

from __future__ import annotations

import copy
from datetime import datetime, timezone
from typing import Any

import pytest

from cronctl.lint.engine import fails, lint_object, summarize
from cronctl.lint.rules import RULES, RULES_BY_ID

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=timezone.utc)
DIGEST = "registry.example/orders-sync@sha256:" + "a" * 64
DELETE = object()

RESOURCES = {"requests": {"cpu": "100m", "memory": "256Mi"}, "limits": {"memory": "256Mi"}}

# A CronJob that every rule accepts: explicit zone, deadlines, Forbid, enough history, pinned
# image, dedicated service account, a podFailurePolicy for its retry, requests and a memory
# limit. */10 => interval 10m;
# 200 successful Jobs = 33h of history.
GOOD: dict[str, Any] = {
    "apiVersion": "batch/v1", "kind": "CronJob",
    "metadata": {"name": "mp-orders-sync", "namespace": "integrations"},
    "spec": {
        "schedule": "*/10 * * * *", "timeZone": "Etc/UTC", "startingDeadlineSeconds": 120,
        "concurrencyPolicy": "Forbid", "successfulJobsHistoryLimit": 200, "failedJobsHistoryLimit": 5,
        "jobTemplate": {"spec": {
            "activeDeadlineSeconds": 300, "backoffLimit": 1, "ttlSecondsAfterFinished": 604800,
            "podFailurePolicy": {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [3]}}]},
            "template": {"spec": {
                "restartPolicy": "Never", "serviceAccountName": "orders-sync",
                "containers": [{"name": "sync", "image": DIGEST, "resources": RESOURCES}],
            }},
        }},
    },
}


def cj(**changes: Any) -> dict[str, Any]:
    """GOOD with dotted-path changes: cj(**{"spec.timeZone": DELETE}); a callable value edits in place."""
    obj = copy.deepcopy(GOOD)
    for path, value in changes.items():
        keys = path.split(".")
        node = obj
        for k in keys[:-1]:
            node = node.setdefault(k, {})
        if value is DELETE:
            node.pop(keys[-1], None)
        elif callable(value):
            value(node[keys[-1]])
        else:
            node[keys[-1]] = value
    return obj


POD = "spec.jobTemplate.spec.template.spec"
JOB = "spec.jobTemplate.spec"


def hits(rule_id: str, obj: dict[str, Any]) -> list[Any]:
    return RULES_BY_ID[rule_id].check(obj, NOW)


def test_the_good_cronjob_has_no_findings_at_all() -> None:
    assert lint_object(GOOD, NOW) == []


def test_rule_ids_are_unique_stable_and_complete() -> None:
    ids = [r.id for r in RULES]
    assert ids == [f"CJ{n:03d}" for n in range(1, 35)]
    assert len({r.name for r in RULES}) == len(RULES)
    for r in RULES:
        assert r.severity in ("error", "warning", "info")
        assert r.why and r.fix and "\n" not in r.why and "\n" not in r.fix


def test_the_documented_rule_table_has_one_row_per_rule_in_order() -> None:
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "commands" / "lint.md").read_text()
    rows = re.findall(r"^\| (CJ\d{3}) `([a-z0-9-]+)` \| (\w+) \| (.+) \|$", page, re.M)
    assert rows == [(r.id, r.name, r.severity, f"{r.summary}: {r.why}") for r in RULES]


# (rule, changes, expected hit count, substrings every message must contain, severity of the hit)
CASES: list[tuple[str, dict[str, Any], int, tuple[str, ...], str | None]] = [
    # CJ001 missing timeZone
    ("CJ001", {"spec.timeZone": DELETE}, 1, ("spec.timeZone",), "warning"),
    ("CJ001", {}, 0, (), None),
    ("CJ001", {"spec.timeZone": DELETE, "spec.schedule": "TZ=UTC 0 * * * *"}, 0, (), None),  # CJ005's job
    # CJ002 startingDeadlineSeconds absent
    ("CJ002", {"spec.startingDeadlineSeconds": DELETE}, 1, ("spec.startingDeadlineSeconds",), "warning"),
    ("CJ002", {"spec.startingDeadlineSeconds": 0}, 0, (), None),
    # CJ003 startingDeadlineSeconds 0 = never runs (docs/SEMANTICS.md §4.3)
    ("CJ003", {"spec.startingDeadlineSeconds": 0}, 1, ("spec.startingDeadlineSeconds is 0", "never"), "error"),
    ("CJ003", {"spec.startingDeadlineSeconds": 10}, 0, (), None),
    ("CJ003", {"spec.startingDeadlineSeconds": DELETE}, 0, (), None),
    # CJ004 under 10 s
    ("CJ004", {"spec.startingDeadlineSeconds": 9}, 1, ("spec.startingDeadlineSeconds is 9",), "warning"),
    ("CJ004", {"spec.startingDeadlineSeconds": 1}, 1, ("is 1",), "warning"),
    ("CJ004", {"spec.startingDeadlineSeconds": 10}, 0, (), None),
    ("CJ004", {"spec.startingDeadlineSeconds": 0}, 0, (), None),  # CJ003's job
    # CJ005 TZ / CRON_TZ in the schedule
    ("CJ005", {"spec.schedule": "TZ=UTC 0 * * * *", "spec.timeZone": DELETE}, 1, ("TZ",), "error"),
    ("CJ005", {"spec.schedule": "CRON_TZ=Europe/Berlin 0 * * * *"}, 1, ("overrides spec.timeZone 'Etc/UTC'",), "error"),
    ("CJ005", {}, 0, (), None),
    # CJ008 never fires: 30 February does not exist (parses, docs/SEMANTICS.md §1)
    ("CJ008", {"spec.schedule": "0 0 30 2 *"}, 1, ("'0 0 30 2 *'", "never fires"), "error"),
    ("CJ008", {"spec.schedule": "0 0 29 2 *"}, 0, (), None),  # leap day is found within 5 years
    ("CJ008", {"spec.schedule": "0 0 32 * *"}, 0, (), None),  # unparseable: CJ009's job
    # CJ009 unparseable
    ("CJ009", {"spec.schedule": "0 0 32 * *"}, 1, ("spec.schedule", "32"), "error"),
    ("CJ009", {"spec.schedule": "0 0 * *"}, 1, ("spec.schedule",), "error"),
    ("CJ009", {"spec.schedule": DELETE}, 1, ("spec.schedule is missing",), "error"),
    ("CJ009", {"spec.schedule": "@reboot"}, 1, ("spec.schedule",), "error"),
    ("CJ009", {"spec.schedule": "0 0 ? * MON"}, 0, (), None),
    # CJ010 unknown zone
    ("CJ010", {"spec.timeZone": "Mars/Base"}, 1, ("spec.timeZone 'Mars/Base'",), "error"),
    ("CJ010", {"spec.timeZone": ""}, 1, ("spec.timeZone ''",), "error"),
    ("CJ010", {"spec.timeZone": "Europe/Berlin"}, 0, (), None),
    # CJ011 name over 52 characters (63 - 11 for the "-<8 digits>" suffix)
    ("CJ011", {"metadata.name": "a" * 53}, 1, ("metadata.name", "53 characters"), "error"),
    ("CJ011", {"metadata.name": "a" * 52}, 0, (), None),
    # CJ012 Replace on work that cannot be interrupted
    ("CJ012", {"spec.concurrencyPolicy": "Replace"}, 1, ("spec.concurrencyPolicy is Replace",), "warning"),
    ("CJ012", {"spec.concurrencyPolicy": "Replace",
               "metadata.annotations": {"cronctl.dev/interruptible": "true"}}, 0, (), None),
    ("CJ012", {}, 0, (), None),
    # CJ013 Allow (explicit = info, unset = warning) on work with side effects
    ("CJ013", {"spec.concurrencyPolicy": DELETE}, 1, ("not set (= Allow)",), "warning"),
    ("CJ013", {"spec.concurrencyPolicy": "Allow"}, 1, ("spec.concurrencyPolicy is Allow",), "info"),
    ("CJ013", {"spec.concurrencyPolicy": "Allow",
               "metadata.annotations": {"cronctl.dev/side-effects": "none"}}, 0, (), None),
    ("CJ013", {}, 0, (), None),
    # CJ014 no activeDeadlineSeconds
    ("CJ014", {f"{JOB}.activeDeadlineSeconds": DELETE}, 1, (f"{JOB}.activeDeadlineSeconds",), "warning"),
    ("CJ014", {}, 0, (), None),
    # CJ015 activeDeadlineSeconds >= interval with Forbid. */10 => 600 s.
    ("CJ015", {f"{JOB}.activeDeadlineSeconds": 600}, 1, ("600 (10m)", "interval 10m"), "warning"),
    ("CJ015", {f"{JOB}.activeDeadlineSeconds": 599}, 0, (), None),
    ("CJ015", {f"{JOB}.activeDeadlineSeconds": 600, "spec.concurrencyPolicy": "Allow"}, 0, (), None),
    # weekdays at 09:00: shortest gap Mon->Tue = 24h = 86400 s (Fri->Mon is 72h)
    ("CJ015", {"spec.schedule": "0 9 * * 1-5", f"{JOB}.activeDeadlineSeconds": 86400}, 1, ("86400 (24h)", "interval 24h"), "warning"),
    ("CJ015", {"spec.schedule": "0 9 * * 1-5", f"{JOB}.activeDeadlineSeconds": 86399}, 0, (), None),
    # 09:00 and 10:00 daily: shortest gap is 1h
    ("CJ015", {"spec.schedule": "0 9,10 * * *", f"{JOB}.activeDeadlineSeconds": 3600}, 1, ("interval 60m",), "warning"),
    # 01:30 New York runs twice one hour apart on fall-back nights; that is not the interval (24h)
    ("CJ015", {"spec.schedule": "30 1 * * *", "spec.timeZone": "America/New_York",
               f"{JOB}.activeDeadlineSeconds": 7200}, 0, (), None),
    ("CJ015", {"spec.schedule": "@every 90m", f"{JOB}.activeDeadlineSeconds": 5400}, 1, ("interval 90m",), "warning"),
    # CJ016 default backoffLimit
    ("CJ016", {f"{JOB}.backoffLimit": DELETE}, 1, (f"{JOB}.backoffLimit is not set (= 6)",), "warning"),
    ("CJ016", {f"{JOB}.backoffLimit": 0}, 0, (), None),
    # CJ017 restartPolicy OnFailure
    ("CJ017", {f"{POD}.restartPolicy": "OnFailure"}, 1, (f"{POD}.restartPolicy is OnFailure",), "warning"),
    ("CJ017", {}, 0, (), None),
    # CJ018 / CJ019 history limits 0
    ("CJ018", {"spec.failedJobsHistoryLimit": 0}, 1, ("spec.failedJobsHistoryLimit is 0",), "warning"),
    ("CJ018", {"spec.failedJobsHistoryLimit": 1}, 0, (), None),
    ("CJ019", {"spec.successfulJobsHistoryLimit": 0}, 1, ("spec.successfulJobsHistoryLimit is 0",), "warning"),
    ("CJ019", {"spec.successfulJobsHistoryLimit": 1}, 0, (), None),
    # CJ020 successful history shorter than a day: default 3 x 10m = 30m; 144 x 10m = 24h exactly is enough
    ("CJ020", {"spec.successfulJobsHistoryLimit": DELETE}, 1, ("not set (= 3)", "about 30m", "interval of 10m"), "info"),
    ("CJ020", {"spec.successfulJobsHistoryLimit": 143}, 1, ("143",), "info"),
    ("CJ020", {"spec.successfulJobsHistoryLimit": 144}, 0, (), None),
    ("CJ020", {"spec.successfulJobsHistoryLimit": DELETE, "spec.schedule": "0 3 * * *"}, 0, (), None),  # 3 days
    ("CJ020", {"spec.successfulJobsHistoryLimit": 0}, 0, (), None),  # CJ019's job
    # CJ021 failed history below 3 (default 1)
    ("CJ021", {"spec.failedJobsHistoryLimit": DELETE}, 1, ("not set (= 1)",), "info"),
    ("CJ021", {"spec.failedJobsHistoryLimit": 2}, 1, ("spec.failedJobsHistoryLimit 2",), "info"),
    ("CJ021", {"spec.failedJobsHistoryLimit": 3}, 0, (), None),
    ("CJ021", {"spec.failedJobsHistoryLimit": 0}, 0, (), None),  # CJ018's job
    # CJ022 TTL: under the 1h event TTL = warning, under a day = info
    ("CJ022", {f"{JOB}.ttlSecondsAfterFinished": 600}, 1, ("ttlSecondsAfterFinished is 600 (10m)",), "warning"),
    ("CJ022", {f"{JOB}.ttlSecondsAfterFinished": 0}, 1, ("is 0",), "warning"),
    ("CJ022", {f"{JOB}.ttlSecondsAfterFinished": 3600}, 1, ("3600 (60m)",), "info"),
    ("CJ022", {f"{JOB}.ttlSecondsAfterFinished": 86400}, 0, (), None),
    ("CJ022", {f"{JOB}.ttlSecondsAfterFinished": DELETE}, 0, (), None),
    # CJ023 image without digest: one hit per container, init containers included
    ("CJ023", {f"{POD}.containers": [{"name": "sync", "image": "busybox:1.36"}]}, 1,
     (f"{POD}.containers[0].image 'busybox:1.36'",), "warning"),
    ("CJ023", {f"{POD}.initContainers": [{"name": "wait", "image": "busybox"}],
               f"{POD}.containers": [{"name": "a", "image": DIGEST}, {"name": "b", "image": "app:latest"}]}, 2,
     ("image",), "warning"),
    ("CJ023", {}, 0, (), None),
    # CJ024 default service account
    ("CJ024", {f"{POD}.serviceAccountName": DELETE}, 1, ("not set (= default)",), "warning"),
    ("CJ024", {f"{POD}.serviceAccountName": "default"}, 1, ("serviceAccountName is default",), "warning"),
    ("CJ024", {f"{POD}.serviceAccountName": DELETE, f"{POD}.automountServiceAccountToken": False}, 0, (), None),
    ("CJ024", {}, 0, (), None),
    # CJ025 a cronctl pause past its --until (NOW is 2026-12-02T12:00Z)
    ("CJ025", {"spec.suspend": True, "metadata.annotations": {
        "cronctl.dev/paused-by": "alice", "cronctl.dev/pause-reason": "db migration",
        "cronctl.dev/paused-at": "2026-12-01T08:00:00Z", "cronctl.dev/paused-until": "2026-12-02T09:00:00Z"}},
     1, ("paused by alice", "db migration", "past its until by 3h"), "warning"),
    ("CJ025", {"spec.suspend": True, "metadata.annotations": {
        "cronctl.dev/paused-by": "alice", "cronctl.dev/pause-reason": "db migration",
        "cronctl.dev/paused-until": "2026-12-02T13:00:00Z"}}, 0, (), None),  # not yet
    ("CJ025", {"spec.suspend": False, "metadata.annotations": {
        "cronctl.dev/paused-by": "alice", "cronctl.dev/paused-until": "2026-12-02T09:00:00Z"}}, 0, (), None),
    ("CJ025", {"spec.suspend": True}, 0, (), None),  # suspended without a pause: no until to be past
    # CJ026 a cronctl run record left on a suspended CronJob by a failed/interrupted/silent run
    ("CJ026", {"spec.suspend": True, "metadata.annotations": {
        "cronctl.dev/run-id": "ab12", "cronctl.dev/operator": "bob", "cronctl.dev/step": "failed",
        "cronctl.dev/started": "2026-12-02T11:00:00Z", "cronctl.dev/updated": "2026-12-02T11:30:00Z"}},
     1, ("run ab12 of bob", "step failed", "last update 30m ago"), "warning"),
    ("CJ026", {"spec.suspend": True, "metadata.annotations": {
        "cronctl.dev/run-id": "ab12", "cronctl.dev/step": "created",
        "cronctl.dev/started": "2026-12-02T01:00:00Z", "cronctl.dev/updated": "2026-12-02T02:00:00Z"}},
     1, ("step created", "10h ago"), "warning"),  # silent for hours
    ("CJ026", {"spec.suspend": True, "metadata.annotations": {
        "cronctl.dev/run-id": "ab12", "cronctl.dev/step": "created",
        "cronctl.dev/started": "2026-12-02T11:50:00Z", "cronctl.dev/updated": "2026-12-02T11:55:00Z"}},
     0, (), None),  # a run in progress
    ("CJ026", {"spec.suspend": False, "metadata.annotations": {
        "cronctl.dev/run-id": "ab12", "cronctl.dev/step": "failed"}}, 0, (), None),
    # CJ027 retries without a podFailurePolicy: backoffLimit > 0, or unset (= 6)
    ("CJ027", {f"{JOB}.podFailurePolicy": DELETE}, 1,
     (f"{JOB}.podFailurePolicy is not set", "backoffLimit is 1"), "info"),
    ("CJ027", {f"{JOB}.podFailurePolicy": DELETE, f"{JOB}.backoffLimit": DELETE}, 1,
     ("backoffLimit is not set (= 6)",), "info"),
    ("CJ027", {f"{JOB}.podFailurePolicy": {"rules": []}}, 1, ("podFailurePolicy has no rules",), "info"),
    ("CJ027", {f"{JOB}.podFailurePolicy": DELETE, f"{JOB}.backoffLimit": 0}, 0, (), None),  # no retry to stop
    # an Indexed Job counts retries per index (backoffLimitPerIndex); 0 there = no retry whatever backoffLimit says
    ("CJ027", {f"{JOB}.podFailurePolicy": DELETE, f"{JOB}.backoffLimitPerIndex": 2}, 1,
     ("backoffLimitPerIndex is 2",), "info"),
    ("CJ027", {f"{JOB}.podFailurePolicy": DELETE, f"{JOB}.backoffLimitPerIndex": 0}, 0, (), None),
    # OnFailure cannot take a podFailurePolicy (API validation): the message says what else to change
    ("CJ027", {f"{JOB}.podFailurePolicy": DELETE, f"{POD}.restartPolicy": "OnFailure"}, 1,
     ("needs spec.jobTemplate.spec.template.spec.restartPolicy Never; it is OnFailure",), "info"),
    ("CJ027", {}, 0, (), None),
    # CJ028 a sh -c wrapper that can hide a failure; the message names the container, field and finding
    ("CJ028", {f"{POD}.containers": [{"name": "sync", "image": DIGEST, "command": ["/bin/sh", "-c"],
                                      "args": ["python sync.py; echo done"]}]}, 1,
     (f"{POD}.containers[0].args (sync) runs /bin/sh -c", "'python sync.py' is followed by more commands without set -e"),
     "warning"),
    ("CJ028", {f"{POD}.containers": [{"name": "dump", "image": DIGEST,
                                      "command": ["bash", "-c", "pg_dump orders | gzip > /out/o.gz"]}]}, 1,
     (f"{POD}.containers[0].command (dump) runs bash -c", "without set -o pipefail"), "warning"),
    # no command: the image's entrypoint runs args; an init container counts too
    ("CJ028", {f"{POD}.initContainers": [{"name": "wait", "image": DIGEST, "args": ["sh", "-c", "wait-for db || true"]}]},
     1, (f"{POD}.initContainers[0].args (wait)", "'|| true' on the last command"), "warning"),
    ("CJ028", {f"{POD}.containers": [{"name": "sync", "image": DIGEST, "command": ["sh", "-c"],
                                      "args": ["exec python sync.py"]}]}, 0, (), None),
    ("CJ028", {f"{POD}.containers": [{"name": "sync", "image": DIGEST, "command": ["sh", "-ec"],
                                      "args": ["python a.py; python b.py"]}]}, 0, (), None),
    ("CJ028", {f"{POD}.containers": [{"name": "sync", "image": DIGEST, "command": ["python", "-c", "a(); b()"]}]},
     0, (), None),
    ("CJ028", {f"{POD}.containers": [{"name": "sync", "image": DIGEST, "command": ["sh", "-c", 5]}]}, 0, (), None),
    ("CJ028", {}, 0, (), None),
    # CJ029 requests: one hit per container that lacks cpu or memory; a limit alone is also the request
    ("CJ029", {f"{POD}.containers": [{"name": "sync", "image": DIGEST}]}, 1,
     (f"{POD}.containers[0].resources.requests (sync) sets neither cpu nor memory",), "warning"),
    ("CJ029", {f"{POD}.containers": [{"name": "sync", "image": DIGEST, "resources": {"requests": {"cpu": "1"}}}]},
     1, ("sets no memory",), "warning"),
    ("CJ029", {f"{POD}.containers": [{"name": "sync", "image": DIGEST, "resources": {"requests": {"memory": "1Gi"}}}]},
     1, ("sets no cpu",), "warning"),
    ("CJ029", {f"{POD}.containers": [{"name": "sync", "image": DIGEST,
                                      "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}, 0, (), None),
    ("CJ029", {f"{POD}.initContainers": [{"name": "fetch", "image": DIGEST}]}, 1,
     (f"{POD}.initContainers[0].resources.requests (fetch)",), "warning"),
    ("CJ029", {}, 0, (), None),
    # CJ030 memory limit (a cpu limit is not asked for: it only throttles)
    ("CJ030", {f"{POD}.containers": [{"name": "sync", "image": DIGEST,
                                      "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}, 1,
     (f"{POD}.containers[0].resources.limits (sync) sets no memory",), "info"),
    ("CJ030", {f"{POD}.containers": [{"name": "sync", "image": DIGEST,
                                      "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1"}}}]},
     1, ("sets no memory",), "info"),
    ("CJ030", {f"{POD}.initContainers": [{"name": "fetch", "image": DIGEST, "resources": RESOURCES}],
               f"{POD}.containers": [{"name": "a", "image": DIGEST}, {"name": "b", "image": DIGEST}]}, 2,
     ("sets no memory",), "info"),
    ("CJ030", {}, 0, (), None),
    # CJ031 startingDeadlineSeconds above the shortest interval (*/10 => 600 s; equal is not above)
    ("CJ031", {"spec.startingDeadlineSeconds": 601}, 1,
     ("spec.startingDeadlineSeconds 601 (10m)", "shortest interval 10m"), "info"),
    ("CJ031", {"spec.startingDeadlineSeconds": 600}, 0, (), None),
    ("CJ031", {"spec.startingDeadlineSeconds": 3600, "metadata.annotations": {"cronctl.dev/side-effects": "none"}},
     0, (), None),
    # weekdays at 09:00: the shortest gap is 24h (Mon->Tue), not Fri->Mon's 72h
    ("CJ031", {"spec.schedule": "0 9 * * 1-5", "spec.startingDeadlineSeconds": 86401}, 1, ("interval 24h",), "info"),
    ("CJ031", {"spec.schedule": "0 9 * * 1-5", "spec.startingDeadlineSeconds": 86400}, 0, (), None),
    # 01:30 New York twice on a fall-back night is no one-hour interval
    ("CJ031", {"spec.schedule": "30 1 * * *", "spec.timeZone": "America/New_York",
               "spec.startingDeadlineSeconds": 7200}, 0, (), None),
    ("CJ031", {"spec.schedule": "@every 5m", "spec.startingDeadlineSeconds": 301}, 1, ("interval 5m",), "info"),
    ("CJ031", {"spec.startingDeadlineSeconds": DELETE}, 0, (), None),  # CJ002's
    ("CJ031", {"spec.schedule": "0 0 32 * *", "spec.startingDeadlineSeconds": 99999}, 0, (), None),  # CJ009's
    ("CJ031", {}, 0, (), None),
    # CJ033 names: a CronJob name is a DNS-1123 subdomain, a namespace a DNS-1123 label
    *[("CJ033", {"metadata.name": bad}, 1, (f"metadata.name '{bad}' is not a DNS-1123 subdomain",), "error")
      for bad in ("MP-orders", "mp_orders", "-mp", "mp-", "mp..orders", ".mp", "mp orders", "zähler", "mp/orders")],
    *[("CJ033", {"metadata.name": good}, 0, (), None) for good in ("a", "0abc", "mp.orders-sync", "a" * 52)],
    ("CJ033", {"metadata.name": "a" * 53}, 0, (), None),  # long but well-formed: CJ011's
    ("CJ033", {"metadata.name": DELETE}, 1, ("metadata.name is not set",), "error"),
    ("CJ033", {"metadata.name": DELETE, "metadata.generateName": "mp-"}, 0, (), None),
    ("CJ033", {"metadata.namespace": "Integrations"}, 1, ("metadata.namespace 'Integrations' is not a DNS-1123 label",),
     "error"),
    ("CJ033", {"metadata.namespace": "team.integrations"}, 1, ("not a DNS-1123 label",), "error"),  # no dots
    ("CJ033", {"metadata.namespace": "n" * 64}, 1, ("at most 63 characters",), "error"),
    ("CJ033", {"metadata.namespace": "n" * 63}, 0, (), None),
    ("CJ033", {"metadata.namespace": DELETE}, 0, (), None),  # a manifest applied with -n
    ("CJ033", {"metadata.name": "Bad", "metadata.namespace": "Bad"}, 2, ("Bad",), "error"),
    # CJ034 a GitOps controller's manifest sets spec.suspend (managedFields as the API server writes them)
    ("CJ034", {"metadata.managedFields": [{"manager": "argocd-controller", "operation": "Apply",
                                           "time": "2026-12-05T23:05:00Z", "fieldsType": "FieldsV1",
                                           "fieldsV1": {"f:spec": {"f:suspend": {}}}}],
               "spec.suspend": False}, 1, ("Argo CD sets spec.suspend: false", "argocd-controller"), "warning"),
    ("CJ034", {"metadata.managedFields": [{"manager": "kustomize-controller", "operation": "Apply",
                                           "time": "2026-12-05T23:05:00Z", "fieldsType": "FieldsV1",
                                           "fieldsV1": {"f:spec": {"f:suspend": {}}}}],
               "metadata.labels": {"kustomize.toolkit.fluxcd.io/name": "apps",
                                   "kustomize.toolkit.fluxcd.io/namespace": "flux-system"}},
     1, ("Flux", "Kustomization flux-system/apps"), "warning"),
    # the manifest leaves suspend out: nothing reverts a hold
    ("CJ034", {"metadata.managedFields": [{"manager": "argocd-controller", "operation": "Apply",
                                           "time": "2026-12-05T23:05:00Z", "fieldsType": "FieldsV1",
                                           "fieldsV1": {"f:spec": {"f:schedule": {}}}}]}, 0, (), None),
    # a person's kubectl apply is no controller that re-applies
    ("CJ034", {"metadata.annotations": {"kubectl.kubernetes.io/last-applied-configuration":
                                        '{"spec":{"suspend":false}}'}}, 0, (), None),
    ("CJ034", {}, 0, (), None),
]


@pytest.mark.parametrize(("rule", "changes", "count", "needles", "severity"), CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_each_rule_fires_exactly_where_expected(rule: str, changes: dict[str, Any], count: int,
                                                needles: tuple[str, ...], severity: str | None) -> None:
    found = hits(rule, cj(**changes))
    assert len(found) == count, [h.message for h in found]
    for h in found:
        for needle in needles:
            assert needle in h.message
        assert (h.severity or RULES_BY_ID[rule].severity) == severity


def test_the_image_finding_names_each_unpinned_container_field() -> None:
    obj = cj(**{f"{POD}.initContainers": [{"name": "wait", "image": "busybox"}],
                f"{POD}.containers": [{"name": "a", "image": DIGEST}, {"name": "b", "image": "app:latest"}]})
    assert [h.field for h in hits("CJ023", obj)] == [f"{POD}.initContainers[0].image", f"{POD}.containers[1].image"]


def test_lint_ignore_annotation_silences_only_the_listed_rules() -> None:
    obj = cj(**{"spec.timeZone": DELETE, f"{JOB}.backoffLimit": DELETE,
                "metadata.annotations": {"cronctl.dev/lint-ignore": "cj001, CJ099"}})
    assert [f.rule for f in lint_object(obj, NOW)] == ["CJ016"]


def test_findings_come_most_severe_first_and_carry_object_and_fix() -> None:
    obj = cj(**{"spec.startingDeadlineSeconds": 0, "spec.timeZone": DELETE})
    found = lint_object(obj, NOW, source="cj.yaml")
    assert [(f.rule, f.severity) for f in found] == [("CJ003", "error"), ("CJ001", "warning")]
    assert found[0].ref == "integrations/mp-orders-sync" and found[0].source == "cj.yaml"
    assert found[0].fix == RULES_BY_ID["CJ003"].fix
    assert summarize(found) == {"error": 1, "warning": 1, "info": 0}


@pytest.mark.parametrize(("changes", "fail_on", "expected"), [
    ({"spec.startingDeadlineSeconds": 0}, "error", True),
    ({"spec.timeZone": DELETE}, "error", False),
    ({"spec.timeZone": DELETE}, "warning", True),
    ({"spec.concurrencyPolicy": "Allow"}, "warning", False),  # info only
    ({"spec.concurrencyPolicy": "Allow"}, "info", True),
    ({"spec.startingDeadlineSeconds": 0}, "none", False),
    ({}, "info", False),
])
def test_fail_on_counts_findings_at_or_above_the_threshold(changes: dict[str, Any], fail_on: str, expected: bool) -> None:
    assert fails(lint_object(cj(**changes), NOW), fail_on) is expected


def test_a_malformed_object_is_linted_without_crashing() -> None:
    found = lint_object({"kind": "CronJob", "metadata": {"name": "x"}, "spec": "oops"}, NOW)
    assert "CJ009" in {f.rule for f in found}

