"""The recorder's reconciler and metrics: when a slot is closed, each slot judged and counted once
(across a restart too), and the /metrics text read back by prometheus_client's own parser.

The reconciler reads and writes a real SQLite ledger; the recorder around it is tested against the
real control plane (tests/cluster/test_prometheus_e2e.py). And the status overview, which judges with the
Jobs only the ledger kept."""

from __future__ import annotations

import urllib.request
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from builders import T, cronjob, job, scheduled, slotname
from cronctl import history
from cronctl.ledger.store import open_ledger
from cronctl.procedure.metrics import Metrics, parse_address, serve
from cronctl.procedure.reconcile import CLOSED_VERDICTS, Reconciler


def _row(slot: Any, verdict: str, details: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"slot": slot.strftime("%Y-%m-%dT%H:%M:%SZ"), "verdict": verdict, "job_details": details or []}


def _detail(completed: Any, outcome: str = "Complete") -> dict[str, Any]:
    return {"completed": completed.strftime("%Y-%m-%dT%H:%M:%SZ") if completed else None, "outcome": outcome}


# --- when a slot closes (pure) -------------------------------------------------------------------

def test_a_slot_with_finished_jobs_closes_when_the_last_completed() -> None:
    row = _row(T(9, 1), "duplicate", [_detail(T(9, 1, 30)), _detail(T(9, 4, 0), "Failed")])
    assert history.closes_at(row, T(9, 2), None) == T(9, 4, 0)


def test_a_slot_without_a_job_closes_at_the_next_slot_or_its_deadline_plus_the_slack() -> None:
    row = _row(T(9, 1), "missed")
    assert history.closes_at(row, T(9, 11), None) == T(9, 11) + history.CLOSE_SLACK
    assert history.closes_at(row, T(9, 11), 30) == T(9, 1, 30) + history.CLOSE_SLACK
    assert history.closes_at(row, T(9, 11), 3600) == T(9, 11) + history.CLOSE_SLACK  # never after the next
    assert history.closes_at(row, None, None) is None


def test_running_slots_never_close_and_a_removed_wall_time_closes_at_once() -> None:
    assert history.closes_at(_row(T(9, 1), "running", [_detail(None, "running")]), T(9, 2), None) is None
    assert history.closes_at(_row(T(9, 1), "dst-skipped"), T(9, 2), None) == T(9, 1)


# --- the reconciler over a real SQLite ledger -----------------------------------------------------

def _ledger(tmp_path: Path, objs: list[dict[str, Any]], seen: Any = T(9, 0)) -> Any:
    led = open_ledger(f"sqlite:///{tmp_path / 'l.sqlite'}")
    with led.writing() as w:
        for o in objs:
            (w.cronjob if o.get("kind") == "CronJob" else w.job)("c", o, seen)
    return led


def _verdicts(led: Any) -> dict[str, str]:
    from sqlalchemy import select

    from cronctl.ledger import schema

    with led.reading() as r:
        rows = r.conn.execute(select(schema.slots.c.slot, schema.slots.c.verdict, schema.slots.c.jobs)
                              .order_by(schema.slots.c.slot)).all()
    return {s.strftime("%H:%M"): f"{v}/{n}" for s, v, n in rows}


def test_each_slot_is_closed_once_with_its_verdict_row_and_counted(tmp_path: Path) -> None:
    cj = cronjob(created=T(8, 0))
    led = _ledger(tmp_path, [cj, scheduled(T(9, 1)), scheduled(T(9, 3))])
    m = Metrics(None)
    rec = Reconciler("c", led, m)
    try:
        rec.load()
        rec.cronjob(cj, T(9, 0, 30), deleted=False)
        assert rec.tick(T(9, 4, 30)) == 3
        assert rec.tick(T(9, 4, 40)) == 0  # judged again: nothing new
        # 9:04 has no Job yet and its next slot has not come: open
        assert _verdicts(led) == {"09:01": "ran/1", "09:02": "missed/0", "09:03": "ran/1"}
        assert m.value("ns", "cj", "slots", verdict="ran") == 2
        assert m.value("ns", "cj", "slots", verdict="missed") == 1
        assert m.value("ns", "cj", "slots", verdict="skipped-forbid") == 0  # every verdict exists at 0
        assert m.value("ns", "cj", "duration") == 2  # the two runs' durations
        assert m.value("ns", "cj", "last_success") == (T(9, 3, 21)).timestamp()
        # a restart resumes after 9:03: 9:04 and 9:05 lost, nothing counted twice
        m2 = Metrics(None)
        rec2 = Reconciler("c", led, m2)
        rec2.load()
        rec2.cronjob(cj, T(9, 6, 30), deleted=False)
        assert rec2.tick(T(9, 6, 30)) == 2
        assert m2.value("ns", "cj", "slots", verdict="missed") == 2
        assert m2.value("ns", "cj", "slots", verdict="ran") == 0
        assert m2.value("ns", "cj", "last_success") == T(9, 3, 21).timestamp()  # from the ledger
        assert _verdicts(led)["09:05"] == "missed/0"
    finally:
        led.close()


