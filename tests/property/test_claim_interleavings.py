"""A property of cronctl claim under interleavings: COMMAND never runs twice for one occurrence at
once unless the earlier run's lease had expired when the later one took over, and never again
after the occurrence is done (no replay). Driven through the real store (cronctl.ledger.claimstore,
SQLite: BEGIN IMMEDIATE, the same statements as PostgreSQL) with a test clock; hypothesis chooses
which worker acts when: claim, renew, end (with an exit code), a pause of the clock, a crash."""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cronctl.ledger import claims, claimstore, store

T0 = datetime(2026, 11, 1, 5, 30, tzinfo=timezone.utc)
LEASE = timedelta(seconds=10)
WORKERS = 3

step = st.one_of(
    st.tuples(st.just("claim"), st.integers(0, WORKERS - 1)),
    st.tuples(st.just("renew"), st.integers(0, WORKERS - 1)),
    st.tuples(st.just("end"), st.integers(0, WORKERS - 1), st.sampled_from([0, 1, 3])),
    st.tuples(st.just("crash"), st.integers(0, WORKERS - 1)),
    st.tuples(st.just("tick"), st.integers(1, 15)),
)

_keys = itertools.count()


@pytest.fixture(scope="module")
def led(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path: Path = tmp_path_factory.mktemp("claims") / "ledger.sqlite"
    ledger = store.open_ledger(f"sqlite:///{path}")
    yield ledger
    ledger.close()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(step, min_size=1, max_size=40))
def test_no_two_runs_of_one_occurrence_without_a_takeover_by_lease_expiry(led: Any, steps: list[tuple[Any, ...]]) -> None:
    workflow = f"prop/{next(_keys)}"
    now = T0
    running: dict[int, tuple[int, datetime]] = {}  # worker -> (its token, its lease's end as it last knew)
    done_once = False
    tokens: list[int] = []
    for s in steps:
        kind, *args = s
        if kind == "tick":
            now += timedelta(seconds=args[0])
            continue
        w = args[0]
        who = claimstore.Claimer(owner=f"worker {w}")
        if kind == "claim" and w not in running:
            before = claimstore.read(led, workflow, T0)
            out = claimstore.claim(led, workflow, T0, who, LEASE, at=now)
            if out.decision.runs:
                assert not done_once, "COMMAND ran again after the occurrence was done"
                # every other run still going must hold a lease the ledger saw expire
                for other, (_tok, _exp) in running.items():
                    assert before is not None and before.lease_expires <= now, (
                        f"worker {w} started while worker {other} held a live lease")
                assert not tokens or out.decision.token > tokens[-1], "a takeover did not raise the token"
                tokens.append(out.decision.token)
                assert out.lease_expires is not None
                running[w] = (out.decision.token, out.lease_expires)
            elif out.decision.action == "done":
                assert done_once
        elif kind == "renew" and w in running:
            tok, _ = running[w]
            exp = claimstore.renew(led, workflow, T0, tok, LEASE, at=now)
            if exp is None:
                running.pop(w)  # lost: the worker stops COMMAND
            else:
                running[w] = (tok, exp)
        elif kind == "end" and w in running:
            tok, _ = running.pop(w)
            status = claims.end_status(args[1], frozenset({3}))
            row = claimstore.end(led, workflow, T0, tok, status, exit_code=args[1], output_ref=None,
                                 last_error=None, at=now)
            if row is None and status == claims.DONE:
                done_once = True
        elif kind == "crash":
            running.pop(w, None)
    final = claimstore.read(led, workflow, T0)
    if tokens:
        assert final is not None and final.fencing_token == tokens[-1]
