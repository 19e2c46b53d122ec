#!/usr/bin/env python3
"""A real Kubernetes control plane on 127.0.0.1 for cronctl's tests and demos.

Usage: scripts/cluster install|up|down|env|logs|status [--version V]
       scripts/cluster stop|start|restart COMPONENT      (fault drills)
       scripts/cluster compact                           (etcd compaction to the current revision)

* ``install``  installs etcd (Debian ``etcd-server``) if it is missing and builds, once per version,
  kube-apiserver, kube-controller-manager and kubectl from the Go module proxy
  (``scripts/build-k8s.sh``, cached in ``~/.cache/cronctl/k8s/v<version>/bin``).
* ``up``       installs if needed, then starts etcd, kube-apiserver, kube-controller-manager and the
  pod simulator (``scripts/podsim.py``, there is no kubelet) on 127.0.0.1 only, waits until the
  apiserver's ``/readyz`` is ok, the controller-manager is healthy and the simulated node is Ready,
  and writes an admin kubeconfig. Idempotent: when everything already runs it does nothing. Each
  fresh start begins with an empty etcd (tests must not see the previous run's objects).
* ``down``     stops exactly the processes ``up`` started (pid files, checked against the process
  start time so a reused pid is never signalled).
* ``env``      prints ``export KUBECONFIG=...`` (and puts the matching kubectl first on PATH).
* ``logs``     prints the components' logs (``logs [COMPONENT] [--lines N]``).
* ``status``   prints what runs; exit 0 when all components run, 1 otherwise.

Versions: ``--version`` (or ``$CRONCTL_K8S_VERSION``) picks one of ``SUPPORTED_VERSIONS``; the default
is the newest. Each version's binaries are cached in their own folder. ``up --version V`` on a cluster
that runs another version restarts it with V; the other commands act on the version that runs.

Fault drills (each one a real fault of the real component, as in an incident):

* ``stop COMPONENT`` / ``start COMPONENT`` / ``restart COMPONENT`` for ``etcd``, ``kube-apiserver``,
  ``kube-controller-manager`` or ``podsim`` (the names ``status`` prints). ``start`` waits until the
  component is healthy again; etcd keeps its data across ``stop``/``start`` (only ``down`` wipes it).
* ``compact``  compacts etcd to its current revision, so every older resourceVersion is gone: a
  watch resumed from one gets a real ``410 Gone``.

State lives in ``$CRONCTL_CLUSTER_DIR`` (default ``/tmp/cronctl-cluster``): ``pki/``, ``logs/``,
``run/`` (pid files, ports), ``kubeconfig``. etcd's data sits on ``/dev/shm`` when available
(etcd 3.4 fsyncs every write; tmpfs makes that free, and the data is throw-away anyway).

As a library (the tests' harness imports this file; ``scripts/cluster`` runs the same functions)::

    info = cluster.up(version=None, state=None)   # -> ClusterInfo(state_dir, version, kubeconfig,
                                                  #                kubectl, server, logs)
    cluster.info(state) / cluster.down(state) / cluster.stop|start|restart(component, state)
    cluster.compact(state) -> revision / cluster.logs(component, lines, state) -> text
    cluster.install(version) -> bin dir / cluster.kubectl(version) -> path

``state`` defaults to ``$CRONCTL_CLUSTER_DIR`` (read at each call), ``version`` to
``$CRONCTL_K8S_VERSION``. Errors are ``ClusterError``; progress lines go to stderr.

Only the standard library is used, so this runs with any python3 >= 3.9.
"""

from __future__ import annotations

import argparse
import base64
import fcntl
import hashlib
import json
import os
import random
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from dataclasses import dataclass
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import realnode  # noqa: E402 - scripts/ is no package
SUPPORTED_VERSIONS = ("1.34.4", "1.35.4", "1.36.3", "1.37.2")
DEFAULT_VERSION = SUPPORTED_VERSIONS[-1]
K8S_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "cronctl" / "k8s"
DEFAULT_STATE = Path("/tmp/cronctl-cluster")
NODE_NAME = "cronctl-sim"
SERVICE_CIDR = "10.96.0.0/16"
# order matters: started in this order, stopped in reverse
COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager", "podsim")
#: --node real: the pod simulator only binds pods to the node (as kube-scheduler would), a kubelet with
#: containerd in a mount namespace of its own runs them (scripts/realnode.py)
REAL_COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager", "binder", "node-ns", "containerd", "kubelet")
NODE_MODES = ("sim", "real")
ALL_COMPONENTS = COMPONENTS + tuple(c for c in REAL_COMPONENTS if c not in COMPONENTS)
#: test-only: ``<port name>`` (apiserver, etcd_client, ...) is taken by another socket right after the
#: first pick, as an outgoing connection of another process may take it (tests/cluster/test_faults.py)
TAKE_PORT_ENV = "CRONCTL_CLUSTER_TEST_TAKE_PORT"
PORT_ATTEMPTS = 3  # starts with fresh ports when a port was taken between picking and binding it
START_TIMEOUT = float(os.environ.get("CRONCTL_CLUSTER_START_TIMEOUT", "90"))


class ClusterError(Exception):
    """A step of install/up failed; the message says which and where to look."""


