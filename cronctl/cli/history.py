"""`cronctl history`: one row per scheduled slot, with the verdict and its reason in words.

Thin: parse options, read the clock once, read the objects (live or from a dump), call
:func:`cronctl.history.slot_history` through :mod:`cronctl.procedure.history`, print.
"""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Annotated, Any, Optional

import typer

from cronctl.cli import env
from cronctl.cli.common import (ContextOpt, KubeconfigOpt, LedgerClusterOpt, LedgerOpt, ListOutput, ListOutputOpt,
                                NamespaceOpt, RequestTimeoutOpt, SelectorOpt, is_document)
from cronctl.cli.common import UsageError
from cronctl.cli.console import SafeConsole
from cronctl.cli.common import cronjob_arg, cronjob_names, file_list
from cronctl.cli.documents import effect_words
from cronctl.cli.layout import Row, lay_out
from cronctl.slotrows import History
from cronctl.textsafe import visible


class FailOn(str, Enum):
    lost = "lost"
    duplicate = "duplicate"


def history(
    ctx: typer.Context,
    cronjob: Annotated[Optional[str], typer.Argument(
        help="The CronJob (default: every CronJob of the namespace, or of all with -A).", metavar="CRONJOB",
        show_default=False, callback=cronjob_arg, autocompletion=cronjob_names)] = None,
    all_namespaces: Annotated[bool, typer.Option(
        "--all-namespaces", "-A", help="Every CronJob of every namespace.")] = False,
    from_dump: Annotated[Optional[list[str]], typer.Option(
        "--from-dump", help="Read `kubectl get cronjobs,jobs,events -o yaml|json` output instead of the cluster "
        "(the same dumps as `cronctl bundle`); repeatable, the files read as one dump; - = stdin.",
        show_default=False, metavar="FILE")] = None,
    since: Annotated[Optional[str], typer.Option(
        "--since", help="Slots this far back (30m, 6h, 1d12h; a bare number is seconds; default: as far back as the evidence reaches, at "
        "most 7d).", show_default=False, metavar="DURATION")] = None,
    now: Annotated[Optional[str], typer.Option(
        "--now", help="The instant to judge at (RFC3339; default: the clock, or the latest time in a dump).",
        show_default=False, metavar="INSTANT")] = None,
    fail_on: Annotated[Optional[list[FailOn]], typer.Option(
        "--fail-on", help="Exit 8 when a slot was lost (skipped-forbid, missed-*) or ran twice (duplicate, "
        "dst-doubled); repeat for both.", show_default=False)] = None,
    html: Annotated[Optional[str], typer.Option(
        "--html", help="Write a self-contained HTML page of the slots: one row per CronJob, grouped by cluster "
        "and namespace, a cell per slot or per column of slots coloured by the worst verdict (a failed run in the "
        "failure colour), hover for the reasons. The text table is then replaced by one line naming the page (-o text keeps it; -o json|yaml "
        "is printed as usual); the file is replaced atomically, mode 0600; - = stdout.",
        show_default=False, metavar="FILE")] = None,
    ledger: LedgerOpt = None,
    ledger_cluster: LedgerClusterOpt = None,
    output: ListOutputOpt = ListOutput.text,
    kubeconfig: KubeconfigOpt = None,
    request_timeout: RequestTimeoutOpt = None,
    selector: SelectorOpt = None,
    context: ContextOpt = None,
    namespace: NamespaceOpt = None,
) -> None:
    """Why did (or didn't) it run at 14:20? Every scheduled slot with its verdict and reason.

    Verdicts: ran, ran-late, duplicate, running, skipped-forbid, missed-deadline, missed-suspended,
    missed-too-many, missed, dst-skipped, dst-doubled, evidence-gone, due; beside each, what became
    of its run (outcome: succeeded, failed, running, unknown, or - without a Job). Manual Jobs that
    stand for no slot are listed too. With --ledger (or $CRONCTL_LEDGER) the ledger that cronctl
    record keeps is judged with the cluster: slots whose Jobs and events Kubernetes has deleted,
    exact suspend spans; --cluster NAME|all reads the ledger alone. Exit 8 with --fail-on when a
    slot was lost or ran twice, 5 on bad input, 6 when the CronJob does not exist, 9 when the
    ledger cannot be read. --html FILE writes the fleet health page (-A --since 7d: the whole
    cluster's week on one page).
    """
    from cronctl.cli import durations as flags
    from cronctl.cli.common import cycle_collection_paused, emit
    from cronctl.errors import ExitCode
    from cronctl.history import Options, fail_on as failing
    from cronctl.model import instant

    from cronctl.cli.common import ledger_choice

    from_dump = file_list(from_dump) or None
    use_ledger, ledger_url = ledger_choice(ledger)
    if ledger_cluster is not None and not use_ledger:
        raise UsageError("--cluster reads the ledger: give --ledger URL (or set CRONCTL_LEDGER)")
    if use_ledger and from_dump is not None:
        raise UsageError("give --from-dump or --ledger, not both")
    if all_namespaces and namespace:
        raise UsageError("give -n NAMESPACE or -A, not both")
    run = env.of(ctx)
    out, err = run.out, run.err
    run.selector_only_for_lists(cronjob, from_dump or (ledger_cluster is not None), "--from-dump or --cluster")
    if all_namespaces and cronjob and from_dump is None:
        raise UsageError("a CRONJOB name needs -n NAMESPACE, not -A")
    output_given = _given(ctx, "output")
    if html == "":
        raise UsageError("--html needs a FILE (or - for stdout)")
    if html == "-" and output_given:
        raise UsageError(f"--html - writes the page to stdout: give --html FILE to have -o {output.value} too")
    ctx.with_resource(cycle_collection_paused())  # 145,000 slots of 1,000 CronJobs: millions of dicts
    clock = run.now().replace(microsecond=0)
    now_t = instant(now, what="--now") if now is not None else None
    since_td = flags.SINCE.delta(since) if since is not None else None
    missing: list[str] = []
    heading: str | None = None  # the live group's heading on the page (else "Cluster NAME" / "This cluster")
    unread: list[str] = []  # the ledger's rows left out because they do not decode: exit 9 after the answer
    # (list[Any]: the judge fills it with SlotRows, Redactor.data_in_place reads them as plain dicts)
    settled: list[Any] = []  # the ledger's rows these rules found nothing in when kept

    def window(at: datetime) -> Options:  # the judge's now and --since, the same for every source
        return Options(now=at, since=at - since_td if since_td else None)

    if from_dump is not None:
        from cronctl.bundle.dump import load_dump
        from cronctl.procedure.history import Fleet, prepare_all

        raw = load_dump(from_dump, namespace=namespace, now=now_t, collected_at=clock,
                        all_namespaces=namespace is None)
        now_t = raw.now
        cjs = raw.cronjobs
        if cronjob is not None:
            held = [str((c.get("metadata") or {}).get("name")) for c in cjs]
            cjs = [c for c in cjs if str((c.get("metadata") or {}).get("name")) == cronjob]
            if not cjs:
                from cronctl import names
                from cronctl.errors import NotFound

                raise NotFound(f"{', '.join(from_dump)}: no CronJob {cronjob}"
                               + (f" in namespace {namespace}" if namespace else "")
                               + names.did_you_mean(cronjob, held) + f" (it holds: {names.held(held)})")
        opts = window(now_t)
        fleet = Fleet(prepare_all(cjs, raw.jobs, raw.events, opts), opts)
        # a dump's CronJobs are grouped, and headed, by its file names: it is no cluster of the kubeconfig
        here = source = "the dump " + ", ".join(from_dump)
        heading = "The dump " + ", ".join(from_dump)
    elif ledger_cluster is not None:
        from cronctl.procedure.history import from_ledger

        now_t = now_t or clock
        opts = window(now_t)
        fleet, missing = from_ledger(ledger_url, None, cronjob, cluster_name=None if ledger_cluster == "all"
                                      else ledger_cluster, namespace=namespace, all_namespaces=all_namespaces,
                                      opts=opts, settled=settled, problems=unread)
        here, source = HERE, f"the ledger (cluster {ledger_cluster})"
    elif use_ledger:
        from cronctl.procedure.history import from_ledger

        cluster = run.connect(kubeconfig, context, namespace)
        now_t = now_t or clock
        opts = window(now_t)
        fleet, missing = from_ledger(ledger_url, cluster, cronjob, cluster_name=cluster.context_name or "default",
                                      namespace=namespace, all_namespaces=all_namespaces, opts=opts,
                                      settled=settled, problems=unread)
        # the live CronJobs are grouped under the name the ledger knows this cluster by
        here, source = cluster.context_name or "default", "the cluster and the ledger"
    else:
        from cronctl.procedure.history import from_cluster

        cluster = run.connect(kubeconfig, context, namespace)
        now_t = now_t or clock
        opts = window(now_t)
        fleet, missing = from_cluster(cluster, cronjob, all_namespaces=all_namespaces, now=now_t, opts=opts)
        here, source = cluster.context_name or HERE, "the cluster"
    # a run record's reason, an operator's note and event text are written by anyone with patch:
    # masked like every other printer (cronctl.redact), the objects' own secrets collected first
    from cronctl.redact import Redactor

    red = Redactor()
    if from_dump is not None:
        red.learn(raw.cronjobs + raw.jobs + raw.events)
    wanted = {f.value for f in fail_on or []}
    page = None
    if html is not None and not output_given:
        # the page alone: never every history at once (page_rows)
        from cronctl.bundle.fleet import Page

        page = Page(fleet.since, now=now_t, here=here, source=source, here_heading=heading)
        result: list[History] = []
        bad = page_rows(fleet, red, page, wanted)
    else:
        result = []
        settled_ids: set[int] = set()
        for h, ids in fleet.judged():
            result.append(h)
            settled_ids |= ids
        red.data_in_place(result, settled_ids=settled_ids)
        bad = failing(result, wanted)
    missing = [red.text(m) for m in missing]
    for m in missing:
        err.print(visible(f"warning: could not read {m}; the history is judged without it"), markup=False)
    bad = [red.text(b) for b in bad]
    if html is not None:
        _write_page(result, page, now_t, red.text(here), red.text(source), red.text(heading) if heading else None,
                    html, out=out, to=err if is_document(output) or output == ListOutput.name else out)
    if is_document(output):
        emit(out, {"now": _z(now_t), "missing": missing, "cronjobs": result}, output)
    elif output == ListOutput.name:  # the Jobs the slots ran, as kubectl -o name: for xargs kubectl ...
        for h in result:
            for name in dict.fromkeys([j for r in h["slots"] for j in r["jobs"]] + [m["job"] for m in h["manual_runs"]]):
                out.print(f"job.batch/{name}", markup=False)
    elif html is None or output_given:
        for h in result:
            _render(out, h, width=None if output == ListOutput.wide else run.table_width())
    if unread:
        from cronctl.ledger.store import unreadable

        raise unreadable([red.text(u) for u in unread])
    if bad:
        err.print(visible(f"{len(bad)} slot(s) fail --fail-on: " + "; ".join(bad[:10])
                          + (" ..." if len(bad) > 10 else "")),
                  markup=False)
        raise typer.Exit(int(ExitCode.FINDINGS))


