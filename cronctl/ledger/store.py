"""The ledger database: open (and migrate), write idempotently, read back as API objects.

SQLAlchemy 2 Core over SQLite (the default, a file under ``$XDG_STATE_HOME/cronctl/``) or
PostgreSQL (psycopg 3); Alembic migrates the schema (:mod:`cronctl.ledger.schema`) on open.
Every write is an upsert on the table's unique key (``INSERT ... ON CONFLICT``), so writing the
same object twice, or again after a restart, changes nothing. Any database failure is a
:class:`cronctl.errors.LedgerError` (exit 9) with one line saying what failed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable

from cronctl import model
from cronctl.errors import BadInput, LedgerError
from cronctl.ledger import facts, schema
from cronctl.slotrows import MADE, VERDICTS, JobDetail, SlotRow, slot_outcome
from cronctl.textsafe import visible
from cronctl.timeutil import rfc3339_z

Obj = dict[str, Any]

ENV = "CRONCTL_LEDGER"


def default_path() -> Path:
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(state) / "cronctl" / "ledger.sqlite"


def resolve(url: str | None) -> str:
    """The ledger URL to use: ``url`` (``--ledger``), else ``$CRONCTL_LEDGER``, else the SQLite file
    :func:`default_path`. ``postgresql://`` and ``postgres://`` select PostgreSQL through psycopg 3,
    ``sqlite:///PATH`` (or a bare path) a SQLite file. Anything else is BadInput."""
    u = (url or os.environ.get(ENV) or "").strip()
    if not u:
        return f"sqlite:///{default_path()}"
    for scheme in ("postgresql+psycopg://", "postgresql://", "postgres://"):
        if u.startswith(scheme):
            return "postgresql+psycopg://" + u[len(scheme):]
    if u.startswith("sqlite:///"):
        return u
    if "://" in u:
        raise BadInput(f"--ledger {_safe(u)}: not a ledger URL (postgresql://..., sqlite:///PATH or a file path)")
    return f"sqlite:///{os.path.abspath(u)}"


def _safe(url: str) -> str:
    from cronctl.redact import safe_url

    return safe_url(url)


def shown(url: str | None) -> str:
    """The ledger's URL as printed and stored in reports: the resolved URL without a password."""
    return _safe(resolve(url).replace("postgresql+psycopg://", "postgresql://"))


def _prepare_sqlite_file(url: str) -> None:
    """The SQLite file and its directory, readable by the owner only (0600 / 0700): the ledger keeps
    logs and objects of the cluster."""
    path = url[len("sqlite:///"):]
    if not path or path == ":memory:":
        return
    d = os.path.dirname(path)
    _refuse_link(path)
    try:
        if d and not os.path.isdir(d):
            os.makedirs(d, mode=0o700, exist_ok=True)
        fd = os.open(path, os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        os.close(fd)
    except OSError as e:
        if os.path.islink(path):
            _refuse_link(path)
        raise LedgerError(f"cannot create the ledger file {path}: {e.strerror or e}") from e


def _refuse_link(path: str) -> None:
    """A ledger file that is a symbolic link is refused, as ``--out`` and ``--html`` refuse one
    (docs/LIMITS.md): whoever planted it would have the recorder write, or a reader's SQLite its
    ``-wal`` and ``-shm`` files, where the link points."""
    if os.path.islink(path):
        raise BadInput(f"--ledger {path} is a symbolic link; cronctl does not follow links where it writes")


#: the newest migration (cronctl/ledger/migrations/versions/); a ledger already there opens without
#: importing Alembic (a reader's start-up: ~0.2 s). tests/unit/test_ledger.py checks it is the head.
HEAD = "0006"


def _version(engine: Any) -> str | None:
    """The ledger's migration, or None when it has none yet (a new file, or one being created). A
    server that cannot be reached raises (SQLAlchemyError): that is no ledger "not ready yet"."""
    from sqlalchemy import text
    from sqlalchemy.exc import SQLAlchemyError

    with engine.connect() as conn:
        try:
            v = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
        except SQLAlchemyError:  # no alembic_version table
            return None
    return None if v is None else str(v)


def _migrate(engine: Any, *, create: bool, shown: str) -> None:
    """Bring the ledger to :data:`HEAD`. Only a writer (``create``) makes a new one: a reader that
    finds no migration at all meets a file a recorder is creating this moment, and says so (it
    would otherwise race the recorder's own migration, and one of the two would fail). A migration
    that fails because another process finished it meanwhile is no failure."""
    from sqlalchemy.exc import SQLAlchemyError

    version = _version(engine)
    if version == HEAD:
        return
    if version is None and not create:
        raise LedgerError(f"the ledger {shown} is not ready yet (cronctl record is creating it, or it is "
                          "not a ledger)")
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(Path(__file__).parent / "migrations"))
    try:
        with engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "head")
    except SQLAlchemyError:
        import time

        for _ in range(20):  # another writer migrating at the same moment: wait for it to finish
            if _version(engine) == HEAD:
                return
            time.sleep(0.5)
        raise


@dataclass
class Ledger:
    """An open ledger. ``url`` is the SQLAlchemy URL, ``shown`` the same without a password.
    ``redactors``: what its writes mask with, one redactor per namespace for its whole life."""

    engine: Any
    url: str
    shown: str
    redactors: Redactors = field(default_factory=lambda: Redactors())

    @property
    def backend(self) -> str:
        return str(self.engine.dialect.name)

    @contextmanager
    def writing(self) -> Iterator[Writer]:
        """One transaction: everything written through the Writer commits together, or nothing."""
        from sqlalchemy.exc import SQLAlchemyError

        try:
            with self.engine.begin() as conn:
                yield Writer(conn, self.backend, self.redactors)
        except SQLAlchemyError as e:
            raise LedgerError(f"cannot write the ledger {self.shown}: {_first_line(e)}") from e

    @contextmanager
    def reading(self) -> Iterator[Reader]:
        from sqlalchemy.exc import SQLAlchemyError

        try:
            with self.engine.connect() as conn:
                yield Reader(conn)
        except SQLAlchemyError as e:
            raise LedgerError(f"cannot read the ledger {self.shown}: {_first_line(e)}") from e

    def close(self) -> None:
        self.engine.dispose()


