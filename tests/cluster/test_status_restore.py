"""status and restore on the real control plane, and least privilege with examples/rbac-operator.yaml."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from cluster_support import (ROOT, create_cronjob, cronctl, read_cronjob, read_job, record_annotations,
                             on_a_terminal, run_kubectl, run_record, service_account_kubeconfig, terminal,
                             wait_for)

pytestmark = [pytest.mark.cluster, pytest.mark.compat]  # run on every supported version


def test_restore_with_no_record_and_not_suspended_has_nothing_to_do(kubeconfig: str, namespace: str,
                                                                     k8s: Any) -> None:
    create_cronjob(k8s, namespace, "calm")
    r = cronctl(["restore", "calm", "-n", namespace, "--yes"], kubeconfig)
    assert r.returncode == 0, r.stderr
    assert "nothing to restore" in r.stdout


def test_restore_refuses_a_cronjob_suspended_by_someone_else(kubeconfig: str, namespace: str, k8s: Any) -> None:
    create_cronjob(k8s, namespace, "paused", suspend=True)
    r = cronctl(["restore", "paused", "-n", namespace, "--yes"], kubeconfig)
    assert r.returncode == 3
    assert "no cronctl run record" in r.stderr and "kubectl" in r.stderr
    assert read_cronjob(k8s, namespace, "paused")["spec"]["suspend"] is True
    # status: no run is implied (it said "it was suspended before the run"), and what un-suspending
    # now would start is said, as explain says it
    s = json.loads(cronctl(["status", "paused", "-n", namespace, "-o", "json"], kubeconfig).stdout)
    assert s["controller_next"]["decision"] == "suspended" and "before the run" not in s["controller_next"]["text"]
    assert s["if_unsuspended"]["suspended"] is False and s["if_unsuspended"]["text"], s["if_unsuspended"]
    assert s["after_restore"] is None
    text = cronctl(["status", "paused", "-n", namespace], kubeconfig).stdout
    assert "if un-suspended" in text and "before the run" not in text, text


def test_a_record_with_a_garbled_original_value_needs_force_and_leaves_suspend_as_it_is(
        kubeconfig: str, namespace: str, k8s: Any) -> None:
    create_cronjob(k8s, namespace, "stale", suspend=True)
    k8s.batch.patch_namespaced_cron_job("stale", namespace, {"metadata": {"annotations": {
        "cronctl.dev/run-id": "deadbeef", "cronctl.dev/operator": "bob", "cronctl.dev/step": "created",
        "cronctl.dev/started": "2026-01-01T00:00:00Z", "cronctl.dev/original-suspend": "maybe"}}},
        field_manager="cronctl")  # written as cronctl writes: this test is about the garbled value
    r = cronctl(["restore", "stale", "-n", namespace, "--yes"], kubeconfig)
    assert r.returncode == 3 and "'maybe'" in r.stderr and "--force" in r.stderr
    assert record_annotations(read_cronjob(k8s, namespace, "stale"))["cronctl.dev/run-id"] == "deadbeef"

    s = json.loads(cronctl(["status", "stale", "-n", namespace, "-o", "json"], kubeconfig).stdout)
    assert s["record"]["operator"] == "bob" and "manual run deadbeef of bob" in s["explanation"]

    r = cronctl(["restore", "stale", "-n", namespace, "--yes", "--force"], kubeconfig)
    assert r.returncode == 0, r.stderr
    cj = read_cronjob(k8s, namespace, "stale")
    assert record_annotations(cj) == {} and cj["spec"]["suspend"] is True


def test_restore_asks_for_confirmation_and_refuses_without_a_terminal(kubeconfig: str, namespace: str,
                                                                       k8s: Any, tmp_path: Path) -> None:
    create_cronjob(k8s, namespace, "confirm", schedule="0 0 1 1 *")
    r = cronctl(["run-manual", "confirm", "-n", namespace, "--yes", "--settle", "1s"], kubeconfig, run_dir=tmp_path,
                CRONCTL_TEST_KILL_AFTER_STEP="verified")
    assert r.returncode == -9
    r = cronctl(["restore", "confirm", "-n", namespace], kubeconfig)
    assert r.returncode == 3 and "--yes" in r.stderr
    assert read_cronjob(k8s, namespace, "confirm")["spec"]["suspend"] is True


def test_status_shows_schedule_record_children_and_the_controllers_next_move(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path) -> None:
    create_cronjob(k8s, namespace, "shown", schedule="30 6 * * 1-5", tz="Europe/Moscow", deadline=300,
                   duration=1)
    r = cronctl(["run-manual", "shown", "-n", namespace, "--yes", "--settle", "1s", "--occurrence",
                 "2026-12-02T06:30:00+03:00", "--ad-hoc-occurrence"], kubeconfig, run_dir=tmp_path)
    assert r.returncode == 0, r.stderr
    s = json.loads(cronctl(["status", "shown", "-n", namespace, "-o", "json"], kubeconfig).stdout)
    assert s["schedule"] == "30 6 * * 1-5" and s["time_zone"] == "Europe/Moscow"
    assert s["schedule_words"] != s["schedule"] and "30 6 * * 1-5" in s["schedule_words"]
    assert s["suspend"] is False and s["record"] is None
    [job] = s["jobs"]
    assert job["name"] == "shown-manual" and job["origin"] == "manual" and job["outcome"] == "Complete"
    assert job["occurrence"] == "2026-12-02T03:30:00Z" and job["scheduled_for"] is None
    assert job["run_id"] == run_record(tmp_path)["run_id"]
    assert job["duration"] is not None and job["duration"].endswith("s")
    # weekdays 06:30 Moscow = 03:30Z
    assert s["next_runs"] and all(t.endswith("T03:30:00Z") for t in s["next_runs"])
    # created just now, last run never, deadline 300 s: nothing to catch up
    assert s["controller_next"]["decision"] != "create"
    text = cronctl(["status", "shown", "-n", namespace], kubeconfig)
    assert text.returncode == 0 and "shown-manual" in text.stdout and "manual" in text.stdout
    y = yaml.safe_load(cronctl(["status", "shown", "-n", namespace, "-o", "yaml"], kubeconfig).stdout)
    assert y["jobs"][0]["name"] == "shown-manual"


# -- least privilege --------------------------------------------------------------------------
def _operator_kubeconfig(k8s: Any, admin_kubeconfig: str, ns: str, tmp_path: Path, role_rules: list[Any]) -> Path:
    """Bind a ServiceAccount to the example Role (in `ns`) and write a kubeconfig with its token."""
    docs = [d for d in yaml.safe_load_all((ROOT / "examples" / "rbac-operator.yaml").read_text()) if d]
    role = next(d for d in docs if d["kind"] == "Role")
    binding = next(d for d in docs if d["kind"] == "RoleBinding")
    role = copy.deepcopy(role)
    role["metadata"]["namespace"] = ns
    role["rules"] = role_rules
    binding["metadata"]["namespace"] = ns
    binding["subjects"] = [{"kind": "ServiceAccount", "name": "operator", "namespace": ns}]
    from kubernetes import client

    rbac = client.RbacAuthorizationV1Api(k8s.api)
    k8s.core.create_namespaced_service_account(ns, {"metadata": {"name": "operator"}})
    rbac.create_namespaced_role(ns, role)
    rbac.create_namespaced_role_binding(ns, binding)
    return service_account_kubeconfig(k8s, admin_kubeconfig, ns, "operator", tmp_path / "operator.kubeconfig")


def _example_rules() -> list[Any]:
    docs = [d for d in yaml.safe_load_all((ROOT / "examples" / "rbac-operator.yaml").read_text()) if d]
    return list(next(d for d in docs if d["kind"] == "Role")["rules"])


def test_the_example_role_is_enough_for_run_manual_status_and_restore(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path) -> None:
    create_cronjob(k8s, namespace, "least", duration=2, schedule="0 0 1 1 *")
    op = str(_operator_kubeconfig(k8s, kubeconfig, namespace, tmp_path, _example_rules()))
    # -n is not given: the operator kubeconfig's context namespace is used
    r = cronctl(["run-manual", "least", "--yes", "--settle", "1s", "-o", "json"], op, run_dir=tmp_path / "a")
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert rec["operator"] == f"system:serviceaccount:{namespace}:operator"
    assert rec["logs"] and not rec.get("log_errors")
    assert cronctl(["status", "least", "-o", "json"], op).returncode == 0
    # an interrupted run, finished by restore, with the same identity
    r = cronctl(["run-manual", "least", "--yes", "--settle", "1s", "--job-name", "least-again"], op,
                run_dir=tmp_path / "b", CRONCTL_TEST_KILL_AFTER_STEP="verified")
    assert r.returncode == -9
    r = cronctl(["restore", "least", "--yes"], op)
    assert r.returncode == 0, r.stderr
    cj = read_cronjob(k8s, namespace, "least")
    assert cj["spec"]["suspend"] is False and record_annotations(cj) == {}


def test_with_any_one_verb_removed_preflight_names_it_and_changes_nothing(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path) -> None:
    from kubernetes import client

    create_cronjob(k8s, namespace, "lacking", schedule="0 0 1 1 *")
    full = _example_rules()
    op = str(_operator_kubeconfig(k8s, kubeconfig, namespace, tmp_path, full))
    rbac = client.RbacAuthorizationV1Api(k8s.api)
    removed = [(i, verb) for i, rule in enumerate(full) for verb in rule["verbs"]]
    assert len(removed) == 11
    # create events (cronctl's audit Events) is the one optional verb: tried last, below
    optional = [(i, v) for i, v in removed if (full[i]["resources"][0], v) == ("events", "create")]
    assert len(optional) == 1
    for i, verb in [x for x in removed if x not in optional]:
        rules = copy.deepcopy(full)
        rules[i]["verbs"] = [v for v in rules[i]["verbs"] if v != verb]
        rules = [r for r in rules if r["verbs"]]
        rbac.patch_namespaced_role("cronctl-operator", namespace, {"rules": rules})
        resource = full[i]["resources"][0]
        want = f"cannot {verb} {resource}"
        extra: list[str] = []
        if resource == "cronjobs/status":
            # optional for a plain run (a slot run says what happens without it and goes on under
            # --yes); --catch-up none cannot work without it
            want, extra = "needs patch on cronjobs/status", ["--catch-up", "none"]
        r = cronctl(["run-manual", "lacking", "--yes", "--settle", "1s", *extra], op,
                    run_dir=tmp_path / f"{i}-{verb}")
        if verb == "get" and resource == "cronjobs":
            # the very first read is the check: the API server's own 403, one line
            assert r.returncode == 3 and "forbidden" in r.stderr, (verb, resource, r.stderr)
        else:
            assert r.returncode == 3, (verb, resource, r.stderr)
            assert want in r.stderr and "nothing was changed" in r.stderr, (want, r.stderr)
        assert "Traceback" not in r.stderr
        cj = read_cronjob(k8s, namespace, "lacking")
        assert cj["spec"]["suspend"] is False and record_annotations(cj) == {}
        assert json.loads(k8s.batch.list_namespaced_job(namespace, _preload_content=False).data)["items"] == []

    # without create events the run goes on, says once that it wrote no Event, and restores
    ((i, verb),) = optional
    rules = copy.deepcopy(full)
    rules[i]["verbs"] = [v for v in rules[i]["verbs"] if v != verb]
    rbac.patch_namespaced_role("cronctl-operator", namespace, {"rules": rules})
    r = cronctl(["run-manual", "lacking", "--yes", "--settle", "1s"], op, run_dir=tmp_path / "no-events")
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("could not record an Event") == 1, r.stderr
    cj = read_cronjob(k8s, namespace, "lacking")
    assert cj["spec"]["suspend"] is False and record_annotations(cj) == {}


def test_restore_will_not_pull_the_lock_from_a_live_run_on_this_host_without_force(
        kubeconfig: str, namespace: str, k8s: Any) -> None:
    import os
    import socket

    create_cronjob(k8s, namespace, "live", suspend=False)
    k8s.batch.patch_namespaced_cron_job("live", namespace, {"spec": {"suspend": True}, "metadata": {"annotations": {
        "cronctl.dev/run-id": "cafe0001", "cronctl.dev/operator": "carol", "cronctl.dev/step": "verified",
        "cronctl.dev/started": "2026-01-01T00:00:00Z", "cronctl.dev/original-suspend": "false",
        "cronctl.dev/holder": f"{socket.gethostname()}/{os.getpid()}"}}},  # this pytest process: alive
        field_manager="cronctl")  # written as cronctl writes: this test is about the live holder
    r = cronctl(["restore", "live", "-n", namespace, "--yes"], kubeconfig)
    assert r.returncode == 3 and "still running on this host" in r.stderr
    assert read_cronjob(k8s, namespace, "live")["spec"]["suspend"] is True
    r = cronctl(["restore", "live", "-n", namespace, "--yes", "--force"], kubeconfig)
    assert r.returncode == 0, r.stderr
    cj = read_cronjob(k8s, namespace, "live")
    assert cj["spec"]["suspend"] is False and record_annotations(cj) == {}


def test_status_and_restore_of_a_missing_cronjob_exit_6(kubeconfig: str, namespace: str) -> None:
    for cmd in (["status", "ghost"], ["restore", "ghost", "--yes"]):
        r = cronctl([*cmd, "-n", namespace], kubeconfig)
        assert r.returncode == 6 and f"cronjob {namespace}/ghost not found" in r.stderr, r.stderr


# -- a record is not a credential (issue 12, item 7) -------------------------------------------

PLANTED = {"cronctl.dev/run-id": "f00d0001", "cronctl.dev/operator": "mallory", "cronctl.dev/step": "verified",
           "cronctl.dev/started": "2026-01-01T00:00:00Z", "cronctl.dev/original-suspend": "false",
           "cronctl.dev/holder": "elsewhere/1", "cronctl.dev/job-name": "admin-stop-manual"}


def test_a_record_planted_with_kubectl_is_shown_and_refused_so_an_admins_suspend_stays(
        kubeconfig: str, namespace: str, k8s: Any) -> None:
    create_cronjob(k8s, namespace, "admin-stop", suspend=True)  # suspended by an admin, on purpose
    run_kubectl(kubeconfig, "-n", namespace, "annotate", "cronjob", "admin-stop",
                *[f"{k}={v}" for k, v in PLANTED.items()])
    r = cronctl(["restore", "admin-stop", "-n", namespace, "--yes"], kubeconfig)
    assert r.returncode == 3, r.stderr
    assert "cannot be confirmed" in r.stderr and "kubectl-annotate" in r.stderr and "--force" in r.stderr
    # whose record it is and what it would set, shown before refusing
    for shown in ("mallory", "elsewhere/1", "2026-01-01T00:00:00Z", "suspend=false", "UNCONFIRMED"):
        assert shown in r.stderr, (shown, r.stderr)
    cj = read_cronjob(k8s, namespace, "admin-stop")
    assert cj["spec"]["suspend"] is True and record_annotations(cj) == PLANTED

    s = json.loads(cronctl(["status", "admin-stop", "-n", namespace, "-o", "json"], kubeconfig).stdout)
    assert s["record_confirmed"] is False and "kubectl-annotate" in s["record_unconfirmed"]
    assert "UNCONFIRMED" in s["explanation"]
    text = cronctl(["status", "admin-stop", "-n", namespace], kubeconfig)
    assert "UNCONFIRMED" in text.stdout, text.stdout
    [row] = json.loads(cronctl(["status", "-n", namespace, "-o", "json"], kubeconfig).stdout)["cronjobs"]
    assert row["run"]["confirmed"] is False
    text = cronctl(["status", "-n", namespace], kubeconfig)
    assert f"(!) {namespace}/admin-stop: UNCONFIRMED record f00d0001 of mallory" in text.stdout, text.stdout

    # cronctl wait would follow the Job the record names and restore what it says: refused too
    run_kubectl(kubeconfig, "-n", namespace, "create", "job", "admin-stop-manual", "--from=cronjob/admin-stop")
    r = cronctl(["wait", "admin-stop", "-n", namespace], kubeconfig)
    assert r.returncode == 3 and "cannot be confirmed" in r.stderr, r.stderr
    assert read_cronjob(k8s, namespace, "admin-stop")["spec"]["suspend"] is True
    wait_for("the Job to end", lambda: terminal(read_job(k8s, namespace, "admin-stop-manual") or {}), 120)
    # --force restores it on purpose (asked on a terminal; --yes for scripts)
    r = cronctl(["restore", "admin-stop", "-n", namespace, "--yes", "--force", "-o", "json"], kubeconfig)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["record_confirmed"] is False
    cj = read_cronjob(k8s, namespace, "admin-stop")
    assert cj["spec"]["suspend"] is False and record_annotations(cj) == {}


def test_force_on_a_terminal_shows_the_record_and_asks_before_un_suspending(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path) -> None:
    create_cronjob(k8s, namespace, "asked", suspend=True)
    run_kubectl(kubeconfig, "-n", namespace, "annotate", "cronjob", "asked",
                *[f"{k}={v}" for k, v in PLANTED.items()])
    code, raw = on_a_terminal(["restore", "asked", "-n", namespace, "--force"], kubeconfig, cwd=tmp_path,
                              run_dir=tmp_path, answers=["n"])
    screen = raw.decode("utf-8", "replace")
    assert code == 3, screen
    assert "Clear the unconfirmed record f00d0001 of mallory" in screen and "not confirmed" in screen
    assert "UNCONFIRMED" in screen and "elsewhere/1" in screen
    cj = read_cronjob(k8s, namespace, "asked")
    assert cj["spec"]["suspend"] is True and record_annotations(cj) == PLANTED


def test_a_genuine_record_edited_with_kubectl_afterwards_is_refused(kubeconfig: str, namespace: str, k8s: Any,
                                                                   tmp_path: Path) -> None:
    create_cronjob(k8s, namespace, "edited", suspend=True)
    r = cronctl(["run-manual", "edited", "-n", namespace, "--yes", "--settle", "1s"], kubeconfig, run_dir=tmp_path,
                CRONCTL_TEST_KILL_AFTER_STEP="verified")
    assert r.returncode == -9
    assert record_annotations(read_cronjob(k8s, namespace, "edited"))["cronctl.dev/original-suspend"] == "true"
    run_kubectl(kubeconfig, "-n", namespace, "annotate", "--overwrite", "cronjob", "edited",
                "cronctl.dev/original-suspend=false")
    r = cronctl(["restore", "edited", "-n", namespace, "--yes"], kubeconfig)
    assert r.returncode == 3 and "cronctl.dev/original-suspend by kubectl-annotate" in r.stderr, r.stderr
    assert read_cronjob(k8s, namespace, "edited")["spec"]["suspend"] is True


def test_a_record_cronctl_wrote_is_confirmed_by_its_field_manager_and_restored(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path) -> None:
    create_cronjob(k8s, namespace, "mine", suspend=False)
    r = cronctl(["run-manual", "mine", "-n", namespace, "--yes", "--settle", "1s"], kubeconfig, run_dir=tmp_path,
                CRONCTL_TEST_KILL_AFTER_STEP="created")
    assert r.returncode == -9
    cj = read_cronjob(k8s, namespace, "mine")
    managers = {e["manager"] for e in cj["metadata"]["managedFields"]}
    assert "cronctl" in managers, managers
    job = read_job(k8s, namespace, "mine-manual")
    assert job is not None and job["metadata"]["managedFields"][0]["manager"] == "cronctl"
    s = json.loads(cronctl(["status", "mine", "-n", namespace, "-o", "json"], kubeconfig).stdout)
    assert s["record_confirmed"] is True and s["record_unconfirmed"] is None
    wait_for("the manual Job to end", lambda: terminal(read_job(k8s, namespace, "mine-manual") or {}), 120)
    r = cronctl(["restore", "mine", "-n", namespace, "--yes", "-o", "json"], kubeconfig)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["record_confirmed"] is True
    assert "cronctl (managedFields)" in r.stderr and "suspend=false" in r.stderr
    cj = read_cronjob(k8s, namespace, "mine")
    assert cj["spec"]["suspend"] is False and record_annotations(cj) == {}
