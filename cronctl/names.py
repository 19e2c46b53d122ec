"""Kubernetes names, checked before any request or any path is built from them.

A name typed by the user goes into an API path (``/apis/batch/v1/namespaces/<ns>/cronjobs/<name>``)
and into the run directory (``runs/<cronjob>-<run id>``). Anything but a valid Kubernetes name is
refused here (``BadInput``, exit 5, one line), so ``../../other/cronjobs/victim`` can never reach
another object or another directory. The rules are the API server's
(k8s.io/apimachinery validation):

* namespace: DNS-1123 label, at most 63 characters (``IsDNS1123Label``);
* CronJob: DNS-1123 subdomain, at most 52 characters (``ValidateCronJob``: the controller appends
  ``-<unix minutes>``, 11 characters, to make its Jobs' names);
* Job: DNS-1123 subdomain, at most 63 characters (its name becomes the ``job-name`` label value,
  which is limited to 63).

Pure: stdlib only.
"""

from __future__ import annotations

import re

from cronctl.errors import BadInput

_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_LABEL_RE = re.compile(_LABEL)
_SUBDOMAIN_RE = re.compile(rf"{_LABEL}(\.{_LABEL})*")

NAMESPACE_MAX = 63
CRONJOB_MAX = 52
JOB_MAX = 63

#: what ``kubectl`` accepts as the type of ``TYPE/NAME`` for a CronJob (lower case; kubectl's
#: resource names are case-insensitive)
CRONJOB_TYPES = ("cronjob", "cronjobs", "cj", "cronjob.batch", "cronjobs.batch")


SUBDOMAIN_SHAPE = "lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
LABEL_SHAPE = "lower-case letters, digits and '-', starting and ending with a letter or digit"


def has_shape(text: str, *, subdomain: bool) -> bool:
    """Whether ``text`` has the shape of a DNS-1123 subdomain (``subdomain``) or label; length
    limits are the caller's (they differ by kind)."""
    return (_SUBDOMAIN_RE if subdomain else _LABEL_RE).fullmatch(text) is not None


def _check(kind: str, text: str, *, limit: int, subdomain: bool) -> str:
    if not text:
        raise BadInput(f"bad {kind} name '': must not be empty")
    if len(text) > limit:
        raise BadInput(f"bad {kind} name {text[:limit]!r}...: {len(text)} characters, at most {limit} allowed")
    if not has_shape(text, subdomain=subdomain):
        shape = SUBDOMAIN_SHAPE if subdomain else LABEL_SHAPE
        raise BadInput(f"bad {kind} name {text!r}: a Kubernetes name is {shape}")
    return text


def namespace(text: str) -> str:
    """``text`` if it is a valid namespace name, else ``BadInput``."""
    return _check("namespace", text, limit=NAMESPACE_MAX, subdomain=False)


def job_name(text: str) -> str:
    """``text`` if it is a valid Job name, else ``BadInput``."""
    return _check("job", text, limit=JOB_MAX, subdomain=True)


def cronjob_name(text: str) -> str:
    """The CronJob name of ``NAME`` or ``TYPE/NAME`` (``cronjob/x``, ``cronjobs.batch/x``, ...).

    Any other ``TYPE/`` and any invalid name is ``BadInput``.
    """
    if "/" in text:
        kind, _, rest = text.partition("/")
        if kind.lower() not in CRONJOB_TYPES:
            raise BadInput(f"bad cronjob name {text!r}: expected NAME or cronjob/NAME")
        text = rest
    return _check("cronjob", text, limit=CRONJOB_MAX, subdomain=True)


def is_cronjob_ref(text: str) -> bool:
    """Whether ``text`` has the form ``TYPE/...`` with a CronJob type (``explain`` tells a live
    CronJob from a schedule, which may contain ``/``, by this)."""
    kind, slash, _ = text.partition("/")
    return bool(slash) and kind.lower() in CRONJOB_TYPES


def not_found_elsewhere(kind: str, name: str, namespace: str, elsewhere: list[str], *, shown: int = 5) -> str:
    """"cronjob X not found in namespace A; it exists in B, C (use -n B)": a NotFound message that
    names the namespaces where an object of that name does exist (``elsewhere``, at least one)."""
    others = sorted(set(elsewhere) - {namespace})
    listed = ", ".join(others[:shown]) + (f" and {len(others) - shown} more" if len(others) > shown else "")
    return f"{kind} {name} not found in namespace {namespace}; it exists in {listed} (use -n {others[0]})"


def did_you_mean(name: str, known: list[str]) -> str:
    """"; did you mean a or b?" for a mistyped name among ``known`` (difflib, as close as a typo, as
    for commands and zones: ``mp-order-sync`` -> ``mp-orders-sync``), else ""."""
    import difflib

    close = difflib.get_close_matches(name, sorted(set(known) - {name}), n=3, cutoff=0.75)
    return f"; did you mean {' or '.join(close)}?" if close else ""


def held(known: list[str], *, shown: int = 10) -> str:
    """"a, b, c and 4 more" (or "none"): the CronJobs a dump or a file holds, for a NotFound message."""
    names = sorted(set(known))
    if not names:
        return "none"
    return ", ".join(names[:shown]) + (f" and {len(names) - shown} more" if len(names) > shown else "")


def manual_job_name(cronjob: str, run_name: str | None = None) -> str:
    """The Job of a manual run: ``<cronjob>-manual``, or with ``--run-name NAME`` ``<cronjob>-manual-NAME``.

    Fixed by its inputs, so two operators starting the same run meet at one name (the second is
    refused); within a Job name's 63 characters. ``BadInput`` names the longest NAME this CronJob
    leaves room for (a CronJob of 52 characters, the most the API allows, leaves 3)."""
    base = f"{cronjob}-manual"
    if run_name is None:
        return base
    room = JOB_MAX - len(base) - 1
    if not run_name or not _LABEL_RE.fullmatch(run_name):
        raise BadInput(f"bad --run-name {run_name[:80]!r}: lower case letters, digits and '-', starting and ending "
                       "with a letter or digit (it ends the Job's name)")
    if len(run_name) > room:
        raise BadInput(f"bad --run-name {run_name[:80]!r}: the Job {base}-{run_name[:80]} would have "
                       f"{len(base) + 1 + len(run_name)} characters, over the {JOB_MAX} a Job name may have; "
                       f"for cronjob {cronjob} a run name has at most {room} (docs/LIMITS.md)")
    return f"{base}-{run_name}"
