"""The runbooks (runbooks/*.md, shipped in the package as cronctl/templates/runbooks/) and their
rendering with jinja2 (StrictUndefined: a name a template uses but the context lacks fails loudly).

``runbook_context(cronjob, now)`` turns a live CronJob dict into the values the templates use
(real namespace, name, schedule, zone, suspend, active Jobs, last schedule, next runs from the
engine, what unsuspending would do); ``runbook_context(None, now)`` gives shell-variable
placeholders (``$NS``, ``$CJ``) so the same commands paste into a terminal. Pure apart from
reading the template files; never reads the clock.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from importlib import resources
from typing import Any

from cronctl.errors import BadInput, ExitCode

Obj = dict[str, Any]

#: Every runbook, in the order `cronctl runbook` lists them.
NAMES: tuple[str, ...] = (
    "manual-run", "incident-bundle", "catch-up-after-suspend", "dst-transition",
    "forbid-is-not-a-lock", "application-locking", "claim", "gitops", "alerts", "rbac", "exit-codes",
)

#: What each exit code means, for runbooks/exit-codes.md. A test checks every ExitCode is here.
EXIT_CODE_MEANINGS: dict[str, str] = {
    "OK": "Success: the command did what it said (for run-manual: the Job completed and the CronJob was restored).",
    "JOB_FAILED": "The manual Job ended Failed. The CronJob stays suspended with the record saying why.",
    "USAGE": "Usage error: unknown flag, missing or malformed argument (click/typer), or any bad value of a duration or number "
             "flag, malformed, out of its range or past its cap (--timeout abc, --timeout 0, --count 10001, "
             "--until in the past, --request-timeout -1s, a label selector the server cannot parse).",
    "REFUSED": "A precondition refused the action before anything changed: locked by another run, "
               "active or unfinished child Jobs, the Job name exists, a Job already stands for the "
               "slot, a permission is missing, already paused, a run record cronctl did not write "
               "(restore without --force), an --out that exists, a GitOps controller (Argo CD self-heal, "
               "an unknown server-side applier) that would put spec.suspend back during the hold "
               "(--gitops; cronctl runbook gitops).",
    "TIMEOUT": "The wait ran out (--timeout). Nothing was restored; the Job may still run.",
    "BAD_INPUT": "Malformed input: schedule, zone, RFC3339 time, manifest, dump or kubeconfig file, "
                 "a CronJob, Job or namespace name that is not a Kubernetes name; run-manual --occurrence "
                 "not a slot of the schedule or in the future; a run directory or bundle target that is "
                 "unsafe (world-writable without sticky bit, another user's), read-only, full or missing.",
    "NOT_FOUND": "The named CronJob (or other object) does not exist in that namespace.",
    "API_ERROR": "The API server is unreachable (refused, or no answer within --request-timeout, default 10s) or "
                 "answered with an error cronctl does not handle.",
    "FINDINGS": "cronctl lint found something at or above --fail-on (default: error); cronctl history "
                "--fail-on found a lost (lost) or doubled (duplicate) slot.",
    "LEDGER": "The ledger (--ledger or CRONCTL_LEDGER: SQLite or PostgreSQL) cannot be opened, migrated, read "
              "or written; cronctl record exits so when its write buffer fills while the ledger is down.",
    "DUPLICATE": "run-manual, backfill or wait went on to the end, but during the hold a Job of the CronJob that "
                 "cronctl did not make was created (the controller acting on a cache that had not seen the "
                 "suspend, a revert of the hold, or another client): it ran beside this run. Each such Job is "
                 "named with its cause on the terminal, in the run record (hold_guard.beside) and as a "
                 "CronctlDuplicate Event; check its effect (the same work may have run twice).",
    "NO_OCCURRENCE": "cronctl claim found no scheduled occurrence to claim (no scheduled-timestamp or cronctl "
                     "occurrence annotation, not a slot-named Job, no --occurrence): COMMAND was not run.",
    "CLAIM_HELD": "cronctl claim: another attempt holds the occurrence under a live lease (the line names its Job "
                  "and the lease's end); COMMAND was not run. --wait waits for it.",
    "CLAIM_FINAL": "cronctl claim: the occurrence failed finally (an exit code of --final-exit); COMMAND was not "
                   "run. --replay REASON runs it again and records why.",
    "LEASE_LOST": "cronctl claim: the lease was taken over, or could not be renewed before it expired, while "
                  "COMMAND ran; COMMAND was stopped and nothing was recorded for this attempt.",
    "INTERNAL": "An unexpected exception (a bug in cronctl): one line `internal error: TYPE: MESSAGE` on "
                "stderr. Report it with the command line; --debug or CRONCTL_DEBUG=1 prints the traceback.",
    "INTERRUPTED": "Ctrl-C, SIGINT or SIGTERM. run-manual leaves a state `cronctl status` explains "
                   "and `cronctl restore` finishes.",
}


@dataclass(frozen=True)
class RunbookInfo:
    name: str
    title: str


def _dir() -> Any:
    return resources.files("cronctl") / "templates" / "runbooks"


def _source(name: str) -> str:
    if name not in NAMES:
        raise BadInput(f"unknown runbook '{name}': expected one of {', '.join(NAMES)}")
    try:
        return str((_dir() / f"{name}.md").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadInput(f"runbook '{name}' is missing from this installation") from None


def list_runbooks() -> list[RunbookInfo]:
    """Every runbook with its title (the first '# ' line of its file)."""
    out = []
    for name in NAMES:
        m = re.search(r"^# (.+)$", _source(name), re.MULTILINE)
        out.append(RunbookInfo(name, m.group(1).strip() if m else name))
    return out


def render(name: str, context: dict[str, Any]) -> str:
    """Render runbook ``name`` with ``context`` (jinja2, StrictUndefined)."""
    import jinja2

    def load(partial: str) -> str:  # "{% include '_state.md' %}": partials live beside the runbooks
        return str((_dir() / partial).read_text(encoding="utf-8"))

    env = jinja2.Environment(loader=jinja2.FunctionLoader(load), undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True, autoescape=False)
    try:
        return env.from_string(_source(name)).render(**context)
    except jinja2.UndefinedError as e:  # a template bug, not the user's: say which runbook
        raise BadInput(f"runbook '{name}' uses an unknown value: {e.message}") from None


# --------------------------------------------------------------------------- context


def _q(value: str) -> str:
    """``value`` as one shell word (placeholders like "$NS" stay expandable)."""
    if re.fullmatch(r"[A-Za-z0-9_./:@%+=,-]+", value):
        return value
    if value.startswith("$"):
        return f'"{value}"'
    return "'" + value.replace("'", "'\"'\"'") + "'"


def exit_codes() -> list[dict[str, Any]]:
    return [{"name": c.name, "code": int(c), "meaning": EXIT_CODE_MEANINGS[c.name]} for c in ExitCode]


def runbook_context(cronjob: Obj | None, now: datetime, *, namespace: str | None = None,
                    next_count: int = 5) -> dict[str, Any]:
    """The values every runbook may use. ``cronjob`` None = placeholders ($NS, $CJ, ...)."""
    from cronctl.timeutil import rfc3339_z

    base: dict[str, Any] = {
        "now": rfc3339_z(now.replace(microsecond=0)),
        "exit_codes": exit_codes(),
        "live": cronjob is not None,
    }
    if cronjob is None:
        ns = namespace or "$NS"
        base.update({
            "ns": ns, "name": "$CJ", "ns_arg": _q(ns), "name_arg": _q("$CJ"),
            "schedule": "<schedule>", "time_zone": "<timeZone>", "zone": "<zone>",
            "zone_note": "", "suspend": "<suspend>", "active": [], "last_schedule": "<lastScheduleTime>",
            "last_successful": "<lastSuccessfulTime>", "concurrency": "<concurrencyPolicy>",
            "starting_deadline": "<startingDeadlineSeconds>", "next_runs": [], "record": None,
            "unsuspend": None, "dst": [], "transitions": [], "description": "",
            "manual_job": "$CJ-manual", "service_account": "$CJ", "service_account_set": False,
            "gitops": None,
        })
        return base
    from cronctl.gitops import detect

    seen = detect(cronjob)
    return {**base, **_live(cronjob, now, next_count), "gitops": seen.words() if seen.tool else None}


def _live(cj: Obj, now: datetime, next_count: int) -> dict[str, Any]:
    from zoneinfo import ZoneInfo

    from cronctl import model
    from cronctl.errors import CronctlError, ScheduleError
    from cronctl.schedule.dst import dst_hits, zone_transitions
    from cronctl.schedule import parse
    from cronctl.timeutil import rfc3339_local, rfc3339_z

    view = model.cronjob_view(cj)
    status = cj.get("status") or {}
    name = view.name
    ns = view.namespace or "default"
    expr = view.schedule
    tz = view.time_zone
    sa = view.service_account
    has_sa = sa is not None and sa != "default"
    ctx: dict[str, Any] = {
        "ns": ns, "name": name, "ns_arg": _q(ns), "name_arg": _q(name), "schedule": expr,
        "time_zone": tz or "", "suspend": "true" if view.suspended else "false",
        "active": list(view.active),
        "last_schedule": status.get("lastScheduleTime") or "never",
        "last_successful": status.get("lastSuccessfulTime") or "never",
        "concurrency": view.concurrency_policy or "Allow (not set)",
        "starting_deadline": str(view.starting_deadline) if view.starting_deadline is not None else "not set",
        "manual_job": f"{name}-manual",
        # the pod's own account, or (it runs as "default") a dedicated one named like the CronJob
        "service_account": sa if has_sa else name, "service_account_set": has_sa,
        "record": None, "next_runs": [], "unsuspend": None, "dst": [], "transitions": [], "description": "",
    }
    rec = model.read_record(cj)
    if rec is not None:
        ctx["record"] = asdict(rec)  # the template reads its fields
    try:
        sched = parse(expr, tz)
    except ScheduleError as e:
        ctx.update({"zone": tz or "UTC", "zone_note": f"(schedule does not parse: {e.message})"})
        return ctx
    zone = ZoneInfo(sched.zone)
    ctx["zone"] = sched.zone
    ctx["zone_note"] = ("" if tz else
                        "(spec.timeZone not set: the controller's local zone, normally UTC)" if not sched.zone_from_prefix
                        else "(from a TZ= prefix in the schedule)")
    from cronctl.schedule.describe import describe

    ctx["description"] = describe(sched, tz)
    ctx["next_runs"] = [{"utc": rfc3339_z(r), "local": rfc3339_local(r.astimezone(zone))}
                        for r in sched.runs(now, next_count)]
    ctx["transitions"] = [
        {"at": rfc3339_z(t.at), "kind": "gap (spring forward)" if t.kind == "gap" else "repeat (fall back)",
         "local": f"{t.wall_start:%Y-%m-%d %H:%M}-{t.wall_end:%H:%M}"}
        for t in zone_transitions(sched.zone, now, now + timedelta(days=366))
    ][:4]
    ctx["dst"] = [
        {"date": str(h.local_date), "kind": "skipped" if h.transition.kind == "gap" else "runs twice",
         "times": ", ".join(s.strftime("%H:%M") for s in h.slots)}
        for h in dst_hits(sched, now)
    ]
    try:
        d = view.decide(now)
    except CronctlError as e:  # a field of the wrong type, a negative deadline: as status says it
        ctx["unsuspend"] = {"decision": f"error: {e.message}", "would_start": None, "job_name": None,
                            "missed": 0, "never_made_up": 0, "many": False}
        return ctx
    ctx["unsuspend"] = {
        "decision": d.decision,
        "would_start": rfc3339_z(d.most_recent) if d.most_recent else None,
        "job_name": d.job_name,
        "missed": d.missed_count,
        "never_made_up": len(d.never_made_up),
        "many": d.missed == "many",
    }
    return ctx
