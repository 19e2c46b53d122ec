"""The ``cronctl explain`` service: one schedule or one CronJob in, one typed :class:`Explanation` out.

Pure apart from what its caller gives it: no clock (``now``/``after`` are parameters), no
network, no kubernetes import, no typer/rich. The results are frozen dataclasses: instants are
aware datetimes, DST changes the engine's own events placed in the schedule's zone, the
controller's part the view's own decision. The ``cronctl explain -o json`` document (camelCase,
RFC3339; docs/OUTPUT.md, the section "the contract") is made of them in ``cronctl/cli/explain.py``
(``explanation_doc``), and the text is printed from that document.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING, Any, Sequence, Union

from cronctl.errors import BadInput, BadUsage, CronctlError
from cronctl.model import CronJobView, cronjob_view
from cronctl.timeutil import UTC, human_duration, rfc3339_z

if TYPE_CHECKING:
    from cronctl.schedule.controller import Decision
    from cronctl.schedule.dst import DstEvent

Obj = dict[str, Any]

DIALECTS = ("kubernetes", "atlas")
#: --count at most (each run is one Next() and one line; 10,000,000 took 765 MB at 60 s uncapped).
MAX_COUNT = 10_000
#: --missed-limit at most (Atlas walks and lists that many due runs: 100,000,000 took 93 s uncapped).
MAX_MISSED_LIMIT = 10_000
#: ``--starting-deadline``: spec.startingDeadlineSeconds is an int64 in the API (above
#: cronctl.model.MAX_DEADLINE_SECONDS it acts as that, 10,000 years)
MAX_STARTING_DEADLINE = 2 ** 63 - 1
DEFAULT_NAME = "cronjob"
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


@dataclass(frozen=True)
class ControllerInputs:
    """What the controller would know at one sync at ``now``: the CronJob's controller inputs as the
    one view of them (:class:`cronctl.model.CronJobView`: read from the object, or made of the flags by
    :func:`given`); ``view.created`` or ``view.last_schedule`` is required. ``missed_limit`` is
    Atlas's alone (missedScheduleLimit)."""

    now: datetime
    view: CronJobView
    missed_limit: int | None = None

    def __post_init__(self) -> None:
        # the numeric flags' caps, refused whatever else is given (docs/LIMITS.md "Limits")
        if self.missed_limit is not None and self.missed_limit > MAX_MISSED_LIMIT:
            raise BadUsage(f"bad --missed-limit {self.missed_limit}: at most {MAX_MISSED_LIMIT} due runs are started "
                           "per pass")
        deadline = self.view.starting_deadline
        if deadline is not None and deadline > MAX_STARTING_DEADLINE:
            raise BadInput(f"bad --starting-deadline {deadline}: at most {MAX_STARTING_DEADLINE} "
                           "(int64, the API's type; MAX_STARTING_DEADLINE)")


# --- the results ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Instant:
    """One run: the instant, and the same instant on the wall clock of the schedule's zone."""

    utc: datetime
    local: datetime  # ``utc`` in the schedule's zone

    @property
    def weekday(self) -> str:
        """The weekday of the local date ('Mon'...'Sun')."""
        return _WEEKDAYS[self.local.weekday()]


@dataclass(frozen=True)
class DstChange:
    """One DST change touching the runs (:class:`cronctl.schedule.dst.DstEvent`), in the zone the
    schedule runs in: the runs it adds or loses are :class:`Instant` values of that zone."""

    event: DstEvent
    tz: tzinfo

    @property
    def extra(self) -> tuple[Instant, ...]:
        """Runs the walk across the change lands on that the schedule does not name."""
        return tuple(instant(t, self.tz) for t in self.event.extra)

    @property
    def lost(self) -> tuple[Instant, ...]:
        """Runs the schedule names that the walk across the change never lands on."""
        return tuple(instant(t, self.tz) for t in self.event.lost)


@dataclass(frozen=True)
class KubeController:
    """What the Kubernetes CronJob controller does at one sync at ``now`` (the view's own decide())."""

    now: datetime
    view: CronJobView  # the inputs decided on: suspend, policy, active
    unsuspended: Decision  # what a sync that runs decides (suspend aside): the times, the Job, the runs
    actual: Decision  # what this sync does: ``unsuspended`` unless the CronJob is suspended
    dst: tuple[DstChange, ...]  # DST changes inside the window the controller looks at
    summary: tuple[str, ...]  # the decision in words, one sentence per fact


