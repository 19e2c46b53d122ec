"""``cronctl claim``: run COMMAND only while holding its scheduled occurrence's row in the ledger,
so that the occurrence's business effect happens once across Jobs, manual runs, backfills and
clusters (docs/commands/claim.md; the rules: :mod:`cronctl.ledger.claims`).

Three parts:

- :func:`locate`: the occurrence (and the workflow key) of the running pod: ``--occurrence``, the
  pod's downward-API annotations or ``$CRONCTL_SCHEDULED_TIMESTAMP``, its Job read from the API
  server (the controller's scheduled-timestamp annotation, cronctl's occurrence annotation, a
  slot-named Job), or, by policy, the latest slot at the manual Job's creation. Never the pod's start.
- :func:`run`: claim, run COMMAND with the lease renewed, pass SIGTERM on, end the row in one
  transaction, keep COMMAND's exit code.
- :func:`occurrence_claim`: the same as a context manager, for an application that links cronctl.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from cronctl import model
from cronctl.cluster import Cluster
from cronctl.errors import (ApiError, BadInput, ClaimFinal, ClaimHeld, CronctlError, LeaseLost, LedgerError,
                            NoOccurrence)
from cronctl.ledger import claims
from cronctl.timeutil import UTC, parse_rfc3339, rfc3339_z

#: where a pod's downward API volume is mounted by the manifests of docs/commands/claim.md
PODINFO = "/etc/podinfo"
SA_NAMESPACE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
JOB_NAME_LABELS = ("batch.kubernetes.io/job-name", "job-name")


@dataclass(frozen=True)
class Found:
    """The occurrence a claimer stands for, where it was read, and what is known of its Job."""

    occurrence: datetime
    source: str
    workflow: str | None = None
    job: str | None = None  # namespace/name
    job_created: datetime | None = None


def _podinfo(path: Path) -> dict[str, str]:
    """A downward API ``labels`` or ``annotations`` file: ``key="value"`` lines (Go-quoted values)."""
    import json

    out: dict[str, str] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return out
    for line in text.splitlines():
        k, sep, v = line.partition("=")
        if not sep:
            continue
        try:
            val = json.loads(v) if v.startswith('"') else v
        except ValueError:
            val = v.strip('"')
        out[k.strip()] = str(val)
    return out


def _time(text: str, where: str) -> datetime:
    try:
        return parse_rfc3339(text, what=where)
    except BadInput as e:
        raise NoOccurrence(f"{where} is {text!r}, not an RFC3339 time: no occurrence to claim") from e


def pod_facts(env: Mapping[str, str], podinfo: Path) -> dict[str, str]:
    """What the pod knows of itself without the API: namespace, Job name, pod name, and an
    occurrence annotation, from the environment and the downward API files."""
    labels = _podinfo(podinfo / "labels")
    anns = _podinfo(podinfo / "annotations")
    ns = env.get("CRONCTL_NAMESPACE") or env.get("POD_NAMESPACE") or ""
    if not ns:
        try:
            ns = Path(SA_NAMESPACE).read_text(encoding="utf-8").strip()
        except OSError:
            ns = ""
    job = env.get("CRONCTL_JOB_NAME") or env.get("JOB_NAME") or next(
        (labels[k] for k in JOB_NAME_LABELS if labels.get(k)), "")
    stamp = (env.get("CRONCTL_SCHEDULED_TIMESTAMP") or anns.get(model.SCHEDULED_TS) or
             anns.get(model.ANN_OCCURRENCE) or "")
    return {"namespace": ns, "job": job, "pod": env.get("CRONCTL_POD_NAME") or env.get("POD_NAME") or
            env.get("HOSTNAME") or "", "stamp": stamp}


def _slot_of_name(job: str, cronjob: str) -> datetime | None:
    """The slot of a Job named as the controller names it (``<cronjob>-<unix minutes>``)."""
    tail = job[len(cronjob) + 1:] if job.startswith(cronjob + "-") else ""
    if tail.isdigit() and len(tail) <= 10:
        return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(minutes=int(tail))
    return None


def locate(given: datetime | None, workflow: str | None, env: Mapping[str, str], *, podinfo: Path = Path(PODINFO),
           connect: Callable[[str], Cluster] | None = None, manual: str | None = None) -> Found:
    """The occurrence to claim, in this order: ``given`` (``--occurrence``); a scheduled-timestamp or
    cronctl occurrence the pod's downward API shows (or ``$CRONCTL_SCHEDULED_TIMESTAMP``); the pod's
    Job read through ``connect(namespace)``: its scheduled-timestamp annotation, cronctl's
    occurrence annotation, or its slot-named name; with ``manual="latest"``, the latest slot of the
    owning CronJob at or before the Job's creation (a ``kubectl create job --from``). Without an
    API, a Job named as the controller names it stands for its slot. NoOccurrence (exit 20)
    otherwise. ``workflow`` (``--workflow``) wins over namespace/CronJob."""
    facts = pod_facts(env, podinfo)
    ns, job = facts["namespace"], facts["job"]
    jobref = f"{ns}/{job}" if ns and job else (job or None)
    if given is not None:
        return Found(given, "--occurrence", workflow, jobref)
    if facts["stamp"]:
        return Found(_time(facts["stamp"], "the pod's scheduled timestamp"), "downward API", workflow, jobref)
    if not job:
        raise NoOccurrence("no occurrence to claim: no --occurrence, no scheduled timestamp in the pod's downward "
                           f"API ({podinfo}/annotations, $CRONCTL_SCHEDULED_TIMESTAMP) and no Job name "
                           "($CRONCTL_JOB_NAME, the job-name label) to read it from; COMMAND not run")
    obj: model.Obj | None = None
    cluster: Cluster | None = None
    if connect is not None:
        try:
            cluster = connect(ns)
            obj = cluster.get_job(job)
        except BadInput:  # no kubeconfig and no ServiceAccount: the name is all there is
            cluster = None
        except ApiError as e:
            raise NoOccurrence(f"cannot read the pod's Job {jobref} to find its occurrence: {e.message}; "
                               "COMMAND not run") from e
    if obj is not None:
        from cronctl.ledger.facts import cronjob_owner

        owner = cronjob_owner(obj)
        cronjob = owner[1] if owner else None
        wf = workflow or (f"{ns}/{cronjob}" if cronjob else None)
        created = model.created(obj)
        t = model.scheduled_for(obj)
        if t is not None:
            return Found(t, f"job {jobref} (scheduled-timestamp annotation)", wf, jobref, created)
        t = model.occurrence(obj)
        if t is not None:
            return Found(t, f"job {jobref} (cronctl occurrence annotation)", wf, jobref, created)
        t = _slot_of_name(job, cronjob) if cronjob else None
        if t is not None:
            return Found(t, f"job {jobref} (slot-named)", wf, jobref, created)
        if manual == "latest" and cronjob and cluster is not None and created is not None:
            from cronctl.procedure.slot import schedule_of, slot_at_or_before

            sched = schedule_of(cluster.get_cronjob(cronjob))[0]
            t = slot_at_or_before(sched, created)
            if t is not None:
                return Found(t, f"job {jobref} (manual: the latest slot at its creation {rfc3339_z(created)})",
                             wf, jobref, created)
        raise NoOccurrence(f"job {jobref} stands for no occurrence: no scheduled-timestamp or cronctl occurrence "
                           "annotation and not slot-named (a kubectl create job --from: pass --occurrence, or "
                           "--manual-occurrence latest in the template); COMMAND not run")
    if "-" in job:
        cronjob = job.rsplit("-", 1)[0]
        t = _slot_of_name(job, cronjob)
        if t is not None:
            return Found(t, f"job {jobref} (slot-named; the API was not asked)", workflow or
                         (f"{ns}/{cronjob}" if ns else None), jobref)
    raise NoOccurrence(f"job {jobref}: its occurrence cannot be told without the API server (not slot-named); "
                       "COMMAND not run")


def owner_of(env: Mapping[str, str], podinfo: Path = Path(PODINFO)) -> tuple[str, str | None]:
    """The lease owner (``job ns/name pod P host H pid N``) and the holder Job (``ns/name``)."""
    f = pod_facts(env, podinfo)
    job = f"{f['namespace']}/{f['job']}" if f["namespace"] and f["job"] else (f["job"] or None)
    parts = ([f"job {job}"] if job else []) + ([f"pod {f['pod']}"] if f["pod"] else []) + [
        f"host {socket.gethostname()}", f"pid {os.getpid()}"]
    return " ".join(parts)[:512], job


# --- the lease ------------------------------------------------------------------------------------

class _Lease:
    """Renews the lease of ``token`` every third of it, in a thread, until stopped. ``lost`` is set
    (and ``on_lost`` called once) when a renewal finds the row taken over, or when renewals kept
    failing until a quarter of the lease was left: COMMAND must stop before another attempt may
    take over."""

    def __init__(self, led: Any, workflow: str, occurrence: datetime, token: int, lease: timedelta,
                 on_lost: Callable[[str], None]) -> None:
        self.led, self.workflow, self.occurrence, self.token, self.lease = led, workflow, occurrence, token, lease
        self.on_lost = on_lost
        self.lost: str | None = None
        self.deadline = time.monotonic() + lease.total_seconds()  # the lease's end, on this host's clock
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="cronctl-claim-lease", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _loop(self) -> None:
        from cronctl.ledger import claimstore

        every = claims.renew_every(self.lease)
        while not self._stop.wait(every):
            t0 = time.monotonic()
            try:
                ok = claimstore.renew(self.led, self.workflow, self.occurrence, self.token, self.lease)
            except LedgerError as e:
                if time.monotonic() > self.deadline - self.lease.total_seconds() / 4:
                    self._lose(f"the lease could not be renewed before it expires ({e.message})")
                    return
                every = min(every, 1.0)
                continue
            if ok is None:
                self._lose("another attempt took the occurrence over (the lease had expired)")
                return
            self.deadline = t0 + self.lease.total_seconds()
            every = claims.renew_every(self.lease)

    def _lose(self, why: str) -> None:
        self.lost = why
        self.on_lost(why)


# --- cronctl claim --------------------------------------------------------------------------------

@dataclass
class ClaimOptions:
    workflow: str
    found: Found
    ledger: str | None
    command: list[str]
    lease: timedelta = timedelta(seconds=60)
    wait: bool = False
    replay: str | None = None
    final_exit: frozenset[int] = frozenset()
    config_version: str | None = None
    grace: float = 30.0  # after passing SIGTERM on, how long COMMAND is waited for before SIGKILL
    owner: str = ""
    env: dict[str, str] = field(default_factory=dict)


def _holder(row: claims.Row) -> str:
    return row.holder_job and f"job {row.holder_job}" or row.lease_owner


def _open(url: str | None) -> Any:
    from cronctl.ledger.store import open_ledger

    try:
        return open_ledger(url, create=True)
    except LedgerError as e:
        raise LedgerError(f"{e.message}; COMMAND not run (cronctl claim never runs unclaimed)") from e


def _claim(led: Any, opts: ClaimOptions, say: Callable[[str], None], who: Any) -> Any:
    """Claim; with ``--wait`` wait out a live lease (polling: the holder may end early)."""
    from cronctl.ledger import claimstore

    occ = rfc3339_z(opts.found.occurrence)
    while True:
        out = claimstore.claim(led, opts.workflow, opts.found.occurrence, who, opts.lease, replay=opts.replay,
                               count_held=not opts.wait)  # a waiter is counted once, when it ends
        d = out.decision
        if d.action != "held":
            return out
        assert d.previous is not None
        line = (f"{opts.workflow} {occ}: held by {_holder(d.previous)} (attempt {d.previous.attempt}, lease until "
                f"{rfc3339_z(d.previous.lease_expires)})")
        if not opts.wait:
            raise ClaimHeld(f"{line}; COMMAND not run", hint="--wait waits for the holder to end or its lease to expire")
        say(f"claim: {line}; waiting")
        time.sleep(max(0.2, min(2.0, (d.previous.lease_expires - out.now).total_seconds() + 0.1)))


def run(opts: ClaimOptions, say: Callable[[str], None]) -> int:
    """Claim the occurrence, run COMMAND under the lease, end the row; COMMAND's exit code (0 when
    the occurrence was already done and COMMAND was not run). Refusals raise (exit 21, 22, 9)."""
    import shutil

    from cronctl.ledger import claimstore

    if not opts.command:
        raise BadInput("no COMMAND: cronctl claim [OPTIONS] -- COMMAND [ARGS...]")
    if shutil.which(opts.command[0]) is None:
        raise BadInput(f"COMMAND {opts.command[0]!r} not found (or not executable); nothing claimed")
    occ = rfc3339_z(opts.found.occurrence)
    led = _open(opts.ledger)
    try:
        who = claimstore.Claimer(owner=opts.owner, holder_job=opts.found.job, job_created=opts.found.job_created,
                                 config_version=opts.config_version)
        out = _claim(led, opts, say, who)
        d = out.decision
        if d.action == "done":
            assert d.previous is not None
            say(f"claim: {opts.workflow} {occ}: already done by {_holder(d.previous)} at "
                f"{rfc3339_z(d.previous.completed_at) if d.previous.completed_at else '?'}; refused as a duplicate, "
                "COMMAND not run")
            return 0
        if d.action == "final":
            assert d.previous is not None
            raise ClaimFinal(f"{opts.workflow} {occ}: failed finally in attempt {d.previous.attempt} by "
                             f"{_holder(d.previous)} ({d.previous.last_error or 'no error recorded'}); COMMAND not run",
                             hint="--replay REASON runs it again (the reason is recorded)")
        how = ""
        if d.previous is not None:
            if d.replay:
                how = f", a replay ({d.replay}) of the {d.previous.status} attempt {d.previous.attempt}"
            elif d.ambiguous:
                how = (f", taking over from {_holder(d.previous)} whose lease expired at "
                       f"{rfc3339_z(d.previous.lease_expires)} (its effect is ambiguous)")
            else:
                how = f", after attempt {d.previous.attempt} failed ({d.previous.last_error or 'retryable'})"
        say(f"claim: {opts.workflow} {occ}: claimed as attempt {d.attempt}, fencing token {d.token} "
            f"(from {opts.found.source}){how}")
        return _run_held(led, opts, d, out.lease_expires, say)
    finally:
        led.close()


def _run_held(led: Any, opts: ClaimOptions, d: claims.Decision, expires: datetime | None,
              say: Callable[[str], None]) -> int:
    from cronctl.ledger import claimstore

    occ = rfc3339_z(opts.found.occurrence)
    with tempfile.TemporaryDirectory(prefix="cronctl-claim-") as tmp:
        ref_file = os.path.join(tmp, "output-ref")
        env = {**os.environ, **opts.env, "CRONCTL_FENCING_TOKEN": str(d.token), "CRONCTL_OCCURRENCE": occ,
               "CRONCTL_ATTEMPT": str(d.attempt), "CRONCTL_WORKFLOW": opts.workflow,
               "CRONCTL_OUTPUT_REF_FILE": ref_file}
        # the handlers first: a SIGTERM between COMMAND's start and their install killed cronctl
        # itself (exit -15), COMMAND left running and its row to its lease (found by CI, stop 45)
        with _Forwarder() as signals:
            try:
                child = subprocess.Popen(opts.command, env=env)
            except OSError as e:
                claimstore.end(led, opts.workflow, opts.found.occurrence, d.token, claims.FAILED, exit_code=127,
                               output_ref=None, last_error=f"COMMAND could not start: {e}")
                raise BadInput(f"COMMAND {opts.command[0]!r} could not start: {e.strerror or e}") from e
            stopping = threading.Event()

            def stop_child(why: str) -> None:
                if child.poll() is None and not stopping.is_set():
                    stopping.set()
                    say(f"claim: {why}: stopping COMMAND (SIGTERM, then SIGKILL after {opts.grace:g}s)")
                    _terminate(child, opts.grace)

            signals.attach(child)
            lease = _Lease(led, opts.workflow, opts.found.occurrence, d.token, opts.lease, stop_child)
            lease.start()
            try:
                rc = child.wait()
            finally:
                lease.stop()
        code = rc if rc >= 0 else 128 - rc
        ref = _read_ref(ref_file)
        if lease.lost:
            raise LeaseLost(f"{opts.workflow} {occ}: {lease.lost}; COMMAND stopped with exit code {code}, the row "
                            "left to its new holder")
        status = claims.end_status(code, opts.final_exit)
        error = None if code == 0 else (f"exit code {code}" + (f" (signal {-rc})" if rc < 0 else ""))
        row = _end_with_retry(led, opts, d.token, status, code, ref, error, say)
        if row is not None:
            raise LeaseLost(f"{opts.workflow} {occ}: COMMAND ended with exit code {code} but the occurrence is now "
                            f"attempt {row.attempt} of {_holder(row)} (status {row.status}): nothing recorded")
        say(f"claim: {opts.workflow} {occ}: attempt {d.attempt} {status}" + (f" (exit code {code})" if code else "")
            + (f", output {ref}" if ref else ""))
        return code


def _end_with_retry(led: Any, opts: ClaimOptions, token: int, status: str, code: int, ref: str | None,
                    error: str | None, say: Callable[[str], None]) -> claims.Row | None:
    """Write the end; a ledger that is down is tried again for one lease. If it stays down, the row
    stays ``running`` until its lease expires and then reads as ambiguous (not failed): said, and
    COMMAND's exit code is kept (a failed exit would make the Job retry the effect blindly)."""
    from cronctl.ledger import claimstore

    give_up = time.monotonic() + opts.lease.total_seconds()
    pause = 0.25
    while True:
        try:
            return claimstore.end(led, opts.workflow, opts.found.occurrence, token, status, exit_code=code,
                                  output_ref=ref, last_error=error)
        except LedgerError as e:
            if time.monotonic() > give_up:
                say(f"claim: {opts.workflow} {rfc3339_z(opts.found.occurrence)}: COMMAND ended ({status}, exit code "
                    f"{code}) but the ledger is unreachable ({e.message}): the row stays running until its lease "
                    "expires, then it reads as ambiguous; cronctl reconcile lists it")
                return None
            time.sleep(pause)
            pause = min(2.0, pause * 2)


