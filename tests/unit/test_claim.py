"""cronctl claim with real processes on a real ledger (a SQLite file, and PostgreSQL): racing
claimers, a SIGKILLed holder taken over with a higher token, refusals with their own exit codes,
the DST fold, replays, SIGTERM passed on, the exported variables, the Python API."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from cronctl.ledger import claims, claimstore, store

T = "2026-12-07T02:00:00Z"
OCC = datetime(2026, 12, 7, 2, 0, tzinfo=timezone.utc)


def claim_cmd(ledger: str, *args: str, occurrence: str | None = T, workflow: str = "shop/billing") -> list[str]:
    return ([sys.executable, "-m", "cronctl", "claim", "--ledger", ledger, "--workflow", workflow]
            + (["--occurrence", occurrence] if occurrence else []) + list(args))


def env_without_pod() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRONCTL_") or k == "CRONCTL_DEBUG"}
    env["KUBECONFIG"] = "/nonexistent"  # nothing here may reach a cluster
    return env


def run(cmd: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, env=env_without_pod(), timeout=120, **kw)


def effect(path: Path) -> str:
    """A COMMAND whose effect is one line in ``path``: the token, attempt and occurrence it ran with."""
    return f'echo "$CRONCTL_FENCING_TOKEN $CRONCTL_ATTEMPT $CRONCTL_OCCURRENCE" >> {path}'


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_racing_claimers_make_one_effect_and_the_others_refuse(ledger_url: str, tmp_path: Path) -> None:
    effects = tmp_path / "effects"
    store.open_ledger(ledger_url).close()  # migrated once: the racers meet on the claim, not the migration
    procs = [subprocess.Popen(claim_cmd(ledger_url, "--", "sh", "-c", effect(effects) + "; sleep 4"),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env_without_pod())
             for _ in range(4)]
    results = [(p.wait(timeout=120), p.stderr.read() if p.stderr else "") for p in procs]
    assert lines(effects) == [f"1 1 {T}"], results
    winners = [r for r in results if "claimed as attempt 1" in r[1]]
    assert len(winners) == 1 and winners[0][0] == 0, results
    for code, text in results:
        if (code, text) != winners[0]:
            assert (code == 21 and "held by" in text) or (code == 0 and "already done" in text), (code, text)
    again = run(claim_cmd(ledger_url, "--", "sh", "-c", effect(effects)))
    assert again.returncode == 0 and "already done" in again.stderr and "COMMAND not run" in again.stderr
    assert len(lines(effects)) == 1


def test_a_sigkilled_holder_is_taken_over_after_its_lease_with_a_higher_token(ledger_url: str, tmp_path: Path,
                                                                               run_cli: Any) -> None:
    effects = tmp_path / "effects"
    first = subprocess.Popen(claim_cmd(ledger_url, "--lease", "8s", "--", "sh", "-c", effect(effects) + "; sleep 60"),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env_without_pod(),
                             start_new_session=True)
    wait_for_line(effects, first)
    os.killpg(first.pid, signal.SIGKILL)  # the pod is killed: cronctl and COMMAND, no goodbye
    first.wait()
    # at once (in this process: a new interpreter's start-up on a crowded machine can outlast the lease)
    held = run_cli(*claim_cmd(ledger_url, "--", "sh", "-c", effect(effects))[3:])
    assert held.exit_code == 21 and "held by" in held.stderr and "lease until" in held.stderr, held.stderr
    led = store.open_ledger(ledger_url)
    try:
        row = claimstore.read(led, "shop/billing", OCC)
        assert row is not None
        time.sleep(max(0.0, (row.lease_expires - claimstore.now_of(led)).total_seconds()) + 0.3)
    finally:
        led.close()
    taken = run(claim_cmd(ledger_url, "--", "sh", "-c", effect(effects)))
    assert taken.returncode == 0, taken.stderr
    assert "taking over" in taken.stderr and "ambiguous" in taken.stderr
    assert lines(effects) == [f"1 1 {T}", f"2 2 {T}"]
    led = store.open_ledger(ledger_url)
    try:
        row = claimstore.read(led, "shop/billing", OCC)
    finally:
        led.close()
    assert row is not None and (row.status, row.attempt, row.fencing_token) == (claims.DONE, 2, 2)


def test_a_final_failure_is_refused_until_replayed_with_a_reason(ledger_url: str, tmp_path: Path) -> None:
    effects = tmp_path / "effects"
    failed = run(claim_cmd(ledger_url, "--final-exit", "3,4", "--", "sh", "-c", effect(effects) + "; exit 3"))
    assert failed.returncode == 3  # COMMAND's own code, for podFailurePolicy
    refused = run(claim_cmd(ledger_url, "--", "sh", "-c", effect(effects)))
    assert refused.returncode == 22 and "failed finally" in refused.stderr and "--replay" in refused.stderr
    empty = run(claim_cmd(ledger_url, "--replay", " ", "--", "true"))
    assert empty.returncode == 5
    replayed = run(claim_cmd(ledger_url, "--replay", "INC-7 input fixed", "--", "sh", "-c", effect(effects)))
    assert replayed.returncode == 0 and "a replay (INC-7 input fixed)" in replayed.stderr
    assert lines(effects) == [f"1 1 {T}", f"2 2 {T}"]
    done = run(claim_cmd(ledger_url, "--", "sh", "-c", effect(effects)))
    assert done.returncode == 0 and "already done" in done.stderr and len(lines(effects)) == 2
    led = store.open_ledger(ledger_url)
    try:
        [r] = claimstore.rows(led, ["shop/billing"])
    finally:
        led.close()
    assert (r["replay_reason"], r["refusals"], r["status"]) == ("INC-7 input fixed", 2, "done")


def test_a_retryable_failure_is_taken_over_at_once(ledger_url: str, tmp_path: Path) -> None:
    effects = tmp_path / "effects"
    assert run(claim_cmd(ledger_url, "--final-exit", "3", "--", "sh", "-c", effect(effects) + "; exit 1")).returncode == 1
    again = run(claim_cmd(ledger_url, "--", "sh", "-c", effect(effects)))
    assert again.returncode == 0 and "after attempt 1 failed (exit code 1)" in again.stderr
    assert lines(effects) == [f"1 1 {T}", f"2 2 {T}"]


def test_the_dst_fold_is_two_occurrences_each_run_once(tmp_path: Path) -> None:
    # America/New_York fell back on 2026-11-01 at 06:00Z: 01:30 EDT (05:30Z) and 01:30 EST (06:30Z)
    # both happen; the controller annotates each Job with its own offset
    ledger = f"sqlite:///{tmp_path / 'l.sqlite'}"
    effects = tmp_path / "effects"
    for stamp in ("2026-11-01T01:30:00-04:00", "2026-11-01T01:30:00-05:00") * 2:
        env = env_without_pod() | {"CRONCTL_SCHEDULED_TIMESTAMP": stamp}
        r = subprocess.run(claim_cmd(ledger, occurrence=None) + ["--", "sh", "-c", effect(effects)],
                           capture_output=True, text=True, env=env, timeout=60)
        assert r.returncode == 0, r.stderr
    assert lines(effects) == ["1 1 2026-11-01T05:30:00Z", "1 1 2026-11-01T06:30:00Z"]


def test_without_an_occurrence_or_a_ledger_command_never_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    none = run(claim_cmd(f"sqlite:///{tmp_path / 'l.sqlite'}", occurrence=None) + ["--", "touch", str(marker)])
    assert none.returncode == 20 and none.stderr.count("\n") == 1 and "no occurrence" in none.stderr
    down = run(claim_cmd("postgresql://nobody@127.0.0.1:9/none", "--", "touch", str(marker)))
    assert down.returncode == 9 and "COMMAND not run" in down.stderr and "Traceback" not in down.stderr
    assert not marker.exists()
    missing = run(claim_cmd(f"sqlite:///{tmp_path / 'l.sqlite'}", "--", "no-such-command-h36"))
    assert missing.returncode == 5 and "not found" in missing.stderr


def test_command_gets_the_token_and_its_output_reference_is_kept(tmp_path: Path) -> None:
    ledger = f"sqlite:///{tmp_path / 'l.sqlite'}"
    script = ('echo "$CRONCTL_WORKFLOW|$CRONCTL_OCCURRENCE|$CRONCTL_ATTEMPT|$CRONCTL_FENCING_TOKEN" > '
              f'{tmp_path / "seen"}; echo s3://bucket/report-1 > "$CRONCTL_OUTPUT_REF_FILE"')
    r = run(claim_cmd(ledger, "--config-version", "v7", "--", "sh", "-c", script))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "seen").read_text().strip() == f"shop/billing|{T}|1|1"
    led = store.open_ledger(ledger)
    try:
        [row] = claimstore.rows(led, ["shop/billing"])
    finally:
        led.close()
    assert (row["output_ref"], row["config_version"], row["exit_code"]) == ("s3://bucket/report-1", "v7", 0)
    assert row["completed_at"] is not None and row["first_claimed_at"] <= row["completed_at"]


def test_sigterm_is_passed_to_command_and_its_exit_code_kept(tmp_path: Path) -> None:
    ledger = f"sqlite:///{tmp_path / 'l.sqlite'}"
    ready, got = tmp_path / "ready", tmp_path / "got"
    script = f"trap 'echo TERM > {got}; exit 42' TERM; touch {ready}; while true; do sleep 0.1; done"
    p = subprocess.Popen(claim_cmd(ledger, "--", "sh", "-c", script), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=env_without_pod())
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert time.monotonic() < deadline and p.poll() is None
        time.sleep(0.1)
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=30) == 42
    assert got.read_text().strip() == "TERM"
    led = store.open_ledger(ledger)
    try:
        row = claimstore.read(led, "shop/billing", OCC)
    finally:
        led.close()
    assert row is not None and row.status == claims.FAILED and row.last_error == "exit code 42"


def test_a_sigterm_before_command_exists_is_kept_and_passed_on_when_it_starts() -> None:
    """The handlers are installed before COMMAND starts (stop 45's CI: a SIGTERM in between killed
    cronctl claim itself, exit -15): a signal that comes first is passed on as soon as COMMAND exists."""
    import os

    from cronctl.procedure.claim import _Forwarder

    before = signal.getsignal(signal.SIGTERM)
    signals = _Forwarder()
    try:
        os.kill(os.getpid(), signal.SIGTERM)  # cronctl is still alive: the signal waits for COMMAND
        child = subprocess.Popen(["sleep", "30"])
        signals.attach(child)
        assert child.wait(timeout=10) == -signal.SIGTERM
    finally:
        signals.restore()
    assert signal.getsignal(signal.SIGTERM) == before  # put back as it was


def test_the_python_api_runs_the_body_once(tmp_path: Path) -> None:
    from cronctl.errors import ClaimHeld
    from cronctl.procedure.claim import occurrence_claim

    ledger = f"sqlite:///{tmp_path / 'l.sqlite'}"
    ran = []
    with occurrence_claim("app/report", OCC, ledger=ledger) as held:
        assert held.run and held.token == 1
        with pytest.raises(ClaimHeld):
            with occurrence_claim("app/report", OCC, ledger=ledger):
                pass
        ran.append(held.token)
        held.output_ref = "report-7"
    with occurrence_claim("app/report", OCC, ledger=ledger) as again:
        assert not again.run
    assert ran == [1]


# --- a PostgreSQL this test may stop and start (scripts/postgres, its own data directory and port) --

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def own_postgres() -> Any:
    """A private PostgreSQL server (scripts/postgres up in a directory of its own): ``(url, env)``
    where ``env`` makes scripts/postgres act on it. Skipped where the ledger tests on PostgreSQL are
    (no server binaries: CRONCTL_TEST_POSTGRES unset outside CI)."""
    from conftest import POSTGRES_SKIP, _in_ci

    if not os.environ.get("CRONCTL_TEST_POSTGRES") and not _in_ci():
        pytest.skip(POSTGRES_SKIP)
    import tempfile

    # under /tmp itself: as root the server runs as the postgres user, who cannot enter pytest's 0700 tmp_path
    pg_env = os.environ | {"CRONCTL_PG_DIR": tempfile.mkdtemp(prefix="cronctl-claim-pg.", dir="/tmp")}
    subprocess.run([str(ROOT / "scripts/postgres"), "up"], env=pg_env, check=True, capture_output=True, timeout=120)
    url = subprocess.run([str(ROOT / "scripts/postgres"), "url"], env=pg_env, check=True, capture_output=True,
                         text=True).stdout.strip()
    yield url, pg_env
    subprocess.run([str(ROOT / "scripts/postgres"), "down", "--purge"], env=pg_env, capture_output=True, timeout=120)


def pg(env: dict[str, str], verb: str) -> None:
    subprocess.run([str(ROOT / "scripts/postgres"), verb], env=env, check=True, capture_output=True, timeout=120)


def wait_for_line(path: Path, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while not lines(path):
        assert time.monotonic() < deadline and proc.poll() is None, "COMMAND never made its effect"
        time.sleep(0.1)


def effect_then_ledger_down(effects: Path, pg_env: dict[str, str]) -> str:
    """COMMAND commits its effect, then stops the ledger's server before cronctl can record the end."""
    return effect(effects) + f"; CRONCTL_PG_DIR={pg_env['CRONCTL_PG_DIR']} {ROOT / 'scripts/postgres'} down"