HERE = "this cluster"  # the live CronJobs' group on the page when the kubeconfig context has no name


def _given(ctx: typer.Context, name: str) -> bool:
    """Whether option ``name`` was given (on the command line or by its variable), not defaulted."""
    src = ctx.get_parameter_source(name)
    return src is not None and src.name not in ("DEFAULT", "DEFAULT_MAP")


def _write_page(result: list[History], page: Any, now: datetime, here: str, source: str, heading: str | None,
                path: str, *, out: SafeConsole, to: SafeConsole) -> None:
    """The fleet health page to ``path`` (- = stdout): of ``page`` (:class:`cronctl.bundle.fleet.Page`,
    its rows added and masked already) when given, else of ``result`` (masked already); and one line
    that names it on ``to`` (stdout, or stderr when stdout carries -o json|yaml)."""
    from cronctl.bundle.fleet import fleet_page
    from cronctl.bundle.render import render_fleet_html

    if page is not None:
        page.here, page.source, page.here_heading = here, source, heading
        model = page.model()
    else:
        model = fleet_page(result, now=now, here=here, source=source, here_heading=heading)
    text = render_fleet_html(model)
    if path == "-":
        out.file.write(text)
        out.file.flush()
        return
    from cronctl.bundle.write import write_page

    write_page(text.encode("utf-8"), path)
    to.print(visible(f"page written to {path}: {model['cronjobs']} CronJob(s), {model['slots']} slot(s); "
                     f"lost {model['lost']} in {model['lost_cronjobs']} CronJob(s), failed {model['failed']} in "
                     f"{model['failed_cronjobs']}, duplicate {model['duplicate']} "
                     f"in {model['duplicate_cronjobs']}"), markup=False)


