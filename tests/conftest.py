"""Shared fixtures: the real local control plane for tests marked ``cluster``.

Fixtures
--------
``kubeconfig`` (session)
    Path (``str``) to an admin kubeconfig of a running cluster: ``$CRONCTL_TEST_KUBECONFIG`` when
    set, otherwise the cluster that ``cluster.up()`` of ``tests/harness.py`` (``scripts/cluster.py``
    as a library) starts (once per run; parallel pytest-xdist workers share it through the
    state directory's file lock). Pytest never stops it:
    ``scripts/test`` does, when it started it; a local ``pytest`` run leaves it up for the next run
    (``scripts/cluster down`` stops it).
    The Kubernetes version is ``$CRONCTL_TEST_K8S_VERSION`` (one of scripts/cluster's supported
    versions), else the newest supported one.
``namespace`` (function)
    Name of a fresh namespace ``t-<test>-<random>``, labelled ``created-by=cronctl-tests``, whose
    ``default`` ServiceAccount exists (so pods can be created at once). Deleted after the test
    without waiting for the deletion to finish.
``namespace_factory`` (session)
    ``.create(hint)`` / ``.delete(name)`` for namespaces shared by several tests (e.g. a
    module-scoped scenario); what is left is deleted at the end of the session.
``k8s`` (session)
    ``K8s`` with ``core`` (CoreV1Api), ``batch`` (BatchV1Api), ``events`` (EventsV1Api) and
    ``api`` (ApiClient) of the kubernetes client, for test setup and assertions only (cronctl
    itself talks through ``cronctl.kube``).
``real_node`` (session) / ``real_namespace`` (function)
    ``RealNode(kubeconfig, k8s, info)`` of a second control plane whose node is a real kubelet
    with containerd (``scripts/cluster up --node real``), for the tests marked ``realnode``:
    ``$CRONCTL_TEST_REAL_KUBECONFIG`` when set, else one started in its own state directory
    (``$CRONCTL_TEST_REAL_CLUSTER_DIR``, else a fresh one under /tmp) and taken down at the end of
    the session. ``real_namespace`` is a fresh namespace on it. Those tests are in one xdist group,
    so one worker (and one real node) runs them all.

Any test that uses one of these fixtures is marked ``cluster`` automatically (so is one that uses
``flux``, the real Flux kustomize-controller of ``tests/cluster/flux_support.py``).

``run_cli`` (function)
    ``run_cli(*args, stdin=None, env=None) -> CliResult(exit_code, stdout, stderr)``: cronctl in
    this process, through the real ``cronctl.cli.main`` with its output streams injected (in the
    spirit of httpie's ``http()`` test helper). No subprocess: use it wherever the test does not
    need a separate process (signals, the installed entry point, a clean ``sys.modules``).

Skipping: ``CRONCTL_SKIP_CLUSTER=1`` skips cluster tests and the terminal summary says how many.
In CI (``CI=true``) they are never skipped: if the cluster cannot start, each cluster test errors
with the components' logs, so the run fails.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import secrets
import signal
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
CLUSTER_FIXTURES = {"kubeconfig", "namespace", "k8s", "namespace_factory", "flux",  # flux: tests/cluster/flux_support.py
                    "real_node", "real_namespace"}
TEST_LABEL = {"created-by": "cronctl-tests"}
UP_FAILED = "scripts/cluster up failed"
SKIP_REASON = "CRONCTL_SKIP_CLUSTER=1: needs the real control plane (scripts/cluster)"
REALNODE_SKIP = "realnode: runs only when asked (-m realnode or CRONCTL_TEST_REAL_NODE=1): the real node builds kubelet and containerd"


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _skip_requested() -> bool:
    return os.environ.get("CRONCTL_SKIP_CLUSTER", "") not in ("", "0") and not _in_ci()


def _real_node_asked(config: pytest.Config) -> bool:
    return "realnode" in (config.getoption("markexpr", "") or "") or \
        os.environ.get("CRONCTL_TEST_REAL_NODE", "") not in ("", "0")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    skip = pytest.mark.skip(reason=SKIP_REASON)
    real_asked = _real_node_asked(config)
    for item in items:
        if item.get_closest_marker("realnode") and not real_asked:
            # not in CI's runs (yet): the first one builds containerd and a kubelet (docs/DEVELOPMENT.md)
            item.add_marker(pytest.mark.skip(reason=REALNODE_SKIP))
        if CLUSTER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.cluster)
        if item.get_closest_marker("realnode"):
            # one worker runs them all: one real node per run, not one per xdist worker
            item.add_marker(pytest.mark.xdist_group("realnode"))
        if item.get_closest_marker("cluster") and _skip_requested():
            item.add_marker(skip)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if os.environ.get("CRONCTL_SKIP_CLUSTER", "") not in ("", "0") and _in_ci():
        terminalreporter.write_line("CI=true: CRONCTL_SKIP_CLUSTER ignored, cluster tests ran", yellow=True)
    reports = [r for key in ("error", "failed") for r in terminalreporter.stats.get(key, [])]
    if any(UP_FAILED in str(getattr(r, "longrepr", "")) for r in reports):
        terminalreporter.section("local control plane logs (scripts/cluster logs)", red=True)
        terminalreporter.write(_cluster_logs())
    # counted from the reports (not at collection) so it also works under pytest-xdist
    pg = sum(1 for r in terminalreporter.stats.get("skipped", []) if "no PostgreSQL" in str(r.longrepr))
    if pg:
        terminalreporter.write_line(f"{pg} ledger test(s) on PostgreSQL SKIPPED: CRONCTL_TEST_POSTGRES is unset",
                                    yellow=True, bold=True)
    rn = sum(1 for r in terminalreporter.stats.get("skipped", []) if REALNODE_SKIP in str(r.longrepr))
    if rn:
        terminalreporter.write_line(f"{rn} realnode test(s) SKIPPED: not asked for (-m realnode or "
                                    f"CRONCTL_TEST_REAL_NODE=1)", yellow=True, bold=True)
    n = sum(1 for r in terminalreporter.stats.get("skipped", []) if SKIP_REASON in str(r.longrepr))
    if n:
        terminalreporter.write_line(
            f"CRONCTL_SKIP_CLUSTER=1: {n} cluster test(s) SKIPPED, not run against the real control plane",
            yellow=True, bold=True)


# --- the local control plane: tests/harness.py (scripts/cluster.py as a library) -----------------

def _cluster_logs() -> str:
    from harness import cluster

    return str(cluster.logs(lines=60))


@pytest.fixture(scope="session")
def kubeconfig() -> str:
    """Admin kubeconfig path of the running local control plane (started on first use)."""
    given = os.environ.get("CRONCTL_TEST_KUBECONFIG")
    if given:
        if not Path(given).is_file():
            pytest.fail(f"CRONCTL_TEST_KUBECONFIG={given}: no such file", pytrace=False)
        return given
    from harness import ClusterError, cluster, requested_k8s_version

    t0 = time.monotonic()
    progress = io.StringIO()
    try:
        with contextlib.redirect_stderr(progress):
            info = cluster.up(version=requested_k8s_version())
    except ClusterError as e:
        # the component logs are printed once, in the terminal summary (not once per test)
        pytest.fail(f"{UP_FAILED} after {time.monotonic() - t0:.0f}s: {e}\n{progress.getvalue()}", pytrace=False)
    return str(info.kubeconfig)



@dataclass(frozen=True)
class RealNode:
    """The control plane with a real kubelet and containerd (``scripts/cluster up --node real``)."""

    kubeconfig: str
    k8s: "K8s"
    state_dir: Path | None  # None: $CRONCTL_TEST_REAL_KUBECONFIG, not ours to stop


@pytest.fixture(scope="session")
def real_node() -> Iterator[RealNode]:
    """A control plane whose node runs real processes (started once per session, taken down after)."""
    import tempfile

    given = os.environ.get("CRONCTL_TEST_REAL_KUBECONFIG")
    if given:
        yield RealNode(given, _k8s_for(given), None)
        return
    from harness import ClusterError, cluster, requested_k8s_version

    state = Path(os.environ.get("CRONCTL_TEST_REAL_CLUSTER_DIR") or tempfile.mkdtemp(prefix="cronctl-real-"))
    t0 = time.monotonic()
    progress = io.StringIO()
    try:
        with contextlib.redirect_stderr(progress):
            info = cluster.up(version=requested_k8s_version(), state=state, node="real")
    except ClusterError as e:
        cluster.down(state)
        pytest.fail(f"scripts/cluster up --node real failed after {time.monotonic() - t0:.0f}s: {e}\n"
                    f"{progress.getvalue()}\n{cluster.logs(lines=40, state=state)}", pytrace=False)
    try:
        yield RealNode(str(info.kubeconfig), _k8s_for(str(info.kubeconfig)), state)
    finally:
        cluster.down(state)


@pytest.fixture
def real_namespace(real_node: RealNode, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh namespace on the real node's control plane, deleted afterwards."""
    name = create_test_namespace(real_node.k8s, _namespace_name(request.node.nodeid))
    try:
        yield name
    finally:
        delete_test_namespace(real_node.k8s, name)