def test_a_new_cronjob_is_judged_from_when_the_ledger_first_saw_it(tmp_path: Path) -> None:
    cj = cronjob(created=T(8, 0))  # created 8:00; the recorder first saw it at 9:00: slots before are not called lost
    led = _ledger(tmp_path, [cj, scheduled(T(9, 1))])
    rec = Reconciler("c", led, None)
    try:
        rec.load()
        rec.cronjob(cj, T(9, 0), deleted=False)
        rec.tick(T(9, 2, 0))
        assert _verdicts(led) == {"09:01": "ran/1"}
    finally:
        led.close()


def test_a_manual_job_beside_the_scheduled_one_is_counted_and_shown_while_it_runs(tmp_path: Path) -> None:
    cj = cronjob(created=T(8, 0))
    sched = scheduled(T(9, 1), took=120)
    by_hand = job("cj-by-hand", created=T(9, 1, 30), done=T(9, 2, 30), manual=True)
    led = _ledger(tmp_path, [cj, sched, by_hand])
    m = Metrics("prod")
    rec = Reconciler("c", led, m)
    try:
        rec.load()
        rec.cronjob(cj, T(9, 0), deleted=False)
        running = [dict(sched, status={"startTime": "2026-12-02T09:01:01Z"}), dict(by_hand, status={})]
        for j in running:
            rec.job(j, T(9, 1, 40), deleted=False)
        assert m.value("ns", "cj", "beside") == 1 and m.value("ns", "cj", "running") == 2
        for j in (sched, by_hand):
            rec.job(j, T(9, 3, 10), deleted=False)
        assert m.value("ns", "cj", "beside") == 0
        rec.tick(T(9, 3, 10))
        assert m.value("ns", "cj", "beside_manual") == 1
        text = m.render().decode()
        assert 'cronctl_slots_beside_manual_total{cluster="prod",namespace="ns",cronjob="cj"} 1.0' in text
    finally:
        led.close()


def test_a_deleted_cronjob_s_series_go_away(tmp_path: Path) -> None:
    cj = cronjob(created=T(8, 0))
    led = _ledger(tmp_path, [cj])
    m = Metrics(None)
    rec = Reconciler("c", led, m)
    try:
        rec.load()
        rec.cronjob(cj, T(9, 0), deleted=False)
        assert "cronjob=\"cj\"" in m.render().decode()
        rec.cronjob(cj, T(9, 1), deleted=True)
        assert "cronjob=\"cj\"" not in m.render().decode()
    finally:
        led.close()


# --- the text exposition --------------------------------------------------------------------------

def test_the_exposition_parses_with_prometheus_client_and_escapes_label_values() -> None:
    m = Metrics('prod "eu"\\west\nx')
    m.known("shop", "invoices", CLOSED_VERDICTS)
    m.slot("shop", "invoices", "missed", schedule_lag=None, duration=None, beside_manual=False)
    for lag in (0.5, 3, 3, 4000):
        m.slot("shop", "invoices", "ran", schedule_lag=lag, duration=lag * 2, beside_manual=False)
    m.started("shop", "invoices", 2.0)
    m.cronjob("shop", "invoices", {"next_slot": 1.8e9, "interval": 600.0, "suspended": 0})
    fams = {f.name: f for f in text_string_to_metric_families(m.render().decode())}
    cluster = 'prod "eu"\\west\nx'
    slots = {s.labels["verdict"]: s.value for s in fams["cronctl_slots"].samples}
    assert slots["missed"] == 1 and slots["ran"] == 4 and slots["evidence-gone"] == 0
    assert {s.labels["cluster"] for s in fams["cronctl_slots"].samples} == {cluster}
    lag = {(s.name, s.labels.get("le")): s.value for s in fams["cronctl_slot_schedule_lag_seconds"].samples}
    # cumulative buckets, computed here from the four observations and the documented buckets
    assert lag[("cronctl_slot_schedule_lag_seconds_bucket", "1.0")] == 1
    assert lag[("cronctl_slot_schedule_lag_seconds_bucket", "5.0")] == 3
    assert lag[("cronctl_slot_schedule_lag_seconds_bucket", "3600.0")] == 3
    assert lag[("cronctl_slot_schedule_lag_seconds_bucket", "+Inf")] == 4
    assert lag[("cronctl_slot_schedule_lag_seconds_count", None)] == 4
    assert lag[("cronctl_slot_schedule_lag_seconds_sum", None)] == 4006.5
    assert fams["cronctl_cronjob_interval_seconds"].samples[0].value == 600
    assert fams["cronctl_slot_start_lag_seconds"].type == "histogram"
    assert fams["cronctl_recorder_lag_seconds"].type == "gauge"  # the recorder's own, from prometheus_client


