"""Prometheus alert rules for CronJobs whose windows come from the exact schedule (pure logic).

Teams usually alert on ``time() - kube_cronjob_status_last_successful_time > 7200``: one fixed
threshold that fires every weekend for a weekday job, misses a monthly job that stopped, and knows
nothing of DST. Here the engine walks every slot of the next ``horizon`` days (400 by default) in
the CronJob's own zone, exactly as the controller would (docs/SEMANTICS.md §3), and each window is
the gap between two consecutive slots plus a grace:

* **gaps.** Most slots get ``base`` (the shortest gap length with at most ``MAX_EXCEPTIONS`` longer
  gaps in the horizon); each longer gap (a weekday job's Friday to Monday, a monthly job's 31-day
  month, a DST night's 25-hour day) is written into the rule with its own time span, so the window
  widens only while that gap is in progress and every slot is checked at its own time.
* **grace.** The start delay ``startingDeadlineSeconds`` allows, the expected run time
  (``--expected-duration``, else the Job template's ``activeDeadlineSeconds``, else none), and a
  margin.

The rules read only metrics kube-state-metrics exports (label names as in its docs/cronjob-metrics.md
and docs/job-metrics.md). This module builds plain dicts; the CLI writes them as YAML or JSON.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from cronctl.errors import BadInput, BadUsage

Obj = dict[str, Any]

HORIZON_DAYS = 400
# kinds of alert, the flag names of their severities, and their defaults
SEVERITY_DEFAULTS = {"missed": "critical", "not-scheduled": "critical", "failed": "warning",
                     "overrun": "warning", "suspended": "warning"}
ALERT_NAMES = {"missed": "CronJobNoRecentSuccess", "not-scheduled": "CronJobNotScheduled",
               "failed": "CronJobLastRunFailed", "overrun": "CronJobRunningPastNextSlot",
               "suspended": "CronJobSuspendedTooLong"}
STALE_ALERT = "CronctlAlertRulesExpired"
MAX_EXCEPTIONS = 64  # longer gaps written into one rule with their own time span (see Gaps)
#: the slots one ``alerts`` run may walk, over all its distinct schedules and zones (equal ones are
#: walked once): a minutely schedule is 576,000 slots in 400 days, about a second; past the cap the run
#: writes nothing and says how to split it (docs/LIMITS.md)
MAX_WALK = 5_000_000


class WalkCapReached(Exception):
    """The slots walked by one run would pass ``MAX_WALK``."""


@dataclass(frozen=True)
class Gap:
    start: int  # Unix seconds of the slot that opens the gap
    end: int  # the next slot

    @property
    def length(self) -> int:
        return self.end - self.start


@dataclass(frozen=True)
class Gaps:
    """The gaps between consecutive slots in [since, until].

    ``base`` is the window every rule starts from: the shortest gap length such that at most
    ``MAX_EXCEPTIONS`` gaps are longer, raised by at most an hour at a time while that delays
    fewer slots than it saves terms (a weekly job's one short spring week). Each longer gap is an *exception*, written into the rule
    with its own time span, so a weekday job's Friday-to-Monday gap (or a monthly job's 31-day
    month, or a DST night's 25-hour day) widens the window only while that gap is in progress.
    """

    since: int
    until: int
    slots: int
    base: int  # seconds
    longest: Gap
    shortest: Gap  # shortest gap with the same UTC offset at both ends (a fall-back night's repeat is no rhythm)
    exceptions: tuple[Gap, ...]  # every gap longer than ``base``, in time order
    # for "running past the next slot": the most common gap length, and every gap of another length
    # (None when more than MAX_EXCEPTIONS differ: the rule then uses the shortest gap for all)
    usual: int = 0
    unusual: tuple[Gap, ...] | None = ()


def schedule_gaps(sched: Any, since: datetime, days: int = HORIZON_DAYS, budget: int | None = None) -> Gaps | None:
    """Walk every slot of ``sched`` (an engine Schedule) from ``since`` for ``days`` days and
    measure the gaps; None when fewer than two slots fall in that time. With ``budget``, raises
    :class:`WalkCapReached` at the first slot past it."""
    from cronctl.schedule.dst import transitions

    start = int(since.timestamp())
    until = start + days * 86400
    if sched.every is not None:
        step = int(sched.every.total_seconds())
        if step <= 0 or step > until - start:
            return None
        g = Gap(start, start + step)
        return Gaps(start, until, (until - start) // step + 1, step, g, g, (), step, ())
    nxt = sched.next_unix
    prev = nxt(start - 1)
    if prev is None or prev > until:
        return None
    # the zone's offset changes in the horizon: a slot's offset is the one after the last change at
    # or before it (one pointer moved forward, instead of a zone lookup per slot)
    changes = [(int(t.at.timestamp()), int(t.offset_after.total_seconds()))
               for t in transitions(sched.zone, since - timedelta(days=1), since + timedelta(days=days + 1))]
    i = 0
    slots, prev_off = 1, 0
    while i < len(changes) and changes[i][0] <= prev:
        prev_off = changes[i][1]
        i += 1
    by_length: dict[int, list[Gap]] = {}  # at most MAX_EXCEPTIONS + 1 kept per length: enough to choose
    counts: dict[int, int] = {}
    shortest: Gap | None = None
    any_shortest: Gap | None = None
    while True:
        cur = nxt(prev)
        if cur is None or cur > until:
            break
        slots += 1
        if budget is not None and slots > budget:
            raise WalkCapReached(slots)
        length = cur - prev
        off = prev_off
        while i < len(changes) and changes[i][0] <= cur:
            off = changes[i][1]
            i += 1
        g = Gap(prev, cur)
        n = counts.get(length, 0)
        counts[length] = n + 1
        if n <= MAX_EXCEPTIONS:
            by_length.setdefault(length, []).append(g)
        if off == prev_off and (shortest is None or length < shortest.length):
            shortest = g
        if any_shortest is None or length < any_shortest.length:
            any_shortest = g
        prev, prev_off = cur, off
    if any_shortest is None:
        return None
    lengths = sorted(counts)
    base, above = lengths[-1], 0
    for length in reversed(lengths[1:]):  # lower the base while the gaps above it stay few enough
        above += counts[length]
        if above > MAX_EXCEPTIONS:
            break
        base = lengths[lengths.index(length) - 1]
    # a DST-sized step up (at most an hour) that saves more terms than it delays slots: a weekly
    # job's one 167-hour spring week is then an hour late, instead of 55 ordinary weeks as terms
    i = lengths.index(base)
    while i + 1 < len(lengths) and lengths[i + 1] - base <= 3600 and \
            sum(counts[x] for x in lengths[:i + 1]) < counts[lengths[i + 1]]:
        i += 1
        base = lengths[i]
    exceptions = tuple(sorted((g for length in lengths if length > base for g in by_length[length]),
                              key=lambda g: g.start))
    longest = by_length[lengths[-1]][0]
    usual = max(lengths, key=lambda x: (counts[x], -x))  # a tie: the shorter, so nothing fires late
    unusual = (tuple(sorted((g for length in lengths if length != usual for g in by_length[length]),
                            key=lambda g: g.start))
               if sum(counts.values()) - counts[usual] <= MAX_EXCEPTIONS else None)
    return Gaps(start, until, slots, base, longest, shortest or any_shortest, exceptions, usual, unusual)


class Walks:
    """The schedules one run walks: CronJobs often share a schedule and zone, and each such pair is
    walked once; all walks together stay under ``cap`` slots (:class:`WalkCapReached` past it)."""

    def __init__(self, cap: int = MAX_WALK) -> None:
        self.cap, self.slots = cap, 0
        self.done: dict[tuple[Any, int, int], Gaps | None] = {}

    def gaps(self, sched: Any, since: int, days: int) -> Gaps | None:
        key = (sched, since, days)
        if key not in self.done:
            got = schedule_gaps(sched, datetime.fromtimestamp(since, timezone.utc), days,
                                budget=self.cap - self.slots)
            # an @every schedule's gaps are arithmetic, not walked: they cost nothing
            self.slots += got.slots if got is not None and getattr(sched, "every", None) is None else 0
            self.done[key] = got
        return self.done[key]


#: the fields ``--runbook-url`` may name, each as ``{name}`` alone
RUNBOOK_FIELDS = ("anchor", "namespace", "cronjob")


def runbook_problem(template: str) -> str | None:
    """Why ``template`` is no ``--runbook-url`` template (None: it is one): braces may hold only a name
    of :data:`RUNBOOK_FIELDS`, with no format spec (``{anchor:>99999999}`` padded a URL to 100 MB),
    conversion, attribute or index (``{cronjob.__class__}``); ``{{`` and ``}}`` are braces."""
    import string

    try:
        parts = list(string.Formatter().parse(template))
    except ValueError as e:
        return str(e)
    for _text, name, spec, conv in parts:
        if name is None:
            continue
        if name not in RUNBOOK_FIELDS or spec or conv:
            return f"{{{name}{'!' + conv if conv else ''}{':' + spec if spec else ''}}} is not one of the fields"
    return None


def fill_runbook(template: str, **fields: str) -> str:
    """``template`` with its fields filled in: no str.format (checked by :func:`runbook_problem`
    first; a field it does not name is left empty)."""
    import string

    out = []
    for text, name, _spec, _conv in string.Formatter().parse(template):
        out.append(text)
        if name is not None:
            out.append(fields.get(name, ""))
    return "".join(out)


def runbook_link(url: str | None, **fields: str) -> dict[str, str]:
    """The ``runbook_url`` annotation, or none without ``--runbook-url``: Alertmanager and Grafana show
    it as a link from a notification, where only an absolute URL leads anywhere, and cronctl cannot
    know where a team serves runbooks/alerts.md (the ``runbook`` annotation names the command)."""
    return {} if url is None else {"runbook_url": fill_runbook(url, **fields)}


def check_runbook_url(url: str) -> str:
    """``--runbook-url``: an absolute http(s) URL whose braces are only {anchor}, {namespace} and
    {cronjob}, alone (no format spec, conversion, attribute or index); else ``BadUsage`` (exit 2)
    naming what is wrong."""
    if runbook_problem(url) is not None:
        raise BadUsage(f"bad --runbook-url {url!r}: only {{anchor}}, {{namespace}} and {{cronjob}} may appear in "
                       "braces, with no format spec")
    if not re.match(r"https?://[^/\s]+", url):
        raise BadUsage(f"bad --runbook-url {url!r}: an absolute http:// or https:// URL (a notification links to "
                       "it from outside any repository), e.g. https://wiki.example.com/runbooks/alerts.md#{anchor}")
    return url


@dataclass(frozen=True)
class AlertOptions:
    margin: int = 600  # seconds added to every window
    expected_duration: int | None = None  # seconds a run takes; None: activeDeadlineSeconds, else 0
    max_suspend: int = 86400  # suspended longer than this fires (unless a pause says until when)
    severities: dict[str, str] = field(default_factory=lambda: dict(SEVERITY_DEFAULTS))
    runbook_url: str | None = None  # absolute; {anchor}, {namespace}, {cronjob} filled in; None: not written
    horizon_days: int = HORIZON_DAYS
    max_walk: int = MAX_WALK  # slots walked by one run, over all distinct schedules and zones


@dataclass(frozen=True)
class Skipped:
    ref: str
    reason: str


@dataclass
class RuleSet:
    groups: list[Obj]
    skipped: list[Skipped]
    windows: list[Obj]  # per CronJob: the windows and how they were computed (for -o and the tests)


def _selector(**labels: str) -> str:
    import json

    return "{" + ", ".join(f"{k}={json.dumps(v)}" for k, v in labels.items()) + "}"


def _dur(seconds: int) -> str:
    """Exact, largest unit first: 3d1h10m, 10m, 0s (a window must not be rounded in its own text)."""
    if seconds <= 0:
        return "0s"
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        n, seconds = divmod(seconds, size)
        if n:
            parts.append(f"{n}{unit}")
    return "".join(parts)


def _window_expr(gaps: Gaps, grace: int) -> str:
    """The window as a PromQL scalar expression: ``base + grace`` seconds, widened to an
    exception's gap plus ``grace`` while that gap is the one in progress (from the moment the
    base window would run out until the next slot's run is due), and to the longest gap after the
    horizon (the rules then stay quiet but coarse until they are written again)."""
    base = gaps.base + grace
    terms = [str(base)]
    for g in gaps.exceptions:
        terms.append(f"{g.length - gaps.base} * (time() >= bool {g.start + base}) * (time() < bool {g.end + grace})")
    if gaps.longest.length > gaps.base:
        terms.append(f"{gaps.longest.length - gaps.base} * (time() >= bool {gaps.until})")
    return terms[0] if len(terms) == 1 else "(\n  " + "\n  + ".join(terms) + "\n)"


def _overrun_limit(gaps: Gaps, nssel: str) -> str:
    """How long a Job may run before the next slot passes, as a PromQL expression of its start
    time: the usual gap, and each gap of another length while the Job started inside it (a weekday
    job's Friday Job has until Monday). Too many irregular gaps: the shortest gap for every Job (it
    may then fire before the next slot, never after)."""
    if gaps.unusual is None:
        return str(gaps.shortest.length)
    start = f"kube_job_status_start_time{nssel}"
    terms = [f"({g.length - gaps.usual}) * ({start} >= bool {g.start}) * ({start} < bool {g.end})"
             for g in gaps.unusual]
    return str(gaps.usual) if not terms else "(\n    " + str(gaps.usual) + "\n    + " + "\n    + ".join(terms) + "\n  )"


def _overrun_words(gaps: Gaps, zone: str) -> str:
    if gaps.unusual is None:
        s = gaps.shortest
        return (f"more than {MAX_EXCEPTIONS} gaps differ, so the shortest, {_dur(s.length)} "
                f"({_local(s.start, zone)} to {_local(s.end, zone)}), counts for every Job")
    if not gaps.unusual:
        return f"{_dur(gaps.usual)} between every two slots"
    return (f"{_dur(gaps.usual)} for most slots; {len(gaps.unusual)} gap{'s' if len(gaps.unusual) != 1 else ''} "
            f"of another length count for the Jobs started in them")


def _local(unix: int, zone: str) -> str:
    from cronctl.timeutil import local_and_utc

    return local_and_utc(datetime.fromtimestamp(unix, timezone.utc), zone)


def rules_for(cj: Obj, now: datetime, opts: AlertOptions,
              walks: Walks | None = None) -> tuple[Obj | None, Obj | None, Skipped | None]:
    """One rule group for one CronJob, the windows it used, or why there is none. ``walks``: the
    run's walks (shared, capped); a fresh one without it."""
    from cronctl import model, names
    from cronctl.errors import ScheduleError
    from cronctl.schedule import parse
    from cronctl.schedule.describe import describe
    from cronctl.textsafe import visible

    view = model.cronjob_view(cj)  # the controller's inputs, with the one set of checks
    ns, name = view.namespace or "default", view.name
    ref = f"{ns}/{name}"
    # the names go into PromQL selectors and into annotation templates: only Kubernetes-shaped ones
    if not (len(name) <= 253 and len(ns) <= 63 and names.has_shape(name, subdomain=True)
            and names.has_shape(ns, subdomain=False)):
        return None, None, Skipped(visible(ref), "not a Kubernetes name; no rules written for it")
    if view.problem is not None:
        return None, None, Skipped(ref, view.problem)
    expr, tz = view.schedule, view.time_zone
    if not expr:
        return None, None, Skipped(ref, "spec.schedule is missing")
    try:
        sched = parse(expr, tz)
    except ScheduleError as e:
        return None, None, Skipped(ref, f"schedule does not parse: {e.message}")
    gaps = (walks or Walks(opts.max_walk)).gaps(sched, int(now.timestamp()), opts.horizon_days)
    if gaps is None:
        return None, None, Skipped(ref, f"the schedule fires fewer than twice in {opts.horizon_days} days; "
                                        "no window can be computed")
    start_delay = max(view.starting_deadline or 0, 0)
    ads = view.job_active_deadline
    if opts.expected_duration is not None:
        run, run_from = opts.expected_duration, "--expected-duration"
    elif ads is not None and ads > 0:
        run, run_from = ads, "activeDeadlineSeconds"
    else:
        run, run_from = 0, "unknown: set --expected-duration"
    words = describe(sched, tz)
    zone = sched.zone
    longest, shortest = gaps.longest, gaps.shortest
    grace_success = start_delay + run + opts.margin
    grace_schedule = start_delay + opts.margin
    horizon_end = datetime.fromtimestamp(gaps.until, timezone.utc)
    longer = len(gaps.exceptions)
    how = (f"the gap from the previous slot to the next: {_dur(gaps.base)} for most slots of the "
           f"{opts.horizon_days} days from {_local(gaps.since, zone)}" +
           (f"; {longer} longer gap{'s' if longer != 1 else ''} (the longest {_dur(longest.length)}, "
            f"{_local(longest.start, zone)} to {_local(longest.end, zone)}) widen the window while in progress"
            if longer else "") +
           (f"; after {_local(gaps.until, zone)} {_dur(longest.length)} until the rules are written again"
            if longest.length > gaps.base else ""))
    grace_words = (f"grace {_dur(grace_success)} = start delay {_dur(start_delay)} "
                   f"({'startingDeadlineSeconds' if start_delay else 'startingDeadlineSeconds not set'}) + "
                   f"expected run time {_dur(run)} ({run_from}) + margin {_dur(opts.margin)}")
    cjsel = _selector(namespace=ns, cronjob=name)
    owner = _selector(namespace=ns, owner_kind="CronJob", owner_name=name)
    nssel = _selector(namespace=ns)

    def not_suspended(seconds: int) -> str:  # nor at any time in the window: a resumed CronJob starts afresh
        return (f"on (namespace, cronjob) max by (namespace, cronjob) "
                f"(max_over_time(kube_cronjob_spec_suspend{cjsel}[{seconds}s])) == 0")
    labels_common = {"namespace": ns, "cronjob": name}

    def rule(kind: str, expr_text: str, summary: str, description: str, for_: str | None = None) -> Obj:
        alert = ALERT_NAMES[kind]
        r: Obj = {"alert": alert, "expr": expr_text}
        if for_:
            r["for"] = for_
        r["labels"] = {"severity": opts.severities.get(kind, SEVERITY_DEFAULTS[kind]), **labels_common}
        r["annotations"] = {
            "summary": summary,
            "description": description,
            **runbook_link(opts.runbook_url, anchor=alert.lower(), namespace=ns, cronjob=name),
            "runbook": f"cronctl runbook alerts {name} -n {ns}",
        }
        return r

    miss_window = _window_expr(gaps, grace_success)
    sched_window = _window_expr(gaps, grace_schedule)
    longest_any = longest.length
    rules: list[Obj] = [
        rule("missed",
             f"(time() - max by (namespace, cronjob) (kube_cronjob_status_last_successful_time{cjsel} "
             f"or kube_cronjob_created{cjsel})) > {miss_window}\n"
             f"and {not_suspended(longest_any + grace_success)}",
             f"cronjob {ref}: no successful run since before its last slot (+ {_dur(grace_success)} grace)",
             f"cronjob {ref} runs {words}. It has not succeeded for {{{{ $value | humanizeDuration }}}} "
             f"(window: {how}; plus {grace_words}). A slot was missed or its run failed: "
             f"see `cronctl history {name} -n {ns}`."),
        rule("not-scheduled",
             f"(time() - max by (namespace, cronjob) (kube_cronjob_status_last_schedule_time{cjsel} "
             f"or kube_cronjob_created{cjsel})) > {sched_window}\n"
             f"and {not_suspended(longest_any + grace_schedule)}",
             f"cronjob {ref}: the controller did not start its last slot (+ {_dur(grace_schedule)} grace)",
             f"cronjob {ref} runs {words} and is not suspended, but its last schedule time is "
             f"{{{{ $value | humanizeDuration }}}} old (window: {how}; plus grace "
             f"{_dur(grace_schedule)} = start delay {_dur(start_delay)} + margin {_dur(opts.margin)}). "
             f"The controller did not act: check kube-controller-manager, the events "
             f"(FailedCreate, MissSchedule, TooManyMissedTimes) and `cronctl status {name} -n {ns}`."),
        rule("failed",
             f"max by (namespace, job_name) (kube_job_failed{_selector(namespace=ns, condition='true')}) == 1\n"
             f"and on (namespace, job_name) (\n"
             f"  {_owned_start(nssel, owner)}\n"
             f"  == on (namespace) group_left () max by (namespace) ({_owned_start(nssel, owner)})\n)",
             f"cronjob {ref}: the most recent Job {{{{ $labels.job_name }}}} failed",
             f"The newest Job of cronjob {ref} ({words}), {{{{ $labels.job_name }}}}, ended Failed. "
             f"Collect the evidence before the history limit deletes it: `cronctl bundle {name} -n {ns}`; "
             f"run the slot again with `cronctl run-manual {name} -n {ns} --retry` once the cause is fixed."),
        rule("overrun",
             f"max by (namespace, job_name) (\n"
             f"  ((time() - kube_job_status_start_time{nssel}) > {_overrun_limit(gaps, nssel)})\n"
             f"  and on (namespace, job_name) (kube_job_status_active{nssel} > 0)\n"
             f"  and on (namespace, job_name) kube_job_owner{owner}\n"
             f")",
             f"cronjob {ref}: Job {{{{ $labels.job_name }}}} runs longer than the gap to the next slot",
             f"Job {{{{ $labels.job_name }}}} of cronjob {ref} has run for {{{{ $value | humanizeDuration }}}}, "
             f"longer than the gap from the slot it started in to the next ({_overrun_words(gaps, zone)}; "
             f"{words}). With concurrencyPolicy Forbid the next slot is skipped; with Allow two runs overlap."),
    ]
    pause = model.read_pause(cj)
    until = pause.until if pause is not None else None
    if until is not None:
        rules.append(rule(
            "suspended",
            f"max by (namespace, cronjob) (kube_cronjob_spec_suspend{cjsel}) == 1\n"
            f"and on () (vector(time()) > {int(until.timestamp()) + opts.margin})",
            f"cronjob {ref}: still suspended after its pause ended",
            f"cronjob {ref} was paused until {_local(int(until.timestamp()), zone)} "
            f"(cronctl pause); it is still suspended {_dur(opts.margin)} after that. Resume it "
            f"(`cronctl resume {name} -n {ns}`) or pause it again with a new --until, then regenerate these rules."))
    else:
        rules.append(rule(
            "suspended",
            f"max by (namespace, cronjob) (kube_cronjob_spec_suspend{cjsel}) == 1",
            f"cronjob {ref}: suspended for more than {_dur(opts.max_suspend)}",
            f"cronjob {ref} ({words}) has been suspended for more than {_dur(opts.max_suspend)} "
            f"(--max-suspend); its slots are not running. If that is intended, use `cronctl pause --until` "
            f"and regenerate these rules; otherwise `cronctl resume {name} -n {ns}`.",
            for_=f"{opts.max_suspend}s"))
    group = {"name": f"cronctl.{ns}.{name}", "rules": rules}
    windows = {
        "cronjob": ref, "schedule": expr, "time_zone": zone, "description": words, "slots": gaps.slots,
        "horizon": {"from": _iso(gaps.since), "until": _iso(gaps.until)},
        "base_gap": gaps.base,
        "longest_gap": {"seconds": longest.length, "from": _iso(longest.start), "to": _iso(longest.end)},
        "shortest_gap": {"seconds": shortest.length, "from": _iso(shortest.start), "to": _iso(shortest.end)},
        "longer_gaps": [{"seconds": g.length, "from": _iso(g.start), "to": _iso(g.end)} for g in gaps.exceptions],
        "grace": {"start_delay": start_delay, "expected_run": run, "expected_run_from": run_from,
                  "margin": opts.margin},
        "no_success_window": gaps.base + grace_success, "not_scheduled_window": gaps.base + grace_schedule,
        "overrun_after": ({"usual": gaps.usual, "other_gaps": [{"seconds": g.length, "from": _iso(g.start),
                                                                 "to": _iso(g.end)} for g in gaps.unusual]}
                          if gaps.unusual is not None else {"shortest": shortest.length}),
        "valid_until": _iso(int(horizon_end.timestamp())),
    }
    return group, windows, None


def _owned_start(nssel: str, owner: str) -> str:
    """Start times of the Jobs this CronJob owns (one series per Job, value = start time)."""
    return (f"max by (namespace, job_name) (kube_job_status_start_time{nssel}) "
            f"* on (namespace, job_name) max by (namespace, job_name) (kube_job_owner{owner})")


def _iso(unix: int) -> str:
    from cronctl.timeutil import rfc3339_z

    return rfc3339_z(datetime.fromtimestamp(unix, timezone.utc))


def build(cronjobs: list[Obj], now: datetime, opts: AlertOptions) -> RuleSet:
    """Rule groups for every CronJob that has a computable window, and a last group that fires
    when the rules themselves have run past the horizon they were computed for. Past the walk cap
    nothing is written: a rules file that silently lacks some CronJobs' alerts would be worse
    (BadInput naming how far it got and how to split the run)."""
    groups: list[Obj] = []
    skipped: list[Skipped] = []
    windows: list[Obj] = []
    walks = Walks(opts.max_walk)
    for done, cj in enumerate(cronjobs):
        try:
            group, win, skip = rules_for(cj, now, opts, walks)
        except WalkCapReached:
            raise BadInput(
                f"no alert rules written: the {len(cronjobs)} CronJobs' schedules would walk more than "
                f"{opts.max_walk:,} slots of the next {opts.horizon_days} days (the cap of one run; "
                f"{len(walks.done)} distinct schedules and zones walked, {walks.slots:,} slots, before CronJob "
                f"{done + 1})", hint="write the rules in parts: one namespace (-n), a label selector (-l) or "
                "fewer files (-f) per run") from None
        if skip is not None:
            skipped.append(skip)
            continue
        assert group is not None and win is not None
        groups.append(group)
        windows.append(win)
    if groups:
        until = int(now.timestamp()) + opts.horizon_days * 86400
        groups.append({"name": "cronctl.rules", "rules": [{
            "alert": STALE_ALERT,
            "expr": f"vector(time()) > {until}",
            "labels": {"severity": "warning"},
            "annotations": {
                "summary": "the cronctl alert rules have run past the time their windows were computed for",
                "description": f"These rules were written by `cronctl alerts` at {_iso(int(now.timestamp()))} "
                               f"from the slots of the next {opts.horizon_days} days (until {_iso(until)}). "
                               "After that each window is the longest gap: quiet but late. Run `cronctl alerts` again.",
                **runbook_link(opts.runbook_url, anchor=STALE_ALERT.lower(), namespace="", cronjob=""),
            }}]})
    return RuleSet(groups, skipped, windows)


def prometheus_rule(groups: list[Obj], *, name: str, namespace: str | None,
                    labels: dict[str, str]) -> Obj:
    """The groups wrapped in a prometheus-operator ``PrometheusRule``."""
    md: Obj = {"name": name}
    if namespace:
        md["namespace"] = namespace
    md["labels"] = {"app.kubernetes.io/managed-by": "cronctl", **labels}
    return {"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule", "metadata": md,
            "spec": {"groups": groups}}


# --- rules over the recorder's own metrics (cronctl record --metrics-address) --------------------

#: kinds of recorder-source alert, their severities by default, and their names
RECORDER_SEVERITY_DEFAULTS = {"lost": "critical", "failed": "critical", "duplicate": "critical", "stale": "critical",
                              "long-run": "warning", "overdue-hold": "warning", "suspended": "warning",
                              "recorder": "critical", "ambiguous": "critical", "conflict": "warning"}
RECORDER_ALERT_NAMES = {"lost": "CronJobSlotLost", "failed": "CronJobSlotFailed", "duplicate": "CronJobSlotDuplicate",
                        "stale": "CronJobNoRecentSuccess", "long-run": "CronJobRunNearInterval",
                        "overdue-hold": "CronJobHoldOverdue", "suspended": "CronJobSuspendedTooLong",
                        "recorder-down": "CronctlRecorderDown", "recorder-lag": "CronctlRecorderLagging",
                        "ambiguous": "CronctlEffectAmbiguous", "conflict": "CronctlClaimRefused"}
#: verdicts the lost alert fires on: the slot's work was not done. A suspension by choice
#: (missed-suspended) is left to CronJobSuspendedTooLong and CronJobHoldOverdue
LOST_ALERTED = ("skipped-forbid", "missed-deadline", "missed-too-many", "missed")
DUPLICATE_ALERTED = ("duplicate", "dst-doubled")


@dataclass(frozen=True)
class RecorderAlertOptions:
    margin: int = 600  # seconds a success may be later than due
    max_suspend: int = 86400  # suspended (no pause, no hold) longer than this fires
    max_hold: int = 7200  # a cronctl run's hold older than this fires
    near_interval: float = 0.8  # a run longer than this fraction of the gap to the next slot fires
    recorder_job: str = "cronctl-recorder"  # the scrape job of the recorders (the up metric)
    window: int = 900  # how long a lost, failed or duplicate slot keeps its alert firing
    severities: dict[str, str] = field(default_factory=lambda: dict(RECORDER_SEVERITY_DEFAULTS))
    runbook_url: str | None = None  # as AlertOptions'
    namespace: str | None = None  # only this namespace's CronJobs
    cronjob: str | None = None  # only this CronJob (with namespace)


def recorder_rules(opts: RecorderAlertOptions) -> list[Obj]:
    """Three rule groups over the recorder's metrics (docs/METRICS.md): the slots, the effects
    ``cronctl claim`` recorded (by workflow key), and the recorder.

    They need no CronJob: the recorder computes each CronJob's next slot, interval and success
    deadline from its schedule, so one set of rules covers the fleet, and a schedule change needs
    no new rules. A lost, failed or duplicate slot fires at the first evaluation after the recorder
    closed it (the counter went up) and keeps firing for ``window`` seconds."""
    sel_labels = {k: v for k, v in (("namespace", opts.namespace), ("cronjob", opts.cronjob)) if v}
    inner = ", ".join(f"{k}={_q(v)}" for k, v in sel_labels.items())

    def sel(extra: str = "") -> str:
        parts = [p for p in (inner, extra) if p]
        return "{" + ", ".join(parts) + "}" if parts else ""

    w = _dur(opts.window)
    ref = "{{ $labels.namespace }}/{{ $labels.cronjob }}"
    hist = "cronctl history {{ $labels.cronjob }} -n {{ $labels.namespace }} --ledger default"

    def rule(kind: str, sev_kind: str, expr: str, summary: str, description: str, for_: str | None = None) -> Obj:
        alert = RECORDER_ALERT_NAMES[kind]
        r: Obj = {"alert": alert, "expr": expr}
        if for_:
            r["for"] = for_
        r["labels"] = {"severity": opts.severities.get(sev_kind, RECORDER_SEVERITY_DEFAULTS[sev_kind])}
        r["annotations"] = {"summary": summary, "description": description,
                            **runbook_link(opts.runbook_url, anchor=alert.lower(), namespace=opts.namespace or "",
                                           cronjob=opts.cronjob or "")}
        return r

    lost = "|".join(LOST_ALERTED)
    dup = "|".join(DUPLICATE_ALERTED)
    slots = [
        rule("lost", "lost", f"increase(cronctl_slots_total{sel(f'verdict=~{_q(lost)}')}[{w}]) > 0",
             f"cronjob {ref}: a slot was lost ({{{{ $labels.verdict }}}})",
             f"The recorder closed a slot of cronjob {ref} as {{{{ $labels.verdict }}}} in the last {w}: its work "
             f"was not done and the controller will not do it. See why: `{hist}`; run it: "
             "`cronctl backfill {{ $labels.cronjob }} -n {{ $labels.namespace }} --missed --ledger default`."),
        rule("failed", "failed", f"increase(cronctl_slots_failed_total{sel()}[{w}]) > 0",
             f"cronjob {ref}: a slot's run failed",
             f"The recorder closed a slot of cronjob {ref} in the last {w} whose Job failed (no Job that stood "
             f"for it succeeded): a Job was made, its work was not done. The reason of each: `{hist}`; the logs: "
             f"`cronctl bundle {{{{ $labels.cronjob }}}} -n {{{{ $labels.namespace }}}} --ledger default`; run it "
             "again: `cronctl run-manual {{ $labels.cronjob }} -n {{ $labels.namespace }} --retry`."),
        rule("duplicate", "duplicate",
             f"increase(cronctl_slots_total{sel(f'verdict=~{_q(dup)}')}[{w}]) > 0\n"
             f"or increase(cronctl_slots_beside_manual_total{sel()}[{w}]) > 0\n"
             f"or cronctl_cronjob_jobs_beside_manual{sel()} > 0",
             f"cronjob {ref}: a slot's work ran twice, or a Job runs beside a manual one",
             f"Two Jobs of cronjob {ref} stood for one slot, or a Job ran at the same time as a manual Job "
             "(kubectl create job --from ignores concurrencyPolicy). Check what each did: "
             f"`{hist}`; `cronctl bundle {{{{ $labels.cronjob }}}} -n {{{{ $labels.namespace }}}} --ledger default`."),
        rule("stale", "stale",
             f"(time() - cronctl_cronjob_success_due_timestamp_seconds{sel()}) > {opts.margin}\n"
             f"and cronctl_cronjob_suspended{sel()} == 0 and cronctl_cronjob_paused{sel()} == 0",
             f"cronjob {ref}: no success since its slot was due (+ {_dur(opts.margin)})",
             f"Cronjob {ref} should have succeeded by now: the slot after its last success (or after it was "
             "resumed), plus its startingDeadlineSeconds and the template's activeDeadlineSeconds, plus "
             f"{_dur(opts.margin)}; it is {{{{ $value | humanizeDuration }}}} past that. `{hist}`."),
        rule("long-run", "long-run",
             f"(time() - cronctl_cronjob_oldest_running_start_timestamp_seconds{sel()})\n"
             f"  > {opts.near_interval:g} * cronctl_cronjob_interval_seconds{sel()}\n"
             f"and cronctl_cronjob_oldest_running_start_timestamp_seconds{sel()} > 0",
             f"cronjob {ref}: a Job has run for {opts.near_interval:.0%} of the gap between slots",
             f"A Job of cronjob {ref} has run for {{{{ $value | humanizeDuration }}}}, more than "
             f"{opts.near_interval:.0%} of the gap between its slots: under Forbid the next slot will be "
             "skipped, under Allow two runs will overlap. `cronctl status {{ $labels.cronjob }} -n "
             "{{ $labels.namespace }}`."),
        rule("overdue-hold", "overdue-hold",
             f"(cronctl_cronjob_paused{sel()} == 1 and cronctl_cronjob_pause_until_timestamp_seconds{sel()} > 0\n"
             f"  and (time() - cronctl_cronjob_pause_until_timestamp_seconds{sel()}) > 0)\n"
             f"or (cronctl_cronjob_hold_active{sel()} == 1 and cronctl_cronjob_hold_since_timestamp_seconds{sel()} > 0\n"
             f"  and (time() - cronctl_cronjob_hold_since_timestamp_seconds{sel()}) > {opts.max_hold})",
             f"cronjob {ref}: paused past its --until, or held by a cronctl run for over {_dur(opts.max_hold)}",
             f"Cronjob {ref} is still paused after the --until of its pause, or a cronctl run has held it "
             f"longer than {_dur(opts.max_hold)} (--max-hold): its slots are not running. `cronctl status "
             "{{ $labels.cronjob }} -n {{ $labels.namespace }}`; then `cronctl resume` or `cronctl restore`."),
        rule("suspended", "suspended",
             f"cronctl_cronjob_suspended{sel()} == 1 and cronctl_cronjob_paused{sel()} == 0\n"
             f"and cronctl_cronjob_hold_active{sel()} == 0",
             f"cronjob {ref}: suspended for more than {_dur(opts.max_suspend)} with no pause or run recorded",
             f"Cronjob {ref} has been suspended for more than {_dur(opts.max_suspend)} (--max-suspend) and no "
             "cronctl pause or run says why or until when. Pause it with --until, or `cronctl resume`.",
             for_=f"{opts.max_suspend}s"),
    ]
    # the claims are labelled by workflow key, whose default is NAMESPACE/CRONJOB (a --workflow of
    # one's own is matched only without -n and CRONJOB); a namespace is a DNS label: no regex character
    flows = ([f"workflow={_q(f'{opts.namespace}/{opts.cronjob}')}"] if opts.namespace and opts.cronjob else
             [f"workflow=~{_q(f'{opts.namespace}/.*')}"] if opts.namespace else [])

    def wsel(*extra: str) -> str:
        return "{" + ", ".join([*flows, *extra]) + "}" if flows or extra else ""

    flow = "{{ $labels.workflow }}"
    effects = [
        rule("ambiguous", "ambiguous", f"cronctl_claim_occurrences{wsel('effect=' + _q('ambiguous'))} > 0",
             f"workflow {flow}: {{{{ $value }}}} occurrence(s) whose effect may or may not have happened",
             f"cronctl claim's lease on an occurrence of workflow {flow} ran out while its row still says "
             "running: COMMAND was stopped or lost its ledger after it began, and nobody knows whether the "
             "effect happened. Check it where the effect lands (the payment, the message) before anything runs "
             "it again: `cronctl reconcile CRONJOB -n NAMESPACE --ledger default` (the workflow key's two parts "
             "by default) lists it with its replay line."),
        rule("conflict", "conflict", f"delta(cronctl_claim_conflicts{wsel()}[{w}]) > 0",
             f"workflow {flow}: a second claimer was refused",
             f"A Job claimed an occurrence of workflow {flow} that another held or had done in the last {w}: "
             "cronctl claim refused it, so the effect did not run twice, but something started the work twice "
             "(concurrencyPolicy Allow, kubectl create job --from, a second cluster, a DST fold). Find who: "
             "`cronctl history CRONJOB -n NAMESPACE --ledger default` names the Jobs of the slot."),
    ]
    job = _q(opts.recorder_job)
    health = [
        rule("recorder-down", "recorder",
             f"up{{job={job}}} == 0\nor absent(cronctl_recorder_lease_holder == 1)",
             "no cronctl recorder writes the ledger",
             f"A recorder target of scrape job {opts.recorder_job} is down, or no recorder holds the Lease: "
             "slots are not judged and evidence is not kept while this fires (the cluster deletes it: 3 Jobs, "
             "1 hour of events). Check the recorder's logs and `cronctl record` status lines.",
             for_="2m"),
        rule("recorder-lag", "recorder",
             "cronctl_recorder_lag_seconds > 60\n"
             "or cronctl_recorder_buffer_items > 0.5 * cronctl_recorder_buffer_capacity\n"
             "or (cronctl_recorder_lease_holder == 1 and cronctl_recorder_write_errors_total > 0\n"
             "    and increase(cronctl_recorder_write_errors_total[5m]) > 0)",
             "the cronctl recorder is behind: {{ $labels.instance }}",
             "The recorder's changes wait more than 60 s, its buffer is half full, or its ledger writes fail: "
             "when the buffer fills it stops (exit 9) and evidence may be lost. Check the ledger (PostgreSQL) "
             "and the recorder's status lines.",
             for_="5m"),
    ]
    return [{"name": "cronctl.recorder.slots", "rules": slots}, {"name": "cronctl.recorder.effects", "rules": effects},
            {"name": "cronctl.recorder.health", "rules": health}]


def _q(value: str) -> str:
    import json

    return json.dumps(value)
