"""The lint rules: one pure function per rule over a CronJob dict (the API's camelCase JSON, as
``kubectl get -o json`` shows it) and ``now``; a rule that compares CronJobs (CJ032, duplicate
work) is a function over all the CronJobs checked together instead (``Rule.check_set``).

Every rule has a stable id (``CJ001`` ...), a default severity (``error`` = the CronJob is broken
or will be refused, ``warning`` = a known way to lose or duplicate work, ``info`` = worth a look),
a one-line *why* and a *fix*. A check returns :class:`Hit` values: the message names the field
and its value. Schedules are evaluated only through the engine (``cronctl.schedule``), so lint
and ``cronctl explain`` can never disagree.

Intent annotations on the CronJob let a team say what lint cannot see:
``cronctl.dev/side-effects: "none"`` (runs only recompute things: overlap is harmless) and
``cronctl.dev/interruptible: "true"`` (a run may be killed at any point). ``cronctl.dev/lint-ignore:
"CJ001,CJ023"`` silences rules for one object (handled by the engine).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from datetime import date, datetime, timedelta
from typing import Any, Callable, Iterator, Sequence

from cronctl.errors import ScheduleError
from cronctl.model import HistoryLimits, capped_seconds, cronjob_view, is_suspended
from cronctl.schedule.dst import DST_HORIZON, DstHit, dst_hits, wall_schedule, zone_transitions  # noqa: F401 - re-exported
from cronctl.timeutil import UTC, human_duration

Obj = dict[str, Any]

SEVERITIES = ("error", "warning", "info")  # most severe first

ANN_SIDE_EFFECTS = "cronctl.dev/side-effects"
ANN_INTERRUPTIBLE = "cronctl.dev/interruptible"
ANN_LINT_IGNORE = "cronctl.dev/lint-ignore"

# Defaults the API server fills in when a field is unset (batch/v1 defaulting); the history limits
# are read in one place (cronctl.model.HistoryLimits).
DEFAULT_BACKOFF_LIMIT = 6
EVENT_TTL = timedelta(hours=1)  # kube-apiserver --event-ttl default


@dataclass(frozen=True)
class Hit:
    """One thing a rule found: the message (names the field and value) and the field's path."""

    message: str
    field: str
    severity: str | None = None  # None = the rule's default severity


Check = Callable[[Obj, datetime], list[Hit]]
#: a rule over every CronJob checked together (``cronctl lint -n NS``, ``-A``, ``-f a.yaml b.yaml``):
#: returns (index of the CronJob in the sequence, what was found on it)
SetCheck = Callable[[Sequence[Obj], datetime], list[tuple[int, Hit]]]


@dataclass(frozen=True)
class Rule:
    id: str
    name: str  # kebab-case slug, stable like the id
    severity: str
    summary: str  # one line: what the rule looks for
    why: str  # one line: what goes wrong
    fix: str  # one line: what to change
    check: Check | None  # over one CronJob; None for a rule over the set
    check_set: SetCheck | None = None  # over every CronJob checked together (e.g. duplicate work)


# --------------------------------------------------------------------------- object access


