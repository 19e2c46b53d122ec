"""What a command may use of the world, kept light: the click exception classes typer runs on,
and the :class:`Environment` of one run (the debug switch, the clock, the two consoles).

This module imports typer's exceptions only (no rich, no command module), so that ``cronctl
--version`` and ``cronctl --help`` start without the consoles; the consoles (rich) are made on first use.
``cronctl.cli.main`` makes one Environment per run and hands it to the command as click's context
object (``ctx.obj``); :func:`current` is the same object for code that has no context at hand.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING

# typer >= 0.20 carries its own copy of click (typer._click) and raises its exception classes;
# older typer runs on the click package. Use whichever typer really runs on, so that usage
# errors raised by cronctl are the ones `cronctl.cli.main` catches, and `cronctl explain` does not
# pay for importing a second click (~30 ms).
try:
    from typer._click.exceptions import ClickException as ClickException
    from typer._click.exceptions import UsageError as UsageError
    from typer.exceptions import Abort as Abort
    from typer.exceptions import Exit as Exit
except ImportError:  # pragma: no cover - older typer on plain click
    from click.exceptions import Abort, ClickException, Exit, UsageError  # type: ignore[assignment]

if TYPE_CHECKING:
    from cronctl.cli.common import SafeConsole


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


@dataclass
class Environment:
    """One run's world: ``debug`` (``--debug`` or CRONCTL_DEBUG=1: an internal error prints its
    traceback), ``clock`` (now, aware UTC), the global connection flags, and the consoles ``out`` (data, stdout) and ``err``
    (diagnostics, stderr), the safe consoles of :mod:`cronctl.cli.common`."""

    debug: bool = False
    clock: Callable[[], datetime] = _utc_now
    #: kubectl's connection flags given before the command (``cronctl -n ns status``); a command's
    #: own flag wins (cronctl.cli.common.connect)
    kubeconfig: str | None = None
    context: str | None = None
    namespace: str | None = None
    #: ``--request-timeout`` in seconds (0: no limit), before or after the command; None: the default
    request_timeout: float | None = None
    #: ``-l/--selector``: the label selector every list of CronJobs is made with (None: all)
    selector: str | None = None

    @property
    def out(self) -> SafeConsole:
        from cronctl.cli import common

        return common.out

    @property
    def err(self) -> SafeConsole:
        from cronctl.cli import common

        return common.err


_CURRENT = Environment()


def current() -> Environment:
    """The Environment of the run in progress (a default one outside a run)."""
    return _CURRENT


def now() -> datetime:
    """The run's clock, read (aware UTC): every command reads "now" here, once."""
    return _CURRENT.clock()


def begin(env: Environment) -> Environment:
    """Make ``env`` the run's environment (``cronctl.cli.main``, once per run)."""
    global _CURRENT
    _CURRENT = env
    return env