@dataclass(frozen=True)
class AtlasController:
    """What Atlas's RunOnce does at ``now``: every due run from ``base``, the earliest first, up to the limit."""

    now: datetime
    suspended: bool
    base: datetime  # lastScheduleTime, else the creation time
    missed_limit: int  # the limit in force (the default when unset or <= 0)
    due: tuple[datetime, ...]
    more_due: bool  # more runs are due than the limit
    summary: tuple[str, ...]


Controller = Union[KubeController, AtlasController]


@dataclass(frozen=True)
class Explanation:
    """One schedule (or CronJob) explained: its words, zone, next runs, DST changes, the API
    server's and cronctl's warnings and, given controller inputs, the controller's decision."""

    name: str | None  # the CronJob's (or --name); with ``namespace``, shown when either is set
    namespace: str | None
    dialect: str  # kubernetes | atlas
    schedule: str
    time_zone: str | None  # spec.timeZone (Atlas: timezone) as given
    zone: str  # the zone the schedule runs in
    zone_source: str  # timeZone | prefix | controller-local | timezone | default-utc
    description: str
    never_fires: bool
    after: datetime  # the runs listed are strictly after this
    next: tuple[Instant, ...]
    dst: tuple[DstChange, ...]
    warnings: tuple[str, ...]
    controller: Controller | None = None

    @property
    def named(self) -> bool:
        """Whether the explanation names a CronJob (the document then has ``namespace`` and ``name``)."""
        return self.name is not None or self.namespace is not None


def given(now: datetime, *, created: datetime | None = None, last_schedule: datetime | None = None,
          starting_deadline: int | None = None, suspended: bool = False, name: str = DEFAULT_NAME,
          missed_limit: int | None = None, concurrency_policy: str | None = None,
          active: tuple[str, ...] = ()) -> ControllerInputs:
    """Controller inputs given as flags (``--created``, ``--last-schedule``, ``--starting-deadline``,
    ``--suspended``, ``--concurrency-policy``, ``--active``): the view of a CronJob that says only
    these; over an object, :func:`explain_object` lays the ones given over its own."""
    return ControllerInputs(now=now, missed_limit=missed_limit, view=CronJobView(
        name=name, namespace="", uid="", schedule="", time_zone=None, created=created, last_schedule=last_schedule,
        last_successful=None, starting_deadline=starting_deadline, suspended=suspended,
        concurrency_policy=concurrency_policy, active=active))


def _zone(name: str) -> tzinfo:
    from zoneinfo import ZoneInfo

    try:
        return ZoneInfo(name)
    except (KeyError, ValueError, OSError):
        return UTC


def instant(t: datetime, tz: tzinfo) -> Instant:
    """One run ``t`` and its wall-clock time in ``tz``."""
    return Instant(utc=t, local=t.astimezone(tz))


def _local_words(t: datetime, tz: tzinfo) -> str:
    """'14:10 MSK on Wed 2026-12-02' - how an operator reads a run in the CronJob's zone."""
    local = t.astimezone(tz)
    abbr = local.tzname() or ""
    return f"{local:%H:%M} {abbr} on {_WEEKDAYS[local.weekday()]} {local:%Y-%m-%d}".replace("  ", " ")


def _runs_words(ts: Sequence[datetime], tz: tzinfo, shown: int = 6) -> str:
    """'3 runs (14:10, 14:20, 14:30 MSK on Wed 2026-12-02)': the count, the first few, in the zone,
    the times of one day together."""
    n = len(ts)
    days: list[tuple[str, list[str]]] = []
    for t in ts[:shown]:
        local = t.astimezone(tz)
        day = f"{local.tzname() or ''} on {_WEEKDAYS[local.weekday()]} {local:%Y-%m-%d}".strip()
        if not days or days[-1][0] != day:
            days.append((day, []))
        days[-1][1].append(f"{local:%H:%M}")
    head = "; ".join(f"{', '.join(times)} {day}" for day, times in days)
    more = f"; and {n - shown} more" if n > shown else ""
    return f"{n} run{'s' if n != 1 else ''} ({head}{more})"