def page_rows(fleet: Any, red: Any, page: Any, wanted: set[str]) -> list[str]:
    """Each history of ``fleet`` (:class:`cronctl.procedure.history.Fleet`) judged, masked by ``red``
    and added to ``page`` (:class:`cronctl.bundle.fleet.Page`) as its row, then dropped: a fleet's
    week is two million slots. The rows added before ``red`` learned a value are masked again at the
    end (a secret found in a later CronJob may be echoed in an earlier one's reasons). Returns the
    slots that fail ``--fail-on`` (``wanted``), not masked yet."""
    from cronctl.history import fail_on

    drawn: list[tuple[int, Any]] = []
    bad: list[str] = []
    for h, ids in fleet.judged():
        # the histories are this command's own: masked without a copy; the recorder's rows in which
        # these rules found nothing when it kept them are not read again (unless a secret is found elsewhere)
        red.data_in_place(h, settled_ids=set(ids))
        bad += fail_on([h], wanted)
        drawn.append((red.learned, page.add(h)))
    for learned, row in drawn:
        if learned < red.learned:
            _mask_row(row, red)
        else:  # the live group's name (the kubeconfig context) is masked as the page's heading is
            row["cluster"] = red.text(row["cluster"])
    return bad


def _mask_row(row: Any, red: Any) -> None:
    """A page row's texts masked again (:meth:`cronctl.redact.Redactor.text`): a secret learned from a
    later CronJob may be echoed in this one's reasons."""
    for k in ("name", "namespace", "schedule", "zone", "summary", "cluster"):
        if isinstance(row.get(k), str):
            row[k] = red.text(row[k])
    for cell in row["cells"]:
        cell["title"] = red.text(cell["title"])


