"""Waiting for Jobs: read, check, then watch from that resourceVersion under one deadline.

The condition is a pure predicate (:func:`cronctl.model.is_finished`); the watch reconnects
when the server closes it or the connection drops (from the last resourceVersion seen) and
re-lists on 410 Gone. It never polls.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from cronctl import model
from cronctl.cluster import Cluster, Obj, WatchExpired
from cronctl.errors import ApiError, Timeout
from cronctl.procedure.base import Clock

#: The longest single watch request; the server closes it and we reconnect (cheap, and it
#: bounds how long a silently dead connection can hold us).
MAX_WATCH_SECONDS = 300

#: How often a request is tried again while the API server cannot be reached.
RETRY_EVERY = 2.0

T = TypeVar("T")


def passing(e: ApiError) -> bool:
    """Whether the API server cannot answer now but will: unreachable (a restart, a fail-over),
    503 (shutting down, or not ready yet after a start) or 429 (throttled by API Priority and
    Fairness)."""
    return e.reason == "Unreachable" or e.status in (429, 503)


def ride_out(call: Callable[[], T], *, deadline: float, clock: Clock, stats: dict[str, int] | None = None,
             on_unreachable: Callable[[ApiError], None] | None = None) -> T:
    """``call()``; while the API server cannot answer (:func:`passing`: a restart, a fail-over,
    a graceful shutdown's 503), try again every :data:`RETRY_EVERY` seconds until ``deadline`` (on
    ``clock.monotonic()``), then let the last error stand. Any other error raises at once.

    Used once a run has a Job in flight: a control-plane restart of a few seconds must not end the
    run and leave the CronJob suspended while its Job still runs. ``stats["reconnect_errors"]``
    counts the failed attempts for the run record; ``on_unreachable`` is told of each one (the
    caller says it once).
    """
    while True:
        try:
            return call()
        except ApiError as e:
            left = deadline - clock.monotonic()
            if not passing(e) or left <= 0:
                raise
            if stats is not None:
                stats["reconnect_errors"] = stats.get("reconnect_errors", 0) + 1
            if on_unreachable is not None:
                on_unreachable(e)
            clock.sleep(min(RETRY_EVERY, left))


class WaitTimeout(Timeout):
    """The deadline passed; ``state`` holds the last seen Jobs."""

    def __init__(self, message: str, state: dict[str, Obj | None]) -> None:
        super().__init__(message)
        self.state = state


def _all_done(state: dict[str, Obj | None]) -> bool:
    # A Job that is gone (None) cannot run any more.
    return all(j is None or model.is_finished(j) for j in state.values())


def wait_for_jobs(cluster: Cluster, names: set[str], *, deadline: float, clock: Clock,
                  on_change: Callable[[Obj], None] | None = None,
                  stats: dict[str, int] | None = None,
                  on_unreachable: Callable[[ApiError], None] | None = None) -> dict[str, Obj | None]:
    """Block until every named Job is finished (Complete/Failed) or gone; return the last states.

    ``deadline`` is on ``clock.monotonic()``; past it, :class:`WaitTimeout`. ``stats`` (if given)
    counts ``watches`` (connections), ``reconnects`` (watches re-opened after one ended),
    ``relists`` (410 Gone: read again) and ``reconnect_errors`` (the server could not be reached)
    for the run record. An unreachable server is ridden out (:func:`ride_out`) until the deadline,
    on the reads as on the watches.
    """
    st = stats if stats is not None else {}
    for k in ("watches", "reconnects", "relists", "reconnect_errors"):
        st.setdefault(k, 0)
    fs = f"metadata.name={next(iter(names))}" if len(names) == 1 else None

    def relist() -> tuple[dict[str, Obj | None], str]:
        items, list_rv = ride_out(lambda: cluster.list_jobs(field_selector=fs), deadline=deadline, clock=clock,
                                  stats=st, on_unreachable=on_unreachable)
        state: dict[str, Obj | None] = {n: None for n in names}
        for j in items:
            if model.name_of(j) in names:
                state[model.name_of(j)] = j
        return state, list_rv

    state, rv = relist()
    while True:
        if _all_done(state):
            return state
        remaining = deadline - clock.monotonic()
        if remaining <= 0:
            raise WaitTimeout("timed out waiting for " + ", ".join(sorted(names)), state)
        try:
            if st["watches"]:
                st["reconnects"] += 1  # the previous watch ended (server closed it, dropped, restarted)
            st["watches"] += 1
            for typ, obj in cluster.watch_jobs(resource_version=rv, field_selector=fs,
                                               timeout_seconds=max(1, min(int(remaining) + 1, MAX_WATCH_SECONDS))):
                new_rv = str((obj.get("metadata") or {}).get("resourceVersion") or "")
                if new_rv:
                    rv = new_rv
                if typ == "BOOKMARK":
                    continue
                n = model.name_of(obj)
                if n not in names:
                    continue
                state[n] = None if typ == "DELETED" else obj
                if on_change is not None:
                    on_change(obj if typ != "DELETED" else {**obj, "_deleted": True})
                if _all_done(state):
                    return state
                if clock.monotonic() >= deadline:
                    break
        except WatchExpired:
            st["relists"] += 1
            state, rv = relist()  # the resourceVersion is too old: read again, then watch again
        except ApiError as e:
            if not passing(e):
                raise
            st["reconnect_errors"] += 1  # API server restarting: retry until the deadline
            if on_unreachable is not None:
                on_unreachable(e)
            clock.sleep(min(RETRY_EVERY, max(0.0, deadline - clock.monotonic())))
