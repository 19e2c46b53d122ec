"""`cronctl bundle`: the incident bundle, from a live cluster or from a `kubectl get -o yaml` dump.

Thin: parse options, read the clock once, call :func:`cronctl.bundle.make_bundle`, print the
summary (text for people, ``-o json|yaml`` for scripts) on stdout; progress on stderr.
"""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Annotated, Any, Optional

import typer

from cronctl.cli import env
from cronctl.cli.common import (ContextOpt, KubeconfigOpt, RequestTimeoutOpt, SelectorOpt, LedgerOpt, NamespaceOpt, Output, OutputOpt, UsageError,
                                emit)
from cronctl.cli.env import Environment
from cronctl.cli.common import cronjob_arg, cronjob_names, file_list
from cronctl.textsafe import visible


class Redact(str, Enum):
    default = "default"
    strict = "strict"


def bundle(
    ctx: typer.Context,
    cronjob: Annotated[Optional[str], typer.Argument(
        help="The CronJob to bundle (or -A, or --all).", metavar="CRONJOB", show_default=False,
        callback=cronjob_arg, autocompletion=cronjob_names)] = None,
    all_namespaces: Annotated[bool, typer.Option(
        "--all-namespaces", "-A", help="Bundle every CronJob of every namespace: one bundle per namespace, "
        "in --out/NAMESPACE (--out a directory).")] = False,
    all_: Annotated[bool, typer.Option("--all", help="Bundle every CronJob of the namespace.")] = False,
    out_path: Annotated[Optional[str], typer.Option(
        "--out", help="Where to write: a directory, or a .tar.gz archive when the path ends so "
        "(default: ./cronctl-bundle-NAMESPACE-NAME-TIME).", show_default=False)] = None,
    from_dump: Annotated[Optional[list[str]], typer.Option(
        "--from-dump", help="Build the bundle offline from `kubectl get cronjob,jobs,pods,events -o yaml` "
        "output (logs absent); repeatable, the files read as one dump (an object in several is kept "
        "once); - = stdin.", show_default=False, metavar="FILE")] = None,
    since: Annotated[Optional[str], typer.Option(
        "--since", help="Only log lines newer than this (30s, 10m, 1.5h; a bare number is seconds; a "
        "fraction of a second counts as a whole one).", show_default=False)] = None,
    max_log_bytes: Annotated[int, typer.Option(
        "--max-log-bytes", help="Keep at most this many bytes of each log (whole lines); a cut log is "
        "marked truncated.",
        min=1)] = 1 << 20,
    no_logs: Annotated[bool, typer.Option("--no-logs", help="Do not read pod logs.")] = False,
    window: Annotated[str, typer.Option(
        "--window", help="Judge scheduled times this far back (at least back to the oldest kept Job; 6h, 1d12h; a "
        "bare number is seconds).")] = "24h",
    now: Annotated[Optional[str], typer.Option(
        "--now", help="The instant to analyse at (RFC3339; default: the clock, or the latest time in a dump).",
        show_default=False)] = None,
    redact: Annotated[Redact, typer.Option(
        "--redact", help="default: mask secrets found by name, flag, place and shape; strict: also every env "
        "and flag value not on a short allow-list (levels, ports, hosts, regions, sizes, paths, numbers)."
    )] = Redact.default,
    ledger: LedgerOpt = None,
    output: OutputOpt = Output.text,
    kubeconfig: KubeconfigOpt = None,
    request_timeout: RequestTimeoutOpt = None,
    selector: SelectorOpt = None,
    context: ContextOpt = None,
    namespace: NamespaceOpt = None,
) -> None:
    """Save the evidence of a CronJob incident before history limits and the event TTL destroy it.

    Writes bundle.json (documented schema), REPORT.md and report.html with a timeline, the raw
    objects (secrets masked), pod logs and SHA256SUMS. A read you are not allowed to make is
    recorded as missing and the bundle is marked partial. With --ledger (or $CRONCTL_LEDGER) the
    Jobs, events and log tails cronctl record kept are added where the cluster deleted them. Exit 5
    on bad input (a malformed dump), 6 when the CronJob does not exist, 9 when the ledger cannot be read.
    """
    import os


    from cronctl.bundle import Request, make_bundle
    from cronctl.cli import durations as flags
    from cronctl.model import instant

    from cronctl.cli.common import ledger_choice

    run = env.of(ctx)
    from_dump = file_list(from_dump) or None
    use_ledger, ledger_url = ledger_choice(ledger)
    if use_ledger and from_dump is not None:
        raise UsageError("give --from-dump or --ledger, not both")
    run.selector_only_for_lists(cronjob, from_dump, "--from-dump")
    if cronjob is not None and (all_ or all_namespaces):
        raise UsageError(f"give a CRONJOB name or {'-A' if all_namespaces else '--all'}, not both")
    if all_namespaces and (namespace or from_dump is not None):
        raise UsageError("-A bundles every namespace of the cluster: not with -n or --from-dump")
    if all_namespaces and out_path and out_path.endswith(".tar.gz"):
        raise UsageError("-A writes one bundle per namespace: give --out a directory")
    if cronjob is None and not all_ and not all_namespaces:
        if from_dump is None:
            raise UsageError("give a CRONJOB name, --all (every CronJob of the namespace) or -A (of every namespace)")
        all_ = True  # a dump: every CronJob in it
    if all_namespaces:

        lister = run.connect(kubeconfig, context, None)
        spaces = sorted({str((c.get("metadata") or {}).get("namespace") or "")
                         for c in lister.list_cronjobs(all_namespaces=True)} - {""})
        if not spaces:
            from cronctl.errors import NotFound

            raise NotFound("no CronJob in any namespace")
        stamp = run.now().replace(microsecond=0).strftime('%Y%m%dT%H%M%SZ')
        top = out_path or f"cronctl-bundle-all-namespaces-{stamp}"
        if os.path.lexists(top):
            from cronctl.errors import Refused

            raise Refused(f"{top} already exists; choose another --out")
        os.makedirs(top)
        docs = [_bundle_one(run, cronjob=None, all_=True, out_path=os.path.join(top, ns), from_dump=None, since=since,
                            max_log_bytes=max_log_bytes, no_logs=no_logs, window=window, now=now, redact=redact,
                            use_ledger=use_ledger, ledger_url=ledger_url, output=output, kubeconfig=kubeconfig,
                            context=context, namespace=ns) for ns in spaces]
        if output != Output.text:
            emit(run.out, {"path": top, "bundles": docs}, output)
        return
    doc = _bundle_one(run, cronjob=cronjob, all_=all_, out_path=out_path, from_dump=from_dump, since=since,
                      max_log_bytes=max_log_bytes, no_logs=no_logs, window=window, now=now, redact=redact,
                      use_ledger=use_ledger, ledger_url=ledger_url, output=output, kubeconfig=kubeconfig,
                      context=context, namespace=namespace)
    if output != Output.text:
        emit(run.out, doc, output)


