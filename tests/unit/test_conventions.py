"""The command-line conventions of issue 10 item 7, offline: duration flags in range, several
files for -f, never-firing schedules, local time beside UTC, "not found" with the namespaces
where the name exists, and what a refusal under --yes changed and set back."""

from __future__ import annotations

import functools
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml

from builders import cronjob, job, manifest
from cronctl.cli import main
from cronctl.cli.common import flag_of
from cronctl.cli.durations import SETTLE
from cronctl.errors import BadUsage, ExitCode


@pytest.mark.parametrize("text", ["0", "0s", "0m0s", "-3", "-1s"])
def test_a_duration_of_zero_or_less_is_a_usage_error_naming_the_flag(text: str) -> None:
    with pytest.raises(BadUsage, match="--settle") as e:
        SETTLE.seconds(text)
    assert e.value.exit_code == ExitCode.USAGE


@pytest.mark.parametrize(("args", "flag"), [
    (["run-manual", "cj", "--settle", "0"], "--settle"),
    (["run-manual", "cj", "--timeout", "0s"], "--timeout"),
    (["run-manual", "cj", "--settle", "-5s"], "--settle"),
    (["backfill", "cj", "--missed", "--settle", "0"], "--settle"),
    (["backfill", "cj", "--missed", "--max-age", "0"], "--max-age"),
    (["wait", "cj", "--timeout", "0"], "--timeout"),
    (["history", "cj", "--since", "0"], "--since"),
    (["pause", "cj", "--reason", "x", "--until", "0"], "--until"),
    (["bundle", "--from-dump", "x.yaml", "--window", "0d"], "--window"),
])
def test_every_duration_flag_refuses_zero_in_one_line_with_exit_2_before_any_request(
        capfd: pytest.CaptureFixture[str], args: list[str], flag: str) -> None:
    assert main(args) == ExitCode.USAGE
    out, err = capfd.readouterr()
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: bad {flag} "), err


def test_settle_zero_says_why_the_second_check_needs_a_delay(capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["run-manual", "cj", "--settle", "0"]) == 2
    assert "controller was creating" in capfd.readouterr().err


# --- never-firing schedules ------------------------------------------------------------------

def test_explain_of_a_never_firing_schedule_explains_then_exits_5_in_one_line(
        capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "0 0 31 2 *", "-o", "json"]) == ExitCode.BAD_INPUT
    out, err = capfd.readouterr()
    assert json.loads(out)["neverFires"] is True  # the explanation is still printed, on stdout
    assert err.strip().splitlines() == [
        "error: schedule '0 0 31 2 *' never fires (day 31 of February never exists); "
        "pass --allow-never to explain it with exit 0"]


def test_allow_never_explains_a_never_firing_schedule_with_exit_0(capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "0 0 31 2 *", "--allow-never"]) == 0
    out, err = capfd.readouterr()
    assert "never fires" in out and err == ""


def test_explain_f_names_each_never_firing_cronjob_of_the_files(capfd: pytest.CaptureFixture[str],
                                                                tmp_path: Path) -> None:
    a = _manifest(tmp_path / "a.yaml", ("ok", "0 3 * * *"), ("feb", "0 0 30 2 *"))
    assert main(["explain", "-f", str(a)]) == ExitCode.BAD_INPUT
    out, err = capfd.readouterr()
    assert "ok" in out and "feb" in out
    assert "ns1/feb: schedule '0 0 30 2 *' never fires" in err and "ns1/ok" not in err


def test_status_does_not_say_a_never_firing_cronjob_schedules_normally() -> None:
    from cronctl.procedure.status import explain_record

    cj = _cronjob("feb", "0 0 31 2 *")
    text = explain_record(cj, None, None, datetime(2026, 12, 3, tzinfo=timezone.utc))
    assert "normally" not in text
    assert text == ("not suspended, but day 31 of February never exists: this schedule never fires: "
                    "the controller never starts a Job for it")
    assert "normally" in explain_record(_cronjob("ok", "0 3 * * *"), None, None,
                                        datetime(2026, 12, 3, tzinfo=timezone.utc))


# --- -f: several files -----------------------------------------------------------------------