def _read_ref(path: str) -> str | None:
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    return text[:2000] or None


def _terminate(child: subprocess.Popen[Any], grace: float) -> None:
    try:
        child.send_signal(signal.SIGTERM)
    except ProcessLookupError:
        return

    def kill_later() -> None:
        try:
            child.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            child.kill()

    threading.Thread(target=kill_later, daemon=True).start()


class _Forwarder:
    """Pass SIGTERM and SIGINT on to COMMAND while it runs (its grace period is its own: the
    kubelet's SIGKILL after terminationGracePeriodSeconds ends both). Installed before COMMAND
    starts: a signal that comes before :meth:`attach` is kept and passed on at once when COMMAND
    exists. Not in the main thread (an application's worker): nothing is installed."""

    def __init__(self) -> None:
        self._child: subprocess.Popen[Any] | None = None
        self._pending: list[int] = []
        self._old: dict[int, Any] = {}
        if threading.current_thread() is threading.main_thread():
            self._old = {s: signal.signal(s, self._forward) for s in (signal.SIGTERM, signal.SIGINT)}

    def _forward(self, signum: int, _frame: Any) -> None:
        if self._child is None:
            self._pending.append(signum)
            return
        try:
            self._child.send_signal(signum)
        except ProcessLookupError:
            pass

    def attach(self, child: subprocess.Popen[Any]) -> None:
        self._child = child
        while self._pending:
            self._forward(self._pending.pop(0), None)

    def restore(self) -> None:
        for s, h in self._old.items():
            signal.signal(s, h)
        self._old = {}

    def __enter__(self) -> _Forwarder:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.restore()


