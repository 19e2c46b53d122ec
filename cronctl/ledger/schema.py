"""The ledger's tables (SQLAlchemy Core), the one definition the store reads and writes through.

Migrations (cronctl/ledger/migrations, Alembic) create and change them; a test checks that the
migrated database equals this definition. docs/LEDGER.md describes every table and column.

Every row carries ``cluster`` (``--cluster``, default the kubeconfig context), so recorders of
several clusters can share one PostgreSQL. Unique constraints make every write idempotent: one
row per (cluster, uid) of a CronJob, Job or Event, one per (cluster, CronJob uid, slot), one per
(cluster, Job uid, pod, container) log tail. Times are UTC.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (JSON, BigInteger, Boolean, Column, DateTime, Dialect, Index, Integer, MetaData, String, Table,
                        Text, TypeDecorator, UniqueConstraint)

from cronctl.timeutil import UTC

metadata = MetaData()


class Undecoded:
    """A stored value that does not decode (another writer's row, a broken disk: issue 39): JSON
    that is garbled, too deep or too large, a time that is no time. The reader names its row and
    leaves it out (:meth:`cronctl.ledger.store.Reader.problems`); never an exception while rows are
    fetched."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __repr__(self) -> str:
        return f"Undecoded({self.reason!r})"


def _guarded(process: Any) -> Any:
    """A result processor that turns a value it cannot read into :class:`Undecoded`."""
    if process is None:
        return None

    def guarded(value: Any) -> Any:
        try:
            return process(value)
        except (ValueError, TypeError, OverflowError, RecursionError) as e:
            from cronctl.decode import excerpt

            return Undecoded(f"{excerpt(value, 60)} is not readable ({type(e).__name__})")

    return guarded


class _JsonType(TypeDecorator[Any]):
    """JSON, as JSONB on PostgreSQL. The PostgreSQL dialect (and asyncio, which it imports: 40 ms) is
    imported only when a PostgreSQL ledger is opened, not for every SQLite read."""

    impl = JSON
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> Any:
        if dialect.name == "postgresql":
            from sqlalchemy.dialects.postgresql import JSONB

            return dialect.type_descriptor(JSONB())
        return dialect.type_descriptor(JSON())

    def result_processor(self, dialect: Dialect, coltype: Any) -> Any:
        return _guarded(super().result_processor(dialect, coltype))


_Json = _JsonType()


class UTCDateTime(TypeDecorator[datetime]):
    """An aware UTC datetime on every backend: PostgreSQL keeps a timestamptz; SQLite, which has no
    zones, keeps the naive UTC time and gets UTC back on reading."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        t: datetime = value
        return t.replace(tzinfo=UTC) if t.tzinfo is None else t.astimezone(UTC)

    def result_processor(self, dialect: Dialect, coltype: Any) -> Any:
        # SQLite keeps whatever was written: text that is no time (another writer's row) is named
        # by the reader, not a ValueError in the middle of a fetch
        process = super().result_processor(dialect, coltype)
        if process is None:
            process = self._checked  # a driver that hands back objects: still a datetime or nothing
        return _guarded(process)

    @staticmethod
    def _checked(value: Any) -> Any:
        if value is not None and not isinstance(value, datetime):
            raise TypeError(type(value).__name__)
        return value


def _ts(name: str, nullable: bool = True) -> Column[datetime]:
    return Column(name, UTCDateTime(), nullable=nullable)


cronjobs = Table(
    "cronjobs", metadata,
    Column("id", BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=True),
    Column("cluster", String(253), nullable=False),
    Column("uid", String(64), nullable=False),
    Column("namespace", String(253), nullable=False),
    Column("name", String(253), nullable=False),
    _ts("first_seen", False), _ts("last_seen", False), _ts("deleted_at"),
    Column("object", _Json, nullable=False),
    UniqueConstraint("cluster", "uid", name="uq_cronjobs_cluster_uid"),
    Index("ix_cronjobs_name", "cluster", "namespace", "name"),
)

cronjob_configs = Table(
    "cronjob_configs", metadata,
    Column("id", BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=True),
    Column("cluster", String(253), nullable=False),
    Column("cronjob_uid", String(64), nullable=False),
    Column("resource_version", String(64), nullable=False),
    _ts("observed_at", False),
    Column("generation", BigInteger),
    Column("schedule", Text, nullable=False),
    Column("time_zone", String(253)),
    Column("suspend", Boolean, nullable=False),
    Column("suspend_manager", String(253)),
    _ts("suspend_at"),
    Column("concurrency_policy", String(32), nullable=False),
    Column("starting_deadline_seconds", BigInteger),
    Column("successful_limit", Integer, nullable=False),
    Column("failed_limit", Integer, nullable=False),
    Column("fingerprint", String(32), nullable=False),
    UniqueConstraint("cluster", "cronjob_uid", "resource_version", name="uq_configs_version"),
    Index("ix_configs_cronjob", "cluster", "cronjob_uid", "observed_at"),
)

jobs = Table(
    "jobs", metadata,
    Column("id", BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=True),
    Column("cluster", String(253), nullable=False),
    Column("uid", String(64), nullable=False),
    Column("namespace", String(253), nullable=False),
    Column("name", String(253), nullable=False),
    Column("cronjob_uid", String(64)),
    Column("cronjob_name", String(253)),
    _ts("slot"),
    Column("origin", String(16), nullable=False),
    _ts("created"), _ts("started"), _ts("first_running"), _ts("completed"),
    Column("outcome", String(16)),
    Column("failure_reason", Text),
    Column("exit_codes", _Json),
    _ts("deleted_at"), _ts("updated_at", False),
    Column("object", _Json, nullable=False),
    UniqueConstraint("cluster", "uid", name="uq_jobs_cluster_uid"),
    Index("ix_jobs_cronjob", "cluster", "cronjob_uid", "created"),
    Index("ix_jobs_namespace", "cluster", "namespace", "created"),
)

slots = Table(
    "slots", metadata,
    Column("id", BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=True),
    Column("cluster", String(253), nullable=False),
    Column("cronjob_uid", String(64), nullable=False),
    Column("namespace", String(253), nullable=False),
    Column("cronjob_name", String(253), nullable=False),
    _ts("slot", False),
    Column("jobs", Integer, nullable=False),  # how many Jobs stand for it (2+: a duplicate)
    Column("job_name", String(253)),  # the first Job's
    _ts("created"), _ts("first_running"), _ts("completed"),
    Column("outcome", String(16)),
    # the recorder's verdict once the slot is closed (history.VERDICTS), its reason, when judged
    Column("verdict", String(32)), Column("reason", Text), _ts("closed_at"),
    Column("judged", _Json),  # the row history printed for the slot when it closed (history.slot_history)
    Column("judged_rules", String(32)),  # the redaction rules that found nothing in it (redact.rules_id)
    UniqueConstraint("cluster", "cronjob_uid", "slot", name="uq_slots_slot"),
    Index("ix_slots_name", "cluster", "namespace", "cronjob_name", "slot"),
    Index("ix_slots_closed", "cluster", "cronjob_uid", "closed_at"),
)

events = Table(
    "events", metadata,
    Column("id", BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=True),
    Column("cluster", String(253), nullable=False),
    Column("uid", String(64), nullable=False),
    Column("namespace", String(253), nullable=False),
    Column("involved_kind", String(64)),
    Column("involved_name", String(253)),
    Column("involved_uid", String(64)),
    Column("reason", String(128)),
    _ts("first_time"), _ts("last_time"),
    Column("count", Integer),
    Column("object", _Json, nullable=False),
    UniqueConstraint("cluster", "uid", name="uq_events_cluster_uid"),
    Index("ix_events_namespace", "cluster", "namespace", "last_time"),
    # the events of a CronJob or Job, by uid, or by name when the writer gave none (migration 0003)
    Index("ix_events_involved", "cluster", "involved_uid", "last_time"),
    Index("ix_events_involved_name", "cluster", "namespace", "involved_name"),
)

logs = Table(
    "logs", metadata,
    Column("id", BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=True),
    Column("cluster", String(253), nullable=False),
    Column("job_uid", String(64), nullable=False),
    Column("namespace", String(253), nullable=False),
    Column("job_name", String(253), nullable=False),
    Column("pod", String(253), nullable=False),
    Column("container", String(253), nullable=False),
    _ts("taken_at", False),
    Column("text", Text, nullable=False),
    Column("truncated", Boolean, nullable=False),
    UniqueConstraint("cluster", "job_uid", "pod", "container", name="uq_logs_container"),
)

cursors = Table(
    "cursors", metadata,
    Column("id", BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=True),
    Column("cluster", String(253), nullable=False),
    Column("resource", String(64), nullable=False),
    Column("scope", String(253), nullable=False),  # a namespace, or "*" for all
    Column("resource_version", String(64), nullable=False),
    _ts("updated_at", False),
    UniqueConstraint("cluster", "resource", "scope", name="uq_cursors"),
)

claims = Table(
    "claims", metadata,
    # one row per scheduled occurrence of a workflow (cronctl claim, docs/LEDGER.md "Claims"): the
    # business effect's own record, not a Job's. The unique key is what makes racing claimers meet.
    Column("id", BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=True),
    Column("workflow", String(512), nullable=False),  # the workflow key (default namespace/CronJob)
    _ts("occurrence", False),  # the logical scheduled time (the first of seed 003's four times)
    Column("status", String(16), nullable=False),  # running / done / failed / final (claims.STATUSES)
    Column("attempt", Integer, nullable=False),
    Column("fencing_token", BigInteger, nullable=False),  # grows by one on every takeover
    Column("lease_owner", String(512), nullable=False),  # the holder: Job, pod, host, pid
    Column("holder_job", String(253)),  # the holder's Job (namespace/name), when it runs in one
    _ts("lease_expires", False),
    Column("config_version", String(253)),
    Column("output_ref", Text),
    Column("last_error", Text),
    Column("exit_code", Integer),
    _ts("job_created"),  # the holder Job's creation (the second time)
    _ts("first_claimed_at", False), _ts("claimed_at", False),  # the first worker start; this attempt's
    _ts("renewed_at"), _ts("completed_at"),  # the last lease renewal; business work done (the fourth)
    Column("replay_reason", Text),  # --replay REASON of the attempt that replayed a done or final row
    Column("refusals", Integer, nullable=False),  # claimers refused (a duplicate, a live lease, final)
    Column("last_refused_by", String(512)), _ts("last_refused_at"),
    _ts("updated_at", False),
    UniqueConstraint("workflow", "occurrence", name="uq_claims_occurrence"),
    Index("ix_claims_status", "status", "lease_expires"),
)

#: table -> the columns of its unique key (the upsert's conflict target)
KEYS = {
    "cronjobs": ("cluster", "uid"), "jobs": ("cluster", "uid"), "events": ("cluster", "uid"),
    "slots": ("cluster", "cronjob_uid", "slot"), "logs": ("cluster", "job_uid", "pod", "container"),
    "cursors": ("cluster", "resource", "scope"), "cronjob_configs": ("cluster", "cronjob_uid", "resource_version"),
    "claims": ("workflow", "occurrence"),
}
