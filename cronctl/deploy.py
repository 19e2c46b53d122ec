"""The manifests that run ``cronctl record`` in the cluster (``cronctl record --print-manifests``).

Pure: the inputs (already checked durations and numbers from the command line) in, a list of
Kubernetes objects out, as plain dicts; the CLI dumps them with ``yaml.safe_dump``, so no input,
however hostile, can add a key or a document. Every name that becomes an object name, a path or
a reference is checked here (``BadInput``, exit 5). No I/O, no cluster access.

What is printed, for the recorder's own flags:

* the Namespace of the Deployment, when cronctl picked it (``cronctl``, the default of ``-A``), so
  the documents apply on a fresh cluster; a namespace the user named is never printed (a ``kubectl
  delete -f`` of the file would delete it with everything in it);
* a ServiceAccount and a Deployment (one replica) that runs ``cronctl record`` with those flags,
  hardened (non-root, read-only root file system, no capabilities, seccomp RuntimeDefault);
* the least RBAC the recorder calls (:func:`watch_rules`, :data:`LEASE_RULES`): a Role in each
  ``-n`` namespace, or one ClusterRole with ``-A``, and a Role for the Lease in its namespace only;
* the ledger: a PersistentVolumeClaim mounted where the SQLite file is, or ``$CRONCTL_LEDGER``
  from a Secret holding the PostgreSQL URL (the URL, and so its password, is never printed);
* with ``--metrics-address``: probes on ``/healthz`` and ``/readyz``, a Service for the port and,
  asked for, a prometheus-operator ServiceMonitor and a PrometheusRule of the recorder's alerts
  (their groups are handed in: cronctl.alerts is a sibling of this module).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from typing import Any

from cronctl import names
from cronctl.errors import BadInput

Obj = dict[str, Any]

NAME = "cronctl-recorder"
DEFAULT_LEDGER = "/var/lib/cronctl/ledger.sqlite"
DEFAULT_STORAGE = "1Gi"
METRICS_PORT = 9108  # the recorder's metrics port by convention (prometheus exporter default-port list)
UID = 10001  # the image's user (Containerfile)
LABELS = {"app.kubernetes.io/name": "cronctl", "app.kubernetes.io/component": "recorder",
          "app.kubernetes.io/instance": NAME}
MANAGED = {**LABELS, "app.kubernetes.io/managed-by": "cronctl"}
#: the Deployment's cronctl.dev/failover annotation, by ledger (and without a Lease)
FAILOVER = {
    "postgresql": "One replica. Scaled to two, the second waits on standby: the recorder holds a "
                  "coordination.k8s.io Lease and the standby takes it over within about 17 s (the Lease's 15 s and "
                  "one 2 s poll) when the holder dies; only the holder writes, and a standby is not ready (/readyz).",
    "sqlite": "One replica, do not scale: a SQLite ledger is a file on a ReadWriteOnce volume (one writer, one "
              "node); the Lease only keeps a second recorder on standby. For failover use a PostgreSQL ledger.",
    "no-lease": "One replica, --no-lease: do not scale; nothing would keep a second replica from writing too.",
}

#: what the recorder calls in the recorded namespaces (cronctl.procedure.record, cronctl.kube):
#: list and watch of cronjobs and jobs (batch), of core/v1 events (not events.k8s.io) and of the
#: pods Jobs made (label selector batch.kubernetes.io/job-name), and a GET of each container's log
_WATCHED_RULES: list[Obj] = [
    {"apiGroups": ["batch"], "resources": ["cronjobs", "jobs"], "verbs": ["list", "watch"]},
    {"apiGroups": [""], "resources": ["events", "pods"], "verbs": ["list", "watch"]},
]
_LOG_RULE: Obj = {"apiGroups": [""], "resources": ["pods/log"], "verbs": ["get"]}
#: the Lease (cronctl.procedure.lease): GET it, POST it the first time, PUT it to renew and release
LEASE_RULES: list[Obj] = [
    {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "create", "update"]},
]

_QUANTITY = re.compile(r"[1-9][0-9]{0,8}(Ki|Mi|Gi|Ti|Pi|K|M|G|T|P)?")
_SECRET_KEY = re.compile(r"[-._a-zA-Z0-9]{1,253}")
_PATH = re.compile(r"/[A-Za-z0-9._/-]*")
_RESERVED_DIRS = ("/", "/tmp", "/bin", "/sbin", "/lib", "/lib64", "/usr", "/etc", "/home", "/root", "/var", "/app",
                  "/opt", "/run", "/var/run")
_NO_MOUNT_UNDER = ("/proc", "/sys", "/dev", "/run/secrets", "/var/run/secrets", "/etc", "/usr", "/tmp", "/opt/cronctl")


@dataclass(frozen=True)
class DeployOptions:
    """What ``cronctl record --print-manifests`` was given (durations already checked)."""

    cluster: str
    namespaces: tuple[str, ...] | None  # None: every namespace (-A)
    deploy_namespace: str
    image: str
    ledger_path: str | None = DEFAULT_LEDGER  # the SQLite file; None with postgres_secret
    postgres_secret: tuple[str, str] | None = None  # (Secret name, key) holding the PostgreSQL URL
    storage_size: str = DEFAULT_STORAGE
    lease_namespace: str | None = None  # None: --no-lease
    keep: str = "90d"
    log_bytes: int = 16 * 1024
    status_every: str = "60s"
    buffer: int = 50_000
    metrics_address: str | None = None
    service_monitor: bool = False
    rule_groups: list[Obj] | None = None  # the recorder's alert rules (cronctl.alerts.recorder_rules): a PrometheusRule
    create_namespace: bool = False  # print the deploy namespace too (the default ``cronctl`` of -A)


# -- the inputs ------------------------------------------------------------------------------------

def secret_ref(text: str) -> tuple[str, str]:
    """``NAME[/KEY]`` of ``--postgres-secret``: a Secret name and the key holding the URL (default ``url``)."""
    name, _, key = text.partition("/")
    key = key or "url"
    if not (0 < len(name) <= 253 and names.has_shape(name, subdomain=True)):
        raise BadInput(f"--postgres-secret {text[:80]!r}: NAME[/KEY], NAME a Secret's name ({names.SUBDOMAIN_SHAPE})")
    if not _SECRET_KEY.fullmatch(key) or key in (".", ".."):
        raise BadInput(f"--postgres-secret {text[:80]!r}: the KEY is letters, digits, '-', '_' and '.'")
    return name, key


def sqlite_path(ledger: str | None) -> str:
    """The SQLite file of ``--ledger`` in the pod: an absolute path (``sqlite:///PATH`` or ``PATH``) whose
    directory becomes the volume's mount point. A PostgreSQL URL is refused: it goes into a Secret."""
    text = (DEFAULT_LEDGER if ledger is None else ledger).strip()
    if re.match(r"(postgres(ql)?(\+psycopg)?)://", text):
        raise BadInput("--ledger: a PostgreSQL URL is not printed into manifests (it may carry a password): put it "
                       "into a Secret and give --postgres-secret NAME[/KEY]")
    if text.startswith("sqlite:///"):
        text = text[len("sqlite:///"):]
        text = text if text.startswith("/") else "/" + text
    elif "://" in text:
        raise BadInput(f"--ledger {text[:80]!r}: not a ledger URL (sqlite:///PATH or an absolute file path)")
    if not _PATH.fullmatch(text) or len(text) > 200:
        raise BadInput(f"--ledger {text[:80]!r}: in the cluster the SQLite ledger is an absolute path of letters, "
                       "digits, '.', '_', '-' and '/' (the directory becomes a volume)")
    path = posixpath.normpath(text)
    if path != text or path.endswith("/"):
        raise BadInput(f"--ledger {text!r}: give the path without '..', '.' or '//' (e.g. {DEFAULT_LEDGER})")
    folder = posixpath.dirname(path)
    if folder in _RESERVED_DIRS or any(folder == d or folder.startswith(d + "/") for d in _NO_MOUNT_UNDER):
        raise BadInput(f"--ledger {path}: its directory {folder} is mounted over by the ledger's volume, which "
                       f"cannot be a system directory; use a directory of its own (e.g. {DEFAULT_LEDGER})")
    return path


def storage_size(text: str) -> str:
    """``--storage-size``: a Kubernetes quantity of bytes (``1Gi``, ``500Mi``, ``10G``)."""
    if not _QUANTITY.fullmatch(text):
        raise BadInput(f"--storage-size {text[:40]!r}: a size like 1Gi, 500Mi or 10G")
    return text


def image(text: str) -> str:
    """``--image``: a container image reference, one printable word."""
    if not 0 < len(text) <= 512 or not text.isprintable() or any(c.isspace() for c in text) \
            or not re.fullmatch(r"[a-z0-9][A-Za-z0-9._/:@+-]*", text):
        raise BadInput(f"--image {text[:80]!r}: an image reference like registry.example.com/cronctl:1.0")
    return text


def metrics_port(address: str) -> int:
    """The port of ``--metrics-address HOST:PORT`` (HOST may be empty or ``[IPv6]``). In a pod the
    kubelet and Prometheus reach it from outside: a loopback host is refused."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536 or not address.isprintable():
        raise BadInput(f"--metrics-address {address[:80]!r}: HOST:PORT, e.g. :{METRICS_PORT} or 0.0.0.0:{METRICS_PORT}")
    bare = host.strip("[]").lower()
    if bare == "localhost" or bare.startswith("127.") or bare == "::1":
        raise BadInput(f"--metrics-address {address}: in a pod the probes and Prometheus come from outside it; "
                       f"listen on :{port} or 0.0.0.0:{port}, not on the loopback")
    return int(port)


# -- the objects -----------------------------------------------------------------------------------

def watch_rules(log_bytes: int) -> list[Obj]:
    """The rules of the recorded namespaces: pods/log only when logs are read (``--log-bytes`` > 0)."""
    return [dict(r) for r in _WATCHED_RULES] + ([dict(_LOG_RULE)] if log_bytes > 0 else [])


def _meta(name: str, namespace: str | None, **extra: Any) -> Obj:
    md: Obj = {"name": name}
    if namespace is not None:
        md["namespace"] = namespace
    md["labels"] = dict(MANAGED)
    md.update(extra)
    return md


def _binding(kind: str, name: str, namespace: str | None, role_kind: str, opts: DeployOptions) -> Obj:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": _meta(name, namespace),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": NAME, "namespace": opts.deploy_namespace}]}


def rbac(opts: DeployOptions) -> list[Obj]:
    """The Roles (or the ClusterRole) and their bindings to the recorder's ServiceAccount."""
    docs: list[Obj] = []
    rules = watch_rules(opts.log_bytes)
    if opts.namespaces is None:
        cname = cluster_role_name(opts.deploy_namespace)
        docs.append({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                     "metadata": _meta(cname, None), "rules": rules})
        docs.append(_binding("ClusterRoleBinding", cname, None, "ClusterRole", opts))
    else:
        for ns in opts.namespaces:
            docs.append({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": _meta(NAME, ns),
                         "rules": [dict(r) for r in rules]})
            docs.append(_binding("RoleBinding", NAME, ns, "Role", opts))
    if opts.lease_namespace is not None:
        lname = f"{NAME}-lease"
        docs.append({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                     "metadata": _meta(lname, opts.lease_namespace), "rules": [dict(r) for r in LEASE_RULES]})
        docs.append(_binding("RoleBinding", lname, opts.lease_namespace, "Role", opts))
    return docs


def cluster_role_name(deploy_namespace: str) -> str:
    """The ClusterRole of ``-A`` (cluster-wide, so named by the recorder's namespace: one per install)."""
    return f"{NAME}-{names.namespace(deploy_namespace)}"


def args(opts: DeployOptions) -> list[str]:
    """The recorder's command line in the pod (the image's entry point is ``cronctl``)."""
    a = ["record"]
    if opts.namespaces is None:
        a.append("--all-namespaces")
    for ns in opts.namespaces or ():
        a += ["--namespace", ns]
    a += ["--cluster", opts.cluster]
    if opts.ledger_path is not None:
        a += ["--ledger", opts.ledger_path]  # else $CRONCTL_LEDGER, from the Secret
    a += ["--keep", opts.keep, "--log-bytes", str(opts.log_bytes), "--status-every", opts.status_every,
          "--buffer", str(opts.buffer)]
    a += ["--lease-namespace", opts.lease_namespace] if opts.lease_namespace is not None else ["--no-lease"]
    if opts.metrics_address is not None:
        a += ["--metrics-address", opts.metrics_address]
    return a


def deployment(opts: DeployOptions) -> Obj:
    env: list[Obj] = [{"name": "PYTHONDONTWRITEBYTECODE", "value": "1"}, {"name": "HOME", "value": "/tmp"}]
    mounts: list[Obj] = [{"name": "tmp", "mountPath": "/tmp"}]
    volumes: list[Obj] = [{"name": "tmp", "emptyDir": {"sizeLimit": "64Mi"}}]
    if opts.postgres_secret is not None:
        secret, key = opts.postgres_secret
        env.append({"name": "CRONCTL_LEDGER", "valueFrom": {"secretKeyRef": {"name": secret, "key": key}}})
    if opts.ledger_path is not None:
        mounts.append({"name": "ledger", "mountPath": posixpath.dirname(opts.ledger_path)})
        volumes.append({"name": "ledger", "persistentVolumeClaim": {"claimName": f"{NAME}-ledger"}})
    container: Obj = {
        "name": "recorder", "image": opts.image, "imagePullPolicy": "IfNotPresent", "args": args(opts),
        "env": env,
        "resources": {"requests": {"cpu": "50m", "memory": "128Mi"}, "limits": {"cpu": "1", "memory": "512Mi"}},
        "securityContext": {"runAsNonRoot": True, "runAsUser": UID, "runAsGroup": UID,
                            "readOnlyRootFilesystem": True, "allowPrivilegeEscalation": False,
                            "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"}},
        "volumeMounts": mounts,
    }
    if opts.metrics_address is not None:
        port = metrics_port(opts.metrics_address)
        container["ports"] = [{"name": "metrics", "containerPort": port, "protocol": "TCP"}]
        container["readinessProbe"] = {"httpGet": {"path": "/readyz", "port": "metrics"},
                                       "periodSeconds": 10, "failureThreshold": 3}
        container["livenessProbe"] = {"httpGet": {"path": "/healthz", "port": "metrics"},
                                      "initialDelaySeconds": 15, "periodSeconds": 20, "failureThreshold": 3}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": _meta(NAME, opts.deploy_namespace, annotations={
            "cronctl.dev/cluster": opts.cluster,
            "cronctl.dev/failover": FAILOVER["no-lease" if opts.lease_namespace is None else
                                             "sqlite" if opts.ledger_path is not None else "postgresql"]}),
        "spec": {
            "replicas": 1,
            # Recreate: the old pods stop (giving the Lease back) before the new start. A rolling update
            # would wait for a new pod to be ready, and a standby recorder is not ready (/readyz) while
            # the old one holds the Lease; a SQLite file also has one writer and its volume one node.
            # The new recorder resumes from the positions in the ledger: the seconds between lose nothing.
            "strategy": {"type": "Recreate"},
            "selector": {"matchLabels": dict(LABELS)},
            "template": {
                "metadata": {"labels": dict(MANAGED)},
                "spec": {
                    "serviceAccountName": NAME, "automountServiceAccountToken": True, "enableServiceLinks": False,
                    "terminationGracePeriodSeconds": 60,  # SIGTERM: it writes what it holds, gives the Lease up
                    "securityContext": {"runAsNonRoot": True, "runAsUser": UID, "runAsGroup": UID, "fsGroup": UID,
                                        "seccompProfile": {"type": "RuntimeDefault"}},
                    "containers": [container],
                    "volumes": volumes,
                },
            },
        },
    }