def test_postgresql_restarted_after_commands_commit_makes_no_second_effect(own_postgres: Any,
                                                                           tmp_path: Path) -> None:
    url, pg_env = own_postgres
    effects = tmp_path / "effects"
    script = effect_then_ledger_down(effects, pg_env)
    p = subprocess.Popen(claim_cmd(url, "--workflow", "pg/restart", "--lease", "30s", "--", "sh", "-c", script),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env_without_pod())
    wait_for_line(effects, p)
    time.sleep(1.5)
    pg(pg_env, "up")
    assert p.wait(timeout=90) == 0
    assert "attempt 1 done" in (p.stderr.read() if p.stderr else "")
    again = run(claim_cmd(url, "--workflow", "pg/restart", "--", "sh", "-c", effect(effects)))
    assert again.returncode == 0 and "already done" in again.stderr
    assert lines(effects) == [f"1 1 {T}"]


def test_a_ledger_lost_after_command_succeeded_leaves_an_ambiguous_row_not_a_failed_one(own_postgres: Any,
                                                                                        tmp_path: Path) -> None:
    url, pg_env = own_postgres
    effects = tmp_path / "effects"
    script = effect_then_ledger_down(effects, pg_env)
    p = subprocess.Popen(claim_cmd(url, "--workflow", "pg/lost", "--lease", "3s", "--", "sh", "-c", script),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env_without_pod())
    try:
        assert p.wait(timeout=90) == 0  # COMMAND's code: a failed exit would make the Job retry the effect blindly
    finally:
        pg(pg_env, "up")
    err = p.stderr.read() if p.stderr else ""
    assert "the row stays running until its lease expires, then it reads as ambiguous" in err, err
    led = store.open_ledger(url)
    try:
        row = claimstore.read(led, "pg/lost", OCC)
        assert row is not None and row.status == claims.RUNNING
        at = claimstore.now_of(led)
        if row.lease_expires > at:
            time.sleep((row.lease_expires - at).total_seconds() + 0.2)
            at = claimstore.now_of(led)
        assert claims.effect(row.status, row.lease_expires, at) == "ambiguous"
        assert claimstore.summary(led, at)[0][("pg/lost", "ambiguous")] == 1
    finally:
        led.close()
    assert lines(effects) == [f"1 1 {T}"]