def explain_schedule(expr: str, *, time_zone: str | None, after: datetime, count: int = 10,
                     dialect: str = "kubernetes", controller: ControllerInputs | None = None,
                     name: str | None = None, namespace: str | None = None,
                     api_create: bool = True) -> Explanation:
    """Explain one schedule: words, the next ``count`` runs after ``after``, DST events, and
    (given ``controller``) what the controller decides at ``controller.now``.

    Raises ScheduleError (bad expression or zone) and BadInput (bad controller inputs).
    """
    from cronctl.schedule.describe import describe, never_fires_reason
    from cronctl.schedule.dst import dst_events

    if dialect not in DIALECTS:
        raise BadInput(f"unknown dialect {dialect!r}: expected one of {', '.join(DIALECTS)}")
    if count < 0:
        raise BadUsage(f"bad --count {count}: must be 0 or more")
    if count > MAX_COUNT:
        raise BadUsage(f"bad --count {count}: at most {MAX_COUNT} runs are listed")
    limit = controller.missed_limit if controller is not None else None
    if limit is not None and limit > MAX_MISSED_LIMIT:
        raise BadUsage(f"bad --missed-limit {limit}: at most {MAX_MISSED_LIMIT} due runs are started per pass")
    atlas = dialect == "atlas"
    if atlas:
        from cronctl.schedule.atlas import parse_atlas

        sched: Any = parse_atlas(expr, time_zone)
        zone_source = "timezone" if time_zone else "default-utc"
    else:
        from cronctl.schedule import parse

        sched = parse(expr, time_zone)
        zone_source = "prefix" if sched.zone_from_prefix else ("timeZone" if time_zone is not None else "controller-local")
    tz = _zone(sched.zone)
    runs = list(sched.runs(after, count)) if count else []
    never = never_fires_reason(sched, and_rule=atlas) if getattr(sched, "every", None) is None else None
    horizon_note = None
    if never is None and count and not runs:
        never = horizon_note = (
            "no run within Atlas's one-year search horizon from " if atlas
            else "no run within robfig's five-year search horizon from ") + rfc3339_z(after)
    events = dst_events(sched, after, runs, and_rule=atlas)
    description = describe(sched, sched.zone if atlas else time_zone, and_rule=atlas)
    warnings = _warnings(sched, expr, time_zone, name, atlas, api_create)
    if horizon_note:
        warnings.append(horizon_note + " (Next returns the zero time: the controller starts nothing)")
    ctl: Controller | None = None
    if controller is not None:
        ctl = (_atlas_controller(sched, controller, tz) if atlas
               else _kube_controller(sched, expr, time_zone, controller, tz))
    return Explanation(
        name=name, namespace=namespace, dialect=dialect, schedule=expr, time_zone=time_zone, zone=sched.zone,
        zone_source=zone_source, description=description, never_fires=never is not None, after=after,
        next=tuple(instant(t, tz) for t in runs), dst=tuple(DstChange(e, tz) for e in events),
        warnings=tuple(warnings), controller=ctl)


def _warnings(sched: Any, expr: str, time_zone: str | None, name: str | None, atlas: bool,
              api_create: bool) -> list[str]:
    if atlas:
        return []
    from cronctl.schedule.validate import validate_for_api

    out = [f"the API server would refuse this: {m}"
           for m in validate_for_api(expr, time_zone, name=name, create=api_create,
                                     old_expr=None if api_create else expr)]
    if sched.zone_from_prefix:
        out.append("TZ=/CRON_TZ= in the schedule: the controller emits Warning UnsupportedSchedule on every "
                   "sync, and the prefix wins over spec.timeZone")
    if sched.every is not None:
        out.append("@every: the runs listed are counted from --from; the controller counts from "
                   "lastScheduleTime (or the creation time, or now - startingDeadlineSeconds)")
    from cronctl.schedule.parse import zone_link_target

    canonical = zone_link_target(sched.zone) if sched.zone else None
    if canonical:
        out.append(f"time zone {sched.zone} is an old name (a link in the IANA database) for {canonical}: it "
                   f"works, but the link may change meaning or go; use {canonical}")
    if time_zone is None and not sched.zone_from_prefix and sched.every is None:
        out.append("no timeZone: the schedule follows the kube-controller-manager's local zone (usually UTC); "
                   "set spec.timeZone")
    return out


