"""Pure model helpers: ownership, outcomes, origin, the manual Job, the run record."""

from __future__ import annotations

import dataclasses
import functools
from datetime import datetime, timedelta, timezone

import pytest

import builders
from cronctl import model

UTC = timezone.utc


# the CronJob here: mp-orders-sync (uid cj-uid-1), with the jobTemplate that build_manual_job copies:
# labels and annotations, an init container, two containers, one with env
TEMPLATE = {
    "metadata": {"labels": {"app": "sync"},
                 "annotations": {"cronjob.kubernetes.io/instantiate": "from-template", "owner": "team-a"}},
    "spec": {"backoffLimit": 1, "template": {"spec": {
        "restartPolicy": "Never",
        "initContainers": [{"name": "init", "image": "busybox:1"}],
        "containers": [{"name": "main", "image": "app:1",
                        "env": [{"name": "A", "value": "1"}, {"name": "CRONCTL_OCCURRENCE", "value": "stale"}]},
                       {"name": "side", "image": "side:1"}]}}},
}
cronjob = functools.partial(builders.cronjob, "*/10 * * * *", name="mp-orders-sync", namespace="integrations",
                            uid="cj-uid-1", annotations={"team": "x"}, policy="Forbid", job_template=TEMPLATE,
                            created=None, suspend=None)
job = functools.partial(builders.job, cj="mp-orders-sync", cj_uid="cj-uid-1")


def test_a_job_is_owned_only_through_a_controller_reference_with_the_cronjobs_uid() -> None:
    cj = cronjob()
    assert model.owned_by(job("j"), cj)
    assert not model.owned_by(job("j", cj_uid="other"), cj)
    assert not model.owned_by(job("j", controller=False), cj)


def test_ownership_falls_back_to_the_name_when_the_dump_has_no_uids() -> None:
    cj = cronjob()
    del cj["metadata"]["uid"]
    j = job("j")
    del j["metadata"]["ownerReferences"][0]["uid"]
    assert model.owned_by(j, cj)


@pytest.mark.parametrize("conditions,expected", [
    (None, None),
    ([], None),
    ([{"type": "SuccessCriteriaMet", "status": "True"}], None),
    ([{"type": "SuccessCriteriaMet", "status": "True"}, {"type": "Complete", "status": "True"}], "Complete"),
    ([{"type": "FailureTarget", "status": "True"}, {"type": "Failed", "status": "True"}], "Failed"),
    ([{"type": "Complete", "status": "False"}], None),
    ([{"type": "Suspended", "status": "True"}], None),
])
def test_the_terminal_condition_is_found_wherever_it_sits(conditions: list | None, expected: str | None) -> None:
    j = job("j", conditions=conditions)
    assert model.job_outcome(j) == expected
    assert model.is_finished(j) is (expected is not None)


def test_origin_is_manual_for_kubectl_and_cronctl_jobs_and_scheduled_otherwise() -> None:
    assert model.origin(job("j", annotations={"cronjob.kubernetes.io/instantiate": "manual"})) == "manual"
    assert model.origin(job("j", annotations={"cronctl.dev/run-id": "abc"})) == "manual"
    assert model.origin(job("j", annotations={model.SCHEDULED_TS: "2026-12-02T15:19:00+03:00"})) == "scheduled"


def test_scheduled_for_reads_the_controllers_annotation_in_any_offset() -> None:
    j = job("j", annotations={model.SCHEDULED_TS: "2026-12-02T15:19:00+03:00"})
    assert model.scheduled_for(j) == datetime(2026, 12, 2, 12, 19, tzinfo=UTC)
    assert model.scheduled_for(job("j")) is None


def test_the_manual_job_is_what_kubectl_create_job_from_cronjob_makes() -> None:
    j = model.build_manual_job(cronjob(), "mp-orders-sync-manual")
    m = j["metadata"]
    assert j["apiVersion"] == "batch/v1" and j["kind"] == "Job"
    assert m["name"] == "mp-orders-sync-manual" and m["namespace"] == "integrations"
    # kubectl: instantiate=manual first, then template annotations copied over it (template wins)
    assert m["annotations"] == {"cronjob.kubernetes.io/instantiate": "from-template", "owner": "team-a"}
    assert m["labels"] == {"app": "sync"}
    assert m["ownerReferences"] == [{"apiVersion": "batch/v1", "kind": "CronJob", "name": "mp-orders-sync",
                                     "uid": "cj-uid-1", "controller": True}]
    assert "blockOwnerDeletion" not in m["ownerReferences"][0]
    assert j["spec"] == cronjob()["spec"]["jobTemplate"]["spec"]
    assert model.SCHEDULED_TS not in m["annotations"]