# --- the Python API -------------------------------------------------------------------------------

class FinalFailure(Exception):
    """Raised inside :func:`occurrence_claim` for a failure that must not be retried: the row ends
    ``final`` (only a replay runs it again). Any other exception ends it ``failed`` (retryable)."""


@dataclass
class Held:
    """What :func:`occurrence_claim` yields. ``run`` False: the occurrence was already done (do
    nothing). Otherwise do the work; check ``lost`` before each write you cannot undo, guard your own
    writes with ``token``, and set ``output_ref`` to what the work produced."""

    run: bool
    workflow: str
    occurrence: datetime
    attempt: int
    token: int
    output_ref: str | None = None
    _lease: _Lease | None = None

    @property
    def lost(self) -> str | None:
        return self._lease.lost if self._lease is not None else None


@contextmanager
def occurrence_claim(workflow: str, occurrence: datetime, *, ledger: str | None = None,
                     lease: timedelta = timedelta(seconds=60), replay: str | None = None,
                     owner: str | None = None, config_version: str | None = None) -> Iterator[Held]:
    """Hold ``workflow``'s ``occurrence`` for the body of the ``with``::

        with occurrence_claim("shop/billing", occurrence, ledger=url) as held:
            if held.run:
                charge(customers, idempotency_key=f"{held.occurrence}:{held.token}")

    Raises ClaimHeld (a live lease), ClaimFinal (a final failure without ``replay``), LedgerError
    (never runs unclaimed). The body's end writes ``done``; an exception writes ``failed``
    (:class:`FinalFailure`: ``final``) and propagates; a lost lease raises LeaseLost at the end."""
    from cronctl.ledger import claimstore

    led = _open(ledger)
    try:
        who = claimstore.Claimer(owner=owner or owner_of(os.environ)[0], config_version=config_version)
        out = claimstore.claim(led, workflow, occurrence, who, lease, replay=replay)
        d = out.decision
        if d.action == "done":
            yield Held(False, workflow, occurrence, d.attempt, d.token)
            return
        if d.action in ("held", "final"):
            assert d.previous is not None
            cls = ClaimHeld if d.action == "held" else ClaimFinal
            raise cls(f"{workflow} {rfc3339_z(occurrence)}: {d.action} by {_holder(d.previous)} (attempt "
                      f"{d.previous.attempt})")
        lz = _Lease(led, workflow, occurrence, d.token, lease, lambda why: None)
        held = Held(True, workflow, occurrence, d.attempt, d.token, _lease=lz)
        lz.start()
        try:
            yield held
        except BaseException as e:
            lz.stop()
            status = claims.FINAL if isinstance(e, FinalFailure) else claims.FAILED
            claimstore.end(led, workflow, occurrence, d.token, status, exit_code=1, output_ref=held.output_ref,
                           last_error=f"{type(e).__name__}: {e}"[:2000])
            raise
        lz.stop()
        row = claimstore.end(led, workflow, occurrence, d.token, claims.DONE, exit_code=0,
                             output_ref=held.output_ref, last_error=None)
        if row is not None or lz.lost:
            raise LeaseLost(f"{workflow} {rfc3339_z(occurrence)}: {lz.lost or 'taken over'}; nothing recorded")
    finally:
        led.close()


__all__ = ["ClaimOptions", "FinalFailure", "Found", "Held", "CronctlError", "locate", "occurrence_claim", "run"]
