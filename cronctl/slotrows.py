"""The shapes of a slot history: what :func:`cronctl.history.slot_history` returns, what ``cronctl
history -o json`` prints (``cronctl/data/history.schema.json``) and what the ledger keeps of each
closed slot (``slots.judged``). PURE: types only (and :func:`slot_outcome`, the one rule that derives a row's outcome).

They are ``TypedDict``s, not dataclasses, on purpose. A row is stored in the ledger as it is
printed, read back by the thousand (a 90-day history splices 13,000 kept rows; ``history -A``
prints 145,000) and printed again: a dataclass would be built from each stored row and turned back
into a dict for the output, work the time goals of ``history`` cannot spare, for no fact gained.
A ``TypedDict`` costs nothing at run time and lets mypy check every key and value a module reads or
writes. ``tests/unit/test_slotrows.py`` holds these types to the published schema, key for key.
"""

# (no `from __future__ import annotations`: TypedDict reads NotRequired only from evaluated annotations)
from typing import Literal, NotRequired, TypedDict, get_args

#: a slot's verdict (docs/commands/history.md says what each means): the one place the vocabulary
#: is written; every other list of verdicts is one of the families below, or a map that a test holds
#: to cover every verdict (tests/unit/test_slotrows.py)
Verdict = Literal["ran", "ran-late", "duplicate", "running", "skipped-forbid", "missed-deadline",
                  "missed-suspended", "missed-too-many", "missed", "dst-skipped", "dst-doubled",
                  "evidence-gone", "due"]
#: every verdict, in the order the counts and the published schema list them
VERDICTS: tuple[str, ...] = get_args(Verdict)
#: the slot's work was not done and will not be (``--fail-on lost``)
LOST: frozenset[str] = frozenset({"skipped-forbid", "missed-deadline", "missed-suspended", "missed-too-many",
                                  "missed"})
#: the slot's work was done more than once (``--fail-on duplicate``)
DUPLICATE: frozenset[str] = frozenset({"duplicate", "dst-doubled"})
#: the slot got its Job (on time, late, or more than once): the Job's success is the slot's
MADE: frozenset[str] = frozenset({"ran", "ran-late"}) | DUPLICATE
#: the slot is not closed yet: its Job runs, or it may still get one
OPEN: frozenset[str] = frozenset({"running", "due"})
#: what became of the slot's run, beside its verdict (docs/commands/history.md, "Outcome"): the verdict
#: says whether and when a Job was made, the outcome whether it did its work
Outcome = Literal["succeeded", "failed", "running", "unknown", "none"]
OUTCOMES = ("succeeded", "failed", "running", "unknown", "none")


class JobDetail(TypedDict):
    """One Job that stands for a slot (``exists`` False: known only from events or records)."""

    name: str
    origin: str  # scheduled | manual
    stands_by: str  # scheduled | slot-named | occurrence | event | cronctl-runs
    exists: bool
    created: str | None
    started: str | None
    completed: str | None
    outcome: str | None  # Complete | Failed | running
    operator: str | None
    failure_reason: str | None
    known_from: list[str]
    removed_by: str | None
    removed: str | None
    source: str  # cluster | ledger (known only from the ledger)


class SlotEffect(TypedDict):
    """The slot's business effect as ``cronctl claim`` recorded it (history with a ledger whose
    claims table has rows for the CronJob's workflow, namespace/name)."""

    effect: str  # done / refused-duplicate / running / ambiguous / failed / none (cronctl.ledger.claims.EFFECTS)
    attempt: int | None
    holder: str | None  # the Job (or claimer) of the last attempt
    completed: str | None  # business work done (RFC 3339 UTC)
    refusals: int  # claimers refused on it (a duplicate Job, a live lease)
    refused_by: str | None  # the last one refused


#: the effect of a slot of a workflow that has claim rows, but none for this slot: no claim was made
NO_EFFECT: SlotEffect = {"effect": "none", "attempt": None, "holder": None, "completed": None, "refusals": 0,
                         "refused_by": None}


class SlotRow(TypedDict):
    """One scheduled slot and its verdict (the ledger stores these as they are)."""

    slot: str  # RFC 3339 UTC, "...Z"
    slot_local: str  # the same instant in the CronJob's zone
    verdict: Verdict
    outcome: Outcome  # what became of its run (slot_outcome of job_details)
    failure_reason: str | None  # the failed Job's reason (BackoffLimitExceeded, DeadlineExceeded, ...)
    jobs: list[str]
    job_details: list[JobDetail]
    start_delay_seconds: int | None
    duration_seconds: int | None
    reason: str
    manual_beside: list[str]
    manual_beside_total: int
    effect: NotRequired[SlotEffect]  # with a ledger holding cronctl claim's rows for the workflow


def slot_outcome(details: list[JobDetail]) -> tuple[Outcome, str | None]:
    """A slot's outcome and failure reason, from the Jobs that stand for it (its ``job_details``).

    ``running`` while one of them runs; ``succeeded`` when one of them succeeded (the slot's work
    was done: a failed attempt that ``run-manual --retry`` ran again, or the failed one of a
    duplicate, does not undo it); ``failed`` when none succeeded and one failed (the reason of the
    latest failure); ``unknown`` when Jobs stand for it but none's end is known (a Job known only
    from its SuccessfulCreate event); ``none`` when no Job does. The judge writes it into each row;
    the ledger derives it the same way for a row kept before rows carried it. (Here, beside the
    types, so that both can call it: neither imports the other.)"""
    if not details:
        return "none", None
    ends = [d.get("outcome") for d in details]
    if "running" in ends:
        return "running", None
    if "Complete" in ends:
        return "succeeded", None
    failed = [d for d in details if d.get("outcome") == "Failed"]
    if failed:
        return "failed", failed[-1].get("failure_reason")
    return "unknown", None


class ManualRun(TypedDict):
    """A manual Job that stands for no slot."""

    job: str
    created: str | None
    created_local: str | None
    started: str | None
    completed: str | None
    outcome: str | None  # Complete | Failed | running
    duration_seconds: int | None
    operator: str | None
    reason: str | None
    run_id: str | None
    overlaps: list[str]
    overlaps_total: int


class Window(TypedDict):
    since: str
    until: str
    limited_by: str  # --since | evidence | creation | 7 days
    evidence_from: str | None


class ControllerNow(TypedDict):
    decision: str
    most_recent: str | None
    job_name: str | None
    waiting_for: list[str]


class History(TypedDict):
    """One CronJob's slot history."""

    ledger: NotRequired[str]  # read from the ledger alone: its cluster, and a deletion the recorder saw
    namespace: str
    name: str
    schedule: str
    time_zone: str | None
    zone: str
    concurrency_policy: str
    starting_deadline_seconds: int | None
    suspended: bool
    last_schedule_time: str | None
    error: str | None
    window: Window | None
    slots: list[SlotRow]
    manual_runs: list[ManualRun]
    counts: dict[str, int]  # every verdict, 0 when none
    outcome_counts: dict[str, int]  # every outcome (OUTCOMES), 0 when none
    controller_now: ControllerNow | None
    notes: list[str]
