"""The occurrence ledger (cronctl/ledger): what is kept of each object, idempotent writes on SQLite
and on a real PostgreSQL (the ``ledger_url`` fixture: scripts/postgres), the migration against the
schema, reading back as API objects, retention, and the judge with the ledger's exact suspend spans.

The recorder against the real control plane: tests/cluster/test_ledger_live.py."""

from __future__ import annotations

import os
import stat
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from builders import UID, T, cronjob, event, job, scheduled, slotname, z
from cronctl.errors import BadInput, LedgerError
from cronctl.history import Options, slot_history
from cronctl.ledger import facts
from cronctl.ledger.store import open_ledger, resolve
from test_history import verdicts


def _count(url: str, table: str) -> int:
    from sqlalchemy import func, select

    from cronctl.ledger import schema

    led = open_ledger(url)
    try:
        with led.reading() as r:
            return int(r.conn.execute(select(func.count()).select_from(schema.metadata.tables[table])).scalar())
    finally:
        led.close()


def _write(url: str, cj: dict[str, Any], jobs: list[dict[str, Any]], events: list[dict[str, Any]],
           cluster: str = "c1") -> None:
    led = open_ledger(url)
    try:
        with led.writing() as w:
            w.cronjob(cluster, cj, T(10, 0))
            for j in jobs:
                w.job(cluster, j, T(10, 0))
            for e in events:
                w.event(cluster, e)
    finally:
        led.close()