def log(msg: str) -> None:
    print(f"cluster: {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# locking, pids, ports
# ---------------------------------------------------------------------------------------------


def _proc_start_time(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # field 22 (starttime); the command name (field 2) may contain spaces, so split after ')'
    return stat.rsplit(")", 1)[1].split()[19]


def ephemeral_range() -> tuple[int, int]:
    """The kernel's range for the local ports of outgoing connections."""
    try:
        lo, hi = (int(x) for x in Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
        return lo, hi
    except (OSError, ValueError):
        return 32768, 60999


def free_port() -> int:
    """A free port BELOW the ephemeral range. A port the kernel hands out (bind to port 0) comes from
    that range, and between picking it and the component binding it any outgoing connection on the
    machine (four control planes start side by side in CI) may take it as its local port: kube-
    apiserver then exits with "bind: address already in use". Ports below the range are never
    taken that way; a collision with another cluster's pick is caught by _up's retry."""
    lo, _hi = ephemeral_range()
    if lo > 11000:
        for _ in range(100):
            p = random.randrange(10000, lo)
            if port_free(p):
                return p
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_free(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def etcd_binary() -> str | None:
    for cand in (os.environ.get("ETCD"), shutil.which("etcd"), "/usr/bin/etcd"):
        if cand and os.access(cand, os.X_OK):
            return cand
    return None


def _openssl(*args: str) -> None:
    r = subprocess.run(["openssl", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        raise ClusterError(f"openssl {' '.join(args[:2])} failed: {r.stdout.strip()[-2000:]}")


def _ec_key(path: Path) -> None:
    _openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", str(path))
    path.chmod(0o600)


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


def _etcd_ok(ports: dict[str, int]) -> bool:
    with urllib.request.urlopen(f"http://127.0.0.1:{ports['etcd_client']}/health", timeout=2) as r:
        return bool(json.loads(r.read()).get("health") in ("true", True))


class Lock:
    """An exclusive flock on <state>/lock: `up`/`down` from parallel pytest workers serialize."""

    def __init__(self, state: Path):
        self.state = state

    def __enter__(self) -> "Lock":
        self.state.mkdir(parents=True, exist_ok=True)
        self.fd = os.open(self.state / "lock", os.O_CREAT | os.O_RDWR, 0o600)
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)


def check_version(v: str) -> str:
    """`v` without a leading "v"; ClusterError unless it is one of SUPPORTED_VERSIONS."""
    v = v.lstrip("v")
    if v not in SUPPORTED_VERSIONS:
        raise ClusterError(f"Kubernetes version {v} is not supported; use one of {', '.join(SUPPORTED_VERSIONS)}")
    return v


def requested_version() -> str | None:
    """The version asked for in the environment: $CRONCTL_K8S_VERSION (or the older $K8S_VERSION)."""
    return os.environ.get("CRONCTL_K8S_VERSION") or os.environ.get("K8S_VERSION") or None


def bin_dir(version: str) -> Path:
    """Where `install` puts (and caches) the binaries of `version`."""
    return K8S_CACHE / f"v{check_version(version)}" / "bin"


def state_dir(given: str | os.PathLike[str] | None = None) -> Path:
    """The state directory: `given`, else $CRONCTL_CLUSTER_DIR, else /tmp/cronctl-cluster."""
    return Path(given or os.environ.get("CRONCTL_CLUSTER_DIR") or DEFAULT_STATE)


@dataclass(frozen=True)
class ClusterInfo:
    """A running control plane, as a test or a script needs it."""

    state_dir: Path
    version: str          # the Kubernetes version that runs, e.g. "1.37.2"
    kubeconfig: Path      # admin kubeconfig (TLS verified, data embedded)
    kubectl: Path         # the kubectl built with the server (same version)
    server: str           # https://127.0.0.1:<port>
    logs: Path            # one <component>.log per component
    node: str = "sim"     # "sim" (scripts/podsim.py) or "real" (kubelet + containerd, scripts/realnode.py)

    @property
    def bin_dir(self) -> Path:
        return self.kubectl.parent

class Cluster:
    """One control plane: a state directory (pki/, logs/, run/, kubeconfig) and a Kubernetes version.

    `version` is the version to install or start; the commands that act on what runs (down, stop,
    start, compact, status, logs) do not need it.
    """

    def __init__(self, state: str | os.PathLike[str] | None = None, version: str | None = None,
                 node: str | None = None):
        self.state = state_dir(state)
        self.pki, self.logs, self.run = self.state / "pki", self.state / "logs", self.state / "run"
        self.kubeconfig = self.state / "kubeconfig"
        self.version = check_version(version or DEFAULT_VERSION)
        self.bin = bin_dir(self.version)
        if node is not None and node not in NODE_MODES:
            raise ClusterError(f"node {node!r} is not one of {', '.join(NODE_MODES)}")
        self.node = node or self.running_node() or "sim"
        self.real = realnode.Node(self.state, self.pki, self.logs)

    def running_node(self) -> str | None:
        """"sim" or "real": the node the cluster in this directory was started with (None: none runs)."""
        try:
            return (self.run / "node").read_text().strip() or None
        except OSError:
            return None

    @property
    def components(self) -> tuple[str, ...]:
        return REAL_COMPONENTS if self.node == "real" else COMPONENTS

    @property
    def node_name(self) -> str:
        return realnode.NODE_NAME if self.node == "real" else NODE_NAME

    def running_version(self) -> str | None:
        try:
            return (self.run / "version").read_text().strip() or None
        except OSError:
            return None

    def running_pid(self, name: str) -> int | None:
        """The pid of component `name` if the process we started is still alive, else None."""
        try:
            pid_s, start = (self.run / f"{name}.pid").read_text().split()
            pid = int(pid_s)
        except (OSError, ValueError):
            return None
        if _proc_start_time(pid) != start:
            return None  # gone, or the pid was reused by another process
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return None
        except OSError:
            return None
        return pid

    def load_ports(self) -> dict[str, int]:
        try:
            return {k: int(v) for k, v in json.loads((self.run / "ports.json").read_text()).items()}
        except (OSError, ValueError):
            return {}

    def pick_ports(self, fresh: bool = False) -> dict[str, int]:
        """Reuse last run's ports when free (stable URLs for a human), otherwise (or ``fresh``) take
        free ones."""
        names = ("etcd_client", "etcd_peer", "apiserver", "kcm", "kubelet")
        old = {} if fresh else self.load_ports()
        ports: dict[str, int] = {}
        for n in names:
            p = old.get(n)
            if not p or not port_free(p) or p in ports.values():
                p = free_port()
                while p in ports.values():
                    p = free_port()
            ports[n] = p
        self.run.mkdir(parents=True, exist_ok=True)
        (self.run / "ports.json").write_text(json.dumps(ports, indent=1))
        return ports


    # ---------------------------------------------------------------------------------------------
    # install
    # ---------------------------------------------------------------------------------------------

    def install(self) -> None:
        if etcd_binary() is None:
            log("etcd not found: installing Debian package etcd-server")
            sudo = [] if os.geteuid() == 0 else ["sudo", "-n"]
            if not shutil.which("apt-get"):
                raise ClusterError("etcd is not installed and apt-get is not available; install etcd 3.4+ and put it on PATH (or set ETCD=/path/to/etcd)")
            env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
            for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "etcd-server"]):
                r = subprocess.run(sudo + cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                if r.returncode != 0:
                    raise ClusterError(f"{' '.join(sudo + cmd)} failed (exit {r.returncode}):\n{r.stdout[-3000:]}")
            if etcd_binary() is None:
                raise ClusterError("etcd-server installed but no etcd binary on PATH")
        missing = [b for b in ("kube-apiserver", "kube-controller-manager", "kubectl") if not os.access(self.bin / b, os.X_OK)]
        if missing:
            log(f"building Kubernetes v{self.version} ({', '.join(missing)} missing; cold build takes ~5-10 min)")
            t0 = time.monotonic()
            b = subprocess.run([str(ROOT / "scripts" / "build-k8s.sh")], env=dict(os.environ, K8S_VERSION=self.version))
            if b.returncode != 0:
                raise ClusterError(f"scripts/build-k8s.sh failed (exit {b.returncode})")
            log(f"built in {time.monotonic() - t0:.0f}s")
        if self.node == "real":
            try:
                realnode.install_packages()
                realnode.install_containerd()
                realnode.install_kubelet(self.version, self.bin)
                realnode.build_images()
            except realnode.NodeError as e:
                raise ClusterError(str(e)) from e


    # ---------------------------------------------------------------------------------------------
    # self.pki (openssl)
    # ---------------------------------------------------------------------------------------------

    def _cert(self, name: str, subj: str, *, client: bool = False, sans: str = "", ca: str = "ca") -> None:
        key, crt = self.pki / f"{name}.key", self.pki / f"{name}.crt"
        _ec_key(key)
        usage = "clientAuth" if client else "serverAuth"
        ext = [
            "-addext", "basicConstraints=critical,CA:FALSE",
            "-addext", "keyUsage=critical,digitalSignature,keyEncipherment",
            "-addext", f"extendedKeyUsage={usage}",
        ]
        if sans:
            ext += ["-addext", f"subjectAltName={sans}"]
        _openssl("req", "-new", "-x509", "-key", str(key), "-out", str(crt), "-subj", subj, "-days", "3650",
                 "-CA", str(self.pki / f"{ca}.crt"), "-CAkey", str(self.pki / f"{ca}.key"), *ext)

    def ensure_pki(self) -> None:
        """Create the CAs and certificates once; they survive `down` so restarts are fast."""
        self.pki.mkdir(parents=True, exist_ok=True)
        if (self.pki / "complete").exists():
            return
        for ca, cn in (("ca", "cronctl-local-ca"), ("front-proxy-ca", "cronctl-local-front-proxy-ca")):
            _ec_key(self.pki / f"{ca}.key")
            _openssl("req", "-new", "-x509", "-key", str(self.pki / f"{ca}.key"), "-out", str(self.pki / f"{ca}.crt"),
                     "-subj", f"/CN={cn}", "-days", "3650",
                     "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign,digitalSignature")
        self._cert("apiserver", "/CN=kube-apiserver",
              sans="IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local")
        self._cert("admin", "/O=system:masters/CN=cronctl-admin", client=True)
        self._cert("kcm", "/CN=system:kube-controller-manager", client=True)
        # the apiserver's identity towards the (simulated) kubelet, and the kubelet's serving cert
        self._cert("apiserver-kubelet-client", "/O=system:masters/CN=kube-apiserver-kubelet-client", client=True)
        self._cert("kubelet", f"/O=system:nodes/CN=system:node:{NODE_NAME}", sans="IP:127.0.0.1,DNS:localhost")
        self._cert("front-proxy-client", "/CN=front-proxy-client", client=True, ca="front-proxy-ca")
        # service-account token signing pair (RSA, as kubeadm does)
        _openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", str(self.pki / "sa.key"))
        _openssl("pkey", "-in", str(self.pki / "sa.key"), "-pubout", "-out", str(self.pki / "sa.pub"))
        (self.pki / "complete").write_text("ok\n")

    def ensure_node_pki(self) -> None:
        """The real kubelet's client certificate (the Node authorizer knows it by its name and group)."""
        if not (self.pki / "kubelet-client.crt").exists():
            self._cert("kubelet-client", f"/O=system:nodes/CN=system:node:{realnode.NODE_NAME}", client=True)

    def write_kubeconfig(self, path: Path, server: str, user: str, cert: str) -> None:
        """A self-contained kubeconfig (data embedded), TLS verified against our CA."""
        text = f"""apiVersion: v1
kind: Config
clusters:
- name: cronctl-local
  cluster:
    server: {server}
    certificate-authority-data: {_b64(self.pki / "ca.crt")}
users:
- name: {user}
  user:
    client-certificate-data: {_b64(self.pki / f"{cert}.crt")}
    client-key-data: {_b64(self.pki / f"{cert}.key")}
contexts:
- name: cronctl-local
  context:
    cluster: cronctl-local
    user: {user}
current-context: cronctl-local
"""
        tmp = path.with_suffix(".tmp")
        tmp.write_text(text)
        tmp.chmod(0o600)
        tmp.replace(path)


    # ---------------------------------------------------------------------------------------------
    # processes
    # ---------------------------------------------------------------------------------------------

    def etcd_data_dir(self) -> Path:
        shm = Path("/dev/shm")
        if shm.is_dir() and os.access(shm, os.W_OK):
            tag = hashlib.sha256(str(self.state).encode()).hexdigest()[:10]
            return shm / f"cronctl-etcd-{os.getuid()}-{tag}"
        return self.state / "etcd-data"

    def spawn(self, name: str, argv: list[str], env: dict[str, str] | None = None,
              preexec: Callable[[], None] | None = None) -> None:
        self.logs.mkdir(parents=True, exist_ok=True)
        self.run.mkdir(parents=True, exist_ok=True)
        logf = open(self.logs / f"{name}.log", "ab", buffering=0)
        logf.write(f"\n==== {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} start: {' '.join(argv)}\n".encode())
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT,
                             start_new_session=True, env=env or os.environ.copy(), cwd=self.state, preexec_fn=preexec)
        logf.close()
        start = _proc_start_time(p.pid)
        (self.run / f"{name}.pid").write_text(f"{p.pid} {start}\n")

    def argv_for(self, name: str, ports: dict[str, int]) -> list[str]:
        api = f"https://127.0.0.1:{ports['apiserver']}"
        if name == "etcd":
            return [etcd_binary() or "etcd", "--name", "cronctl", "--data-dir", str(self.etcd_data_dir()),
                    "--listen-client-urls", f"http://127.0.0.1:{ports['etcd_client']}",
                    "--advertise-client-urls", f"http://127.0.0.1:{ports['etcd_client']}",
                    "--listen-peer-urls", f"http://127.0.0.1:{ports['etcd_peer']}",
                    "--initial-advertise-peer-urls", f"http://127.0.0.1:{ports['etcd_peer']}",
                    "--initial-cluster", f"cronctl=http://127.0.0.1:{ports['etcd_peer']}",
                    "--listen-metrics-urls", "",
                    "--quota-backend-bytes", str(4 * 1024**3), "--auto-compaction-retention", "1",
                    "--snapshot-count", "10000", "--logger", "zap", "--log-outputs", "stderr"]
        if name == "kube-apiserver":
            p = str(self.pki)
            return [str(self.bin / "kube-apiserver"),
                    "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", f"--secure-port={ports['apiserver']}",
                    f"--etcd-servers=http://127.0.0.1:{ports['etcd_client']}",
                    f"--tls-cert-file={p}/apiserver.crt", f"--tls-private-key-file={p}/apiserver.key",
                    f"--client-ca-file={p}/ca.crt",
                    # without it the controller-manager logs errors forever about extension-apiserver-authentication
                    f"--requestheader-client-ca-file={p}/front-proxy-ca.crt",
                    "--requestheader-allowed-names=front-proxy-client",
                    "--requestheader-username-headers=X-Remote-User", "--requestheader-group-headers=X-Remote-Group",
                    "--requestheader-extra-headers-prefix=X-Remote-Extra-",
                    f"--proxy-client-cert-file={p}/front-proxy-client.crt", f"--proxy-client-key-file={p}/front-proxy-client.key",
                    "--authorization-mode=Node,RBAC" if self.node == "real" else "--authorization-mode=RBAC",
                    "--anonymous-auth=false",
                    "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                    f"--service-account-signing-key-file={p}/sa.key", f"--service-account-key-file={p}/sa.pub",
                    f"--service-cluster-ip-range={SERVICE_CIDR}",
                    # a loopback advertise address is not valid in Endpoints
                    "--endpoint-reconciler-type=none",
                    # logs/exec go to the simulated kubelet at the node's InternalIP, TLS verified both ways
                    "--kubelet-preferred-address-types=InternalIP",
                    f"--kubelet-certificate-authority={p}/ca.crt",
                    f"--kubelet-client-certificate={p}/apiserver-kubelet-client.crt",
                    f"--kubelet-client-key={p}/apiserver-kubelet-client.key",
                    "--profiling=false", "--v=1"]
        if name == "kube-controller-manager":
            kc = str(self.state / "kcm.kubeconfig")
            return [str(self.bin / "kube-controller-manager"),
                    f"--kubeconfig={kc}", f"--authentication-kubeconfig={kc}", f"--authorization-kubeconfig={kc}",
                    "--bind-address=127.0.0.1", f"--secure-port={ports['kcm']}",
                    "--leader-elect=false",
                    # each controller acts as its own service account (events come from cronjob-controller)
                    "--use-service-account-credentials=true",
                    f"--service-account-private-key-file={self.pki}/sa.key", f"--root-ca-file={self.pki}/ca.crt",
                    f"--cluster-signing-cert-file={self.pki}/ca.crt", f"--cluster-signing-key-file={self.pki}/ca.key",
                    f"--service-cluster-ip-range={SERVICE_CIDR}", "--allocate-node-cidrs=false",
                    # client-side rate limits: the defaults (20/30) throttle a 2,000-Job benchmark for minutes
                    "--kube-api-qps=100", "--kube-api-burst=200",
                    "--profiling=false", "--v=1"]
        if name in ("podsim", "binder"):
            return [sys.executable, str(ROOT / "scripts" / "podsim.py"), "--config", str(self.state / "podsim.json")]
        try:
            return self.real.argv(name, self.running_pid("node-ns"), self.bin)
        except realnode.NodeError as e:
            raise ClusterError(str(e)) from e

    def _https_get(self, url: str, *, verify: bool = True, timeout: float = 3) -> tuple[int, str]:
        ctx = ssl.create_default_context(cafile=str(self.pki / "ca.crt")) if verify else ssl._create_unverified_context()
        if verify:
            ctx.load_cert_chain(str(self.pki / "admin.crt"), str(self.pki / "admin.key"))
        try:
            with urllib.request.urlopen(url, context=ctx, timeout=timeout) as r:
                return r.status, r.read().decode(errors="replace")
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode(errors="replace")

    def _wait(self, what: str, check: Callable[[], bool], deadline: float, component: str | None) -> None:
        while True:
            if component and self.running_pid(component) is None:
                raise ClusterError(f"{component} exited while waiting for {what}; see {self.logs / (component + '.log')}")
            try:
                if check():
                    return
            except (OSError, ValueError, ssl.SSLError):
                pass
            if time.monotonic() > deadline:
                raise ClusterError(f"timed out waiting for {what}; see {self.logs}/")
            time.sleep(0.2)

    def _node_ready(self, ports: dict[str, int]) -> bool:
        code, body = self._https_get(f"https://127.0.0.1:{ports['apiserver']}/api/v1/nodes/{self.node_name}")
        if code != 200:
            return False
        conds = json.loads(body).get("status", {}).get("conditions") or []
        return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conds)

    def all_running(self) -> bool:
        return all(self.running_pid(c) is not None for c in self.components)

    def healthy(self, ports: dict[str, int]) -> bool:
        try:
            code, _ = self._https_get(f"https://127.0.0.1:{ports['apiserver']}/readyz", timeout=2)
            return code == 200
        except (OSError, ssl.SSLError):
            return False

    def info(self) -> ClusterInfo | None:
        """What runs in this state directory (None when no cluster was started there)."""
        ports = self.load_ports()
        if not ports or not self.kubeconfig.exists() or not self.all_running():
            return None
        v = self.running_version() or self.version
        return ClusterInfo(state_dir=self.state, version=v, kubeconfig=self.kubeconfig,
                           kubectl=bin_dir(v) / "kubectl", server=f"https://127.0.0.1:{ports['apiserver']}",
                           logs=self.logs, node=self.node)

    def up(self, explicit_version: bool = False, explicit_node: bool = False) -> ClusterInfo:
        """Start the control plane unless it already runs healthy; what runs (see the module doc)."""
        with Lock(self.state):
            self._up(explicit_version, explicit_node)
        got = self.info()
        if got is None:
            raise ClusterError(f"the cluster in {self.state} stopped right after it started; see {self.logs}/")
        return got

    def _up(self, explicit_version: bool, explicit_node: bool = False) -> None:
        ports = self.load_ports()
        now_v = self.running_version()
        if explicit_version and self.all_running() and now_v and now_v != self.version:
            log(f"v{now_v} runs, v{self.version} was asked for: stopping v{now_v} first")
            self._down()
        now_node = self.running_node()
        if explicit_node and now_node and now_node != self.node:
            log(f"a cluster with --node {now_node} runs, --node {self.node} was asked for: stopping it first")
            asked, self.node = self.node, now_node
            self._down()
            self.node = asked
        if self.all_running() and ports and self.kubeconfig.exists():
            # others may be using it: give a busy apiserver time before calling it broken
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and self.all_running():
                if self.healthy(ports):
                    log(f"already running; KUBECONFIG={self.kubeconfig}")
                    return
                time.sleep(1)
            log("running but /readyz is not ok after 30s: restarting it")
        if any(self.running_pid(c) is not None for c in REAL_COMPONENTS):
            log("partly running: stopping the leftovers first")
            self._down()
        self.install()
        t0 = time.monotonic()
        self.ensure_pki()
        for attempt in range(1, PORT_ATTEMPTS + 1):
            try:
                self._start_all(t0, fresh_ports=attempt > 1, take=os.environ.get(TAKE_PORT_ENV) if attempt == 1 else None)
                return
            except ClusterError as e:
                taken = self._port_taken()
                if taken is None or attempt == PORT_ATTEMPTS:
                    raise
                log(f"{taken}'s port was taken by another process meanwhile ({e}): again with other ports")
        raise AssertionError("unreachable")  # pragma: no cover

    def _port_taken(self) -> str | None:
        """The component whose last start failed on a port in use ("address already in use" in its
        log since its last start line), if any."""
        for name in self.components:
            try:
                with open(self.logs / f"{name}.log", "rb") as f:
                    f.seek(0, os.SEEK_END)
                    f.seek(max(0, f.tell() - 65536))
                    tail = f.read().decode("utf-8", errors="replace")
            except OSError:
                continue
            if "address already in use" in tail.rsplit("\n==== ", 1)[-1].lower():
                return name
        return None

    def _start_all(self, t0: float, fresh_ports: bool, take: str | None = None) -> None:
        ports = self.pick_ports(fresh=fresh_ports)
        # test-only (TAKE_PORT_ENV): another process takes one picked port before its component binds it
        thief = socket.socket() if take else None
        if thief is not None and take is not None:
            thief.bind(("127.0.0.1", ports[take]))
            thief.listen()
        try:
            self._spawn_all(t0, ports)
        finally:
            if thief is not None:
                thief.close()

    def _spawn_all(self, t0: float, ports: dict[str, int]) -> None:
        server = f"https://127.0.0.1:{ports['apiserver']}"
        self.write_kubeconfig(self.state / "kcm.kubeconfig", server, "system:kube-controller-manager", "kcm")
        (self.state / "podsim.json").write_text(json.dumps({
            "server": server, "ca": str(self.pki / "ca.crt"),
            "client_cert": str(self.pki / "admin.crt"), "client_key": str(self.pki / "admin.key"),
            "kubelet_port": ports["kubelet"], "kubelet_cert": str(self.pki / "kubelet.crt"),
            "kubelet_key": str(self.pki / "kubelet.key"), "node": self.node_name,
            "bind_only": self.node == "real",
        }, indent=1))
        if self.node == "real":
            self.ensure_node_pki()
            self.real.write_configs(server, ports["kubelet"], self.write_kubeconfig)
        # a fresh cluster each time: tests must not see objects of a previous run
        shutil.rmtree(self.etcd_data_dir(), ignore_errors=True)
        deadline = time.monotonic() + START_TIMEOUT
        stages: list[str] = []

        def mark(stage: str) -> None:
            stages.append(f"{stage} {time.monotonic() - t0:.1f}s")

        try:
            self.spawn("etcd", self.argv_for("etcd", ports))
            self._wait("etcd /health", lambda: _etcd_ok(ports), deadline, "etcd")
            mark("etcd")
            self.spawn("kube-apiserver", self.argv_for("kube-apiserver", ports))
            self._wait("kube-apiserver /readyz", lambda: self._https_get(f"{server}/readyz")[0] == 200, deadline, "kube-apiserver")
            mark("apiserver")
            self.spawn("kube-controller-manager", self.argv_for("kube-controller-manager", ports), env=dict(os.environ, TZ="UTC"))
            sim = "binder" if self.node == "real" else "podsim"
            self.spawn(sim, self.argv_for(sim, ports))
            if self.node == "real":
                self._start_real_node(ports, deadline, mark)
            self._wait("kube-controller-manager /healthz",
                  lambda: self._https_get(f"https://127.0.0.1:{ports['kcm']}/healthz", verify=False)[0] == 200,
                  deadline, "kube-controller-manager")
            mark("controller-manager")
            self._wait(f"node {self.node_name} Ready", lambda: self._node_ready(ports), deadline,
                       "kubelet" if self.node == "real" else "podsim")
            mark("node")
        except ClusterError:
            self._down(quiet=True)
            raise
        self.write_kubeconfig(self.kubeconfig, server, "cronctl-admin", "admin")
        (self.run / "version").write_text(self.version + "\n")
        (self.run / "node").write_text(self.node + "\n")
        log(f"up in {time.monotonic() - t0:.1f}s ({', '.join(stages)}): apiserver {server}; KUBECONFIG={self.kubeconfig}")

    def _start_real_node(self, ports: dict[str, int], deadline: float, mark: Callable[[str], None]) -> None:
        """The node's mount namespace, containerd (its images imported), then the kubelet."""
        try:
            self.real.check_state_dir()
            self.real.make_cgroups()
            self.spawn("node-ns", self.argv_for("node-ns", ports), preexec=self.real.join_cgroup)
            self._wait("the node's mount namespace", lambda: self._ns_ready(), deadline, "node-ns")
            (self.run / "node-ns.mnt").write_text(os.readlink(f"/proc/{self.running_pid('node-ns')}/ns/mnt") + "\n")
            self.spawn("containerd", self.argv_for("containerd", ports), env=self.real.env("containerd"),
                       preexec=self.real.join_cgroup)
            holder = self.running_pid("node-ns")
            if holder is None:
                raise ClusterError(f"node-ns exited; see {self.logs / 'node-ns.log'}")
            self._wait("containerd's socket", lambda: self.real.serving(holder), deadline, "containerd")
            mark("containerd")
            self.real.import_images(holder)
            mark("images")
            self.spawn("kubelet", self.argv_for("kubelet", ports), env=self.real.env("kubelet"), preexec=self.real.join_cgroup)
        except realnode.NodeError as e:
            raise ClusterError(str(e)) from e

    def _ns_ready(self) -> bool:
        """The holder has made its bind mounts (it then sleeps; `sleep` is its command)."""
        pid = self.running_pid("node-ns")
        return pid is not None and Path(f"/proc/{pid}/comm").read_text().strip() == "sleep"

    def _stop(self, name: str) -> bool:
        pid = self.running_pid(name)
        if pid is None:
            (self.run / f"{name}.pid").unlink(missing_ok=True)
            return False
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        for _ in range(100):
            if self.running_pid(name) is None:
                break
            time.sleep(0.1)
        else:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        (self.run / f"{name}.pid").unlink(missing_ok=True)
        return True

    def _down(self, quiet: bool = False) -> None:
        # the node first (kubelet, containerd, what runs in the node's cgroup, its mount namespace),
        # then the control plane; whichever node the pid files say ran
        for name in ("podsim", "binder", "kubelet", "containerd", "node-ns", "kube-controller-manager",
                     "kube-apiserver", "etcd"):
            if name == "node-ns":
                try:
                    self.real.kill_leftovers()
                except realnode.NodeError as e:
                    log(str(e))
            if self._stop(name) and not quiet:
                log(f"stopped {name}")
            if name == "node-ns":
                self.real.delete_bridge()
                left = self.real.remove_cgroups()
                if left:
                    log(f"cgroups left (still busy): {', '.join(left)}")
        shutil.rmtree(self.etcd_data_dir(), ignore_errors=True)

    def down(self) -> None:
        with Lock(self.state):
            self._down()
            (self.run / "version").unlink(missing_ok=True)
            (self.run / "node").unlink(missing_ok=True)


    # ---------------------------------------------------------------------------------------------
    # fault drills: stop/start/restart one component, compact etcd
    # ---------------------------------------------------------------------------------------------

    def _component_ready(self, name: str, ports: dict[str, int]) -> bool:
        if name == "etcd":
            return _etcd_ok(ports)
        if name == "kube-apiserver":
            return self._https_get(f"https://127.0.0.1:{ports['apiserver']}/readyz")[0] == 200
        if name == "kube-controller-manager":
            return self._https_get(f"https://127.0.0.1:{ports['kcm']}/healthz", verify=False)[0] == 200
        return self._node_ready(ports)

    def _need_cluster(self) -> dict[str, int]:
        ports = self.load_ports()
        if not ports or not self.kubeconfig.exists() or self.running_version() is None:
            raise ClusterError(f"no cluster was started in {self.state} (scripts/cluster up)")
        return ports

    def stop_component(self, name: str) -> None:
        """Stop one component the way a crash or an operator would (SIGTERM, then SIGKILL); etcd keeps its data."""
        with Lock(self.state):
            self._need_cluster()
            log(f"stopped {name}" if self._stop(name) else f"{name} was not running")

    def start_component(self, name: str) -> None:
        """Start one stopped component with the same ports and flags, and wait until it is healthy."""
        with Lock(self.state):
            ports = self._need_cluster()
            if self.running_pid(name) is not None:
                log(f"{name} already runs")
                return
            t0 = time.monotonic()
            if name not in self.components:
                raise ClusterError(f"{name} is no component of this cluster (--node {self.node}): {', '.join(self.components)}")
            env = dict(os.environ, TZ="UTC") if name == "kube-controller-manager" else None
            preexec = None
            if name in realnode.COMPONENTS:
                env, preexec = self.real.env(name), self.real.join_cgroup
            self.spawn(name, self.argv_for(name, ports), env=env, preexec=preexec)
            # a component whose dependency is down cannot become healthy: then only wait for the process
            deps = self.components[:self.components.index(name)]
            if name not in ("podsim", "binder", "node-ns", "containerd") and all(self.running_pid(d) is not None for d in deps):
                self._wait(f"{name} healthy", lambda: self._component_ready(name, ports), time.monotonic() + START_TIMEOUT, name)
            log(f"started {name} in {time.monotonic() - t0:.1f}s")

    def compact(self) -> int:
        """Compact etcd to its current revision and return it. Older resourceVersions are gone."""
        ports = self._need_cluster()
        base = f"http://127.0.0.1:{ports['etcd_client']}/v3"

        def post(path: str, body: dict[str, object]) -> dict[str, object]:
            req = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST",
                                         headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=10) as r:
                return dict(json.loads(r.read()))

        try:
            header = post("/kv/range", {"key": base64.b64encode(b"/").decode(), "limit": 1}).get("header") or {}
            rev = int(dict(header).get("revision", 0))  # type: ignore[call-overload]
            post("/kv/compaction", {"revision": rev, "physical": True})
        except (OSError, ValueError) as e:
            raise ClusterError(f"etcd compaction failed: {e}") from e
        log(f"etcd compacted to revision {rev}")
        return rev

    def status(self) -> int:
        ports = self.load_ports()
        ok = True
        for c in self.components:
            pid = self.running_pid(c)
            ok &= pid is not None
            rss = ""
            if pid:
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        rss = f" rss={int(line.split()[1]) // 1024}MiB"
            print(f"{c:24} {'running pid ' + str(pid) + rss if pid else 'stopped'}")
        print(f"{'version':24} v{self.running_version() or '?'}")
        print(f"{'node':24} {self.node}")
        if ok and ports:
            print(f"{'readyz':24} {'ok' if self.healthy(ports) else 'NOT ready'}")
            print(f"{'kubeconfig':24} {self.kubeconfig}")
        return 0 if ok else 1

    def logs_text(self, component: str | None = None, lines: int = 200) -> str:
        """The last `lines` lines (0 = all) of each component's log, or of `component`'s."""
        out: list[str] = []
        for n in [component] if component else list(self.components):
            f = self.logs / f"{n}.log"
            out.append(f"===== {n} ({f}) =====")
            if not f.exists():
                out.append("(no log)")
                continue
            text = f.read_bytes().decode(errors="replace").splitlines()
            out.append("\n".join(text[-lines:] if lines > 0 else text))
        return "\n".join(out) + "\n"



# ---------------------------------------------------------------------------------------------
# the library: what tests and scripts call (scripts/cluster is the same, for a shell)
# ---------------------------------------------------------------------------------------------

def existing(state: str | os.PathLike[str] | None = None, version: str | None = None) -> Cluster:
    """The cluster of a state directory, at the version asked for, else the one that runs, else the default."""
    probe = Cluster(state)
    return Cluster(state, version or requested_version() or probe.running_version() or DEFAULT_VERSION)


def install(version: str | None = None, node: str | None = None) -> Path:
    """Install etcd and build the binaries of `version` (default: $CRONCTL_K8S_VERSION, else the newest),
    with node="real" also the kubelet, containerd, runc, the CNI plugins and the images; returns their directory."""
    c = Cluster(None, version or requested_version(), node or "sim")
    c.install()
    return c.bin


def up(version: str | None = None, state: str | os.PathLike[str] | None = None, node: str | None = None) -> ClusterInfo:
    """Start a control plane (or find the one that runs healthy) in `state` and describe it.

    `version` (else $CRONCTL_K8S_VERSION) is explicit: another version running there is restarted with
    it. Without either, whatever runs is kept, and a fresh start takes the newest supported version.
    `node` ("sim", the default for a fresh start, or "real") is explicit the same way: a cluster with
    the other node running there is restarted. Progress goes to stderr; ClusterError says what failed
    and where the logs are.
    """
    wanted = version or requested_version()
    return Cluster(state, wanted, node).up(explicit_version=wanted is not None, explicit_node=node is not None)


def info(state: str | os.PathLike[str] | None = None) -> ClusterInfo | None:
    """The control plane that runs in `state`, or None."""
    return existing(state).info()


def down(state: str | os.PathLike[str] | None = None) -> None:
    """Stop exactly the processes `up` started in `state` (etcd's data goes with them)."""
    existing(state).down()


def stop(component: str, state: str | os.PathLike[str] | None = None) -> None:
    """Fault drill: stop one component (etcd keeps its data)."""
    existing(state).stop_component(component)


def start(component: str, state: str | os.PathLike[str] | None = None) -> None:
    """Start a stopped component again, with the same ports and flags, and wait until it is healthy."""
    existing(state).start_component(component)


def restart(component: str, state: str | os.PathLike[str] | None = None) -> None:
    stop(component, state)
    start(component, state)


def compact(state: str | os.PathLike[str] | None = None) -> int:
    """Compact etcd to its current revision (a watch resumed from an older one gets 410 Gone); the revision."""
    return existing(state).compact()


def logs(component: str | None = None, lines: int = 200, state: str | os.PathLike[str] | None = None) -> str:
    """The components' logs (the last `lines` lines of each; 0 = all)."""
    return existing(state).logs_text(component, lines)


def kubectl(version: str | None = None) -> Path:
    """The kubectl `install` builds for `version` (default: $CRONCTL_K8S_VERSION, else what runs in the
    default state directory, else the newest). It may not be built yet."""
    return existing(None, version).bin / "kubectl"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="scripts/cluster", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    vhelp = f"Kubernetes version: {', '.join(SUPPORTED_VERSIONS)} (default: $CRONCTL_K8S_VERSION, else {DEFAULT_VERSION})"
    for cmd, h in (("install", "install etcd and build the Kubernetes binaries (cached per version)"),
                   ("up", "start the control plane (idempotent; another version running is restarted)")):
        sp = sub.add_parser(cmd, help=h)
        sp.add_argument("--version", dest="version", help=vhelp)
        sp.add_argument("--node", choices=NODE_MODES, default=None,
                        help="sim: the pod simulator plays the node (default for a fresh start; fast, no real "
                             "processes); real: a kubelet and containerd run each pod's containers as real processes")
    for cmd, h in (("stop", "stop one component (fault drill)"), ("start", "start a stopped component and wait until healthy"),
                   ("restart", "stop, then start one component")):
        sp = sub.add_parser(cmd, help=h)
        sp.add_argument("component", choices=ALL_COMPONENTS)
    sub.add_parser("compact", help="compact etcd to its current revision (older resourceVersions get 410 Gone)")
    sub.add_parser("down", help="stop the processes `up` started")
    sub.add_parser("env", help="print shell exports (eval \"$(scripts/cluster env)\")")
    sub.add_parser("status", help="show what runs; exit 1 unless all components run")
    lp = sub.add_parser("logs", help="print component logs")
    lp.add_argument("component", nargs="?", choices=ALL_COMPONENTS)
    lp.add_argument("--lines", "-n", type=int, default=200, help="last N lines of each log (0 = all)")
    a = ap.parse_args(argv)
    try:
        if a.cmd == "install":
            install(a.version, a.node)
        elif a.cmd == "up":
            up(a.version, node=a.node)
        elif a.cmd == "stop":
            stop(a.component)
        elif a.cmd == "start":
            start(a.component)
        elif a.cmd == "restart":
            restart(a.component)
        elif a.cmd == "compact":
            print(compact())
        elif a.cmd == "down":
            down()
        elif a.cmd == "env":
            c = existing()
            print(f"export KUBECONFIG={c.kubeconfig}")
            print(f'export PATH="{c.bin}:$PATH"')
        elif a.cmd == "status":
            return existing().status()
        elif a.cmd == "logs":
            sys.stdout.write(logs(a.component, a.lines))
    except ClusterError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
