"""Behaviour that differs by Kubernetes version, pinned on the real controller of the version under
test ($CRONCTL_TEST_K8S_VERSION; scripts/test-matrix runs this on every supported version).

Adoption of an existing Job named for a slot (cronctl.versions): 1.37 adopts it (it joins
``.status.active`` and ``lastScheduleTime`` becomes the slot); 1.34-1.36 cannot
(kubernetes/kubernetes#136918): no second Job for the slot, an ``UnexpectedJob`` warning, and
``lastScheduleTime`` left unset. The test also checks that cronctl's prediction for this server
says what the controller then does.
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from typing import Any

import pytest

from cronctl import model
from cronctl.procedure.predict import predict
from cronctl.versions import behaviour_for
from tests.cluster.cluster_support import (create_cronjob, early_in_a_minute, list_jobs, read_cronjob, slot_job_name,
                                           wait_for)

pytestmark = [pytest.mark.cluster, pytest.mark.compat]
UTC = timezone.utc


def server_version(k8s: Any) -> str:
    from kubernetes import client

    return str(client.VersionApi(k8s.api).get_code().git_version)


def test_an_existing_job_named_for_the_slot_is_adopted_from_1_37_and_not_before(k8s: Any, namespace: str) -> None:
    version = server_version(k8s)
    beh = behaviour_for(version)
    assert beh.known, f"tests run on a supported version, got {version}"
    cj = create_cronjob(k8s, namespace, "adopt", schedule="*/1 * * * *", suspend=True, duration=240)
    slot = early_in_a_minute(after=model.created(cj) or datetime.now(UTC), lo=3, hi=40)  # a missed slot, 3-40 s ago
    name = slot_job_name("adopt", slot)
    body = model.build_manual_job(cj, name)
    k8s.batch.create_namespaced_job(namespace, body)

    # what cronctl predicts for un-suspending now, on this server
    jobs = list_jobs(k8s, namespace)
    pred = predict(read_cronjob(k8s, namespace, "adopt"), datetime.now(UTC), suspended=False, jobs=jobs,
                   server_version=version)
    assert pred.decision == "create" and pred.job_name == name and pred.existing_job == name
    assert pred.adopts is beh.adopts_slot_job
    k8s.batch.patch_namespaced_cron_job("adopt", namespace, {"spec": {"suspend": False}})

    def settled() -> dict[str, Any] | None:
        c = read_cronjob(k8s, namespace, "adopt")
        st = c.get("status") or {}
        if beh.adopts_slot_job:
            return c if st.get("lastScheduleTime") and name in model.active_names(c) else None
        evs = json.loads(k8s.core.list_namespaced_event(namespace, _preload_content=False).data)["items"]
        return c if any(e.get("reason") == "UnexpectedJob" and name in (e.get("message") or "") for e in evs) else None

    c = wait_for(f"the controller to act on the existing Job {name}", settled, timeout=30)
    # never a second Job for the slot, on any version
    assert [model.name_of(j) for j in list_jobs(k8s, namespace)] == [name]
    lst = (c.get("status") or {}).get("lastScheduleTime")
    if beh.adopts_slot_job:
        assert lst == slot.strftime("%Y-%m-%dT%H:%M:%SZ") and name in model.active_names(c)
    else:
        time.sleep(5)  # several of its back-off retries later it still has not recorded the slot
        c = read_cronjob(k8s, namespace, "adopt")
        assert not (c.get("status") or {}).get("lastScheduleTime")
        assert name not in model.active_names(c)
