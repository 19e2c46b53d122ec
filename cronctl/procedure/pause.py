"""``cronctl pause`` / ``cronctl resume``: suspend a CronJob on purpose, with who, why and until
when recorded on it; resume with the controller's next move shown (and chosen) first.

Rules (docs/commands/pause.md):
* pause: one merge patch guarded by resourceVersion sets ``spec.suspend: true`` and the pause
  annotations (``cronctl.dev/paused-by``, ``-at``, ``pause-reason``, ``paused-until``; visible in
  ``kubectl describe``). Refused while a run-manual record holds the CronJob, and when it is
  already paused (resume first). A CronJob someone else suspended gets the pause recorded.
* resume: refused while a run-manual record holds the CronJob (``cronctl restore`` finishes
  that) and while a child Job is unfinished (un-suspending would let the controller start a
  scheduled Job beside it). Prints what the controller will do, asks, then one guarded patch
  sets ``spec.suspend: false`` and removes the pause annotations. Not suspended: nothing to do.

Both return typed results (:class:`Paused`, :class:`Resumed`); ``cronctl.cli.pause`` makes the
``-o json`` document of them and masks it.
"""

from __future__ import annotations

import json

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from cronctl import gitops, model
from cronctl.cluster import Cluster, Obj
from cronctl.errors import BadInput, BadUsage, Conflict, Refused, option
from cronctl.procedure.base import Audit, Clock, Reporter, rv, server_version_if_needed
from cronctl.procedure.predict import Prediction, change_words, predict, suspend_change
from cronctl.procedure.restore import give_up_catch_up, starts_catch_up
from cronctl.timeutil import rfc3339_z


@dataclass
class PauseOptions:
    cronjob: str
    reason: str
    until: datetime | None = None
    yes: bool = False
    interactive: bool = False
    gitops: str = "auto"  # --gitops auto|annotate|refuse|ignore (cronctl.gitops.choose)


@dataclass
class ResumeOptions:
    cronjob: str
    yes: bool = False
    interactive: bool = False
    catch_up: str = "latest"  # latest | none (procedure.restore.give_up_catch_up)


@dataclass(frozen=True)
class Paused:
    """What ``pause`` did: the pause it recorded (the CronJob is suspended now), and how the hold was
    made under the GitOps controller seen. Unmasked: the CLI masks what it prints."""

    cronjob: str
    namespace: str
    was_suspended: bool  # suspended before (by someone else): only the pause was recorded
    pause: model.Pause
    message: str
    seen: gitops.GitOps  # the GitOps controller seen
    strategy: gitops.Strategy


@dataclass(frozen=True)
class Resumed:
    """What ``resume`` did. ``resumed`` False: the CronJob was not suspended, nothing to resume
    (``changed``: a pause record left behind was removed; no prediction). Unmasked: the CLI masks
    what it prints."""

    cronjob: str
    namespace: str
    resumed: bool
    changed: bool
    pause: model.Pause | None  # the pause resumed (or removed), None when there was none
    prediction: Prediction | None  # the controller's next move after un-suspending
    message: str
    catch_up: str = "latest"  # --catch-up latest|none
    given_up: tuple[str, ...] = ()  # the slots --catch-up none gave up (UTC), oldest first
    change: Any = None  # cronctl.change.Change: what the write made the controller do (diff's rule)


def _held(cj: Obj, ns: str, name: str, what: str) -> None:
    rec = model.read_record(cj)
    if rec is not None:
        raise Refused(f"cronjob {ns}/{name} is held by run {rec.run_id} of {rec.operator or 'unknown'} (step "
                      f"{rec.step}): not {what} it under a run; nothing changed",
                      hint=f"cronctl status {name} -n {ns}; cronctl restore {name} -n {ns} finishes the run")


def _confirm(opts: PauseOptions | ResumeOptions, reporter: Reporter, question: str, what: str) -> None:
    if opts.yes:
        return
    if not opts.interactive:
        raise Refused(f"not on a terminal and {option('yes')} not given: refusing to {what} without confirmation; "
                      "nothing changed")
    if not reporter.confirm(question):
        raise Refused("not confirmed; nothing changed")


