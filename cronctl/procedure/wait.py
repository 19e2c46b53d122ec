"""Waiting for Jobs: read, check, then watch from that resourceVersion under one deadline.

The condition is a pure predicate (:func:`cronctl.model.is_finished`); the watch reconnects
when the server closes it or the connection drops (from the last resourceVersion seen) and
re-lists on 410 Gone. It never polls.
"""

from __future__ import annotations

from collections.abc import Callable

from cronctl import model
from cronctl.cluster import Cluster, Obj, WatchExpired
from cronctl.errors import ApiError, Timeout
from cronctl.procedure.base import Clock

#: The longest single watch request; the server closes it and we reconnect (cheap, and it
#: bounds how long a silently dead connection can hold us).
MAX_WATCH_SECONDS = 300


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
                  stats: dict[str, int] | None = None) -> dict[str, Obj | None]:
    """Block until every named Job is finished (Complete/Failed) or gone; return the last states.

    ``deadline`` is on ``clock.monotonic()``; past it, :class:`WaitTimeout`. ``stats`` (if given)
    counts ``watches`` (connections), ``reconnects`` (watches re-opened after one ended),
    ``relists`` (410 Gone: read again) and ``reconnect_errors`` (the server could not be reached)
    for the run record.
    """
    st = stats if stats is not None else {}
    for k in ("watches", "reconnects", "relists", "reconnect_errors"):
        st.setdefault(k, 0)
    fs = f"metadata.name={next(iter(names))}" if len(names) == 1 else None

    def relist() -> tuple[dict[str, Obj | None], str]:
        items, list_rv = cluster.list_jobs(field_selector=fs)
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
            if e.reason != "Unreachable":
                raise
            st["reconnect_errors"] += 1  # API server restarting: retry until the deadline
            clock.sleep(min(2.0, max(0.0, deadline - clock.monotonic())))
