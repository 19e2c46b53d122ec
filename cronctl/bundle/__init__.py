"""The incident bundle: collect (Cluster or dump -> RawData) -> analyse -> render -> write.

:func:`make_bundle` is the one entry point the CLI calls. Modules: ``collect`` (live cluster),
``dump`` (offline file), ``analyse`` (pure verdicts and overlaps, typed: ``result``), ``redact``
(pure masking), ``assemble`` (pure: the result and the files), ``document`` (pure: bundle.json, the
published schema, made of the result), ``render`` (jinja2 reports and SVG), ``write``
(directory or .tar.gz, private modes, SHA256SUMS).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cronctl.bundle.assemble import Bundle, Linter
    from cronctl.cluster import Cluster


@dataclass(frozen=True)
class Request:
    """What the user asked for. ``now`` is read once by the caller (the clock, or --now)."""

    names: list[str] | None  # None: every CronJob of the namespace (--all)
    out: str
    now: datetime | None  # None with a dump: the latest timestamp in the dump
    collected_at: datetime
    since_seconds: int | None = None
    max_log_bytes: int = 1 << 20
    window: timedelta = timedelta(hours=24)
    from_dump: str | Sequence[str] | None = None  # one file, or several read as one dump
    namespace: str | None = None  # for dumps; a live cluster has its own
    logs: bool = True
    redact: str = "default"  # or "strict": every env and flag value not on the allow-list is masked too
    lint: Linter | None = None  # the CronJob's lint findings (the CLI hands in cronctl.lint's)
    #: the ledger to add (its Jobs, events and log tails the cluster no longer has): (URL or None for
    #: the default, the cluster's name in it); None: the cluster alone
    ledger: tuple[str | None, str] | None = None


def make_bundle(req: Request, cluster: Cluster | None = None) -> Bundle:
    """Collect (from ``cluster`` or ``req.from_dump``), analyse, render and write the bundle to
    ``req.out``; return it (``bundle.result`` what it found, ``bundle.doc`` its bundle.json)."""
    from cronctl.bundle.analyse import Options
    from cronctl.bundle.assemble import build_bundle
    from cronctl.bundle.collect import check_max_log_bytes
    from cronctl.bundle.render import add_reports
    from cronctl.bundle.write import write_bundle

    check_max_log_bytes(req.max_log_bytes)  # with a dump too, before anything is read
    raw: Any
    if req.from_dump is not None:
        from cronctl.bundle.dump import load_dump

        raw = load_dump(req.from_dump, namespace=req.namespace, now=req.now, collected_at=req.collected_at)
    else:
        from cronctl.bundle.collect import collect

        assert cluster is not None, "a live bundle needs a cluster"
        raw = collect(cluster, req.names, now=req.now or req.collected_at, collected_at=req.collected_at,
                      since_seconds=req.since_seconds, max_log_bytes=req.max_log_bytes, logs=req.logs)
    if req.ledger is not None:
        from cronctl.bundle.collect import add_ledger

        add_ledger(raw, req.names, *req.ledger, since=raw.now - req.window - timedelta(days=1))
    raw.options = {**raw.options, "window_seconds": int(req.window.total_seconds())}
    if req.redact != "default":
        raw.options["redact"] = req.redact
    bundle = build_bundle(raw, req.names, Options(now=raw.now, window=req.window),
                          strict_redaction=req.redact == "strict", lint=req.lint)
    add_reports(bundle.files, bundle.doc)
    write_bundle(bundle.files, req.out, mtime=req.collected_at)
    return bundle
