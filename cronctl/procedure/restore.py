"""``cronctl restore``: finish or undo a manual run by the record it left on the CronJob.

Rules (documented in docs/commands/restore.md):
* a record present: put back its ``original-suspend`` and remove the record, in one merge patch
  guarded by resourceVersion. Before un-suspending, print what the controller will do next.
* un-suspending while a child Job is unfinished is refused, naming it (that is exactly seed
  004's incident: the controller would start a scheduled Job beside it). Restoring to
  ``suspend: true`` is always safe and is not held back by running children.
* no record and not suspended: nothing to restore (exit 0).
* no record but suspended: refused (exit 3) — cronctl did not suspend it and cannot know the
  value before; un-suspend with kubectl if that is what you mean.
* ``--catch-up none`` (when un-suspending): the slot the controller would start at once is first
  marked processed (``status.lastScheduleTime`` = that slot, status subresource, guarded by
  resourceVersion), so nothing starts; the slots given up are listed and returned. ``latest``
  (default) is the controller's own behaviour.
* ``--force`` clears a stale record: one whose original value is missing or garbled (suspend is
  then left as it is), or whose holder process is still alive on this host. Asks first unless --yes.
* a record is not a credential: whose it is (operator, holder, when) and what restoring sets are
  shown first, and a record cronctl cannot confirm it wrote (``model.record_unconfirmed``: its
  annotations, and the suspend it set, owned by field manager ``cronctl``) is refused like a stale
  one unless ``--force``.

:func:`restore` returns a typed result (:class:`Restored`); ``cronctl.cli.restore`` makes the
``-o json`` document of it and masks it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cronctl import gitops, model
from cronctl.cluster import Cluster, Obj
from cronctl.errors import Conflict, Refused, option
from cronctl.procedure.base import Audit, Clock, Reporter, run_words, rv, server_version_if_needed
from cronctl.procedure.predict import Prediction, change_words, predict, suspend_change


@dataclass
class RestoreOptions:
    cronjob: str
    yes: bool = False
    interactive: bool = False
    force: bool = False
    expect_run_id: str | None = None   # run-manual restoring its own run: only that record
    check_children: bool = True
    #: ``holder -> True/False/None`` (alive / dead / cannot tell); given by the CLI.
    holder_alive: Callable[[str], bool | None] | None = None
    catch_up: str = "latest"           # latest | none (see give_up_catch_up); all: procedure.backfill.restore_all
    #: run-manual restoring its own run: the original value it wrote (a changed record is refused)
    expect_original: bool | None = None
    #: run-manual/backfill restoring its own run: how it ended (succeeded, aborted) for cronctl.dev/runs
    outcome: str | None = None


@dataclass(frozen=True)
class Restored:
    """What ``restore`` did. ``record`` None: there was none and the CronJob is not suspended, nothing
    to restore and nothing changed (the rest stays at its defaults). Unmasked: the CLI masks what it
    prints."""

    cronjob: str
    namespace: str
    message: str
    record: model.RunRecord | None  # the record cleared
    suspend: bool = False  # the suspend value restored
    prediction: Prediction | None = None  # the controller's next move after the restore
    forced: bool = False  # a stale or unconfirmed record cleared with --force
    record_unconfirmed: str | None = None  # why the record is not cronctl's (model.record_unconfirmed), or None
    catch_up: str = "latest"  # --catch-up latest|none
    given_up: tuple[str, ...] = ()  # the slots --catch-up none gave up (UTC), oldest first
    hold_reverted: str | None = None  # who had set spec.suspend back under the hold (then left as it is)
    annotations_put_back: Mapping[str, str | None] = field(default_factory=dict)  # the hold's GitOps part undone
    change: Any = None  # cronctl.change.Change: what the write made the controller do (diff's rule), None if no write of suspend

    @property
    def changed(self) -> bool:
        return self.record is not None


def starts_catch_up(pred: Prediction) -> bool:
    """Whether un-suspending starts (or leaves waiting) a slot that ``--catch-up none`` gives up."""
    return pred.catch_up_for is not None and pred.decision in ("create", "forbid-active")


def give_up_catch_up(cluster: Cluster, cj: Obj, pred: Prediction, reporter: Reporter) -> tuple[Obj, list[str]]:
    """``--catch-up none``: mark the slot the controller would start on un-suspend as processed
    (``status.lastScheduleTime``), so it starts nothing. Returns the CronJob after the patch and the
    slots given up (UTC), oldest first; nothing to do when the prediction starts nothing.
    Raises Conflict when the CronJob moved (read again), Refused without ``patch cronjobs/status``."""
    from cronctl.errors import PermissionMissing, ApiError
    from cronctl.timeutil import rfc3339_z

    if not starts_catch_up(pred) or pred.catch_up_for is None:
        return cj, [rfc3339_z(t) for t in pred.never_times]
    name = model.name_of(cj)
    at = rfc3339_z(pred.catch_up_for)
    try:
        cj = cluster.patch_cronjob_status(name, {"status": {"lastScheduleTime": at}}, resource_version=rv(cj))
    except (PermissionMissing, ApiError) as e:
        if isinstance(e, ApiError) and e.status != 403:
            raise
        raise Refused(f"{option('catch_up')} none needs patch on cronjobs/status (to mark {at} processed): "
                      f"{e.message}; nothing changed", hint=f"use {option('catch_up')} latest, or ask for the "
                      "permission (cronctl runbook rbac)") from e
    given = [rfc3339_z(t) for t in pred.never_times] + [at]
    reporter.step(f"--catch-up none: status.lastScheduleTime set to {at}: the controller starts nothing on "
                  f"un-suspend; {len(given)} slot(s) given up: {', '.join(given[:10])}"
                  + (" ..." if len(given) > 10 else ""))
    return cj, given


def _reverted_at(cj: Obj) -> Any:
    """When spec.suspend was set back by someone else (managedFields), or None."""
    from cronctl.gitops import reverted_by

    who = reverted_by(cj)
    return who.time if who is not None else None


def record_rows(rec: model.RunRecord, target: bool, unconfirmed: str | None) -> list[tuple[str, str]]:
    """Whose record it is and what restoring it sets: shown before anything changes."""
    return [("operator", rec.operator or "unknown"), ("holder", rec.holder or "unknown"),
            ("started", rec.started or "unknown"), ("updated", rec.updated or "unknown"),
            ("step", (rec.step or "unknown") + (f": {rec.note}" if rec.note else "")
             + (" (THE JOB FAILED: check its logs and any partly applied work first)" if rec.step == "failed" else "")),
            ("reason", rec.reason or "none"), ("job", rec.job_name or "none"),
            ("will set", f"suspend={str(target).lower()} and remove the record"),
            ("written by", "cronctl (managedFields)" if unconfirmed is None else f"UNCONFIRMED: {unconfirmed}")]


def judge_record(cj: Obj, rec: model.RunRecord, opts: RestoreOptions,
                 reporter: Reporter | None = None) -> tuple[bool, list[str]]:
    """(the suspend value the restore sets, why the record is stale). Refused for a stale record
    without ``--force``: its original value unknown, its holder still alive on this host, or its
    creation not confirmed (a record is not a credential: one cronctl did not write, planted or
    edited with another client, ``model.record_unconfirmed``). Whose record it is and what it sets
    are shown to ``reporter`` first. run-manual restoring its own run (``expect_run_id``) checks
    instead that the original value is still the one it wrote (``expect_original``)."""
    ns, name = model.meta(cj).get("namespace", ""), model.name_of(cj)
    raw = model.annotations(cj).get(model.ANN_ORIGINAL_SUSPEND, "").lower()
    known = raw in ("true", "false")
    if opts.expect_original is not None and (not known or rec.original_suspend != opts.expect_original):
        raise Refused(f"the original suspend value in run record {rec.run_id} on cronjob {ns}/{name} was "
                      f"changed by someone else (now {raw!r}, written {str(opts.expect_original).lower()}); "
                      f"not touching suspend")
    stale_reasons: list[str] = []
    if not known:
        stale_reasons.append(f"its original suspend value is {'missing' if not raw else repr(raw)}")
    unconfirmed = None if opts.expect_run_id else model.record_unconfirmed(cj)
    if unconfirmed:
        stale_reasons.append(f"its creation cannot be confirmed: {unconfirmed}")
    if opts.holder_alive is not None and rec.holder and rec.step in ("suspended", "verified", "created"):
        if opts.holder_alive(rec.holder):
            stale_reasons.append(f"its holder {rec.holder} is still running on this host")
    target = rec.original_suspend if known else model.is_suspended(cj)
    if reporter is not None and not opts.expect_run_id:
        reporter.show(f"run record {rec.run_id} on cronjob {ns}/{name}", record_rows(rec, target, unconfirmed))
    if stale_reasons and not opts.force:
        raise Refused(f"run record {rec.run_id} on cronjob {ns}/{name}: " + "; ".join(stale_reasons)
                      + "; nothing changed", hint=f"check with the operator and holder it names; {option('force')} "
                      "restores it anyway after confirmation (suspend is left as it is when its original "
                      "value is unknown)")
    return target, stale_reasons


def restore(cluster: Cluster, opts: RestoreOptions, clock: Clock, reporter: Reporter) -> Restored:
    """Restore the recorded original ``suspend`` and clear the record; raises Refused."""
    name, ns = opts.cronjob, cluster.namespace
    confirmed = opts.yes
    given: list[str] = []  # slots given up by --catch-up none (kept if a retry follows the status patch)
    for _ in range(5):
        cj = cluster.get_cronjob(name)
        rec = model.read_record(cj)
        if rec is None:
            if opts.expect_run_id:
                raise Refused(f"the run record {opts.expect_run_id} on cronjob {ns}/{name} was removed by "
                              f"someone else; not touching suspend")
            if model.is_suspended(cj):
                raise Refused(f"cronjob {ns}/{name} is suspended but carries no cronctl run record: nothing "
                              f"to restore (cronctl did not suspend it and does not know the value before)",
                              hint=f"to resume it on purpose: kubectl -n {ns} patch cronjob {name} --type=merge "
                                   f"-p '{{\"spec\":{{\"suspend\":false}}}}'")
            msg = f"nothing to restore: cronjob {ns}/{name} has no run record and is not suspended"
            return Restored(cronjob=name, namespace=ns, message=msg, record=None)
        if opts.expect_run_id and rec.run_id != opts.expect_run_id:
            raise Refused(f"cronjob {ns}/{name} now carries run record {rec.run_id}, not ours "
                          f"({opts.expect_run_id}); not touching it")
        target, stale_reasons = judge_record(cj, rec, opts, reporter)
        unconfirmed = None if opts.expect_run_id else model.record_unconfirmed(cj)
        jobs: list[Obj] = []
        # the hold was undone by someone else (a GitOps controller, a person): suspend is false already,
        # so there is nothing to un-suspend and no running child to hold it back for; say who did it
        reverted = model.hold_reverted(cj) if not target and not rec.original_suspend else ""
        if reverted:
            reporter.warn(f"cronjob {ns}/{name} is not suspended although run record {rec.run_id} holds it: "
                          f"{reverted}")
        if not target and not reverted:
            jobs, _ = cluster.list_jobs()
            running = [model.name_of(j) for j in model.unfinished_children(cj, jobs)] if opts.check_children else []
            if running:
                raise Refused(f"job {', '.join(running)} of cronjob {ns}/{name} is still running: un-suspending "
                              f"now would let the controller start a scheduled Job beside it; nothing changed",
                              hint=f"wait for it (cronctl status {name} -n {ns}), then run restore again")
        pred = predict(cj, clock.now(), suspended=target, jobs=jobs,
                       server_version=server_version_if_needed(cluster, jobs))
        verb = "set suspend back to false" if not target else "keep suspend=true"
        none = opts.catch_up == "none" and not target and starts_catch_up(pred)
        reporter.step(f"restore: {verb}; what the controller will do next: "
                      + (f"nothing: --catch-up none marks {pred.catch_up_for:%Y-%m-%dT%H:%M:%SZ} processed first "
                         f"(instead of: {pred.text})" if none else pred.text))
        chg = None
        if not reverted:  # a reverted hold's suspend is not written
            chg = suspend_change(cj, clock.now(), suspended=target, last_schedule=pred.catch_up_for if none else None,
                                 jobs=jobs, server_version=pred.server_version)
            reporter.step(f"at the write, by cronctl diff's rule: {change_words(chg)}")
        if not confirmed:
            if not opts.interactive:
                raise Refused(f"not on a terminal and {option('yes')} not given: refusing to restore cronjob {ns}/{name} "
                              f"without confirmation; nothing changed")
            q = (f"Clear the {'unconfirmed' if unconfirmed else 'stale'} record {rec.run_id} of "
                 f"{rec.operator or 'unknown'} and {verb}?" if opts.force and stale_reasons
                 else f"Restore {ns}/{name} ({verb}) and clear run record {rec.run_id}"
                 + (f" although its Job {rec.job_name} FAILED?" if rec.step == "failed" else "?"))
            if not reporter.confirm(q):
                raise Refused("not confirmed; nothing changed")
            confirmed = True
        try:
            if none:
                cj, given = give_up_catch_up(cluster, cj, pred, reporter)
            # the record goes, its account stays: appended to cronctl.dev/runs in the same guarded write
            # a reverted hold ended when it was reverted, not now: the run's held period says so, so
            # history does not call the slots after the revert lost to a suspension
            ended = _reverted_at(cj) if reverted else None
            ann: dict[str, str | None] = {**model.clear_record_annotations(), model.ANN_RUNS: model.runs_with(
                cj, rec, restored_at=ended or clock.now(), restored_to=target, forced=bool(stale_reasons),
                last_step=(f"{opts.outcome or rec.step} (hold reverted)" if reverted else opts.outcome))}
            put_back = gitops.put_back(rec.gitops)
            ann.update(put_back)
            body: Obj = {"metadata": {"annotations": ann}}
            if not reverted:  # a reverted hold's suspend is left to whoever set it (its field manager)
                body["spec"] = {"suspend": target}
            cj = cluster.patch_cronjob(name, body, resource_version=rv(cj))
        except Conflict:
            continue  # changed under us (status update, or another operator): read again, re-check
        after = (f"nothing starts (--catch-up none); {len(given)} slot(s) given up: {', '.join(given[:10])}"
                 + (" ..." if len(given) > 10 else "")) if given else pred.text
        done = (f"cleared run record {rec.run_id} on cronjob {ns}/{name}; suspend was false already ({reverted})"
                if reverted else
                f"restored cronjob {ns}/{name} to suspend={str(target).lower()} and cleared run record {rec.run_id}")
        for key, value in put_back.items():
            done += f"; annotation {key} " + ("removed" if value is None else f"set back to {value!r}")
        msg = f"{done}; {after}"
        # the prediction was said in the 'restore:' line just before; the step says what was done (and
        # what --catch-up none gave up, which is new), the returned message the whole answer, once
        reporter.step(msg if given else done)
        Audit(cluster, reporter, clock).event(
            cj, "CronctlRestored", f"cronctl restore of {run_words(rec.run_id, rec.operator, rec.reason, rec.occurrence)}"
            f" (last step: {rec.step or '?'}{', forced' if stale_reasons else ''}): suspend={str(target).lower()}, "
            f"record cleared and kept in {model.ANN_RUNS}; expected next: {after}")
        return Restored(cronjob=name, namespace=ns, message=msg, record=rec, suspend=target, prediction=pred,
                        forced=bool(stale_reasons), record_unconfirmed=unconfirmed, catch_up=opts.catch_up,
                        given_up=tuple(given), hold_reverted=reverted or None, annotations_put_back=put_back,
                        change=chg)
    raise Conflict(f"cronjob {ns}/{name} kept changing while restoring; nothing changed, try again")