def _base(c: ControllerInputs) -> datetime:
    base = c.view.last_schedule or c.view.created
    if base is None:
        raise BadInput("controller inputs need --created or --last-schedule (the controller's starting point)")
    return base


def _kube_controller(sched: Any, expr: str, time_zone: str | None, c: ControllerInputs,
                     tz: tzinfo) -> KubeController:
    _base(c)
    if c.view.starting_deadline is not None and c.view.starting_deadline < 0:
        raise BadInput(f"bad --starting-deadline {c.view.starting_deadline}: must be 0 or more (API validation)")
    # the schedule explained (a bare one is given apart from its flags); a sync of the view decides
    view = replace(c.view, schedule=expr, time_zone=time_zone)
    d = view.decide(c.now)
    shown = view.decide(c.now, suspended=True) if view.suspended else d
    window_dst = [] if d.error or d.earliest >= c.now else _window_dst(sched, d, c.now)
    summary = _kube_summary(c, d, shown, tz, [f"between earliest and now, {e.message()}" for e in window_dst])
    return KubeController(now=c.now, view=view, unsuspended=d, actual=shown,
                          dst=tuple(DstChange(e, tz) for e in window_dst), summary=tuple(summary))


def _window_dst(sched: Any, d: Decision, now: datetime) -> list[DstEvent]:
    """DST changes inside the window the controller looks at, (earliest, now]: why a run is missing or
    doubled there. ``now`` ends the search and is no run: a run at a time the schedule does not name is
    one of the missed runs (``now`` itself was named as one, 'the controller also runs at' the sync's
    instant, after any change in the window). When the listing was cut (MISSED_LIST_LIMIT), only the
    listed span is searched: the work stays bounded by the cap, not by how old lastScheduleTime is."""
    from cronctl.schedule.dst import dst_events

    end = d.missed_runs[-1] if d.missed_truncated and d.missed_runs else now
    runs = set(d.missed_runs)
    out = []
    for e in dst_events(sched, d.earliest, [*d.missed_runs, end]):
        if any(r not in runs for r in e.extra):
            e = replace(e, extra=tuple(r for r in e.extra if r in runs))
        if e.skipped or e.repeated or e.extra or e.lost:  # a change the end alone brought in changes no run
            out.append(e)
    return out


