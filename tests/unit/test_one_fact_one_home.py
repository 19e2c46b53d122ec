"""One fact, one home (issue 24, item 1): for the same CronJob and Jobs, ``status``, ``history``, the
bundle and run-manual's plan state the same duration, zone, policy and slot (and ``explain`` the same
zone, policy and slot).

Each command is run the way its command line runs it, over the one fake of our Cluster boundary:
``explain`` through :func:`cronctl.explain.explain_object` and the document ``-o json`` prints of it
(:func:`cronctl.cli.explain.explanation_doc`: what ``explain cronjob/NAME`` shows),
``status`` through :func:`cronctl.procedure.status.collect_status` and the document ``-o json`` prints of it
(:func:`cronctl.cli.status.status_doc`), ``history`` through
:func:`cronctl.procedure.history.from_cluster`, the bundle through its collector and
:func:`cronctl.bundle.assemble.build_bundle` (bundle.json), run-manual through
:func:`cronctl.procedure.run_manual.run_manual` with ``--dry-run`` (its plan, as recorded). The
expected values come from the inputs: the zone written in the spec, the policy set (``Allow`` when
absent), the slot of the controller's annotation (or of the Job's name), the minutes a Job ran.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

import builders
from builders import SCHEDULED_TS, T, job, slotname, z
from cronctl.bundle.analyse import Options as BundleOptions
from cronctl.bundle.assemble import build_bundle
from cronctl.bundle.collect import collect
from cronctl.cli.explain import explanation_doc
from cronctl.cli.status import overview_doc, status_doc
from cronctl.explain import explain_object
from cronctl.history import Options as HistoryOptions
from cronctl.procedure.base import QuietReporter
from cronctl.procedure.history import from_cluster
from cronctl.procedure.run_manual import RunOptions, run_manual
from cronctl.procedure.status import collect_overview, collect_status
from fake_cluster import FakeClock, FakeCluster

Obj = dict[str, Any]
NOW = FakeClock().now()  # 2026-12-02T12:00Z: the fake clock run-manual reads
assert NOW == T(12, 0)


@dataclass(frozen=True)
class Ran:
    """One Job of the scenario as written: its slot, how it stands for it, how long it ran."""

    slot: datetime
    seconds: int | None  # None: still running at NOW
    outcome: str | None = None  # Complete (the default when it ran to its end) or Failed
    annotated: bool = True  # the controller's scheduled-timestamp annotation; False: the name alone


#: a */10 CronJob's Jobs before noon: done, failed, slot-named only (a cluster before the
#: annotation), running; 11:40 has no Job (the slot run-manual is asked to run)
RUNS = (Ran(T(11, 0), 150), Ran(T(11, 10), 60, "Failed"), Ran(T(11, 20), 200),
        Ran(T(11, 30), 30, annotated=False), Ran(T(11, 50), None))
MISSED = T(11, 40)
NO_ZONE = "none (the controller's zone, normally UTC)"  # how status and the plan print an unset zone
DELAY = 2  # the controller creates each Job 2 s after its slot; it starts 1 s later


def annotation(t: datetime, zone: str | None) -> str:
    """The controller's scheduled-timestamp annotation: the slot in the CronJob's zone, with offset."""
    if zone is None:
        return z(t)
    return t.astimezone(ZoneInfo(zone)).isoformat()


def scenario(zone: str | None, policy: str | None) -> tuple[Obj, list[Obj]]:
    cj = builders.cronjob("*/10 * * * *", tz=zone, policy=policy, created=T(9, 0), last=T(11, 50),
                          resource_version="5", containers=[{"name": "c", "image": "i"}])
    jobs = []
    for r in RUNS:
        created = r.slot + timedelta(seconds=DELAY)
        started = created + timedelta(seconds=1)
        done = None if r.seconds is None else started + timedelta(seconds=r.seconds)
        ann = {SCHEDULED_TS: annotation(r.slot, zone)} if r.annotated else {}
        jobs.append(job(slotname(r.slot), created=created, start=started, done=done, outcome=r.outcome,
                        annotations=ann))
    return cj, jobs


def seconds_of(r: Ran) -> int:
    """How long a Job ran by NOW: to its end, or to NOW while it runs (kubectl's DURATION)."""
    started = r.slot + timedelta(seconds=DELAY + 1)
    return r.seconds if r.seconds is not None else int((NOW - started).total_seconds())


CASES = [("Europe/Berlin", "Forbid"), (None, None), ("Asia/Kolkata", "Replace"), ("America/New_York", "Allow")]


@pytest.mark.parametrize("zone, policy", CASES)
def test_status_history_bundle_and_the_plan_state_the_same_duration_zone_policy_and_slot(
        zone: str | None, policy: str | None, tmp_path: Any) -> None:
    cj, jobs = scenario(zone, policy)
    want_policy = policy or "Allow"
    want_zone = zone  # as written in the spec (None: not set)
    by_name = {slotname(r.slot): r for r in RUNS}

    # -- status -------------------------------------------------------------------------------------
    status = status_doc(collect_status(FakeCluster(cj, jobs), "cj", NOW))  # type: ignore[arg-type]  # -o json
    assert (status["time_zone"], status["concurrency_policy"]) == (want_zone, want_policy)
    overview = overview_doc(collect_overview(FakeCluster(cj, jobs, listed=True), all_namespaces=False, now=NOW))  # type: ignore[arg-type]
    assert [r["time_zone"] for r in overview["cronjobs"]] == [want_zone]
    assert {j["name"]: j["duration_seconds"] for j in status["jobs"]} == \
        {n: float(seconds_of(r)) for n, r in by_name.items()}
    assert {j["name"]: j["scheduled_for"] for j in status["jobs"]} == {n: z(r.slot) for n, r in by_name.items()}

    # -- history --------------------------------------------------------------------------------------
    fleet, missing = from_cluster(FakeCluster(cj, jobs), "cj", all_namespaces=False, now=NOW,  # type: ignore[arg-type]
                                  opts=HistoryOptions(now=NOW))
    hists = list(fleet)
    assert missing == [] and len(hists) == 1
    h = hists[0]
    assert (h["time_zone"], h["zone"], h["concurrency_policy"]) == (want_zone, zone or "UTC", want_policy)
    rows = {r["slot"]: r for r in h["slots"]}
    for n, r in by_name.items():
        row = rows[z(r.slot)]
        assert row["jobs"] == [n]
        assert row["slot_local"] == annotation(r.slot, zone).replace("+00:00", "Z")
        # a slot's run time once its Job has finished (a running one has none yet)
        assert row["duration_seconds"] == (r.seconds if r.seconds is not None else None)
    assert rows[z(MISSED)]["jobs"] == [] and rows[z(MISSED)]["slot_local"] == annotation(MISSED, zone).replace(
        "+00:00", "Z")
    assert status["recent_slots"] == [{k: rows[s["slot"]][k] for k in ("slot", "slot_local", "verdict", "outcome",
                                                                       "failure_reason", "jobs", "reason")}
                                      for s in status["recent_slots"]]

    # -- the bundle (bundle.json) ---------------------------------------------------------------------
    raw = collect(FakeCluster(cj, jobs), ["cj"], now=NOW, collected_at=NOW, logs=False)  # type: ignore[arg-type]
    doc = build_bundle(raw, ["cj"], BundleOptions(now=NOW)).doc
    b = doc["cronjobs"][0]
    assert (b["spec"]["time_zone"], b["spec"]["concurrency_policy"]) == (want_zone, want_policy)
    assert (b["schedule"]["time_zone"], b["schedule"]["zone"]) == (want_zone, zone or "UTC")
    assert {j["name"]: j["duration_seconds"] for j in b["jobs"]} == {n: seconds_of(r) for n, r in by_name.items()}
    assert {j["name"]: j["scheduled_for"] for j in b["jobs"]} == {n: z(r.slot) for n, r in by_name.items()}
    assert {j["name"]: j["occurrence"] for j in b["jobs"]} == {n: z(r.slot) for n, r in by_name.items()}
    occ = {o["expected"]: o for o in b["occurrences"]}
    for r in (*RUNS, Ran(MISSED, None)):
        assert occ[z(r.slot)]["expected_local"] == rows[z(r.slot)]["slot_local"]

    # -- run-manual --occurrence 11:40 --dry-run: its plan --------------------------------------------
    cluster = FakeCluster(cj, jobs, clock=FakeClock())
    shown = QuietReporter()
    res = run_manual(cluster, RunOptions(cronjob="cj", occurrence=MISSED, dry_run=True, yes=True,  # type: ignore[arg-type]
                                         run_dir=str(tmp_path)), FakeClock(), shown)
    # what the plan prints: the zone as written, the slot as the controller's annotation writes it
    assert f"  time zone: {zone or NO_ZONE}" in shown.lines
    slot_row = next(line for line in shown.lines if line.startswith("  slot: "))
    assert slot_row.startswith(f"  slot: {annotation(MISSED, zone) if zone else z(MISSED)}")
    p = res.record["plan"]
    assert (p["time_zone"], p["concurrency_policy"]) == (want_zone, want_policy)
    assert p["slot"]["at"] == z(MISSED) and p["slot"]["time_zone"] == want_zone
    assert p["slot"]["job_name"] == slotname(MISSED)
    assert p["slot"]["local"] == annotation(MISSED, zone)  # what the controller writes on its Job for 11:40
    assert res.job is not None and res.job["metadata"]["annotations"][SCHEDULED_TS] == annotation(MISSED, zone)
    # the run time it expects: the median of what the successful Jobs ran (status and the bundle say the same)
    done = [r.seconds for r in RUNS if r.seconds is not None and r.outcome is None]
    assert p["end"]["expected_seconds"] == statistics.median(done)
    assert p["end"]["expected_seconds"] == statistics.median(
        j["duration_seconds"] for j in status["jobs"] if j["outcome"] == "Complete")
    assert p["end"]["expected_seconds"] == statistics.median(
        j["duration_seconds"] for j in b["jobs"] if j["outcome"] == "Complete")
    assert cluster.patches == []  # a dry run

    # -- explain cronjob/cj: the zone and policy it states, the slot it names as the controller would -----
    e = explanation_doc(explain_object(cj, after=None, now=NOW))
    assert (e["timeZone"], e["zone"], e["controller"]["concurrencyPolicy"]) == (want_zone, zone or "UTC", want_policy)
    assert e["controller"]["mostRecent"] == z(NOW)  # the */10 slot at noon
    assert e["controller"]["scheduledTimestamp"] == annotation(NOW, zone)


def test_a_schedule_with_a_zone_prefix_is_shown_in_that_zone_by_status_and_the_plan_as_by_history(
        tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    # an older CronJob may carry its zone as a CRON_TZ= prefix (the API server refuses one on create since
    # 1.27; docs/SEMANTICS.md §1). Before: history, the bundle, explain and the runbook said Asia/Kolkata;
    # status and run-manual's plan said "time zone: none (the controller's zone, normally UTC)" and showed
    # every time in UTC alone, the predictions' words too
    from cronctl.cli.env import Environment
    from cronctl.cli.status import print_status
    from cronctl.runbooks import runbook_context

    cj = builders.cronjob("CRON_TZ=Asia/Kolkata */10 * * * *", created=T(9, 0), last=T(11, 50),
                          resource_version="5", containers=[{"name": "c", "image": "i"}])
    jobs = [job(slotname(T(11, 50)), created=T(11, 50, 2), done=T(11, 51), annotations={SCHEDULED_TS: z(T(11, 50))})]
    words = "Asia/Kolkata (from the TZ= prefix in the schedule, which wins over spec.timeZone)"

    (h,) = from_cluster(FakeCluster(cj, jobs), "cj", all_namespaces=False, now=NOW,  # type: ignore[arg-type]
                        opts=HistoryOptions(now=NOW))[0]
    assert (h["time_zone"], h["zone"]) == (None, "Asia/Kolkata")
    doc = build_bundle(collect(FakeCluster(cj, jobs), ["cj"], now=NOW, collected_at=NOW, logs=False),  # type: ignore[arg-type]
                       ["cj"], BundleOptions(now=NOW)).doc
    assert doc["cronjobs"][0]["schedule"]["zone"] == "Asia/Kolkata"
    assert explanation_doc(explain_object(cj, after=None, now=NOW))["zone"] == "Asia/Kolkata"
    assert runbook_context(cj, NOW)["zone"] == "Asia/Kolkata"

    st = collect_status(FakeCluster(cj, jobs), "cj", NOW)  # type: ignore[arg-type]
    s = status_doc(st)
    assert s["time_zone"] is None  # -o json: spec.timeZone as written
    assert st.view.zone == "Asia/Kolkata" and st.view.zone_words == words
    # 12:00 UTC is 17:30 in Kolkata (+05:30): the controller's next move in the zone the schedule runs in
    assert "2026-12-02T17:30:00+05:30 (2026-12-02T12:00:00Z)" in s["controller_next"]["text"]
    print_status(Environment(), st)
    text = " ".join(capsys.readouterr().out.split())
    assert "time zone " + words in text
    assert "2026-12-02 17:20 IST (11:50 UTC)" in text  # last schedule, 11:50 UTC
    assert "none (the controller" not in text

    shown = QuietReporter()
    res = run_manual(FakeCluster(cj, jobs, clock=FakeClock()),  # type: ignore[arg-type]
                     RunOptions(cronjob="cj", occurrence=MISSED, dry_run=True, yes=True, run_dir=str(tmp_path)),
                     FakeClock(), shown)
    assert f"  time zone: {words}" in shown.lines
    assert any(line.startswith("  next runs: 2026-12-02 17:40 IST (12:10 UTC)") for line in shown.lines)
    # the Job's annotation follows spec.timeZone alone (the controller's rule): UTC here
    assert res.record["plan"]["slot"]["local"] == z(MISSED) and res.record["plan"]["time_zone"] is None
