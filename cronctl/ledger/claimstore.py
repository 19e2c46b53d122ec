"""The claims table (:data:`cronctl.ledger.schema.claims`): the atomic claim, lease renewal, the end
of an attempt, and the readers' view.

The claim is one transaction in which the row is read locked, decided on
(:func:`cronctl.ledger.claims.decide`) and written:

- PostgreSQL: ``INSERT ... ON CONFLICT DO NOTHING`` (a racing inserter waits for the first one's
  commit), then ``SELECT ... FOR UPDATE`` of the row, then the update;
- SQLite: the same statements inside ``BEGIN IMMEDIATE`` (the database's one write lock is taken
  before the row is read, so two claimers cannot both read "no row").

Lease times are the database's clock on PostgreSQL (``clock_timestamp()``: claimers in two clusters
compare one clock), the host's on SQLite (one host). Any database failure is a LedgerError (exit 9).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from cronctl.errors import LedgerError
from cronctl.ledger import claims, schema
from cronctl.ledger.store import Ledger, _first_line
from cronctl.slotrows import NO_EFFECT, SlotEffect, SlotRow
from cronctl.timeutil import UTC, parse_rfc3339, rfc3339_z


@dataclass(frozen=True)
class Claimer:
    """Who claims: shown to a refused claimer and kept on the row."""

    owner: str  # Job, pod, host, pid
    holder_job: str | None = None  # namespace/name of the claimer's Job
    job_created: datetime | None = None
    config_version: str | None = None


@dataclass(frozen=True)
class Outcome:
    """A claim's result: the decision, the database's time of it, and the lease's end when held."""

    decision: claims.Decision
    now: datetime
    lease_expires: datetime | None


