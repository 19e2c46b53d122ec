"""The pure parts of `cronctl backfill`: which slots run (oldest first), which are skipped and why,
and the application's ledger (--done-from)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from builders import T, cronjob, job, scheduled, slotname
from cronctl.errors import BadInput
from cronctl.procedure.backfill import BackfillOptions, choose_slots, read_done

UTC = timezone.utc
EVERY_10 = "*/10 * * * *"  # the schedule of the CronJob here


def test_missed_takes_the_lost_slots_oldest_first_and_skips_those_with_a_job() -> None:
    # 10:00 ran; 10:10-10:30 lost (controller down, deadline 60 s); now 10:35
    c = cronjob(EVERY_10, last=T(10, 0), deadline=60)
    ran = scheduled(T(10, 0), took=29)
    run, skipped = choose_slots(c, [ran], [], BackfillOptions(cronjob="cj", missed=True), T(10, 35))
    assert run == [T(10, 10), T(10, 20), T(10, 30)] and skipped == []


def test_explicit_slots_must_be_slots_and_a_slot_with_a_job_is_skipped() -> None:
    c = cronjob(EVERY_10, last=T(10, 30))
    ran = scheduled(T(10, 10), took=29)
    run, skipped = choose_slots(c, [ran], [], BackfillOptions(cronjob="cj", slots=[T(10, 20), T(10, 10)]), T(10, 35))
    assert run == [T(10, 20)] and skipped[0][0] == T(10, 10) and "already stands for it" in skipped[0][1]
    with pytest.raises(BadInput, match="not a slot"):
        choose_slots(c, [], [], BackfillOptions(cronjob="cj", slots=[T(10, 15)]), T(10, 35))


def test_from_to_is_every_slot_between_both_included_and_not_after_now() -> None:
    c = cronjob(EVERY_10)
    run, _ = choose_slots(c, [], [], BackfillOptions(cronjob="cj", from_=T(10, 10), to=T(11, 0)), T(10, 35))
    assert run == [T(10, 10), T(10, 20), T(10, 30)]
    with pytest.raises(BadInput, match="exactly one"):
        choose_slots(c, [], [], BackfillOptions(cronjob="cj", missed=True, slots=[T(10, 10)]), T(10, 35))


def test_slots_older_than_max_age_are_skipped_and_said() -> None:
    run, skipped = choose_slots(cronjob(EVERY_10), [], [], BackfillOptions(cronjob="cj", from_=T(10, 0), to=T(10, 30),
                                                                           max_age=timedelta(minutes=20)), T(10, 35))
    assert run == [T(10, 20), T(10, 30)]
    assert [t for t, _ in skipped] == [T(10, 0), T(10, 10)] and "--max-age" in skipped[0][1]


@pytest.mark.parametrize("text", ["scheduled_for,status\n2026-12-02T10:20:00Z,done\n",
                                  '{"scheduled_for": "2026-12-02T10:20:00Z", "ok": true}\n'])
def test_the_ledger_marks_slots_done(tmp_path: Path, text: str) -> None:
    p = tmp_path / "ledger"
    p.write_text(text)
    assert read_done(str(p)) == {T(10, 20)}
    run, skipped = choose_slots(cronjob(EVERY_10), [], [], BackfillOptions(cronjob="cj", from_=T(10, 10), to=T(10, 30),
                                                                           done_from=str(p)), T(10, 35))
    assert run == [T(10, 10), T(10, 30)] and "done according to" in skipped[0][1]


def test_a_ledger_without_scheduled_for_is_bad_input(tmp_path: Path) -> None:
    p = tmp_path / "ledger.csv"
    p.write_text("when\n2026-12-02T10:20:00Z\n")
    with pytest.raises(BadInput, match="no scheduled_for column"):
        read_done(str(p))
    p.write_text("{not json\n")
    with pytest.raises(BadInput, match="not a JSON object"):
        read_done(str(p))


def test_the_slots_lost_while_held_are_those_since_the_suspend_up_to_now_without_a_job() -> None:
    from cronctl.procedure.slot import lost_while_held

    # held from 10:05; 10:10 ran (a slot run), 10:20 and 10:30 have no Job; 10:40 is after now
    got = lost_while_held(cronjob(EVERY_10), [scheduled(T(10, 10), took=29)], T(10, 5), T(10, 35))
    assert got == [T(10, 20), T(10, 30)]
    # a suspend exactly at a slot includes that slot; the limit keeps the oldest
    assert lost_while_held(cronjob(EVERY_10), [], T(10, 10), T(10, 35), limit=2) == [T(10, 10), T(10, 20)]
    # a Job named for the slot by someone else (no annotation) stands for it too
    by_name = job(slotname(T(10, 20)), cj_uid=None)  # neither owned nor annotated: the slot's name only
    assert lost_while_held(cronjob(EVERY_10), [by_name], T(10, 15), T(10, 35)) == [T(10, 30)]


def test_done_from_reads_regular_files_only_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    """--done-from goes through the one loader's reading: a FIFO would block forever."""
    import os

    fifo = tmp_path / "ledger.csv"
    os.mkfifo(fifo)
    with pytest.raises(BadInput, match="is a FIFO"):
        read_done(str(fifo))


def test_a_slot_whose_effect_cronctl_claim_recorded_done_is_skipped_and_said() -> None:
    # 10:10's Job is gone (history limit) but its effect is done: not run again
    run, skipped = choose_slots(cronjob(EVERY_10), [], [], BackfillOptions(cronjob="cj", from_=T(10, 10), to=T(10, 30)),
                                T(10, 35), effects_done={T(10, 10): "attempt 1 by ns/cj-1"})
    assert run == [T(10, 20), T(10, 30)]
    assert skipped == [(T(10, 10), "its effect is done (attempt 1 by ns/cj-1; cronctl claim)")]