# --- the readers: history shows each slot's effect beside its Job verdict ---------------------------

def _claim_the_story(url: str) -> None:
    """The readers' claim rows of ns/cj: 09:01 done once and a second claimer (kubectl's Job)
    refused, 09:02 claimed and never ended (its lease runs out: ambiguous), 09:03 never claimed."""
    from builders import T, slotname

    led = store.open_ledger(url)
    try:
        lease = timedelta(seconds=60)
        first = claimstore.Claimer(owner="job ns/x", holder_job=f"ns/{slotname(T(9, 1))}")
        o = claimstore.claim(led, "ns/cj", T(9, 1), first, lease, at=T(9, 1, 5))
        claimstore.end(led, "ns/cj", T(9, 1), o.decision.token, claims.DONE, exit_code=0, output_ref=None,
                       last_error=None, at=T(9, 1, 20))
        claimstore.claim(led, "ns/cj", T(9, 1), claimstore.Claimer(owner="job ns/cj-by-hand pod p"), lease,
                         at=T(9, 1, 30))
        claimstore.claim(led, "ns/cj", T(9, 2), claimstore.Claimer(owner="job ns/y", holder_job="ns/y"), lease,
                         at=T(9, 2, 5))
    finally:
        led.close()

def test_history_shows_each_slots_effect_beside_the_job_verdict(run_cli: Any, tmp_path: Path) -> None:
    import json

    from builders import T, cronjob, scheduled, slotname, z
    from test_ledger import _write

    url = f"sqlite:///{tmp_path / 'l.sqlite'}"
    cj = cronjob(ok_limit=1)
    # 09:01 ran twice (two Jobs, one effect: the second refused), 09:02 ran (its holder vanished:
    # ambiguous), 09:03 ran without claiming anything (none)
    twice = scheduled(T(9, 1))
    dup = {**scheduled(T(9, 1)), "metadata": {**twice["metadata"], "name": "cj-by-hand", "uid": "dup-uid"}}
    _write(url, cj, [twice, dup, scheduled(T(9, 2)), scheduled(T(9, 3))], [], cluster="east")
    _claim_the_story(url)
    r = run_cli("history", "--ledger", url, "--cluster", "east", "--now", z(T(9, 3, 30)), "--since", "3m",
                "-o", "json")
    assert r.exit_code == 0, r.stderr
    slots = {s["slot"][11:16]: s for s in json.loads(r.stdout)["cronjobs"][0]["slots"]}
    assert slots["09:01"]["verdict"] == "duplicate"
    assert slots["09:01"]["effect"] == {"effect": "refused-duplicate", "attempt": 1,
                                        "holder": f"ns/{slotname(T(9, 1))}", "completed": z(T(9, 1, 20)),
                                        "refusals": 1, "refused_by": "job ns/cj-by-hand pod p"}
    assert slots["09:02"]["effect"]["effect"] == "ambiguous"
    assert slots["09:03"]["effect"] == {"effect": "none", "attempt": None, "holder": None, "completed": None,
                                        "refusals": 0, "refused_by": None}
    text = run_cli("history", "--ledger", url, "--cluster", "east", "--now", z(T(9, 3, 30)), "--since", "3m")
    assert "effect: done once by" in text.stdout and "1 duplicate(s) refused" in text.stdout
    assert "effect: AMBIGUOUS by ns/y" in text.stdout


