"""The one fake of the tests: our own Cluster boundary (cronctl.cluster.Cluster) over objects held in
memory, with faults scripted at one exact step.

What it stands in for: the Kubernetes API server as cronctl sees it through ``cronctl.cluster``
— reads of the CronJob, its Jobs, Pods, Events and logs (and the recorder's list of each kind), the
server version and who we are; the list-then-watch of Jobs; cronctl's guarded patches of the
CronJob and its Events.

Why not the real server there: the unit tests that use it need what a real server cannot be made
to do on demand, or cannot afford it — a log read failing with a 500, a watch that drops at a
chosen event, a 410 Gone at a chosen reconnect, the server unreachable during a reconnect, a 409
from a competing write landing exactly between cronctl's read and its patch; exact request
accounting per verb; objects a real server never serves (a Job without a uid, an Event whose times
are not times); thousands of Jobs from years of history in milliseconds. Everything a real
server can show is tested on the real control plane (tests/cluster/; the same faults at an
unchosen moment by scripts/cluster's drill verbs in tests/cluster/test_faults.py).

It fails loudly (AssertionError) on any verb it does not implement, on a list or watch of Jobs
that the test did not script (when it scripts them), and on a patch not guarded by the
CronJob's resourceVersion.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any, Protocol

Obj = dict[str, Any]


class Clock(Protocol):
    t: float


class FakeClock:
    """cronctl's clock (now, monotonic, sleep) for the fake: starts at 2026-12-02T12:00Z, monotonic
    1000.0; a sleep only moves it on (and is recorded in ``sleeps``), as does a watch the server
    closes after its timeout."""

    def __init__(self) -> None:
        self.t = 1000.0
        self.wall = datetime(2026, 12, 2, 12, 0, tzinfo=timezone.utc)
        self.sleeps: list[float] = []

    def now(self) -> datetime:
        return self.wall + timedelta(seconds=self.t - 1000.0)

    def monotonic(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.t += seconds


class FakeCluster:
    """``calls`` lists the verbs in order (a log read as ``log <pod>/<container>[ previous] since= limit=``);
    ``request_count`` counts them, as the real Cluster counts its API requests.

    Objects: ``cronjob`` (``get_cronjob`` of another name fails; ``listed``: ``list_cronjobs`` lists it,
    as the status overview reads a namespace; else it lists none), ``jobs``, ``pods``, ``events``;
    ``logs`` maps ``(pod, previous)`` to the text or an exception to raise; ``pods_error`` is raised
    by ``list_pods``. Scripts: ``lists`` (each ``list_jobs`` pops the next ``(jobs, resourceVersion)``;
    None: the ``jobs`` at ``resource_version``, as ``list_resource_pages`` answers for every kind),
    ``watches`` (each ``watch_jobs`` pops the next list of ``(type, job)`` events or exceptions to
    raise; the server closes a watch with no events after ``timeout_seconds`` of ``clock``), ``patch_faults`` (each ``patch_cronjob`` raises the next one
    first). Records ``patches``, ``events_created`` and ``watch_calls``.
    """

    namespace = "ns"

    def __init__(self, cronjob: Obj | None = None, jobs: list[Obj] | None = None, *,
                 pods: list[Obj] | None = None, events: list[Obj] | None = None,
                 logs: dict[tuple[str, bool], Any] | None = None, pods_error: Exception | None = None,
                 version: str = "v1.37.2", user: str = "alice", server: str = "https://fake",
                 clock: Clock | None = None, lists: list[tuple[list[Obj], str]] | None = None,
                 resource_version: str = "1", listed: bool = False) -> None:
        self.cronjob, self.jobs, self.pods, self.events = cronjob, jobs or [], pods or [], events or []
        self.logs, self.pods_error = logs or {}, pods_error
        self.version, self.user, self.server, self.clock = version, user, server, clock
        self.lists, self.resource_version, self.listed = lists, resource_version, listed
        self.watches: list[list[Any]] = []
        self.patch_faults: list[Exception] = []
        self.watch_calls: list[dict[str, Any]] = []
        self.patches: list[Obj] = []
        self.events_created: list[Obj] = []
        self.calls: list[str] = []
        self.request_count = 0

    def _call(self, verb: str) -> None:
        self.request_count += 1
        self.calls.append(verb)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # Python's own protocols (copy.copy asks for __setstate__)
            raise AttributeError(name)
        raise AssertionError(f"FakeCluster does not implement {name!r}: use the real control plane")

    # -- who and where ----------------------------------------------------------------------------
    def server_url(self) -> str:
        return self.server

    def server_version(self) -> str:
        self._call("version")
        return self.version

    def whoami(self) -> str:
        self._call("whoami")
        return self.user

    def can_i(self, verb: str, resource: str, **_kw: Any) -> tuple[bool, str]:
        self._call("can_i")
        return True, ""

    # -- the CronJob --------------------------------------------------------------------------------
    def get_cronjob(self, name: str) -> Obj:
        self._call("get_cronjob")
        assert self.cronjob is not None, "the test gave the fake no CronJob"
        assert name == self.cronjob["metadata"]["name"], f"asked for cronjob {name!r}"
        return copy.deepcopy(self.cronjob)

    def list_cronjobs(self, *, all_namespaces: bool = False) -> list[Obj]:
        self._call("list_cronjobs")
        return [copy.deepcopy(self.cronjob)] if self.listed and self.cronjob is not None else []

    def patch_cronjob(self, name: str, patch: Obj, *, resource_version: str) -> Obj:
        self._call("patch_cronjob")
        if self.patch_faults:
            raise self.patch_faults.pop(0)
        assert self.cronjob is not None
        assert resource_version == self.cronjob["metadata"]["resourceVersion"], "unguarded patch"
        self.patches.append(patch)
        ann = self.cronjob["metadata"].setdefault("annotations", {})
        for k, v in ((patch.get("metadata") or {}).get("annotations") or {}).items():
            if v is None:
                ann.pop(k, None)
            else:
                ann[k] = v
        if "spec" in patch:
            self.cronjob["spec"].update(patch["spec"])
        self.cronjob["metadata"]["resourceVersion"] = str(int(resource_version) + 1)
        return copy.deepcopy(self.cronjob)

    def create_event(self, body: Obj) -> Obj:
        self._call("create_event")
        self.events_created.append(body)
        return body

    # -- Jobs ---------------------------------------------------------------------------------------
    def get_job(self, name: str) -> Obj | None:
        self._call("get_job")
        return next((j for j in self.jobs if j["metadata"]["name"] == name), None)

    def list_jobs(self, **_kw: Any) -> tuple[list[Obj], str]:
        self._call("list_jobs")
        if self.lists is None:
            return self.jobs, self.resource_version
        assert self.lists, "unexpected list_jobs"
        return self.lists.pop(0)

    def watch_jobs(self, *, resource_version: str, field_selector: str | None = None,
                   label_selector: str | None = None, timeout_seconds: int = 60) -> Iterator[tuple[str, Obj]]:
        self._call("watch_jobs")
        self.watch_calls.append({"rv": resource_version, "timeout": timeout_seconds, "fs": field_selector})
        assert self.watches, "unexpected watch_jobs"
        script = self.watches.pop(0)

        def gen() -> Iterator[tuple[str, Obj]]:
            for item in script:
                if isinstance(item, Exception):
                    raise item
                yield item
            # the server closed the watch after timeout_seconds (or the connection dropped)
            if self.clock is not None and not script:
                self.clock.t += timeout_seconds

        return gen()

    def list_resource_pages(self, resource: str, namespace: str | None) -> Iterator[tuple[list[Obj], str]]:
        """The recorder's list of any kind, in pages of two (the recorder writes page by page): the
        CronJob, Jobs, Events or Pods given."""
        self._call(f"list {resource}")
        objs = {"cronjobs": [self.cronjob] if self.cronjob else [], "jobs": self.jobs, "events": self.events,
                "pods": self.pods}.get(resource, [])
        for i in range(0, max(len(objs), 1), 2):
            yield objs[i:i + 2], self.resource_version

    # -- Pods, logs, Events -------------------------------------------------------------------------
    def list_pods(self, **_kw: Any) -> list[Obj]:
        self._call("list_pods")
        if self.pods_error:
            raise self.pods_error
        return self.pods

    def read_pod_log(self, pod: str, container: str, *, previous: bool = False, since_seconds: int | None = None,
                     limit_bytes: int | None = None, tail_lines: int | None = None) -> str:
        self._call(f"log {pod}/{container}{' previous' if previous else ''} since={since_seconds} limit={limit_bytes}")
        got = self.logs[(pod, previous)]
        if isinstance(got, Exception):
            raise got
        return str(got)[:limit_bytes] if limit_bytes else str(got)

    def list_events(self, **_kw: Any) -> list[Obj]:
        self._call("list_events")
        return self.events
