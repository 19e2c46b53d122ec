"""CLI plumbing shared by run-manual, status and restore: the rich reporter,
output of records, the holder check and the test-only kill hook."""

from __future__ import annotations

import os
import signal
import time
import socket
from collections.abc import Callable
from types import FrameType
from typing import Any

from rich.status import Status

from cronctl.cli.common import Exit, Output, emit, safe_text
from cronctl.cli.console import SafeConsole
from cronctl.cli.env import Environment
from cronctl.textsafe import visible
from cronctl.procedure.base import Progress
from cronctl.timeutil import human_duration

#: Test-only hook: ``CRONCTL_TEST_KILL_AFTER_STEP=<step>`` makes run-manual SIGKILL itself right
#: after that step (suspended, verified, job-made, created, finished, restored), so tests can prove that
#: every intermediate state is explained by ``status`` and finished by ``restore``.
KILL_HOOK_ENV = "CRONCTL_TEST_KILL_AFTER_STEP"


#: Test-only hook: ``CRONCTL_TEST_PAUSE_AFTER_STEP=<step>:<seconds>`` makes run-manual sleep after
#: that step, so a fault drill (scripts/cluster stop kube-apiserver) can hit the next step exactly.
PAUSE_HOOK_ENV = "CRONCTL_TEST_PAUSE_AFTER_STEP"


def kill_hook() -> Callable[[str], None] | None:
    step = os.environ.get(KILL_HOOK_ENV)
    pause_step, _, pause = os.environ.get(PAUSE_HOOK_ENV, "").partition(":")
    if not step and not pause_step:
        return None

    def hook(done: str) -> None:
        if done == step:
            os.kill(os.getpid(), signal.SIGKILL)
        if done == pause_step:
            time.sleep(float(pause or 5))

    return hook


def holder() -> str:
    return f"{socket.gethostname()}/{os.getpid()}"


def holder_alive(h: str) -> bool | None:
    """True if ``host/pid`` names a live process on this host; None when it is on another host."""
    host, _, pid = h.rpartition("/")
    if host != socket.gethostname() or not pid.isdigit():
        return None
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sigterm_as_interrupt() -> None:
    """SIGTERM stops waiting exactly like Ctrl-C (record updated, exit 130)."""

    def handler(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, handler)


class RichReporter:
    """Steps as plain lines on the run's stderr; live progress as a rich status line on a terminal."""

    def __init__(self, err: SafeConsole) -> None:
        self.err = err
        self.live = err.is_terminal
        self._status: Status | None = None

    def step(self, message: str) -> None:
        self.err.print(f"• {message}", markup=False)

    def warn(self, message: str) -> None:
        self.err.print(f"warning: {message}", markup=False, style="yellow")

    def show(self, title: str, rows: list[tuple[str, str]]) -> None:
        from rich.table import Table

        t = Table(title=title, show_header=False, box=None, title_justify="left", pad_edge=False)
        t.add_column(style="bold")
        t.add_column(overflow="fold")
        for k, v in rows:
            t.add_row(k, v)
        self.err.print(t)

    def confirm(self, question: str) -> bool:
        import typer

        # click's prompt writes straight to the stream, past the console: escapes made visible here
        return bool(typer.confirm(visible(question, multiline=True), default=False, err=True))

    def progress(self, p: Progress) -> None:
        phases = " ".join(f"{k}={v}" for k, v in sorted(p.pods.items())) or "no pods yet"
        # a Text, never a str: rich's spinner parses a str as markup (a log line "[/x]" raised
        # MarkupError in the progress thread); one line, escapes visible
        text = safe_text(f"elapsed {human_duration(p.elapsed)} · pods {phases}"
                         + (f" · {p.last_log}" if p.last_log else ""))
        if self._status is None:
            self._status = self.err.status(text)
            self._status.start()
        else:
            self._status.update(text)

    def progress_done(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None


class Masked:
    """A reporter whose every line is masked (cronctl.redact) and the same Redactor for the result:
    for the commands that print a run record's or a pause's text (restore, pause, resume), which
    anyone with patch on the CronJob, or the operator, wrote."""

    def __init__(self, run: Environment) -> None:
        from cronctl.procedure.base import MaskingReporter
        from cronctl.redact import Redactor

        self.run = run
        self.red = Redactor()
        self.reporter = MaskingReporter(RichReporter(run.err), self.red)

    def result(self, res: dict[str, Any], output: Output) -> None:
        """Write the procedure's result, masked: ``-o json|yaml`` of it, else its message."""
        res = self.red.data(res)
        if output != Output.text:
            emit(self.run.out, res, output)
        else:
            self.run.out.print(res["message"], markup=False)


def exit_with_next_steps(err: SafeConsole, code: int, message: str, commands: list[str]) -> None:
    """A run that did not end well: the error, the commands to run next, and its exit code."""
    if code == 0:
        return
    err.print(f"error: {message}", markup=False)
    err.print("next:", markup=False)
    for c in commands:
        err.print(f"  {c}", markup=False)
    raise Exit(code)


def finish_run(run: Environment, res: Any, output: Output, fallback_next: list[str]) -> None:
    """The end of a run (run-manual, wait): the log tail and the Job's warning events on stderr,
    the record (-o json|yaml) or the outcome line and the run record's path on stdout, then the
    exit code with the commands to run next."""
    rec = res.record
    for line in rec.get("log_tail") or []:
        run.err.print(f"  | {visible(line, multiline=True)}", markup=False)  # a Job's output: escapes shown
    for e in rec.get("job_events") or []:
        run.err.print(f"  event: {visible(e)}", markup=False)
    outcome = str(rec.get("outcome") or "")
    end_of_run(run, res, output, fallback_next,
               shown=res.message if res.message.startswith(f"{outcome}:") else f"{outcome}: {res.message}")


def end_of_run(run: Environment, res: Any, output: Output, fallback_next: list[str],
               shown: str | None = None) -> None:
    """What every procedure that runs Jobs (run-manual, wait, backfill, restore --catch-up all)
    prints at its end: the record (``-o json|yaml``) or, after success, ``shown`` (default: the
    message) on stdout, and the run record's path; after a failure the message is said once, as
    the error line on stderr with the commands to run next, and the exit code follows."""
    rec = res.record
    if output != Output.text:
        emit(run.out, rec, output)
    else:
        if int(res.exit_code) == 0:
            run.out.print(res.message if shown is None else shown, markup=False)
        if rec.get("run_dir"):
            run.out.print(f"run record: {rec['run_dir']}/record.json", markup=False)
    exit_with_next_steps(run.err, int(res.exit_code), res.message, res.next_commands or fallback_next)