def _bundle_one(run: Environment, *, cronjob: Optional[str], all_: bool, out_path: Optional[str], from_dump: Optional[list[str]],
                since: Optional[str], max_log_bytes: int, no_logs: bool, window: str, now: Optional[str],
                redact: Redact, use_ledger: bool, ledger_url: Optional[str], output: Output,
                kubeconfig: Optional[str], context: Optional[str], namespace: Optional[str]) -> dict[str, Any]:
    """One bundle (a CronJob, or every CronJob of one namespace): written, its text printed; returns
    its summary (what -o json|yaml prints)."""
    from cronctl.bundle import Request, make_bundle
    from cronctl.cli import durations as flags
    from cronctl.model import instant

    # The clock is read once, here; everything below takes it as a parameter.
    clock = run.now().replace(microsecond=0)
    out, err = run.out, run.err
    now_t = instant(now, what="--now") if now is not None else None
    since_s = int(flags.LOG_SINCE.seconds(since)) if since is not None else None
    window_td = flags.WINDOW.delta(window)
    names = None if all_ else [str(cronjob)]
    cluster = None
    ns = namespace
    if from_dump is None:

        cluster = run.connect(kubeconfig, context, namespace)
        ns = cluster.namespace
        now_t = now_t or clock
    from cronctl.cli.runtime import sigterm_as_interrupt

    sigterm_as_interrupt()  # SIGTERM like Ctrl-C: the partial bundle is removed, exit 130
    label = "all" if all_ else str(cronjob)
    what = "every CronJob" if all_ else str(cronjob)
    target = out_path or f"cronctl-bundle-{ns or 'dump'}-{label}-{clock.strftime('%Y%m%dT%H%M%SZ')}"
    # every line below holds values of the dump, the cluster or the command line: each on its one line
    err.print(visible(f"collecting a bundle of {what}{' in ' + ns if ns else ''} "
                      f"{'from ' + ', '.join(from_dump) if from_dump else 'from the cluster'} ..."), markup=False)
    req = Request(names=names, out=target, now=now_t, collected_at=clock, since_seconds=since_s,
                  max_log_bytes=max_log_bytes, window=window_td, from_dump=from_dump, namespace=namespace,
                  logs=not no_logs, redact=redact.value, lint=_lint_findings,
                  ledger=(ledger_url, cluster.context_name or "default") if use_ledger and cluster is not None else None)
    try:
        b = make_bundle(req, cluster)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: write_bundle has removed its partial files
        from cronctl.errors import Interrupted

        raise Interrupted(f"interrupted: nothing was written to {target}") from None
    summary = summary_doc(target, b.doc)
    if output != Output.text:
        return summary
    r = b.result
    out.print(visible(f"bundle written to {target}"), markup=False)
    if r.partial:
        out.print(visible("PARTIAL: " + "; ".join(f"{m.what}: {m.reason}" for m in r.missing)), markup=False)
    if r.logs_note:
        out.print(visible(f"logs: {r.logs_note}"), markup=False)
    for s in summary["cronjobs"]:
        v = s["verdicts"]
        counts = ", ".join(f"{k} {n}" for k, n in v.items() if n) or "no scheduled time in the window"
        if s["failed"]:  # the verdicts say Jobs were made; this, that so many of them failed
            counts += f"; failed {s['failed']}"
        out.print(visible(f"{s['name']}: {s['jobs']} Job(s); scheduled times: {counts}; overlaps {s['overlaps']}; "
                          f"UnexpectedJob {_unexpected(s)}, JobAlreadyActive {s['job_already_active_events']}; "
                          f"controller now: {s['decision'] or '-'}"), markup=False)
    return summary


