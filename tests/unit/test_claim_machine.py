"""The claim state machine (cronctl.ledger.claims): what a claimer does with the row it finds."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from cronctl.ledger import claims

NOW = datetime(2026, 12, 7, 3, 0, tzinfo=timezone.utc)


def row(status: str, *, expires: datetime = NOW + timedelta(seconds=30), attempt: int = 2, token: int = 5,
        refusals: int = 0) -> claims.Row:
    return claims.Row(status=status, attempt=attempt, fencing_token=token, lease_owner="job ns/a-1 pid 7",
                      lease_expires=expires, refusals=refusals)


def test_no_row_is_claimed_as_attempt_one_with_token_one() -> None:
    d = claims.decide(None, NOW)
    assert (d.action, d.attempt, d.token, d.runs) == ("claim", 1, 1, True)


def test_a_live_lease_is_refused_and_an_expired_one_taken_over_with_a_higher_token() -> None:
    held = claims.decide(row(claims.RUNNING), NOW)
    assert (held.action, held.runs) == ("held", False)
    taken = claims.decide(row(claims.RUNNING, expires=NOW), NOW)  # the lease ends at NOW: expired
    assert (taken.action, taken.attempt, taken.token, taken.ambiguous) == ("takeover", 3, 6, True)


def test_done_is_not_run_again_without_a_replay_and_a_replay_raises_the_token() -> None:
    assert claims.decide(row(claims.DONE), NOW).action == "done"
    d = claims.decide(row(claims.DONE), NOW, replay="INC-1 resend")
    assert (d.action, d.token, d.replay) == ("takeover", 6, "INC-1 resend")


def test_a_final_failure_is_refused_unless_replayed_and_a_retryable_one_is_taken_over_at_once() -> None:
    assert claims.decide(row(claims.FINAL), NOW).action == "final"
    assert claims.decide(row(claims.FINAL), NOW, replay="fixed the input").runs
    d = claims.decide(row(claims.FAILED, expires=NOW + timedelta(hours=1)), NOW)
    assert (d.action, d.attempt, d.ambiguous) == ("takeover", 3, False)


def test_only_the_current_token_may_renew_or_end() -> None:
    r = row(claims.RUNNING, token=5)
    assert claims.renewal(r, 5) and claims.ending(r, 5)
    assert not claims.renewal(r, 4) and not claims.ending(r, 4)
    assert not claims.renewal(row(claims.DONE, token=5), 5)
    assert not claims.ending(None, 1)


@pytest.mark.parametrize(("code", "final", "status"), [
    (0, frozenset({3}), claims.DONE), (3, frozenset({3, 4}), claims.FINAL), (1, frozenset({3}), claims.FAILED),
    (137, frozenset(), claims.FAILED)])
def test_an_exit_code_ends_the_row_done_final_or_retryable(code: int, final: frozenset[int], status: str) -> None:
    assert claims.end_status(code, final) == status


@pytest.mark.parametrize(("status", "expires", "refusals", "effect"), [
    (None, None, 0, "none"), (claims.DONE, NOW, 0, "done"), (claims.DONE, NOW, 2, "refused-duplicate"),
    (claims.RUNNING, NOW + timedelta(seconds=1), 0, "running"), (claims.RUNNING, NOW, 0, "ambiguous"),
    (claims.FAILED, NOW, 0, "failed"), (claims.FINAL, NOW, 0, "failed")])
def test_the_readers_effect_of_a_row(status: str | None, expires: datetime | None, refusals: int,
                                     effect: str) -> None:
    assert claims.effect(status, expires, NOW, refusals) == effect


def test_reconcile_lists_each_occurrence_without_a_done_effect_as_a_backfill_line() -> None:
    from cronctl.procedure.effects import gaps

    t = [NOW + timedelta(minutes=m) for m in range(5)]
    rows = {
        t[0]: {"status": claims.DONE, "lease_expires": NOW, "attempt": 1, "holder_job": "ns/a-0"},
        t[1]: {"status": claims.RUNNING, "lease_expires": NOW, "attempt": 2, "holder_job": "ns/a-1",
               "lease_owner": "x"},
        t[2]: {"status": claims.FINAL, "lease_expires": NOW, "attempt": 1, "holder_job": "ns/a-2",
               "last_error": "exit code 3"},
        t[4]: {"status": claims.RUNNING, "lease_expires": NOW + timedelta(hours=1), "attempt": 1, "holder_job": "ns/b"},
    }
    got = gaps("ns", "a", t, rows, NOW + timedelta(minutes=10), standing={t[2]: "a-29412"})
    assert [(g.occurrence, g.effect) for g in got] == [(t[1], "ambiguous"), (t[2], "final"), (t[3], "none")]
    assert got[0].replay == "cronctl backfill a -n ns --slot 2026-12-07T03:01:00Z --reason 'reconcile: ambiguous'"
    assert "may or may not have happened" in got[0].detail
    assert "job a-29412 still stands for the slot" in got[1].note and "--replay" in got[1].note
    assert got[2].detail == "no claim: the effect never started"
