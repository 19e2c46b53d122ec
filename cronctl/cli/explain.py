"""`cronctl explain`: a schedule, a live CronJob or a manifest file, exactly as the controller sees it.

Thin: parse options, read the clock once, call :mod:`cronctl.explain`, make the ``-o json``
document of its typed results (:func:`explanation_doc`), render. Nothing heavy is imported at module
import time (the kubernetes client only in live mode, yaml only for files and ``-o yaml``), so
``cronctl explain`` starts fast.
"""

from __future__ import annotations

import os
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from cronctl.cli import env
from cronctl.cli import candidates
from cronctl.cli.common import (ContextOpt, KubeconfigOpt, RequestTimeoutOpt, NamespaceOpt, Output, OutputOpt, UsageError, emit,
                                file_list)
from cronctl.textsafe import visible
from cronctl.timeutil import rfc3339_z_opt

if TYPE_CHECKING:
    from cronctl.cli.console import SafeConsole
    from cronctl.cli.env import Environment
    from cronctl.explain import AtlasController, DstChange, Explanation, Instant, KubeController
    from cronctl.gitops import GitOps

#: Lists of instants in the controller object are cut at this length (counts stay exact).
MAX_LISTED = 1000


def explain(
    ctx: typer.Context,
    target: Annotated[Optional[str], typer.Argument(
        help="A schedule ('30 2 * * *', '@daily', '@every 1h30m') or cronjob/NAME for a live CronJob.",
        show_default=False, metavar="SCHEDULE|cronjob/NAME", autocompletion=candidates.explain_target)] = None,
    filename: Annotated[Optional[list[str]], typer.Option(
        "--filename", "-f", help="Explain every CronJob in this manifest, multi-document YAML, JSON or "
        "`kubectl get -o yaml|json` List ('-' = stdin); Atlas CLI manifests too; repeatable.", show_default=False,
        metavar="FILE")] = None,
    tz: Annotated[Optional[str], typer.Option(
        "--tz", help="IANA zone, as spec.timeZone (default: none = the controller's local zone, UTC).",
        show_default=False, metavar="ZONE", autocompletion=candidates.zones)] = None,
    from_: Annotated[Optional[str], typer.Option(
        "--from", help="List runs strictly after this RFC3339 instant (default: --now, else now).",
        show_default=False, metavar="INSTANT")] = None,
    count: Annotated[int, typer.Option("--count", "-c", help="How many next runs to list (0 to 10000).", metavar="N")] = 10,
    created: Annotated[Optional[str], typer.Option(
        "--created", help="Controller input: metadata.creationTimestamp (RFC3339).", show_default=False,
        metavar="INSTANT")] = None,
    last_schedule: Annotated[Optional[str], typer.Option(
        "--last-schedule", help="Controller input: status.lastScheduleTime (RFC3339).", show_default=False,
        metavar="INSTANT")] = None,
    starting_deadline: Annotated[Optional[int], typer.Option(
        "--starting-deadline", help="Controller input: spec.startingDeadlineSeconds.", show_default=False,
        metavar="SECONDS")] = None,
    concurrency_policy: Annotated[Optional[str], typer.Option(
        "--concurrency-policy", help="Controller input: spec.concurrencyPolicy (Allow, Forbid, Replace).",
        show_default=False, metavar="POLICY")] = None,
    active: Annotated[Optional[list[str]], typer.Option(
        "--active", help="Controller input: a Job named in status.active (repeat for several).",
        show_default=False, metavar="JOB")] = None,
    now: Annotated[Optional[str], typer.Option(
        "--now", help="Controller input: the instant of the sync (RFC3339; default: the clock).",
        show_default=False, metavar="INSTANT")] = None,
    suspended: Annotated[bool, typer.Option(
        "--suspended", help="Controller input: spec.suspend is true (say what unsuspending would do).")] = False,
    name: Annotated[Optional[str], typer.Option(
        "--name", help="Controller input: the CronJob's name (for the Job name).", show_default=False,
        metavar="NAME")] = None,
    dialect: Annotated[str, typer.Option(
        "--dialect", help="kubernetes (robfig/cron v3, the CronJob controller) or atlas (a strict dialect: numeric fields only, all five must match, a one-year horizon).",
        metavar="[kubernetes|atlas]")] = "kubernetes",
    missed_limit: Annotated[Optional[int], typer.Option(
        "--missed-limit", help="Atlas only: missedScheduleLimit (default 100 when unset or <= 0).",
        show_default=False, metavar="N")] = None,
    allow_never: Annotated[bool, typer.Option(
        "--allow-never", help="Exit 0 for a schedule that never fires ('0 0 31 2 *'); without it, exit 5.")] = False,
    if_applied: Annotated[Optional[str], typer.Option(
        "--if-applied", help="What the controller does the moment this file's CronJob is applied to the live one "
        "(cronctl diff for one CronJob: a dry-run server-side apply; cronjob/NAME picks one of several).",
        show_default=False, metavar="FILE")] = None,
    output: OutputOpt = Output.text,
    kubeconfig: KubeconfigOpt = None,
    request_timeout: RequestTimeoutOpt = None,
    context: ContextOpt = None,
    namespace: NamespaceOpt = None,
) -> None:
    """Explain a schedule exactly as the Kubernetes CronJob controller computes it.

    The schedule in words, the next runs in its zone and in UTC, every DST gap (a run that will
    not happen) or fold (a run that happens twice) touching them, and, given controller inputs
    or a live CronJob, what the controller does now. Exit 5 on bad input, and after the
    explanation when a schedule never fires (unless --allow-never).
    """

    from cronctl.errors import BadInput, BadUsage
    from cronctl.explain import DIALECTS, explain_file, explain_schedule, given
    from cronctl.names import cronjob_name, is_cronjob_ref

    run = env.of(ctx)
    if dialect not in DIALECTS:
        raise BadUsage(f"bad --dialect {dialect!r}: expected kubernetes or atlas")  # as a choice: exit 2
    if if_applied is not None:
        if filename or (target is not None and not is_cronjob_ref(target)):
            raise UsageError("--if-applied FILE takes no -f and no SCHEDULE (cronjob/NAME picks a CronJob of FILE)")
        from cronctl.cli.diff import explain_if_applied

        explain_if_applied(run, if_applied, cronjob_name(target) if target else None, now_text=now,
                           output=output.value, kubeconfig=kubeconfig, context=context, namespace=namespace)
        return
    files = file_list(filename)
    if (target is None) == (not files):
        raise UsageError("give a SCHEDULE, cronjob/NAME, or -f FILE (exactly one)"
                         + (f"; for several files give each its own -f: -f {files[-1]} -f {target}"
                            if files and target is not None and os.path.isfile(target) else ""))
    if concurrency_policy is not None and concurrency_policy not in ("Allow", "Forbid", "Replace"):
        raise BadUsage(f"bad --concurrency-policy {concurrency_policy!r}: expected Allow, Forbid or Replace")
    # The clock is read once, here; everything below takes it as a parameter.
    now_t = _instant(now, "--now") or run.now()
    after = _instant(from_, "--from") or now_t
    created_t = _instant(created, "--created")
    last_t = _instant(last_schedule, "--last-schedule")
    # --now and --name alone only set the reference instant / the name; a starting point or a
    # deadline/suspend asks for the controller's decision.
    controller_given = (created_t is not None or last_t is not None or starting_deadline is not None
                        or suspended or concurrency_policy is not None or bool(active))
    inputs = given(now_t, created=created_t, last_schedule=last_t, starting_deadline=starting_deadline,
                   suspended=suspended, name=name or "cronjob", missed_limit=missed_limit,
                   concurrency_policy=concurrency_policy, active=tuple(active or ()))

    doc: Any  # one document, or a list of them for -f
    if files:
        results = [r for path in files
                   for r in explain_file(path, after=after if from_ is not None else None, now=now_t, count=count,
                                         overrides=inputs if controller_given else None,
                                         dialect=dialect if dialect == "atlas" else None)]
        doc = [explanation_doc(r) for r in results]
    elif target is not None and is_cronjob_ref(target):
        if dialect == "atlas":
            raise BadInput("--dialect atlas applies to a schedule or an Atlas manifest (-f), "
                           "not to a live Kubernetes CronJob")
        live, gitops = _live(run, cronjob_name(target), kubeconfig, context, namespace, after if from_ else None,
                             now_t, count, inputs if controller_given else None)
        results, doc = [live], explanation_doc(live, gitops)
    else:
        assert target is not None
        if controller_given and created_t is None and last_t is None:
            raise BadInput("controller inputs need --created or --last-schedule (the controller's starting point)")
        result = explain_schedule(target, time_zone=tz, after=after, count=count, dialect=dialect,
                                  controller=inputs if controller_given else None, name=name)
        results, doc = [result], explanation_doc(result)
    _render(run.out, doc, output)
    if not allow_never:
        _refuse_never_firing(results)


