"""What every procedure needs: a clock, a reporter, the run directory, small shared helpers."""

from __future__ import annotations

import json
import os
import weakref
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from cronctl import safefile
from cronctl.clock import Clock as Clock
from cronctl.cluster import Cluster, Obj
from cronctl.errors import BadInput, CronctlError, option
from cronctl.redact import Redactor


@dataclass(frozen=True)
class Progress:
    """One live-progress sample of the manual Job."""

    elapsed: float
    active: int = 0
    succeeded: int = 0
    failed: int = 0
    pods: dict[str, int] = field(default_factory=dict)
    last_log: str = ""


class Reporter(Protocol):
    """How a procedure talks to its user (the CLI implements it with rich on stderr)."""

    live: bool  # True on a terminal: live progress; False: plain lines

    def step(self, message: str) -> None: ...
    def warn(self, message: str) -> None: ...
    def show(self, title: str, rows: list[tuple[str, str]]) -> None: ...
    def confirm(self, question: str) -> bool: ...
    def progress(self, p: Progress) -> None: ...
    def progress_done(self) -> None: ...


class MaskingReporter:
    """The user's reporter, with every line (steps, warnings, the plan, the live log line) masked."""

    def __init__(self, inner: Reporter, red: Redactor) -> None:
        self.inner, self.red = inner, red
        self.live = inner.live

    def step(self, message: str) -> None:
        self.inner.step(self.red.text(message))

    def warn(self, message: str) -> None:
        self.inner.warn(self.red.text(message))

    def show(self, title: str, rows: list[tuple[str, str]]) -> None:
        self.inner.show(self.red.text(title), [(k, self.red.text(v)) for k, v in rows])

    def confirm(self, question: str) -> bool:
        return self.inner.confirm(self.red.text(question))

    def progress(self, p: Progress) -> None:
        self.inner.progress(replace(p, last_log=self.red.text(p.last_log)))

    def progress_done(self) -> None:
        self.inner.progress_done()


class QuietReporter:
    """Collects what would be shown (tests, scripts); confirms only if told to."""

    live = False

    def __init__(self, *, answer: bool = False) -> None:
        self.answer = answer
        self.lines: list[str] = []

    def step(self, message: str) -> None:
        self.lines.append(message)

    def warn(self, message: str) -> None:
        self.lines.append("warning: " + message)

    def show(self, title: str, rows: list[tuple[str, str]]) -> None:
        self.lines.append(title)
        self.lines.extend(f"  {k}: {v}" for k, v in rows)

    def confirm(self, question: str) -> bool:
        self.lines.append("? " + question)
        return self.answer

    def progress(self, p: Progress) -> None:
        self.lines.append(f"progress {p}")

    def progress_done(self) -> None:
        pass


