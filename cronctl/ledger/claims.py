"""The claim state machine of ``cronctl claim`` (pure: no I/O, no clock; ``now`` is a parameter).

One row per (workflow key, logical scheduled time) says whose the occurrence's business effect is.
:func:`decide` says what a claimer does with the row it found (inside the store's one atomic
transaction, :mod:`cronctl.ledger.claimstore`); :func:`renewal` and :func:`ending` say whether a
holder may still renew or end it. The rules (docs/commands/claim.md):

- no row: claim it, attempt 1, fencing token 1;
- ``done``: already succeeded, COMMAND is not run (exit 0); ``--replay REASON`` runs it again;
- ``running`` under a live lease: refused (or waited for with ``--wait``);
- ``running`` under an expired lease: the holder is gone or cut off (its effect is *ambiguous*);
  taken over as attempt N+1 with token N+1;
- ``failed`` (a retryable exit code): taken over as attempt N+1 at once;
- ``final`` (an exit code of ``--final-exit``): refused unless ``--replay REASON``.

A takeover always raises the fencing token, and a holder renews and ends only with its own token:
a holder that lost its lease can write nothing more, and an application that checks the token on
its own writes can refuse the stale holder's too.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

#: a row's statuses
RUNNING, DONE, FAILED, FINAL = "running", "done", "failed", "final"
STATUSES = (RUNNING, DONE, FAILED, FINAL)

Action = Literal["claim", "takeover", "done", "held", "final"]

#: each slot's effect as the readers show it (history, status, bundle, metrics, reconcile)
EFFECTS = ("done", "refused-duplicate", "running", "ambiguous", "failed", "none")


@dataclass(frozen=True)
class Row:
    """What a claimer reads of an occurrence's row."""

    status: str
    attempt: int
    fencing_token: int
    lease_owner: str
    lease_expires: datetime
    holder_job: str | None = None
    completed_at: datetime | None = None
    claimed_at: datetime | None = None
    last_error: str | None = None
    refusals: int = 0


@dataclass(frozen=True)
class Decision:
    """What a claimer does. ``runs``: it holds the row now (insert or takeover) and runs COMMAND
    with ``attempt`` and ``token``; else ``action`` says why not (done, held, final)."""

    action: Action
    attempt: int
    token: int
    previous: Row | None = None  # the row taken over or refused on
    replay: str | None = None
    ambiguous: bool = False  # a takeover of a running row whose lease expired

    @property
    def runs(self) -> bool:
        return self.action in ("claim", "takeover")


def decide(row: Row | None, now: datetime, *, replay: str | None = None) -> Decision:
    """The decision for a claimer that found ``row`` (None: no row yet) at ``now``."""
    if row is None:
        return Decision("claim", 1, 1)
    nxt = (row.attempt + 1, row.fencing_token + 1)
    if row.status == RUNNING:
        if row.lease_expires > now:
            return Decision("held", row.attempt, row.fencing_token, row)
        return Decision("takeover", *nxt, previous=row, ambiguous=True)
    if row.status == FAILED:
        return Decision("takeover", *nxt, previous=row)
    if row.status in (DONE, FINAL):
        if replay:
            return Decision("takeover", *nxt, previous=row, replay=replay)
        return Decision("done" if row.status == DONE else "final", row.attempt, row.fencing_token, row)
    raise ValueError(f"claim row with unknown status {row.status!r}")


def renewal(row: Row | None, token: int) -> bool:
    """Whether the holder of ``token`` may renew the lease: the row still runs under its token
    (renewing after its lease expired is allowed while nobody took over: the token says so)."""
    return row is not None and row.status == RUNNING and row.fencing_token == token


def ending(row: Row | None, token: int) -> bool:
    """Whether the holder of ``token`` may write the row's end (done, failed or final)."""
    return renewal(row, token)


def end_status(exit_code: int, final_codes: frozenset[int]) -> str:
    """The status COMMAND's exit code ends the row with: 0 done, one of ``--final-exit`` final,
    anything else (a signal included) a retryable failure."""
    if exit_code == 0:
        return DONE
    return FINAL if exit_code in final_codes else FAILED


def effect(status: str | None, lease_expires: datetime | None, now: datetime, refusals: int = 0) -> str:
    """A slot's effect for the readers (:data:`EFFECTS`): done (``refused-duplicate`` when a second
    claimer was refused on it), running under a live lease, ambiguous (running, lease expired: the
    holder may or may not have done the work; reconcile before replaying), failed (retryable or
    final), none (no row)."""
    if status is None:
        return "none"
    if status == DONE:
        return "refused-duplicate" if refusals else "done"
    if status == RUNNING:
        return "running" if lease_expires is not None and lease_expires > now else "ambiguous"
    return "failed"


def renew_every(lease: timedelta) -> float:
    """Seconds between renewals: a third of the lease (two renewals may fail before it expires)."""
    return max(0.2, lease.total_seconds() / 3)
