"""What a run is asked to do (:class:`RunOptions`) and what it ends with (:class:`RunResult`),
shared by run-manual, ``--retry``, ``wait`` and backfill."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from cronctl.cluster import Obj
from cronctl.errors import ExitCode
from cronctl.procedure.guard import GUARD_EVERY
from cronctl.procedure.steps.run_document import RunDocument

#: One run (backfill, --catch-up all) runs at most this many slots (a larger one is several runs).
MAX_SLOTS = 500


@dataclass
class RunOptions:
    cronjob: str
    job_name: str | None = None
    run_name: str | None = None           # --run-name: the Job is <cronjob>-manual-<run name> (names.manual_job_name)
    reason: str = ""
    occurrence: datetime | None = None
    occurrence_latest: bool = False       # --occurrence latest: the latest slot at or before now
    ad_hoc_occurrence: bool = False       # --ad-hoc-occurrence: any instant, fixed name, no slot
    yes: bool = False
    interactive: bool = False
    dry_run: bool = False
    settle: float = 15.0
    wait_active: bool = False
    timeout: float = 3600.0
    run_dir: str | None = None
    holder: str = ""                      # host/pid of this process
    after_step: Callable[[str], None] | None = None   # test hook (CRONCTL_TEST_KILL_AFTER_STEP)
    run_id: str | None = None
    catch_up: str = "latest"              # --catch-up latest|none|all at the restore (see procedure.restore)
    takeover: str | None = None           # the run id of an interrupted run's record to take over (its
                                          # suspension and original value): restore --catch-up all
    retry: bool = False                   # --retry: run the failed run's occurrence again (see steps.retry)
    expected_duration: float | None = None  # --expected-duration: the Job's run time for the plan
    gitops: str = "auto"                  # --gitops auto|annotate|refuse|ignore (cronctl.gitops.choose)
    on_revert: str = "suspend-again"      # --on-revert suspend-again|stop (cronctl.procedure.guard)
    guard_every: float = GUARD_EVERY      # how often the hold guard reads the CronJob (s)


@dataclass(frozen=True)
class RunResult:
    """How a run ended. ``record`` is the run record the run wrote into its run directory
    (record.json, schema ``cronctl.dev/run-record/v1``): a stored format the run builds step by
    step as evidence, which ``-o json|yaml`` prints as it is stored (cli/runtime.py ``end_of_run``)."""

    exit_code: ExitCode
    message: str
    record: RunDocument = field(default_factory=lambda: RunDocument())
    job: Obj | None = None            # the Job created (or, for --dry-run, the one it would create)
    next_commands: list[str] = field(default_factory=list)
