"""What applying a change to a CronJob makes the controller do, before it is applied (pure).

``cronctl diff`` hands this module the live CronJob (with its status) and the object as it will be
after the apply (the server's dry-run answer, or :func:`merged` offline), and ``now``; it answers
with the field changes that matter to scheduling and the controller's own decision, computed with
the controller model (:func:`cronctl.schedule.controller.decide`, docs/SEMANTICS.md §4):

* **When the controller looks at the new object** (``updateCronJob``, §4.4 and §4.5): an update that
  changes ``schedule`` or ``timeZone`` only moves the requeue (``nextScheduleTimeDuration`` of the
  new object), so the first sync is at the earlier of the pending requeue (the old object's) and the
  new one; any other change syncs at once. A new CronJob syncs at once (and has nothing due).
* **What that sync does**: a Job for a slot already past at the apply (``immediate``; ``catch-up``
  when the change un-suspends), earlier missed runs never made up, TooManyMissedTimes, the running
  Jobs deleted first under Replace (``replace``), the running Jobs that keep the old template.
* **The next runs** before and after, and the **DST nights** within the next year that the change
  brings in or removes (:func:`cronctl.schedule.dst.dst_hits`).

No I/O, no clock: ``now`` is a parameter (the import contract ``pure-engine``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from functools import lru_cache
from datetime import datetime, timedelta
from typing import Any

from cronctl import model
from cronctl.errors import CronctlError
from cronctl.schedule.controller import Decision, decide, update_requeue
from cronctl.timeutil import local_and_utc, rfc3339_z, rfc3339_z_opt
from cronctl.versions import behaviour_for

Obj = dict[str, Any]

#: the spec fields the controller schedules by, in the order they are shown
SCHEDULING_FIELDS = ("schedule", "timeZone", "suspend", "startingDeadlineSeconds", "concurrencyPolicy")
#: what the API server writes for a field the object leaves out (None: stays unset)
DEFAULTS: dict[str, Any] = {"suspend": False, "concurrencyPolicy": "Allow"}
#: the effects ``--fail-on`` can choose; the first three create or delete a Job at the apply
KINDS = ("immediate", "catch-up", "replace", "dst")
NOW_KINDS = ("immediate", "catch-up", "replace")
#: DST nights are looked for this far ahead
DST_YEAR = timedelta(days=366)
NEXT_COUNT = 5


@dataclass(frozen=True)
class FieldChange:
    """One scheduling field: its value before and after (None: unset); ``jobTemplate`` shows
    ``"changed"``."""

    field: str
    before: Any
    after: Any


@dataclass(frozen=True)
class Effect:
    """One thing the apply makes happen, in words. ``now``: it creates or deletes a Job because of
    the apply (the exit-1 kinds); ``kind`` is one of :data:`KINDS` or ``dropped``, ``too-many``,
    ``old-template``, ``estimate``, ``error`` (said, never failing by themselves)."""

    kind: str
    now: bool
    text: str


@dataclass(frozen=True)
class DstNight:
    """A local night on which DST changes how often the schedule runs (``skipped`` or ``doubled``)."""

    date: str  # the local date, YYYY-MM-DD
    zone: str
    what: str  # "skipped" | "doubled"
    slots: tuple[str, ...]  # the wall-clock times (HH:MM) inside the gap or the fold

    def words(self) -> str:
        how = "skipped" if self.what == "skipped" else "run twice"
        return f"{self.date} ({self.zone}): the {', '.join(self.slots)} run(s) are {how}"


@dataclass(frozen=True)
class Change:
    """The verdict on one CronJob of the input."""

    name: str
    namespace: str
    exists: bool  # False: the apply creates it
    now: datetime
    changes: tuple[FieldChange, ...]
    template_changed: bool
    sync_at: datetime | None  # when the controller first syncs the new object (None: not until a Job event)
    sync_why: str
    decision: Decision | None  # the controller's decision at ``sync_at`` on the new object
    job_name: str | None  # the Job it creates then (None: none)
    slot: datetime | None  # that Job's scheduled time
    replaces: tuple[str, ...]  # the running Jobs it deletes first (Replace)
    effects: tuple[Effect, ...]
    zone_before: str | None
    zone_after: str | None
    next_before: tuple[datetime, ...]
    next_after: tuple[datetime, ...]
    dst_added: tuple[DstNight, ...] = ()
    dst_removed: tuple[DstNight, ...] = ()
    server_version: str | None = None
    error: str | None = None  # the new object cannot be scheduled (the controller's event says why)
    unchanged: bool = False  # the apply writes nothing: no update, no sync

    @property
    def kinds(self) -> tuple[str, ...]:
        """The --fail-on kinds this change has (``dst``: a DST night brought in)."""
        found = {e.kind for e in self.effects if e.now}
        if self.dst_added:
            found.add("dst")
        return tuple(k for k in KINDS if k in found)

    @property
    def acts_now(self) -> bool:
        """The apply makes the controller create or delete a Job (kubectl diff's exit 1)."""
        return any(e.now for e in self.effects)

    def fails(self, fail_on: frozenset[str] | set[str]) -> bool:
        return any(k in fail_on for k in self.kinds)

    def as_dict(self) -> dict[str, Any]:
        d = self.decision
        return {
            "name": self.name, "namespace": self.namespace, "exists": self.exists,
            "now": rfc3339_z(self.now), "unchanged": self.unchanged,
            "changes": [{"field": c.field, "before": c.before, "after": c.after} for c in self.changes],
            "templateChanged": self.template_changed,
            "syncAt": rfc3339_z_opt(self.sync_at), "syncWhy": self.sync_why,
            "decision": d.decision if d is not None else None,
            "createsJob": self.job_name, "slot": rfc3339_z_opt(self.slot), "deletesJobs": list(self.replaces),
            "missedNeverMadeUp": [rfc3339_z(t) for t in (d.never_made_up if d is not None else ())],
            "tooManyMissed": d is not None and d.missed == "many" and self.job_name is not None,
            "events": list(d.events) if d is not None else [],
            "effects": [{"kind": e.kind, "now": e.now, "text": e.text} for e in self.effects],
            "failOnKinds": list(self.kinds), "actsNow": self.acts_now,
            "zoneBefore": self.zone_before, "zoneAfter": self.zone_after,
            "nextRunsBefore": [rfc3339_z(t) for t in self.next_before],
            "nextRunsAfter": [rfc3339_z(t) for t in self.next_after],
            "dstNightsAdded": [_night_doc(n) for n in self.dst_added],
            "dstNightsRemoved": [_night_doc(n) for n in self.dst_removed],
            "serverVersion": self.server_version, "error": self.error,
        }


def _night_doc(n: DstNight) -> dict[str, Any]:
    return {"date": n.date, "zone": n.zone, "what": n.what, "slots": list(n.slots)}


# ---------------------------------------------------------------------------------------------
# the object after the apply (offline)
# ---------------------------------------------------------------------------------------------

def spec_value(obj: Obj | None, key: str) -> Any:
    """``spec.<key>`` as the API server holds it: the default for a field left out."""
    spec = (obj or {}).get("spec") if isinstance((obj or {}).get("spec"), dict) else {}
    v = spec.get(key) if isinstance(spec, dict) else None
    return DEFAULTS.get(key) if v is None else v


def merged(live: Obj | None, desired: Obj, *, manager: str) -> Obj:
    """The object an apply of ``desired`` by field manager ``manager`` leaves, without asking the
    server (offline: ``--from-dump``, ``--ledger``). The fields ``desired.spec`` names take its values;
    a spec field it leaves out keeps the live value when another field manager owns it
    (``metadata.managedFields``, as server-side apply does), else goes back to its default. The
    metadata that the controller reads (creation time, uid) and the status stay the live ones. The
    server's own answer (``--server-side``, a dry-run apply) is exact; this is the same rule
    without the server's defaulting of the fields the controller does not read."""
    if live is None:
        obj = copy.deepcopy(desired)
        spec = obj.setdefault("spec", {})
        for key, value in DEFAULTS.items():
            spec.setdefault(key, value)
        obj.pop("status", None)
        obj.setdefault("metadata", {}).pop("creationTimestamp", None)
        return obj
    # new containers for what changes; the values themselves are shared, never changed
    obj = dict(live)
    spec = obj["spec"] = dict(live.get("spec") or {})
    want = desired.get("spec") or {}
    owners = model.field_owners(live)
    for key in set(spec) | set(want):
        if key in want:
            spec[key] = want[key]
        elif owners.get(("spec", key), set()) - {manager}:
            continue  # kept: another manager owns it
        elif owners:
            spec.pop(key, None)  # ours (or no one's, by a client-side apply): removed
    for key, value in DEFAULTS.items():
        if spec.get(key) is None:
            spec[key] = value
    meta = obj["metadata"] = dict(model.meta(live))
    for key in ("labels", "annotations"):
        extra = (desired.get("metadata") or {}).get(key)
        if isinstance(extra, dict):
            meta[key] = {**(meta.get(key) or {}), **extra}
    return obj


def _spec_defaulted(obj: Obj | None) -> Any:
    """``spec`` with the defaults of :data:`DEFAULTS` written in (an apply that writes a default the
    server had already filled in changes nothing)."""
    spec = (obj or {}).get("spec")
    if not isinstance(spec, dict):
        return spec
    return {**spec, **{k: v for k, v in DEFAULTS.items() if spec.get(k) is None}}


# ---------------------------------------------------------------------------------------------
# the verdict
# ---------------------------------------------------------------------------------------------

def _decide(v: model.CronJobView, at: datetime) -> Decision:
    v.checked()
    return decide(v.schedule, time_zone=v.time_zone, name=v.name, created=v.created or at,
                  last_schedule=v.last_schedule, starting_deadline=v.starting_deadline, now=at,
                  suspended=v.suspended, concurrency_policy=v.concurrency_policy, active=v.active)


@lru_cache(maxsize=256)
def _schedule(expr: str, zone: str | None) -> Any:
    """The parsed schedule, None when it does not parse (a fleet repeats a few schedules)."""
    from cronctl.schedule import parse

    try:
        return parse(expr, zone)
    except CronctlError:
        return None


def _zone(v: model.CronJobView) -> str | None:
    """:attr:`cronctl.model.CronJobView.zone` from the cached parse (a TZ= prefix wins over timeZone)."""
    sched = _schedule(v.schedule, v.time_zone)
    return sched.zone if sched is not None and sched.zone_from_prefix else v.time_zone


@lru_cache(maxsize=256)
def _next(expr: str, zone: str | None, now: datetime) -> tuple[datetime, ...]:
    sched = _schedule(expr, zone)
    return () if sched is None else tuple(sched.runs(now, NEXT_COUNT))


@lru_cache(maxsize=256)
def _nights(expr: str, zone: str | None, now: datetime) -> frozenset[DstNight]:
    from cronctl.schedule.dst import dst_hits

    sched = _schedule(expr, zone)
    if sched is None:
        return frozenset()
    out = set()
    for h in dst_hits(sched, now, DST_YEAR):
        what = "skipped" if h.zone_runs < h.wall_runs else "doubled"
        out.add(DstNight(h.local_date.isoformat(), str(sched.zone), what,
                         tuple(f"{s:%H:%M}" for s in h.slots)))
    return frozenset(out)


def _when(t: datetime, zone: str | None) -> str:
    return local_and_utc(t, zone)


def assess(live: Obj | None, after: Obj, now: datetime, *, server_version: str | None = None,
           jobs: list[Obj] | None = None) -> Change:
    """The verdict on applying a change that turns ``live`` (None: it does not exist yet) into
    ``after`` (the object as the server will hold it) at ``now``. ``jobs``: the namespace's Jobs, when
    known (a Job already named for the slot is then said, by ``server_version``'s rule)."""
    va = model.cronjob_view(after)
    vb = model.cronjob_view(live) if live is not None else None
    changes = []
    for key in SCHEDULING_FIELDS:
        b, a = (spec_value(live, key) if live is not None else None), spec_value(after, key)
        if live is None or b != a:
            changes.append(FieldChange(key, b, a))
    tb = ((live or {}).get("spec") or {}).get("jobTemplate")
    ta = (after.get("spec") or {}).get("jobTemplate")
    template_changed = live is not None and tb != ta
    if template_changed:
        changes.append(FieldChange("jobTemplate", "as before", "changed"))
    unchanged = live is not None and not changes and _spec_defaulted(live) == _spec_defaulted(after) \
        and model.meta(live).get("labels") == model.meta(after).get("labels") \
        and model.meta(live).get("annotations") == model.meta(after).get("annotations")
    zone_b, zone_a = (_zone(vb) if vb else None), _zone(va)
    next_b = _next(vb.schedule, vb.time_zone, now) if vb else ()
    next_a = _next(va.schedule, va.time_zone, now)
    nb = _nights(vb.schedule, vb.time_zone, now) if vb else frozenset()
    na = _nights(va.schedule, va.time_zone, now)
    added = tuple(sorted(na - nb, key=lambda n: (n.date, n.zone)))
    removed = tuple(sorted(nb - na, key=lambda n: (n.date, n.zone)))
    base = dict(name=va.name, namespace=va.namespace, exists=live is not None, now=now, changes=tuple(changes),
                template_changed=template_changed, zone_before=zone_b, zone_after=zone_a,
                next_before=next_b, next_after=next_a, dst_added=added, dst_removed=removed,
                server_version=server_version, unchanged=unchanged)
    effects: list[Effect] = []
    for n in added:
        effects.append(Effect("dst", False, f"DST night brought in: {n.words()}"))
    for n in removed:
        effects.append(Effect("dst", False, f"DST night no longer hit: {n.words()}"))
    if unchanged:
        return Change(sync_at=None, sync_why="the apply changes nothing: no update, no sync", decision=None,
                      job_name=None, slot=None, replaces=(), effects=tuple(effects), **base)  # type: ignore[arg-type]
    try:
        if va.problem is not None:
            raise CronctlError(va.problem)
        now_d = _decide(vb, now) if vb is not None else None  # what the controller does without the apply
        sync_at, why = _first_sync(vb, va, now_d, now)
        if sync_at is None:
            d = None
        else:
            d = _decide(va if vb is not None else replace(va, created=now), sync_at)
    except CronctlError as e:
        effects.append(Effect("error", False, f"the controller cannot schedule it: {e.message}"))
        return Change(sync_at=None, sync_why="", decision=None, job_name=None, slot=None, replaces=(),
                      effects=tuple(effects), error=e.message, **base)  # type: ignore[arg-type]
    job = slot = None
    replaces: tuple[str, ...] = ()
    error = None
    if d is not None:
        if d.error is not None or d.decision in ("unparseable-schedule", "unknown-time-zone", "invalid-schedule"):
            error = d.error or (d.events[-1] if d.events else d.decision)
            effects.append(Effect("error", False, f"the controller cannot schedule it: {error}"))
        elif d.decision == "create" and d.most_recent is not None:
            job, slot, replaces = d.job_name, d.most_recent, d.replaces
            effects += _create_effects(vb, va, now_d, d, now, sync_at, jobs, server_version)  # type: ignore[arg-type]
        elif d.decision == "forbid-active" and d.most_recent is not None and d.most_recent <= now:
            effects.append(Effect("waits", False, (
                f"the slot {_when(d.most_recent, zone_a)} is due but waits for {', '.join(d.waiting_for)} "
                "(concurrencyPolicy Forbid): it starts when that Job ends, unless a newer slot comes first")))
        unsuspends = vb is not None and vb.suspended and not va.suspended
        if unsuspends and (slot is None or slot > now):
            missed = [t for t in d.never_made_up if t <= now]
            if missed:
                effects.append(Effect("dropped", False, (
                    f"the {len(missed)} run(s) missed while suspended (the latest {_when(missed[-1], zone_a)}) "
                    "are not started" + (": the schedule or timeZone change defers the controller's sync"
                                         if sync_at is not None and sync_at > now else ""))))
        if d.estimate_skipped is not None and job is None:
            effects.append(Effect("estimate", False, (
                f"the missed run at {_when(d.estimate_skipped, zone_a)} is not started: the controller's "
                "estimate of the missed runs steps over it (docs/SEMANTICS.md §4.2)")))
    if not replaces and va.policy == "Replace" and va.active and (vb is None or vb.policy != "Replace"):
        nxt = f" at {_when(next_a[0], zone_a)}" if next_a else ""
        effects.append(Effect("replace", False, (
            f"concurrencyPolicy becomes Replace: the next run{nxt} deletes {', '.join(va.active)} "
            "if it is still running")))
    if template_changed and va.active:
        effects.append(Effect("old-template", False, (
            f"{', '.join(va.active)} keep running with the old jobTemplate; only Jobs created from now on "
            "use the new one")))
    return Change(sync_at=sync_at, sync_why=why, decision=d, job_name=job, slot=slot, replaces=replaces,
                  effects=tuple(effects), error=error, **base)  # type: ignore[arg-type]


def _first_sync(vb: model.CronJobView | None, va: model.CronJobView, now_d: Decision | None,
                now: datetime) -> tuple[datetime | None, str]:
    """When the controller first syncs the new object (``updateCronJob``), and why then."""
    if vb is None or now_d is None:
        return now, "a new CronJob is synced at once"
    if vb.schedule == va.schedule and vb.time_zone == va.time_zone:
        return now, "the update syncs it at once (schedule and timeZone unchanged)"
    old = now_d.next_wakeup  # the requeue pending from the controller's last sync
    new = update_requeue(va.schedule, time_zone=va.time_zone, created=va.created or now,
                         last_schedule=va.last_schedule, starting_deadline=va.starting_deadline, now=now)
    when = [t for t in (old, new) if t is not None]
    if not when:
        return None, ("the schedule or timeZone changed, and no requeue is pending: the controller syncs it "
                      "only when one of its Jobs changes")
    first = min(when)
    src = "the pending requeue set by the old schedule" if first == old else "the new schedule's requeue"
    return max(first, now), (f"the schedule or timeZone changed: the controller syncs it at {rfc3339_z(first)} "
                             f"({src}), or sooner if one of its Jobs changes")


def _create_effects(vb: model.CronJobView | None, va: model.CronJobView, now_d: Decision | None, d: Decision,
                    now: datetime, sync_at: datetime, jobs: list[Obj] | None,
                    server_version: str | None) -> list[Effect]:
    assert d.most_recent is not None and d.job_name is not None
    zone = _zone(va)
    out: list[Effect] = []
    past = d.most_recent <= now
    if now_d is not None:
        if now_d.decision == "create" and now_d.job_name == d.job_name:
            past = False  # due anyway: the controller starts it whether or not the change is applied
    at = "at once" if sync_at == now else f"at {_when(sync_at, zone)}"
    if past:
        unsuspends = vb is not None and vb.suspended and not va.suspended
        kind = "catch-up" if unsuspends else "immediate"
        why = ("un-suspending starts the most recent missed run" if unsuspends
               else "the new settings have a slot between the last run and the apply")
        text = (f"creates Job {d.job_name} {at} for the slot {_when(d.most_recent, zone)}, "
                f"already past at the apply: {why}")
        if jobs is not None and d.job_name not in va.active and any(model.name_of(j) == d.job_name for j in jobs):
            text += "; " + behaviour_for(server_version).adoption_text(d.job_name, _when(d.most_recent, zone))
        out.append(Effect(kind, True, text))
        never = d.never_made_up
        if never:
            dropped = len(d.deadline_dropped)
            out.append(Effect("dropped", False, (
                f"{len(never)} other missed run(s) are never made up (the earliest {_when(never[0], zone)})"
                + (f", {dropped} of them dropped by startingDeadlineSeconds={va.starting_deadline}" if dropped else ""))))
        if d.missed == "many":
            out.append(Effect("too-many", False, (
                "the controller warns TooManyMissedTimes (\"too many missed start times\"): more than 100 "
                "runs missed by its estimate; it still starts the most recent one")))
    if d.replaces:
        out.append(Effect("replace", True, (
            f"concurrencyPolicy Replace deletes the running Job(s) {', '.join(d.replaces)} before creating "
            f"{d.job_name}")))
    return out
