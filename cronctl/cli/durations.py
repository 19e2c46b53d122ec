"""Every duration flag of the command line, with its bounds, read by the one grammar of
:mod:`cronctl.durations` (Go/kubectl durations plus ``d``; a bare number is seconds).

Errors are one line naming the flag, and every bad value of a flag exits 2 (usage), as click's own
``--count abc`` does: ``bad --timeout 'soon': not a duration; expected ...`` (malformed), ``bad
--settle '0': must be more than 0 (...)`` (out of the flag's range), ``bad --since '99999d': at most
3650d`` (the hard limit, docs/LIMITS.md ``MAX_DURATION``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import re

from cronctl import durations
from cronctl.durations import SECOND, Bounds
from cronctl.errors import BadUsage

@dataclass(frozen=True)
class DurationFlag:
    """A duration flag: its name (for messages) and what it accepts."""

    name: str
    bounds: Bounds = Bounds()
    #: a fraction of a second is rounded up to the next whole second (the value goes to an API
    #: field counted in seconds)
    whole_seconds: bool = False

    def nanoseconds(self, text: str) -> int:
        try:
            ns = durations.read(text, self.bounds)
        except (durations.DurationError, durations.OutOfBounds, durations.BeyondLimit) as e:
            # every bad value of a flag exits 2, malformed, out of range or past the hard limit alike
            # (click's own `--count abc` does too); the limit's constant name is not the user's word
            reason = re.sub(r" \(MAX_[A-Z_]+\)", "", e.reason)
            raise BadUsage(f"bad {self.name} {text!r}: {reason}") from None
        if self.whole_seconds:
            ns = -(-ns // SECOND) * SECOND
        return ns

    def seconds(self, text: str) -> float:
        """The value in seconds (a float: ``500ms`` is 0.5)."""
        return self.nanoseconds(text) / SECOND

    def delta(self, text: str) -> timedelta:
        """The value as a timedelta (to the microsecond)."""
        return timedelta(microseconds=self.nanoseconds(text) // 1000)


_SETTLE_WHY = ("the check after it catches a Job the controller was creating as the CronJob was suspended; it "
               "syncs about every 10s")

# The flags. Every one is a delay, a wait or a horizon: none means anything at zero or below, and
# none may pass MAX_DURATION (3650d).
SETTLE = DurationFlag("--settle", Bounds(why=_SETTLE_WHY))  # run-manual, backfill
TIMEOUT = DurationFlag("--timeout")  # run-manual, wait, backfill
EXPECTED_DURATION = DurationFlag("--expected-duration")  # run-manual, alerts
MAX_AGE = DurationFlag("--max-age")  # backfill
SINCE = DurationFlag("--since")  # history, backfill --missed: how far back slots are judged
#: bundle --since goes to the API's sinceSeconds (whole seconds, at least 1)
LOG_SINCE = DurationFlag("--since", Bounds(low=SECOND, why="logs are asked for in whole seconds"),
                         whole_seconds=True)
WINDOW = DurationFlag("--window", Bounds(why="no scheduled time could be judged"))  # bundle
UNTIL = DurationFlag("--until")  # pause, as a duration from now
MARGIN = DurationFlag("--margin", Bounds(low=0))  # alerts: added to every window; 0 is a window without slack
MAX_SUSPEND = DurationFlag("--max-suspend")  # alerts
KEEP = DurationFlag("--keep")  # record: how long the ledger keeps what ended
STATUS_EVERY = DurationFlag("--status-every")  # record: the status line's period
MAX_HOLD = DurationFlag("--max-hold")  # alerts --source recorder: a cronctl run's hold older than this fires
#: kubectl's --request-timeout: one API request's bound; 0 = no limit
REQUEST_TIMEOUT = DurationFlag("--request-timeout", Bounds(low=0))
ALERT_WINDOW = DurationFlag("--alert-window", Bounds(low=60, why="Prometheus needs two samples in the window"))
LEASE = DurationFlag("--lease", Bounds(low=SECOND, why="the lease is renewed every third of it"))  # claim
GRACE = DurationFlag("--grace")  # claim: COMMAND's time after SIGTERM when the lease is lost

#: every duration flag, for the tests and the docs: (commands, flag)
ALL: tuple[tuple[str, DurationFlag], ...] = (
    ("run-manual, backfill", SETTLE),
    ("run-manual, wait, backfill", TIMEOUT),
    ("run-manual, alerts", EXPECTED_DURATION),
    ("backfill", MAX_AGE),
    ("history, backfill, reconcile", SINCE),
    ("bundle", LOG_SINCE),
    ("bundle", WINDOW),
    ("pause", UNTIL),
    ("alerts", MARGIN),
    ("alerts", MAX_SUSPEND),
    ("record", KEEP),
    ("record", STATUS_EVERY),
    ("alerts", MAX_HOLD),
    ("alerts", ALERT_WINDOW),
    ("claim", LEASE),
    ("claim", GRACE),
    ("every command that talks to the API", REQUEST_TIMEOUT),
)
