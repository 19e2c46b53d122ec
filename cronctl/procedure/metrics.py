"""The recorder's Prometheus metrics (``cronctl record --metrics-address``), with prometheus_client.

Names, labels and meanings are documented in docs/METRICS.md; the alert rules of ``cronctl
alerts --source recorder`` (cronctl.alerts.recorder_rules) read exactly these. Labels are the CronJob's
``namespace`` and ``cronjob``, and ``cluster`` when ``--cluster`` names one: never a Job name, a
slot or an occurrence (each would be a new series per run).

The HTTP server answers ``/metrics``, ``/healthz`` (the recorder's loop is alive) and ``/readyz``
(it holds the Lease, or needs none, and has listed everything once); a standby recorder is alive
but not ready, so a Service in front of several replicas sends scrapes to the one that writes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from cronctl.errors import BadInput

PREFIX = "cronctl"
#: schedule lag (slot to Job created) and start lag (Job created to its first worker): seconds
LAG_BUCKETS = (1, 5, 15, 30, 60, 120, 300, 900, 3600)
#: a slot's run time: seconds
DURATION_BUCKETS = (1, 10, 30, 60, 300, 900, 1800, 3600, 3 * 3600, 12 * 3600)


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``:PORT`` (all interfaces) or ``[V6]:PORT``."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) < 65536:
        raise BadInput(f"--metrics-address {text[:80]!r}: give HOST:PORT, such as 127.0.0.1:9108")
    host = host.strip("[]") or "0.0.0.0"
    if not all(c.isalnum() or c in ".-:_" for c in host) or len(host) > 253:
        raise BadInput(f"--metrics-address {text[:80]!r}: {host[:80]!r} is not a host name or address")
    return host, int(port)


#: the per-CronJob families: (name, type, help); gauges are set by attribute name (Metrics.cronjob)
_GAUGES = {
    "last_success": ("cronctl_cronjob_last_success_timestamp_seconds",
                     "When the latest slot that succeeded completed (unix seconds)"),
    "success_due": ("cronctl_cronjob_success_due_timestamp_seconds",
                    "By when the next success is due: the slot after the last success (or the resume), plus "
                    "startingDeadlineSeconds and the template's activeDeadlineSeconds"),
    "next_slot": ("cronctl_cronjob_next_slot_timestamp_seconds", "The next slot the schedule names (unix seconds)"),
    "interval": ("cronctl_cronjob_interval_seconds", "The gap from the next slot to the one after it"),
    "suspended": ("cronctl_cronjob_suspended", "1 while spec.suspend is true"),
    "hold": ("cronctl_cronjob_hold_active", "1 while a cronctl run (run-manual, backfill) holds the CronJob"),
    "hold_since": ("cronctl_cronjob_hold_since_timestamp_seconds", "When the current hold began (0: none)"),
    "paused": ("cronctl_cronjob_paused", "1 while a cronctl pause is recorded on the CronJob"),
    "pause_until": ("cronctl_cronjob_pause_until_timestamp_seconds",
                    "The --until of the current pause (0: none, or no --until)"),
    "running": ("cronctl_cronjob_running_jobs", "Jobs of the CronJob running now"),
    "oldest_running": ("cronctl_cronjob_oldest_running_start_timestamp_seconds",
                       "When the longest-running Job of the CronJob started (0: none runs)"),
    "beside": ("cronctl_cronjob_jobs_beside_manual", "Jobs running now beside a running manual Job of the CronJob"),
}
_HISTOGRAMS = {
    "schedule_lag": ("cronctl_slot_schedule_lag_seconds", "From the slot to its Job's creation", LAG_BUCKETS),
    "start_lag": ("cronctl_slot_start_lag_seconds", "From the Job's creation to its first worker running",
                  LAG_BUCKETS),
    "duration": ("cronctl_slot_duration_seconds", "A closed slot's run time", DURATION_BUCKETS),
}
_COUNTERS = {
    "slots": ("cronctl_slots_total", "Slots closed, by verdict (docs/METRICS.md)"),
    "failed": ("cronctl_slots_failed_total",
               "Closed slots whose run failed: a Job stood for the slot and none that did succeeded"),
    "beside_manual": ("cronctl_slots_beside_manual_total",
                      "Closed slots whose Job ran at the same time as a manual Job"),
}


_SLOTS, _FAILED, _BESIDE = _COUNTERS["slots"][0], _COUNTERS["failed"][0], _COUNTERS["beside_manual"][0]
#: each histogram's bucket lines as one format string: {0} the labels, then the cumulative counts
_BUCKET_LINES = {attr: "".join(f'{name}_bucket{{{{{{0}},le="{le}"}}}} {{{i + 1}}}\n'
                               for i, le in enumerate([repr(float(b)) for b in buckets] + ["+Inf"]))
                 for attr, (name, _doc, buckets) in _HISTOGRAMS.items()}


def _num(v: float) -> str:
    """A sample value in the text format (Prometheus reads Python's float repr; infinities and NaN
    are spelled as Go does)."""
    if v != v:
        return "NaN"
    if v in (float("inf"), float("-inf")):
        return "+Inf" if v > 0 else "-Inf"
    return repr(v)


def _escape(value: str) -> str:
    """A label value in the text format: backslash, double quote and newline escaped."""
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


@dataclass
class _Series:
    """One CronJob's series, and their text, rendered again only after a change."""

    labels: str  # cluster="..",namespace="..",cronjob=".." (escaped)
    slots: dict[str, float] = field(default_factory=dict)  # verdict: count
    failed: float = 0.0  # closed slots whose run failed (history's outcome)
    beside_manual: float = 0.0
    gauges: dict[str, float] = field(default_factory=dict)
    hists: dict[str, list[float]] = field(default_factory=dict)  # name: [bucket counts..., sum, count]
    text: dict[str, str] | None = None  # family name: its lines for this CronJob

    def render(self) -> dict[str, str]:
        if self.text is None:
            f, lab = _num, self.labels
            t = {_SLOTS: "".join(f'{_SLOTS}{{{lab},verdict="{_escape(v)}"}} {f(n)}\n' for v, n in self.slots.items()),
                 _FAILED: f"{_FAILED}{{{lab}}} {f(self.failed)}\n",
                 _BESIDE: f"{_BESIDE}{{{lab}}} {f(self.beside_manual)}\n"}
            for attr, v in self.gauges.items():
                name = _GAUGES[attr][0]
                t[name] = f"{name}{{{lab}}} {f(v)}\n"
            for attr, h in self.hists.items():
                name = _HISTOGRAMS[attr][0]
                acc, counts = 0.0, []
                for n in h[:-2]:
                    acc += n
                    counts.append(acc)
                t[name] = (_BUCKET_LINES[attr].format(lab, *counts) +
                           f"{name}_sum{{{lab}}} {f(h[-2])}\n{name}_count{{{lab}}} {f(h[-1])}\n")
            self.text = t
        return self.text


