"""The real Flux kustomize-controller on the local control plane, for the tests that show what Flux
does to a CronJob cronctl holds.

``flux`` (session fixture) -> :class:`Flux`
    Applies the Flux CRDs (Kustomization; GitRepository, OCIRepository, Bucket, ExternalArtifact,
    which the controller watches) to the test cluster, starts ``kustomize-controller`` (built by
    ``scripts/flux``, v1.9.6) as a process on 127.0.0.1 against the test kubeconfig, and a small
    HTTP server (a thread) that serves the source artifacts. There is no source-controller: a
    GitRepository's status (its artifact: url, revision, digest) is written here, through the
    status subresource, exactly as source-controller writes it. Everything is stopped at the end.

    The controller only reconciles Kustomizations labelled with this fixture's instance label
    (``--watch-label-selector``), so two pytest-xdist workers (two controllers) never reconcile the
    same one. (The Flux tests ask to be one ``xdist_group``, but pytest-xdist 3.8 under pytest 9.2
    ignores that mark: ``item._nodeid`` no longer sets the node id, so each worker that gets a Flux
    test starts its own controller; the label keeps them apart.) It runs as the test kubeconfig's
    admin user, without impersonation.

``flux.manage(namespace, manifests, interval="5s", name=None)`` -> :class:`Managed`
    Puts ``manifests`` (dicts, as the API takes them) into a tar.gz artifact, creates a
    GitRepository and a Kustomization (``prune: false``, ``targetNamespace: namespace``) and waits
    until Flux applied it. ``handle.update(manifests)`` publishes a new revision and waits again;
    ``handle.reconcile_now()`` asks for a reconciliation (``reconcile.fluxcd.io/requestedAt``) and
    waits until Flux handled it.

The binary: ``$CRONCTL_FLUX`` (scripts/test and scripts/test-matrix set it, building it first), else
the one ``scripts/flux`` built before. Locally, when neither exists, the Flux tests are skipped
with the reason (building takes minutes: ``scripts/flux --path``); in CI (``CI=true``) it is built
here and a failure to build or to start the controller fails the tests.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gzip
import hashlib
import io
import json
import os
import secrets
import socket
import subprocess
import sys
import tarfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar

import pytest
import yaml

from harness import ROOT, run_kubectl

FLUX_VERSION = "v1.9.6"
#: the field manager (and event source) kustomize-controller applies with
MANAGER = "kustomize-controller"
KS_GROUP, KS_VERSION, KS_PLURAL = "kustomize.toolkit.fluxcd.io", "v1", "kustomizations"
SRC_GROUP, SRC_VERSION, SRC_PLURAL = "source.toolkit.fluxcd.io", "v1", "gitrepositories"
#: the label that ties a Kustomization to one running controller (its --watch-label-selector)
INSTANCE_LABEL = "test.cronctl.dev/flux-instance"
#: the annotation ``flux reconcile`` sets to ask for a reconciliation now
REQUESTED_AT = "reconcile.fluxcd.io/requestedAt"
_LOG_TAIL = 80
T = TypeVar("T")


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def flux_binary() -> Path:
    """The kustomize-controller binary to run (see the module docstring); skips or fails the test."""
    given = os.environ.get("CRONCTL_FLUX")
    if given:
        if not os.access(given, os.X_OK):
            pytest.fail(f"CRONCTL_FLUX={given}: not an executable file", pytrace=False)
        return Path(given)
    script = str(ROOT / "scripts" / "flux")
    if not _in_ci():
        r = subprocess.run([script, "--path-if-built"], capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            pytest.skip(f"Flux kustomize-controller {FLUX_VERSION} is not built (scripts/flux --path builds it, "
                        "about 3 minutes; scripts/test does it first): the Flux tests need it")
        return Path(r.stdout.strip())
    t0 = time.monotonic()
    r = subprocess.run([script, "--path"], capture_output=True, text=True, timeout=1800)
    if r.returncode != 0:
        pytest.fail(f"scripts/flux --path failed after {time.monotonic() - t0:.0f}s (exit {r.returncode}):\n"
                    f"{r.stderr[-4000:]}", pytrace=False)
    return Path(r.stdout.strip())


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- the artifacts --------------------------------------------------------------------------------

def build_artifact(manifests: list[dict[str, Any]]) -> bytes:
    """A tar.gz as source-controller serves it: the manifests (one YAML stream, ``manifests.yaml``)
    and a ``kustomization.yaml`` listing it. The same manifests give the same bytes."""
    files = {
        "kustomization.yaml": yaml.safe_dump({"apiVersion": "kustomize.config.k8s.io/v1beta1",
                                              "kind": "Kustomization", "resources": ["manifests.yaml"]}),
        "manifests.yaml": yaml.safe_dump_all(manifests, sort_keys=True),
    }
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), mtime=0)


class ArtifactServer:
    """``http://127.0.0.1:PORT/<path>``: the artifacts put here, from a thread of this process."""

    def __init__(self) -> None:
        self._files: dict[str, bytes] = {}
        self._lock = threading.Lock()
        self.requests: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                path = self.path.split("?", 1)[0].lstrip("/")
                with server._lock:
                    data = server._files.get(path)
                    server.requests.append(path)
                if data is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/gzip")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class's name)
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.port = int(self._httpd.server_address[1])
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="flux-artifacts", daemon=True)
        self._thread.start()

    def put(self, path: str, data: bytes) -> str:
        with self._lock:
            self._files[path] = data
        return f"http://127.0.0.1:{self.port}/{path}"

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=10)


