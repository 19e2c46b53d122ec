"""Which occurrences are done, and which are not: each occurrence's business effect as ``cronctl
claim`` recorded it, beside what the schedule expected (``cronctl reconcile``, the reconciler of
seed 003's design: expected windows against completed rows, each gap an explicit replay request),
and what ``backfill`` skips as done (:func:`done_effects`; the application's own file: :func:`read_done`).

:func:`gaps` is pure; :func:`reconcile` reads the CronJob and its Jobs from the cluster and the claim
rows from the ledger.
"""

from __future__ import annotations

import csv
import io
import shlex
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from cronctl import model
from cronctl.cluster import Cluster
from cronctl.errors import BadInput, option
from cronctl.ledger import claims
from cronctl.timeutil import parse_rfc3339, rfc3339_z


def read_done(path: str) -> set[datetime]:
    """Slots the application's own ledger marks done: CSV with a ``scheduled_for`` column, or JSON
    lines with a ``scheduled_for`` key (RFC3339). BadInput naming the file and line otherwise."""
    from cronctl.manifest import read_text

    try:  # the one loader's reading: a regular file only (a FIFO would block), size-capped, UTF-8
        text = read_text(path)
    except BadInput as e:
        raise BadInput(f"cannot read {option('done_from')} {path}: {e.message.removeprefix(path + ': ')}") from e
    out: set[datetime] = set()
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if lines and lines[0].lstrip().startswith("{"):
        from cronctl.manifest import parse_json

        for i, ln in enumerate(lines, start=1):
            try:
                doc = parse_json(ln, source=f"{path}:{i}")  # the file readers' limits (nesting)
            except BadInput as e:
                raise BadInput(f"{e.message}: not a JSON object") from None
            if not isinstance(doc, dict):
                raise BadInput(f"{path}:{i}: not a JSON object")
            v = doc.get("scheduled_for")
            if not isinstance(v, str):
                raise BadInput(f"{path}:{i}: no scheduled_for string")
            out.add(parse_rfc3339(v, what=f"{path}:{i} scheduled_for"))
        return out
    reader = csv.DictReader(io.StringIO(text))
    if not reader.fieldnames or "scheduled_for" not in reader.fieldnames:
        raise BadInput(f"{path}: no scheduled_for column (CSV header or JSON lines expected)")
    for i, row in enumerate(reader, start=2):
        v = (row.get("scheduled_for") or "").strip()
        if v:
            out.add(parse_rfc3339(v, what=f"{path}:{i} scheduled_for"))
    return out


def done_effects(ledger: str | None, workflow: str) -> dict[datetime, str]:
    """The occurrences of ``workflow`` whose effect cronctl claim recorded done, with who did it."""
    from cronctl.ledger.claimstore import rows
    from cronctl.ledger.store import open_ledger

    led = open_ledger(ledger, create=False)
    try:
        return {r["occurrence"]: f"attempt {r['attempt']} by {r['holder_job'] or r['lease_owner']}"
                for r in rows(led, [workflow]) if r["status"] == claims.DONE}
    finally:
        led.close()


@dataclass(frozen=True)
class Gap:
    """An expected occurrence without a completed effect."""

    occurrence: datetime
    effect: str  # none / failed / final / ambiguous
    detail: str
    replay: str  # the replay request, a command line
    note: str = ""  # what must happen before the replay line does anything

    def as_dict(self) -> dict[str, Any]:
        return {"occurrence": rfc3339_z(self.occurrence), "effect": self.effect, "detail": self.detail,
                "replay": self.replay, "note": self.note}


def _holder(r: dict[str, Any]) -> str:
    return str(r.get("holder_job") or r.get("lease_owner") or "?")


def gaps(namespace: str, name: str, expected: list[datetime], rows: dict[datetime, dict[str, Any]], now: datetime,
         standing: dict[datetime, str] | None = None) -> list[Gap]:
    """The expected occurrences (oldest first) whose effect is not done: no row, a failed or final
    attempt, or an ambiguous one (running, its lease expired); one running under a live lease is in
    progress and not listed. ``standing``: slot -> the Job the cluster still has for it (backfill
    skips such a slot: the note says to delete it first)."""
    out = []
    for t in sorted(expected):
        r = rows.get(t)
        status = r["status"] if r else None
        eff = claims.effect(status, r["lease_expires"] if r else None, now, 0)
        if eff in ("done", "refused-duplicate", "running"):
            continue
        if r is None:
            detail = "no claim: the effect never started"
        elif eff == "ambiguous":
            detail = (f"attempt {r['attempt']} by {_holder(r)} claimed it and its lease expired at "
                      f"{rfc3339_z(r['lease_expires'])} without an end: the effect may or may not have happened; "
                      "check the application before the replay")
        else:
            eff = "final" if status == claims.FINAL else "failed"
            detail = f"attempt {r['attempt']} by {_holder(r)} ended {status}: {r.get('last_error') or '?'}"
        replay = (f"cronctl backfill {shlex.quote(name)} -n {shlex.quote(namespace)} --slot {rfc3339_z(t)} "
                  f"--reason {shlex.quote('reconcile: ' + eff)}")
        notes = []
        if standing and t in standing:
            notes.append(f"job {standing[t]} still stands for the slot: backfill skips it until it is deleted")
        if eff == "final":
            notes.append("a final failure runs again only under cronctl claim --replay REASON")
        out.append(Gap(t, eff, detail, replay, "; ".join(notes)))
    return out


@dataclass(frozen=True)
class Reconciled:
    namespace: str
    name: str
    workflow: str
    since: datetime
    expected: int
    done: int
    gaps: list[Gap]

    def as_dict(self) -> dict[str, Any]:
        return {"namespace": self.namespace, "cronjob": self.name, "workflow": self.workflow,
                "since": rfc3339_z(self.since), "expected": self.expected, "done": self.done,
                "gaps": [g.as_dict() for g in self.gaps]}


def reconcile(cluster: Cluster, name: str, ledger: str | None, *, since: timedelta, now: datetime,
              workflow: str | None = None, settle: timedelta = timedelta(minutes=1)) -> Reconciled:
    """The CronJob's expected occurrences in [now - since, now - settle] against the claim rows of its
    workflow (default namespace/name). ``settle``: a slot younger than this may still be claiming."""
    from cronctl.ledger.claimstore import now_of, rows
    from cronctl.ledger.store import open_ledger
    from cronctl.procedure.slot import schedule_of

    cj = cluster.get_cronjob(name)
    ns = str(model.meta(cj).get("namespace") or cluster.namespace)
    wf = workflow or f"{ns}/{name}"
    sched = schedule_of(cj)[0]
    created = model.created(cj)
    start = max(now - since, created) if created is not None else now - since  # no slot before the CronJob
    expected = [t for t in sched.runs_between(start, now - settle)] if sched.every is None else []
    led = open_ledger(ledger, create=False)
    try:
        found = {r["occurrence"]: r for r in rows(led, [wf], start, now)}
        at = now_of(led)
    finally:
        led.close()
    jobs, _ = cluster.list_jobs()
    standing: dict[datetime, str] = {}
    from cronctl.ledger.facts import job_slot

    for j in jobs:
        if model.owned_by(j, cj):
            t = job_slot(j, name)
            if t is not None:
                standing.setdefault(t, model.name_of(j))
    g = gaps(ns, name, expected, found, at, standing)
    done = sum(1 for t in expected if found.get(t, {}).get("status") == claims.DONE)
    return Reconciled(ns, name, wf, start, len(expected), done, g)