def manifests(opts: DeployOptions) -> list[Obj]:
    """Every object, in the order ``kubectl apply`` wants them (accounts and RBAC before the pods)."""
    names.namespace(opts.deploy_namespace)
    for ns in opts.namespaces or ():
        names.namespace(ns)
    if opts.lease_namespace is not None:
        names.namespace(opts.lease_namespace)
    image(opts.image)
    if opts.namespaces is not None and not opts.namespaces:
        raise BadInput("no namespace to record: give -n NAMESPACE (repeatable) or -A")
    if (opts.ledger_path is None) == (opts.postgres_secret is None):
        raise BadInput("the ledger is either a SQLite file (--ledger PATH) or a PostgreSQL URL in a Secret "
                       "(--postgres-secret NAME[/KEY])")
    if opts.ledger_path is not None and sqlite_path(opts.ledger_path) != opts.ledger_path:
        raise BadInput(f"--ledger {opts.ledger_path!r}: not a checked path")
    if opts.postgres_secret is not None:
        secret_ref("/".join(opts.postgres_secret))
    if opts.service_monitor and opts.metrics_address is None:
        raise BadInput("--service-monitor needs --metrics-address (e.g. :9108): there is nothing to scrape")
    if opts.rule_groups is not None and opts.metrics_address is None:
        raise BadInput("--prometheus-rule needs --metrics-address (e.g. :9108): its rules are over the recorder's "
                       "metrics")
    if not 0 < len(opts.cluster) <= 253 or not opts.cluster.isprintable():
        raise BadInput(f"--cluster {opts.cluster[:80]!r}: a cluster name is 1-253 printable characters")
    docs: list[Obj] = []
    if opts.create_namespace:
        docs.append({"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(opts.deploy_namespace, None)})
    docs.append({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(NAME, opts.deploy_namespace)})
    docs += rbac(opts)
    if opts.ledger_path is not None:
        docs.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                     "metadata": _meta(f"{NAME}-ledger", opts.deploy_namespace),
                     "spec": {"accessModes": ["ReadWriteOnce"],
                              "resources": {"requests": {"storage": storage_size(opts.storage_size)}}}})
    docs.append(deployment(opts))
    if opts.metrics_address is not None:
        docs.append({"apiVersion": "v1", "kind": "Service", "metadata": _meta(NAME, opts.deploy_namespace),
                     "spec": {"selector": dict(LABELS),
                              # a standby recorder (not ready while another holds the Lease) is scraped too
                              "publishNotReadyAddresses": True,
                              "ports": [{"name": "metrics", "port": metrics_port(opts.metrics_address),
                                         "targetPort": "metrics", "protocol": "TCP"}]}})
    if opts.service_monitor:
        docs.append({"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor",
                     "metadata": _meta(NAME, opts.deploy_namespace),
                     "spec": {"selector": {"matchLabels": dict(LABELS)},
                              "endpoints": [{"port": "metrics", "path": "/metrics", "interval": "30s"}]}})
    if opts.rule_groups is not None:
        docs.append({"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule",
                     "metadata": _meta(NAME, opts.deploy_namespace), "spec": {"groups": opts.rule_groups}})
    return docs


HEADER = """\
# cronctl record in the cluster (cronctl record --print-manifests); apply with: kubectl apply -f FILE
# The Deployment's namespace must exist unless it is printed here (cronctl's default of -A). Build the image from the repository's Containerfile.
"""
