"""What every procedure needs: a clock, a reporter, the run directory, small shared helpers."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from cronctl.cluster import Cluster, Obj
from cronctl.errors import BadInput, CronctlError

UTC = timezone.utc


class Clock(Protocol):
    """Wall time (for records and the controller model) and a monotonic clock (for deadlines)."""

    def now(self) -> datetime: ...
    def monotonic(self) -> float: ...
    def sleep(self, seconds: float) -> None: ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)


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


def next_commands(cronjob: str, namespace: str) -> list[str]:
    """What to run next after a run that did not restore."""
    return [f"cronctl status {cronjob} -n {namespace}",
            f"cronctl restore {cronjob} -n {namespace}",
            f"cronctl bundle {cronjob} -n {namespace}"]


class RunDir:
    """The run directory: ``record.json`` and ``logs/``; directories 0700, files 0600.

    Written with a temp file + rename so a process killed mid-write never leaves half a record.
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def create(cls, base: str | None, cronjob: str, run_id: str) -> RunDir:
        root = Path(base or os.environ.get("CRONCTL_RUN_DIR") or "runs")
        path = root / f"{cronjob}-{run_id}"
        try:
            old = os.umask(0o077)
            try:
                path.mkdir(parents=True, exist_ok=False, mode=0o700)
            finally:
                os.umask(old)
            os.chmod(path, 0o700)
        except OSError as e:
            raise BadInput(f"cannot create run directory {path}: {e.strerror or e}; nothing was changed") from e
        return cls(path)

    def write_text(self, rel: str, text: str) -> Path:
        target = self.path / rel
        old = os.umask(0o077)  # every directory we make is private, not only the last one
        try:
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        finally:
            os.umask(old)
        tmp = target.with_name(target.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, target)
        except OSError:
            tmp.unlink(missing_ok=True)  # a full disk: leave no half-written temp file behind
            raise
        return target

    def write_json(self, rel: str, data: Any) -> Path:
        return self.write_text(rel, json.dumps(data, indent=2, sort_keys=False, default=str) + "\n")