def _pause_hold(cj: Obj) -> str:
    """A pause's GitOps part (model.ANN_PAUSE_GITOPS): what resume puts back beside suspend."""
    return model.annotations(cj).get(model.ANN_PAUSE_GITOPS, "")


def pause(cluster: Cluster, opts: PauseOptions, clock: Clock, reporter: Reporter) -> Paused:
    name, ns = opts.cronjob, cluster.namespace
    reason = opts.reason.strip()
    if not reason:
        raise BadInput(f"a pause needs a reason ({option('reason')}): it is what the next on-call reads")
    now = clock.now().replace(microsecond=0)  # annotations in whole seconds, as the API's own times
    until = opts.until.replace(microsecond=0) if opts.until is not None else None
    if until is not None and until <= now:
        # a bad --until exits 2 however it is bad (malformed, zero, in the past): one code per flag
        raise BadUsage(f"{option('until')} {rfc3339_z(until)} is not in the future")
    who = cluster.whoami()
    for _ in range(5):
        cj = cluster.get_cronjob(name)
        _held(cj, ns, name, "pausing")
        old = model.read_pause(cj)
        if old is not None:
            raise Refused(f"cronjob {ns}/{name} is already {old.words()}; nothing changed",
                          hint=f"cronctl resume {name} -n {ns} first, then pause again")
        was = model.is_suspended(cj)
        seen = gitops.detect(cj)
        strategy = gitops.choose(seen, opts.gitops)
        if seen.tool is not None:
            reporter.step(f"pause {ns}/{name}: {seen.words()}; {strategy.why}")
        if strategy.kind == "refuse":
            raise Refused(f"{strategy.why}: refusing to pause cronjob {ns}/{name} (--gitops {opts.gitops}); nothing "
                          f"changed", hint=strategy.remedy)
        until_w = f" until {rfc3339_z(until)}" if until else ""
        reporter.step(f"pause {ns}/{name}{until_w}: spec.suspend {'stays' if was else 'becomes'} true; the controller "
                      "starts nothing while paused; on resume it starts at most the latest missed slot")
        _confirm(opts, reporter, f"Pause {ns}/{name}{until_w} ({reason})?", f"pause cronjob {ns}/{name}")
        ann = {model.ANN_PAUSED_BY: who, model.ANN_PAUSED_AT: rfc3339_z(now), model.ANN_PAUSE_REASON: reason,
               model.ANN_PAUSED_UNTIL: rfc3339_z(until) if until else None}
        if strategy.kind == "annotate":  # Flux leaves it alone while paused; resume puts the value back
            prev = model.annotations(cj).get(gitops.FLUX_RECONCILE)
            ann[gitops.FLUX_RECONCILE] = gitops.FLUX_DISABLED
            ann[model.ANN_PAUSE_GITOPS] = json.dumps({"strategy": "annotate", "annotation": gitops.FLUX_RECONCILE,
                                                      "previous": prev}, separators=(",", ":"), sort_keys=True)
        try:
            cj = cluster.patch_cronjob(name, {"spec": {"suspend": True}, "metadata": {"annotations": ann}},
                                       resource_version=rv(cj))
        except Conflict:
            continue
        p = model.Pause(by=who, at=now, reason=reason, until=until)
        msg = f"cronjob {ns}/{name} {p.words()}" + (" (it was already suspended)" if was else "")
        Audit(cluster, reporter, clock).event(cj, "CronctlPaused", f"cronctl pause: {p.words()}"
                                              + (" (it was already suspended)" if was else ""))
        return Paused(cronjob=name, namespace=ns, was_suspended=was, pause=p, message=msg, seen=seen,
                      strategy=strategy)
    raise Conflict(f"cronjob {ns}/{name} kept changing while pausing; nothing changed, try again")


