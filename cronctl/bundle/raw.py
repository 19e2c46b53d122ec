"""The raw material of a bundle, the same whether read from a live cluster or from a dump.

``collect.collect`` (Cluster -> RawData) and ``dump.load_dump`` (file -> RawData) both produce it;
``analyse`` and ``assemble`` consume it. Objects are plain JSON dicts as the API serves them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

Obj = dict[str, Any]


@dataclass
class LogRecord:
    """One container log (current or previous instance) or the reason it is missing."""

    pod: str
    container: str
    previous: bool
    text: str | None  # None when not read (see ``missing``)
    bytes: int = 0  # size kept (UTF-8 bytes)
    truncated: bool = False  # cut at --max-log-bytes
    missing: str | None = None  # why there is no text (forbidden, container never started, ...)


@dataclass
class Missing:
    """A read that could not be made; the bundle is then partial and says why."""

    what: str  # e.g. "pods", "pods/log", "events", "whoami"
    reason: str  # the API's answer, one line
    object: str | None = None  # e.g. "pod/x container y"


@dataclass
class RawData:
    """Everything read, unfiltered beyond what the source gave. ``now`` is the analysis instant."""

    namespace: str
    source: str  # "cluster" | "dump"
    now: datetime
    now_source: str  # "clock", "--now", "latest timestamp in the dump"
    collected_at: datetime  # when cronctl built the bundle (wall clock, or fixed in tests)
    cronjobs: list[Obj]
    jobs: list[Obj]
    pods: list[Obj]
    events: list[Obj]
    logs: list[LogRecord] = field(default_factory=list)
    logs_note: str | None = None  # e.g. "logs are not part of a dump"
    missing: list[Missing] = field(default_factory=list)
    server: str | None = None
    server_version: str | None = None
    collected_by: str | None = None
    dump_file: str | None = None
    options: Obj = field(default_factory=dict)
    request_count: int | None = None
    #: the ledger's suspend spans by CronJob uid (bundle --ledger; cronctl.ledger.facts.suspend_spans)
    suspensions: dict[str, list[tuple[datetime, datetime | None, str]]] = field(default_factory=dict)
    #: each slot's effect as cronctl claim recorded it, by workflow key (namespace/name) and slot
    #: (RFC 3339 UTC), for the workflows with claim rows (bundle --ledger; claimstore.slot_effect)
    effects: dict[str, dict[str, Obj]] = field(default_factory=dict)
