"""The error tree and the exit codes: one place for both.

Every layer raises a subclass of :class:`CronctlError`; the CLI maps ``exit_code`` to the
process exit status in exactly one place (``cronctl.cli.main``). Messages are one line and
name the field or object at fault.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from enum import IntEnum


class ExitCode(IntEnum):
    """Process exit codes. Documented in docs/EXIT_CODES.md and runbooks/exit-codes.md; each has a test."""

    OK = 0
    JOB_FAILED = 1  # the manual Job ended Failed
    APPLY_ACTS = 1  # diff: the apply makes the controller create or delete a Job (kubectl diff's 1)
    USAGE = 2  # click/typer usage error (unknown flag, missing argument)
    REFUSED = 3  # a precondition refused the action: locked, active children, name exists, permission missing
    TIMEOUT = 4  # the wait ran out (--timeout)
    BAD_INPUT = 5  # malformed schedule, unknown zone, unreadable/malformed file or dump
    NOT_FOUND = 6  # the named CronJob (or other object) does not exist
    API_ERROR = 7  # the API server is unreachable or answered with an unexpected error
    FINDINGS = 8  # lint found something at or above --fail-on; history --fail-on found a bad slot
    LEDGER = 9  # the ledger (--ledger: SQLite or PostgreSQL) cannot be opened, read or written
    DUPLICATE = 10  # the run went on, but a Job of the CronJob that cronctl did not make was created during the hold
    NO_OCCURRENCE = 20  # cronctl claim found no scheduled occurrence to claim (no annotation, slot name, --occurrence)
    CLAIM_HELD = 21  # cronctl claim: another attempt holds the occurrence under a live lease
    CLAIM_FINAL = 22  # cronctl claim: the occurrence failed finally (--final-exit); --replay REASON runs it again
    LEASE_LOST = 23  # cronctl claim: the lease was taken over (or could not be renewed) while COMMAND ran
    INTERNAL = 70  # an unexpected exception (a bug): one line "internal error: ..." (EX_SOFTWARE)
    INTERRUPTED = 130  # Ctrl-C / SIGINT / SIGTERM


#: an option marker in a message: U+E000 name [U+E002 words] U+E001 (private-use characters,
#: never in a message otherwise: names and text from the cluster are shown with escapes)
_OPTION = re.compile("\ue000([A-Za-z_]+)(?:\ue002([^\ue000\ue001]*))?\ue001")


def option(name: str, words: str | None = None) -> str:
    """An input of the raiser, in a message or hint, named in the raiser's own terms: a field of its
    options (``option("occurrence")``, ``option("job_name")``).

    The error reads it as words (``occurrence``, ``job name``, or ``words`` when given); the
    command line writes its flag there instead (:meth:`CronctlError.naming`): services do not
    know the command line's flags, and the command line says which flag was at fault.
    """
    return f"\ue000{name}" + (f"\ue002{words}" if words else "") + "\ue001"


def _as_words(m: re.Match[str]) -> str:
    return m.group(2) or m.group(1).strip("_").replace("_", " ")


class CronctlError(Exception):
    """Base of every error cronctl reports to its user. ``str(e)`` is the one-line message.

    A message or hint may name the raiser's inputs with :func:`option`; ``message``, ``hint`` and
    ``str(e)`` show them as words, :meth:`naming` as the caller names them (the CLI: flags).
    """

    exit_code: ExitCode = ExitCode.API_ERROR

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    @property
    def message(self) -> str:
        return _OPTION.sub(_as_words, self._message)

    @message.setter
    def message(self, text: str) -> None:
        self._message = text
        self.args = (self.message,)

    @property
    def hint(self) -> str | None:
        return None if self._hint is None else _OPTION.sub(_as_words, self._hint)

    @hint.setter
    def hint(self, text: str | None) -> None:
        self._hint = text

    def add_hint(self, text: str) -> None:
        """Append ``text`` to the hint (``; `` between), keeping the options of the hint there is."""
        self._hint = (self._hint + "; " if self._hint else "") + text

    @property
    def options(self) -> tuple[str, ...]:
        """The inputs the message and hint name (:func:`option`), in order, each once."""
        found = _OPTION.findall(self._message + (self._hint or ""))
        return tuple(dict.fromkeys(name for name, _ in found))

    def naming(self, name: Callable[[str], str]) -> tuple[str, str | None]:
        """The message and the hint with each option written as ``name(option)``."""

        def sub(m: re.Match[str]) -> str:
            return name(m.group(1))

        return (_OPTION.sub(sub, self._message),
                None if self._hint is None else _OPTION.sub(sub, self._hint))


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


class LedgerError(CronctlError):
    """The ledger database cannot be opened, migrated, read or written (``--ledger``)."""

    exit_code = ExitCode.LEDGER


class NoOccurrence(CronctlError):
    """``cronctl claim`` found no scheduled occurrence: it never runs COMMAND unclaimed."""

    exit_code = ExitCode.NO_OCCURRENCE


class ClaimHeld(Refused):
    """Another attempt holds the occurrence under a live lease."""

    exit_code = ExitCode.CLAIM_HELD


class ClaimFinal(Refused):
    """The occurrence failed finally; only ``--replay REASON`` runs it again."""

    exit_code = ExitCode.CLAIM_FINAL


class LeaseLost(CronctlError):
    """The claim's lease was taken over, or could not be renewed before it expired, while COMMAND ran."""

    exit_code = ExitCode.LEASE_LOST


class JobFailed(CronctlError):
    exit_code = ExitCode.JOB_FAILED


class Timeout(CronctlError):
    exit_code = ExitCode.TIMEOUT


class Interrupted(CronctlError):
    exit_code = ExitCode.INTERRUPTED