def explanation_doc(e: Explanation, gitops: GitOps | None = None) -> dict[str, Any]:
    """The ``-o json`` / ``-o yaml`` document of one explanation (docs/OUTPUT.md, "the contract"; the text
    is printed from it too). Keys are camelCase like the Kubernetes API; instants are RFC3339 (``utc``
    ending in ``Z``, ``local`` with the zone's offset). ``gitops``: who else writes spec.suspend (a live
    CronJob's GitOps controller), for the suspend questions."""
    from cronctl.explain import AtlasController
    from cronctl.timeutil import rfc3339_z

    doc: dict[str, Any] = {"namespace": e.namespace, "name": e.name} if e.named else {}
    doc.update({
        "dialect": e.dialect,
        "schedule": e.schedule,
        "timeZone": e.time_zone,
        "zone": e.zone,
        "zoneSource": e.zone_source,
        "description": e.description,
        "neverFires": e.never_fires,
        "from": rfc3339_z(e.after),
        "next": [_instant_doc(i) for i in e.next],
        "dst": [_dst_doc(c) for c in e.dst],
        "warnings": list(e.warnings),
    })
    c = e.controller
    if c is not None:
        doc["controller"] = _atlas_doc(c) if isinstance(c, AtlasController) else _kube_doc(c)
    if gitops is not None:
        doc["gitops"] = {**gitops.as_dict(), "words": gitops.words()}
    return doc