# --- end of the local control plane ------------------------------------------------------------


@dataclass(frozen=True)
class K8s:
    """kubernetes client APIs bound to the test cluster (setup and assertions only)."""

    api: Any
    core: Any
    batch: Any
    events: Any


def _k8s_for(kubeconfig: str) -> K8s:
    from kubernetes import client, config

    api = config.new_client_from_config(config_file=kubeconfig)
    return K8s(api=api, core=client.CoreV1Api(api), batch=client.BatchV1Api(api), events=client.EventsV1Api(api))


@pytest.fixture(scope="session")
def k8s(kubeconfig: str) -> K8s:
    return _k8s_for(kubeconfig)


def _namespace_name(nodeid: str) -> str:
    test = re.sub(r"[^a-z0-9]+", "-", nodeid.rsplit("::", 1)[-1].lower()).strip("-")
    test = re.sub(r"^test-", "", test)[:40].strip("-") or "test"
    return f"t-{test}-{secrets.token_hex(3)}"


def create_test_namespace(k8s: K8s, name: str, timeout: float = 120) -> str:
    """Create namespace `name` with the test label and wait for its default ServiceAccount (a
    kube-controller-manager just started on a loaded machine can take a minute to make it)."""
    from kubernetes import client, watch

    k8s.core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name, labels=dict(TEST_LABEL))))
    # pods are rejected until the serviceaccount controller made "default": wait for it by watch
    sas = k8s.core.list_namespaced_service_account(name, field_selector="metadata.name=default")
    if not sas.items:
        w = watch.Watch()
        for _ in w.stream(k8s.core.list_namespaced_service_account, name, field_selector="metadata.name=default",
                          resource_version=sas.metadata.resource_version, timeout_seconds=int(timeout)):
            w.stop()
            break
        else:
            raise TimeoutError(f"namespace {name}: no default ServiceAccount after {timeout}s")
    return name


