"""Step 7, the evidence: every pod's every container log (and previous instances), the Job and its
pods, masked, into the run directory; the exit codes and Warning events of a failure."""

from __future__ import annotations

from typing import Any

from cronctl import model
from cronctl.cluster import Obj
from cronctl.errors import CronctlError
from cronctl.procedure.steps.context import RunContext, save

TAIL_LINES = 10  # the last lines of each container's log shown at the end of a run
TAIL_MAX = 40    # ... and of all of them together


def save_logs(ctx: RunContext, job: Obj) -> list[str]:
    """Save every pod's every container log (and previous instances); return the tail lines."""
    assert ctx.dir is not None
    uid = model.meta(job).get("uid")
    logs: list[dict[str, Any]] = []
    errors: list[str] = []
    tail: list[str] = []
    exits: list[dict[str, Any]] = []
    try:
        pods = ctx.cluster.list_pods(label_selector=f"batch.kubernetes.io/controller-uid={uid}")
    except CronctlError as e:
        ctx.record["log_errors"] = [f"cannot list pods: {e.message}"]
        return []
    pods.sort(key=lambda p: (str(model.meta(p).get("creationTimestamp", "")), model.name_of(p)))
    ctx.red.learn([job, *pods])
    masked: list[tuple[str, Any]] = [("job.json", ctx.red.kube_object(job)),
                                     ("pods.json", [ctx.red.kube_object(p) for p in pods])]
    for rel, data in masked:
        try:
            ctx.dir.write_json(rel, data)
        except OSError as e:
            errors.append(f"{rel}: not saved: {e.strerror or e}")
    for p in pods:
        view = model.pod_view(p)
        pname = view.name
        for cname, _init in view.spec_containers:
            cs = view.status_of(cname)
            if cs is not None and cs.state == "terminated" and isinstance(cs.exit_code, int):
                exits.append({"pod": pname, "container": cname, "exit_code": cs.exit_code,
                              "reason": str(cs.reason or "")})
            restarts = cs.restarts if cs is not None else 0
            for previous in ([True] if restarts else []) + [False]:
                rel = f"logs/{pname}/{cname}{'.previous' if previous else ''}.log"
                try:
                    text = ctx.red.text(ctx.cluster.read_pod_log(pname, cname, previous=previous))
                except CronctlError as e:
                    errors.append(f"{pname}/{cname}{' (previous)' if previous else ''}: {e.message}")
                    continue
                try:
                    ctx.dir.write_text(rel, text)
                except OSError as oe:
                    errors.append(f"{pname}/{cname}{' (previous)' if previous else ''}: read but not "
                                  f"saved: {oe.strerror or oe}")
                    continue
                logs.append({"pod": pname, "container": cname, "previous": previous, "file": rel,
                             "bytes": len(text.encode())})
                if not previous:  # every pod's last lines, not only the last pod's
                    tail += [f"[{pname}/{cname}] {ln}" for ln in text.splitlines()[-TAIL_LINES:]]
    ctx.record["logs"] = logs
    ctx.record["exit_codes"] = exits
    if errors:
        ctx.record["log_errors"] = errors
    save(ctx)
    ctx.reporter.step(f"logs: {len(logs)} file(s) saved under {ctx.dir.path / 'logs'}"
                      + (f"; {len(errors)} could not be read or saved" if errors else ""))
    for missing in errors:
        ctx.reporter.warn(f"missing from the run directory: {missing}")
    return tail[-TAIL_MAX:]


def failed_words(ctx: RunContext) -> str:
    """The exit codes of the containers that failed, from the pods saved by :func:`save_logs`."""
    bad = [e for e in ctx.record.get("exit_codes") or [] if e.get("exit_code")]
    shown = ", ".join(f"exit code {e['exit_code']}{' (' + e['reason'] + ')' if e.get('reason') else ''} in "
                      f"{e['pod']}/{e['container']}" for e in bad[-3:])
    return shown + (f" and {len(bad) - 3} more" if len(bad) > 3 else "")


def failure_events(ctx: RunContext) -> list[str]:
    try:
        evs = ctx.cluster.list_events(field_selector=f"involvedObject.name={ctx.job_name}")
    except CronctlError:
        return []
    return [f"{e.get('type')} {e.get('reason')}: {e.get('message')}" for e in evs if e.get("type") == "Warning"]
