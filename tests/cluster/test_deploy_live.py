"""``cronctl record --print-manifests`` on the real API server (issue 28 item 5):

* the printed manifests pass a server-side dry run with strict field validation (every field is
  one the API knows), for each scope and ledger. The ServiceMonitor and the PrometheusRule are left
  out of that check: the prometheus-operator CRDs are not installed here (tests/unit/test_deploy.py
  checks their shape, tests/unit/test_alerts_recorder_promtool.py the rules);
* the ServiceAccount and its Roles (or ClusterRole), created for real, allow exactly what the
  recorder calls, asked of the API server with SubjectAccessReviews, and deny the rest;
* the real recorder (`record --once`, the Deployment's own args) runs as that ServiceAccount through
  the in-cluster credentials of cronctl.kube.connect (a token file, a CA file, a namespace file and
  $KUBERNETES_SERVICE_HOST, no kubeconfig) and records a CronJob, a finished Job and its log tails,
  holding and giving back its Lease: the permissions are enough."""

from __future__ import annotations

import base64
import sqlite3
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from cluster_support import cronctl, cronctl_env, cronjob_body, run_kubectl, wait_for

pytestmark = [pytest.mark.cluster]
SA = "cronctl-recorder"


def printed(*args: str) -> list[dict[str, Any]]:
    r = cronctl(["record", "--print-manifests", *args])
    assert r.returncode == 0, r.stderr
    return [d for d in yaml.safe_load_all(r.stdout) if d]


def write(docs: list[dict[str, Any]], path: Path) -> Path:
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return path


def deployment_args(docs: list[dict[str, Any]]) -> list[str]:
    d = next(d for d in docs if d["kind"] == "Deployment")
    return list(d["spec"]["template"]["spec"]["containers"][0]["args"])


@pytest.mark.compat  # fields an older API server does not know fail here
@pytest.mark.parametrize("variant", ["namespaces-sqlite-metrics", "all-postgresql", "no-lease-no-logs"])
def test_the_printed_manifests_pass_a_strict_server_side_dry_run(kubeconfig: str, namespace: str, namespace_factory: Any,
                                                                tmp_path: Path, variant: str) -> None:
    other = namespace_factory.create("deploy-other")
    args = {"namespaces-sqlite-metrics": ["-n", namespace, "-n", other, "--metrics-address", ":9108",
                                          "--service-monitor", "--prometheus-rule", "--storage-size", "2Gi"],
            "all-postgresql": ["-A", "--deploy-namespace", namespace, "--postgres-secret", "recorder-db/url",
                               "--metrics-address", "0.0.0.0:9108"],
            "no-lease-no-logs": ["-n", namespace, "--no-lease", "--log-bytes", "0", "--ledger",
                                 "/data/ledger.sqlite"]}[variant]
    docs = printed(*args, "--cluster", 'prod: "eu" #1', "--image", "registry.example.com/cronctl:0.1.0")
    operator = [d["kind"] for d in docs if d["apiVersion"] == "monitoring.coreos.com/v1"]
    assert operator == (["ServiceMonitor", "PrometheusRule"] if variant == "namespaces-sqlite-metrics" else [])
    docs = [d for d in docs if d["kind"] not in operator]  # no prometheus-operator CRD on this API server
    r = run_kubectl(kubeconfig, "apply", "--dry-run=server", "--validate=strict", "-f",
                    str(write(docs, tmp_path / "recorder.yaml")))
    lines = [line for line in r.stdout.splitlines() if line.strip()]
    assert len(lines) == len(docs) and all(line.endswith("(server dry run)") for line in lines), r.stdout
    assert "Warning" not in r.stderr, r.stderr
    kinds = {d["kind"] for d in docs}
    assert {"ServiceAccount", "Deployment", "RoleBinding"} <= kinds
    assert ("ClusterRole" in kinds) == (variant == "all-postgresql")
    assert ("PersistentVolumeClaim" in kinds) != (variant == "all-postgresql")
    assert ("Service" in kinds) == (variant != "no-lease-no-logs")


