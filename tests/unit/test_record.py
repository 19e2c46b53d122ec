"""The recorder's handling of objects a real API server never serves (it is tested against the real
control plane in tests/cluster/test_ledger_live.py and test_ledger_reliability.py): a Job without a
uid, an event with garbage times. The cluster here is a fake for exactly that reason, and serves
only what `cronctl record --once` asks for."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from builders import T, container_status, cronjob, pod, scheduled, terminated
from cronctl.ledger.store import open_ledger
from cronctl.procedure.record import Recorder, RecordOptions
from fake_cluster import FakeCluster


class _Clock:
    def now(self) -> datetime:
        return T(10, 0)

    def monotonic(self) -> float:
        return 0.0

    def sleep(self, s: float) -> None:
        pass


def test_an_object_the_recorder_cannot_key_is_one_line_and_skipped(tmp_path: Any) -> None:
    bad = scheduled(T(9, 1))
    del bad["metadata"]["uid"]
    weird_event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e", "namespace": "ns", "uid": "e1"},
                   "involvedObject": {"kind": "CronJob", "name": "cj"}, "reason": "SuccessfulCreate",
                   "firstTimestamp": "not a time", "lastTimestamp": 12}
    served = FakeCluster(cronjob(), [bad, scheduled(T(9, 2))], events=[weird_event], resource_version="7")
    lines: list[str] = []
    url = f"sqlite:///{tmp_path / 'l.sqlite'}"
    led = open_ledger(url)
    try:
        rec = Recorder(served, led, RecordOptions(cluster_name="c", namespaces=("ns",), keep=None, once=True), _Clock(),
                       lines.append)
        stats = rec.run()
        with led.reading() as r:
            ev = r.evidence("c", namespace="ns", name="cj", since=None)
            cursors = r.cursors("c")
    finally:
        led.close()
    assert stats.skipped == 1
    assert [ln for ln in lines if "skipped" in ln] == [f"record: skipped job ns/{bad['metadata']['name']}: job "
                                                       f"{bad['metadata']['name']} has no uid"]
    assert [j["metadata"]["name"] for j in ev.jobs] == [scheduled(T(9, 2))["metadata"]["name"]]
    assert [e["reason"] for e in ev.events] == ["SuccessfulCreate"]  # kept, its times absent
    assert cursors == {("cronjobs", "ns"): "7", ("jobs", "ns"): "7", ("events", "ns"): "7", ("pods", "ns"): "7"}


def test_log_bytes_0_reads_no_log_but_still_the_pods(tmp_path: Any) -> None:
    done = scheduled(T(9, 1))  # finished: its pods are read once
    failed = pod("p1", namespace="ns", statuses=[container_status(state=terminated(3, "Error",
                                                                            startedAt="2026-12-02T09:01:05Z"))])
    served = FakeCluster(cronjob(), [done], pods=[failed], resource_version="7")  # no logs: a read fails
    url = f"sqlite:///{tmp_path / 'l.sqlite'}"
    led = open_ledger(url)
    try:
        rec = Recorder(served, led, RecordOptions(cluster_name="c", namespaces=("ns",), keep=None, once=True,
                                                  log_bytes=0), _Clock(), lambda _l: None)
        stats = rec.run()
        with led.reading() as r:
            assert r.logged_jobs("c") == set()
        from sqlalchemy import select

        from cronctl.ledger import schema

        with led.reading() as r:
            row = r.conn.execute(select(schema.jobs.c.first_running, schema.jobs.c.exit_codes)).one()
    finally:
        led.close()
    assert stats.logs == 0
    assert row.first_running == T(9, 1, 5) and row.exit_codes[0]["exit_code"] == 3


def test_slots_are_judged_only_once_every_list_or_resumed_watch_caught_up(tmp_path: Any) -> None:
    # a Job the controller made while the recorder was down must be written before its slot is
    # judged, or the slot would be called lost: judging (and /readyz) wait for every list
    import time

    class Moving(_Clock):
        at = T(9, 0, 30)  # the recorder first sees the CronJob here; 9:01 ran while it listed

        def now(self) -> datetime:
            return self.at

    clock = Moving()
    served = FakeCluster(cronjob(), [scheduled(T(9, 1))], resource_version="7")
    led = open_ledger(f"sqlite:///{tmp_path / 'l.sqlite'}")
    try:
        rec = Recorder(served, led, RecordOptions(cluster_name="c", namespaces=("ns",), keep=None), clock,
                       lambda _l: None)
        rec.reconciler.load()
        rec._list("cronjobs", "ns")
        rec._write(rec._drain(0))
        assert rec.ready() == (False, "syncing: 3 of 4 lists or watches not caught up")
        clock.at = T(9, 2, 30)  # 9:01 closed (its Job ended 9:01:21)
        rec._judge()
        assert rec.reconciler.closed == 0  # the CronJob is known, its Jobs not yet: nothing judged
        rec._list("jobs", "ns")
        rec._list("events", "ns")
        rec._resumed[("pods", "ns")] = time.monotonic() - 10  # resumed from its cursor 10 s ago, queue written
        while not rec.queue.empty():
            rec._write(rec._drain(0))
        assert rec.ready() == (True, "ok: recording")
        rec._judge()
        assert rec.reconciler.closed == 1
        with led.reading() as r:
            from sqlalchemy import select

            from cronctl.ledger import schema

            verdicts = [v for (v,) in r.conn.execute(select(schema.slots.c.verdict))]
    finally:
        led.close()
    assert verdicts == ["ran"]
