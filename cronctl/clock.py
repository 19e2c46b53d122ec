"""The clock a run reads: wall time (records, the controller model, "now" of every command) and a
monotonic clock (deadlines). PURE of cronctl: the standard library only, so the command line's
Environment (cronctl.cli.env) holds one without importing a procedure."""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import Protocol


class Clock(Protocol):
    """Wall time (for records and the controller model) and a monotonic clock (for deadlines)."""

    def now(self) -> datetime: ...
    def monotonic(self) -> float: ...
    def sleep(self, seconds: float) -> None: ...


class SystemClock:
    """The machine's clock: aware UTC wall time, ``time.monotonic`` and ``time.sleep``."""

    def now(self) -> datetime:
        return datetime.now(timezone.utc)

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)
