"""``cronctl record --print-manifests`` (cronctl.deploy): the manifests that run the recorder in the
cluster, for each scope and ledger, their least RBAC, no secret in them, and hostile inputs that stay
data. Offline: no cluster (tests/cluster/test_deploy_live.py applies them to the real API server)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from cronctl import deploy
from cronctl.errors import BadInput

RunCli = Any


def manifests(run_cli: RunCli, *args: str) -> list[dict[str, Any]]:
    r = run_cli("record", "--print-manifests", *args)
    assert r.exit_code == 0, r.stderr
    assert r.stderr == ""
    docs = [d for d in yaml.safe_load_all(r.stdout) if d is not None]
    assert docs and all(isinstance(d, dict) and d["apiVersion"] and d["kind"] for d in docs)
    return docs


def by_kind(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == kind]


def one(docs: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = by_kind(docs, kind)
    assert len(found) == 1, [d["kind"] for d in docs]
    return found[0]


def container(docs: list[dict[str, Any]]) -> dict[str, Any]:
    pod = one(docs, "Deployment")["spec"]["template"]["spec"]
    assert len(pod["containers"]) == 1
    return dict(pod["containers"][0])


def rule_set(rules: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    return {(g, r, v) for rule in rules for g in rule["apiGroups"] for r in rule["resources"] for v in rule["verbs"]}


WATCH = {("batch", "cronjobs", "list"), ("batch", "cronjobs", "watch"), ("batch", "jobs", "list"),
         ("batch", "jobs", "watch"), ("", "events", "list"), ("", "events", "watch"), ("", "pods", "list"),
         ("", "pods", "watch"), ("", "pods/log", "get")}
LEASE = {("coordination.k8s.io", "leases", v) for v in ("get", "create", "update")}


# -- scopes --------------------------------------------------------------------------------------

def test_namespaces_get_a_role_each_bound_to_the_account_and_the_lease_a_role_of_its_own(run_cli: RunCli) -> None:
    docs = manifests(run_cli, "-n", "shop", "-n", "billing", "-n", "shop", "--cluster", "prod")
    assert [d["kind"] for d in docs] == ["ServiceAccount", "Role", "RoleBinding", "Role", "RoleBinding", "Role",
                                         "RoleBinding", "PersistentVolumeClaim", "Deployment"]
    assert not by_kind(docs, "ClusterRole") and not by_kind(docs, "ClusterRoleBinding")
    sa = one(docs, "ServiceAccount")["metadata"]
    assert (sa["name"], sa["namespace"]) == ("cronctl-recorder", "shop")  # default: the first -n namespace
    roles = {(r["metadata"]["namespace"], r["metadata"]["name"]): rule_set(r["rules"]) for r in by_kind(docs, "Role")}
    assert roles == {("shop", "cronctl-recorder"): WATCH, ("billing", "cronctl-recorder"): WATCH,
                     ("shop", "cronctl-recorder-lease"): LEASE}
    for b in by_kind(docs, "RoleBinding"):
        assert b["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": b["metadata"]["name"]}
        assert b["subjects"] == [{"kind": "ServiceAccount", "name": "cronctl-recorder", "namespace": "shop"}]
    a = container(docs)["args"]
    assert a[:5] == ["record", "--namespace", "shop", "--namespace", "billing"]
    assert "--all-namespaces" not in a
    assert a[a.index("--lease-namespace") + 1] == "shop" and a[a.index("--cluster") + 1] == "prod"


def test_all_namespaces_is_one_cluster_role_and_the_lease_stays_in_one_namespace(run_cli: RunCli) -> None:
    docs = manifests(run_cli, "-A", "--cluster", "prod")
    cr = one(docs, "ClusterRole")
    assert cr["metadata"]["name"] == "cronctl-recorder-cronctl" and "namespace" not in cr["metadata"]
    assert rule_set(cr["rules"]) == WATCH
    crb = one(docs, "ClusterRoleBinding")
    assert crb["roleRef"]["kind"] == "ClusterRole" and crb["roleRef"]["name"] == cr["metadata"]["name"]
    assert crb["subjects"] == [{"kind": "ServiceAccount", "name": "cronctl-recorder", "namespace": "cronctl"}]
    lease = one(docs, "Role")
    assert lease["metadata"]["namespace"] == "cronctl" and rule_set(lease["rules"]) == LEASE
    a = container(docs)["args"]
    assert "--all-namespaces" in a and "--namespace" not in a
    # the namespace cronctl picked is printed first, so the documents apply on a fresh cluster
    assert docs[0] == {"apiVersion": "v1", "kind": "Namespace",
                       "metadata": {"name": "cronctl", "labels": deploy.MANAGED}}
    # --deploy-namespace and --lease-namespace move the account and the Lease's Role
    docs = manifests(run_cli, "-A", "--cluster", "prod", "--deploy-namespace", "ops", "--lease-namespace", "locks")
    assert one(docs, "ServiceAccount")["metadata"]["namespace"] == "ops"
    assert not by_kind(docs, "Namespace")  # a namespace the user named is theirs: never printed
    assert one(docs, "ClusterRole")["metadata"]["name"] == "cronctl-recorder-ops"
    assert one(docs, "Role")["metadata"]["namespace"] == "locks"
    assert one(docs, "RoleBinding")["subjects"][0]["namespace"] == "ops"
    assert one(docs, "Deployment")["metadata"]["namespace"] == "ops"
    a = container(docs)["args"]
    assert a[a.index("--lease-namespace") + 1] == "locks"


def test_no_lease_means_no_lease_role_and_log_bytes_0_means_no_pods_log(run_cli: RunCli) -> None:
    docs = manifests(run_cli, "-n", "shop", "--cluster", "prod", "--no-lease", "--log-bytes", "0")
    assert [r["metadata"]["name"] for r in by_kind(docs, "Role")] == ["cronctl-recorder"]
    assert rule_set(one(docs, "Role")["rules"]) == WATCH - {("", "pods/log", "get")}
    a = container(docs)["args"]
    assert "--no-lease" in a and "--lease-namespace" not in a
    assert a[a.index("--log-bytes") + 1] == "0"
    assert "do not scale" in one(docs, "Deployment")["metadata"]["annotations"]["cronctl.dev/failover"]


def test_the_rules_name_what_the_recorder_watches_and_reads_and_nothing_else() -> None:
    """The rules are written out in cronctl.deploy (it may not import the recorder); they must follow it."""
    from cronctl import kube
    from cronctl.procedure.record import WATCHED

    groups = {r: ("batch" if prefix.startswith("/apis/batch/") else "") for r, (prefix, _k, _v) in kube.RESOURCES.items()}
    wanted = {(groups[r], r, v) for r in WATCHED for v in ("list", "watch")}
    wanted |= {("", "pods", "list"), ("", "pods/log", "get")}  # the log taker: list_pods, read_pod_log
    assert rule_set(deploy.watch_rules(1)) == wanted == WATCH
    assert all("*" not in r["verbs"] + r["resources"] + r["apiGroups"] for r in deploy.watch_rules(1) + deploy.LEASE_RULES)


# -- the ledger ----------------------------------------------------------------------------------

def test_a_sqlite_ledger_gets_a_volume_mounted_where_ledger_points(run_cli: RunCli) -> None:
    docs = manifests(run_cli, "-n", "shop", "--cluster", "prod", "--ledger", "sqlite:///data/cronctl/prod.sqlite",
                     "--storage-size", "5Gi")
    pvc = one(docs, "PersistentVolumeClaim")
    assert pvc["spec"] == {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "5Gi"}}}
    pod = one(docs, "Deployment")["spec"]["template"]["spec"]
    c = container(docs)
    assert {"name": "ledger", "mountPath": "/data/cronctl"} in c["volumeMounts"]
    assert {"name": "ledger", "persistentVolumeClaim": {"claimName": pvc["metadata"]["name"]}} in pod["volumes"]
    assert c["args"][c["args"].index("--ledger") + 1] == "/data/cronctl/prod.sqlite"
    assert one(docs, "Deployment")["spec"]["strategy"] == {"type": "Recreate"}  # one writer of the file
    assert pod["securityContext"]["fsGroup"] == c["securityContext"]["runAsUser"]  # the volume is writable
    assert "CRONCTL_LEDGER" not in {e["name"] for e in c["env"]}
    # the default file
    c = container(manifests(run_cli, "-n", "shop", "--cluster", "prod"))
    assert c["args"][c["args"].index("--ledger") + 1] == deploy.DEFAULT_LEDGER
    assert {"name": "ledger", "mountPath": "/var/lib/cronctl"} in c["volumeMounts"]


def test_a_postgresql_ledger_is_a_secret_reference_and_no_url_is_printed(run_cli: RunCli) -> None:
    # a local $CRONCTL_LEDGER (with a password) must not leak into the manifests either
    r = run_cli("record", "--print-manifests", "-n", "shop", "--cluster", "prod", "--postgres-secret",
                "recorder-db/dsn", env={"CRONCTL_LEDGER": "postgresql://rec:hunter2@db:5432/cronctl"})
    assert r.exit_code == 0, r.stderr
    assert "hunter2" not in r.stdout and "postgresql://" not in r.stdout and "5432" not in r.stdout
    docs = [d for d in yaml.safe_load_all(r.stdout) if d]
    c = container(docs)
    assert {"name": "CRONCTL_LEDGER", "valueFrom": {"secretKeyRef": {"name": "recorder-db", "key": "dsn"}}} in c["env"]
    assert "--ledger" not in c["args"]
    assert not by_kind(docs, "PersistentVolumeClaim") and not by_kind(docs, "Secret")
    assert [m["mountPath"] for m in c["volumeMounts"]] == ["/tmp"]
    assert one(docs, "Deployment")["spec"]["strategy"] == {"type": "Recreate"}  # a standby is never ready
    assert "standby" in one(docs, "Deployment")["metadata"]["annotations"]["cronctl.dev/failover"]
    # the key defaults to url
    c = container(manifests(run_cli, "-n", "shop", "--cluster", "prod", "--postgres-secret", "recorder-db"))
    assert c["env"][-1]["valueFrom"]["secretKeyRef"] == {"name": "recorder-db", "key": "url"}


@pytest.mark.parametrize("ledger", ["postgresql://rec:hunter2@db:5432/cronctl", "postgres://rec@db/cronctl",
                                    "postgresql+psycopg://rec:hunter2@db/x"])
def test_a_postgresql_url_given_as_ledger_is_refused_without_printing_it(run_cli: RunCli, ledger: str) -> None:
    r = run_cli("record", "--print-manifests", "-n", "shop", "--cluster", "prod", "--ledger", ledger)
    assert r.exit_code == 5 and "--postgres-secret" in r.stderr
    assert "hunter2" not in r.stdout + r.stderr and r.stdout == ""


# -- metrics -------------------------------------------------------------------------------------

def test_metrics_add_probes_a_service_and_on_request_a_service_monitor(run_cli: RunCli) -> None:
    plain = manifests(run_cli, "-n", "shop", "--cluster", "prod")
    assert not by_kind(plain, "Service") and not by_kind(plain, "ServiceMonitor")
    assert "readinessProbe" not in container(plain) and "--metrics-address" not in container(plain)["args"]
    docs = manifests(run_cli, "-n", "shop", "--cluster", "prod", "--metrics-address", ":9108", "--service-monitor")
    c = container(docs)
    assert c["ports"] == [{"name": "metrics", "containerPort": 9108, "protocol": "TCP"}]
    assert c["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "metrics"}
    assert c["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "metrics"}
    assert c["args"][c["args"].index("--metrics-address") + 1] == ":9108"
    svc = one(docs, "Service")
    assert svc["spec"]["ports"] == [{"name": "metrics", "port": 9108, "targetPort": "metrics", "protocol": "TCP"}]
    assert svc["spec"]["selector"] == one(docs, "Deployment")["spec"]["selector"]["matchLabels"]
    assert svc["spec"]["selector"].items() <= one(docs, "Deployment")["spec"]["template"]["metadata"]["labels"].items()
    sm = one(docs, "ServiceMonitor")
    assert sm["apiVersion"] == "monitoring.coreos.com/v1"
    assert sm["spec"]["selector"]["matchLabels"].items() <= svc["metadata"]["labels"].items()
    assert sm["spec"]["endpoints"] == [{"port": "metrics", "path": "/metrics", "interval": "30s"}]
    assert container(manifests(run_cli, "-n", "shop", "--cluster", "prod", "--metrics-address",
                               "[::]:9200"))["ports"][0]["containerPort"] == 9200


def test_the_prometheus_rule_is_the_recorder_source_rule_set_over_the_services_scrape_job(run_cli: RunCli) -> None:
    from cronctl import alerts

    assert not by_kind(manifests(run_cli, "-n", "shop", "--cluster", "prod", "--metrics-address", ":9108"),
                       "PrometheusRule")
    docs = manifests(run_cli, "-n", "shop", "--cluster", "prod", "--metrics-address", ":9108", "--service-monitor",
                     "--prometheus-rule")
    rule = one(docs, "PrometheusRule")
    assert rule["apiVersion"] == "monitoring.coreos.com/v1" and rule["metadata"]["namespace"] == "shop"
    assert rule["spec"]["groups"] == alerts.recorder_rules(alerts.RecorderAlertOptions())
    # the up{job=...} of the rules is the job a ServiceMonitor gives the Service's targets: its name
    job = alerts.RecorderAlertOptions().recorder_job
    assert job == one(docs, "Service")["metadata"]["name"] and f'up{{job="{job}"}}' in str(rule["spec"]["groups"])
    assert [d["kind"] for d in docs][-3:] == ["Service", "ServiceMonitor", "PrometheusRule"]


@pytest.mark.parametrize("args, message", [
    (["--service-monitor"], "needs --metrics-address"),
    (["--prometheus-rule"], "needs --metrics-address"),
    (["--metrics-address", "127.0.0.1:9108"], "not on the loopback"),
    (["--metrics-address", "localhost:9108"], "not on the loopback"),
    (["--metrics-address", "9108"], "HOST:PORT"),
    (["--metrics-address", ":70000"], "HOST:PORT"),
])
def test_metrics_flags_that_cannot_work_in_a_pod_are_refused(run_cli: RunCli, args: list[str], message: str) -> None:
    r = run_cli("record", "--print-manifests", "-n", "shop", "--cluster", "prod", *args)
    assert r.exit_code == 5 and message in r.stderr and r.stdout == ""


# -- the pod -------------------------------------------------------------------------------------

def test_the_pod_is_hardened_and_bounded_and_runs_the_recorder_with_its_flags(run_cli: RunCli) -> None:
    docs = manifests(run_cli, "-n", "shop", "--cluster", "prod", "--keep", "30d", "--log-bytes", "4096",
                     "--status-every", "5m", "--buffer", "1000", "--image", "registry.example.com/cronctl:1.2")
    d = one(docs, "Deployment")
    assert d["spec"]["replicas"] == 1
    assert "Lease" in d["metadata"]["annotations"]["cronctl.dev/failover"]
    pod = d["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == one(docs, "ServiceAccount")["metadata"]["name"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    c = container(docs)
    sc = c["securityContext"]
    assert sc["runAsNonRoot"] is True and sc["readOnlyRootFilesystem"] is True
    assert sc["allowPrivilegeEscalation"] is False and sc["capabilities"] == {"drop": ["ALL"]}
    assert sc["seccompProfile"] == {"type": "RuntimeDefault"}
    assert set(c["resources"]) == {"requests", "limits"} and c["resources"]["limits"]["memory"]
    assert c["image"] == "registry.example.com/cronctl:1.2"
    assert c["args"] == ["record", "--namespace", "shop", "--cluster", "prod", "--ledger", deploy.DEFAULT_LEDGER,
                         "--keep", "30d", "--log-bytes", "4096", "--status-every", "5m", "--buffer", "1000",
                         "--lease-namespace", "shop"]
    assert {"name": "tmp", "mountPath": "/tmp"} in c["volumeMounts"]  # Python's temporary files: root is read-only
    assert container(manifests(run_cli, "-n", "shop", "--cluster", "prod"))["image"].startswith("cronctl:")


def test_the_args_are_what_cronctl_record_itself_accepts(run_cli: RunCli) -> None:
    """Every flag the pod gets parses as `cronctl record` (its --help after them exits 0 only if all exist)."""
    for extra in ([], ["--no-lease", "--log-bytes", "0"], ["-A"]):
        scope = [] if extra == ["-A"] else ["-n", "shop"]
        a = container(manifests(run_cli, *scope, "--cluster", "prod", *extra))["args"]
        r = run_cli(*a, "--help")
        assert r.exit_code == 0, (a, r.stderr)


# -- bad and hostile inputs ----------------------------------------------------------------------

HOSTILE_CLUSTER = 'prod"\n---\nkind: Secret\n# x: {a: [1'


def test_a_hostile_cluster_name_stays_one_string_in_one_document(run_cli: RunCli) -> None:
    for name in ['prod: "eu" # {x}', "---", "a' b\" c: - [d]", "&anchor *ref !!python/object:os.system", "ünï ☃"]:
        docs = manifests(run_cli, "-n", "shop", "--cluster", name)
        assert len(docs) == 7 and not by_kind(docs, "Secret")
        a = container(docs)["args"]
        assert a[a.index("--cluster") + 1] == name
        assert one(docs, "Deployment")["metadata"]["annotations"]["cronctl.dev/cluster"] == name
    r = run_cli("record", "--print-manifests", "-n", "shop", "--cluster", HOSTILE_CLUSTER)
    assert r.exit_code == 5 and "printable" in r.stderr and r.stdout == ""


@pytest.mark.parametrize("args, message", [
    (["-n", "Shop"], "namespace"),
    (["-n", "shop/../kube-system"], "namespace"),
    (["-n", "shop", "--deploy-namespace", "a b"], "namespace"),
    (["-n", "shop", "--lease-namespace", "x" * 64], "namespace"),
    (["-n", "shop", "--postgres-secret", "Bad_Name"], "--postgres-secret"),
    (["-n", "shop", "--postgres-secret", "db/ke y"], "--postgres-secret"),
    (["-n", "shop", "--postgres-secret", "db/.."], "--postgres-secret"),
    (["-n", "shop", "--image", "cronctl:1\nkind: Secret"], "--image"),
    (["-n", "shop", "--image", ""], "--image"),
    (["-n", "shop", "--storage-size", "1Gi\n---"], "--storage-size"),
    (["-n", "shop", "--storage-size", "lots"], "--storage-size"),
    (["-n", "shop", "--ledger", "relative/ledger.sqlite"], "absolute path"),
    (["-n", "shop", "--ledger", "/var/lib/../../etc/ledger.sqlite"], "without '..'"),
    (["-n", "shop", "--ledger", "/ledger.sqlite"], "system directory"),
    (["-n", "shop", "--ledger", "/etc/cronctl/ledger.sqlite"], "system directory"),
    (["-n", "shop", "--ledger", "/tmp/ledger.sqlite"], "system directory"),
    (["-n", "shop", "--ledger", "/var/run/secrets/x/ledger.sqlite"], "system directory"),
    (["-n", "shop", "--ledger", "/var/lib/c r/ledger.sqlite"], "absolute path"),
    (["-n", "shop", "--ledger", "mysql://x/y"], "not a ledger URL"),
])
def test_bad_names_and_paths_are_bad_input_and_print_nothing(run_cli: RunCli, args: list[str], message: str) -> None:
    r = run_cli("record", "--print-manifests", "--cluster", "prod", *args)
    assert r.exit_code == 5, r.stderr
    assert message in r.stderr and r.stdout == "" and "Traceback" not in r.stderr


def test_a_bad_keep_is_a_usage_error_like_every_duration_flag(run_cli: RunCli) -> None:
    r = run_cli("record", "--print-manifests", "--cluster", "prod", "-n", "shop", "--keep", "forever")
    assert r.exit_code == 2, r.stderr
    message = "--keep"
    assert message in r.stderr and r.stdout == "" and "Traceback" not in r.stderr


@pytest.mark.parametrize("args, message", [
    (["--cluster", "prod"], "-n NAMESPACE (repeatable) or -A"),
    (["-n", "shop", "-A", "--cluster", "prod"], "-n NAMESPACE"),
    (["-n", "shop"], "needs --cluster"),
    (["-n", "shop", "--cluster", "prod", "--once"], "drop --once"),
    (["-n", "shop", "--cluster", "prod", "--context", "x"], "--context"),
    (["-n", "shop", "--cluster", "prod", "--ledger", "/var/lib/cronctl/l.sqlite", "--postgres-secret", "db"],
     "not both"),
    (["-n", "shop", "--cluster", "prod", "--postgres-secret", "db", "--storage-size", "2Gi"], "--storage-size"),
])
def test_combinations_that_make_no_deployment_are_usage_errors(run_cli: RunCli, args: list[str], message: str) -> None:
    r = run_cli("record", "--print-manifests", *args)
    assert r.exit_code == 2 and message in r.stderr and r.stdout == ""


def test_deploy_only_flags_without_print_manifests_are_refused_before_any_connection(run_cli: RunCli) -> None:
    r = run_cli("record", "-n", "shop", "--image", "x:1", "--service-monitor", "--prometheus-rule",
                "--kubeconfig", "/nonexistent")
    assert r.exit_code == 2 and "--image, --service-monitor, --prometheus-rule: only with --print-manifests" in r.stderr


def test_the_builder_checks_its_inputs_itself() -> None:
    good = deploy.DeployOptions(cluster="prod", namespaces=("shop",), deploy_namespace="shop", image="cronctl:1",
                                lease_namespace="shop")
    assert len(deploy.manifests(good)) == 7
    for bad in (dict(namespaces=("Shop",)), dict(namespaces=()), dict(deploy_namespace="../x"),
                dict(ledger_path="/x/../y.sqlite"), dict(ledger_path=None),
                dict(postgres_secret=("db", "url")), dict(cluster="a\nb"), dict(service_monitor=True),
                dict(image="x y"), dict(storage_size="1Gi\n")):
        with pytest.raises(BadInput):
            deploy.manifests(deploy.DeployOptions(**{**good.__dict__, **bad}))


def test_the_containerfile_builds_from_the_wheel_and_runs_cronctl_as_the_user_the_manifests_name() -> None:
    """The image cannot be built here (no container engine); what it must agree on with the manifests can
    be read."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    text = (root / "Containerfile").read_text()
    assert len(re.findall(r"^FROM ", text, re.M)) == 2 and "pip wheel" in text and "--no-index" in text
    assert f"--uid {deploy.UID}" in text and re.search(rf"^USER {deploy.UID}:{deploy.UID}$", text, re.M)
    assert re.search(r'^ENTRYPOINT \["cronctl"\]$', text, re.M)
    for src in re.findall(r"^COPY (?!--)(.+) \S+$", text, re.M):  # what stage 1 copies exists
        assert all((root / p).exists() for p in src.split()), src
    venv = re.search(r"python -m venv (\S+)", text)
    assert venv and any(venv[1] == d or venv[1].startswith(d + "/") for d in deploy._NO_MOUNT_UNDER)