# --- the controller -------------------------------------------------------------------------------

class Flux:
    """One running kustomize-controller and its artifact server (see the module docstring)."""

    def __init__(self, kubeconfig: str, k8s: Any, binary: Path, workdir: Path):
        from kubernetes import client

        self.kubeconfig = kubeconfig
        self.k8s = k8s
        self.binary = binary
        self.crds = binary.parent / "crds"
        self.workdir = workdir
        self.log_path = workdir / "kustomize-controller.log"
        self.instance = secrets.token_hex(4)
        self.custom: Any = client.CustomObjectsApi(k8s.api)
        self.server: ArtifactServer | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        self.health_port = 0
        self.started_in = 0.0
        self.managed: list[Managed] = []

    # lifecycle

    def start(self, timeout: float = 120) -> None:
        if not self.crds.is_dir():
            pytest.fail(f"no Flux CRDs in {self.crds} (scripts/flux puts them next to the binary)", pytrace=False)
        t0 = time.monotonic()
        run_kubectl(self.kubeconfig, "apply", "--server-side", "--force-conflicts", "--field-manager=cronctl-tests",
                    "-f", str(self.crds), timeout=120)
        names = [yaml.safe_load(p.read_text())["metadata"]["name"] for p in sorted(self.crds.glob("*.yaml"))]
        run_kubectl(self.kubeconfig, "wait", "--for=condition=Established", "--timeout=60s",
                    *[f"crd/{n}" for n in names], timeout=90)
        self.server = ArtifactServer()
        self.health_port = _free_port()
        tmp = self.workdir / "tmp"
        tmp.mkdir(exist_ok=True)
        env = {**os.environ, "KUBECONFIG": self.kubeconfig, "TMPDIR": str(tmp), "RUNTIME_NAMESPACE": "default"}
        argv = [str(self.binary),
                "--enable-leader-election=false",
                f"--metrics-addr=127.0.0.1:{_free_port()}",
                f"--health-addr=127.0.0.1:{self.health_port}",
                "--watch-all-namespaces=true",
                f"--watch-label-selector={INSTANCE_LABEL}={self.instance}",
                "--no-remote-bases=true",
                "--log-level=debug",
                "--log-encoding=console"]
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                         env=env, cwd=self.workdir, start_new_session=True)
        deadline = time.monotonic() + timeout
        while not self._ready():
            if self.proc.poll() is not None:
                pytest.fail(f"kustomize-controller exited with {self.proc.returncode} at start\n{self.log_tail()}",
                            pytrace=False)
            if time.monotonic() > deadline:
                pytest.fail(f"kustomize-controller not ready after {timeout:.0f}s\n{self.log_tail()}", pytrace=False)
            time.sleep(0.3)
        self.started_in = time.monotonic() - t0

    def _ready(self) -> bool:
        # no proxy, whatever HTTP_PROXY says: the probe is for this machine's loopback
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        try:
            with opener.open(f"http://127.0.0.1:{self.health_port}/readyz", timeout=2) as r:
                return int(r.status) == 200
        except (urllib.error.URLError, OSError):
            return False

    def stop(self) -> None:
        # the Kustomizations first, while the controller runs to remove its finalizer (prune is off:
        # the objects stay)
        for m in self.managed:
            with contextlib.suppress(Exception):
                self.custom.delete_namespaced_custom_object(KS_GROUP, KS_VERSION, m.namespace, KS_PLURAL, m.name)
        deadline = time.monotonic() + 20
        with contextlib.suppress(Exception):
            for m in self.managed:
                while time.monotonic() < deadline and m.kustomization(missing_ok=True) is not None:
                    time.sleep(0.3)
        if self.proc is not None and self.proc.poll() is not None:
            print(f"warning: kustomize-controller had exited with {self.proc.returncode} before the end\n"
                  f"{self.log_tail()}", file=sys.stderr)
        elif self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        if self.server is not None:
            self.server.stop()

    def log_tail(self, lines: int = _LOG_TAIL) -> str:
        try:
            text = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return f"(no kustomize-controller log at {self.log_path})"
        return f"--- kustomize-controller log ({self.log_path}), last {lines} lines ---\n" + "\n".join(text[-lines:])

    def assert_running(self) -> None:
        assert self.proc is not None
        if self.proc.poll() is not None:
            pytest.fail(f"kustomize-controller exited with {self.proc.returncode}\n{self.log_tail()}", pytrace=False)

    def wait_for(self, what: str, probe: Callable[[], T | None], timeout: float, every: float = 0.3) -> T:
        """Call `probe` until it returns something truthy; fail naming `what`, with the controller's
        log, after `timeout` s (or at once when the controller exited)."""
        deadline = time.monotonic() + timeout
        while True:
            self.assert_running()
            got = probe()
            if got:
                return got
            if time.monotonic() > deadline:
                pytest.fail(f"timed out after {timeout:.0f}s waiting for {what}\n{self.log_tail()}", pytrace=False)
            time.sleep(every)

    # what the tests use

    def manage(self, namespace: str, manifests: list[dict[str, Any]], *, interval: str = "5s",
               name: str | None = None, timeout: float = 90) -> Managed:
        """Flux manages `manifests` in `namespace` from now on (applied once before this returns)."""
        m = Managed(self, namespace, name or f"flux-{secrets.token_hex(3)}", interval)
        self.managed.append(m)
        m.create(manifests)
        m.wait_applied(timeout)
        return m


