"""The error tree and the exit codes: one place for both.

Every layer raises a subclass of :class:`CronctlError`; the CLI maps ``exit_code`` to the
process exit status in exactly one place (``cronctl.cli.main``). Messages are one line and
name the field or object at fault.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Process exit codes. Documented in README.md and runbooks/exit-codes.md; each has a test."""

    OK = 0
    JOB_FAILED = 1  # the manual Job ended Failed
    USAGE = 2  # click/typer usage error (unknown flag, missing argument)
    REFUSED = 3  # a precondition refused the action: locked, active children, name exists, permission missing
    TIMEOUT = 4  # the wait ran out (--timeout)
    BAD_INPUT = 5  # malformed schedule, unknown zone, unreadable/malformed file or dump
    NOT_FOUND = 6  # the named CronJob (or other object) does not exist
    API_ERROR = 7  # the API server is unreachable or answered with an unexpected error
    FINDINGS = 8  # lint found something at or above --fail-on; history --fail-on found a bad slot
    INTERNAL = 70  # an unexpected exception (a bug): one line "internal error: ..." (EX_SOFTWARE)
    INTERRUPTED = 130  # Ctrl-C / SIGINT / SIGTERM


class CronctlError(Exception):
    """Base of every error cronctl reports to its user. ``str(e)`` is the one-line message."""

    exit_code: ExitCode = ExitCode.API_ERROR

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class BadInput(CronctlError):
    """The user's input is wrong: a schedule, a zone, a flag value, a file."""

    exit_code = ExitCode.BAD_INPUT


class BadUsage(CronctlError):
    """A flag value the command line cannot mean: out of its range (``--settle 0``, a negative
    duration). Exit 2, like click's own range checks (``--count -1``), but as one ``error:`` line."""

    exit_code = ExitCode.USAGE


class ScheduleError(BadInput):
    """A schedule expression or time zone that the engine (robfig/cron v3 rules) rejects."""


class NotFound(CronctlError):
    exit_code = ExitCode.NOT_FOUND


class Refused(CronctlError):
    """A precondition refused the action before anything changed."""

    exit_code = ExitCode.REFUSED


class PermissionMissing(Refused):
    """The caller lacks an RBAC permission a later step needs (found by SelfSubjectAccessReview)."""


class Conflict(Refused):
    """Someone else changed the object first (resourceVersion conflict) or holds the lock."""


class ApiError(CronctlError):
    """The API server answered with an error we do not handle, or could not be reached."""

    exit_code = ExitCode.API_ERROR

    def __init__(self, message: str, *, status: int | None = None, reason: str | None = None,
                 hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.status = status
        self.reason = reason


class JobFailed(CronctlError):
    exit_code = ExitCode.JOB_FAILED


class Timeout(CronctlError):
    exit_code = ExitCode.TIMEOUT


class Interrupted(CronctlError):
    exit_code = ExitCode.INTERRUPTED