@contextmanager
def _atomic(led: Ledger, what: str) -> Iterator[Any]:
    """One write transaction; on SQLite ``BEGIN IMMEDIATE`` (the write lock before the first read)."""
    from sqlalchemy.exc import SQLAlchemyError

    try:
        with led.engine.connect() as conn:
            if led.backend == "sqlite":
                conn.exec_driver_sql("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.rollback()
                raise
            conn.commit()
    except SQLAlchemyError as e:
        raise LedgerError(f"cannot {what} in the ledger {led.shown}: {_first_line(e)}") from e


def _now(conn: Any, backend: str, at: datetime | None = None) -> datetime:
    if at is not None:  # a test's clock (the property test of the interleavings)
        return at
    if backend == "postgresql":
        from sqlalchemy import text

        t: datetime = conn.execute(text("SELECT clock_timestamp()")).scalar_one()
        return t.astimezone(UTC)
    return datetime.now(UTC)


def _row(r: Any) -> claims.Row:
    return claims.Row(status=r.status, attempt=r.attempt, fencing_token=r.fencing_token, lease_owner=r.lease_owner,
                      lease_expires=r.lease_expires, holder_job=r.holder_job, completed_at=r.completed_at,
                      claimed_at=r.claimed_at, last_error=r.last_error, refusals=r.refusals)


def _key(workflow: str, occurrence: datetime) -> Any:
    c = schema.claims.c
    return (c.workflow == workflow) & (c.occurrence == occurrence)


def claim(led: Ledger, workflow: str, occurrence: datetime, who: Claimer, lease: timedelta, *,
          replay: str | None = None, at: datetime | None = None, count_held: bool = True) -> Outcome:
    """Claim the occurrence atomically: insert its row, or read it locked and take it over, or
    count a refusal on it (who was refused, when; ``count_held`` False: not while the claimer waits
    out a live lease, polling). ``at``: a test's clock instead of the database's."""
    from sqlalchemy import select, update
    from sqlalchemy.dialects import postgresql, sqlite

    t = schema.claims
    with _atomic(led, "claim the occurrence") as conn:
        now = _now(conn, led.backend, at)
        expires = now + lease
        fresh = {"workflow": workflow, "occurrence": occurrence, "status": claims.RUNNING, "attempt": 1,
                 "fencing_token": 1, "lease_owner": who.owner, "holder_job": who.holder_job,
                 "lease_expires": expires, "config_version": who.config_version, "job_created": who.job_created,
                 "first_claimed_at": now, "claimed_at": now, "renewed_at": now, "refusals": 0, "updated_at": now}
        ins = (postgresql.insert if led.backend == "postgresql" else sqlite.insert)(t).values(**fresh)
        inserted = conn.execute(ins.on_conflict_do_nothing(index_elements=["workflow", "occurrence"])
                                .returning(t.c.id)).first()
        if inserted is not None:
            return Outcome(claims.decide(None, now), now, expires)
        r = conn.execute(select(t).where(_key(workflow, occurrence)).with_for_update()).one()
        d = claims.decide(_row(r), now, replay=replay)
        if d.runs:
            conn.execute(update(t).where(t.c.id == r.id).values(
                status=claims.RUNNING, attempt=d.attempt, fencing_token=d.token, lease_owner=who.owner,
                holder_job=who.holder_job, lease_expires=expires, config_version=who.config_version,
                job_created=who.job_created, claimed_at=now, renewed_at=now, completed_at=None, exit_code=None,
                replay_reason=d.replay if d.replay else t.c.replay_reason, updated_at=now))
            return Outcome(d, now, expires)
        if d.action != "held" or count_held:
            conn.execute(update(t).where(t.c.id == r.id).values(
                refusals=t.c.refusals + 1, last_refused_by=who.owner, last_refused_at=now))
        return Outcome(d, now, None)


def renew(led: Ledger, workflow: str, occurrence: datetime, token: int, lease: timedelta, *,
          at: datetime | None = None) -> datetime | None:
    """Extend the lease of the holder of ``token``: the new expiry, or None when the row is no longer
    its own (taken over, or ended)."""
    from sqlalchemy import update

    t = schema.claims
    with _atomic(led, "renew the lease") as conn:
        now = _now(conn, led.backend, at)
        n = conn.execute(update(t).where(_key(workflow, occurrence), t.c.fencing_token == token,
                                         t.c.status == claims.RUNNING)
                         .values(lease_expires=now + lease, renewed_at=now, updated_at=now)).rowcount
    return now + lease if n == 1 else None


def end(led: Ledger, workflow: str, occurrence: datetime, token: int, status: str, *, exit_code: int,
        output_ref: str | None, last_error: str | None, at: datetime | None = None) -> claims.Row | None:
    """End the attempt of ``token`` in one transaction: the status, exit code, output reference, last
    error and (when done) the completion time. None when written; else the row as it is now (a
    takeover happened: nothing was written)."""
    from sqlalchemy import select, update

    t = schema.claims
    with _atomic(led, "record the end of the attempt") as conn:
        now = _now(conn, led.backend, at)
        r = conn.execute(select(t).where(_key(workflow, occurrence)).with_for_update()).first()
        row = _row(r) if r is not None else None
        if not claims.ending(row, token):
            return row
        conn.execute(update(t).where(_key(workflow, occurrence), t.c.fencing_token == token).values(
            status=status, exit_code=exit_code, output_ref=output_ref,
            last_error=last_error[:2000] if last_error else None,
            completed_at=now if status == claims.DONE else None, updated_at=now))
    return None


def read(led: Ledger, workflow: str, occurrence: datetime) -> claims.Row | None:
    from sqlalchemy import select

    t = schema.claims
    with led.reading() as rd:
        r = rd.conn.execute(select(t).where(_key(workflow, occurrence))).first()
    return _row(r) if r is not None else None


def now_of(led: Ledger) -> datetime:
    """The ledger's clock (the lease clock)."""
    with led.reading() as rd:
        return _now(rd.conn, led.backend)


def rows(led: Ledger, workflows: list[str], since: datetime | None = None,
         until: datetime | None = None) -> list[dict[str, Any]]:
    """The claim rows of ``workflows`` with occurrences in [since, until], oldest first, as dicts
    (every column but the id)."""
    from sqlalchemy import select

    t = schema.claims
    out: list[dict[str, Any]] = []
    with led.reading() as rd:
        for i in range(0, len(workflows), 200):
            q = select(t).where(t.c.workflow.in_(workflows[i:i + 200]))
            if since is not None:
                q = q.where(t.c.occurrence >= since)
            if until is not None:
                q = q.where(t.c.occurrence <= until)
            for r in rd.conn.execute(q.order_by(t.c.workflow, t.c.occurrence)):
                d = dict(r._mapping)
                d.pop("id", None)
                out.append(d)
    return out


def summary(led: Ledger, now: datetime | None = None) -> tuple[dict[tuple[str, str], int], dict[str, int]]:
    """For the metrics (no occurrence in a label): (workflow, effect) -> how many occurrences, and
    workflow -> claimers refused on its occurrences (the claim conflicts). One grouped query."""
    from sqlalchemy import case, func, select

    t = schema.claims
    effects: dict[tuple[str, str], int] = {}
    conflicts: dict[str, int] = {}
    with led.reading() as rd:
        at = now or _now(rd.conn, led.backend)
        live = case((t.c.lease_expires > at, 1), else_=0)
        refused = case((t.c.refusals > 0, 1), else_=0)
        q = (select(t.c.workflow, t.c.status, live.label("live"), refused.label("refused"), func.count(),
                    func.sum(t.c.refusals)).group_by(t.c.workflow, t.c.status, live, refused))
        for wf, status, is_live, was_refused, n, refusals in rd.conn.execute(q):
            eff = claims.effect(status, at + timedelta(days=1) if is_live else at, at, int(was_refused))
            effects[(wf, eff)] = effects.get((wf, eff), 0) + int(n)
            conflicts[wf] = conflicts.get(wf, 0) + int(refusals or 0)
    return effects, conflicts


def slot_effect(r: dict[str, Any] | None, now: datetime) -> SlotEffect:
    """A claim row (:func:`rows`; None: none) as a slot's effect beside its Job verdict."""
    if r is None:
        return dict(NO_EFFECT)  # type: ignore[return-value]
    return {"effect": claims.effect(r["status"], r["lease_expires"], now, r["refusals"]),
            "attempt": r["attempt"], "holder": r["holder_job"] or r["lease_owner"],
            "completed": rfc3339_z(r["completed_at"]) if r["completed_at"] else None,
            "refusals": r["refusals"], "refused_by": r["last_refused_by"]}


def effects_by_slot(url: str | None, workflows: list[str], now: datetime,
                    since: datetime | None = None) -> dict[str, dict[datetime, SlotEffect]]:
    """The effects at ``now`` of the claim rows of ``workflows`` (occurrences since ``since``) in
    the ledger at ``url``, by workflow and occurrence; a workflow without rows is absent."""
    from cronctl.ledger.store import open_ledger

    if not workflows:
        return {}
    led = open_ledger(url, create=False)
    try:
        found = rows(led, sorted(set(workflows)), since=since)
    finally:
        led.close()
    out: dict[str, dict[datetime, SlotEffect]] = {}
    for r in found:
        out.setdefault(str(r["workflow"]), {})[r["occurrence"]] = slot_effect(r, now)
    return out


def with_effects(url: str | None, slots_of: dict[str, list[SlotRow]], now: datetime) -> dict[str, list[SlotRow]]:
    """Each workflow's slot rows with their ``effect`` added (new dicts: a settled row stays as it
    was), for the workflows that have claim rows in the ledger at ``url``; the others as they were."""
    if not slots_of:
        return slots_of
    by = effects_by_slot(url, list(slots_of), now)
    return {wf: effects_on(slots, by.get(wf), now) for wf, slots in slots_of.items()}


def effects_on(slots: list[SlotRow], mine: dict[datetime, SlotEffect] | None, now: datetime) -> list[SlotRow]:
    """One workflow's slot rows with their ``effect`` added from ``mine`` (its part of
    :func:`effects_by_slot`; new dicts: a settled row stays as it was); without any, as they were."""
    if not mine:
        return slots
    return [{**row, "effect": mine.get(parse_rfc3339(row["slot"])) or slot_effect(None, now)} for row in slots]
