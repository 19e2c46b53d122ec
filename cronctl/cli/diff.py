"""`cronctl diff`: what the CronJob controller will do the moment a change is applied, before it is
applied (like ``kubectl diff``, for scheduling).

Thin: read the files (or ``--set``), read the live CronJobs with one list call per namespace (or a
dump, or the ledger), get the merged objects (a server-side dry-run apply, or
:func:`cronctl.change.merged` offline), hand each pair to :func:`cronctl.change.assess`, print.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from cronctl.cli import env
from cronctl.cli.common import ContextOpt, KubeconfigOpt, LedgerClusterOpt, RequestTimeoutOpt, NamespaceOpt, UsageError, emit
from cronctl.cli.common import cronjob_arg, cronjob_names, file_list
from cronctl.textsafe import visible

if TYPE_CHECKING:
    from cronctl.cli.console import SafeConsole
    from cronctl.cli.env import Environment
    from cronctl.change import Change


class DiffOutput(str, Enum):
    text = "text"
    json = "json"
    sarif = "sarif"


class FailOn(str, Enum):
    immediate = "immediate"
    catch_up = "catch-up"
    replace_running = "replace"  # (a member named replace would hide str.replace)
    dst = "dst"


#: --set keys and how their values are read
SET_KEYS = ("schedule", "timeZone", "startingDeadlineSeconds", "suspend", "concurrencyPolicy")


def diff(
    ctx: typer.Context,
    cronjob: Annotated[Optional[str], typer.Argument(
        help="With --set: the CronJob to change (cronjob/NAME or NAME). With -f: only this CronJob of the files.",
        show_default=False, metavar="CRONJOB", callback=cronjob_arg, autocompletion=cronjob_names)] = None,
    filename: Annotated[Optional[list[str]], typer.Option(
        "--filename", "-f", help="Manifest file or directory (YAML/JSON, multi-document, or a kubectl List); "
        "repeatable; - = stdin.", show_default=False, metavar="FILE")] = None,
    set_: Annotated[Optional[list[str]], typer.Option(
        "--set", help="What if FIELD were VALUE, without a file: schedule, timeZone, startingDeadlineSeconds, "
        "suspend, concurrencyPolicy (null unsets); repeatable; needs a CRONJOB.", show_default=False,
        metavar="FIELD=VALUE")] = None,
    server_side: Annotated[bool, typer.Option(
        "--server-side/--no-server-side", help="Get the object after the apply from the API server (a dry-run "
        "server-side apply: defaults and other field managers honoured); --no-server-side merges here.")] = True,
    field_manager: Annotated[str, typer.Option(
        "--field-manager", help="The field manager the apply will use (as kubectl apply's).")] = "kubectl",
    force_conflicts: Annotated[bool, typer.Option(
        "--force-conflicts", help="With --server-side: take over fields another manager owns, as the apply would.")] = False,
    from_dump: Annotated[Optional[list[str]], typer.Option(
        "--from-dump", help="Offline: the live CronJobs (and their status) from `kubectl get cronjobs,jobs -o "
        "yaml|json` output; repeatable; - = stdin.", show_default=False, metavar="FILE")] = None,
    ledger: Annotated[Optional[str], typer.Option(
        "--ledger", help="Offline: the live CronJobs as cronctl record last kept them in this ledger "
        "(postgresql://..., sqlite:///PATH or a file path).", show_default=False, metavar="URL")] = None,
    ledger_cluster: LedgerClusterOpt = None,
    now_text: Annotated[Optional[str], typer.Option(
        "--now", help="The moment of the apply (RFC3339; default: the clock, or with --from-dump the latest "
        "time in the dump).", show_default=False, metavar="INSTANT")] = None,
    output: Annotated[DiffOutput, typer.Option(
        "--output", "-o", help="text, json, or sarif (SARIF 2.1.0 for code review).")] = DiffOutput.text,
    fail_on: Annotated[Optional[list[FailOn]], typer.Option(
        "--fail-on", help="What makes the exit code 1: immediate, catch-up, replace, dst (a DST night brought "
        "in); repeatable (default: immediate, catch-up and replace: the apply creates or deletes a Job).",
        show_default=False)] = None,
    kubeconfig: KubeconfigOpt = None,
    request_timeout: RequestTimeoutOpt = None,
    context: ContextOpt = None,
    namespace: NamespaceOpt = None,
) -> None:
    """Show what the CronJob controller will do the moment a change is applied, before it is applied.

    For each CronJob of -f (or CRONJOB with --set): the scheduling fields that change, when the
    controller syncs the new object and what it does then (a Job created at once for a slot
    already past, the catch-up of an un-suspend, missed runs never made up, TooManyMissedTimes, a
    running Job deleted under Replace, running Jobs that keep the old template), the next runs
    before and after, and the DST nights of the next year brought in or removed. Exit 0: the
    apply creates and deletes no Job; 1: it does (or what --fail-on names); 5 bad input; 6 no
    such CronJob (--set); 3 a field-manager conflict (without --force-conflicts); 7 the API
    server; 9 the ledger.
    """
    from cronctl.change import NOW_KINDS
    from cronctl.errors import ExitCode

    paths = file_list(filename)
    if set_ and paths:
        raise UsageError("give -f FILE or --set FIELD=VALUE, not both")
    if not set_ and not paths:
        raise UsageError("give -f FILE (or --set FIELD=VALUE with a CRONJOB)")
    if set_ and cronjob is None:
        raise UsageError("--set needs the CRONJOB to change")
    if from_dump and ledger:
        raise UsageError("give --from-dump or --ledger, not both")
    if ledger_cluster is not None and not ledger:
        raise UsageError("--cluster names the ledger's cluster: give --ledger URL")
    run = env.of(ctx)
    v = verdicts(run, paths=paths, cronjob=cronjob, set_=set_, server_side=server_side, field_manager=field_manager,
                 force_conflicts=force_conflicts, from_dump=from_dump, ledger=ledger, ledger_cluster=ledger_cluster,
                 now_text=now_text, kubeconfig=kubeconfig, context=context, namespace=namespace)
    changes, now, source, server_version = v.changes, v.now, v.source, v.server_version
    chosen = {f.value for f in fail_on} if fail_on else set(NOW_KINDS)
    failing = [c for _p, _o, c in changes if c.fails(chosen)]
    if output is DiffOutput.json:
        emit(run.out, {"now": _z(now), "source": source, "serverVersion": server_version,
              "merge": "server-side dry-run apply" if v.server_side else "local", "apiRequests": v.requests,
              "failOn": sorted(chosen), "fails": bool(failing),
              "cronjobs": [c.as_dict() for _p, _o, c in changes]}, "json")
    elif output is DiffOutput.sarif:
        from cronctl import __version__
        from cronctl.lint.sarif import to_sarif

        findings, rules, texts = _sarif_parts(changes, chosen)
        emit(run.out, to_sarif(findings, tool_version=__version__, texts=texts, rules=rules), "json")
    else:
        _print(run.out, changes, now, source)
    if failing:
        raise typer.Exit(int(ExitCode.APPLY_ACTS))


@dataclass
class Verdicts:
    """The verdicts of one run, with what they were judged against."""

    changes: list[tuple[str, dict[str, Any], Change]]  # (source file or "--set", the object, the verdict)
    now: datetime
    source: str  # "the cluster", "the dump FILE", "the ledger"
    server_version: str | None
    server_side: bool  # the objects after the apply came from a dry-run apply
    requests: int | None = None  # the API requests made (None: offline)


def verdicts(run: Environment, *, paths: list[str], cronjob: str | None, set_: list[str] | None, server_side: bool,
             field_manager: str, force_conflicts: bool, from_dump: list[str] | None, ledger: str | None,
             ledger_cluster: str | None, now_text: str | None, kubeconfig: str | None, context: str | None,
             namespace: str | None) -> Verdicts:
    """Read the inputs and the live objects, and judge each change (``diff`` and ``explain --if-applied``)."""
    from cronctl.change import assess, merged
    from cronctl.errors import NotFound
    from cronctl.model import instant

    clock = run.now()
    now = instant(now_text, what="--now") if now_text else None

    # --- the inputs ---------------------------------------------------------------------------
    wanted: list[tuple[str, dict[str, Any]]] = []  # (source file, object)
    if paths:
        wanted = _read_files(paths, cronjob)

    # --- the live objects ---------------------------------------------------------------------
    jobs: list[dict[str, Any]] | None = None
    server_version: str | None = None
    cluster: Any = None
    source: str
    if from_dump:
        from cronctl.bundle.dump import load_dump

        raw = load_dump(file_list(from_dump), namespace=None, now=now, collected_at=clock, all_namespaces=True)
        now = raw.now
        live_objs, jobs = raw.cronjobs, raw.jobs
        source = "the dump " + ", ".join(from_dump)
    elif ledger:
        from cronctl.cli.common import ledger_choice
        from cronctl.ledger.store import evidence_for
        from cronctl.model import ANN_LEDGER, annotations

        now = now or clock
        _on, url = ledger_choice(ledger)
        ev = evidence_for(url, None if ledger_cluster == "all" else ledger_cluster, namespace=None, name=None, since=now,
                          strict=True)  # a row that does not decode: exit 9, one line (docs/LEDGER.md)
        live_objs = [_unmarked(c) for c in ev.cronjobs
                     if "; deleted" not in annotations(c).get(ANN_LEDGER, "")]  # deleted: a create now
        jobs = ev.jobs
        source = "the ledger"
    else:

        now = now or clock
        cluster = run.connect(kubeconfig, context, namespace)
        server_version = cluster.server_version()
        live_objs = []
        default_ns = namespace or cluster.namespace
        spaces = sorted({_ns_of(o, default_ns) for _p, o in wanted} if wanted else {default_ns})
        for ns in spaces:  # ONE list call per namespace, however many CronJobs the files hold
            live_objs += cluster.list_cronjobs_in(ns)
        source = "the cluster"
    default_ns = namespace or (cluster.namespace if cluster is not None else "default")
    live = {(_ns_of(o, default_ns), str((o.get("metadata") or {}).get("name") or "")): o for o in live_objs}

    if set_:
        key = (default_ns, str(cronjob))
        if namespace is None and key not in live:  # offline without -n: the one namespace that has it
            found = [k for k in live if k[1] == cronjob]
            key = found[0] if len(found) == 1 else key
        if key not in live:
            raise NotFound(f"cronjob {key[0]}/{key[1]} not found in {source}")
        wanted = [("--set", _with_sets(live[key], set_))]
        default_ns = key[0]

    # --- the verdicts -------------------------------------------------------------------------
    changes = []
    for path, obj in wanted:
        ns = _ns_of(obj, default_ns)
        obj.setdefault("metadata", {})["namespace"] = ns
        before = live.get((ns, str(obj["metadata"].get("name") or "")))
        if cluster is not None and server_side and path != "--set":
            after = cluster.apply_cronjob(_for_apply(obj), field_manager=field_manager, dry_run=True,
                                          force_conflicts=force_conflicts)
            if before is None:
                after.setdefault("metadata", {}).pop("creationTimestamp", None)
        else:
            after = merged(before, obj, manager=field_manager)
        changes.append((path, obj, assess(before, after, now, server_version=server_version, jobs=jobs)))

    return Verdicts(changes, now, source, server_version, cluster is not None and server_side and not set_,
                    cluster.request_count if cluster is not None else None)


def explain_if_applied(run: Environment, path: str, name: str | None, *, now_text: str | None, output: str, kubeconfig: str | None,
                       context: str | None, namespace: str | None) -> None:
    """``explain --if-applied FILE``: diff's verdict on the file's one CronJob against the live one
    (a dry-run server-side apply as field manager kubectl), as diff prints it or as its JSON object."""
    from cronctl.errors import BadInput

    v = verdicts(run, paths=[path], cronjob=name, set_=None, server_side=True, field_manager="kubectl",
                 force_conflicts=False, from_dump=None, ledger=None, ledger_cluster=None, now_text=now_text,
                 kubeconfig=kubeconfig, context=context, namespace=namespace)
    if len(v.changes) != 1:
        raise BadInput(f"{path}: --if-applied explains one CronJob and this file has {len(v.changes)}: "
                       "give cronjob/NAME to pick one")
    if output == "text":
        _print(run.out, v.changes, v.now, v.source)
    else:
        emit(run.out, v.changes[0][2].as_dict(), output)


def _z(t: datetime) -> str:
    from cronctl.timeutil import rfc3339_z

    return rfc3339_z(t)


def _unmarked(cronjob: dict[str, Any]) -> dict[str, Any]:
    """A CronJob read from the ledger without the annotation the ledger adds (which cluster kept it)."""
    from cronctl.model import ANN_LEDGER

    meta = dict(cronjob.get("metadata") or {})
    meta["annotations"] = {k: v for k, v in (meta.get("annotations") or {}).items() if k != ANN_LEDGER}
    if not meta["annotations"]:
        del meta["annotations"]
    return {**cronjob, "metadata": meta}


def _ns_of(obj: dict[str, Any], default: str) -> str:
    return str((obj.get("metadata") or {}).get("namespace") or default)


def _read_files(paths: list[str], only: str | None) -> list[tuple[str, dict[str, Any]]]:
    import os

    from cronctl.errors import BadInput, NotFound
    from cronctl.manifest import load_objects
    from cronctl.model import check_objects

    files: list[str] = []
    for p in paths:
        if p != "-" and os.path.isdir(p):
            files += sorted(os.path.join(p, f) for f in os.listdir(p)
                            if f.endswith((".yaml", ".yml", ".json")) and os.path.isfile(os.path.join(p, f)))
        else:
            files.append(p)
    out: list[tuple[str, dict[str, Any]]] = []
    for f in files:
        cjs = [o for o in load_objects(f) if o.get("kind") == "CronJob"]
        check_objects(cjs, f)
        for o in cjs:
            if not str((o.get("metadata") or {}).get("name") or ""):
                raise BadInput(f"{f}: a CronJob without metadata.name")
        out += [(f, o) for o in cjs]
    if not out:
        raise BadInput(f"{', '.join(paths)}: no CronJob in the input")
    if only is not None:
        out = [(f, o) for f, o in out if o["metadata"]["name"] == only]
        if not out:
            raise NotFound(f"no CronJob named {only} in {', '.join(paths)}")
    return out


def _with_sets(live: dict[str, Any], sets: list[str]) -> dict[str, Any]:
    """The live CronJob with ``--set`` applied to its spec (a merge patch: exactly those fields)."""
    import copy

    from cronctl.errors import BadInput

    obj = copy.deepcopy(live)
    spec = obj.setdefault("spec", {})
    for item in sets:
        key, sep, value = item.partition("=")
        if not sep or key not in SET_KEYS:
            raise BadInput(f"bad --set {item!r}: expected FIELD=VALUE with FIELD one of {', '.join(SET_KEYS)}")
        parsed: Any
        if value == "null":
            parsed = None
        elif key == "startingDeadlineSeconds":
            if not value.isdigit():
                raise BadInput(f"bad --set {item!r}: startingDeadlineSeconds is a whole number of seconds >= 0")
            parsed = int(value)
        elif key == "suspend":
            if value not in ("true", "false"):
                raise BadInput(f"bad --set {item!r}: suspend is true or false")
            parsed = value == "true"
        elif key == "concurrencyPolicy":
            if value not in ("Allow", "Forbid", "Replace"):
                raise BadInput(f"bad --set {item!r}: concurrencyPolicy is Allow, Forbid or Replace")
            parsed = value
        else:
            if not value:
                raise BadInput(f"bad --set {item!r}: an empty {key} (null unsets it)")
            parsed = value
        if key == "schedule" and parsed is None:
            raise BadInput("bad --set 'schedule=null': a CronJob needs a schedule")
        if parsed is None:
            spec.pop(key, None)
        else:
            spec[key] = parsed
    if spec.get("timeZone") is not None or "schedule" in {s.partition("=")[0] for s in sets}:
        from cronctl.schedule import parse

        parse(str(spec.get("schedule") or ""), spec.get("timeZone"))  # BadInput naming the field
    return obj


def _for_apply(obj: dict[str, Any]) -> dict[str, Any]:
    """The manifest as an apply sends it: no status, no server-owned metadata."""
    body = {k: v for k, v in obj.items() if k != "status"}
    meta = {k: v for k, v in (obj.get("metadata") or {}).items()
            if k not in ("resourceVersion", "uid", "creationTimestamp", "managedFields", "generation", "selfLink")}
    body["metadata"] = meta
    body.setdefault("apiVersion", "batch/v1")
    return body


def _value(v: Any) -> str:
    if v is None:
        return "unset"
    if isinstance(v, bool):
        return "true" if v else "false"
    return repr(v) if isinstance(v, str) else str(v)


def _print(out: SafeConsole, changes: list[tuple[str, dict[str, Any], Any]], now: datetime, source: str) -> None:
    from cronctl.timeutil import local_and_utc

    def line(text: str) -> None:
        out.print(visible(text), markup=False, highlight=False, soft_wrap=True)

    acting = 0
    for _path, _obj, c in changes:
        ref = f"{c.namespace}/{c.name}"
        now_effects = [e for e in c.effects if e.now]
        if c.error:
            head = f"{ref}: the controller cannot schedule it after the apply: {c.error}"
        elif now_effects:
            acting += 1
            head = f"{ref}: applying this {'creates' if c.job_name else 'changes'} " + (
                f"Job {c.job_name}" if c.job_name else "running Jobs")
            head += (" and deletes " + ", ".join(c.replaces)) if c.replaces else ""
            head += f" ({', '.join(k for k in c.kinds if k != 'dst')})"
        elif not c.exists:
            head = f"{ref}: new CronJob: nothing runs at once" + (
                f"; its first run is at {local_and_utc(c.next_after[0], c.zone_after)}" if c.next_after else "")
        elif c.unchanged:
            head = f"{ref}: no change"
        else:
            head = f"{ref}: no Job is created or deleted by this apply"
        line(head)
        for ch in c.changes if c.exists else ():
            line(f"  {ch.field}: {_value(ch.before)} -> {_value(ch.after)}"
                 if ch.field != "jobTemplate" else "  jobTemplate: changed")
        for e in c.effects:
            mark = "NOW" if e.now else e.kind
            line(f"  {mark}: {e.text}")
        if c.sync_why and not c.unchanged:
            line(f"  when: {c.sync_why}")
        if c.exists and (c.next_before != c.next_after or c.zone_before != c.zone_after):
            line("  next runs:  before -> after")
            for i in range(max(len(c.next_before), len(c.next_after))):
                b = local_and_utc(c.next_before[i], c.zone_before) if i < len(c.next_before) else "-"
                a = local_and_utc(c.next_after[i], c.zone_after) if i < len(c.next_after) else "-"
                line(f"    {b}  ->  {a}")
    n = len(changes)
    line(f"{n} CronJob{'s' if n != 1 else ''} at {_z(now)} against {source}: "
         + (f"{acting} create or delete a Job now" if acting else "no Job created or deleted now"))


#: SARIF rule of each effect kind (ids are stable)
_RULES = {
    "immediate": ("CD001", "runs-at-once", "The apply makes the controller start a Job for a slot already past",
                  "An edit of schedule or timeZone whose new slots fall between status.lastScheduleTime and the "
                  "apply makes the controller start that run at its next sync (kubernetes/kubernetes#63371).",
                  "Apply it right after a run, or set startingDeadlineSeconds so that old slots are not started."),
    "catch-up": ("CD002", "unsuspend-catch-up", "Un-suspending starts the most recent missed run",
                 "The controller syncs at once when suspend becomes false and starts the most recent missed run "
                 "within startingDeadlineSeconds (any age when unset).",
                 "Set startingDeadlineSeconds, or `cronctl resume --catch-up none`."),
    "replace": ("CD003", "replace-kills", "concurrencyPolicy Replace deletes a running Job",
                "Under Replace the controller deletes every active Job before it creates the next one.",
                "Let the running Job finish first, or keep Forbid/Allow."),
    "dst": ("CD004", "dst-night", "The change brings in a DST night that skips or doubles runs",
            "In a zone with DST, wall-clock times inside the spring gap are skipped and those in the autumn "
            "fold run twice (docs/SEMANTICS.md §3).",
            "Schedule outside 01:00-03:00 local time, or use a zone without DST."),
}


def _sarif_parts(changes: list[tuple[str, dict[str, Any], Any]], chosen: set[str]) -> tuple[list[Any], list[Any], dict[str, str]]:
    from cronctl.errors import CronctlError
    from cronctl.lint.engine import Finding
    from cronctl.lint.rules import Rule
    from cronctl.manifest import read_text

    rules = [Rule(id=i, name=n, severity="error", summary=s, why=w, fix=f, check=None)
             for i, n, s, w, f in _RULES.values()]
    by_kind = {k: r for k, r in zip(_RULES, rules)}
    findings: list[Any] = []
    texts: dict[str, str] = {}
    for path, _obj, c in changes:
        if path not in ("-", "--set") and path not in texts:
            try:
                texts[path] = read_text(path)
            except CronctlError:  # it was read once already; a line number is only a help
                pass
        for e in c.effects:
            if e.kind not in _RULES or (e.kind != "dst" and not e.now):
                continue
            if e.kind == "dst" and not e.text.startswith("DST night brought in"):
                continue
            r = by_kind[e.kind]
            findings.append(Finding(
                rule=r.id, name=r.name, severity="error" if e.kind in chosen else "warning",
                message=e.text, why=r.why, fix=r.fix, field=_field(e.kind), kind="CronJob",
                namespace=c.namespace, object_name=c.name, source=None if path == "--set" else path))
    return findings, rules, texts


def _field(kind: str) -> str:
    return {"immediate": "spec.schedule", "catch-up": "spec.suspend", "replace": "spec.concurrencyPolicy",
            "dst": "spec.schedule"}[kind]