def test_all_namespaces_prints_its_own_namespace_so_the_pipe_into_kubectl_apply_works_on_a_fresh_cluster(
        kubeconfig: str, tmp_path: Path) -> None:
    """`-A` deploys into `cronctl`, which no fresh cluster has: the documents carry it (issue 34 item 11).
    Applied for real through `kubectl apply -f -`, not a dry run: a dry run does not create the
    Namespace, so the objects in it would fail there even when the pipe works."""
    import subprocess

    from harness import kubectl_path

    docs = printed("-A", "--cluster", "fresh", "--log-bytes", "0")
    assert docs[0]["kind"] == "Namespace" and docs[0]["metadata"]["name"] == "cronctl"
    text = write(docs, tmp_path / "recorder.yaml").read_text()
    exe = kubectl_path()
    assert exe is not None
    wait_for("no namespace cronctl (a fresh cluster; an earlier run's is deleted)", lambda: run_kubectl(
        kubeconfig, "get", "namespace", "cronctl", "--ignore-not-found", "-o", "name").stdout == "" or None, 90)
    try:
        r = subprocess.run([exe, "--kubeconfig", kubeconfig, "apply", "-f", "-"], input=text, text=True,
                           capture_output=True, timeout=60)
        assert r.returncode == 0, r.stderr
        applied = [line for line in r.stdout.splitlines() if line.strip()]
        assert len(applied) == len(docs) and all(line.endswith(" created") for line in applied), r.stdout
        assert applied[0] == "namespace/cronctl created"
        got = run_kubectl(kubeconfig, "get", "-n", "cronctl", "deployment,serviceaccount,pvc", "-o", "name").stdout
        assert {"deployment.apps/cronctl-recorder", "serviceaccount/cronctl-recorder",
                "persistentvolumeclaim/cronctl-recorder-ledger"} <= set(got.split()), got  # and the namespace's default
    finally:
        run_kubectl(kubeconfig, "delete", "--ignore-not-found", "--wait=false", "-f", str(tmp_path / "recorder.yaml"),
                    check=False)


# -- the RBAC, asked of the API server --------------------------------------------------------------

def can(k8s: Any, sa_namespace: str, verb: str, resource: str, namespace: str, group: str = "") -> bool:
    """Whether the recorder's ServiceAccount (with the groups every ServiceAccount has) may do it."""
    from kubernetes import client

    resource, _, sub = resource.partition("/")
    body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": {
        "user": f"system:serviceaccount:{sa_namespace}:{SA}",
        "groups": ["system:serviceaccounts", f"system:serviceaccounts:{sa_namespace}", "system:authenticated"],
        "resourceAttributes": {"namespace": namespace, "verb": verb, "group": group, "resource": resource,
                               "subresource": sub}}}
    return bool(client.AuthorizationV1Api(k8s.api).create_subject_access_review(body).status.allowed)


#: what cronctl record calls in a recorded namespace: (verb, resource, API group)
NEEDED = [("list", "cronjobs", "batch"), ("watch", "cronjobs", "batch"), ("list", "jobs", "batch"),
          ("watch", "jobs", "batch"), ("list", "events", ""), ("watch", "events", ""), ("list", "pods", ""), ("watch", "pods", ""),
          ("get", "pods/log", "")]
LEASE = [("get", "leases", "coordination.k8s.io"), ("create", "leases", "coordination.k8s.io"),
         ("update", "leases", "coordination.k8s.io")]
#: what it must not be able to do anywhere
NOT = [("create", "jobs", "batch"), ("delete", "jobs", "batch"), ("patch", "jobs", "batch"), ("get", "jobs", "batch"),
       ("update", "cronjobs", "batch"), ("patch", "cronjobs", "batch"), ("delete", "cronjobs", "batch"),
       ("create", "cronjobs", "batch"), ("update", "cronjobs/status", "batch"), ("get", "secrets", ""),
       ("list", "secrets", ""), ("watch", "secrets", ""), ("get", "configmaps", ""), ("delete", "pods", ""),
       ("create", "pods", ""), ("get", "pods", ""), ("create", "pods/exec", ""),
       ("create", "events", ""), ("delete", "events", ""), ("list", "events", "events.k8s.io"),
       ("delete", "leases", "coordination.k8s.io"), ("list", "leases", "coordination.k8s.io"),
       ("watch", "leases", "coordination.k8s.io"), ("patch", "leases", "coordination.k8s.io"),
       ("create", "rolebindings", "rbac.authorization.k8s.io"), ("impersonate", "serviceaccounts", ""),
       ("create", "serviceaccounts/token", "")]