def _first_line(e: BaseException) -> str:
    orig = getattr(e, "orig", None) or e
    text = str(orig).strip().splitlines()
    return text[0] if text else type(orig).__name__


def open_ledger(url: str | None, *, create: bool = True) -> Ledger:
    """Open (and migrate to the newest schema) the ledger at ``url`` (:func:`resolve`).

    ``create`` False (the readers): a SQLite file that does not exist is a LedgerError, not a new
    empty ledger that would judge every slot without evidence."""
    from sqlalchemy import event
    from sqlalchemy.exc import SQLAlchemyError

    u = resolve(url)
    seen_as = shown(u)
    if u.startswith("sqlite:///"):
        path = u[len("sqlite:///"):]
        if not create and not os.path.lexists(path):
            raise LedgerError(f"no ledger at {path} (cronctl record writes it; --ledger or {ENV} names another)")
        _prepare_sqlite_file(u)
        engine = _engine(u, seen_as, connect_args={"timeout": 30})

        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn: Any, _rec: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.close()
    else:
        engine = _engine(u, seen_as, pool_pre_ping=True, connect_args={"connect_timeout": 10})
    try:
        _migrate(engine, create=create, shown=seen_as)
    except SQLAlchemyError as e:
        engine.dispose()
        raise LedgerError(f"cannot open the ledger {seen_as}: {_first_line(e)}") from e
    except LedgerError:
        engine.dispose()
        raise
    return Ledger(engine=engine, url=u, shown=seen_as)


def _engine(url: str, shown: str, **kw: Any) -> Any:
    """SQLAlchemy's engine for ``url``; a URL it cannot read (``postgresql://u@h:notaport/db``) is
    BadInput, one line, not an internal error."""
    from sqlalchemy import create_engine
    from sqlalchemy.exc import ArgumentError

    try:
        return create_engine(url, json_deserializer=_json_loads, **kw)
    except (ArgumentError, ValueError) as e:
        raise BadInput(f"--ledger {shown}: not a ledger URL ({_first_line(e)})") from e


def _json_loads(text: str | bytes) -> Any:
    """A stored JSON column read back: by orjson (a 90-day history reads 13,000 judged rows: the
    standard library's decoder took 0.3 s of it), by the standard library what orjson refuses
    (NaN, a number beyond a double), both within the bounds of :mod:`cronctl.decode` (depth,
    size, integer digits). A value that does not decode is :class:`schema.Undecoded`, which the
    reader names: a row another writer made is untrusted input (issue 39)."""
    import orjson

    from cronctl import decode

    try:
        s = decode.check(text)
        try:
            return decode.bounded(orjson.loads(s))
        except decode.Undecodable:
            raise
        except ValueError:  # orjson.JSONDecodeError is a ValueError; its depth limit is 1024
            return decode.loads(s)
    except ValueError as e:
        return schema.Undecoded(f"{decode.excerpt(text if isinstance(text, str) else repr(text), 60)}: {e}")


# --- masking what is stored again ------------------------------------------------------------

def remask(conn: Any, *, chunk: int = 1000) -> int:
    """Mask the stored objects and log tails again with this cronctl's rules and one redactor per
    (cluster, namespace), as the writes now do (migration 0005, issue 39): rows kept by an older
    cronctl were masked each on its own, by older rules. Pass one learns from every CronJob, Job and
    Event of a namespace, pass two masks each object and log tail with what was learned and
    rewrites the rows that change. A value the older writes masked already is gone from the ledger,
    so its echoes elsewhere can only be found when a rule finds them; new rules (an XML password, a
    secret label, SSWS, ...) and their echoes are masked. Rows that do not decode are left alone.
    Returns the rows rewritten. Reads ``chunk`` rows at a time, by id."""
    from sqlalchemy import select, update

    reds = Redactors()
    objects = (schema.cronjobs, schema.jobs, schema.events)

    def rows(t: Any, *cols: Any) -> Iterator[Any]:
        last = 0
        while True:
            got = conn.execute(select(t.c.id, t.c.cluster, t.c.namespace, *cols).where(t.c.id > last)
                               .order_by(t.c.id).limit(chunk)).all()
            if not got:
                return
            yield from got
            last = got[-1].id

    for t in objects:  # pass one: what every namespace's objects hold
        for r in rows(t, t.c.object):
            if isinstance(r.object, dict) and isinstance(r.cluster, str) and isinstance(r.namespace, str):
                reds.of(r.cluster, r.namespace).learn(r.object)
    n = 0
    for t in objects:  # pass two: each object masked with all of it
        for r in rows(t, t.c.object):
            if not (isinstance(r.object, dict) and isinstance(r.cluster, str) and isinstance(r.namespace, str)):
                continue
            masked = reds.of(r.cluster, r.namespace).kube_object(r.object)
            if masked != r.object:
                conn.execute(update(t).where(t.c.id == r.id).values(object=masked))
                n += 1
    lg = schema.logs
    for r in rows(lg, lg.c.text):
        if isinstance(r.text, str) and isinstance(r.cluster, str) and isinstance(r.namespace, str):
            masked_text = reds.of(r.cluster, r.namespace).text(r.text)
            if masked_text != r.text:
                conn.execute(update(lg).where(lg.c.id == r.id).values(text=masked_text))
                n += 1
    return n