class Metrics:
    """Every series the recorder exports.

    The recorder's own series are prometheus_client metrics in their own registry. The per-CronJob
    series (about 60 per CronJob) are kept here as plain numbers and rendered in the same text
    format, each CronJob's text cached until it changes: prometheus_client formats ~15 µs a sample,
    a second per scrape for 1,000 CronJobs (bench/bench_metrics.py); a scrape now renders only the
    CronJobs that changed since the last. tests/unit/test_metrics.py parses the whole output with
    prometheus_client's own parser.
    """

    def __init__(self, cluster: str | None) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge

        self.registry = CollectorRegistry(auto_describe=True)
        self._base = {"cluster": cluster} if cluster else {}
        r = self.registry
        self._lock = threading.Lock()
        self._series: dict[tuple[str, str], _Series] = {}

        def g(name: str, doc: str, labels: Iterable[str]) -> Any:
            return Gauge(f"{PREFIX}_{name}", doc, list(labels), registry=r)

        base = list(self._base)
        self.info = g("recorder_info", "1; the labels say what this recorder records", [*base, "ledger_backend", "version"])
        self.watch_restarts = Counter(f"{PREFIX}_recorder_watch_restarts", "Watches begun again (ended or dropped)",
                                      [*base, "resource"], registry=r)
        self.relists = Counter(f"{PREFIX}_recorder_relists", "Full lists (at start and after a 410)",
                               [*base, "resource"], registry=r)
        self.write_errors = Counter(f"{PREFIX}_recorder_write_errors", "Ledger writes that failed (retried)", base,
                                    registry=r)
        self.rows = Counter(f"{PREFIX}_recorder_rows_written", "Rows written into the ledger", base, registry=r)
        self.skipped = Counter(f"{PREFIX}_recorder_skipped_objects", "Malformed objects skipped", base, registry=r)
        self.buffer = g("recorder_buffer_items", "Changes waiting to be written", base)
        self.buffer_size = g("recorder_buffer_capacity", "The most changes held (--buffer)", base)
        self.lag = g("recorder_lag_seconds", "Age of the oldest change in the last batch written", base)
        self.lease = g("recorder_lease_holder", "1 while this recorder holds the Lease (or needs none)", base)
        self.last_write = g("recorder_last_write_timestamp_seconds", "When the last batch was written", base)
        self.last_judged = g("recorder_last_judged_timestamp_seconds", "When slots were last judged", base)
        # cronctl claim's rows (docs/METRICS.md): by workflow key, never by occurrence
        self.claim_occurrences = g("claim_occurrences", "Occurrences cronctl claim recorded, by workflow and effect "
                                   "(done, refused-duplicate, running, ambiguous, failed)", [*base, "workflow", "effect"])
        self.claim_conflicts = g("claim_conflicts", "Claimers refused on the workflow's occurrences (a duplicate, a "
                                 "live lease, a final failure)", [*base, "workflow"])
        from prometheus_client import disable_created_metrics

        disable_created_metrics()  # type: ignore[no-untyped-call]  # *_created series would say nothing here

    # -- the recorder's own series ------------------------------------------------------------------------
    def own(self, metric: Any) -> Any:
        """A recorder-wide series."""
        return metric.labels(**self._base) if self._base else metric

    def of(self, metric: Any, **labels: str) -> Any:
        """A recorder-wide series with more labels (``resource``)."""
        return metric.labels(**self._base, **labels)

    def claims(self, effects: dict[tuple[str, str], int], conflicts: dict[str, int]) -> None:
        """The claim rows' effects and conflicts by workflow (claimstore.summary), replacing the last."""
        self.claim_occurrences.clear()
        self.claim_conflicts.clear()
        for (wf, eff), n in effects.items():
            self.claim_occurrences.labels(**self._base, workflow=wf, effect=eff).set(n)
        for wf, n in conflicts.items():
            self.claim_conflicts.labels(**self._base, workflow=wf).set(n)

    # -- per CronJob ---------------------------------------------------------------------------------
    def _get(self, ns: str, name: str) -> _Series:
        key = (ns, name)
        s = self._series.get(key)
        if s is None:
            labels = {**self._base, "namespace": ns, "cronjob": name}
            s = self._series[key] = _Series(",".join(f'{k}="{_escape(v)}"' for k, v in labels.items()))
        s.text = None
        return s

    def known(self, ns: str, name: str, verdicts: Iterable[str]) -> None:
        """Make every verdict's counter of a CronJob exist at 0, so that the first slot of a verdict
        is an increase Prometheus sees (a series born at 1 has no increase)."""
        with self._lock:
            s = self._get(ns, name)
            for v in verdicts:
                s.slots.setdefault(v, 0.0)

    def forget(self, ns: str, name: str) -> None:
        """A deleted CronJob's series go away."""
        with self._lock:
            self._series.pop((ns, name), None)

    def cronjob(self, ns: str, name: str, values: dict[str, float | None]) -> None:
        """Set a CronJob's gauges by attribute name (None: the series is removed)."""
        with self._lock:
            s = self._get(ns, name)
            for attr, v in values.items():
                if attr not in _GAUGES:
                    raise KeyError(attr)
                if v is None:
                    s.gauges.pop(attr, None)
                else:
                    s.gauges[attr] = float(v)

    def _observe(self, s: _Series, attr: str, value: float) -> None:
        buckets = _HISTOGRAMS[attr][2]
        h = s.hists.setdefault(attr, [0.0] * (len(buckets) + 3))
        i = next((k for k, le in enumerate(buckets) if value <= le), len(buckets))
        h[i] += 1
        h[-2] += value
        h[-1] += 1

    def started(self, ns: str, name: str, seconds: float) -> None:
        """A Job's start lag (created to first worker running)."""
        with self._lock:
            self._observe(self._get(ns, name), "start_lag", max(seconds, 0.0))

    def slot(self, ns: str, name: str, verdict: str, *, schedule_lag: float | None, duration: float | None,
             beside_manual: bool, failed: bool = False) -> None:
        """A closed slot (``failed``: its run failed, whatever its verdict)."""
        with self._lock:
            s = self._get(ns, name)
            s.slots[verdict] = s.slots.get(verdict, 0.0) + 1
            if failed:
                s.failed += 1
            if beside_manual:
                s.beside_manual += 1
            for attr, v in (("schedule_lag", schedule_lag), ("duration", duration)):
                if v is not None and v >= 0:
                    self._observe(s, attr, float(v))

    def value(self, ns: str, name: str, family: str, **labels: str) -> float | None:
        """One per-CronJob sample (for the tests and the status line): ``slots`` with verdict=,
        ``failed``, ``beside_manual``, a gauge's attribute name, or a histogram's attribute name (its count)."""
        with self._lock:
            s = self._series.get((ns, name))
            if s is None:
                return None
            if family == "slots":
                return s.slots.get(labels["verdict"])
            if family == "beside_manual":
                return s.beside_manual
            if family == "failed":
                return s.failed
            if family in _HISTOGRAMS:
                h = s.hists.get(family)
                return h[-1] if h else None
            return s.gauges.get(family)

    def render(self) -> bytes:
        """The text exposition (version 0.0.4): the recorder's own series, then each CronJob family."""
        from prometheus_client import generate_latest

        head = bytes(generate_latest(self.registry))
        families = [(n, "counter", d) for n, d in _COUNTERS.values()] + \
                   [(n, "gauge", d) for n, d in _GAUGES.values()] + \
                   [(n, "histogram", d) for n, d, _b in _HISTOGRAMS.values()]
        with self._lock:
            texts = [s.render() for s in self._series.values()]
        parts = []
        for name, typ, doc in families:
            family = name[:-len("_total")] if typ == "counter" else name
            parts.append(f"# HELP {name} {doc}\n# TYPE {family if typ != 'counter' else name} {typ}\n")
            parts.extend(t[name] for t in texts if name in t)
        return head + "".join(parts).encode()


