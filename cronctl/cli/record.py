"""``cronctl record``: the recorder that keeps every slot's evidence in the ledger
(cronctl.procedure.record, cronctl.ledger)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from cronctl.cli import env
from cronctl.cli.candidates import namespaces
from cronctl.cli.common import ContextOpt, KubeconfigOpt, RequestTimeoutOpt, UsageError, namespace_opt
from cronctl.cli.console import SafeConsole


def _namespace_list(values: Optional[list[str]]) -> Optional[list[str]]:
    from cronctl.names import namespace

    return None if values is None else [namespace(v) for v in values]


def _cluster_name(text: str) -> str:
    """A cluster name goes into every row and every line printed: 1-253 printable characters."""
    from cronctl.errors import BadInput

    if not 0 < len(text) <= 253 or not text.isprintable():
        raise BadInput(f"--cluster {text[:80]!r}: a cluster name is 1-253 printable characters")
    return text


def _recorder_rule_groups() -> list[dict[str, object]]:
    """``cronctl alerts --source recorder`` with its defaults; the scrape job is the manifests'
    Service (a ServiceMonitor names the job after it)."""
    from cronctl import alerts, deploy

    return alerts.recorder_rules(alerts.RecorderAlertOptions(recorder_job=deploy.NAME))


def _print_manifests(out: SafeConsole, namespace: Optional[list[str]], all_namespaces: bool, ledger: Optional[str],
                     cluster: Optional[str], keep: str, log_bytes: int, status_every: str, lease: bool,
                     lease_namespace: Optional[str], buffer: int, metrics_address: Optional[str],
                     image: Optional[str], deploy_namespace: Optional[str], postgres_secret: Optional[str],
                     storage_size: Optional[str], service_monitor: bool, prometheus_rule: bool) -> None:
    """The manifests of cronctl.deploy as YAML documents on stdout. The ledger comes from the flags
    only: a local $CRONCTL_LEDGER (it may hold a password) never goes into them."""
    from cronctl import __version__, deploy
    from cronctl.cli import durations as flags
    from cronctl.cli.common import emit

    if all_namespaces == bool(namespace):
        raise UsageError("--print-manifests: say what the recorder records: -n NAMESPACE (repeatable) or -A")
    if cluster is None:
        raise UsageError("--print-manifests needs --cluster NAME: in the pod there is no kubeconfig context to "
                         "name the cluster in the ledger")
    if postgres_secret is not None and ledger is not None:
        raise UsageError("give --ledger (a SQLite file) or --postgres-secret (a PostgreSQL URL in a Secret), not both")
    if postgres_secret is not None and storage_size is not None:
        raise UsageError("--storage-size is the SQLite ledger's volume: not with --postgres-secret")
    flags.KEEP.delta(keep)
    flags.STATUS_EVERY.seconds(status_every)
    scopes = None if all_namespaces else tuple(dict.fromkeys(namespace or []))
    where = deploy_namespace or (scopes[0] if scopes else "cronctl")
    opts = deploy.DeployOptions(
        cluster=_cluster_name(cluster), namespaces=scopes, deploy_namespace=where,
        image=deploy.image(f"cronctl:{__version__}" if image is None else image),
        ledger_path=None if postgres_secret is not None else deploy.sqlite_path(ledger),
        postgres_secret=deploy.secret_ref(postgres_secret) if postgres_secret is not None else None,
        storage_size=deploy.storage_size(deploy.DEFAULT_STORAGE if storage_size is None else storage_size),
        lease_namespace=(lease_namespace or where) if lease else None,
        keep=keep, log_bytes=log_bytes, status_every=status_every, buffer=buffer,
        metrics_address=metrics_address, service_monitor=service_monitor,
        rule_groups=_recorder_rule_groups() if prometheus_rule else None,
        create_namespace=deploy_namespace is None and not scopes)
    docs = deploy.manifests(opts)  # all checked before the first line is written
    out.file.write(deploy.HEADER)
    for d in docs:
        out.file.write("---\n")
        emit(out, d, "yaml")


def record(
    ctx: typer.Context,
    namespace: Annotated[Optional[list[str]], typer.Option(
        "--namespace", "-n", help="A namespace to record (repeatable; default: the context's namespace).",
        show_default=False, callback=_namespace_list, autocompletion=namespaces)] = None,
    all_namespaces: Annotated[bool, typer.Option(
        "--all-namespaces", "-A", help="Record every namespace.")] = False,
    ledger: Annotated[Optional[str], typer.Option(
        "--ledger", help="The ledger: postgresql://USER@HOST:PORT/DB, sqlite:///PATH or a file path (default: "
        "$CRONCTL_LEDGER, else $XDG_STATE_HOME/cronctl/ledger.sqlite).", show_default=False,
        metavar="URL")] = None,
    cluster: Annotated[Optional[str], typer.Option(
        "--cluster", help="This cluster's name in the ledger (default: the kubeconfig context); recorders of "
        "several clusters may share one PostgreSQL.", show_default=False, metavar="NAME")] = None,
    keep: Annotated[str, typer.Option(
        "--keep", help="Delete what ended longer ago than this (90d, 12h; a bare number is seconds).")] = "90d",
    log_bytes: Annotated[int, typer.Option(
        "--log-bytes", help="Keep this many bytes of the end of each finished Job's container logs (0: none).",
        min=0, max=16 * 1024 * 1024)] = 16 * 1024,
    status_every: Annotated[str, typer.Option(
        "--status-every", help="Print a status line this often.")] = "60s",
    lease: Annotated[bool, typer.Option(
        "--lease/--no-lease", help="Hold a Lease so that one recorder per cluster and ledger writes; another "
        "waits on standby and takes over when the holder dies (needs get/create/update on leases).")] = True,
    lease_namespace: Annotated[Optional[str], typer.Option(
        "--lease-namespace", help="Where the Lease lives (default: the first -n namespace, else the context's).",
        show_default=False, callback=namespace_opt)] = None,
    buffer: Annotated[int, typer.Option(
        "--buffer", help="Hold at most this many changes while the ledger cannot be written; full: exit 9.",
        min=1, max=10_000_000)] = 50_000,
    once: Annotated[bool, typer.Option(
        "--once", help="Record what the cluster holds now (logs included), then exit: for a cron-style "
        "recorder or a first import.")] = False,
    metrics_address: Annotated[Optional[str], typer.Option(
        "--metrics-address", help="Serve Prometheus metrics (slots by verdict, lags, freshness, holds, the recorder's "
        "health) and /healthz, /readyz on HOST:PORT, such as 127.0.0.1:9108.",
        show_default=False, metavar="HOST:PORT")] = None,
    print_manifests: Annotated[bool, typer.Option(
        "--print-manifests", help="Print the manifests that run this recorder, with these flags, in the "
        "cluster (Deployment, ServiceAccount, least RBAC, ledger volume or Secret, metrics Service) as YAML "
        "and exit; no cluster access. Needs -n or -A and --cluster.")] = False,
    image: Annotated[Optional[str], typer.Option(
        "--image", help="With --print-manifests: the recorder's image (default: cronctl:VERSION, built from "
        "the Containerfile).", show_default=False, metavar="IMAGE")] = None,
    deploy_namespace: Annotated[Optional[str], typer.Option(
        "--deploy-namespace", help="With --print-manifests: where the recorder runs (default: the first -n "
        "namespace; with -A: cronctl).", show_default=False, callback=namespace_opt, metavar="NAMESPACE")] = None,
    postgres_secret: Annotated[Optional[str], typer.Option(
        "--postgres-secret", help="With --print-manifests: the ledger is the PostgreSQL URL in this Secret's "
        "KEY (default key: url), given to the recorder as $CRONCTL_LEDGER; never printed.",
        show_default=False, metavar="NAME[/KEY]")] = None,
    storage_size: Annotated[Optional[str], typer.Option(
        "--storage-size", help="With --print-manifests: the size of the SQLite ledger's volume (default: 1Gi).",
        show_default=False, metavar="SIZE")] = None,
    service_monitor: Annotated[bool, typer.Option(
        "--service-monitor", help="With --print-manifests and --metrics-address: also a prometheus-operator "
        "ServiceMonitor.")] = False,
    prometheus_rule: Annotated[bool, typer.Option(
        "--prometheus-rule", help="With --print-manifests and --metrics-address: also a PrometheusRule of the "
        "recorder's alerts (cronctl alerts --source recorder, with its defaults; scrape job cronctl-recorder).")
    ] = False,
    kubeconfig: KubeconfigOpt = None,
    request_timeout: RequestTimeoutOpt = None,
    context: ContextOpt = None,
) -> None:
    """Keep every CronJob's slots in the ledger: CronJobs, Jobs, events and log tails, before Kubernetes deletes them.

    Lists and watches CronJobs, Jobs, Events and Jobs' pods (resuming where the last run stopped), writes each
    change idempotently into the ledger (SQLite by default, PostgreSQL for teams), and keeps a
    redacted tail of each finished Job's logs. history, bundle and status read it with --ledger.
    Judges every slot once it is closed and keeps the verdict (a row for a slot without a Job too);
    with --metrics-address it exports them for Prometheus (cronctl alerts --source recorder).
    Prints a status line every --status-every. SIGTERM or Ctrl-C: writes what it holds, exit 0.
    One recorder per cluster and ledger writes (a Lease); another waits on standby. Exit 9 when the
    ledger cannot be opened or written (its buffer full), 3 when the Lease is lost or held by
    another recorder (--once), 7 API error, 5 bad input. --print-manifests prints what runs it
    in the cluster instead (a Deployment with its RBAC, for kubectl apply -f -).
    """
    deploy_only = {"--image": image, "--deploy-namespace": deploy_namespace, "--postgres-secret": postgres_secret,
                   "--storage-size": storage_size, "--service-monitor": service_monitor or None,
                   "--prometheus-rule": prometheus_rule or None}
    if print_manifests:
        if once or kubeconfig or context:
            raise UsageError("--print-manifests runs nothing and reads no kubeconfig: drop --once, --kubeconfig "
                             "and --context")
        _print_manifests(env.of(ctx).out, namespace, all_namespaces, ledger, cluster, keep, log_bytes, status_every, lease,
                         lease_namespace, buffer, metrics_address, image, deploy_namespace, postgres_secret,
                         storage_size, service_monitor, prometheus_rule)
        return
    given = [flag for flag, value in deploy_only.items() if value is not None]
    if given:
        raise UsageError(f"{', '.join(given)}: only with --print-manifests")
    import signal
    import threading

    from cronctl.cli import durations as flags
    from cronctl.ledger.store import open_ledger
    from cronctl.procedure.record import Recorder, RecordOptions
    from cronctl.textsafe import visible

    if all_namespaces and namespace:
        raise UsageError("give -n NAMESPACE or -A, not both")
    address = None
    if metrics_address is not None:
        from cronctl.procedure.metrics import parse_address

        address = parse_address(metrics_address)
    keep_td = flags.KEEP.delta(keep)
    every = flags.STATUS_EVERY.seconds(status_every)
    run = env.of(ctx)
    err = run.err
    kc = run.connect(kubeconfig, context, namespace[0] if namespace else None)
    name = _cluster_name(cluster or kc.context_name or "default")
    scopes = None if all_namespaces else tuple(dict.fromkeys(namespace or [kc.namespace]))
    led = open_ledger(ledger)
    stop = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    held = None
    if lease:
        import copy

        from cronctl.cli.runtime import holder
        from cronctl.procedure.lease import Lease, lease_name

        lc = copy.copy(kc)
        lc.namespace = lease_namespace or (scopes[0] if scopes else kc.namespace)
        held = Lease(lc, lease_name(name, led.shown), holder())
    metrics = None
    if address is not None:
        from cronctl import __version__
        from cronctl.procedure.metrics import Metrics

        metrics = Metrics(name if cluster else None)
        metrics.of(metrics.info, ledger_backend=led.backend, version=__version__).set(1)
    rec = Recorder(kc, led, RecordOptions(cluster_name=name, namespaces=scopes, keep=keep_td, log_bytes=log_bytes,
                                          status_every=every, once=once, buffer=buffer),
                   run.clock, lambda line: err.print(visible(line), markup=False), stop, lease=held,
                   metrics=metrics)
    server = None
    if metrics is not None and address is not None:
        from cronctl.procedure.metrics import serve

        server = serve(metrics, address[0], address[1], rec.healthy, rec.ready)
        err.print(visible(f"record: metrics on http://{address[0]}:{server.server_port}/metrics"), markup=False)
    err.print(visible(f"record: cluster {name} into {led.shown} ({led.backend}); "
                      + ("once" if once else "until SIGTERM")), markup=False)
    try:
        rec.run()
    finally:
        if server is not None:
            server.shutdown()
        led.close()
    err.print(visible(rec.status_line()), markup=False)