# --- the judged rows' key order ---------------------------------------------------------------

_ROW_KEYS = tuple(SlotRow.__annotations__)  # the judge's order (cronctl.history._row)
_DETAIL_KEYS = tuple(JobDetail.__annotations__)


def _ordered(d: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    out = {k: d[k] for k in keys if k in d}
    if len(out) != len(d):  # a key the type does not name (a newer cronctl's row): kept, after the rest
        out.update(d)
    return out


def _with_outcome(row: Any) -> Any:
    """A row kept before rows carried their run's ``outcome`` (docs/LEDGER.md, "Outcome"): the
    outcome derived from its own ``job_details`` as the judge derives it
    (:func:`cronctl.slotrows.slot_outcome`: ``unknown`` when its Jobs' ends are not known, ``none``
    when no Job stood for it), in the judge's key order. No migration: the JSON column holds any
    row, and the derivation is the judge's own."""
    if not isinstance(row, dict) or "outcome" in row:
        return row
    details = row.get("job_details")
    outcome, failure = slot_outcome(details) if isinstance(details, list) else ("unknown", None)
    return _ordered({**row, "outcome": outcome, "failure_reason": failure}, _ROW_KEYS)


def _judged_order(row: Any) -> Any:
    """A kept row (and its Job details) with its keys in the order the judge writes them: JSONB keeps
    no key order (it sorts keys by length), and a PostgreSQL ledger prints as SQLite and the cluster do."""
    if not isinstance(row, dict):
        return row
    out = _ordered(row, _ROW_KEYS)
    details = out.get("job_details")
    if isinstance(details, list):
        out["job_details"] = [_ordered(d, _DETAIL_KEYS) if isinstance(d, dict) else d for d in details]
    return out


# --- writing ------------------------------------------------------------------------------------

def judged_rules(row: SlotRow, red: Any = None) -> str | None:
    """What ``slots.judged_rules`` keeps for a judged row: the id of the redaction rules
    (:func:`cronctl.redact.rules_id`) when they find nothing in ``row`` on its own, else None.
    ``red``: a ``Redactor`` to check with, whose cache of strings already read is reused."""
    from cronctl.redact import Redactor, rules_id

    return rules_id() if (red or Redactor()).finds_nothing(row) else None


#: columns an upsert never overwrites with NULL: facts learnt once (from the pods, a deletion)
_KEEP_IF_NULL = {"jobs": ("first_running", "exit_codes", "deleted_at"), "cronjobs": ("deleted_at",)}
#: columns an upsert never changes after the first insert
_FIRST_ONLY = {"cronjobs": ("first_seen",)}


class Redactors:
    """The redactors a ledger's writes mask with: one per (cluster, namespace), kept while the ledger
    is open (issue 39). A CronJob, its Jobs, its Events and its Jobs' log tails are masked by the
    same one, which has learned every secret value seen in any of them: a password from a
    CronJob's env that a Job's log or an Event repeats is masked before it is stored (a fresh
    redactor per object stored such echoes raw). A namespace rather than a CronJob: an Event
    names a Pod, and its CronJob is not known when it is written; the values learned are secrets
    wherever they stand. Each redactor's caches of strings read are dropped now and then
    (:data:`MEMO_ROWS` writes); the secret values learned are kept."""

    #: writes through one redactor after which its caches are dropped (bounded memory in a
    #: recorder that runs for months)
    MEMO_ROWS = 20_000

    def __init__(self) -> None:
        self._by: dict[tuple[str, str], Any] = {}
        self._uses: dict[tuple[str, str], int] = {}

    def of(self, cluster: str, namespace: str) -> Any:
        from cronctl.redact import Redactor

        key = (cluster, namespace)
        red = self._by.get(key)
        if red is None:
            red = self._by[key] = Redactor()
        n = self._uses.get(key, 0) + 1
        if n >= self.MEMO_ROWS:
            red.forget_strings()
            n = 0
        self._uses[key] = n
        return red


class Writer:
    """Idempotent writes on one connection (one transaction). ``redactors``: the ledger's
    (:class:`Redactors`); a writer without one masks each namespace with a redactor of its own."""

    def __init__(self, conn: Any, backend: str, redactors: Redactors | None = None) -> None:
        self.conn = conn
        self.backend = backend
        self.redactors = redactors if redactors is not None else Redactors()
        self.rows = 0  # rows written (inserted, or updated in place by the upsert)
        self._checker: Any = None  # the Redactor judged rows are checked with (judged_rules), one a transaction

    def _check(self) -> Any:
        from cronctl.redact import Redactor

        if self._checker is None:
            self._checker = Redactor()
        return self._checker

    def _upsert(self, table: Any, rows: list[Obj], *, update: bool = True, keep_existing: tuple[str, ...] = ()) -> None:
        if not rows:
            return
        from sqlalchemy import func

        from sqlalchemy.dialects import postgresql, sqlite

        keys = schema.KEYS[table.name]
        stmt: Any = (postgresql.insert if self.backend == "postgresql" else sqlite.insert)(table)
        if update:
            keep = _KEEP_IF_NULL.get(table.name, ())
            first = _FIRST_ONLY.get(table.name, ())
            cols = {c for r in rows for c in r} - set(keys) - set(first) - set(keep_existing) - {"id"}
            set_ = {c: (func.coalesce(stmt.excluded[c], table.c[c]) if c in keep else stmt.excluded[c])
                    for c in sorted(cols)}
            stmt = stmt.on_conflict_do_update(index_elements=list(keys), set_=set_)
        else:
            stmt = stmt.on_conflict_do_nothing(index_elements=list(keys))
        self.conn.execute(stmt, rows)
        self.rows += len(rows)

    def cronjob(self, cluster: str, obj: Obj, seen: datetime, *, deleted: bool = False) -> None:
        from sqlalchemy import select

        c = facts.cronjob_config(obj)
        if not c.uid:
            raise BadInput(f"cronjob {c.namespace}/{c.name} has no uid")
        row = {"cluster": cluster, "uid": c.uid, "namespace": c.namespace, "name": c.name, "first_seen": seen,
               "last_seen": seen, "deleted_at": seen if deleted else None,
               "object": facts.stored_object(obj, keep_managed_fields=True,
                                             red=self.redactors.of(cluster, c.namespace))}
        self._upsert(schema.cronjobs, [row])
        t = schema.cronjob_configs
        last = self.conn.execute(select(t.c.fingerprint).where(t.c.cluster == cluster, t.c.cronjob_uid == c.uid)
                                 .order_by(t.c.observed_at.desc(), t.c.id.desc()).limit(1)).scalar()
        if last != c.fingerprint:
            self._upsert(t, [{"cluster": cluster, "cronjob_uid": c.uid, "resource_version": c.resource_version,
                              "observed_at": seen, "generation": c.generation, "schedule": c.schedule,
                              "time_zone": c.time_zone, "suspend": c.suspend, "suspend_manager": c.suspend_manager,
                              "suspend_at": c.suspend_at, "concurrency_policy": c.concurrency_policy,
                              "starting_deadline_seconds": c.starting_deadline_seconds,
                              "successful_limit": c.successful_limit, "failed_limit": c.failed_limit,
                              "fingerprint": c.fingerprint}], update=False)

    def job(self, cluster: str, obj: Obj, seen: datetime, *, deleted: bool = False,
            pods: list[Obj] | None = None) -> None:
        owner = facts.cronjob_owner(obj)
        cj_uid, cj_name = owner if owner else (None, None)
        r = model.job_record(obj, cj_name or "", seen)
        uid = r.uid
        if not uid:
            raise BadInput(f"job {model.name_of(obj)} has no uid")
        namespace = str(model.meta(obj).get("namespace") or "")
        slot = facts.job_slot(obj, cj_name) if cj_name else None
        row: Obj = {"cluster": cluster, "uid": uid, "namespace": namespace,
               "name": r.name, "cronjob_uid": cj_uid, "cronjob_name": cj_name, "slot": slot, "origin": r.origin,
               "created": r.created, "started": r.started, "completed": r.completed, "outcome": r.outcome,
               "failure_reason": r.failure_reason, "deleted_at": seen if deleted else None, "updated_at": seen,
               "first_running": facts.first_running(pods) if pods else None,
               "exit_codes": facts.exit_codes(pods) or None if pods else None,
               "object": facts.stored_object(obj, red=self.redactors.of(cluster, namespace))}
        self._upsert(schema.jobs, [row])
        if cj_uid and slot is not None:
            self._slot(cluster, cj_uid, namespace, cj_name or "", slot)

    def pod(self, cluster: str, pod: Obj) -> bool:
        """A Job's pod as the watch brings it: its Job's first worker start, kept when it is earlier
        than the one known (and the slot's with it). True when it changed. A pod whose Job is not
        written yet changes nothing: the Job's end reads its pods again."""
        from sqlalchemy import select, update

        job_uid = model.controller_owner_uid(pod, "Job")
        began = facts.first_running([pod])
        if not job_uid or began is None:
            return False
        j = schema.jobs
        row = self.conn.execute(select(j.c.first_running, j.c.cronjob_uid, j.c.namespace, j.c.cronjob_name, j.c.slot)
                                .where(j.c.cluster == cluster, j.c.uid == job_uid)).first()
        if row is None or (row.first_running is not None and row.first_running <= began):
            return False
        self.conn.execute(update(j).where(j.c.cluster == cluster, j.c.uid == job_uid).values(first_running=began))
        self.rows += 1
        if row.cronjob_uid and row.slot is not None:
            self._slot(cluster, row.cronjob_uid, row.namespace, row.cronjob_name or "", row.slot)
        return True

    def _slot(self, cluster: str, cronjob_uid: str, namespace: str, cronjob_name: str, slot: datetime) -> None:
        """The slot's row from the Jobs that stand for it (recomputed: idempotent whatever the order)."""
        from sqlalchemy import select

        t = schema.jobs
        got = self.conn.execute(select(t.c.name, t.c.created, t.c.first_running, t.c.completed, t.c.outcome)
                                .where(t.c.cluster == cluster, t.c.cronjob_uid == cronjob_uid, t.c.slot == slot)
                                .order_by(t.c.created, t.c.name)).all()
        if not got:
            return
        first = got[0]
        self._upsert(schema.slots, [{"cluster": cluster, "cronjob_uid": cronjob_uid, "namespace": namespace,
                                     "cronjob_name": cronjob_name, "slot": slot, "jobs": len(got),
                                     "job_name": first.name, "created": first.created,
                                     "first_running": first.first_running, "completed": first.completed,
                                     "outcome": first.outcome}])

    def close_slot(self, cluster: str, cronjob_uid: str, namespace: str, cronjob_name: str, slot: datetime,
                   row: SlotRow, closed_at: datetime) -> None:
        """The recorder's judgement of a closed slot (``row``: history's row for it): a row for every
        slot the schedule named, a Job or not (the Job columns stay as the Jobs wrote them; a slot
        without one has ``jobs`` 0). A row in which the redaction rules find nothing on their own is
        kept with the id of those rules (``judged_rules``): a reader running the same rules need not
        read it for secrets again (``Redactor.data_in_place``'s settled rows). The row is kept as
        judged either way: the reader masks the whole output at once, each secret found anywhere
        masked everywhere, which a row masked alone here could not be."""
        self._upsert(schema.slots, [{"cluster": cluster, "cronjob_uid": cronjob_uid, "namespace": namespace,
                                     "cronjob_name": cronjob_name, "slot": slot, "jobs": 0,
                                     "verdict": str(row["verdict"]), "reason": str(row["reason"])[:2000],
                                     "closed_at": closed_at, "judged": row,
                                     "judged_rules": judged_rules(row, self._check())}],
                     keep_existing=("jobs",))

    def event(self, cluster: str, obj: Obj) -> bool:
        """Keep ``obj`` when it is about a CronJob or a Job (or cronctl's); False when not kept."""
        if not facts.event_kept(obj):
            return False
        inv = obj.get("involvedObject") or obj.get("regarding") or {}
        first, last = facts.event_times(obj)
        uid = str(model.meta(obj).get("uid") or "")
        if not uid:
            return False
        count = obj.get("count")
        namespace = str(model.meta(obj).get("namespace") or "")
        self._upsert(schema.events, [{
            "cluster": cluster, "uid": uid, "namespace": namespace,
            "involved_kind": inv.get("kind"), "involved_name": inv.get("name"), "involved_uid": inv.get("uid"),
            "reason": obj.get("reason"), "first_time": first, "last_time": last,
            "count": count if isinstance(count, int) and not isinstance(count, bool) else None,
            "object": facts.stored_object(obj, red=self.redactors.of(cluster, namespace))}])
        return True

    def log(self, cluster: str, job: Obj, pod: str, container: str, text: str, truncated: bool,
            taken: datetime) -> None:
        red = self.redactors.of(cluster, str(model.meta(job).get("namespace") or ""))
        red.learn(job)  # the Job's own values, and what its namespace's objects taught the redactor
        self._upsert(schema.logs, [{"cluster": cluster, "job_uid": str(model.meta(job).get("uid") or ""),
                                    "namespace": str(model.meta(job).get("namespace") or ""),
                                    "job_name": model.name_of(job), "pod": pod, "container": container,
                                    "taken_at": taken, "text": red.text(text), "truncated": truncated}])

    def cursor(self, cluster: str, resource: str, scope: str, resource_version: str, at: datetime) -> None:
        self._upsert(schema.cursors, [{"cluster": cluster, "resource": resource, "scope": scope,
                                       "resource_version": resource_version, "updated_at": at}])

    def prune(self, cluster: str, before: datetime) -> int:
        """Delete what ended before ``before`` (``--keep``): Jobs (and their slots and logs) created
        before it, events last seen before it, CronJobs deleted before it. Returns rows deleted."""
        from sqlalchemy import delete, select

        j, s, lg, e, c = schema.jobs, schema.slots, schema.logs, schema.events, schema.cronjobs
        n = 0
        old_jobs = select(j.c.uid).where(j.c.cluster == cluster, j.c.created < before)
        n += self.conn.execute(delete(lg).where(lg.c.cluster == cluster, lg.c.job_uid.in_(old_jobs))).rowcount or 0
        n += self.conn.execute(delete(j).where(j.c.cluster == cluster, j.c.created < before)).rowcount or 0
        n += self.conn.execute(delete(s).where(s.c.cluster == cluster, s.c.slot < before)).rowcount or 0
        n += self.conn.execute(delete(e).where(e.c.cluster == cluster, e.c.last_time < before)).rowcount or 0
        n += self.conn.execute(delete(c).where(c.c.cluster == cluster, c.c.deleted_at < before)).rowcount or 0
        return n


# --- reading ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Evidence:
    """What the ledger holds for some CronJobs, as the API objects the judge reads, plus what only
    the ledger knows: the exact suspend spans (by CronJob uid) and the kept log tails."""

    cronjobs: list[Obj]
    jobs: list[Obj]
    events: list[Obj]
    suspensions: dict[str, list[tuple[datetime, datetime | None, str]]]
    logs: list[Obj]
    #: the rows left out because they do not decode, one line each (:attr:`Reader.problems`)
    problems: list[str] = field(default_factory=list)


#: the verdict a judged row shows when it holds one this cronctl does not know (another writer's)
UNKNOWN_VERDICT = "unknown"
_VERDICTS = frozenset(VERDICTS)
#: a judged row's keys and the types each must have to be printed (SlotRow; None allowed where typed so)
_ROW_TYPES: dict[str, tuple[type, ...]] = {
    "slot": (str,), "slot_local": (str,), "verdict": (str,), "jobs": (list,), "job_details": (list,),
    "start_delay_seconds": (int, type(None)), "duration_seconds": (int, type(None)), "reason": (str,),
    "manual_beside": (list,), "manual_beside_total": (int,)}
_DETAIL_TYPES: dict[str, tuple[type, ...]] = {
    "name": (str,), "origin": (str,), "stands_by": (str,), "exists": (bool,), "known_from": (list,),
    **{k: (str, type(None)) for k in ("created", "started", "completed", "outcome", "operator",
                                     "failure_reason", "removed_by", "removed")}}


def _shape_problem(d: Any, types: dict[str, tuple[type, ...]], what: str) -> str | None:
    if not isinstance(d, dict):
        return f"{what} is a {type(d).__name__}, not an object"
    for k, ts in types.items():
        if k not in d:
            return f"{what} has no {k!r}"
        v = d[k]
        if not isinstance(v, ts) or (isinstance(v, bool) and bool not in ts):
            return f"{what}'s {k!r} is a {type(v).__name__}"
        if isinstance(v, int) and not isinstance(v, bool) and abs(v) > 2**63:
            return f"{what}'s {k!r} is out of range"
        if k in _TIME_KEYS and isinstance(v, str) and not _is_time(v):
            return f"{what}'s {k!r} is no time"
    return None


#: the keys of a judged row and its Job details that hold RFC 3339 times (the judge parses them)
_TIME_KEYS = frozenset({"slot", "slot_local", "created", "started", "completed", "removed"})


def _is_time(v: str) -> bool:
    from cronctl.errors import CronctlError
    from cronctl.timeutil import parse_rfc3339

    try:
        parse_rfc3339(v)
    except (CronctlError, ValueError, OverflowError):
        return False
    return True


def judged_problem(row: Any) -> str | None:
    """Why a stored judged row cannot be printed (None: it can): a row another writer made holds
    anything. An unknown verdict is no problem: it is shown as :data:`UNKNOWN_VERDICT`."""
    bad = _shape_problem(row, _ROW_TYPES, "the judged row")
    if bad is not None:
        return bad
    for k in ("jobs", "manual_beside"):
        if not all(isinstance(x, str) for x in row[k]):
            return f"the judged row's {k!r} holds a non-string"
    for d in row["job_details"]:
        bad = _shape_problem(d, _DETAIL_TYPES, "a Job detail")
        if bad is not None:
            return bad
        if not all(isinstance(x, str) for x in d["known_from"]):
            return "a Job detail's 'known_from' holds a non-string"
    return None


def _expected(col: Any) -> type | None:
    from sqlalchemy import Boolean, Integer, String

    t = col.type
    if isinstance(t, schema.UTCDateTime):
        return datetime
    if isinstance(t, Boolean):
        return bool
    if isinstance(t, Integer):
        return int
    if isinstance(t, String):
        return str
    return None


def _key_of(table: Any, m: Any) -> str:
    from cronctl import decode

    parts = [f"{k}={decode.excerpt(m[k] if isinstance(m[k], str) else str(m[k]), 64)}"
             for k in schema.KEYS[table.name] if k in m]
    if not parts and "id" in m:
        parts = [f"id={m['id']}"]
    return visible(" ".join(parts) or "?")


def row_problem(table: Any, row: Any) -> str | None:
    """Why ``row`` (fetched from ``table``) cannot be read, one line naming its table and key; None
    when every value has its column's type (a JSON object where an object is kept)."""
    m = row._mapping
    for name, value in m.items():
        col = table.c.get(name) if isinstance(name, str) else None
        why = None
        if isinstance(value, schema.Undecoded):
            why = value.reason
        elif col is None:
            continue
        elif value is None:
            if not col.nullable:
                why = "empty"
        elif name == "object" and not isinstance(value, dict):
            why = f"a {type(value).__name__}, not an object"
        else:
            want = _expected(col)
            if want is not None and (not isinstance(value, want) or (want is int and isinstance(value, bool))):
                why = f"a {type(value).__name__}, not a{'n' if want is int else ''} {want.__name__}"
            elif want is int and abs(value) > 2**63:
                why = "an integer out of range"
        if why is not None:
            return visible(f"ledger row {table.name} ({_key_of(table, m)}): {name}: {why}")
    return None


class Reader:
    def __init__(self, conn: Any) -> None:
        self.conn = conn
        #: rows left out because they do not decode (another writer's, a broken disk): one line each,
        #: naming table and key; a reader prints the rest of its answer, then exits 9 (LedgerError)
        self.problems: list[str] = []

    def _rows(self, table: Any, result: Iterable[Any]) -> list[Any]:
        """The rows of ``result`` (fetched from ``table``) whose values decode; the others named in
        :attr:`problems` and left out."""
        out = []
        for r in result:
            bad = row_problem(table, r)
            if bad is None:
                out.append(r)
            elif len(self.problems) < 10_000:
                self.problems.append(bad)
        return out

    def clusters(self) -> list[str]:
        from sqlalchemy import select

        c = schema.cronjobs
        return sorted(r.cluster for r in self._rows(c, self.conn.execute(select(c.c.cluster).distinct())))

    def logged_jobs(self, cluster: str) -> set[str]:
        """The uids of the Jobs not yet seen deleted whose log tails are kept (a recorder starts with
        them: a Job the cluster still has is not read again; the deleted ones, millions in a long
        ledger, are not loaded)."""
        from sqlalchemy import select

        t, j = schema.logs, schema.jobs
        q = (select(t.c.job_uid).join(j, (j.c.cluster == t.c.cluster) & (j.c.uid == t.c.job_uid))
             .where(t.c.cluster == cluster, j.c.deleted_at.is_(None)).distinct())
        return {r.job_uid for r in self._rows(t, self.conn.execute(q))}

    def unlogged_finished_jobs(self, cluster: str) -> list[tuple[str, str, str]]:
        """(namespace, name, uid) of the finished Jobs not yet seen deleted whose pods were never read:
        no exit code, no log tail. A recorder stopped between writing a Job's end and reading its
        pods left them so; its successor resumes the watch past that end and would never read
        them (CI, stop 42), so it reads them at start."""
        from sqlalchemy import exists, select

        t, j = schema.logs, schema.jobs
        has_log = exists().where(t.c.cluster == j.c.cluster, t.c.job_uid == j.c.uid)
        q = (select(j.c.namespace, j.c.name, j.c.uid)
             .where(j.c.cluster == cluster, j.c.deleted_at.is_(None), j.c.outcome.is_not(None),
                    j.c.exit_codes.is_(None), ~has_log))
        return [(r.namespace, r.name, r.uid) for r in self._rows(j, self.conn.execute(q))]

    def judged_many(self, cluster: str, cronjob_uids: list[str], since: datetime,
                    until: datetime, settled: list[SlotRow] | None = None) -> dict[str, dict[datetime, SlotRow]]:
        """The rows the recorder judged for the CronJobs' slots in [since, until], by CronJob uid and
        slot: one query for a few hundred CronJobs (the unique index's ranges; a query per CronJob
        cost 1,000 round trips to PostgreSQL for ``-A``). The rows in which the rules this cronctl
        runs (:func:`cronctl.redact.rules_id`) found nothing when kept are added to ``settled``."""
        from sqlalchemy import select

        from cronctl.redact import rules_id

        s = schema.slots
        ours = rules_id()
        unordered = self.conn.dialect.name == "postgresql"  # JSONB: see _judged_order
        out: dict[str, dict[datetime, SlotRow]] = {uid: {} for uid in cronjob_uids}
        for chunk in _chunks(cronjob_uids, 200):
            q = select(s.c.cronjob_uid, s.c.slot, s.c.judged, s.c.judged_rules).where(
                s.c.cluster == cluster, s.c.cronjob_uid.in_(chunk), s.c.slot >= since, s.c.slot <= until,
                s.c.judged.is_not(None))
            for uid, t, row, rules in self._rows(s, self.conn.execute(q)):
                bad = judged_problem(row)
                if bad is not None:  # left out: the judge judges the slot again from the evidence
                    key = _key_of(s, {"cluster": cluster, "cronjob_uid": uid, "slot": t})
                    self.problems.append(visible(f"ledger row slots ({key}): judged: {bad}"))
                    continue
                if row["verdict"] not in _VERDICTS:
                    row["verdict"] = UNKNOWN_VERDICT
                if unordered:
                    row = _judged_order(row)
                row = _with_outcome(row)
                out.setdefault(uid, {})[t] = row
                if rules == ours and settled is not None:
                    settled.append(row)
        return out

    def cronjob_rows(self, cluster: str | None, *, namespace: str | None, name: str | None) -> list[Any]:
        """The CronJobs' rows the ledger holds (``cluster`` or every cluster, ``namespace`` or all,
        ``name`` or all), in order: read once, for the recorder's judged rows and :meth:`evidence` both."""
        from sqlalchemy import select

        c = schema.cronjobs
        q = _cronjobs_of(select(c), cluster, namespace, name)
        return self._rows(c, self.conn.execute(q.order_by(c.c.cluster, c.c.namespace, c.c.name, c.c.last_seen)))

    def last_closed(self, cluster: str) -> dict[str, datetime]:
        """Per CronJob uid, the latest slot the recorder judged: where judging goes on after a restart."""
        from sqlalchemy import func, select

        s = schema.slots
        q = (select(s.c.cronjob_uid, func.max(s.c.slot)).where(s.c.cluster == cluster, s.c.verdict.is_not(None))
             .group_by(s.c.cronjob_uid))
        return {uid: t for uid, t in self._rows(s, self.conn.execute(q)) if isinstance(t, datetime)}

    def first_seen(self, cluster: str) -> dict[str, datetime]:
        """Per CronJob uid, when this ledger first recorded it."""
        from sqlalchemy import select

        c = schema.cronjobs
        return {uid: t for uid, t in self._rows(c, self.conn.execute(select(c.c.uid, c.c.first_seen)
                                                                      .where(c.c.cluster == cluster)))}

    def last_success(self, cluster: str) -> dict[str, tuple[datetime, datetime | None]]:
        """Per CronJob uid, the latest judged slot whose Job succeeded, and when it completed."""
        from sqlalchemy import func, select

        s = schema.slots
        ok = (s.c.outcome == "Complete") & s.c.verdict.in_(sorted(MADE))
        latest = (select(s.c.cronjob_uid, func.max(s.c.slot).label("slot")).where(s.c.cluster == cluster, ok)
                  .group_by(s.c.cronjob_uid).subquery())
        q = select(s.c.cronjob_uid, s.c.slot, s.c.completed).join(
            latest, (latest.c.cronjob_uid == s.c.cronjob_uid) & (latest.c.slot == s.c.slot)).where(
            s.c.cluster == cluster)
        return {uid: (t, done) for uid, t, done in self._rows(s, self.conn.execute(q))}

    def cursors(self, cluster: str) -> dict[tuple[str, str], str]:
        from sqlalchemy import select

        t = schema.cursors
        return {(r.resource, r.scope): r.resource_version
                for r in self._rows(t, self.conn.execute(select(t).where(t.c.cluster == cluster)))}

    def evidence(self, cluster: str | None, *, namespace: str | None, name: str | None,
                 since: datetime | None, rows: list[Any] | None = None) -> Evidence:
        """The CronJobs (of ``namespace`` or all; ``name`` or all; ``cluster`` or every cluster)
        with their Jobs created since ``since``, the events about them last seen since then, their
        config history as suspend spans, and the log tails of those Jobs. A Job or event is returned
        as the object it was when last seen, with ``cronctl.dev/ledger`` naming its cluster.
        ``rows``: the CronJobs' rows when the caller read them already (:meth:`cronjob_rows`)."""
        from sqlalchemy import select

        cf, j, e, lg = schema.cronjob_configs, schema.jobs, schema.events, schema.logs
        cj_rows = rows if rows is not None else self.cronjob_rows(cluster, namespace=namespace, name=name)
        cronjobs = [_mark(r.object, r.cluster, r.deleted_at) for r in cj_rows]
        suspensions: dict[str, list[tuple[datetime, datetime | None, str]]] = {}
        jobs_: list[Obj] = []
        events_: list[Obj] = []
        logs_: list[Obj] = []
        # every query names the cluster: each index starts with it (a query by uid alone read the
        # whole table: 13 million Jobs for one CronJob's judging)
        uids_of: dict[str, list[str]] = {}
        names_of: dict[tuple[str, str], set[str]] = {}
        for r in cj_rows:
            uids_of.setdefault(r.cluster, []).append(r.uid)
            names_of.setdefault((r.cluster, r.namespace), set()).add(r.name)
        for cl, uids in uids_of.items():
            for chunk in _chunks(uids, 500):
                cfg_rows = self._rows(cf, self.conn.execute(select(cf).where(cf.c.cluster == cl,
                                                                             cf.c.cronjob_uid.in_(chunk))
                                                            .order_by(cf.c.cronjob_uid, cf.c.observed_at, cf.c.id)))
                by_uid: dict[str, list[Any]] = {}
                for r in cfg_rows:
                    by_uid.setdefault(r.cronjob_uid, []).append(r)
                for uid, rows_ in by_uid.items():
                    cfgs = [_config(r) for r in rows_]
                    suspensions[uid] = facts.suspend_spans(cfgs, [r.observed_at for r in rows_])
                jq = select(j).where(j.c.cluster == cl, j.c.cronjob_uid.in_(chunk))
                if since is not None:
                    jq = jq.where((j.c.created >= since) | (j.c.completed >= since) | (j.c.completed.is_(None)))
                job_rows = self._rows(j, self.conn.execute(jq.order_by(j.c.created)))
                jobs_ += [_mark(r.object, r.cluster, r.deleted_at) for r in job_rows]
                job_uids = [r.uid for r in job_rows]
                for jchunk in _chunks(job_uids, 500):
                    logs_ += [{"cluster": r.cluster, "namespace": r.namespace, "job": r.job_name, "job_uid": r.job_uid,
                               "pod": r.pod,
                               "container": r.container, "text": r.text, "truncated": r.truncated,
                               "taken_at": r.taken_at}
                              for r in self._rows(lg, self.conn.execute(
                                  select(lg).where(lg.c.cluster == cl, lg.c.job_uid.in_(jchunk))
                                  .order_by(lg.c.job_name, lg.c.pod, lg.c.container)))]
                for echunk in _chunks(chunk + job_uids, 500):
                    eq = select(e).where(e.c.cluster == cl, e.c.involved_uid.in_(echunk))
                    if since is not None:
                        eq = eq.where(e.c.last_time >= since)
                    events_ += [_mark(r.object, r.cluster, None)
                                for r in self._rows(e, self.conn.execute(eq.order_by(e.c.last_time)))]
        # events that name a CronJob by name only (older writers, no uid)
        for (cl, ns), names in sorted(names_of.items()):
            for nchunk in _chunks(sorted(names), 500):
                eq = select(e).where(e.c.cluster == cl, e.c.namespace == ns, e.c.involved_name.in_(nchunk),
                                     e.c.involved_kind == "CronJob", e.c.involved_uid.is_(None))
                events_ += [_mark(r.object, r.cluster, None) for r in self._rows(e, self.conn.execute(eq))]
        return Evidence(cronjobs=cronjobs, jobs=jobs_, events=events_, suspensions=suspensions, logs=logs_,
                        problems=list(self.problems))


def _cronjobs_of(q: Any, cluster: str | None, namespace: str | None, name: str | None) -> Any:
    """``q`` on the cronjobs table narrowed to a cluster, namespace and name (None: any)."""
    c = schema.cronjobs
    for col, value in ((c.c.cluster, cluster), (c.c.namespace, namespace), (c.c.name, name)):
        if value is not None:
            q = q.where(col == value)
    return q


def _chunks(items: list[str], n: int) -> Iterable[list[str]]:
    for i in range(0, len(items), n):
        yield items[i:i + n]


def _mark(obj: Obj, cluster: str, deleted: datetime | None) -> Obj:
    meta = dict(obj.get("metadata") or {})
    ann = dict(meta.get("annotations") or {})
    ann[model.ANN_LEDGER] = cluster + (f"; deleted {rfc3339_z(deleted)}" if deleted is not None else "")
    meta["annotations"] = ann
    return {**obj, "metadata": meta}


def _config(r: Any) -> facts.CronJobConfig:
    return facts.CronJobConfig(
        uid=r.cronjob_uid, namespace="", name="", resource_version=r.resource_version, generation=r.generation,
        schedule=r.schedule, time_zone=r.time_zone, suspend=bool(r.suspend), suspend_manager=r.suspend_manager,
        suspend_at=r.suspend_at, concurrency_policy=r.concurrency_policy,
        starting_deadline_seconds=r.starting_deadline_seconds, successful_limit=r.successful_limit,
        failed_limit=r.failed_limit, fingerprint=r.fingerprint)


def unreadable(problems: list[str]) -> LedgerError:
    """The one line (exit 9) for rows a reader left out because they do not decode: the first,
    and how many more. The reader's answer from the rest is given before it."""
    more = f" (and {len(problems) - 1} more row(s))" if len(problems) > 1 else ""
    return LedgerError(f"{problems[0]}; left out{more}")


def evidence_for(url: str | None, cluster: str | None, *, namespace: str | None, name: str | None,
                 since: datetime | None, strict: bool = False) -> Evidence:
    """Open the ledger at ``url`` (it must exist), read :meth:`Reader.evidence`, close it.
    ``strict``: a row that does not decode is a LedgerError now (a command about to act on the
    cluster does not act on part of the evidence), else named in ``Evidence.problems``."""
    led = open_ledger(url, create=False)
    try:
        with led.reading() as r:
            ev = r.evidence(cluster, namespace=namespace, name=name, since=since)
    finally:
        led.close()
    if strict and ev.problems:
        raise unreadable(ev.problems)
    return ev