def serve(metrics: Metrics, host: str, port: int, healthy: Callable[[], tuple[bool, str]],
          ready: Callable[[], tuple[bool, str]]) -> Any:
    """Serve ``/metrics``, ``/healthz`` and ``/readyz`` in a daemon thread; returns the server
    (``shutdown()`` stops it). A port in use is a clear error (BadInput)."""
    import socket
    from wsgiref.simple_server import WSGIRequestHandler, make_server

    from prometheus_client.exposition import CONTENT_TYPE_LATEST, ThreadingWSGIServer

    class Quiet(WSGIRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base's name)
            pass

    def app(environ: dict[str, Any], start: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path in ("/healthz", "/readyz"):
            ok, why = (healthy if path == "/healthz" else ready)()
            start("200 OK" if ok else "503 Service Unavailable", [("Content-Type", "text/plain; charset=utf-8")])
            return [(why + "\n").encode()]
        if path in ("/metrics", "/"):
            body = metrics.render()
            start("200 OK", [("Content-Type", CONTENT_TYPE_LATEST), ("Content-Length", str(len(body)))])
            return [body]
        start("404 Not Found", [("Content-Type", "text/plain; charset=utf-8")])
        return [b"not found: /metrics, /healthz, /readyz\n"]

    server_cls: Any = ThreadingWSGIServer
    if ":" in host:
        class V6(ThreadingWSGIServer):
            address_family = socket.AF_INET6
        server_cls = V6
    try:
        server = make_server(host, port, app, server_cls, handler_class=Quiet)
    except OSError as e:
        raise BadInput(f"--metrics-address {host}:{port}: cannot listen there ({e.strerror or e})") from e
    t = threading.Thread(target=server.serve_forever, daemon=True, name="record-metrics")
    t.start()
    return server