def _get(obj: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def _spec(cj: Obj) -> Obj:
    s = cj.get("spec")
    return s if isinstance(s, dict) else {}


def _job_spec(cj: Obj) -> Obj:
    s = _get(cj, "spec", "jobTemplate", "spec")
    return s if isinstance(s, dict) else {}


def _pod_spec(cj: Obj) -> Obj:
    s = _get(cj, "spec", "jobTemplate", "spec", "template", "spec")
    return s if isinstance(s, dict) else {}


JOB = "spec.jobTemplate.spec"
POD = "spec.jobTemplate.spec.template.spec"


def cj_annotations(cj: Obj) -> dict[str, str]:
    a = _get(cj, "metadata", "annotations")
    return {str(k): str(v) for k, v in a.items()} if isinstance(a, dict) else {}


def _declared(cj: Obj, key: str, value: str) -> bool:
    return cj_annotations(cj).get(key, "").strip().lower() == value


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _schedule_text(cj: Obj) -> str | None:
    s = _spec(cj).get("schedule")
    return s if isinstance(s, str) else None


def _time_zone(cj: Obj) -> str | None:
    tz = _spec(cj).get("timeZone")
    return tz if isinstance(tz, str) else None


def _has_tz_prefix(expr: str) -> bool:
    # API validation refuses any schedule containing "TZ" anywhere (docs/SEMANTICS.md §1), not just a prefix.
    return "TZ" in expr


def parsed_schedule(cj: Obj) -> Any:
    """The engine's Schedule for this CronJob (``spec.schedule`` in ``spec.timeZone``), or None
    when the schedule or zone is rejected (other rules report that)."""
    from cronctl.schedule import parse

    expr = _schedule_text(cj)
    if expr is None:
        return None
    try:
        return parse(expr, _time_zone(cj))
    except ScheduleError:
        return None


def schedule_interval(sched: Any, now: datetime) -> timedelta | None:
    """The shortest wall-clock gap between runs (see :func:`_interval`); cached per schedule and now."""
    return _interval_cached(sched.expr, sched.zone, now)


@lru_cache(maxsize=1024)
def _interval_cached(expr: str, zone: str, now: datetime) -> timedelta | None:
    from cronctl.schedule import parse

    return _interval(parse(expr, zone), now)


def _interval(sched: Any, now: datetime) -> timedelta | None:
    """The shortest gap between two consecutive runs on a wall clock (DST ignored, so the doubled
    run of a fall-back night does not count as a one-hour interval), or None if it runs < 2 times."""
    if sched.every is not None:
        return sched.every  # type: ignore[no-any-return]
    runs = wall_schedule(sched).runs(now, 200)
    gaps = [b - a for a, b in zip(runs, runs[1:])]
    return min(gaps) if gaps else None


def _fmt_seconds(n: int) -> str:
    return f"{n} ({human_duration(capped_seconds(n))})" if n >= 120 else f"{n}"


# --------------------------------------------------------------------------- the checks


def check_missing_time_zone(cj: Obj, now: datetime) -> list[Hit]:
    expr = _schedule_text(cj) or ""
    if _time_zone(cj) is None and not _has_tz_prefix(expr):
        return [Hit("spec.timeZone is not set: the schedule follows kube-controller-manager's local zone", "spec.timeZone")]
    return []


def check_no_starting_deadline(cj: Obj, now: datetime) -> list[Hit]:
    if _spec(cj).get("startingDeadlineSeconds") is None:
        return [Hit("spec.startingDeadlineSeconds is not set: a missed run of any age is started on unsuspend "
                    "or after controller downtime", "spec.startingDeadlineSeconds")]
    return []


def check_starting_deadline_zero(cj: Obj, now: datetime) -> list[Hit]:
    if _int(_spec(cj).get("startingDeadlineSeconds")) == 0:
        return [Hit("spec.startingDeadlineSeconds is 0: the controller never starts a Job", "spec.startingDeadlineSeconds")]
    return []


def check_starting_deadline_short(cj: Obj, now: datetime) -> list[Hit]:
    d = _int(_spec(cj).get("startingDeadlineSeconds"))
    if d is not None and 0 < d < 10:
        return [Hit(f"spec.startingDeadlineSeconds is {d}: under the controller's ~10 s sync period, a run "
                    "delayed by one slow sync is dropped without an event", "spec.startingDeadlineSeconds")]
    return []


def check_tz_in_schedule(cj: Obj, now: datetime) -> list[Hit]:
    expr = _schedule_text(cj)
    if expr is not None and _has_tz_prefix(expr):
        msg = f"spec.schedule '{expr}' contains TZ/CRON_TZ: refused on create, UnsupportedSchedule warning on every sync"
        if _time_zone(cj) is not None:
            msg += f", and the prefix overrides spec.timeZone '{_time_zone(cj)}'"
        return [Hit(msg, "spec.schedule")]
    return []


def check_unparseable_schedule(cj: Obj, now: datetime) -> list[Hit]:
    from cronctl.schedule import parse

    expr = _spec(cj).get("schedule")
    if expr is None or expr == "":
        return [Hit("spec.schedule is missing", "spec.schedule")]
    if not isinstance(expr, str):
        return [Hit(f"spec.schedule is not a string (it is {type(expr).__name__} {expr!r})", "spec.schedule")]
    try:
        parse(expr, None)
    except ScheduleError as e:
        return [Hit(f"spec.schedule: {e.message}", "spec.schedule")]
    return []


def check_unknown_time_zone(cj: Obj, now: datetime) -> list[Hit]:
    from cronctl.schedule import parse

    tz = _spec(cj).get("timeZone")
    if tz is None:
        return []
    if not isinstance(tz, str):
        return [Hit(f"spec.timeZone is not a string (it is {type(tz).__name__} {tz!r})", "spec.timeZone")]
    if tz == "" or tz == "Local":
        # API validation: "" must be nil or non-empty; "Local" is refused (it would mean the controller's zone).
        return [Hit(f"spec.timeZone '{tz}' is refused by the API server", "spec.timeZone")]
    try:
        # A plain schedule, so that a broken spec.schedule does not hide a broken zone.
        parse("0 0 * * *", tz)
    except ScheduleError as e:
        return [Hit(f"spec.timeZone '{tz}': {e.message}", "spec.timeZone")]
    return []


def check_never_fires(cj: Obj, now: datetime) -> list[Hit]:
    sched = parsed_schedule(cj)
    if sched is None:
        return []
    if sched.next_after(now) is None:
        return [Hit(f"spec.schedule '{sched.expr}' never fires (no run within 5 years): the controller "
                    "reports InvalidSchedule and never creates a Job", "spec.schedule")]
    return []


def check_name_too_long(cj: Obj, now: datetime) -> list[Hit]:
    name = _get(cj, "metadata", "name")
    if isinstance(name, str) and len(name) > 52:
        return [Hit(f"metadata.name '{name}' is {len(name)} characters; a CronJob name may have at most 52",
                    "metadata.name")]
    return []


def check_name_shape(cj: Obj, now: datetime) -> list[Hit]:
    from cronctl.names import LABEL_SHAPE, SUBDOMAIN_SHAPE, has_shape

    meta = cj.get("metadata") if isinstance(cj.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    name, ns = meta.get("name"), meta.get("namespace")
    hits = []
    if name in (None, "") and not meta.get("generateName"):
        hits.append(Hit("metadata.name is not set: the API server refuses an object without a name", "metadata.name"))
    elif isinstance(name, str) and name and not has_shape(name, subdomain=True):  # its length is CJ011's
        hits.append(Hit(f"metadata.name '{name}' is not a DNS-1123 subdomain: a CronJob name is {SUBDOMAIN_SHAPE}",
                        "metadata.name"))
    if isinstance(ns, str) and ns and not (len(ns) <= 63 and has_shape(ns, subdomain=False)):
        hits.append(Hit(f"metadata.namespace '{ns}' is not a DNS-1123 label: a namespace is {LABEL_SHAPE}, "
                        "at most 63 characters", "metadata.namespace"))
    return hits


def _concurrency(cj: Obj) -> str | None:
    p = _spec(cj).get("concurrencyPolicy")
    return p if isinstance(p, str) else None


def check_replace_interrupts(cj: Obj, now: datetime) -> list[Hit]:
    if _concurrency(cj) == "Replace" and not _declared(cj, ANN_INTERRUPTIBLE, "true"):
        return [Hit("spec.concurrencyPolicy is Replace: a run still going at the next slot is deleted mid-work",
                    "spec.concurrencyPolicy")]
    return []


def check_allow_overlaps(cj: Obj, now: datetime) -> list[Hit]:
    policy = _concurrency(cj)
    if policy not in (None, "Allow") or _declared(cj, ANN_SIDE_EFFECTS, "none"):
        return []
    if policy is None:
        return [Hit("spec.concurrencyPolicy is not set (= Allow): overlapping runs of work with side effects "
                    "both do it", "spec.concurrencyPolicy", "warning")]
    return [Hit("spec.concurrencyPolicy is Allow: overlapping runs of work with side effects both do it",
                "spec.concurrencyPolicy", "info")]


def check_no_active_deadline(cj: Obj, now: datetime) -> list[Hit]:
    if _job_spec(cj).get("activeDeadlineSeconds") is None:
        return [Hit(f"{JOB}.activeDeadlineSeconds is not set: a hung run holds its slot forever",
                    f"{JOB}.activeDeadlineSeconds")]
    return []


def check_active_deadline_vs_interval(cj: Obj, now: datetime) -> list[Hit]:
    ads = _int(_job_spec(cj).get("activeDeadlineSeconds"))
    if ads is None or _concurrency(cj) != "Forbid":
        return []
    sched = parsed_schedule(cj)
    if sched is None:
        return []
    interval = schedule_interval(sched, now)
    if interval is None or capped_seconds(ads) < interval:
        return []
    return [Hit(f"{JOB}.activeDeadlineSeconds {_fmt_seconds(ads)} is at or above the schedule's shortest interval "
                f"{human_duration(interval)} with concurrencyPolicy Forbid: one slow run blocks the next "
                "(JobAlreadyActive), which starts late or never", f"{JOB}.activeDeadlineSeconds")]


def check_starting_deadline_vs_interval(cj: Obj, now: datetime) -> list[Hit]:
    sds = _int(_spec(cj).get("startingDeadlineSeconds"))
    if sds is None or sds <= 0 or _declared(cj, ANN_SIDE_EFFECTS, "none"):
        return []
    sched = parsed_schedule(cj)
    interval = schedule_interval(sched, now) if sched is not None else None
    if interval is None or capped_seconds(sds) <= interval:
        return []
    return [Hit(f"spec.startingDeadlineSeconds {_fmt_seconds(sds)} is above the schedule's shortest interval "
                f"{human_duration(interval)}: a run held back (Forbid, controller downtime) still starts however late, "
                "up to the next slot, so two runs can go back to back; the deadline never skips a stale run",
                "spec.startingDeadlineSeconds")]


def check_default_backoff_limit(cj: Obj, now: datetime) -> list[Hit]:
    js = _job_spec(cj)
    if js.get("backoffLimit") is None and js.get("backoffLimitPerIndex") is None:
        return [Hit(f"{JOB}.backoffLimit is not set (= {DEFAULT_BACKOFF_LIMIT}): a failing run is retried "
                    f"{DEFAULT_BACKOFF_LIMIT} times", f"{JOB}.backoffLimit")]
    return []


def check_restart_on_failure(cj: Obj, now: datetime) -> list[Hit]:
    if _pod_spec(cj).get("restartPolicy") == "OnFailure":
        return [Hit(f"{POD}.restartPolicy is OnFailure: retries restart the container inside the same pod",
                    f"{POD}.restartPolicy")]
    return []


def check_no_pod_failure_policy(cj: Obj, now: datetime) -> list[Hit]:
    js = _job_spec(cj)
    policy = js.get("podFailurePolicy")
    rules = _get(policy, "rules")
    if isinstance(rules, list) and rules:
        return []
    per_index = _int(js.get("backoffLimitPerIndex"))
    if per_index is not None:  # an Indexed Job: retries are counted per index
        retries, shown = per_index, f"{JOB}.backoffLimitPerIndex is {per_index}"
    elif js.get("backoffLimit") is None:
        retries, shown = DEFAULT_BACKOFF_LIMIT, f"{JOB}.backoffLimit is not set (= {DEFAULT_BACKOFF_LIMIT})"
    else:
        retries = _int(js.get("backoffLimit")) or 0
        shown = f"{JOB}.backoffLimit is {retries}"
    if retries <= 0:
        return []
    missing = "is not set" if policy is None else "has no rules"
    msg = (f"{JOB}.podFailurePolicy {missing} and {shown}: every failed pod is retried, whatever its exit "
           "code says")
    restart = _pod_spec(cj).get("restartPolicy")
    if restart != "Never":
        msg += f" (a podFailurePolicy needs {POD}.restartPolicy Never; it is {restart or 'not set'})"
    return [Hit(msg, f"{JOB}.podFailurePolicy")]


def _limits(cj: Obj) -> HistoryLimits:
    """The history limits as the controller reads them (the one reader, model.cronjob_view)."""
    return cronjob_view(cj).history


def check_failed_history_zero(cj: Obj, now: datetime) -> list[Hit]:
    limits = _limits(cj)
    if limits.failed_set and limits.failed == 0:
        return [Hit("spec.failedJobsHistoryLimit is 0: a failed Job, its pods and logs are deleted on the next sync",
                    "spec.failedJobsHistoryLimit")]
    return []


def check_successful_history_zero(cj: Obj, now: datetime) -> list[Hit]:
    limits = _limits(cj)
    if limits.successful_set and limits.successful == 0:
        return [Hit("spec.successfulJobsHistoryLimit is 0: every finished Job and its logs are deleted at once, "
                    "so overlaps and duplicates cannot be proven", "spec.successfulJobsHistoryLimit")]
    return []


def check_successful_history_short(cj: Obj, now: datetime) -> list[Hit]:
    limits = _limits(cj)
    limit = limits.successful
    if not limit:  # 0 is CJ019's
        return []
    sched = parsed_schedule(cj)
    interval = schedule_interval(sched, now) if sched is not None else None
    # in seconds, as a float: a limit of millions times a 4-year interval overflows timedelta
    if interval is None or interval.total_seconds() * limit >= 86400:
        return []
    shown = f"{limit}" if limits.successful_set else f"not set (= {limit})"
    return [Hit(f"spec.successfulJobsHistoryLimit {shown} keeps about {human_duration(interval * limit)} of runs "
                f"at this schedule's interval of {human_duration(interval)}", "spec.successfulJobsHistoryLimit")]


def check_failed_history_low(cj: Obj, now: datetime) -> list[Hit]:
    limits = _limits(cj)
    limit = limits.failed
    if limit == 0 or limit >= 3:
        return []
    shown = f"{limit}" if limits.failed_set else f"not set (= {limit})"
    kept = "the last failed Job and its logs are" if limit == 1 else f"the last {limit} failed Jobs and their logs are"
    return [Hit(f"spec.failedJobsHistoryLimit {shown}: only {kept} kept",
                "spec.failedJobsHistoryLimit")]


def check_short_ttl(cj: Obj, now: datetime) -> list[Hit]:
    ttl = _int(_job_spec(cj).get("ttlSecondsAfterFinished"))
    if ttl is None or ttl >= 86400:
        return []
    field = f"{JOB}.ttlSecondsAfterFinished"
    if timedelta(seconds=ttl) < EVENT_TTL:
        return [Hit(f"{field} is {_fmt_seconds(ttl)}: a finished Job, its pods and logs are deleted before "
                    "anyone is paged", field, "warning")]
    return [Hit(f"{field} is {_fmt_seconds(ttl)}: a finished Job and its logs are gone within a day", field, "info")]


def _containers(cj: Obj) -> Iterator[tuple[str, Obj]]:
    ps = _pod_spec(cj)
    for kind in ("initContainers", "containers"):
        items = ps.get(kind)
        if isinstance(items, list):
            for i, c in enumerate(items):
                if isinstance(c, dict):
                    yield f"{POD}.{kind}[{i}]", c


def check_image_digest(cj: Obj, now: datetime) -> list[Hit]:
    hits = []
    for path, c in _containers(cj):
        image = c.get("image")
        if isinstance(image, str) and "@sha256:" not in image:
            hits.append(Hit(f"{path}.image '{image}' ({c.get('name', '?')}) is not pinned by digest", f"{path}.image"))
    return hits


def _resources(c: Obj, kind: str) -> Obj:
    r = _get(c, "resources", kind)
    return r if isinstance(r, dict) else {}


_UNREQUESTED = {
    ("cpu", "memory"): "sets neither cpu nor memory: the pod is placed as if it needed nothing, and is among the "
                       "first evicted when the node runs short of memory",
    ("cpu",): "sets no cpu: the pod is placed as if it needed no CPU, and is slowed by its neighbours",
    ("memory",): "sets no memory: the pod is placed as if it needed no memory, and is among the first evicted when "
                 "the node runs short",
}


def check_no_resource_requests(cj: Obj, now: datetime) -> list[Hit]:
    hits = []
    for path, c in _containers(cj):
        # a limit without a request is also the request (API defaulting)
        have = {**_resources(c, "limits"), **_resources(c, "requests")}
        missing = tuple(r for r in ("cpu", "memory") if have.get(r) is None)
        if missing:
            hits.append(Hit(f"{path}.resources.requests ({c.get('name', '?')}) {_UNREQUESTED[missing]}",
                            f"{path}.resources.requests"))
    return hits


def check_no_memory_limit(cj: Obj, now: datetime) -> list[Hit]:
    hits = []
    for path, c in _containers(cj):
        if _resources(c, "limits").get("memory") is None:
            hits.append(Hit(f"{path}.resources.limits ({c.get('name', '?')}) sets no memory: a run that grows takes "
                            "the node's memory until the node runs short, and the kernel or kubelet kills whatever "
                            "it picks", f"{path}.resources.limits.memory"))
    return hits


def _strings(v: Any) -> list[str] | None:
    return v if isinstance(v, list) and all(isinstance(x, str) for x in v) else None


def check_shell_hides_exit_code(cj: Obj, now: datetime) -> list[Hit]:
    from cronctl.lint.shell import exit_code_problems, shell_call

    hits = []
    for path, c in _containers(cj):
        command, args = _strings(c.get("command") or []), _strings(c.get("args") or [])
        if command is None or args is None:
            continue
        call = shell_call(command + args)  # no command: the image's entrypoint runs args (sh -c ...)
        problems = exit_code_problems(call) if call is not None else []
        if call is None or not problems:
            continue
        field = f"{path}.command" if call.index < len(command) else f"{path}.args"
        hits.append(Hit(f"{field} ({c.get('name', '?')}) runs {call.shell} -c and the script can hide a failure: "
                        + "; ".join(problems), field))
    return hits


def check_default_service_account(cj: Obj, now: datetime) -> list[Hit]:
    ps = _pod_spec(cj)
    sa = ps.get("serviceAccountName") or ps.get("serviceAccount") or "default"
    if sa == "default" and ps.get("automountServiceAccountToken") is not False:
        return [Hit(f"{POD}.serviceAccountName is {'not set (= default)' if 'serviceAccountName' not in ps else 'default'}"
                    ": the pod gets the namespace's shared default token", f"{POD}.serviceAccountName")]
    return []


def check_pause_overdue(cj: Obj, now: datetime) -> list[Hit]:
    from cronctl.model import ANN_PAUSED_UNTIL, read_pause

    p = read_pause(cj)
    if p is None or not p.overdue(now) or not is_suspended(cj):
        return []
    return [Hit(f"{p.words()}: past its until by {human_duration(now - p.until)}"  # type: ignore[operator]
                "; every slot since is lost", f"metadata.annotations[{ANN_PAUSED_UNTIL}]")]


def check_gitops_pins_suspend(cj: Obj, now: datetime) -> list[Hit]:
    from cronctl.gitops import detect

    g = detect(cj)
    if not g.sets_suspend or g.tool is None or g.tool == "kubectl-apply":
        return []
    val = "" if g.suspend_value is None else f": {str(g.suspend_value).lower()}"
    how = ", ".join(g.evidence) or "managedFields"
    return [Hit(f"{g.tool_words}" + (f" ({g.source})" if g.source else "") + f" sets spec.suspend{val} ({how}): "
                "any suspend by hand, cronctl pause or a run-manual hold is put back at its next sync",
                "spec.suspend")]


#: run-record steps after which the run is over but its record still holds the CronJob suspended
_LEFT_STEPS = frozenset({"failed", "timeout", "interrupted", "error", "restore-failed"})
#: a record not updated for this long belongs to a run that is no longer making progress
_RECORD_QUIET = timedelta(hours=6)


def check_run_left_suspended(cj: Obj, now: datetime) -> list[Hit]:
    from cronctl.model import ANN_STEP, read_record
    from cronctl.timeutil import parse_rfc3339

    rec = read_record(cj)
    if rec is None or not is_suspended(cj):
        return []
    try:
        quiet = now - parse_rfc3339(rec.updated or rec.started)
    except Exception:  # a garbled time: judged by its step alone
        quiet = None
    if rec.step not in _LEFT_STEPS and (quiet is None or quiet < _RECORD_QUIET):
        return []
    since = f", last update {human_duration(quiet)} ago" if quiet is not None else ""
    return [Hit(f"held by run {rec.run_id} of {rec.operator or 'unknown'} (step {rec.step or '?'}{since}): "
                "a failed or interrupted run left it suspended; every slot since is lost",
                f"metadata.annotations[{ANN_STEP}]")]


# --------------------------------------------------------------------------- across CronJobs


def _image_repository(image: str) -> str:
    """``registry:5000/team/app:1.4@sha256:...`` -> ``registry:5000/team/app`` (tag and digest off)."""
    name = image.split("@", 1)[0]
    colon = name.rfind(":")
    return name[:colon] if colon > name.rfind("/") else name


def _canon(value: Any) -> Any:
    """A hashable, order-stable copy of a JSON value (mapping keys of any type)."""
    if isinstance(value, dict):
        return tuple(sorted(((str(k), _canon(v)) for k, v in value.items()), key=lambda kv: kv[0]))
    if isinstance(value, list):
        return tuple(_canon(v) for v in value)
    return value if isinstance(value, (str, int, float, bool)) or value is None else repr(value)


#: what a container does; its name, resources, probes and image tag do not change the work
_WORK_FIELDS = ("command", "args", "env", "envFrom", "workingDir", "volumeMounts")


def _work(cj: Obj) -> Any:
    """What the CronJob's pod does, comparable between CronJobs: every container's image
    repository, command, args, env, envFrom, workingDir and volume mounts, and the pod's volumes.
    None when there is no container with an image."""
    containers = []
    for path, c in _containers(cj):
        image = c.get("image")
        if not isinstance(image, str):
            return None
        slot = path.rsplit(".", 1)[-1]  # containers[0], initContainers[1]
        containers.append((slot, _image_repository(image), *(_canon(c.get(f)) for f in _WORK_FIELDS)))
    return (tuple(containers), _canon(_pod_spec(cj).get("volumes"))) if containers else None


def _ref(cj: Obj) -> str:
    ns, name = _get(cj, "metadata", "namespace"), _get(cj, "metadata", "name")
    name = name if isinstance(name, str) and name else "<unnamed>"
    return f"{ns}/{name}" if isinstance(ns, str) and ns else name


def _when(cj: Obj) -> str:
    expr, tz = _schedule_text(cj), _time_zone(cj)
    return f"'{expr}'" + (f" in {tz}" if tz else "") if expr is not None else "no schedule"


#: how far ahead duplicate-work looks for a slot two schedules share (weekly and monthly patterns)
SHARED_SLOT_HORIZON = timedelta(weeks=5)


@lru_cache(maxsize=1024)
def _upcoming(expr: str, zone: str, now: datetime) -> tuple[datetime, ...]:
    """The schedule's next 3 runs, and any more (up to 200) within SHARED_SLOT_HORIZON."""
    from cronctl.schedule import parse

    end = now + SHARED_SLOT_HORIZON
    return tuple(t for k, t in enumerate(parse(expr, zone).runs(now, 200)) if k < 3 or t <= end)


def _shared_slot(a: Any, b: Any, now: datetime) -> datetime | None:
    """The first instant both schedules run at, looked for among the upcoming runs (see
    :func:`_upcoming`) of the one with the longer shortest interval; None if there is none (or a
    schedule does not parse)."""
    if a is None or b is None:
        return None
    never = timedelta.max
    if (schedule_interval(a, now) or never) < (schedule_interval(b, now) or never):
        a, b = b, a
    theirs = _upcoming(b.expr, b.zone, now)
    known, last, one = set(theirs), theirs[-1] if theirs else now, timedelta(seconds=1)
    return next((t for t in _upcoming(a.expr, a.zone, now)
                 if (t in known if t <= last else b.next_after(t - one) == t)), None)


def check_duplicate_work(cjs: Sequence[Obj], now: datetime) -> list[tuple[int, Hit]]:
    """CJ032: each CronJob whose pod does the same work (:func:`_work`) as another one's in its
    namespace, and the first slot they share.

    Grouped by a key, never pair by pair: the CronJobs are bucketed by (namespace, work), and inside
    a bucket by schedule (expression and zone), so the first shared slot is computed once per pair
    of distinct schedules (1,000 identical CronJobs: one schedule, one computation; it had been
    499,500). The names listed and the CronJob named as the one sharing the slot are the first in
    input order, as comparing every pair gave them.
    """
    from cronctl.timeutil import rfc3339_z

    groups: dict[Any, list[int]] = {}
    works = [_work(cj) for cj in cjs]
    for i, cj in enumerate(cjs):
        if works[i] is not None and not is_suspended(cj):  # a suspended copy does no work
            groups.setdefault((str(_get(cj, "metadata", "namespace")), works[i]), []).append(i)
    out = []
    for (_ns, (containers, _volumes)), members in groups.items():
        if len(members) < 2:
            continue
        out.extend(_duplicates(cjs, containers, members, now, rfc3339_z))
    out.sort(key=lambda h: h[0])
    return out


def _duplicates(cjs: Sequence[Obj], containers: Any, members: list[int], now: datetime,
                rfc3339_z: Callable[[datetime], str]) -> list[tuple[int, Hit]]:
    """The CJ032 hits of one bucket of CronJobs doing the same work (``members``, in input order)."""
    images = ", ".join(dict.fromkeys(c[1] for c in containers))
    refs = {i: _ref(cjs[i]) for i in members}
    ref_count: dict[str, int] = {}
    for i in members:
        ref_count[refs[i]] = ref_count.get(refs[i], 0) + 1
    # the schedules of the bucket, each with its CronJobs in input order
    sched_of: dict[Any, Any] = {}
    by_sched: dict[Any, list[int]] = {}
    key_of: dict[int, Any] = {}
    for i in members:
        sched = parsed_schedule(cjs[i])
        key = (sched.expr, sched.zone) if sched is not None else None
        sched_of.setdefault(key, sched)
        by_sched.setdefault(key, []).append(i)
        key_of[i] = key
    meets: dict[tuple[Any, Any], datetime | None] = {}

    def meet(a: Any, b: Any) -> datetime | None:
        pair = (a, b) if repr(a) <= repr(b) else (b, a)
        if pair not in meets:
            meets[pair] = _shared_slot(sched_of[pair[0]], sched_of[pair[1]], now)
        return meets[pair]

    def first_other(pool: list[int], ref: str, k: int) -> list[int]:
        """The first ``k`` of ``pool`` that are not the object ``ref`` (the same object twice is no copy)."""
        found: list[int] = []
        for j in pool:
            if refs[j] != ref:
                found.append(j)
                if len(found) == k:
                    break
        return found

    names_of: dict[str, str] = {}  # ref -> the names listed for it
    other_in: dict[tuple[str, Any], int | None] = {}  # (ref, schedule) -> its first CronJob of another ref
    out = []
    for i in members:
        ref = refs[i]
        others = len(members) - ref_count[ref]
        if not others:
            continue
        if ref not in names_of:
            names = ", ".join(f"{refs[j]} ({_when(cjs[j])})" for j in first_other(members, ref, 5))
            names_of[ref] = names + (f" and {others - 5} more" if others > 5 else "")
        msg = f"{POD}: image {images} with the same command, args, env and volumes as {names_of[ref]}"
        best: tuple[datetime, int] | None = None
        for key, pool in by_sched.items():
            if (ref, key) not in other_in:
                found = first_other(pool, ref, 1)
                other_in[(ref, key)] = found[0] if found else None
            j = other_in[(ref, key)]
            t = meet(key_of[i], key) if j is not None else None
            if j is not None and t is not None and (best is None or (t, j) < best):
                best = (t, j)
        if best is not None:
            t, j = best
            out.append((i, Hit(f"{msg}; both run at {rfc3339_z(t)} (with {refs[j]}): that slot's work is "
                               "done twice, possibly at once (Forbid does not hold across CronJobs)", POD,
                               "warning")))
        else:
            out.append((i, Hit(f"{msg}; their slots do not meet in the next 5 weeks (one job split over "
                               "two schedules? then lint-ignore it)", POD, "info")))
    return out


# --------------------------------------------------------------------------- DST


def _abbr(zone: str, instant: datetime) -> str:
    from zoneinfo import ZoneInfo

    return instant.astimezone(ZoneInfo(zone)).strftime("%Z")


def check_dst_gap(cj: Obj, now: datetime) -> list[Hit]:
    sched = parsed_schedule(cj)
    if sched is None:
        return []
    parts = []
    for h in dst_hits(sched, now):
        if h.transition.kind == "gap" and h.zone_runs < h.wall_runs:
            lo, hi = (h.transition.wall_start, h.transition.wall_end)
            times = ", ".join(s.strftime("%H:%M") for s in h.slots)
            parts.append(f"{h.local_date} {times} (clocks jump {lo:%H:%M}->{hi:%H:%M}): skipped")
    if not parts:
        return []
    return [Hit(f"spec.schedule '{sched.expr}' in {sched.zone} falls in a DST gap: " + "; ".join(parts), "spec.schedule")]


def check_dst_fold(cj: Obj, now: datetime) -> list[Hit]:
    from cronctl.timeutil import rfc3339_z

    sched = parsed_schedule(cj)
    if sched is None:
        return []
    parts = []
    for h in dst_hits(sched, now):
        if h.transition.kind == "fold" and h.zone_runs > h.wall_runs:
            times = ", ".join(s.strftime("%H:%M") for s in h.slots)
            both = " and ".join(f"{rfc3339_z(r)} ({_abbr(sched.zone, r)})" for r in h.zone_instants)
            parts.append(f"{h.local_date} {times} happens twice: runs at {both}")
    if not parts:
        return []
    return [Hit(f"spec.schedule '{sched.expr}' in {sched.zone} falls in a DST repeat: " + "; ".join(parts), "spec.schedule")]


# --------------------------------------------------------------------------- the registry

RULES: tuple[Rule, ...] = (
    Rule("CJ001", "missing-time-zone", "warning", "spec.timeZone is not set",
         "The schedule then follows kube-controller-manager's local zone, which can change with the cluster.",
         "Set spec.timeZone (Etc/UTC for interval work, the business zone only for local-time promises).",
         check_missing_time_zone),
    Rule("CJ002", "no-starting-deadline", "warning", "spec.startingDeadlineSeconds is not set",
         "On unsuspend or after controller downtime the most recent missed run starts, however old.",
         "Set spec.startingDeadlineSeconds to how late a run is still useful (at least 10).",
         check_no_starting_deadline),
    Rule("CJ003", "starting-deadline-zero", "error", "spec.startingDeadlineSeconds is 0",
         "The controller only starts runs inside (now - 0 s, now], so no Job is ever created.",
         "Set spec.startingDeadlineSeconds to 10 or more, or remove it.",
         check_starting_deadline_zero),
    Rule("CJ004", "starting-deadline-too-short", "warning", "spec.startingDeadlineSeconds under 10 s",
         "The controller syncs about every 10 s; one late sync drops the run without any event.",
         "Set spec.startingDeadlineSeconds to 10 or more (how late a run is still useful).",
         check_starting_deadline_short),
    Rule("CJ005", "tz-in-schedule", "error", "TZ= or CRON_TZ= in spec.schedule",
         "The API server refuses it on create; old objects get an UnsupportedSchedule warning every sync.",
         "Remove the prefix from spec.schedule and set spec.timeZone instead.",
         check_tz_in_schedule),
    Rule("CJ006", "dst-gap-skips-run", "warning", "a run falls in a DST gap within two years",
         "Wall-clock times in a spring-forward gap do not exist; the controller skips that run (not moved later).",
         "Move the run out of the zone's transition hour, or use timeZone Etc/UTC.",
         check_dst_gap),
    Rule("CJ007", "dst-fold-doubles-run", "warning", "a run falls in a DST repeat within two years",
         "Wall-clock times in a fall-back hour happen twice; the controller runs the Job twice.",
         "Move the run out of the zone's transition hour, use Etc/UTC, or make the run idempotent per local date.",
         check_dst_fold),
    Rule("CJ008", "schedule-never-fires", "error", "the schedule never fires",
         "An impossible date (e.g. 30 February) parses, but the controller reports InvalidSchedule and creates nothing.",
         "Fix spec.schedule to a date that exists.",
         check_never_fires),
    Rule("CJ009", "unparseable-schedule", "error", "spec.schedule does not parse",
         "The API server refuses it, and the controller reports UnparseableSchedule for an old object.",
         "Write a 5-field robfig/cron v3 schedule (check it with cronctl explain).",
         check_unparseable_schedule),
    Rule("CJ010", "unknown-time-zone", "error", "spec.timeZone is not a valid IANA zone",
         "The API server refuses it; the controller reports UnknownTimeZone and creates nothing.",
         "Use an IANA zone name such as Europe/Berlin or Etc/UTC.",
         check_unknown_time_zone),
    Rule("CJ011", "name-too-long", "error", "metadata.name over 52 characters",
         "Job names are <name>-<8 digits> and must fit in 63 characters, so the API server refuses longer names.",
         "Shorten metadata.name to 52 characters or fewer.",
         check_name_too_long),
    Rule("CJ012", "replace-interrupts-work", "warning", "concurrencyPolicy Replace on work that cannot be interrupted",
         "Replace deletes the running Job at the next slot, possibly between a side effect and its record.",
         f"Use Forbid, or annotate {ANN_INTERRUPTIBLE}: \"true\" if every step is resumable; the old pod may "
         "still write while it terminates: cronctl runbook application-locking.",
         check_replace_interrupts),
    Rule("CJ013", "allow-overlaps-side-effects", "warning", "concurrencyPolicy Allow (or unset) on work with side effects",
         "Two overlapping runs both do the work: duplicate documents, double reservations.",
         f"Set concurrencyPolicy Forbid, or annotate {ANN_SIDE_EFFECTS}: \"none\" if overlaps are harmless; "
         "Forbid is no lock (manual runs), a lock in the work is: cronctl runbook application-locking.",
         check_allow_overlaps),
    Rule("CJ014", "no-active-deadline", "warning", "no activeDeadlineSeconds on the Job template",
         "A hung run never ends: with Forbid every later slot is blocked, with Allow they pile up.",
         f"Set {JOB}.activeDeadlineSeconds to the longest acceptable run, retries included.",
         check_no_active_deadline),
    Rule("CJ015", "active-deadline-exceeds-interval", "warning", "activeDeadlineSeconds at or above the interval with Forbid",
         "A run allowed to last longer than the interval holds back the next slots (JobAlreadyActive).",
         f"Keep {JOB}.activeDeadlineSeconds below the schedule's shortest interval, or space the schedule out.",
         check_active_deadline_vs_interval),
    Rule("CJ016", "default-backoff-limit", "warning", "backoffLimit not set (6 retries)",
         "Six retries with backoff up to 6 minutes repeat side effects and hide a permanent failure.",
         f"Set {JOB}.backoffLimit deliberately (0-3 for work with side effects) and use podFailurePolicy.",
         check_default_backoff_limit),
    Rule("CJ017", "restart-policy-on-failure", "warning", "restartPolicy OnFailure",
         "Retries restart the container in the same pod: earlier attempts' logs are lost and counting is muddled.",
         f"Set {POD}.restartPolicy: Never so each attempt is its own pod with its own logs.",
         check_restart_on_failure),
    Rule("CJ018", "failed-history-zero", "warning", "failedJobsHistoryLimit is 0",
         "The evidence of a failure (Job, pods, logs) is deleted before anyone can look at it.",
         "Set spec.failedJobsHistoryLimit to 3 or more, and ship logs elsewhere.",
         check_failed_history_zero),
    Rule("CJ019", "successful-history-zero", "warning", "successfulJobsHistoryLimit is 0",
         "Finished Jobs vanish at once: duplicate or overlapping runs cannot be proven afterwards.",
         "Set spec.successfulJobsHistoryLimit to cover at least a day of runs.",
         check_successful_history_zero),
    Rule("CJ020", "successful-history-short", "info", "successful history covers less than a day",
         "An incident found the next morning has already lost the Jobs that show it.",
         "Raise spec.successfulJobsHistoryLimit, or collect evidence with cronctl bundle before it expires.",
         check_successful_history_short),
    Rule("CJ021", "failed-history-low", "info", "failedJobsHistoryLimit below 3 (default 1)",
         "Only the last failure is kept; a pattern of failures cannot be seen.",
         "Set spec.failedJobsHistoryLimit to 3 or more.",
         check_failed_history_low),
    Rule("CJ022", "short-ttl-deletes-evidence", "warning", "ttlSecondsAfterFinished under a day",
         "The TTL controller deletes finished Jobs with their pods and logs, whatever the history limits say.",
         f"Raise {JOB}.ttlSecondsAfterFinished to 86400 or more, or remove it and rely on history limits.",
         check_short_ttl),
    Rule("CJ023", "image-not-pinned", "warning", "container image without a digest",
         "A tag can move: a rerun may execute different code than the run it repeats.",
         "Pin the image as name@sha256:<digest>.",
         check_image_digest),
    Rule("CJ024", "default-service-account", "warning", "pods run as the default service account",
         "Permissions granted to 'default' reach every pod in the namespace; the Job gets more than it needs.",
         f"Set {POD}.serviceAccountName to a dedicated account (or automountServiceAccountToken: false).",
         check_default_service_account),
    Rule("CJ025", "pause-overdue", "warning", "paused (cronctl pause) past its --until",
         "A pause nobody ended keeps the CronJob suspended: every slot after the intended end is lost.",
         "Resume it (cronctl resume), or pause again with a new --until and reason.",
         check_pause_overdue),
    Rule("CJ026", "run-left-suspended", "warning", "a failed or interrupted cronctl run left it suspended",
         "The run is over (failed, timed out, interrupted) or silent for hours, but its record still holds the "
         "CronJob suspended: every slot since is lost.",
         "cronctl status NAME says what is left; cronctl restore NAME finishes it (--catch-up all runs the "
         "lost slots first).",
         check_run_left_suspended),
    Rule("CJ027", "no-pod-failure-policy", "info", "retries without a podFailurePolicy",
         "Every failed pod is retried the same way: an exit code that means do not retry (bad input, already "
         "done) runs the work again, up to backoffLimit times.",
         f"Add {JOB}.podFailurePolicy: FailJob onExitCodes for the codes that mean do not retry, Ignore on "
         f"DisruptionTarget (it requires {POD}.restartPolicy Never), or set backoffLimit 0.",
         check_no_pod_failure_policy),
    Rule("CJ028", "shell-wrapper-hides-exit-code", "warning", "a sh -c script that can hide a failing command",
         "The container's exit code is the run's outcome: after a; b a failure of a is lost without set -e, in "
         "a | b without pipefail, and || true or a final exit 0 make a failed run a Succeeded Job nobody hears of.",
         "Begin the script with set -e (and set -o pipefail: bash, busybox ash), chain steps with &&, end with "
         "exec PROGRAM, or run the program without a shell.",
         check_shell_hides_exit_code),
    Rule("CJ029", "no-resource-requests", "warning", "a container without cpu or memory requests",
         "A pod that requests nothing is placed as if it needed nothing: when many CronJobs fire at :00 they pile "
         "onto busy nodes, and under memory pressure it is evicted first, mid-run.",
         "Set resources.requests cpu and memory of every container (init containers too) to what a run uses; a "
         "namespace LimitRange default also counts (then lint-ignore it).",
         check_no_resource_requests),
    Rule("CJ030", "no-memory-limit", "info", "a container without a memory limit",
         "Requests place the pod, only a limit bounds it (a separate rule): a leak or an oversized batch grows "
         "until the node runs short, and the run or a neighbour is evicted instead of OOMKilled at a known size.",
         "Set resources.limits.memory of every container, equal to its memory request so that the node cannot "
         "overcommit it.",
         check_no_memory_limit),
    Rule("CJ031", "starting-deadline-exceeds-freshness", "info", "startingDeadlineSeconds above the interval",
         "The controller only ever starts the most recent missed slot: a deadline above the interval never skips "
         "one, so a run held back starts however late, right before the next, on stale data.",
         "Set spec.startingDeadlineSeconds below the schedule's shortest interval, to how late a run is still "
         f"useful; annotate {ANN_SIDE_EFFECTS}: \"none\" if a late extra run is harmless.",
         check_starting_deadline_vs_interval),
    Rule("CJ032", "duplicate-work", "warning", "another CronJob in the namespace does the same work",
         "Two CronJobs with the same image, command, args, env and volumes (a renamed copy, a second Helm release) "
         "each do the work: twice per shared slot, at once, since Forbid only sees its own Jobs.",
         "Delete or suspend the copy; if the work is meant to run on two schedules, give each its own args or "
         "lint-ignore it; a lock both copies respect: cronctl runbook application-locking.",
         None, check_duplicate_work),
    Rule("CJ033", "name-not-dns-subdomain", "error", "metadata.name or namespace is not a valid Kubernetes name",
         "The API server refuses the object: a CronJob name must be a DNS-1123 subdomain (lower case, digits, '-', "
         "'.'), a namespace a DNS-1123 label; cronctl refuses such names on its command line too.",
         "Rename it: lower-case letters, digits and '-' (and '.' in a CronJob name), starting and ending with a "
         "letter or digit.",
         check_name_shape),
    Rule("CJ034", "gitops-pins-suspend", "warning", "a GitOps controller's manifest sets spec.suspend",
         "Argo CD (self-heal), Flux or a Helm chart that writes spec.suspend puts Git's value back within its sync "
         "interval: a hold made during an incident is undone and the controller starts a scheduled Job beside the "
         "manual one. cronctl run-manual refuses under Argo CD and holds Flux with its reconcile annotation.",
         "Leave spec.suspend out of the manifest (then nothing reverts a hold), or for Argo CD add ignoreDifferences "
         "on /spec/suspend with RespectIgnoreDifferences=true; see cronctl runbook gitops.",
         check_gitops_pins_suspend),
)

RULES_BY_ID: dict[str, Rule] = {r.id: r for r in RULES}
