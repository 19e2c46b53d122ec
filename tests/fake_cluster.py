"""A read-only Cluster over objects held in memory, for the services that only read (status): the
CronJob, its Jobs and events, and a server version; any other verb fails loudly (a test that needs
writes, watches or faults runs against the real control plane, or scripts its own fake for one exact
step: tests/unit/test_procedure_faults.py)."""

from __future__ import annotations

from typing import Any


class ReadOnlyCluster:
    """``get_cronjob`` (by name), ``list_jobs``, ``list_events`` and ``server_version`` over the given
    objects, counting requests as the real one does."""

    namespace = "ns"

    def __init__(self, cronjob: Any, jobs: list[Any], *, events: list[Any] | None = None,
                 version: str = "v1.37.2") -> None:
        self.cronjob, self.jobs, self.events, self.version = cronjob, jobs, events or [], version
        self.request_count = 0

    def get_cronjob(self, name: str) -> Any:
        self.request_count += 1
        assert name == self.cronjob["metadata"]["name"], f"asked for cronjob {name!r}"
        return self.cronjob

    def list_jobs(self, **_kw: Any) -> tuple[list[Any], str]:
        self.request_count += 1
        return self.jobs, "1"

    def list_events(self, **_kw: Any) -> list[Any]:
        self.request_count += 1
        return self.events

    def server_version(self) -> str:
        self.request_count += 1
        return self.version

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"ReadOnlyCluster does not implement {name!r}: use the real control plane")