def _kube_summary(c: ControllerInputs, d: Decision, shown: Decision, tz: tzinfo, dst_words: list[str]) -> list[str]:
    """The decision in words, one sentence per fact (``dst_words``: DST changes inside the window)."""
    out: list[str] = []
    if d.error:
        return [f"the controller cannot schedule this: Warning InvalidSchedule ({d.error}); "
                "no Job is ever created"]
    if c.view.starting_deadline == 0:
        out.append("startingDeadlineSeconds is 0: the controller never starts a Job (its earliest time is now, "
                   "and the next run is always later)")
    lead = "unsuspending now would" if c.view.suspended else "a sync now would"
    if c.view.suspended:
        out.append("suspended: the controller does nothing and records nothing until spec.suspend is false")
    dropped = d.deadline_dropped
    skipped_n = len(d.never_made_up) - len(dropped)
    if dropped:
        out.append(f"{_runs_words(dropped, tz)} dropped by startingDeadlineSeconds={c.view.starting_deadline} "
                   "(older than the deadline when the controller looks): never made up, and no event "
                   "says so")
    recent = d.most_recent  # set by forbid-active and already-processed too
    if recent is not None and d.decision == "forbid-active":
        out.append(f"{lead} start nothing for {_local_words(recent, tz)}: concurrencyPolicy Forbid and "
                   f"{', '.join(d.waiting_for)} still active (Normal JobAlreadyActive); the slot waits and is "
                   "started at a later sync only if that Job ends before the next slot"
                   + (" and inside the deadline" if c.view.starting_deadline is not None else "")
                   + ", otherwise it is never run")
    elif recent is not None and d.decision == "already-processed":
        out.append(f"{lead} start nothing: {_local_words(recent, tz)} is already processed "
                   f"(status.lastScheduleTime or {d.job_name} in status.active)")
    elif recent is not None:
        out.append(f"{lead} start one Job for {_local_words(recent, tz)} ({d.job_name})")
        if d.replaces:
            out.append(f"concurrencyPolicy Replace: it first deletes {', '.join(d.replaces)} (still active)")
    elif c.view.starting_deadline != 0:
        if d.estimate_skipped is not None:
            out.append(f"{lead} start nothing, although the run at {_local_words(d.estimate_skipped, tz)} was "
                       "missed: the controller's estimate (it assumes every gap equals the first one) lands "
                       "after it, so it finds no time to run")
        else:
            out.append(f"{lead} start nothing: no scheduled time has passed since {rfc3339_z(d.earliest)}")
    if skipped_n:
        noun = "run is" if skipped_n == 1 else "runs are"
        what = "earlier " if d.most_recent is not None else "missed "
        why = ("only the most recent missed time is ever started" if d.most_recent is not None
               else "the controller starts none of them")
        out.append(f"{skipped_n} {what}{noun} never made up ({why})")
    if dropped and skipped_n:
        out.append(f"{len(d.never_made_up)} runs in all are never made up")
    if d.missed == "many":
        out.append("the estimate counts more than 100 missed start times: Warning TooManyMissedTimes "
                   "(the Job is still created); set or lower startingDeadlineSeconds")
    if c.view.starting_deadline is None and len(d.missed_runs) > 1:
        out.append("no startingDeadlineSeconds: a missed run of any age can still be started; set it to bound "
                   "catch-up")
    if d.missed_truncated:
        from cronctl.schedule.controller import MISSED_LIST_LIMIT

        out.append(f"more than {MISSED_LIST_LIMIT} runs were missed: the counts above stop at that limit "
                   "(the run the controller starts is still exact)")
    out.extend(dst_words)
    if c.view.suspended:
        out.append("no wake-up is queued while suspended; unsuspending triggers an immediate sync")
    elif shown.next_wakeup is not None:
        out.append(f"the controller wakes next at {rfc3339_z(shown.next_wakeup)} "
                   f"(in {human_duration(shown.next_wakeup - c.now)})")
    return out


def _atlas_controller(sched: Any, c: ControllerInputs, tz: tzinfo) -> AtlasController:
    from cronctl.schedule.atlas import DEFAULT_MISSED_LIMIT

    base = _base(c)
    limit = c.missed_limit if c.missed_limit is not None and c.missed_limit > 0 else DEFAULT_MISSED_LIMIT
    due = sched.due(base, c.now, limit)
    beyond = sched.due(due[-1], c.now, 1) if len(due) == limit else []
    words: list[str] = []
    if c.view.suspended:
        words.append("suspended: Atlas creates nothing while suspended")
    if due:
        lead = "resuming now would" if c.view.suspended else "RunOnce now would"
        words.append(f"{lead} create {len(due)} Job{'s' if len(due) != 1 else ''}, the earliest due first: "
                     f"{_local_words(due[0], tz)} through {_local_words(due[-1], tz)}")
        if beyond:
            words.append(f"more runs are due than the missed limit ({limit}): later ones wait for the next pass")
        words.append("with Forbid, an active Job at the start suppresses the whole due list; with none active, "
                     "several due Jobs can be created in one pass")
    else:
        words.append(f"nothing is due: no occurrence in ({rfc3339_z(base)}, {rfc3339_z(c.now)}]")
    return AtlasController(now=c.now, suspended=c.view.suspended, base=base, missed_limit=limit, due=tuple(due),
                           more_due=bool(beyond), summary=tuple(words))


# --- Kubernetes objects -------------------------------------------------------------------

def _is_atlas_manifest(obj: Obj) -> bool:
    """The seed-000 Atlas CLI envelope: name/schedule/timezone/jobTemplate, no apiVersion/kind."""
    return "kind" not in obj and "apiVersion" not in obj and isinstance(obj.get("schedule"), str)


