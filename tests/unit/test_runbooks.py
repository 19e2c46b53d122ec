"""Runbooks without a cluster: placeholders, exit-code table, the least-privilege Role covers what
run-manual checks, and StrictUndefined catches a template bug."""

from __future__ import annotations

import functools
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml

from builders import manifest
from cronctl.errors import BadInput, ExitCode
from cronctl.runbooks import EXIT_CODE_MEANINGS, NAMES, list_runbooks, render, runbook_context

ROOT = Path(__file__).resolve().parents[2]
NOW = datetime(2026, 12, 2, 12, 0, tzinfo=timezone.utc)


def test_the_packaged_runbooks_are_the_files_in_runbooks_dir() -> None:
    assert sorted(p.stem for p in (ROOT / "runbooks").glob("*.md") if not p.stem.startswith("_")) == sorted(NAMES)
    assert (ROOT / "cronctl" / "templates" / "runbooks" / "manual-run.md").read_text() == \
        (ROOT / "runbooks" / "manual-run.md").read_text()
    assert [b.name for b in list_runbooks()] == list(NAMES)
    assert all(b.title and not b.title.startswith("{") for b in list_runbooks())


@pytest.mark.parametrize("name", NAMES)
def test_every_runbook_renders_with_shell_placeholders(name: str) -> None:
    text = render(name, runbook_context(None, NOW))
    assert "{{" not in text and "{%" not in text
    if name != "rbac":
        assert '"$CJ"' in text or "$CJ" in text


def test_a_given_namespace_replaces_the_ns_placeholder() -> None:
    text = render("manual-run", runbook_context(None, NOW, namespace="integrations"))
    assert "-n integrations" in text and '"$NS"' not in text


def test_every_exit_code_is_documented_in_the_exit_codes_runbook() -> None:
    assert set(EXIT_CODE_MEANINGS) == {c.name for c in ExitCode}
    text = render("exit-codes", runbook_context(None, NOW))
    for c in ExitCode:
        assert re.search(rf"^\| {int(c)} \| {c.name} \| .+ \|$", text, re.M), c


def test_a_missing_template_value_fails_loudly_naming_the_runbook() -> None:
    ctx = runbook_context(None, NOW)
    del ctx["name_arg"]
    with pytest.raises(BadInput, match="runbook 'manual-run' uses an unknown value"):
        render("manual-run", ctx)


def test_an_unknown_runbook_is_bad_input_listing_the_names() -> None:
    with pytest.raises(BadInput, match="unknown runbook 'nope': expected one of manual-run"):
        render("nope", runbook_context(None, NOW))


def _role_rules(text: str) -> set[tuple[str, str, str]]:
    block = re.search(r"```yaml\n(.*?)```", text, re.S)
    assert block
    docs = list(yaml.safe_load_all(block.group(1)))
    role = next(d for d in docs if d["kind"] == "Role")
    return {(g, r, v) for rule in role["rules"] for g in rule["apiGroups"] for r in rule["resources"]
            for v in rule["verbs"]}


def test_the_rbac_role_grants_every_permission_run_manual_checks_and_nothing_destructive() -> None:
    from cronctl.procedure.run_manual import PERMISSIONS

    granted = _role_rules(render("rbac", runbook_context(None, NOW, namespace="integrations")))
    for verb, resource, group, sub, why in PERMISSIONS:
        res = f"{resource}/{sub}" if sub else resource
        assert (group, res, verb) in granted, f"{verb} {res} ({why})"
    assert not any(v in ("delete", "deletecollection", "update", "*") for _, _, v in granted)
    assert not any(r == "secrets" for _, r, _ in granted)


def test_the_rbac_runbook_role_matches_examples_rbac_operator_yaml_when_present() -> None:
    example = ROOT / "examples" / "rbac-operator.yaml"
    if not example.exists():
        pytest.skip("examples/rbac-operator.yaml not written yet")
    role = next(d for d in yaml.safe_load_all(example.read_text()) if d and d.get("kind") == "Role")
    theirs = {(g, r, v) for rule in role["rules"] for g in rule["apiGroups"] for r in rule["resources"]
              for v in rule["verbs"]}
    ours = _role_rules(render("rbac", runbook_context(None, NOW, namespace="x")))
    assert theirs <= ours, theirs - ours


def _cronctl_lines(text: str) -> list[str]:
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        for line in block.splitlines():
            line = line.strip()
            if line.startswith("cronctl "):
                line = re.split(r"\s+#\s", line)[0]  # trailing comment
                lines.append(line.split(" | ")[0].split(" > ")[0].strip())
    return lines