def test_the_server_answers_metrics_healthz_and_readyz() -> None:
    m = Metrics(None)
    m.known("shop", "invoices", ["ran"])
    state = {"ready": False}
    server = serve(m, "127.0.0.1", 0, lambda: (True, "ok: alive"),
                   lambda: (state["ready"], "ok" if state["ready"] else "standby"))
    base = f"http://127.0.0.1:{server.server_port}"
    try:
        with urllib.request.urlopen(base + "/metrics") as r:
            assert 'cronctl_slots_total{namespace="shop",cronjob="invoices",verdict="ran"} 0.0' in r.read().decode()
        with urllib.request.urlopen(base + "/healthz") as r:
            assert r.status == 200
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(base + "/readyz")
        assert e.value.code == 503 and e.value.read().decode().strip() == "standby"
        state["ready"] = True
        with urllib.request.urlopen(base + "/readyz") as r:
            assert r.status == 200
    finally:
        server.shutdown()


@pytest.mark.parametrize("text", ["9108", "host:", "a:99999", "bad host:80", "h:-1"])
def test_a_bad_metrics_address_is_one_line(text: str) -> None:
    from cronctl.errors import BadInput

    with pytest.raises(BadInput) as e:
        parse_address(text)
    assert "\n" not in e.value.message and "--metrics-address" in e.value.message


def test_addresses_that_are_fine() -> None:
    assert parse_address("127.0.0.1:9108") == ("127.0.0.1", 9108)
    assert parse_address(":0") == ("0.0.0.0", 0)
    assert parse_address("[::1]:9108") == ("::1", 9108)


def test_slot_names_and_jobs_never_become_labels() -> None:
    m = Metrics(None)
    m.known("ns", "cj", CLOSED_VERDICTS)
    m.slot("ns", "cj", "ran", schedule_lag=1, duration=1, beside_manual=True)
    fams = list(text_string_to_metric_families(m.render().decode()))
    labels = {k for f in fams for s in f.samples for k in s.labels}
    assert labels <= {"namespace", "cronjob", "verdict", "le", "resource", "ledger_backend", "version"}


# --- the status overview with the ledger -------------------------------------------------------

def test_the_status_overview_judges_with_the_jobs_only_the_ledger_kept(tmp_path: Path) -> None:
    from fake_cluster import FakeCluster

    from cronctl.procedure.status import collect_overview

    cj = cronjob(policy="Forbid", created=T(9, 0))
    # 9:01 ran until 9:03:30, so Forbid refused 9:02 and held 9:03 until then; the cluster deleted both
    long = job(slotname(T(9, 1)), slot=T(9, 1), created=T(9, 1, 1), done=T(9, 3, 30))
    late = job(slotname(T(9, 3)), slot=T(9, 3), created=T(9, 3, 31), done=T(9, 3, 50))
    led = _ledger(tmp_path, [{**cj, "kind": "CronJob"}, long, late])
    led.close()
    url = f"sqlite:///{tmp_path / 'l.sqlite'}"
    # the overview lists the namespace's CronJobs: this one
    kept = collect_overview(FakeCluster(cj, [], listed=True), all_namespaces=False, now=T(9, 4, 30),  # type: ignore[arg-type]
                            ledger=(url, "c"))
    bare = collect_overview(FakeCluster(cj, [], listed=True), all_namespaces=False, now=T(9, 4, 30))  # type: ignore[arg-type]
    (row,) = kept.rows
    assert row.lost == 1  # 9:02, skipped by Forbid: the Job that held it is known from the ledger only
    assert row.last_job is not None and row.last_job.name == slotname(T(9, 3))
    assert bare.rows[0].last_job is None