def test_the_bundle_shows_each_slots_effect_in_bundle_json_and_report_md(tmp_path: Path) -> None:
    # issue 36 item 2: bundle --ledger, the same rows as history's above (the live command reads
    # the cluster first: here RawData stands for what it read, the ledger is real)
    import json

    from builders import T, cronjob, scheduled, z
    from cronctl.bundle.analyse import Options
    from cronctl.bundle.assemble import build_bundle
    from cronctl.bundle.collect import add_ledger
    from cronctl.bundle.raw import RawData
    from cronctl.bundle.render import add_reports
    from test_ledger import _write

    url = f"sqlite:///{tmp_path / 'l.sqlite'}"
    cj = cronjob(ok_limit=1)
    jobs = [scheduled(T(9, 1)), scheduled(T(9, 2)), scheduled(T(9, 3))]
    _write(url, cj, jobs, [], cluster="east")
    _claim_the_story(url)
    now = T(9, 3, 30)
    raw = RawData(namespace="ns", source="cluster", now=now, now_source="--now", collected_at=now,
                  cronjobs=[cj], jobs=jobs, pods=[], events=[])
    add_ledger(raw, None, url, "east", since=T(8, 0))
    files = build_bundle(raw, None, Options(now=now)).files
    doc = json.loads(files["bundle.json"])
    import jsonschema

    jsonschema.validate(doc, json.loads((Path(__file__).resolve().parents[2] / "cronctl" / "data"
                                         / "bundle.schema.json").read_text()))
    add_reports(files, doc)
    occ = {o["expected"][11:16]: o for o in doc["cronjobs"][0]["occurrences"]}
    assert occ["09:01"]["effect"]["effect"] == "refused-duplicate" and occ["09:01"]["effect"]["refusals"] == 1
    assert occ["09:01"]["effect"]["completed"] == z(T(9, 1, 20))
    assert occ["09:02"]["effect"]["effect"] == "ambiguous"
    assert occ["09:03"]["effect"]["effect"] == "none"
    report = files["REPORT.md"].decode("utf-8")
    assert "effect (cronctl claim)" in report and "refused-duplicate (1 refused)" in report and "| ambiguous |" in report
    # without claim rows for the workflow the bundle says nothing of effects
    raw2 = RawData(namespace="ns", source="cluster", now=now, now_source="--now", collected_at=now,
                   cronjobs=[cj], jobs=jobs, pods=[], events=[])
    files2 = build_bundle(raw2, None, Options(now=now)).files
    assert all("effect" not in o for o in json.loads(files2["bundle.json"])["cronjobs"][0]["occurrences"])