class Managed:
    """The GitRepository + Kustomization pair through which Flux manages some manifests."""

    def __init__(self, flux: Flux, namespace: str, name: str, interval: str):
        self.flux = flux
        self.namespace = namespace
        self.name = name
        self.interval = interval
        self.revision = ""
        self.artifact_url = ""

    def create(self, manifests: list[dict[str, Any]]) -> None:
        f = self.flux
        labels = {INSTANCE_LABEL: f.instance}
        repo = {"apiVersion": f"{SRC_GROUP}/{SRC_VERSION}", "kind": "GitRepository",
                "metadata": {"name": self.name, "namespace": self.namespace, "labels": labels},
                # never fetched: there is no source-controller, the status below is the artifact
                "spec": {"url": f"https://git.example.invalid/{self.namespace}/{self.name}.git",
                         "interval": "10m", "ref": {"branch": "main"}}}
        f.custom.create_namespaced_custom_object(SRC_GROUP, SRC_VERSION, self.namespace, SRC_PLURAL, repo)
        self._publish(manifests)
        ks = {"apiVersion": f"{KS_GROUP}/{KS_VERSION}", "kind": "Kustomization",
              "metadata": {"name": self.name, "namespace": self.namespace, "labels": labels},
              "spec": {"interval": self.interval, "timeout": "1m", "retryInterval": self.interval,
                       "sourceRef": {"kind": "GitRepository", "name": self.name},
                       "path": "./", "prune": False, "targetNamespace": self.namespace}}
        f.custom.create_namespaced_custom_object(KS_GROUP, KS_VERSION, self.namespace, KS_PLURAL, ks)

    def _publish(self, manifests: list[dict[str, Any]]) -> None:
        """A new artifact, and the GitRepository's status pointing at it (source-controller's job)."""
        f = self.flux
        assert f.server is not None
        data = build_artifact(manifests)
        commit = hashlib.sha1(data).hexdigest()
        path = f"gitrepository/{self.namespace}/{self.name}/{commit}.tar.gz"
        self.artifact_url = f.server.put(path, data)
        self.revision = f"main@sha1:{commit}"
        repo = f.custom.get_namespaced_custom_object(SRC_GROUP, SRC_VERSION, self.namespace, SRC_PLURAL, self.name)
        now = _now()
        gen = repo["metadata"]["generation"]
        message = f"stored artifact for revision '{self.revision}'"
        repo["status"] = {
            "observedGeneration": gen,
            "artifact": {"path": path, "url": self.artifact_url, "revision": self.revision,
                         "digest": f"sha256:{hashlib.sha256(data).hexdigest()}", "lastUpdateTime": now,
                         "size": len(data)},
            "conditions": [
                {"type": "Ready", "status": "True", "reason": "Succeeded", "message": message,
                 "observedGeneration": gen, "lastTransitionTime": now},
                {"type": "ArtifactInStorage", "status": "True", "reason": "Succeeded", "message": message,
                 "observedGeneration": gen, "lastTransitionTime": now},
            ],
        }
        f.custom.replace_namespaced_custom_object_status(SRC_GROUP, SRC_VERSION, self.namespace, SRC_PLURAL,
                                                         self.name, repo)

    def update(self, manifests: list[dict[str, Any]], timeout: float = 90) -> str:
        """Publish `manifests` as a new revision and wait until Flux applied it; returns the revision."""
        self._publish(manifests)
        self.wait_applied(timeout)
        return self.revision

    def kustomization(self, *, missing_ok: bool = False) -> dict[str, Any] | None:
        from kubernetes.client.exceptions import ApiException

        try:
            got = self.flux.custom.get_namespaced_custom_object(KS_GROUP, KS_VERSION, self.namespace, KS_PLURAL,
                                                                self.name)
        except ApiException as e:
            if missing_ok and e.status == 404:
                return None
            raise
        return dict(got)

    def ready(self) -> dict[str, Any] | None:
        """The Kustomization when it is Ready with the latest revision applied (else None)."""
        ks = self.kustomization()
        assert ks is not None
        status = ks.get("status") or {}
        is_ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])
        if (is_ready and status.get("lastAppliedRevision") == self.revision
                and status.get("observedGeneration") == ks["metadata"]["generation"]):
            return ks
        return None

    def wait_applied(self, timeout: float = 90) -> dict[str, Any]:
        """Wait until the Kustomization is Ready with the latest revision applied; returns it."""
        return self._wait(f"Kustomization {self.namespace}/{self.name} Ready at {self.revision}", self.ready, timeout)

    def reconcile_now(self, timeout: float = 60) -> dict[str, Any]:
        """Ask for a reconciliation now (what ``flux reconcile kustomization`` does) and wait until
        Flux handled it and is Ready; returns the Kustomization."""
        token = f"{time.time():.6f}"
        self.flux.custom.patch_namespaced_custom_object(
            KS_GROUP, KS_VERSION, self.namespace, KS_PLURAL, self.name,
            {"metadata": {"annotations": {REQUESTED_AT: token}}})

        def handled() -> dict[str, Any] | None:
            ks = self.ready()
            return ks if ks is not None and ks["status"].get("lastHandledReconcileAt") == token else None

        return self._wait(f"Kustomization {self.namespace}/{self.name} to handle {REQUESTED_AT}={token}", handled,
                          timeout)

    def _wait(self, what: str, probe: Callable[[], dict[str, Any] | None], timeout: float) -> dict[str, Any]:
        try:
            return self.flux.wait_for(what, probe, timeout)
        except pytest.fail.Exception as e:
            ks = self.kustomization(missing_ok=True)
            pytest.fail(f"{e.msg}\nKustomization status: {json.dumps((ks or {}).get('status'), indent=1)}",
                        pytrace=False)


@pytest.fixture(scope="session")
def flux(kubeconfig: str, k8s: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flux]:
    """The real kustomize-controller on the test cluster (see the module docstring)."""
    f = Flux(kubeconfig, k8s, flux_binary(), tmp_path_factory.mktemp("flux"))
    try:
        f.start()
        yield f
    finally:
        f.stop()