# --- history reads the recorder's closed slots ------------------------------------------------------

def test_history_over_the_ledger_reads_the_closed_slots_and_judges_the_same(tmp_path: Path) -> None:
    from cronctl.history import Options
    from cronctl.ledger.store import evidence_for
    from cronctl.procedure.history import from_ledger, judge_all

    cj = cronjob(policy="Forbid", created=T(8, 0))
    cj["kind"] = "CronJob"
    # 9:01 ran long (Forbid skips 9:02, holds 9:03), 9:04 ran, 9:05 missed, 9:06 twice, 9:07 runs on
    objs = [cj, job(slotname(T(9, 1)), slot=T(9, 1), created=T(9, 1, 1), done=T(9, 3, 30)),
            job(slotname(T(9, 3)), slot=T(9, 3), created=T(9, 3, 31), done=T(9, 3, 50)), scheduled(T(9, 4)),
            scheduled(T(9, 6)), job("cj-again", created=T(9, 6, 5), done=T(9, 6, 40), occurrence=T(9, 6)),
            job(slotname(T(9, 7)), slot=T(9, 7), created=T(9, 7, 1))]
    led = _ledger(tmp_path, objs, seen=T(9, 0, 30))
    try:
        rec = Reconciler("c", led, None)
        rec.load()
        rec.cronjob(cj, T(9, 0, 30), deleted=False)
        assert rec.tick(T(9, 7, 30)) == 6  # 9:01 .. 9:06 closed; 9:07 runs
    finally:
        led.close()
    url = f"sqlite:///{tmp_path / 'l.sqlite'}"
    opts = Options(now=T(9, 7, 30), since=T(9, 0, 30))
    (got,), missing = from_ledger(url, None, "cj", cluster_name="c", namespace="ns", all_namespaces=False,
                                  opts=opts)
    ev = evidence_for(url, "c", namespace="ns", name="cj", since=None)
    from dataclasses import replace
    (full,) = judge_all(ev.cronjobs, ev.jobs, ev.events, replace(opts, suspensions=ev.suspensions))
    assert missing == []
    assert [(r["slot"], r["verdict"]) for r in got["slots"]] == [(r["slot"], r["verdict"]) for r in full["slots"]]
    assert got["slots"] == full["slots"]  # the kept rows are the rows the judge gives, details and reasons too
    assert [r["verdict"] for r in got["slots"]] == ["ran", "skipped-forbid", "ran-late", "ran", "missed",
                                                    "duplicate", "running", "due"]
    assert got["counts"] == full["counts"]
    assert got["notes"][0].startswith("6 slot(s) before 2026-12-02T09:07:00Z as cronctl record judged them")


# --- a failed run is its own fact (issue 34) ------------------------------------------------------

def test_a_slot_whose_run_failed_is_counted_in_the_failed_series_whatever_its_verdict(tmp_path: Path) -> None:
    cj = cronjob(created=T(8, 0))
    failed = scheduled(T(9, 1), outcome="Failed", why="BackoffLimitExceeded")
    led = _ledger(tmp_path, [cj, failed, scheduled(T(9, 2)), scheduled(T(9, 3), outcome="Failed", why="DeadlineExceeded")])
    m = Metrics(None)
    rec = Reconciler("c", led, m)
    try:
        rec.load()
        rec.cronjob(cj, T(9, 0, 30), deleted=False)
        assert m.value("ns", "cj", "failed") == 0  # exported at 0 before any slot closed
        rec.tick(T(9, 4, 30))
        assert m.value("ns", "cj", "slots", verdict="ran") == 3  # the verdict: each Job was made on time
        assert m.value("ns", "cj", "failed") == 2  # the outcome: two of them failed
        text = m.render().decode()
        assert 'cronctl_slots_failed_total{namespace="ns",cronjob="cj"} 2.0' in text
        fams = {f.name: f for f in text_string_to_metric_families(text)}
        assert fams["cronctl_slots_failed"].type == "counter"
        assert {s.value for s in fams["cronctl_slots_failed"].samples} == {2.0}
        assert m.value("ns", "cj", "last_success") == T(9, 2, 21).timestamp()  # a failure is no success
    finally:
        led.close()