@pytest.mark.parametrize("name", NAMES)
def test_every_cronctl_command_in_a_runbook_parses_with_the_real_cli(name: str, capfd) -> None:
    import shlex

    from cronctl.cli import main

    text = render(name, runbook_context(None, NOW, namespace="integrations")).replace('"$CJ"', "mp-orders-sync")
    lines = _cronctl_lines(text)
    if name not in ("rbac",):
        assert lines, "every operational runbook shows the cronctl command"
    for line in lines:
        argv = shlex.split(line)[1:]
        # --help is eager: it prints help and exits 0 only if every flag before it exists
        assert main([*argv, "--help"]) == 0, f"{name}: {line}\n{capfd.readouterr().err}"
        capfd.readouterr()


# --------------------------------------------------------------------------- application-locking


# mp-orders-sync as its manifest has it; the tests add to its pod template
SYNC_POD: dict[str, object] = {"restartPolicy": "Never", "containers": [{"name": "sync", "image": "busybox"}]}
sync = functools.partial(manifest, "mp-orders-sync", "*/10 * * * *", "Etc/UTC", namespace="integrations",
                         policy="Forbid")


def _blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, re.S)


def _locking_objects(text: str) -> dict[str, list[dict]]:
    by_kind: dict[str, list[dict]] = {}
    for block in _blocks(text, "yaml"):
        for doc in yaml.safe_load_all(block):
            by_kind.setdefault(doc.get("kind", "patch"), []).append(doc)
    return by_kind


@pytest.mark.parametrize(("pod", "account", "says_default"), [
    ({"serviceAccountName": "orders-sync"}, "orders-sync", False),
    ({}, "mp-orders-sync", True),  # runs as default: a dedicated account named like the CronJob
    ({"serviceAccountName": "default"}, "mp-orders-sync", True),
])
def test_the_locking_runbook_fills_in_namespace_name_and_service_account(pod: dict, account: str,
                                                                         says_default: bool) -> None:
    text = render("application-locking", runbook_context(sync(pod={**SYNC_POD, **pod}), NOW))
    objs = _locking_objects(text)
    [sa], [lease], [role], [binding], [patch] = (objs[k] for k in ("ServiceAccount", "Lease", "Role", "RoleBinding",
                                                                   "patch"))
    assert sa["metadata"] == {"name": account, "namespace": "integrations"}
    assert lease["metadata"] == {"name": "mp-orders-sync-lock", "namespace": "integrations"}
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": account, "namespace": "integrations"}]
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    pod_spec = patch["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert pod_spec["serviceAccountName"] == account and pod_spec["restartPolicy"] == "Never"
    # the Role: get/update on this Lease by name, create on leases (RBAC cannot limit create by name)
    grants = {(g, r, v, tuple(rule.get("resourceNames", ()))) for rule in role["rules"] for g in rule["apiGroups"]
              for r in rule["resources"] for v in rule["verbs"]}
    assert grants == {("coordination.k8s.io", "leases", "get", ("mp-orders-sync-lock",)),
                      ("coordination.k8s.io", "leases", "update", ("mp-orders-sync-lock",)),
                      ("coordination.k8s.io", "leases", "create", ())}
    env = {e["name"]: e for e in pod_spec["containers"][0]["env"]}
    assert env["LEASE_NAME"]["value"] == lease["metadata"]["name"]
    # the exit code the sketch uses for "held by another run" is the one the podFailurePolicy does not retry
    [rule] = patch["spec"]["jobTemplate"]["spec"]["podFailurePolicy"]["rules"]
    assert rule["action"] == "FailJob" and "sys.exit(75)" in text and rule["onExitCodes"]["values"] == [75]
    assert ("runs as the namespace's `default` ServiceAccount" in text) is says_default
    assert "'integrations/mp-orders-sync'" in text  # the fencing and idempotency keys in the SQL
    assert "$CJ" not in text and "$NS" not in text


def test_the_locking_runbook_without_a_cronjob_uses_placeholders_that_parse() -> None:
    text = render("application-locking", runbook_context(None, NOW))
    objs = _locking_objects(text)
    assert objs["Lease"][0]["metadata"] == {"name": "$CJ-lock", "namespace": "$NS"}
    assert objs["RoleBinding"][0]["subjects"][0]["name"] == "$CJ"
    assert "'$NS/$CJ'" in text


def test_the_locking_runbooks_python_compiles_and_its_sql_names_the_safe_lock() -> None:
    import ast

    text = render("application-locking", runbook_context(sync(pod=SYNC_POD), NOW))
    for block in _blocks(text, "python"):
        ast.parse(block)
    sql = "\n".join(_blocks(text, "sql"))
    assert "pg_try_advisory_xact_lock(" in sql and "pg_advisory_lock(" not in sql  # the session lock is only discussed
    assert "FOR SHARE" in sql and "ON CONFLICT" in sql


def test_lint_fixes_point_at_the_locking_runbook() -> None:
    from cronctl.lint.rules import RULES_BY_ID

    for rule in ("CJ012", "CJ013", "CJ032"):
        assert "cronctl runbook application-locking" in RULES_BY_ID[rule].fix
    assert "application-locking" in NAMES