def apply_rbac(kubeconfig: str, docs: list[dict[str, Any]], path: Path) -> list[dict[str, Any]]:
    """The ServiceAccount and its RBAC, for real (no Deployment: no image runs on this cluster)."""
    rbac = [d for d in docs if d["kind"] in ("ServiceAccount", "Role", "RoleBinding", "ClusterRole",
                                             "ClusterRoleBinding")]
    run_kubectl(kubeconfig, "apply", "-f", str(write(rbac, path)))
    return rbac


def test_the_namespaced_roles_allow_what_the_recorder_calls_and_nothing_more(
        kubeconfig: str, k8s: Any, namespace: str, namespace_factory: Any, tmp_path: Path) -> None:
    other, outside = namespace_factory.create("deploy-rec2"), namespace_factory.create("deploy-outside")
    apply_rbac(kubeconfig, printed("-n", namespace, "-n", other, "--cluster", "prod"), tmp_path / "rbac.yaml")
    for ns in (namespace, other):
        denied = [c for c in NEEDED if not can(k8s, namespace, c[0], c[1], ns, c[2])]
        assert denied == [], f"the recorder needs these in {ns}"
        allowed = [c for c in NOT if can(k8s, namespace, c[0], c[1], ns, c[2])]
        assert allowed == [], f"more than the recorder needs in {ns}"
    assert [c for c in LEASE if not can(k8s, namespace, c[0], c[1], namespace, c[2])] == []
    # the Lease only in its namespace; nothing in a namespace not recorded, nothing cluster-wide
    assert [c for c in LEASE if can(k8s, namespace, c[0], c[1], other, c[2])] == []
    assert [c for c in NEEDED + LEASE if can(k8s, namespace, c[0], c[1], outside, c[2])] == []
    assert [c for c in NEEDED if can(k8s, namespace, c[0], c[1], "", c[2])] == []


def test_all_namespaces_is_cluster_wide_reading_and_the_lease_in_one_namespace(
        kubeconfig: str, k8s: Any, namespace: str, namespace_factory: Any, tmp_path: Path) -> None:
    elsewhere = namespace_factory.create("deploy-elsewhere")
    rbac = apply_rbac(kubeconfig, printed("-A", "--deploy-namespace", namespace, "--cluster", "prod"),
                      tmp_path / "rbac.yaml")
    try:
        for ns in (namespace, elsewhere, ""):  # "": the cluster-wide list and watch -A makes
            assert [c for c in NEEDED if not can(k8s, namespace, c[0], c[1], ns, c[2])] == [], ns
            assert [c for c in NOT if can(k8s, namespace, c[0], c[1], ns, c[2])] == [], ns
        assert [c for c in LEASE if not can(k8s, namespace, c[0], c[1], namespace, c[2])] == []
        assert [c for c in LEASE if can(k8s, namespace, c[0], c[1], elsewhere, c[2])] == []
    finally:  # cluster-scoped: not deleted with the namespace
        for d in rbac:
            if d["kind"].startswith("Cluster"):
                run_kubectl(kubeconfig, "delete", d["kind"].lower(), d["metadata"]["name"], "--wait=false")


# -- the real recorder as that ServiceAccount, through the in-cluster credentials ---------------------

IN_POD = ("import sys\nfrom cronctl import kube\nkube.SERVICE_ACCOUNT_DIR = sys.argv[1]\n"
          "from cronctl.cli import main\nsys.exit(main(sys.argv[2:]))")


