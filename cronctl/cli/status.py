"""``cronctl status CRONJOB``: the CronJob at a glance, and any manual run it is part of."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from cronctl.cli.common import (KubeconfigOpt, ListOutput, ListOutputOpt, LedgerOpt, NamespaceOpt, RequestTimeoutOpt,
                                SelectorOpt, is_document)
from cronctl.cli.common import cronjob_arg, cronjob_names
from cronctl.cli.documents import effect_words, pause_doc, record_doc
from cronctl.textsafe import visible

if TYPE_CHECKING:
    from cronctl.cli.env import Environment
    from cronctl.procedure.status import Overview, OverviewRow, Status


def status_cmd(
    ctx: typer.Context,
    cronjob: Annotated[Optional[str], typer.Argument(
        help="The CronJob. Without it: an overview of every CronJob of the namespace (-A: of all).",
        show_default=False, callback=cronjob_arg, autocompletion=cronjob_names)] = None,
    all_namespaces: Annotated[bool, typer.Option(
        "--all-namespaces", "-A", help="The overview of every namespace.")] = False,
    ledger: LedgerOpt = None,
    output: ListOutputOpt = ListOutput.text,
    kubeconfig: KubeconfigOpt = None,
    request_timeout: RequestTimeoutOpt = None,
    selector: SelectorOpt = None,
    context: Annotated[Optional[list[str]], typer.Option(
        "--context", help="The kubeconfig context to use; the overview takes it repeated, one cluster after the "
        "other (a CLUSTER column, and each row's cluster in -o json).", show_default=False)] = None,
    namespace: NamespaceOpt = None,
) -> None:
    """Schedule in words, zone, suspend and run record, child Jobs (manual/scheduled) with overlaps,
    next runs, and what the controller will do next.

    Without a CronJob: one line per CronJob of the namespace (-A: every namespace): schedule in
    words, zone, suspended and by whom (a run record, a pause, or unknown), a run in progress or a
    stale record, the last Job's outcome, lost and duplicate slots (as cronctl history judges
    them), the next run, the GitOps tool that manages it. A hold or pause a GitOps controller
    undid is called out (HOLD REVERTED, PAUSE UNDONE). With --ledger (or $CRONCTL_LEDGER) the
    slots (a CronJob's latest, or the overview's lost and duplicate counts) are judged with what
    cronctl record kept. Exit 6 when there is no CronJob, 9 when the ledger cannot be read.
    """
    from cronctl.cli import env
    from cronctl.cli.common import emit
    from cronctl.errors import BadInput
    from cronctl.procedure.status import collect_status

    run = env.of(ctx)
    run.selector_only_for_lists(cronjob)
    if cronjob is None:
        contexts: list[str | None] = list(context) if context else [None]
        return _overview(run, kubeconfig, contexts, namespace, all_namespaces, output, ledger)
    if all_namespaces:
        raise BadInput("a CronJob name cannot be combined with --all-namespaces")
    if context and len(context) > 1:
        raise BadInput("one --context with a CronJob name (several go with the overview)")
    cluster = run.connect(kubeconfig, context[0] if context else None, namespace)
    from cronctl.cli.common import ledger_choice

    use_ledger, ledger_url = ledger_choice(ledger)
    st = collect_status(cluster, cronjob, run.now(),
                        (ledger_url, cluster.context_name or "default") if use_ledger else None)
    if is_document(output):
        emit(run.out, status_doc(st), output)
        return
    if output == ListOutput.name:
        run.out.print(f"cronjob.batch/{st.name}", markup=False)
        return
    print_status(run, st, wide=output == ListOutput.wide)


def print_status(run: Environment, st: Status, *, wide: bool = False) -> None:
    """The text of ``cronctl status CRONJOB``: printed from the masked document, times in the zone the
    schedule runs in (the view's ``zone``) with UTC beside them; the child Jobs' table fitted to the
    terminal (``wide``: every column)."""
    from rich.table import Table

    from cronctl.model import PastRun

    out = run.out
    s = status_doc(st)
    rec = s["record"]
    head = Table(show_header=False, box=None, pad_edge=False)
    head.add_column(style="bold")
    head.add_column(overflow="fold")
    head.add_row("cronjob", f"{s['namespace']}/{s['cronjob']}")
    head.add_row("schedule", str(s["schedule_words"]))
    head.add_row("time zone", st.view.zone_words)
    head.add_row("concurrency", str(s["concurrency_policy"]))
    head.add_row("deadline", f"{s['starting_deadline_seconds']}s" if s["starting_deadline_seconds"] is not None
                 else "none (a missed run of any age is caught up)")
    head.add_row("suspend", str(s["suspend"]).lower())
    zone = st.view.zone
    head.add_row("last schedule", _shown(s["last_schedule_time"], zone) or "never")
    head.add_row("active", ", ".join(s["active"]) or "none")
    if rec:
        # the record's annotations are anyone-with-patch's text: one line each, escapes visible
        head.add_row("run record", visible(f"run {rec['run_id']} by {rec['operator']} · step {rec['step']} · started "
                                   f"{rec['started']} · job {rec['job_name']} · was suspend="
                                   f"{str(rec['original_suspend']).lower()}"
                                   + (f" · {rec['holder']}" if rec["holder"] else "")
                                   + (f" · reason: {rec['reason']}" if rec["reason"] else "")
                                   + ("" if s["record_confirmed"] else " · UNCONFIRMED: not written by cronctl")))
    if s["pause"]:
        pz = s["pause"]
        head.add_row("pause", visible(f"paused by {pz['by']} since {pz['at'] or '?'}"
                     + (f" until {pz['until']}" if pz["until"] else "") + f": {pz['reason']}"
                     + (" (PAST ITS UNTIL: resume it, or pause again with a new --until)" if pz["overdue"] else "")))
    if s["gitops"]["tool"] is not None:
        head.add_row("gitops", visible(s["gitops"]["words"]))
    if s["hold_reverted"]:
        head.add_row("HOLD REVERTED", visible(s["hold_reverted"]))
    head.add_row("state", s["explanation"])
    head.add_row("next runs", ", ".join(_shown(t, zone) for t in s["next_runs"]) or "unknown")
    head.add_row("controller", "now: " + s["controller_next"]["text"])
    if s["after_restore"]:
        head.add_row("after restore", s["after_restore"]["text"])
    if s["if_unsuspended"]:
        head.add_row("if un-suspended", "now (cronctl resume, or kubectl): " + s["if_unsuspended"]["text"])
    out.print(head)
    if s["jobs"]:
        # kubectl-style plain columns, never folded: on a narrow terminal the times of least use go
        # first (CREATED, then STARTED, then SCHEDULED-FOR), -o wide and a pipe keep them all
        from cronctl.cli.layout import Column, fit

        columns = [Column("NAME"), Column("ORIGIN"), Column("SCHEDULED-FOR", 1), Column("CREATED", 3),
                   Column("STARTED", 2), Column("COMPLETED"), Column("OUTCOME"), Column("DURATION")]
        rows = [[j["name"] + (" (!)" if j["overlapping"] else ""), j["origin"],
                 j["scheduled_for"] or (f"occurrence {j['occurrence']}" if j["occurrence"] else "-"),
                 j["created"] or "-", j["started"] or "-", j["completed"] or "-", j["outcome"],
                 j["duration"] or "-"] for j in s["jobs"]]
        out.print("")
        for line in fit(columns, rows, run.table_width(), wide=wide):
            out.print(line, markup=False)
    else:
        out.print("child Jobs: none")
    for g in s["overlaps"]:
        if g["job_count"] == 2:
            out.print(visible(f"(!) overlap: {g['jobs'][0]} and {g['jobs'][1]} ran at the same time"), markup=False)
            continue
        more = g["job_count"] - len(g["jobs"])
        out.print(visible(f"(!) overlap: {g['job_count']} Jobs ran at the same time from {g['start']} to {g['end']} "
                          f"(at most {g['peak']} at once): {', '.join(g['jobs'])}"
                          + (f" and {more} more" if more else "")), markup=False)
    if s["recent_slots"]:
        out.print("")
        out.print("recent slots (all of them: cronctl history):", markup=False)
        for r in s["recent_slots"]:
            jobs = ", ".join(r["jobs"])
            # a run that failed says so first: its verdict (ran, ran-late) says only that a Job was made
            failed = (f"FAILED{' (' + r['failure_reason'] + ')' if r['failure_reason'] else ''}"
                      if r["outcome"] == "failed" else "")
            why = "; ".join(x for x in (failed, jobs, r["reason"]) if x) + effect_words(r)
            # a reason quotes Events and annotations (anyone's text): one line per slot, escapes visible
            out.print(visible(f"  {_shown(r['slot'], zone)}  {r['verdict']:<16} {why}".rstrip()), markup=False)
        failed_n = sum(1 for r in s["recent_slots"] if r["outcome"] == "failed")
        if failed_n:
            out.print(f"(!) {failed_n} of the last {len(s['recent_slots'])} slots failed", markup=False)
    if s["past_runs"]:
        # cronctl's own account of its finished runs (annotation cronctl.dev/runs): anyone with patch
        # on the CronJob can edit it, so it is shown as text, one line each, escapes visible
        shown = s["past_runs"][-PAST_RUNS_SHOWN:]
        out.print("")
        out.print(f"cronctl runs (the last {len(shown)} of {len(s['past_runs'])} kept in cronctl.dev/runs):", markup=False)
        for pr in shown:
            out.print("  " + visible(PastRun(**pr).words()), markup=False)


#: how many of the finished runs kept on the CronJob ``status`` prints (-o json gives all)
PAST_RUNS_SHOWN = 5


def _overview(run: Environment, kubeconfig: str | None, contexts: list[str | None], namespace: str | None, all_namespaces: bool,
              output: ListOutput, ledger: str | None) -> None:
    from cronctl.cli.common import emit
    from cronctl.cli.runtime import holder_alive
    from cronctl.procedure.status import collect_overview

    from cronctl.cli.common import ledger_choice

    out = run.out
    use_ledger, ledger_url = ledger_choice(ledger)
    now = run.now()
    several = len(contexts) > 1
    doc: dict[str, Any] = {}
    zones: list[str | None] = []  # each row's zone, for its times (the document keeps spec.timeZone)
    for context in dict.fromkeys(contexts):  # one cluster after the other, each once
        cluster = run.connect(kubeconfig, context, namespace)
        # each cluster's rows in a shared ledger are those its recorder wrote under the context's name
        ov = collect_overview(cluster, all_namespaces=all_namespaces, now=now, holder_alive=holder_alive,
                              ledger=(ledger_url, cluster.context_name or "default") if use_ledger else None)
        zones += [r.view.zone for r in ov.rows]
        one = overview_doc(ov)
        if several:
            name = context or cluster.context_name
            for r in one["cronjobs"]:
                r["cluster"] = name
            one["missing"] = [f"{m} (context {name})" for m in one["missing"]]
            one["namespace"] = None if all_namespaces else one["namespace"]
        doc = one if not doc else {**doc, "cronjobs": doc["cronjobs"] + one["cronjobs"],
                                   "missing": doc["missing"] + one["missing"]}
    for m in doc["missing"]:
        run.err.print(visible(f"warning: could not read {m}; lost/duplicate counts are judged without it"), markup=False)
    if is_document(output):
        emit(out, doc, output)
        return
    if output == ListOutput.name:
        for r in doc["cronjobs"]:
            out.print(f"cronjob.batch/{r['cronjob']}", markup=False)
        return
    from cronctl.cli.layout import Column, fit

    # kubectl's printers: on a narrow terminal the columns of least use go first (GITOPS, RUN, ZONE,
    # DUP), then SCHEDULE folds; -o wide, a pipe or a file keep every column on one line per row
    columns = ([Column("CLUSTER")] if several else []) + ([Column("NAMESPACE")] if all_namespaces else []) + [
        Column("NAME"), Column("SCHEDULE", folds=True), Column("ZONE", 2), Column("SUSPENDED"), Column("RUN", 3),
        Column("LAST"), Column("LOST"), Column("FAILED"), Column("DUP", 1), Column("NEXT"), Column("GITOPS", 4)]
    rows: list[list[str]] = []
    for r, zone in zip(doc["cronjobs"], zones):
        last: Any = r["last_job"]
        held: Any = r["run"]
        rows.append(([str(r["cluster"])] if several else []) + ([r["namespace"]] if all_namespaces else []) + [
            r["cronjob"], _schedule_cell(r), zone or "-",
            r["suspended_by"] or "no", ("STALE " if held and held["stale"] else "") + (f"{held['run_id']}:{held['step']}"
                                                                                       if held else "-"),
            f"{last['outcome']} {last['name']}" if last else "-",
            str(r["lost"]), str(r["failed"]), str(r["duplicate"]), _shown(r["next_run"], zone) or "-",
            # the tool that manages it, and whether its manifest sets spec.suspend (a hold is reverted)
            (r["gitops"] + (" (sets suspend)" if r["gitops_sets_suspend"] else "")) if r["gitops"] else "-"])
    # "paused by" and the last Job come from annotations anyone may patch: fit() shows each cell visible
    for line in fit(columns, rows, run.table_width(), wide=output == ListOutput.wide):
        out.print(line, markup=False)
    for r in doc["cronjobs"]:
        held = r["run"]
        if held and (held["stale"] or not held["confirmed"] or r["hold_reverted"]):
            out.print(visible(f"(!) {r['namespace']}/{r['cronjob']}: {held['words']}"), markup=False)
        elif r["hold_reverted"]:
            out.print(visible(f"(!) {r['namespace']}/{r['cronjob']}: PAUSE UNDONE: {r['hold_reverted']}"), markup=False)


def _schedule_cell(row: dict[str, Any]) -> str:
    """The overview's SCHEDULE: the schedule in words without the zone (the ZONE column says it),
    and the expression; the document's schedule_words, as it is, when the describer cannot."""
    from cronctl.errors import CronctlError
    from cronctl.schedule import parse
    from cronctl.schedule.describe import describe, zone_phrase

    try:
        fields = parse(str(row["schedule"]), row["time_zone"])
        words = describe(fields, row["time_zone"])
        words = words.removesuffix(", " + zone_phrase(fields, row["time_zone"]))
    except CronctlError:
        return str(row["schedule_words"])
    return f"{words} ({row['schedule']})"


def _t(d: datetime | None) -> str | None:
    from cronctl.timeutil import rfc3339_z

    return rfc3339_z(d) if d else None


def status_doc(s: Status) -> dict[str, Any]:
    """The ``-o json`` document of a status (the contract; the text is printed from it too), masked
    (cronctl.redact): run records, pauses and past runs hold text anyone with patch wrote."""
    from cronctl.model import MAX_OVERLAP_NAMES
    from cronctl.redact import Redactor
    from cronctl.timeutil import human_duration

    v = s.view
    doc = {
        "cronjob": s.name, "namespace": s.namespace, "now": _t(s.now),
        "schedule": v.schedule, "schedule_words": s.schedule_words,
        "time_zone": v.time_zone, "concurrency_policy": v.policy,
        "starting_deadline_seconds": v.starting_deadline,
        "suspend": v.suspended, "last_schedule_time": _t(v.last_schedule),
        "last_successful_time": _t(v.last_successful),
        "active": list(v.active),
        "record": record_doc(s.record) if s.record else None,
        "record_confirmed": s.record_unconfirmed is None if s.record else None,
        "record_unconfirmed": s.record_unconfirmed,
        "explanation": s.explanation,
        "jobs": [{
            "name": r.name, "origin": r.origin, "scheduled_for": _t(r.scheduled_for),
            "occurrence": _t(r.claims), "created": _t(r.created), "started": _t(r.started),
            "completed": _t(r.completed), "outcome": r.outcome or "Running",
            "duration": human_duration(r.duration) if r.duration is not None else None,
            "duration_seconds": r.duration.total_seconds() if r.duration is not None else None,
            "active_in_status": line.active_in_status, "run_id": r.run_id or None,
            "overlapping": line.overlapping,
        } for line in s.jobs for r in (line.record,)],
        "overlaps": [{"start": _t(g.start), "end": _t(g.end), "job_count": len(g.names),
                      "jobs": list(g.names[:MAX_OVERLAP_NAMES]), "peak": g.peak} for g in s.overlaps],
        "unfinished": [line.record.name for line in s.jobs if line.record.running],
        "next_runs": [_t(t) for t in s.next_runs],
        "controller_next": s.controller_next.as_dict(),
        "after_restore": s.after_restore.as_dict() if s.after_restore else None,
        "if_unsuspended": s.if_unsuspended.as_dict() if s.if_unsuspended else None,
        "recent_slots": [{"slot": r["slot"], "slot_local": r["slot_local"], "verdict": r["verdict"],
                          "outcome": r["outcome"], "failure_reason": r["failure_reason"],
                          "jobs": r["jobs"], "reason": r["reason"], **({"effect": r["effect"]} if "effect" in r else {})}
                         for r in s.recent_slots],
        "pause": dict(pause_doc(s.pause), overdue=s.pause.overdue(s.now)) if s.pause else None,
        "past_runs": [r.entry() for r in s.past_runs],
        "gitops": {**s.gitops.as_dict(), "words": s.gitops.words()},
        "hold_reverted": s.hold_reverted,
    }
    return Redactor().data(doc)  # type: ignore[no-any-return]


def overview_doc(o: Overview) -> dict[str, Any]:
    """The ``-o json`` document of the overview (its rows masked, as :func:`status_doc`)."""
    from cronctl.redact import Redactor

    return {"now": _t(o.now), "namespace": o.namespace, "cronjobs": Redactor().data([_row_doc(r) for r in o.rows]),
            "missing": list(o.missing)}


def _row_doc(r: OverviewRow) -> dict[str, Any]:
    v, run, last = r.view, r.run, r.last_job
    return {
        "namespace": v.namespace or None, "cronjob": v.name,
        "schedule": v.schedule, "schedule_words": r.schedule_words,
        "time_zone": v.time_zone,
        "suspend": v.suspended, "suspended_by": r.suspended_by,
        "run": ({"run_id": run.record.run_id, "step": run.record.step, "operator": run.record.operator,
                 "started": run.record.started, "holder": run.record.holder, "stale": run.stale,
                 "confirmed": run.confirmed, "words": run.words} if run else None),
        "last_job": ({"name": last.name, "outcome": last.outcome or "Running", "created": _t(last.created)}
                     if last else None),
        "lost": r.lost, "failed": r.failed, "duplicate": r.duplicate, "window": r.window, "history_error": r.history_error,
        "next_run": _t(r.next_run),
        "gitops": r.gitops.tool, "gitops_sets_suspend": r.gitops.sets_suspend, "hold_reverted": r.hold_reverted,
    }


def _shown(value: Any, zone: Any) -> str:
    """An RFC3339 instant of the status document for people: in the CronJob's zone, UTC beside it
    (-o json keeps the RFC3339 UTC value); anything unreadable as it is."""
    from cronctl.errors import BadInput
    from cronctl.timeutil import local_and_utc, parse_rfc3339

    if not value:
        return ""
    try:
        return local_and_utc(parse_rfc3339(str(value)), str(zone) if zone else None)
    except BadInput:
        return visible(str(value))