def _uid_events(evs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for i, e in enumerate(evs):
        e["metadata"]["uid"] = f"ev-{i}"
    return evs


# --- what is kept ------------------------------------------------------------------------------

def test_a_jobs_slot_is_the_controllers_a_cronctl_occurrence_or_a_slot_named_manual_run() -> None:
    assert facts.job_slot(scheduled(T(9, 5)), "cj") == T(9, 5)
    assert facts.job_slot(job("m1", created=T(9, 7, 30), manual=True, occurrence=T(9, 7)), "cj") == T(9, 7)
    assert facts.job_slot(job(slotname(T(9, 8)), created=T(9, 8, 40), manual=True), "cj") == T(9, 8)
    assert facts.job_slot(job("by-hand", created=T(9, 9), manual=True), "cj") is None


def test_the_config_fingerprint_changes_with_a_verdict_field_only() -> None:
    a = facts.cronjob_config(cronjob())
    status_only = cronjob(last=T(9, 30))
    status_only["metadata"]["resourceVersion"] = "99"
    assert facts.cronjob_config(status_only).fingerprint == a.fingerprint
    for changed in (cronjob("*/2 * * * *"), cronjob(tz="Europe/Berlin"), cronjob(policy="Forbid"),
                    cronjob(deadline=30), cronjob(suspend=True), cronjob(ok_limit=1)):
        assert facts.cronjob_config(changed).fingerprint != a.fingerprint


def test_suspend_spans_run_from_the_write_to_the_unsuspend() -> None:
    on = facts.cronjob_config(cronjob(suspend=True, suspend_written=T(9, 10)))
    off = facts.cronjob_config(cronjob(suspend=False, suspend_written=T(9, 20)))
    spans = facts.suspend_spans([facts.cronjob_config(cronjob()), on, off, on],
                                [T(9, 0), T(9, 11), T(9, 21), T(9, 40)])
    assert [(s, e) for s, e, _ in spans] == [(T(9, 10), T(9, 20)), (T(9, 40), None)]
    assert "kubectl-patch" in spans[0][2] and "ledger" in spans[0][2]


def test_stored_objects_are_masked_and_a_huge_template_is_dropped() -> None:
    j = scheduled(T(9, 5))
    j["spec"] = {"template": {"spec": {"containers": [{"name": "c", "env": [
        {"name": "DB_PASSWORD", "value": "s3cr3t-value-123"}, {"name": "BLOB", "value": "x" * 70_000}]}]}}}
    kept = facts.stored_object(j)
    assert "s3cr3t-value-123" not in str(kept)
    assert "template" not in kept["spec"]  # larger than MAX_OBJECT_CHARS: the facts stay in the columns


# --- the store ---------------------------------------------------------------------------------

def test_the_migrated_database_is_exactly_the_schema(ledger_url: str) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from cronctl.ledger import schema

    led = open_ledger(ledger_url)
    try:
        with led.engine.connect() as c:
            assert compare_metadata(MigrationContext.configure(c), schema.metadata) == []
    finally:
        led.close()


def test_the_store_knows_the_newest_migration_and_an_older_ledger_is_migrated(tmp_path: Any) -> None:
    from alembic.config import Config
    from alembic.script import ScriptDirectory
    from sqlalchemy import text

    from cronctl.ledger import store

    cfg = Config()
    cfg.set_main_option("script_location", str(Path(store.__file__).parent / "migrations"))
    assert store.HEAD == ScriptDirectory.from_config(cfg).get_current_head()
    url = f"sqlite:///{tmp_path / 'old.sqlite'}"
    led = open_ledger(url)
    with led.engine.begin() as c:  # a ledger of the previous release: 0001, no verdict columns
        c.execute(text("DROP INDEX ix_slots_closed"))
        c.execute(text("DROP INDEX ix_events_involved"))  # and without 0003's indexes
        c.execute(text("DROP INDEX ix_events_involved_name"))
        c.execute(text("DROP TABLE claims"))  # and without 0006's claims
        for col in ("judged_rules", "judged", "closed_at", "reason", "verdict"):
            c.execute(text(f"ALTER TABLE slots DROP COLUMN {col}"))
        c.execute(text("UPDATE alembic_version SET version_num = '0001'"))
    led.close()
    led = open_ledger(url)
    try:
        with led.engine.connect() as c:
            assert c.execute(text("SELECT version_num FROM alembic_version")).scalar() == store.HEAD
            assert {"judged", "judged_rules"} <= {r[1] for r in c.execute(text("PRAGMA table_info(slots)"))}
            assert {"ix_events_involved", "ix_events_involved_name"} <= {r[1] for r in c.execute(
                text("PRAGMA index_list(events)"))}
            assert c.execute(text("SELECT count(*) FROM claims")).scalar() == 0
    finally:
        led.close()


def test_writing_the_same_objects_twice_changes_nothing(ledger_url: str) -> None:
    cj = cronjob(policy="Forbid")
    jobs = [scheduled(T(9, 1)), scheduled(T(9, 2)), job("m", created=T(9, 3, 30), manual=True, occurrence=T(9, 3),
                                                         done=T(9, 4))]
    evs = _uid_events([event("SuccessfulCreate", "Created job cj-1", T(9, 1)),
                       event("JobAlreadyActive", "Not starting job because prior execution is running", T(9, 5)),
                       event("Scheduled", "pod bound", T(9, 1), kind="Pod", name="p")])  # not kept: a Pod's
    for _ in range(2):
        _write(ledger_url, cj, jobs, evs)
    assert {t: _count(ledger_url, t) for t in ("cronjobs", "cronjob_configs", "jobs", "slots", "events")} == {
        "cronjobs": 1, "cronjob_configs": 1, "jobs": 3, "slots": 3, "events": 2}
    # a new config is a new row; the same again is not
    for _ in range(2):
        _write(ledger_url, {**cronjob(policy="Forbid", suspend=True),
                            "metadata": {**cj["metadata"], "resourceVersion": "2"}}, [], [])
    assert _count(ledger_url, "cronjob_configs") == 2


def test_a_second_job_for_one_slot_is_counted_on_the_slot_row(ledger_url: str) -> None:
    from sqlalchemy import select

    from cronctl.ledger import schema

    _write(ledger_url, cronjob(), [scheduled(T(9, 1)), job("m", created=T(9, 1, 30), manual=True,
                                                           occurrence=T(9, 1), done=T(9, 2))], [])
    led = open_ledger(ledger_url)
    try:
        with led.reading() as r:
            rows = list(r.conn.execute(select(schema.slots.c.slot, schema.slots.c.jobs, schema.slots.c.job_name)))
    finally:
        led.close()
    assert [(s, n, name) for s, n, name in rows] == [(T(9, 1), 2, slotname(T(9, 1)))]


def test_a_reader_gets_the_objects_back_marked_and_a_deleted_job_still_judged(ledger_url: str) -> None:
    cj = cronjob(ok_limit=1)
    jobs = [scheduled(T(9, m)) for m in (1, 2, 3)]
    _write(ledger_url, cj, jobs, [])
    led = open_ledger(ledger_url)
    try:
        with led.writing() as w:
            w.job("c1", jobs[0], T(9, 5), deleted=True)  # the history limit deleted it
        with led.reading() as r:
            ev = r.evidence("c1", namespace="ns", name="cj", since=None)
            assert r.evidence("other", namespace="ns", name="cj", since=None).jobs == []
    finally:
        led.close()
    assert sorted(j["metadata"]["name"] for j in ev.jobs) == sorted(j["metadata"]["name"] for j in jobs)
    gone = next(j for j in ev.jobs if j["metadata"]["name"] == jobs[0]["metadata"]["name"])
    assert gone["metadata"]["annotations"]["cronctl.dev/ledger"].startswith("c1; deleted ")
    # the live cluster kept only the newest Job: the ledger gives the judge the other two
    live = [jobs[2]]
    h = slot_history(cj, facts.merge(live, ev.jobs), [], Options(now=T(9, 3, 30), since=T(9, 0, 30)))
    assert verdicts(h)["09:01"] == "ran" and verdicts(h)["09:02"] == "ran"
    sources = {r["slot"][11:16]: [d["source"] for d in r["job_details"]] for r in h["slots"]}
    assert sources["09:01"] == ["ledger"] and sources["09:03"] == ["cluster"]
    h_live = slot_history(cj, live, [], Options(now=T(9, 3, 30), since=T(9, 0, 30)))
    assert verdicts(h_live)["09:01"] != "ran"  # without the ledger the evidence is gone


def test_prune_deletes_only_what_ended_before_keep(ledger_url: str) -> None:
    _write(ledger_url, cronjob(), [scheduled(T(9, 1)), scheduled(T(9, 1, day=3))], [])
    led = open_ledger(ledger_url)
    try:
        with led.writing() as w:
            w.prune("c1", T(0, 0, day=3))
    finally:
        led.close()
    assert _count(ledger_url, "jobs") == 1 and _count(ledger_url, "slots") == 1


def test_log_tails_are_masked_and_kept_once(ledger_url: str) -> None:
    j = scheduled(T(9, 1))
    led = open_ledger(ledger_url)
    try:
        for _ in range(2):
            with led.writing() as w:
                w.job("c1", j, T(9, 2))  # the recorder writes the Job with its pods, then the logs
                w.log("c1", j, "p1", "main", "start\nAPI_TOKEN=abcdef0123456789abcdef\nend\n", False, T(9, 2))
        with led.reading() as r:
            assert r.logged_jobs("c1") == {j["metadata"]["uid"]}
        with led.writing() as w:
            w.job("c1", j, T(9, 3), deleted=True)
        with led.reading() as r:
            assert r.logged_jobs("c1") == set()  # a deleted Job is not loaded again at start
    finally:
        led.close()
    assert _count(ledger_url, "logs") == 1
    from sqlalchemy import create_engine, text

    from cronctl.ledger.store import resolve as res

    e = create_engine(res(ledger_url))
    with e.connect() as c:
        kept = c.execute(text("select text from logs")).scalar()
    e.dispose()
    assert "abcdef0123456789abcdef" not in kept and kept.startswith("start\n")


# --- opening ------------------------------------------------------------------------------------

def test_the_default_ledger_is_a_private_sqlite_file_under_xdg_state(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("CRONCTL_LEDGER", raising=False)
    led = open_ledger(None)
    led.close()
    f = tmp_path / "state" / "cronctl" / "ledger.sqlite"
    assert stat.S_IMODE(os.stat(f).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(f.parent).st_mode) == 0o700
    monkeypatch.setenv("CRONCTL_LEDGER", "postgresql://u:pw@db:5432/x")
    assert resolve(None) == "postgresql+psycopg://u:pw@db:5432/x"


def test_bad_ledgers_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="not a ledger URL"):
        resolve("mysql://u:pw@h/db")
    with pytest.raises(LedgerError, match="no ledger at"):
        open_ledger(str(tmp_path / "none.sqlite"), create=False)
    for create in (True, False):  # a reader too: a server it cannot reach is not a ledger "not ready yet"
        with pytest.raises(LedgerError, match="cannot open the ledger postgresql://") as e:
            open_ledger("postgresql://nobody:secretpw@127.0.0.1:1/none", create=create)
        assert "secretpw" not in e.value.message


# --- the judge with the ledger's suspend spans ---------------------------------------------------

def test_an_exact_recorded_suspension_replaces_the_bounded_guess() -> None:
    cj = cronjob(suspend=True)  # suspended now, and managedFields keeps no time of the write
    jobs = [scheduled(T(9, m)) for m in (1, 2, 3)]
    now = T(9, 8, 30)
    guess = slot_history(cj, jobs, [], Options(now=now, since=T(9, 0, 30)))
    # without the ledger: after the controller's last Job (09:03) the suspension may have begun
    assert "when is not recorded" in next(r for r in guess["slots"] if r["slot"][11:16] == "09:05")["reason"]
    spans = {UID: [(T(9, 6, 10), None, "spec.suspend set by kubectl-patch at 2026-12-02T09:06:10Z (recorded in the "
                                       "ledger)")]}
    h = slot_history(cj, jobs, [], Options(now=now, since=T(9, 0, 30), suspensions=spans))
    v = verdicts(h)
    assert v["09:07"] == "missed-suspended" and v["09:08"] == "missed-suspended"
    assert v["09:04"] == "missed" and v["09:05"] == "missed"  # before the recorded suspend: not suspended
    assert "recorded in the ledger" in next(r for r in h["slots"] if r["slot"][11:16] == "09:07")["reason"]


def test_an_ended_recorded_suspension_explains_its_slots() -> None:
    cj = cronjob()
    jobs = [scheduled(T(9, 1)), scheduled(T(9, 5))]
    spans = {UID: [(T(9, 1, 30), T(9, 4, 20), "spec.suspend set by argocd at 2026-12-02T09:01:30Z (recorded in the "
                                              "ledger)")]}
    h = slot_history(cj, jobs, [], Options(now=T(9, 5, 30), since=T(9, 0, 30), suspensions=spans))
    v = verdicts(h)
    assert [v["09:02"], v["09:03"], v["09:04"]] == ["missed-suspended"] * 3
    assert "argocd" in next(r for r in h["slots"] if r["slot"][11:16] == "09:03")["reason"]
    assert z(T(9, 5)) in [r["slot"] for r in h["slots"] if r["verdict"] == "ran"]


# --- the CLI ------------------------------------------------------------------------------------

def test_history_ledger_flags_are_checked_before_anything_is_read(run_cli: Any, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CRONCTL_LEDGER", raising=False)
    r = run_cli("history", "--cluster", "c1")
    assert r.exit_code == 2 and "--cluster reads the ledger" in r.stderr
    r = run_cli("history", "--ledger", str(tmp_path / "absent.sqlite"), "--cluster", "all")
    assert r.exit_code == 9 and "no ledger at" in r.stderr and "Traceback" not in r.stderr
    r = run_cli("history", "--ledger", "ftp://x/y", "--cluster", "all")
    assert r.exit_code == 5 and "not a ledger URL" in r.stderr


def test_history_reads_the_ledger_alone_with_cluster(run_cli: Any, tmp_path: Path, ledger_url: str) -> None:
    import json

    cj = cronjob(ok_limit=1)
    _write(ledger_url, cj, [scheduled(T(9, m)) for m in (1, 2, 3)], [], cluster="east")
    r = run_cli("history", "--ledger", ledger_url, "--cluster", "east", "--now", z(T(9, 3, 30)), "--since", "3m",
                "-o", "json")
    assert r.exit_code == 0, r.stderr
    h = json.loads(r.stdout)["cronjobs"][0]
    assert [(s["slot"][11:16], s["verdict"], s["jobs"]) for s in h["slots"] if s["verdict"] != "due"] == [
        (f"09:0{m}", "ran", [slotname(T(9, m))]) for m in (1, 2, 3)]
    assert h["ledger"] == "east"
    r = run_cli("history", "--ledger", ledger_url, "--cluster", "west", "--now", z(T(9, 3, 30)), "-o", "json")
    assert r.exit_code == 0 and json.loads(r.stdout)["cronjobs"] == []
    # a second cluster with the same namespace and name in the same ledger: kept apart
    other = cronjob(ok_limit=1)
    other["metadata"]["uid"] = "cj-uid-west"
    _write(ledger_url, other, [], [], cluster="west")
    r = run_cli("history", "cj", "-n", "ns", "--ledger", ledger_url, "--cluster", "all", "--now",
                z(T(9, 3, 30) + timedelta(days=1)), "--since", "2d", "-o", "json")
    assert r.exit_code == 0
    both = {h["ledger"]: h["counts"]["ran"] for h in json.loads(r.stdout)["cronjobs"]}
    assert both == {"east": 3, "west": 0}


def test_a_reader_does_not_migrate_a_ledger_a_recorder_is_creating(tmp_path: Any) -> None:
    # the recorder makes the file, then migrates it; a reader polling meanwhile (a test, an
    # operator's history) found the file and migrated it too: one of the two failed (a matrix run
    # lost its recorder at start that way). Now the reader says "not ready" and touches nothing.
    import sqlite3

    from cronctl.errors import LedgerError

    path = tmp_path / "new.sqlite"
    sqlite3.connect(path).close()  # the file exists, nothing in it yet
    with pytest.raises(LedgerError) as e:
        open_ledger(f"sqlite:///{path}", create=False)
    assert "is not ready yet" in e.value.message
    assert sqlite3.connect(path).execute("SELECT count(*) FROM sqlite_master").fetchone() == (0,)


def test_writers_migrating_one_new_ledger_at_once_all_open_it(tmp_path: Any) -> None:
    # separate processes, as recorders are (Alembic's context is one per process)
    import subprocess
    import sys

    url = f"sqlite:///{tmp_path / 'race.sqlite'}"
    code = "import sys; from cronctl.ledger.store import open_ledger; open_ledger(sys.argv[1]).close()"
    procs = [subprocess.Popen([sys.executable, "-c", code, url], stderr=subprocess.PIPE, text=True) for _ in range(4)]
    results = [(p.wait(timeout=120), p.stderr.read() if p.stderr else "") for p in procs]
    assert [rc for rc, _err in results] == [0, 0, 0, 0], [err[-500:] for _rc, err in results]


def test_every_read_of_a_cronjobs_evidence_goes_through_an_index(tmp_path: Path) -> None:
    # the evidence of one CronJob (each judging of the recorder, each history) must not read whole
    # tables: a 90-day ledger holds millions of Jobs and events. SQLite's own plan of each query says
    # SEARCH ... USING INDEX, never SCAN of a table that grows (cronjobs and configs are one per CronJob)
    from sqlalchemy import event as sa_event

    url = f"sqlite:///{tmp_path / 'l.sqlite'}"
    cj = cronjob()
    jobs = [scheduled(T(9, m)) for m in (1, 2, 3)]
    evs = [event("SawCompletedJob", "x", T(9, 2)), event("SuccessfulCreate", "y", T(9, 3), uid=None)]  # by uid, by name
    for i, e in enumerate(evs):
        e["metadata"]["uid"] = f"ev-{i}"
    _write(url, cj, jobs, evs)
    led = open_ledger(url, create=False)
    seen: list[tuple[str, Any]] = []
    sa_event.listen(led.engine, "before_cursor_execute",
                    lambda _c, _cur, statement, params, _ctx, _many: seen.append((statement, params)))
    try:
        with led.reading() as r:
            ev = r.evidence("c1", namespace="ns", name="cj", since=T(8, 0))
            assert len(ev.jobs) == 3 and sorted(e["reason"] for e in ev.events) == ["SawCompletedJob", "SuccessfulCreate"]
            plans = [(st, [row[-1] for row in r.conn.exec_driver_sql("EXPLAIN QUERY PLAN " + st, p).fetchall()])
                     for st, p in list(seen) if st.lstrip().upper().startswith("SELECT")]
    finally:
        led.close()
    assert {t for st, _ in plans for t in ("jobs", "events", "logs") if f"FROM {t}" in st} == {"jobs", "events", "logs"}
    for st, plan in plans:
        scans = [line for line in plan if line.startswith("SCAN") and any(t in line for t in ("jobs", "events", "logs",
                                                                                                 "slots"))]
        assert not scans, (st, plan)