def resume(cluster: Cluster, opts: ResumeOptions, clock: Clock, reporter: Reporter) -> Resumed:
    name, ns = opts.cronjob, cluster.namespace
    given: list[str] = []  # slots given up by --catch-up none (kept if a retry follows the status patch)
    for _ in range(5):
        cj = cluster.get_cronjob(name)
        _held(cj, ns, name, "resuming")
        p = model.read_pause(cj)
        if not model.is_suspended(cj):
            msg = f"nothing to resume: cronjob {ns}/{name} is not suspended"
            if p is not None:  # a pause record left behind (someone un-suspended with kubectl, or a GitOps revert)
                writes = model.suspend_writes(cj)  # who set it back, and when, ends the kept pause
                ended_at, ended_by = writes[-1] if writes else (clock.now(), "unknown")
                kept = {model.ANN_PAUSES: model.pauses_with(cj, p, resumed_by=ended_by,
                                                             resumed_at=ended_at.replace(microsecond=0))}
                cluster.patch_cronjob(name, {"metadata": {"annotations": {**model.clear_pause_annotations(),
                                                                          **gitops.put_back(_pause_hold(cj)),
                                                                          **kept}}},
                                      resource_version=rv(cj))
                msg += f"; removed the leftover pause record ({p.words()}; {model.hold_reverted(cj)})"
            return Resumed(cronjob=name, namespace=ns, resumed=False, changed=p is not None, pause=p, prediction=None,
                           message=msg, catch_up=opts.catch_up)
        jobs, _ = cluster.list_jobs()
        running = [model.name_of(j) for j in model.unfinished_children(cj, jobs)]
        if running:
            raise Refused(f"job {', '.join(running)} of cronjob {ns}/{name} is still running: resuming now would "
                          "let the controller start a scheduled Job beside it; nothing changed",
                          hint=f"wait for it (cronctl status {name} -n {ns}), then resume")
        now = clock.now()
        pred = predict(cj, now, suspended=False, jobs=jobs, server_version=server_version_if_needed(cluster, jobs))
        if p is None:
            reporter.warn(f"cronjob {ns}/{name} was suspended without cronctl pause (no pause record)")
        else:
            reporter.step(f"{ns}/{name} is {p.words()}" + (" (past its until)" if p.overdue(now) else ""))
        none = opts.catch_up == "none" and starts_catch_up(pred)
        what = (f"nothing: --catch-up none marks {rfc3339_z(pred.catch_up_for)} processed first (instead of: "
                f"{pred.text})" if none and pred.catch_up_for else pred.text)
        reporter.step(f"resume: set suspend to false; what the controller will do next: {what}")
        chg = suspend_change(cj, now, suspended=False, last_schedule=pred.catch_up_for if none else None, jobs=jobs,
                             server_version=pred.server_version)
        reporter.step(f"at the write, by cronctl diff's rule: {change_words(chg)}")
        _confirm(opts, reporter, f"Resume {ns}/{name}?", f"resume cronjob {ns}/{name}")
        trail: dict[str, str | None] = {}
        if p is not None:  # the finished pause stays on the CronJob: history and bundles name it and its reason
            trail[model.ANN_PAUSES] = model.pauses_with(cj, p, resumed_by=cluster.whoami(),  # after the confirmation
                                                         resumed_at=clock.now().replace(microsecond=0))
        patch = {"spec": {"suspend": False},
                 "metadata": {"annotations": {**model.clear_pause_annotations(), **gitops.put_back(_pause_hold(cj)),
                                              **trail}}}
        try:
            if none:
                cj, given = give_up_catch_up(cluster, cj, pred, reporter)
            cj = cluster.patch_cronjob(name, patch, resource_version=rv(cj))
        except Conflict:
            continue
        after = (f"nothing starts (--catch-up none); {len(given)} slot(s) given up: {', '.join(given[:10])}"
                 + (" ..." if len(given) > 10 else "")) if given else pred.text
        msg = f"resumed cronjob {ns}/{name}; {after}"
        Audit(cluster, reporter, clock).event(cj, "CronctlResumed", f"cronctl resume by {cluster.whoami()}"
                                              + (f" of a pause ({p.words()})" if p else " (no pause record)")
                                              + f"; expected next: {after}")
        return Resumed(cronjob=name, namespace=ns, resumed=True, changed=True, pause=p, prediction=pred, message=msg,
                       catch_up=opts.catch_up, given_up=tuple(given), change=chg)
    raise Conflict(f"cronjob {ns}/{name} kept changing while resuming; nothing changed, try again")
