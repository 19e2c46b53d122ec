"""``cronctl claim -- COMMAND``: run COMMAND once per scheduled occurrence (see cronctl.procedure.claim)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from cronctl.cli.common import ContextOpt, KubeconfigOpt, RequestTimeoutOpt


def claim(
    ctx: typer.Context,
    command: Annotated[Optional[list[str]], typer.Argument(
        help="The Job's command, after --.", show_default=False, metavar="-- COMMAND...")] = None,
    workflow: Annotated[Optional[str], typer.Option(
        "--workflow", help="The workflow key (default namespace/CronJob of the pod's Job, or $CRONCTL_WORKFLOW).",
        show_default=False, metavar="KEY")] = None,
    ledger: Annotated[Optional[str], typer.Option(
        "--ledger", help="The ledger holding the claims (postgresql://..., sqlite:///PATH or a file path; default "
        "$CRONCTL_LEDGER, else $XDG_STATE_HOME/cronctl/ledger.sqlite).", show_default=False, metavar="URL")] = None,
    occurrence: Annotated[Optional[str], typer.Option(
        "--occurrence", help="The occurrence (RFC3339) when the pod's Job does not say it (a replay, a manual run).",
        show_default=False, metavar="INSTANT")] = None,
    manual_occurrence: Annotated[Optional[str], typer.Option(
        "--manual-occurrence", help="'latest': a Job that names no occurrence (kubectl create job --from) stands "
        "for the latest slot of its CronJob at the Job's creation.", show_default=False, metavar="[latest]")] = None,
    lease: Annotated[str, typer.Option("--lease", help="The lease, renewed every third of it while COMMAND runs; "
                                       "after it expires unrenewed another attempt may take over.", metavar="DURATION")] = "60s",
    wait: Annotated[bool, typer.Option("--wait", help="While another attempt holds a live lease, wait for it to end "
                                       "(or expire) instead of exiting 21.")] = False,
    replay: Annotated[Optional[str], typer.Option(
        "--replay", help="Run a done or finally failed occurrence again; the reason is recorded.",
        show_default=False, metavar="REASON")] = None,
    final_exit: Annotated[Optional[str], typer.Option(
        "--final-exit", help="COMMAND's exit codes that are final failures (e.g. 3,4): not retried without --replay; "
        "others are retryable.", show_default=False, metavar="CODES")] = None,
    config_version: Annotated[Optional[str], typer.Option(
        "--config-version", help="Kept on the row (default $CRONCTL_CONFIG_VERSION).", show_default=False,
        metavar="TEXT")] = None,
    grace: Annotated[str, typer.Option("--grace", help="When the lease is lost: COMMAND's time after SIGTERM before "
                                       "SIGKILL.", metavar="DURATION")] = "30s",
    podinfo: Annotated[str, typer.Option("--podinfo", help="The pod's downward API volume (labels, annotations).",
                                         metavar="DIR")] = "/etc/podinfo",
    kubeconfig: KubeconfigOpt = None,
    request_timeout: RequestTimeoutOpt = None,
    context: ContextOpt = None,
) -> int:
    """Run COMMAND once per scheduled occurrence: claim its row in the ledger first, or exit.

    The occurrence is the Job's (scheduled-timestamp annotation, cronctl's occurrence, a slot-named
    Job) or --occurrence; the workflow key defaults to namespace/CronJob. Already done: exit 0
    without running COMMAND. Held by a live lease: exit 21 (or --wait). Failed finally: exit 22
    unless --replay. An expired lease or a retryable failure is taken over with a higher fencing
    token. COMMAND gets CRONCTL_FENCING_TOKEN, CRONCTL_OCCURRENCE, CRONCTL_ATTEMPT and
    CRONCTL_OUTPUT_REF_FILE; its exit code is cronctl's. Exit 9 ledger unreachable (COMMAND not
    run), 20 no occurrence, 23 lease lost while COMMAND ran, 5 bad input.
    """
    import os
    from pathlib import Path

    from cronctl.cli import durations as flags
    from cronctl.cli import env as cli_env
    from cronctl.errors import BadInput
    from cronctl.procedure.claim import ClaimOptions, locate, owner_of
    from cronctl.procedure.claim import run as run_claimed
    from cronctl.timeutil import parse_rfc3339

    run = cli_env.of(ctx)
    codes: frozenset[int] = frozenset()
    if final_exit:
        try:
            codes = frozenset(int(c) for c in final_exit.split(",") if c.strip())
        except ValueError:
            raise BadInput(f"bad --final-exit {final_exit!r}: expected exit codes like 3,4") from None
        if any(not 0 < c < 256 for c in codes):
            raise BadInput(f"bad --final-exit {final_exit!r}: exit codes are 1..255")
    if manual_occurrence not in (None, "latest"):
        raise BadInput(f"bad --manual-occurrence {manual_occurrence!r}: the one policy is 'latest'")
    if replay is not None and not replay.strip():
        raise BadInput("--replay needs a reason (it is recorded on the occurrence)")
    lease_d = flags.LEASE.delta(lease)
    grace_s = flags.GRACE.seconds(grace)
    given = parse_rfc3339(occurrence, what="--occurrence") if occurrence else None
    if not command:
        raise BadInput("no COMMAND: cronctl claim [OPTIONS] -- COMMAND [ARGS...]")

    def connect(ns: str) -> object:
        return run.connect(kubeconfig, context, ns or None)

    env = dict(os.environ)
    found = locate(given, workflow or env.get("CRONCTL_WORKFLOW") or None, env, podinfo=Path(podinfo),
                   connect=connect, manual=manual_occurrence)  # type: ignore[arg-type]
    if not found.workflow:
        raise BadInput("no workflow key: the pod's Job has no CronJob to name it after; pass --workflow KEY")
    owner, _job = owner_of(env, Path(podinfo))

    def say(line: str) -> None:
        run.err.print(line, markup=False, soft_wrap=True)

    opts = ClaimOptions(workflow=found.workflow, found=found, ledger=ledger, command=list(command), lease=lease_d,
                        wait=wait, replay=replay.strip() if replay else None, final_exit=codes,
                        config_version=config_version or env.get("CRONCTL_CONFIG_VERSION") or None, grace=grace_s,
                        owner=owner)
    return run_claimed(opts, say)