def _z(t: datetime) -> str:
    from cronctl.timeutil import rfc3339_z

    return rfc3339_z(t)


_STYLE = {"ran": "green", "ran-late": "yellow", "duplicate": "bold red", "running": "cyan",
          "skipped-forbid": "red", "missed-deadline": "red", "missed-suspended": "red", "missed-too-many": "red",
          "missed": "red", "dst-skipped": "magenta", "dst-doubled": "bold magenta", "evidence-gone": "dim",
          "due": "blue", "manual": "cyan"}


def _render(out: SafeConsole, h: History, *, width: int | None) -> None:
    """One CronJob's slots as a table fitted to ``width`` (the terminal's; None, as -o wide and a pipe:
    one line per row, the reason whole at its end)."""
    from rich.text import Text

    head = f"{h['namespace']}/{h['name']}  {h['schedule']}  zone {h['zone']}  {h['concurrency_policy']}"
    if h["starting_deadline_seconds"] is not None:
        head += f"  deadline {h['starting_deadline_seconds']}s"
    if h["suspended"]:
        head += "  SUSPENDED"
    if h.get("ledger"):
        head += f"  (from the ledger: cluster {h['ledger']})"
    out.print(Text(visible(head), style="bold"))
    w = h["window"]
    if h["error"] or w is None:  # (no window: an error before the judge reached it)
        out.print(visible(f"  cannot judge the slots: {h['error']}"), markup=False)
        return
    out.print(visible(f"  slots since {w['since']} ({'limited by ' + w['limited_by']}), until {w['until']}"),
              markup=False)
    rows: list[tuple[str, list[str], list[str], str]] = []
    for r in h["slots"]:
        rows.append((r["slot"], [r["slot_local"][:16].replace("T", " "), r["slot"][11:16] + "Z", r["verdict"],
                                 _OUTCOME_CELL.get(r["outcome"], r["outcome"]),
                                 _secs(r["start_delay_seconds"]), _secs(r["duration_seconds"])],
                     r["jobs"] or ["-"], r["reason"] + effect_words(r)))
    for m in h["manual_runs"]:
        when = m["created"] or ""
        why = "manual run" + (f" by {m['operator']}" if m["operator"] else "") + (
            f" ({m['reason']})" if m["reason"] else "") + (
            f"; ran beside {', '.join(m['overlaps'])}" if m["overlaps"] else "") + (
            f"; {m['outcome']}" if m["outcome"] else "")
        local = m["created_local"] or when
        rows.append((when, [local[:16].replace("T", " "), when[11:16] + "Z", "manual",
                            _MANUAL_OUTCOME.get(m["outcome"] or "", "unknown"), "-",
                            _secs(m["duration_seconds"])], [m["job"]], why))
    table = [slot_row(cells, jobs, reason) for _k, cells, jobs, reason in sorted(rows, key=lambda x: x[0])]
    lines, starts = lay_out(list(_HEADS), "reason", table, width)
    for line in lines:
        text = Text(line.text)
        if line.kind == "row":  # the verdict and outcome cells, in their colours
            at = starts[_HEADS.index("verdict")]
            word = line.text[at:].split(" ", 1)[0]
            oat = starts[_HEADS.index("outcome")]
            outcome = line.text[oat:].split(" ", 1)[0]
            # a run that failed is never drawn in the colour of a slot whose work was done
            text.stylize(_OUTCOME_STYLE["failed"] if outcome == "failed" else _STYLE.get(word, ""), at, at + len(word))
            text.stylize(_OUTCOME_STYLE.get(outcome, ""), oat, oat + len(outcome))
        out.print(text)
    counts = ", ".join(f"{k} {n}" for k, n in h["counts"].items() if n)
    failed = h["outcome_counts"].get("failed", 0)
    tally = Text(visible(f"  {counts or 'no slot in the window'}"))
    if failed:  # the verdicts say whether Jobs were made; this says how many of them did not do the work
        tally.append(f"; failed {failed}", style=_OUTCOME_STYLE["failed"])
    out.print(tally)
    for n in h["notes"]:
        out.print(visible(f"  note: {n}"), markup=False)
    out.print("")


#: the outcome column: what became of the slot's run (cronctl.slotrows.slot_outcome); no Job: "-"
_OUTCOME_CELL = {"none": "-"}
_OUTCOME_STYLE = {"succeeded": "green", "failed": "bold red", "running": "cyan", "unknown": "dim"}
#: a manual run's outcome as its Job's end names it
_MANUAL_OUTCOME = {"Complete": "succeeded", "Failed": "failed", "running": "running"}
_HEADS = ("slot", "utc", "verdict", "outcome", "job(s)", "delay", "took")


def slot_row(cells: list[str], jobs: list[str], reason: str) -> Row:
    """A slot's row: ``cells`` = slot (local), utc, verdict, outcome, delay, took; one Job per line."""
    return Row([[c] for c in cells[:4]] + [jobs] + [[c] for c in cells[4:]], reason)


def _secs(v: Any) -> str:
    """Seconds as kubectl prints ages (cronctl.timeutil.human_duration, the one formatter), or '-'."""
    from cronctl.timeutil import human_duration

    if v is None:
        return "-"
    return human_duration(int(v)) if v >= 0 else f"{int(v)}s"  # a Job made before its slot: said as it is