def test_reconcile_reads_the_schedule_the_jobs_and_the_claims(run_cli: Any, tmp_path: Path) -> None:
    """The reconciler over a CronJob (the one fake, cronctl.cluster's boundary: the live command runs in
    tests/cluster/test_claim_live.py) and a real ledger."""
    from builders import T, cronjob, scheduled, slotname
    from cronctl.procedure.effects import reconcile
    from fake_cluster import FakeCluster

    url = f"sqlite:///{tmp_path / 'l.sqlite'}"
    led = store.open_ledger(url)
    try:
        who = claimstore.Claimer(owner="job ns/x")
        o = claimstore.claim(led, "ns/cj", T(10, 0), who, timedelta(seconds=60), at=T(10, 0, 5))
        claimstore.end(led, "ns/cj", T(10, 0), o.decision.token, claims.DONE, exit_code=0, output_ref=None,
                       last_error=None, at=T(10, 0, 30))
        claimstore.claim(led, "ns/cj", T(10, 10), who, timedelta(seconds=60), at=T(10, 10, 5))  # vanished
    finally:
        led.close()
    cj = cronjob("*/10 * * * *", created=T(9, 0))
    res = reconcile(FakeCluster(cj, [scheduled(T(10, 20))]), "cj", url, since=timedelta(minutes=40), now=T(10, 35))
    assert (res.expected, res.done, res.workflow) == (4, 1, "ns/cj")
    assert [(g.occurrence, g.effect) for g in res.gaps] == [(T(10, 10), "ambiguous"), (T(10, 20), "none"),
                                                           (T(10, 30), "none")]
    assert f"job {slotname(T(10, 20))} still stands for the slot" in res.gaps[1].note
    assert res.gaps[2].replay == "cronctl backfill cj -n ns --slot 2026-12-02T10:30:00Z --reason 'reconcile: none'"


def test_a_waiting_claimer_is_counted_once_when_it_is_refused_at_the_end(tmp_path: Path, run_cli: Any) -> None:
    ledger = f"sqlite:///{tmp_path / 'l.sqlite'}"
    first = subprocess.Popen(claim_cmd(ledger, "--", "sleep", "3"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=env_without_pod())
    led = store.open_ledger(ledger)
    try:
        deadline = time.monotonic() + 60
        while claimstore.read(led, "shop/billing", OCC) is None:
            assert time.monotonic() < deadline and first.poll() is None
            time.sleep(0.1)
        waiter = run_cli(*claim_cmd(ledger, "--wait", "--", "true")[3:])  # in-process: at once
        assert first.wait(timeout=60) == 0
        assert waiter.exit_code == 0 and "waiting" in waiter.stderr and "already done" in waiter.stderr
        row = claimstore.read(led, "shop/billing", OCC)
    finally:
        led.close()
    assert row is not None and row.refusals == 1
