"""The :class:`Environment` of one run: everything a command may use of the world, handed in.

``cronctl.cli.main`` makes one Environment per run (or takes the caller's: a test hands in a fixed
clock, its own streams) and gives it to the command as click's context object; a command reads it
with :func:`of` (``run = env.of(ctx)``) and passes it, or the part it needs, down. Nothing here is a
module global: two runs in one process (tests) never see each other's clock, consoles or flags.

The module stays light: no rich, no command module, so that ``cronctl --version`` and ``cronctl
--help`` start without the consoles; the consoles (rich) are made when a command first asks for them.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any

from cronctl.cli.exceptions import UsageError
from cronctl.clock import Clock, SystemClock

if TYPE_CHECKING:
    from cronctl.cli.console import SafeConsole
    from cronctl.kube import KubeCluster


@dataclass
class Environment:
    """One run's world: ``debug`` (``--debug`` or CRONCTL_DEBUG=1: an internal error prints its
    traceback), ``clock`` (wall and monotonic time: every command reads "now" here), the global
    connection flags, whether a person can answer a prompt, and the consoles ``out`` (data, stdout) and ``err``
    (diagnostics, stderr), safe consoles (:mod:`cronctl.cli.console`)."""

    debug: bool = False
    clock: Clock = field(default_factory=SystemClock)
    #: kubectl's connection flags given before the command (``cronctl -n ns status``); a command's
    #: own flag wins (:meth:`connect`)
    kubeconfig: str | None = None
    context: str | None = None
    namespace: str | None = None
    #: ``--request-timeout`` in seconds (0: no limit), before or after the command; None: the default
    request_timeout: float | None = None
    #: ``-l/--selector``: the label selector every list of CronJobs is made with (None: all)
    selector: str | None = None

    def now(self) -> datetime:
        """The run's clock, read (aware UTC)."""
        return self.clock.now()

    @cached_property
    def out(self) -> SafeConsole:
        """The data console (stdout; whatever ``sys.stdout`` is when it writes)."""
        from cronctl.cli.console import SafeConsole

        return SafeConsole(soft_wrap=True)

    @cached_property
    def err(self) -> SafeConsole:
        """The diagnostics console (stderr; whatever ``sys.stderr`` is when it writes)."""
        from cronctl.cli.console import SafeConsole

        return SafeConsole(stderr=True, soft_wrap=True)

    @property
    def interactive(self) -> bool:
        """True when a person can answer a prompt: standard input and stderr are terminals, and
        this is not CI."""
        return sys.stdin.isatty() and sys.stderr.isatty() and os.environ.get("CI") is None

    def table_width(self) -> int | None:
        """The width ``cronctl.cli.layout`` tables on stdout are laid out to: the terminal's, or None
        when stdout is a pipe or a file (one line per row, nothing wrapped)."""
        return self.out.width if self.out.is_terminal else None

    def connect(self, kubeconfig: str | None, context: str | None, namespace: str | None) -> KubeCluster:
        """:func:`cronctl.kube.connect` with the command's connection flags, else those given before the
        command (``cronctl -n ns status``), the run's ``--request-timeout`` and ``-l``, and, on a
        terminal, a ``connecting to SERVER ...`` line on stderr when the first request has no answer
        after 1 s."""
        from cronctl import kube

        def connecting(server: str) -> None:
            self.err.print(f"connecting to {server} \u2026", markup=False, style="dim")

        timeout = kube.DEFAULT_REQUEST_TIMEOUT if self.request_timeout is None else self.request_timeout
        cluster = kube.connect(kubeconfig or self.kubeconfig, context or self.context, namespace or self.namespace,
                               request_timeout=timeout, on_slow=connecting if self.err.is_terminal else None)
        cluster.cronjob_selector = self.selector
        return cluster

    def selector_only_for_lists(self, cronjob: str | None, files: Any = None, files_flag: str = "-f") -> None:
        """``-l`` selects from the API server's list: refused with a CronJob name (as kubectl refuses
        it) or with files, which no server filters (exit 2)."""
        if self.selector is None:
            return
        if cronjob is not None:
            raise UsageError("a CronJob name cannot be combined with -l/--selector")
        if files:
            raise UsageError(f"-l/--selector selects from the API server's list: not with {files_flag}")


def of(ctx: Any) -> Environment:
    """The run's Environment from a click context (any command's or callback's ``ctx``). A context
    made outside ``cronctl.cli.main`` (the shell's completion request) gets a default one, kept on its
    root so that every later callback of the same request reads the same."""
    root = ctx.find_root()
    if root.obj is None:
        root.obj = Environment()
    if not isinstance(root.obj, Environment):
        raise TypeError(f"the command's context holds {type(root.obj).__name__}, not an Environment")
    return root.obj
