"""Collection over our own Cluster boundary, for what the real server cannot be made to do on
demand (a log read failing with a 500, exact request accounting per verb). The behaviour that a
real server can show (403 on pods/log, logs, lists) is tested in tests/cluster/test_bundle.py.

``FakeCluster`` (tests/fake_cluster.py) implements the part of :class:`cronctl.cluster.Cluster` that
collection uses and fails loudly on anything else.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest

from builders import container_status, cronjob, job, pod, running, terminated, waiting
from cronctl.bundle.collect import collect, log_instances
from cronctl.errors import ApiError, BadInput, NotFound, PermissionMissing
from fake_cluster import FakeCluster

NOW = datetime(2026, 12, 2, 11, 0, tzinfo=timezone.utc)


def collection(**kw: Any) -> FakeCluster:
    """CronJob cj (*/5), its Jobs cj-1 and cj-2 and another CronJob's, and a pod of each: cj-1's ran and
    restarted once, cj-2's never started, the other's runs."""
    jobs = [job("cj-1"), job("cj-2"), job("other", cj_uid="x")]
    pods = [pod("cj-1-a", job="cj-1", statuses=[container_status(state=terminated(0), restarts=1)]),
            pod("cj-2-a", job="cj-2", statuses=[container_status(state=waiting("ContainerCreating"))]),
            pod("other-a", job="other", statuses=[container_status(state=running())])]
    return FakeCluster(cronjob("*/5 * * * *", created="2026-12-02T10:00:00Z"), jobs, pods=pods, version="v1.36.3",
                       **kw)


def test_one_list_per_kind_and_logs_only_for_containers_that_ran() -> None:
    fake = collection(logs={("cj-1-a", False): "current\n", ("cj-1-a", True): "previous\n"})
    raw = collect(fake, ["cj"], now=NOW, collected_at=NOW, since_seconds=600, max_log_bytes=100)  # type: ignore[arg-type]
    assert fake.calls == ["version", "whoami", "get_cronjob", "list_jobs", "list_pods", "list_events",
                          "log cj-1-a/main since=600 limit=101", "log cj-1-a/main previous since=600 limit=101"]
    assert raw.request_count == 8 and raw.collected_by == "alice" and raw.server_version == "v1.36.3"
    logs = {(lg.pod, lg.previous): lg for lg in raw.logs}
    assert logs[("cj-1-a", False)].text == "current\n" and logs[("cj-1-a", True)].text == "previous\n"
    assert logs[("cj-2-a", False)].text is None and "never started" in (logs[("cj-2-a", False)].missing or "")
    assert ("other-a", False) not in logs  # a pod of another CronJob's Job: not read
    assert raw.missing == []


def test_a_log_longer_than_the_cap_is_cut_at_a_line_end_and_marked_truncated() -> None:
    # the cap falls inside a URL with credentials: the partial line is dropped, not half-masked
    fake = collection(logs={("cj-1-a", False): "start\nPOST https://bot:hunter2@x/\n", ("cj-1-a", True): "y" * 10})
    raw = collect(fake, ["cj"], now=NOW, collected_at=NOW, max_log_bytes=20)  # type: ignore[arg-type]
    logs = {(lg.pod, lg.previous): lg for lg in raw.logs}
    assert (logs[("cj-1-a", False)].text, logs[("cj-1-a", False)].bytes, logs[("cj-1-a", False)].truncated) == (
        "start\n", 6, True)
    assert (logs[("cj-1-a", True)].bytes, logs[("cj-1-a", True)].truncated) == (10, False)  # exactly the cap


def test_a_log_read_failing_with_a_server_error_is_recorded_and_the_rest_is_read() -> None:
    fake = collection(logs={("cj-1-a", False): ApiError("HTTP 500: kubelet unreachable", status=500),
                             ("cj-1-a", True): "previous\n"})
    raw = collect(fake, ["cj"], now=NOW, collected_at=NOW)  # type: ignore[arg-type]
    assert [(m.what, m.object) for m in raw.missing] == [("pods/log", "pod/cj-1-a container main")]
    assert {lg.previous: lg.text for lg in raw.logs if lg.pod == "cj-1-a"} == {False: None, True: "previous\n"}


def test_after_a_forbidden_log_read_no_other_log_is_requested() -> None:
    fake = collection(logs={("cj-1-a", False): PermissionMissing("forbidden: cannot get pods/log")})
    raw = collect(fake, ["cj"], now=NOW, collected_at=NOW)  # type: ignore[arg-type]
    assert sum(1 for c in fake.calls if c.startswith("log ")) == 1
    assert [m.what for m in raw.missing] == ["pods/log"]
    prev = [lg for lg in raw.logs if lg.pod == "cj-1-a" and lg.previous][0]
    assert prev.text is None and prev.missing == "forbidden: cannot get pods/log"


def test_a_forbidden_pod_list_is_missing_and_the_bundle_goes_on() -> None:
    fake = collection(logs={}, pods_error=PermissionMissing("forbidden: cannot list pods"))
    raw = collect(fake, ["cj"], now=NOW, collected_at=NOW)  # type: ignore[arg-type]
    assert [(m.what, m.reason) for m in raw.missing] == [("pods", "forbidden: cannot list pods")]
    assert raw.pods == [] and len(raw.jobs) == 3 and raw.logs == []


def test_log_instances_list_previous_only_after_a_restart() -> None:
    p = pod("p", job="j", statuses=[container_status(state=running(), restarts=2)])
    p["spec"]["initContainers"] = [{"name": "init"}]
    p["status"]["initContainerStatuses"] = [{"name": "init", "state": {"terminated": {"exitCode": 0}}}]
    assert log_instances(p) == [("init", False, None), ("main", False, None), ("main", True, None)]


def test_all_in_a_namespace_without_cronjobs_is_not_found() -> None:
    with pytest.raises(NotFound, match="no CronJob in namespace ns"):
        collect(collection(logs={}), None, now=NOW, collected_at=NOW)  # type: ignore[arg-type]