# the manifests of the -f tests: Berlin time, namespace ns1, one busybox container
_cronjob = functools.partial(manifest, tz="Europe/Berlin", namespace="ns1", created="2026-12-01T00:00:00Z",
                             pod={"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]})


def _manifest(path: Path, *cronjobs: tuple[str, str]) -> Path:
    path.write_text(yaml.safe_dump_all([_cronjob(n, s) for n, s in cronjobs]))
    return path


def test_explain_reads_every_file_of_a_repeated_f_in_order(capfd: pytest.CaptureFixture[str],
                                                          tmp_path: Path) -> None:
    a = _manifest(tmp_path / "a.yaml", ("one", "0 3 * * *"))
    b = _manifest(tmp_path / "b.yaml", ("two", "0 4 * * *"), ("three", "0 5 * * *"))
    assert main(["explain", "-f", str(a), "-f", str(b), "-o", "json"]) == 0
    assert [r["name"] for r in json.loads(capfd.readouterr().out)] == ["one", "two", "three"]


def test_explain_f_with_a_second_file_as_positional_says_to_repeat_f(capfd: pytest.CaptureFixture[str],
                                                                     tmp_path: Path) -> None:
    a = _manifest(tmp_path / "a.yaml", ("one", "0 3 * * *"))
    b = _manifest(tmp_path / "b.yaml", ("two", "0 4 * * *"))
    assert main(["explain", "-f", str(a), str(b)]) == ExitCode.USAGE
    assert f"give each its own -f: -f {a} -f {b}" in capfd.readouterr().err


def test_stdin_can_be_named_once(capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "-f", "-", "-f", "-"]) == ExitCode.USAGE
    assert main(["lint", "-f", "-", "-f", "-"]) == ExitCode.USAGE
    assert capfd.readouterr().err.count("error: -f - (standard input) can be given only once") == 2


def test_lint_f_with_a_second_file_where_the_name_goes_is_not_a_silent_green(
        capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # issue 10: `lint -f a.yaml b.yaml --fail-on info` said "0 CronJobs checked" and exit 0; issue 34:
    # a path where the name goes is a usage error before anything is read (kubectl's one -f per file)
    monkeypatch.chdir(tmp_path)
    _manifest(tmp_path / "a.yaml", ("one", "0 3 * * *"))
    _manifest(tmp_path / "b.yaml", ("two", "0 4 * * *"))
    assert main(["lint", "-f", "a.yaml", "b.yaml", "--fail-on", "info"]) == ExitCode.USAGE
    out, err = capfd.readouterr()
    assert out == ""
    assert "error: b.yaml is a file, not a CronJob name: give each file its own -f (-f ... -f b.yaml)" in err


def test_lint_reads_every_file_of_a_repeated_f(capfd: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    a = _manifest(tmp_path / "a.yaml", ("one", "0 3 * * *"))
    b = _manifest(tmp_path / "b.yaml", ("two", "0 4 * * *"))
    main(["lint", "-f", str(a), "-f", str(b), "-o", "json"])
    assert json.loads(capfd.readouterr().out)["checked"] == 2


# --- a refusal under --yes says what it changed and set back ---------------------------------

# a running Job made a minute before the fake clock's noon
RUNNING: dict[str, Any] = dict(resource_version="7", created="2026-12-02T11:59:00Z", start=None, status={"active": 1})


def test_a_job_running_at_the_plan_refuses_before_any_write(tmp_path: Path) -> None:
    from fake_cluster import FakeClock, FakeCluster
    from test_procedure_faults import YEARLY

    from cronctl.errors import Refused
    from cronctl.procedure.base import QuietReporter
    from cronctl.procedure.run_manual import RunOptions, run_manual

    c = FakeCluster(clock=FakeClock(), lists=[])
    c.cronjob = cronjob(**YEARLY)
    c.lists = [([job("cj-fix", owner=c.cronjob, **RUNNING)], "1")]  # the plan's read
    with pytest.raises(Refused, match="unfinished child Jobs: cj-fix; nothing was changed") as e:
        run_manual(c, RunOptions(cronjob="cj", yes=True, run_dir=str(tmp_path)), FakeClock(), QuietReporter())
    # the service names its input; the command line writes the flag
    assert "wait_active" in e.value.options
    assert "--wait-active" in (e.value.naming(flag_of)[1] or "")
    assert c.patches == [] and list(tmp_path.iterdir()) == []


def test_a_dry_run_beside_a_running_job_names_the_flags_that_would_let_it_go(tmp_path: Path) -> None:
    # before: the dry run's "a real run would be refused" line carried the hint's options in the
    # service's own terms ("use wait_active ... (bounded by timeout)"), unlike every other refusal
    from fake_cluster import FakeClock, FakeCluster
    from test_procedure_faults import YEARLY

    from cronctl.procedure.base import QuietReporter
    from cronctl.procedure.run_manual import RunOptions, run_manual

    c = FakeCluster(clock=FakeClock(), lists=[])
    c.cronjob = cronjob(**YEARLY)
    c.lists = [([job("cj-fix", owner=c.cronjob, **RUNNING)], "1")]  # the plan's read
    res = run_manual(c, RunOptions(cronjob="cj", dry_run=True, run_dir=str(tmp_path)), FakeClock(), QuietReporter())
    assert res.exit_code == ExitCode.OK and c.patches == []
    assert "a real run would be refused: cronjob ns/cj has unfinished child Jobs: cj-fix (" in res.message
    assert "--wait-active" in res.message and "--timeout" in res.message
    assert "wait_active" not in res.message and not any("\ue000" <= ch <= "\ue002" for ch in res.message)


def test_a_job_appearing_after_the_suspend_is_refused_saying_what_was_set_back_and_when(tmp_path: Path) -> None:
    from fake_cluster import FakeClock, FakeCluster
    from test_procedure_faults import YEARLY

    from cronctl.errors import Refused
    from cronctl.procedure.base import QuietReporter
    from cronctl.procedure.run_manual import RunOptions, run_manual

    clock = FakeClock()
    c = FakeCluster(clock=clock, lists=[])
    c.cronjob = cronjob(**YEARLY)
    # the plan sees nothing; the verify right after the suspend sees a Job the controller was creating
    late = job("cj-29900000", owner=c.cronjob, **RUNNING)
    c.lists = [([], "1"), ([late], "2"), ([late], "3"), ([late], "4")]
    c.server_version = lambda: "v1.36.0"  # type: ignore[method-assign]  # the restore's prediction
    with pytest.raises(Refused) as e:
        run_manual(c, RunOptions(cronjob="cj", yes=True, settle=5, run_dir=str(tmp_path)), clock, QuietReporter())
    assert e.value.message == (
        "cronjob ns/cj has unfinished child Jobs: cj-29900000; cronctl suspended cronjob ns/cj at "
        "2026-12-02T12:00:00Z and set suspend back to false at 2026-12-02T12:00:00Z (the run's account kept in "
        "cronctl.dev/runs and in Events on the CronJob); nothing else changed, nothing created")
    assert c.cronjob["spec"]["suspend"] is False
    from cronctl import model

    # the record is gone; what is left is its account in the runs history
    assert model.read_record(c.cronjob) is None
    assert [k for k in c.cronjob["metadata"]["annotations"] if k.startswith("cronctl.dev/")] == [model.ANN_RUNS]


# --- "not found" names the namespaces where the CronJob exists ---------------------------------

def test_the_not_found_message_names_the_other_namespaces_and_the_flag_to_use() -> None:
    from cronctl.names import not_found_elsewhere

    assert not_found_elsewhere("cronjob", "orders", "default", ["shop-eu", "shop", "default"]) == (
        "cronjob orders not found in namespace default; it exists in shop, shop-eu (use -n shop)")
    many = not_found_elsewhere("cronjob", "x", "a", [f"n{i}" for i in range(8)])
    assert many.endswith("it exists in n0, n1, n2, n3, n4 and 3 more (use -n n0)")


def _stub_api(lists: dict[str, list[Any]], tmp_path: Path) -> tuple[Any, Path]:
    from test_completion import _ApiServer, _kubeconfig

    api = _ApiServer(lists)
    return api, _kubeconfig(tmp_path / "kc", api.url)


def test_status_of_a_cronjob_in_another_namespace_says_where_it_is_in_one_list_call(
        capfd: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    api, kc = _stub_api({"/apis/batch/v1/cronjobs": [{"name": "orders", "namespace": "shop"},
                                                     {"name": "orders", "namespace": "shop-eu"}]}, tmp_path)
    try:
        assert main(["status", "orders", "-n", "default", "--kubeconfig", str(kc)]) == ExitCode.NOT_FOUND
    finally:
        api.close()
    assert capfd.readouterr().err.strip().splitlines() == [
        "error: cronjob orders not found in namespace default; it exists in shop, shop-eu (use -n shop)"]
    assert api.requests[-1] == "/apis/batch/v1/cronjobs?fieldSelector=metadata.name%3Dorders&limit=100"


@pytest.mark.parametrize("across", [403, [], [{"name": "orders", "namespace": "default"}]])
def test_not_found_stays_plain_when_listing_across_namespaces_is_forbidden_or_finds_no_other(
        capfd: pytest.CaptureFixture[str], tmp_path: Path, across: Any) -> None:
    api, kc = _stub_api({"/apis/batch/v1/cronjobs": across}, tmp_path)
    try:
        assert main(["explain", "cronjob/orders", "-n", "default", "--kubeconfig", str(kc)]) == ExitCode.NOT_FOUND
    finally:
        api.close()
    assert capfd.readouterr().err.strip().splitlines() == ["error: cronjob default/orders not found"]
    # asked once each, silently: across namespaces, then the namespace's names for "did you mean"
    assert api.paths[-2:] == ["/apis/batch/v1/cronjobs", "/apis/batch/v1/namespaces/default/cronjobs"]


def test_a_mistyped_cronjob_name_gets_did_you_mean_from_the_namespace(
        capfd: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Issue 34 item 13: as a mistyped command or zone does. The real API server's answer to the same
    typo is tests/cluster/test_run_manual_repeat.py's."""
    api, kc = _stub_api({"/apis/batch/v1/cronjobs": [],
                         "/apis/batch/v1/namespaces/shop/cronjobs": [{"name": "orders-sync", "namespace": "shop"},
                                                                     {"name": "billing", "namespace": "shop"}]},
                        tmp_path)
    try:
        assert main(["status", "order-sync", "-n", "shop", "--kubeconfig", str(kc)]) == ExitCode.NOT_FOUND
        assert main(["status", "zzz", "-n", "shop", "--kubeconfig", str(kc)]) == ExitCode.NOT_FOUND
    finally:
        api.close()
    assert capfd.readouterr().err.strip().splitlines() == [
        "error: cronjob shop/order-sync not found; did you mean orders-sync?",
        "error: cronjob shop/zzz not found"]


# --- local time beside UTC -----------------------------------------------------------------------

UTC = timezone.utc


@pytest.mark.parametrize(("at", "zone", "shown"), [
    (datetime(2026, 12, 3, 8, 0, tzinfo=UTC), "Europe/Berlin", "2026-12-03 09:00 CET (08:00 UTC)"),
    (datetime(2026, 7, 3, 8, 0, tzinfo=UTC), "Europe/Berlin", "2026-07-03 10:00 CEST (08:00 UTC)"),
    (datetime(2026, 12, 2, 23, 30, tzinfo=UTC), "Europe/Berlin", "2026-12-03 00:30 CET (2026-12-02 23:30 UTC)"),
    (datetime(2026, 12, 3, 8, 0, 5, tzinfo=UTC), "Asia/Kolkata", "2026-12-03 13:30:05 IST (08:00:05 UTC)"),
    (datetime(2026, 12, 3, 8, 0, tzinfo=UTC), None, "2026-12-03 08:00 UTC"),
    (datetime(2026, 12, 3, 8, 0, tzinfo=UTC), "UTC", "2026-12-03 08:00 UTC"),
    (datetime(2026, 12, 3, 8, 0, tzinfo=UTC), "Not/AZone", "2026-12-03 08:00 UTC"),
])
def test_an_instant_for_people_is_in_the_cronjobs_zone_with_utc_beside_it(
        at: datetime, zone: str | None, shown: str) -> None:
    from cronctl.timeutil import local_and_utc

    assert local_and_utc(at, zone) == shown


def test_the_run_manual_plan_lists_the_next_runs_in_local_time_beside_utc(tmp_path: Path) -> None:
    from fake_cluster import FakeClock, FakeCluster
    from test_procedure_faults import YEARLY

    from cronctl.procedure.base import QuietReporter
    from cronctl.procedure.run_manual import RunOptions, run_manual

    c = FakeCluster(clock=FakeClock(), lists=[])  # the clock reads 2026-12-02T12:00Z
    c.cronjob = cronjob(**YEARLY)
    c.cronjob["spec"].update(schedule="0 9 * * *", timeZone="Europe/Berlin")
    c.lists = [([], "1")]
    rep = QuietReporter()
    run_manual(c, RunOptions(cronjob="cj", dry_run=True, run_dir=str(tmp_path)), FakeClock(), rep)
    [row] = [line for line in rep.lines if line.startswith("  next runs: ")]
    assert row.startswith("  next runs: 2026-12-03 09:00 CET (08:00 UTC), 2026-12-04 09:00 CET (08:00 UTC)")


def test_the_bundle_timeline_labels_its_axis_and_titles_in_the_cronjobs_zone_too() -> None:
    from cronctl.bundle.render import timeline

    def doc(zone: str) -> dict[str, Any]:
        return {"schedule": {"now": "2026-12-02T11:30:00Z", "zone": zone},
                "jobs": [{"name": "j", "origin": "scheduled", "outcome": "Complete", "running": False,
                          "created": "2026-12-02T10:00:01Z", "started": "2026-12-02T10:00:02Z",
                          "completed": "2026-12-02T10:01:00Z"}],
                "occurrences": [{"expected": "2026-12-02T10:00:00Z", "verdict": "ran", "reason": ""}],
                "overlaps": [], "suspended_periods": []}

    msk, utc = timeline(doc("Europe/Moscow")), timeline(doc("UTC"))
    assert msk["zone"] == "Europe/Moscow" and utc["zone"] is None
    assert [a["label"] for a in msk["axis"]] == [a["label"] for a in utc["axis"]]
    assert msk["axis"][0]["label"] == "12-02 10:00" and msk["axis"][0]["local"] == "12-02 13:00"
    assert all(a["local"] is None for a in utc["axis"])
    assert msk["ticks"][0]["title"] == "2026-12-02 13:00 MSK (10:00 UTC) ran"
    assert msk["rows"][0]["title"] == ("j (scheduled) 2026-12-02 13:00:02 MSK (10:00:02 UTC) -> "
                                       "2026-12-02 13:01 MSK (10:01 UTC) Complete")
    assert msk["top"] == utc["top"] + 14  # a band for the local labels above the UTC ones


def test_lint_f_with_a_file_path_where_the_name_goes_is_a_usage_error(capfd: pytest.CaptureFixture[str],
                                                                     tmp_path: Path) -> None:
    # a path is no CronJob name (issue 12's name check): say what was meant, not only "bad name"
    a = _manifest(tmp_path / "a.yaml", ("one", "0 3 * * *"))
    b = _manifest(tmp_path / "b.yaml", ("two", "0 4 * * *"))
    assert main(["lint", "-f", str(a), str(b), "--fail-on", "info"]) == ExitCode.USAGE
    assert f"error: {b} is a file, not a CronJob name: give each file its own -f (-f ... -f {b})" \
        in capfd.readouterr().err
    assert main(["lint", "-f", str(a), "no/such/file"]) == ExitCode.BAD_INPUT  # not a file: the name check's answer


@pytest.mark.parametrize("command", ["history", "bundle"])
def test_a_cronjob_missing_from_a_dump_names_what_the_dump_holds_and_the_close_one(
        capfd: pytest.CaptureFixture[str], tmp_path: Path, command: str) -> None:
    """Issue 34 item 13: `--from-dump` with an unknown CronJob lists the dump's CronJobs."""
    dump = Path(__file__).parents[1] / "golden" / "bundle" / "billing-two-cronjobs.dump.yaml"
    extra = ["--out", str(tmp_path / "b")] if command == "bundle" else []
    assert main([command, "--from-dump", str(dump), "invoices-run", *extra]) == ExitCode.NOT_FOUND
    err = capfd.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("error: ") and "invoices-run" in err and str(dump) in err
    assert err.endswith("; did you mean invoice-run? (it holds: cleanup, invoice-run)"), err