def _instant_doc(i: Instant) -> dict[str, Any]:
    """One run: ``{"utc", "local", "weekday"}`` (the weekday of the local date)."""
    from cronctl.timeutil import rfc3339_local, rfc3339_z

    return {"utc": rfc3339_z(i.utc), "local": rfc3339_local(i.local), "weekday": i.weekday}


def _dst_doc(c: DstChange) -> dict[str, Any]:
    from cronctl.timeutil import rfc3339_z

    e = c.event
    t = e.transition
    return {
        "kind": e.kind,
        "transition": rfc3339_z(t.at),
        "offsetBefore": _offset(t.offset_before),
        "offsetAfter": _offset(t.offset_after),
        "wallStart": t.wall_start.isoformat(timespec="minutes"),
        "wallEnd": t.wall_end.isoformat(timespec="minutes"),
        "skipped": [w.isoformat(timespec="minutes") for w in e.skipped],
        "repeated": [{"wall": w.isoformat(timespec="minutes"), "utc": [rfc3339_z(a), rfc3339_z(b)]}
                     for w, a, b in e.repeated],
        "extra": [_instant_doc(i) for i in c.extra],
        "lost": [_instant_doc(i) for i in c.lost],
        "message": e.message(),
    }


def _offset(d: timedelta) -> str:
    """A UTC offset as RFC3339 writes it: '+01:00', '-03:30'."""
    total = int(d.total_seconds())
    sign = "-" if total < 0 else "+"
    h, m = divmod(abs(total) // 60, 60)
    return f"{sign}{h:02d}:{m:02d}"


def _listed(ts: tuple[datetime, ...]) -> list[str]:
    from cronctl.timeutil import rfc3339_z

    return [rfc3339_z(t) for t in ts[:MAX_LISTED]]


def _kube_doc(c: KubeController) -> dict[str, Any]:
    """The controller part of a Kubernetes explanation: what a sync that runs decides (``unsuspended``),
    and the decision, wake-up and events of this sync (``actual``: nothing while suspended)."""
    from cronctl.timeutil import rfc3339_z

    d, shown, view = c.unsuspended, c.actual, c.view
    return {
        "now": rfc3339_z(c.now),
        "suspended": view.suspended,
        "decision": shown.decision,
        "earliest": rfc3339_z(d.earliest),
        "mostRecent": rfc3339_z_opt(d.most_recent),
        "missed": d.missed,
        "error": d.error,
        "jobName": d.job_name,
        "scheduledTimestamp": d.scheduled_timestamp,
        "nextWakeUp": rfc3339_z_opt(shown.next_wakeup),
        "events": list(shown.events),
        "missedRunsCount": len(d.missed_runs),
        "missedRunsTruncated": d.missed_truncated,
        "missedRuns": _listed(d.missed_runs),
        "neverMadeUpCount": len(d.never_made_up),
        "neverMadeUp": _listed(d.never_made_up),
        "deadlineDroppedCount": len(d.deadline_dropped),
        "deadlineDropped": _listed(d.deadline_dropped),
        "concurrencyPolicy": view.policy,
        "active": list(view.active),
        "waitingFor": list(d.waiting_for),
        "replaces": list(d.replaces),
        "estimateSkipped": rfc3339_z_opt(d.estimate_skipped),
        "dst": [_dst_doc(x) for x in c.dst],
        "summary": list(c.summary),
    }


def _atlas_doc(c: AtlasController) -> dict[str, Any]:
    from cronctl.timeutil import rfc3339_z

    return {
        "now": rfc3339_z(c.now),
        "suspended": c.suspended,
        "base": rfc3339_z(c.base),
        "missedLimit": c.missed_limit,
        "dueCount": len(c.due),
        "due": _listed(c.due),
        "moreDue": c.more_due,
        "summary": list(c.summary),
    }


def _refuse_never_firing(results: list[Explanation]) -> None:
    """After the explanation: a schedule that never fires is an error (exit 5) unless --allow-never."""
    from cronctl.errors import ScheduleError

    never = [r for r in results if r.never_fires]
    if not never:
        return

    def one(r: Explanation) -> str:
        who = f"{r.namespace + '/' if r.namespace else ''}{r.name}: " if r.name else ""
        why = (r.description.removesuffix(": this schedule never fires") if "never" in r.description
               else "no run within the search horizon")
        return f"{who}schedule '{r.schedule}' never fires ({why})"

    more = f"; and {len(never) - 3} more" if len(never) > 3 else ""
    raise ScheduleError("; ".join(one(r) for r in never[:3]) + more
                        + "; pass --allow-never to explain it with exit 0")


def _instant(text: str | None, option: str) -> datetime | None:
    """An RFC3339 option value, refused (BadInput) outside the years every command and file takes
    (model.MIN_YEAR..MAX_YEAR, 1970..9000): one range, checked in one place (cronctl.model.instant)."""
    from cronctl.model import instant

    return instant(text, what=option) if text is not None else None


def _live(run: Environment, cj: str, kubeconfig: str | None, context: str | None, namespace: str | None,
          after: datetime | None, now: datetime, count: int, overrides: Any) -> tuple[Explanation, GitOps]:
    """A live CronJob explained, and who else writes its spec.suspend (a GitOps controller)."""
    from cronctl.explain import explain_object

    cluster = run.connect(kubeconfig, context, namespace)  # the only path that loads the kubernetes client
    obj = cluster.get_cronjob(cj)
    # A live object exists already: the API's create-only rules (TZ in schedule, 52-char name)
    # are checked as an update of itself.
    from cronctl.gitops import detect

    result = explain_object(obj, after=after, now=now, count=count, overrides=overrides, api_create=False,
                            with_controller=True)
    return result, detect(obj)  # who else writes spec.suspend (a GitOps controller), for the suspend questions


def _render(out: SafeConsole, result: Any, output: Output) -> None:
    """The document (a list of them for -f) as -o json|yaml, or as text, on ``out``."""
    if output != Output.text:
        emit(out, result, output)
    elif isinstance(result, list):
        for i, item in enumerate(result):
            if i:
                out.print()
            _render_text(out, item)
    else:
        _render_text(out, result)


def _render_text(out: SafeConsole, r: dict[str, Any]) -> None:
    """People's view of one explanation, printed from its document (:func:`explanation_doc`, as -o json
    says it). Plain aligned lines (no table padding), styled by rich."""
    from rich.text import Text

    # One print per result: rich's per-call overhead dominated `-f` on a 500-CronJob List.
    lines: list[Text] = []

    def line(text: str = "", style: str = "") -> None:
        lines.append(Text(visible(text), style=style))  # names, schedules, zones: the file's text

    def field(label: str, value: str, style: str = "") -> None:
        t = Text(f"{label:<11}", style="bold")
        t.append(visible(value), style=style)
        lines.append(t)

    if r.get("name") is not None:
        kind = "Atlas CronJob" if r["dialect"] == "atlas" else "CronJob"
        ns = f"{r['namespace']}/" if r.get("namespace") else ""
        line(f"{kind} {ns}{r['name']}", "bold")
    zone_note = {"timeZone": "spec.timeZone", "prefix": "TZ= prefix in the schedule",
                 "controller-local": "no timeZone: the controller's local zone", "timezone": "timezone",
                 "default-utc": "no timezone: Atlas defaults to UTC"}.get(r["zoneSource"], r["zoneSource"])
    dialect = ("Kubernetes CronJob controller (robfig/cron v3)" if r["dialect"] == "kubernetes"
               else "Atlas (numeric fields, all five must match)")
    field("Schedule", r["schedule"])
    field("Time zone", f"{r['zone']} ({zone_note})")
    field("Dialect", dialect)
    field("Meaning", r["description"], "red" if r["neverFires"] else "")
    if (r.get("gitops") or {}).get("tool"):
        field("GitOps", r["gitops"]["words"])

    if r["next"]:
        line()
        n_runs = len(r["next"])
        line(f"Next {n_runs} run{'s' if n_runs != 1 else ''} after {r['from']}", "bold")
        width = len(str(n_runs))
        line(f"  {'#':>{width}}  {'local (' + r['zone'] + ')':<28}  UTC", "dim")
        # DST marks in the list itself: a skipped wall time gets its own line where it would have
        # been; each run of a doubled wall time says so. (RFC3339 Z strings sort as instants.)
        gaps = sorted((d["transition"], d["skipped"]) for d in r["dst"] if d["kind"] == "gap")
        doubled = {u for d in r["dst"] if d["kind"] == "fold" for rep in d["repeated"] for u in rep["utc"]}
        unnamed = {x["utc"] for d in r["dst"] for x in d["extra"]}
        lost = sorted((x["utc"], x["local"]) for d in r["dst"] for x in d.get("lost", ()))
        pad = " " * (width + 4)
        for i, n in enumerate(r["next"], 1):
            utc = n["utc"]
            while lost and lost[0][0] < utc:
                lutc, llocal = lost.pop(0)
                line(f"{pad}{_weekday(llocal)} {llocal[:10]} {llocal[11:16]} {llocal[19:] or 'Z'}: no run "
                     f"(robfig's walk across the DST change never lands on it)", "yellow")
            while gaps and gaps[0][0] <= utc:
                walls = gaps.pop(0)[1]
                if len(walls) > 4:
                    w0, w1 = walls[0], walls[-1]
                    line(f"{pad}{_weekday(w0)} {w0[:10]} {w0[11:16]}-{w1[11:16]} does not exist: "
                         f"{len(walls)} runs skipped (DST gap)", "yellow")
                for wall in walls if len(walls) <= 4 else ():
                    line(f"{pad}{_weekday(wall)} {wall[:10]} {wall[11:16]} does not exist: no run (DST gap)", "yellow")
            local = n["local"]
            offset = local[19:] or "Z"
            local_s = f"{n['weekday']} {local[:10]} {local[11:16]} {offset}"
            mark = ("   twice: clocks go back (DST fold)" if utc in doubled
                    else "   not named by the schedule: robfig's walk across the DST change" if utc in unnamed else "")
            line(f"  {i:>{width}}  {local_s:<28}  {_weekday(utc)} {utc[:10]} {utc[11:16]}Z{mark}")
    elif not r["neverFires"]:
        line()
        line("No runs listed (--count 0).", "dim")

    if r["dst"]:
        line()
        line("Daylight-saving changes touching these runs", "bold")
        for d in r["dst"]:
            line(f"  ! {d['message']}", "yellow")

    c = r.get("controller")
    if c is not None:
        line()
        if r["dialect"] == "atlas":
            line(f"Atlas RunOnce at {c['now']} (base {c['base']}, missed limit {c['missedLimit']})", "bold")
            for s in c["summary"]:
                line(f"  - {s}")
        else:
            line(f"Controller at {c['now']}: {c['decision']}", "bold")
            for s in c["summary"]:
                line(f"  - {s}")
            rows = [("earliest", c["earliest"]), ("most recent", c["mostRecent"] or "none"),
                    ("missed", f"{c['missed']} ({c['missedRunsCount']} run(s) in (earliest, now])")]
            if c["jobName"]:
                rows += [("job name", c["jobName"]), ("scheduled-timestamp", c["scheduledTimestamp"] or "")]
            if c["nextWakeUp"]:
                rows.append(("next wake-up", c["nextWakeUp"]))
            rows += [("event", e) for e in c["events"]]
            for label, value in rows:
                t = Text(f"  {label:<21}", style="dim")
                t.append(visible(value))
                lines.append(t)

    if r["warnings"]:
        line()
        line("Warnings", "bold")
        for w in r["warnings"]:
            line(f"  ! {w}", "yellow")
    out.print(Text("\n").join(lines))


def _weekday(rfc3339: str) -> str:
    d = datetime.fromisoformat(rfc3339[:10])
    return ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")[d.weekday()]