def explain_object(obj: Obj, *, after: datetime | None, now: datetime, count: int = 10,
                   overrides: ControllerInputs | None = None, source: str = "",
                   api_create: bool = True, with_controller: bool | None = None) -> Explanation:
    """Explain one CronJob object (a batch/v1 CronJob dict, or an Atlas CLI manifest).

    Controller inputs come from the object (creationTimestamp, status.lastScheduleTime,
    spec.startingDeadlineSeconds, spec.suspend), overridden by ``overrides`` where those set
    them. The controller part is included when the object or the overrides give a starting
    point (or ``with_controller`` forces it). Errors name ``source`` and the object.
    """
    if _is_atlas_manifest(obj):
        name = obj.get("name")
        where = f"{source}: atlas cronjob {name}" if source else f"atlas cronjob {name}"
        try:
            spec_name = str(name) if name is not None else DEFAULT_NAME
            ctl = None
            if overrides is not None and (overrides.view.created or overrides.view.last_schedule):
                # docs/BACKGROUND.md §2.5: the CLI envelope does not forward missedScheduleLimit from YAML, so a
                # value written there is ignored (default 100); only --missed-limit sets it.
                o = overrides.view
                ctl = given(overrides.now, created=o.created, last_schedule=o.last_schedule, suspended=o.suspended,
                            name=spec_name, missed_limit=overrides.missed_limit)
            tzname = obj.get("timezone")
            return explain_schedule(str(obj["schedule"]), time_zone=str(tzname) if tzname else None,
                                    after=after or now, count=count, dialect="atlas", controller=ctl,
                                    name=spec_name, namespace=None)
        except CronctlError as e:
            raise _located(e, where) from None
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace") if isinstance(meta, dict) else None
    name = meta.get("name") if isinstance(meta, dict) else None
    where = f"cronjob {ns + '/' if isinstance(ns, str) and ns else ''}{name if name else '(no name)'}"
    if source:
        where = f"{source}: {where}"
    try:
        # the controller's inputs, checked as every command checks them (a wrong type: exit 5)
        view = cronjob_view(obj).checked()
        if overrides is not None:  # the flags given, over the object's own
            o = overrides.view
            view = replace(view, created=o.created or view.created, last_schedule=o.last_schedule or view.last_schedule,
                           starting_deadline=o.starting_deadline if o.starting_deadline is not None
                           else view.starting_deadline, suspended=o.suspended or view.suspended,
                           concurrency_policy=o.concurrency_policy or view.concurrency_policy,
                           active=o.active or view.active)
        want = (with_controller if with_controller is not None
                else (view.created is not None or view.last_schedule is not None))
        ctl = ControllerInputs(now=now, view=replace(view, name=view.name or DEFAULT_NAME)) if want else None
        return explain_schedule(view.schedule, time_zone=view.time_zone, after=after or now, count=count,
                                controller=ctl, name=name if isinstance(name, str) else None,
                                namespace=ns if isinstance(ns, str) else None, api_create=api_create)
    except CronctlError as e:
        raise _located(e, where) from None


def _located(e: CronctlError, where: str) -> CronctlError:
    """The same error (same type, same exit code) with the file and object named in front."""
    e.message = f"{where}: {e.message}"
    e.args = (e.message,)
    return e


def cronjobs_in(objs: Sequence[Obj], source: str) -> list[Obj]:
    """The CronJobs (batch/v1 or Atlas manifests) among ``objs``; BadInput naming ``source`` when none."""
    found = [o for o in objs if o.get("kind") == "CronJob" or _is_atlas_manifest(o)]
    if not found:
        kinds = sorted({str(o.get("kind")) for o in objs if o.get("kind")})
        seen = f" (found: {', '.join(kinds)})" if kinds else ""
        raise BadInput(f"{source}: no CronJob in file{seen}")
    return found


def explain_file(path: str, *, after: datetime | None, now: datetime, count: int = 10,
                 overrides: ControllerInputs | None = None, dialect: str | None = None) -> list[Explanation]:
    """Every CronJob in a manifest, multi-document YAML, JSON, or ``kubectl get -o yaml|json`` List."""
    from cronctl.manifest import load_objects
    from cronctl.model import check_objects

    objs = load_objects(path)
    found = cronjobs_in(objs, path)
    check_objects(found, path)
    out = []
    for obj in found:
        if dialect == "atlas" and not _is_atlas_manifest(obj):
            view = cronjob_view(obj)  # a Kubernetes CronJob read in the Atlas dialect: its name, schedule, zone
            obj = {"name": view.name or None, "schedule": view.schedule, "timezone": view.time_zone}
        out.append(explain_object(obj, after=after, now=now, count=count, overrides=overrides, source=path))
    return out
