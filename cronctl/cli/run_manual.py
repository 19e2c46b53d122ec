"""``cronctl run-manual CRONJOB``: the safe manual run (see cronctl.procedure.run_manual)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from cronctl.cli.common import (CatchUp, CatchUpOpt, ContextOpt, GitOpsMode, GitOpsOpt, KubeconfigOpt, RequestTimeoutOpt, NamespaceOpt,
                                OnRevert, OnRevertOpt, Output, OutputOpt, YesOpt)
from cronctl.cli.common import cronjob_arg, cronjob_names, job_name_opt
from cronctl.textsafe import visible


def run_manual_cmd(
    ctx: typer.Context,
    cronjob: Annotated[str, typer.Argument(help="The CronJob to run once by hand.", show_default=False,
                                           callback=cronjob_arg, autocompletion=cronjob_names)],
    job_name: Annotated[Optional[str], typer.Option("--job-name", help="Name of the Job (default CRONJOB-manual); "
                                                    "the fixed name is what stops a second run. Not with a slot "
                                                    "--occurrence (the Job takes the slot's name).",
                                                    callback=job_name_opt)] = None,
    run_name: Annotated[Optional[str], typer.Option(
        "--run-name", help="Run it again while the last manual Job is kept: the Job is <cronjob>-manual-NAME. The "
                           "same NAME is the same run (a second operator's is refused); a new NAME is a new run. "
                           "Lower case letters, digits and '-'.", show_default=False, metavar="NAME")] = None,
    reason: Annotated[str, typer.Option("--reason", help="Why; recorded on the CronJob and the Job.")] = "",
    occurrence: Annotated[Optional[str], typer.Option(
        "--occurrence", help="The slot the run stands for: an RFC3339 time the schedule fires at (in its "
                             "timeZone, not in the future), or 'latest' (the latest slot so far). The Job gets "
                             "the controller's name and scheduled-timestamp annotation for it; after success "
                             "status.lastScheduleTime is set to it. Passed to every container as "
                             "CRONCTL_OCCURRENCE (the application's idempotency key).")] = None,
    ad_hoc_occurrence: Annotated[bool, typer.Option(
        "--ad-hoc-occurrence", help="Let --occurrence be any instant, not a slot: the fixed-name Job carries it "
                                    "only as annotation and CRONCTL_OCCURRENCE; the controller does not know "
                                    "it.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the plan and the Job it would create, and "
                                          "what a real run would be refused for; change nothing.")] = False,
    settle: Annotated[str, typer.Option("--settle", help="Check again for running Jobs after this delay "
                                        "(the controller syncs about every 10s; a bare number is seconds).")] = "15s",
    wait_active: Annotated[bool, typer.Option("--wait-active", help="Wait (bounded by --timeout) for running "
                                              "child Jobs instead of stopping.")] = False,
    timeout: Annotated[str, typer.Option("--timeout", help="Give up waiting after this long (1h, 30m, 1d12h; a bare "
                                         "number is seconds).")] = "1h",
    run_dir: Annotated[Optional[str], typer.Option(
        "--run-dir", help="Where run directories go (default $CRONCTL_RUN_DIR or ./runs).")] = None,
    expected_duration: Annotated[Optional[str], typer.Option(
        "--expected-duration", help="How long the Job runs (90s, 20m, 1.5h; a bare number is seconds), for the plan's slots that pass while "
                                    "suspended and the restore at the end (default: the median of the last "
                                    "successful Jobs, else activeDeadlineSeconds).")] = None,
    retry: Annotated[bool, typer.Option(
        "--retry", help="After a failed run (the CronJob stays suspended): run the same occurrence again as "
                        "JOB-r2, -r3, ... under the same record, so the CronJob is never un-suspended in "
                        "between; the attempts are linked in the record.")] = False,
    catch_up: CatchUpOpt = CatchUp.latest,
    gitops: GitOpsOpt = GitOpsMode.auto,
    on_revert: OnRevertOpt = OnRevert.suspend_again,
    yes: YesOpt = False,
    output: OutputOpt = Output.text,
    kubeconfig: KubeconfigOpt = None,
    request_timeout: RequestTimeoutOpt = None,
    context: ContextOpt = None,
    namespace: NamespaceOpt = None,
) -> None:
    """Suspend the CronJob, check nothing runs, run one Job from its template, wait, save logs, restore.

    With --occurrence T|latest the run stands for slot T of the schedule: the Job gets the name the
    controller would give T, and after success status.lastScheduleTime becomes T, so the
    controller never runs T again.

    With --retry, after a failed run: the same occurrence runs again as JOB-r2 (-r3, ...) under the
    failed run's suspension; the failed Job keeps its name and logs.

    Under a GitOps controller (Argo CD, Flux) the plan says who manages spec.suspend and how the hold
    is made (--gitops); the hold is watched while it lasts and a revert is named (--on-revert).

    Exit codes: 0 success, 1 Job failed, 3 refused (locked, running children, name exists, a Job
    already stands for the slot, permission missing, not confirmed, --retry without a failed run,
    a GitOps controller would revert the hold), 4 timeout, 5 bad input (also:
    --occurrence not a slot, or in the future), 6 not found, 7 API error, 130 interrupted.
    """
    from cronctl.cli import durations as flags
    from cronctl.cli import env
    from cronctl.cli.common import emit
    from cronctl.cli.runtime import RichReporter, finish_run, holder, kill_hook, sigterm_as_interrupt
    from cronctl.errors import BadInput
    from cronctl.procedure.base import next_commands
    from cronctl.procedure.run_manual import RunOptions, run_manual
    from cronctl.timeutil import parse_rfc3339

    run = env.of(ctx)
    latest = (occurrence or "").strip().lower() == "latest"
    at = None
    if occurrence and not latest:
        try:
            at = parse_rfc3339(occurrence, what="--occurrence")
        except BadInput as bad:
            raise BadInput(f"{bad.message} (or 'latest')") from None
    opts = RunOptions(
        cronjob=cronjob, job_name=job_name, run_name=run_name, reason=reason, occurrence=at,
        occurrence_latest=latest, ad_hoc_occurrence=ad_hoc_occurrence,
        yes=yes, interactive=run.interactive, dry_run=dry_run,
        settle=flags.SETTLE.seconds(settle), wait_active=wait_active,
        timeout=flags.TIMEOUT.seconds(timeout), run_dir=run_dir, holder=holder(),
        after_step=kill_hook(), catch_up=catch_up.value, retry=retry, gitops=gitops.value,
        on_revert=on_revert.value,
        expected_duration=flags.EXPECTED_DURATION.seconds(expected_duration) if expected_duration else None)
    cluster = run.connect(kubeconfig, context, namespace)
    sigterm_as_interrupt()
    res = run_manual(cluster, opts, run.clock, RichReporter(run.err))
    if dry_run:
        emit(run.out, res.job, "yaml" if output == Output.text else output)  # the Job it would create
        run.err.print(visible(res.message), markup=False)
        return
    finish_run(run, res, output, next_commands(cronjob, cluster.namespace))