def pod_files(k8s: Any, admin_kubeconfig: str, namespace: str, where: Path) -> dict[str, str]:
    """What the kubelet mounts into the recorder's pod (token, ca.crt, namespace) and the environment
    it sets ($KUBERNETES_SERVICE_HOST/_PORT), with no kubeconfig anywhere."""
    token = k8s.core.create_namespaced_service_account_token(
        SA, namespace, {"spec": {"expirationSeconds": 3600}}).status.token
    admin = yaml.safe_load(Path(admin_kubeconfig).read_text())
    cluster = admin["clusters"][0]["cluster"]
    where.mkdir()
    (where / "token").write_text(token)
    (where / "ca.crt").write_bytes(base64.b64decode(cluster["certificate-authority-data"]))
    (where / "namespace").write_text(namespace)
    server = urlsplit(cluster["server"])
    env = {k: v for k, v in cronctl_env().items() if k != "KUBECONFIG"}
    (where.parent / "home").mkdir()
    env.update(HOME=str(where.parent / "home"), KUBERNETES_SERVICE_HOST=str(server.hostname),
               KUBERNETES_SERVICE_PORT=str(server.port or 443))
    return env


def test_the_recorder_records_with_exactly_the_printed_permissions_as_its_service_account_in_a_pod(
        kubeconfig: str, k8s: Any, namespace: str, namespace_factory: Any, tmp_path: Path) -> None:
    other = namespace_factory.create("deploy-rec-other")
    k8s.batch.create_namespaced_cron_job(namespace, cronjob_body("nightly", log="hello from the recorded job"))
    k8s.batch.create_namespaced_cron_job(other, cronjob_body("weekly"))
    run_kubectl(kubeconfig, "-n", namespace, "create", "job", "nightly-manual", "--from=cronjob/nightly")

    def complete() -> bool:
        job = k8s.batch.read_namespaced_job("nightly-manual", namespace)
        return any(c.type == "Complete" and c.status == "True" for c in job.status.conditions or [])

    wait_for("the manual Job to complete", complete, timeout=90, every=1.0)
    docs = printed("-n", namespace, "-n", other, "--cluster", "prod-eu")
    apply_rbac(kubeconfig, docs, tmp_path / "rbac.yaml")
    env = pod_files(k8s, kubeconfig, namespace, tmp_path / "serviceaccount")
    args = deployment_args(docs)
    ledger = tmp_path / "ledger.sqlite"
    args[args.index("--ledger") + 1] = str(ledger)  # the volume's file, here
    r = cronctl([str(tmp_path / "serviceaccount"), *args, "--once"], python_code=IN_POD, env=env, timeout=180)
    assert r.returncode == 0, r.stderr
    assert "forbidden" not in r.stderr.lower() and "Traceback" not in r.stderr, r.stderr
    assert "record: cluster prod-eu" in r.stderr
    with sqlite3.connect(ledger) as db:
        cronjobs = set(db.execute("SELECT namespace, name FROM cronjobs WHERE cluster = 'prod-eu'"))
        jobs = set(db.execute("SELECT namespace, name FROM jobs WHERE cluster = 'prod-eu'"))
        logs = {c: t for c, t in db.execute("SELECT container, text FROM logs WHERE job_name = 'nightly-manual'")}
    assert cronjobs == {(namespace, "nightly"), (other, "weekly")}
    assert jobs == {(namespace, "nightly-manual")}
    assert set(logs) == {"prepare", "main"}, logs  # pods listed and every container's log read (pods/log)
    assert "hello from the recorded job" in logs["main"]
    assert not [t for t in logs.values() if t.startswith("(log not read")]
    # the Lease was created, then given back (get, create, update)
    from kubernetes import client

    leases = client.CoordinationV1Api(k8s.api).list_namespaced_lease(namespace).items
    mine = [lease for lease in leases if lease.metadata.name.startswith("cronctl-record-")]
    assert len(mine) == 1 and mine[0].spec.holder_identity is None
    # and without the Role of the recorded namespace the same run is refused there: the check can fail
    run_kubectl(kubeconfig, "-n", other, "delete", "rolebinding", SA)
    r = cronctl([str(tmp_path / "serviceaccount"), *args, "--once"], python_code=IN_POD, env=env, timeout=180)
    assert r.returncode != 0 and "forbidden" in r.stderr.lower(), r.stderr