def delete_test_namespace(k8s: K8s, name: str) -> None:
    from kubernetes.client.rest import ApiException

    try:
        k8s.core.delete_namespace(name, propagation_policy="Background")
    except ApiException as e:
        if e.status != 404:
            print(f"warning: could not delete namespace {name}: {e.status} {e.reason}", file=sys.stderr)


class NamespaceFactory:
    """Creates labelled test namespaces (for fixtures wider than one test) and deletes them."""

    def __init__(self, k8s: K8s):
        self.k8s = k8s
        self.created: list[str] = []

    def create(self, hint: str) -> str:
        name = create_test_namespace(self.k8s, _namespace_name(hint))
        self.created.append(name)
        return name

    def delete(self, name: str) -> None:
        delete_test_namespace(self.k8s, name)
        if name in self.created:
            self.created.remove(name)


@pytest.fixture(scope="session")
def namespace_factory(k8s: K8s) -> Iterator[NamespaceFactory]:
    """``.create(hint) -> name`` / ``.delete(name)``; what is left is deleted at the session end."""
    f = NamespaceFactory(k8s)
    yield f
    for name in list(f.created):
        f.delete(name)


@pytest.fixture
def namespace(k8s: K8s, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh namespace for this test (label created-by=cronctl-tests), deleted afterwards."""
    name = create_test_namespace(k8s, _namespace_name(request.node.nodeid))
    try:
        yield name
    finally:
        delete_test_namespace(k8s, name)


@dataclass(frozen=True)
class CliResult:
    """What one cronctl run gave: its exit code and everything it wrote to each stream."""

    exit_code: int
    stdout: str
    stderr: str


RunCli = Callable[..., CliResult]


@pytest.fixture
def run_cli(monkeypatch: pytest.MonkeyPatch) -> Iterator[RunCli]:
    """``run_cli("explain", "@daily", "-o", "json", stdin=None, env={...})`` -> :class:`CliResult`.

    ``stdin`` is the text standard input holds (default: empty, not a terminal, so nothing
    prompts); ``env`` sets environment variables for the run. A SIGTERM handler a command installs
    (run-manual, backfill) is taken back afterwards.
    """
    from cronctl.cli import main

    sigterm = signal.getsignal(signal.SIGTERM)

    def run(*args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> CliResult:
        for k, v in (env or {}).items():
            monkeypatch.setenv(k, v)
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin or ""))
        out, err = io.StringIO(), io.StringIO()
        code = main(list(args), stdout=out, stderr=err)
        return CliResult(code, out.getvalue(), err.getvalue())

    try:
        yield run
    finally:
        signal.signal(signal.SIGTERM, sigterm)


# --- the ledger's databases: a SQLite file, and a real PostgreSQL (scripts/postgres) -------------------

POSTGRES_SKIP = "no PostgreSQL: CRONCTL_TEST_POSTGRES is unset (scripts/test starts one with scripts/postgres up)"


def _fresh_postgres_database(base: str) -> tuple[str, Callable[[], None]]:
    """A new empty database on the test server (``base`` is its URL); returns its URL and a dropper."""
    import uuid

    import psycopg

    name = f"t_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(base, autocommit=True) as c:
        c.execute(f'CREATE DATABASE "{name}"')

    def drop() -> None:
        with psycopg.connect(base, autocommit=True) as c:
            c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    return base.rsplit("/", 1)[0] + "/" + name, drop


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """The URL of a fresh empty database on the PostgreSQL scripts/test started (dropped afterwards).
    Without one the test is skipped (said in the summary), never under CI."""
    base = os.environ.get("CRONCTL_TEST_POSTGRES")
    if not base:
        if _in_ci():
            pytest.fail("CI=true but CRONCTL_TEST_POSTGRES is unset: scripts/test did not start PostgreSQL",
                        pytrace=False)
        pytest.skip(POSTGRES_SKIP)
    url, drop = _fresh_postgres_database(base)
    try:
        yield url
    finally:
        drop()


@pytest.fixture(params=["sqlite", "postgresql"])
def ledger_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of an empty ledger: a SQLite file, then (the second parameter) a fresh database on the
    PostgreSQL scripts/test started (:func:`postgres_url`)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'ledger.sqlite'}"
    return str(request.getfixturevalue("postgres_url"))