def test_the_manual_job_does_not_share_state_with_the_cronjob() -> None:
    cj = cronjob()
    j = model.build_manual_job(cj, "x", occurrence_at=datetime(2026, 1, 1, tzinfo=UTC))
    j["spec"]["template"]["spec"]["containers"][0]["image"] = "changed"
    assert cj["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["image"] == "app:1"
    assert cj["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["env"][1]["value"] == "stale"


def test_the_occurrence_reaches_every_container_and_init_container_once() -> None:
    at = datetime(2026, 12, 2, 12, 20, tzinfo=timezone(timedelta(hours=3)))
    j = model.build_manual_job(cronjob(), "x", occurrence_at=at,
                               extra_annotations={model.ANN_OCCURRENCE: "2026-12-02T09:20:00Z"})
    ps = j["spec"]["template"]["spec"]
    for c in ps["initContainers"] + ps["containers"]:
        occ = [e for e in c["env"] if e["name"] == "CRONCTL_OCCURRENCE"]
        assert occ == [{"name": "CRONCTL_OCCURRENCE", "value": "2026-12-02T09:20:00Z"}], c["name"]
    assert {"name": "A", "value": "1"} in ps["containers"][0]["env"]
    assert j["metadata"]["annotations"][model.ANN_OCCURRENCE] == "2026-12-02T09:20:00Z"


def test_the_run_record_round_trips_through_annotations() -> None:
    rec = model.RunRecord(run_id="r1", original_suspend=True, operator="alice", reason="catch up",
                          job_name="cj-manual", step="created", started="2026-01-01T00:00:00Z",
                          holder="host/42")
    cj = cronjob()
    cj["metadata"]["annotations"].update(rec.to_annotations())
    assert rec.to_annotations()["cronctl.dev/original-suspend"] == "true"
    assert model.read_record(cj) == rec
    assert model.read_record(cronjob()) is None
    cleared = model.clear_record_annotations()
    # clearing removes every key a record can have, the GitOps part of a hold included, which a
    # plain hold does not write
    assert set(cleared) == set(rec.to_annotations()) | {model.ANN_GITOPS} and set(cleared.values()) == {None}
    held = dataclasses.replace(rec, gitops='{"strategy":"annotate","previous":null}')
    cj["metadata"]["annotations"].update(held.to_annotations())
    assert model.read_record(cj) == held and held.gitops_hold() == {"strategy": "annotate", "previous": None}


def test_unfinished_children_are_owned_jobs_without_a_terminal_condition() -> None:
    cj = cronjob()
    jobs = [job("running"), job("done", conditions=[{"type": "Complete", "status": "True"}]),
            job("foreign", cj_uid="zzz")]
    assert [model.name_of(j) for j in model.unfinished_children(cj, jobs)] == ["running"]


def test_overlapping_intervals_are_paired_and_touching_ones_are_not() -> None:
    now = datetime(2026, 1, 1, 1, 0, tzinfo=UTC)
    complete = [{"type": "Complete", "status": "True"}]
    jobs = [job("manual", start="2026-01-01T00:00:00Z", done="2026-01-01T00:26:00Z", conditions=complete),
            job("s1", start="2026-01-01T00:10:00Z", done="2026-01-01T00:11:00Z", conditions=complete),
            job("s2", start="2026-01-01T00:26:00Z", done="2026-01-01T00:27:00Z", conditions=complete),
            job("running", start="2026-01-01T00:50:00Z")]
    got = model.overlaps(model.job_record(j, "mp-orders-sync", now) for j in jobs)
    assert [(a, b) for a, b, _s, _e in got] == [("manual", "s1")]
    assert model.duration(jobs[0], now) == timedelta(minutes=26)
    assert model.duration(jobs[3], now) == timedelta(minutes=10)


# -- the finished runs (cronctl.dev/runs) ------------------------------------------------------
def _record(run_id: str, **kw: object) -> model.RunRecord:
    base = dict(run_id=run_id, original_suspend=False, operator="alice", reason="INC-1 reprocess",
                job_name="mp-orders-sync-manual", step="succeeded", started="2026-12-01T10:00:00Z",
                occurrence="2026-12-01T09:50:00Z")
    base.update(kw)
    return model.RunRecord(**base)  # type: ignore[arg-type]


def _with_runs(value: str | None) -> dict:
    cj = cronjob()
    if value is not None:
        cj["metadata"]["annotations"][model.ANN_RUNS] = value
    return cj


def test_a_restored_run_is_kept_with_who_why_what_and_the_time_it_held_the_cronjob() -> None:
    cj = _with_runs(None)
    at = datetime(2026, 12, 1, 10, 7, 30, tzinfo=UTC)
    cj["metadata"]["annotations"][model.ANN_RUNS] = model.runs_with(cj, _record("r1"), restored_at=at,
                                                                     restored_to=False)
    (run,) = model.read_runs(cj)
    assert (run.run_id, run.operator, run.reason, run.job_name, run.occurrence, run.last_step) == (
        "r1", "alice", "INC-1 reprocess", "mp-orders-sync-manual", "2026-12-01T09:50:00Z", "succeeded")
    assert run.held == (datetime(2026, 12, 1, 10, 0, tzinfo=UTC), at)
    assert "alice" in run.words() and "INC-1 reprocess" in run.words() and "r1" in run.words()


def test_a_run_that_found_the_cronjob_suspended_held_nothing_new() -> None:
    cj = _with_runs(None)
    cj["metadata"]["annotations"][model.ANN_RUNS] = model.runs_with(
        cj, _record("r1", original_suspend=True), restored_at=datetime(2026, 12, 1, 11, tzinfo=UTC), restored_to=True)
    assert model.read_runs(cj)[0].held is None


def test_the_runs_kept_are_bounded_oldest_first_out_and_each_field_is_cut() -> None:
    cj = _with_runs(None)
    for i in range(model.RUNS_KEPT + 5):
        cj["metadata"]["annotations"][model.ANN_RUNS] = model.runs_with(
            cj, _record(f"r{i}", reason="x" * 5000), restored_at=datetime(2026, 12, 1, 12, i, tzinfo=UTC),
            restored_to=False)
    runs = model.read_runs(cj)
    assert [r.run_id for r in runs] == [f"r{i}" for i in range(5, model.RUNS_KEPT + 5)]
    assert all(len(r.reason) == model.RUN_FIELD_MAX for r in runs)
    # 20 runs with every field at its longest stay far below the API's 256 KiB for all annotations
    assert len(cj["metadata"]["annotations"][model.ANN_RUNS].encode()) < 64 * 1024


def test_the_same_run_restored_twice_is_kept_once() -> None:
    cj = _with_runs(None)
    for minute in (1, 2):
        cj["metadata"]["annotations"][model.ANN_RUNS] = model.runs_with(
            cj, _record("r1"), restored_at=datetime(2026, 12, 1, 12, minute, tzinfo=UTC), restored_to=False)
    assert [r.restored_at for r in model.read_runs(cj)] == ["2026-12-01T12:02:00Z"]


@pytest.mark.parametrize("value", ["not json", "{}", "[1, \"x\", null]", "[{\"run_id\": 5}]", "",
                                   "[{\"run_id\": \"r\", \"operator\": {\"a\": 1}, \"original_suspend\": \"yes\"}]"])
def test_a_garbled_runs_annotation_reads_leniently(value: str) -> None:
    runs = model.read_runs(_with_runs(value))
    assert all(isinstance(r.operator, str) and isinstance(r.original_suspend, bool) for r in runs)
    assert len(runs) <= 1


# --- the pod view ---------------------------------------------------------------------------------

def test_the_pod_view_joins_the_spec_and_the_statuses() -> None:
    """Spec order for what a pod runs, the API's statuses for how each went; a container without a
    status yet has none (it never started), one restarted has a previous instance."""
    t0 = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)
    pod = builders.pod("p-1", spec={"initContainers": [{"name": "migrate"}],
                                    "containers": [{"name": "main"}, {"name": "side"}], "nodeName": "n1"},
                       status={"phase": "Running", "startTime": builders.stamp(t0),
                               "initContainerStatuses": [builders.container_status(
                                   "migrate", builders.terminated(0, "Completed", startedAt=builders.stamp(t0)))],
                               "containerStatuses": [builders.container_status(
                                   "main", builders.running(startedAt=builders.stamp(t0 + timedelta(seconds=9))),
                                   restarts=2, last_state=builders.terminated(
                                       137, "OOMKilled", startedAt=builders.stamp(t0 + timedelta(seconds=3))))]})
    v = model.pod_view(pod)
    assert (v.name, v.phase, v.node, v.started) == ("p-1", "Running", "n1", t0)
    assert v.spec_containers == (("migrate", True), ("main", False), ("side", False))
    assert v.first_container() == "main"
    migrate, main = v.status_of("migrate"), v.status_of("main")
    assert migrate is not None and main is not None and v.status_of("side") is None
    assert (migrate.init, migrate.state, migrate.exit_code, migrate.ran, migrate.ran_before) == \
        (True, "terminated", 0, True, False)
    assert (main.state, main.restarts, main.last_exit_code, main.last_reason, main.ran, main.ran_before) == \
        ("running", 2, 137, "OOMKilled", True, True)
    assert (main.started_at, main.last_started_at) == (t0 + timedelta(seconds=9), t0 + timedelta(seconds=3))


def test_the_pod_readers_agree_on_one_pod() -> None:
    """The bundle's log list, the run's exit codes and the ledger's facts read one pod through the view."""
    from cronctl.bundle.collect import log_instances
    from cronctl.ledger.facts import exit_codes, first_running

    t0 = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)
    pod = builders.pod("p-2", containers=[{"name": "main"}, {"name": "late"}], statuses=[
        builders.container_status("main", builders.terminated(3, "Error", startedAt=builders.stamp(t0)), restarts=1),
        builders.container_status("late", builders.waiting())])
    assert log_instances(pod) == [("main", False, None), ("main", True, None),
                                  ("late", False, "container never started (no log)")]
    assert exit_codes([pod]) == [{"pod": "p-2", "container": "main", "exit_code": 3, "reason": "Error"}]
    assert first_running([pod]) == t0
