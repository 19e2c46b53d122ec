"""The run record a run writes into its run directory as ``record.json`` (schema
``cronctl.dev/run-record/v1``), and ``-o json|yaml`` prints as stored. PURE: a type only.

The steps build it key by key as the run goes (each step saves it: a run stopped at any step
leaves what it did on disk), so it is a ``TypedDict`` with every key optional, not a dataclass:
mypy checks the key and the value type of every write and read, and the file stays what it was.
What the record holds: docs/commands/run-manual.md (step 10, "Run record").
"""

# (no `from __future__ import annotations`: a TypedDict's keys are read from evaluated annotations)
from typing import Any, TypedDict


class Step(TypedDict, total=False):
    step: str
    at: str
    note: str


class RunDocument(TypedDict, total=False):
    # who and what (every run writes these first)
    schema: str  # cronctl.dev/run-record/v1
    kind: str  # wait | backfill (run-manual writes none)
    run_id: str
    cronjob: str
    namespace: str
    server: str
    holder: str
    started: str
    attached: str  # wait: when it attached to the run
    dry_run: bool
    would_refuse: list[str]  # --dry-run: what a real run would be refused for (empty: it would go ahead)
    operator: str
    reason: str
    job_name: str
    occurrence: str | None
    slot: dict[str, Any]  # the slot of the schedule it runs (Slot.as_dict)
    ad_hoc_occurrence: bool
    retry_of: dict[str, Any]  # --retry: run_id, job, attempt
    plan: dict[str, Any]
    # the hold
    step: str
    steps: list[Step]
    run_dir: str
    original_suspend: bool
    suspended_at: str
    took_over: str
    gitops_hold: dict[str, Any]
    hold_guard: dict[str, Any]
    # the Job(s)
    job: dict[str, Any]
    slots: list[str]  # backfill and --catch-up all: the slots run
    skipped: list[dict[str, str]]
    done: list[str]
    failed_slots: list[str]
    failed_slot: str
    job_events: list[str]
    logs: list[dict[str, Any]]
    exit_codes: list[dict[str, Any]]  # per container: pod, container, exit_code, reason
    log_errors: list[str]
    log_tail: list[str]
    watch: dict[str, int]
    api_requests: int
    # the restore
    restored_at: str
    restored_suspend: bool
    last_schedule_time: dict[str, Any]
    prediction: dict[str, Any] | None
    unannounced_catch_up: dict[str, Any]
    restore_check: dict[str, Any]
    catch_up: dict[str, Any]
    suspended_seconds: float
    suspended_beyond_job_seconds: float
    # the end
    outcome: str
    exit_code: int
    error: str
    next_commands: list[str]
    finished: str