def summary_doc(path: str, doc: dict[str, Any]) -> dict[str, Any]:
    """What ``-o json|yaml`` prints: where the bundle is and what it found, per CronJob (the
    ``summary`` of each CronJob's record in bundle.json, :func:`cronctl.bundle.document.summary`)."""
    return {"path": path, "namespace": doc["collected"]["namespace"], "partial": doc["partial"],
            "missing": doc["missing"], "cronjobs": [c["summary"] for c in doc["cronjobs"]]}


def _unexpected(s: dict[str, Any]) -> str:
    """``12`` / ``12 (none about a Job made by hand outside cronctl)`` / ``12 (9 about Jobs made by hand
    outside cronctl)``."""
    n, other = s["unexpected_job_events"], s["unexpected_job_events_by_hand"]
    if not n:
        return "0"
    return f"{n} ({other or 'none'} about Jobs made by hand outside cronctl)"


def _lint_findings(cj: Any, now: datetime) -> list[Any]:
    """The CronJob's lint findings for the bundle (cronctl.lint.engine.findings_as_data), lint imported
    only when the bundle asks: inside the interruptible part, after "collecting ..." is said (a SIGTERM
    during that import landed outside the handler that removes a partial bundle)."""
    from cronctl.lint.engine import findings_as_data

    return findings_as_data(cj, now)