def rv(obj: dict[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion", ""))


def server_version_if_needed(cluster: Cluster, jobs: list[Obj]) -> str | None:
    """The server version, asked only when it can matter (there are Jobs that may be named for a slot)."""
    if not jobs:
        return None
    try:
        return cluster.server_version()
    except CronctlError:
        return None


#: the reasons of cronctl's Events on a CronJob (``kubectl get events --field-selector
#: involvedObject.name=CJ`` lists them beside the controller's)
EVENT_REASONS = ("CronctlSuspended", "CronctlJobCreated", "CronctlSlotMarked", "CronctlRestored",
                 "CronctlPaused", "CronctlResumed")
_EVENT_MESSAGE_MAX = 1024  # core/v1 Event messages are cut by kubectl describe around here


#: the clusters on which writing an Event failed (the warning is said once per cluster connection)
_EVENTS_FAILED: "weakref.WeakSet[Any]" = weakref.WeakSet()


class Audit:
    """cronctl's Events on the CronJob: one per step that changes something (who, why, run id,
    occurrence). Best effort: without ``create events`` (or on any API error) the run goes on and
    the reporter is told once; the run record, ``cronctl.dev/runs`` and the run directory still
    hold the account."""

    def __init__(self, cluster: Cluster, reporter: Reporter, clock: Clock) -> None:
        self.c, self.r, self.clock = cluster, reporter, clock

    @property
    def failed(self) -> bool:
        """Whether writing an Event failed already with this cluster (then it is not said again:
        run-manual and the restore it calls share the warning)."""
        return self.c in _EVENTS_FAILED

    def event(self, cronjob: Obj, reason: str, message: str) -> None:
        from cronctl.textsafe import visible
        from cronctl.timeutil import rfc3339_z

        m = cronjob.get("metadata") or {}
        name, ns = str(m.get("name") or ""), str(m.get("namespace") or self.c.namespace)
        now = rfc3339_z(self.clock.now().replace(microsecond=0))
        text = visible(message)
        body: Obj = {
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"generateName": f"{name[:200]}.cronctl-", "namespace": ns},
            "involvedObject": {"apiVersion": "batch/v1", "kind": "CronJob", "name": name, "namespace": ns,
                               **({"uid": m["uid"]} if m.get("uid") else {})},
            "reason": reason, "message": text[:_EVENT_MESSAGE_MAX], "type": "Normal",
            "source": {"component": "cronctl"}, "reportingComponent": "cronctl",
            "firstTimestamp": now, "lastTimestamp": now, "count": 1,
        }
        try:
            self.c.create_event(body)
        except CronctlError as e:
            if not self.failed:
                self.r.warn(f"could not record an Event on cronjob {ns}/{name} ({e.message}); the run goes on, "
                            f"its account stays in the run record and the run directory")
                _EVENTS_FAILED.add(self.c)


def run_words(run_id: str, operator: str, reason: str = "", occurrence: str = "") -> str:
    """``run R of OPERATOR [for OCCURRENCE] [(reason: …)]``: the who/why part of an Event message."""
    return (f"run {run_id} of {operator or 'unknown'}" + (f" for {occurrence}" if occurrence else "")
            + (f" (reason: {reason})" if reason else ""))


def next_commands(cronjob: str, namespace: str) -> list[str]:
    """What to run next after a run that did not restore."""
    return [f"cronctl status {cronjob} -n {namespace}",
            f"cronctl restore {cronjob} -n {namespace}",
            f"cronctl bundle {cronjob} -n {namespace}"]


class RunDir:
    """The run directory: ``record.json`` and ``logs/``; directories 0700, files 0600.

    Made and written by :mod:`cronctl.safefile`: the root (``--run-dir``) must be the caller's or
    root's and not world-writable without the sticky bit; the run directory is created
    exclusively and every later write checks it is still the one created (device and inode), so
    no one can slip a directory or a link of theirs in. Files are written to a temp file of ours
    + rename, so a process killed mid-write never leaves half a record.
    """

    def __init__(self, path: Path, ident: tuple[int, int] | None = None) -> None:
        self.path = path
        self._ident = ident  # (st_dev, st_ino) of the directory created

    @classmethod
    def create(cls, base: str | None, cronjob: str, run_id: str) -> RunDir:
        root = Path(base or os.environ.get("CRONCTL_RUN_DIR") or "runs")
        name = f"{cronjob}-{run_id}"
        path = root / name
        try:
            safefile.component(name)  # never a name that leaves the root ('../x', 'a/b')
            old = os.umask(0o077)  # every directory we make is private, not only the last one
            try:
                root.mkdir(parents=True, exist_ok=True, mode=0o700)
            finally:
                os.umask(old)
            with safefile.closing_fd(safefile.open_parent(str(path))) as root_fd, \
                    safefile.closing_fd(safefile.make_dir(name, dir_fd=root_fd, shown=str(path))) as fd:
                st = os.fstat(fd)
        except OSError as e:
            raise BadInput(f"cannot create run directory {path}: {safefile.describe(e)}; nothing was changed",
                           hint=f"use {option('run_dir')} with a directory of your own") from e
        return cls(path, (st.st_dev, st.st_ino))

    def _open(self) -> int:
        fd = safefile.open_dir(str(self.path))
        st = os.fstat(fd)
        if self._ident is not None and (st.st_dev, st.st_ino) != self._ident:
            os.close(fd)
            raise safefile.Unsafe(f"{self.path} is no longer the run directory cronctl created")
        return fd

    def write_text(self, rel: str, text: str) -> Path:
        """Write ``rel`` (``a/b/c``, made of plain components) under the run directory; OSError on failure."""
        *dirs, leaf = rel.split("/")
        fd = self._open()
        try:
            shown = self.path
            for d in dirs:
                shown = shown / d
                sub = safefile.sub_dir(d, dir_fd=fd, shown=str(shown))
                os.close(fd)
                fd = sub
            safefile.replace_file(leaf, text.encode("utf-8"), dir_fd=fd, shown=str(shown / leaf))
        finally:
            os.close(fd)
        return self.path / rel

    def write_json(self, rel: str, data: Any) -> Path:
        return self.write_text(rel, json.dumps(data, indent=2, sort_keys=False, default=str) + "\n")