def test_a_row_kept_before_rows_had_an_outcome_reads_back_with_the_judge_s_outcome(tmp_path: Path) -> None:
    from sqlalchemy import select, update

    from cronctl.history import Options
    from cronctl.ledger import schema
    from cronctl.procedure.history import from_ledger

    cj = cronjob(created=T(8, 0))
    cj["kind"] = "CronJob"
    objs = [cj, scheduled(T(9, 1), outcome="Failed", why="BackoffLimitExceeded"), scheduled(T(9, 2))]
    led = _ledger(tmp_path, objs, seen=T(9, 0, 30))
    try:
        rec = Reconciler("c", led, None)
        rec.load()
        rec.cronjob(cj, T(9, 0, 30), deleted=False)
        assert rec.tick(T(9, 4, 30)) == 3  # 9:01 failed, 9:02 succeeded, 9:03 missed
        url = f"sqlite:///{tmp_path / 'l.sqlite'}"
        opts = Options(now=T(9, 4, 30), since=T(9, 0, 30))
        (judged,), _missing = from_ledger(url, None, "cj", cluster_name="c", namespace="ns", all_namespaces=False,
                                          opts=opts)
        # the rows as an older cronctl kept them: without outcome and failure_reason
        with led.writing() as w:
            for sid, row in w.conn.execute(select(schema.slots.c.id, schema.slots.c.judged)).all():
                old = {k: v for k, v in row.items() if k not in ("outcome", "failure_reason")}
                w.conn.execute(update(schema.slots).where(schema.slots.c.id == sid).values(judged=old))
        with led.reading() as r:
            assert all("outcome" not in row for row in r.conn.execute(select(schema.slots.c.judged)).scalars())
    finally:
        led.close()
    (got,), _missing = from_ledger(url, None, "cj", cluster_name="c", namespace="ns", all_namespaces=False, opts=opts)
    assert [(r["verdict"], r["outcome"], r["failure_reason"]) for r in got["slots"][:3]] == [
        ("ran", "failed", "BackoffLimitExceeded"), ("ran", "succeeded", None), ("missed", "none", None)]
    assert got["notes"][0].startswith("3 slot(s) before")  # the three rows are the ledger's
    assert got["slots"] == judged["slots"] and list(got["slots"][0]) == list(judged["slots"][0])  # keys in order too
    assert got["outcome_counts"]["failed"] == 1


def test_claim_effects_and_conflicts_are_labelled_by_workflow_never_by_occurrence(tmp_path: Path) -> None:
    from datetime import timedelta

    from cronctl.ledger import claims, claimstore
    from cronctl.ledger.store import open_ledger

    led = open_ledger(f"sqlite:///{tmp_path / 'l.sqlite'}")
    try:
        now = T(9, 0)
        lease = timedelta(seconds=60)
        who = claimstore.Claimer(owner="job ns/a-1")
        done = claimstore.claim(led, "ns/bill", T(8, 0), who, lease, at=now)
        claimstore.end(led, "ns/bill", T(8, 0), done.decision.token, claims.DONE, exit_code=0, output_ref=None,
                       last_error=None, at=now)
        claimstore.claim(led, "ns/bill", T(8, 0), who, lease, at=now)  # a duplicate: refused
        claimstore.claim(led, "ns/bill", T(8, 1), who, lease, at=now - timedelta(hours=1))  # its holder vanished
        claimstore.claim(led, "ns/mail", T(8, 2), who, lease, at=now)  # running
        m = Metrics(None)
        m.claims(*claimstore.summary(led, now))
    finally:
        led.close()
    fams = {f.name: f for f in text_string_to_metric_families(m.render().decode())}
    got = {(s.labels["workflow"], s.labels["effect"]): s.value for s in fams["cronctl_claim_occurrences"].samples}
    assert got == {("ns/bill", "refused-duplicate"): 1, ("ns/bill", "ambiguous"): 1, ("ns/mail", "running"): 1}
    assert {s.labels["workflow"]: s.value for s in fams["cronctl_claim_conflicts"].samples} == {"ns/bill": 1,
                                                                                              "ns/mail": 0}
    labels = {k for name in ("cronctl_claim_occurrences", "cronctl_claim_conflicts") for s in fams[name].samples
              for k in s.labels}
    assert labels == {"workflow", "effect"}  # no occurrence, no Job
