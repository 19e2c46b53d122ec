"""Real faults of the real control plane, produced with scripts/cluster's drill verbs.

These tests stop and start components, so they run on a PRIVATE control plane of their own
(its own state directory, ports and etcd; same version as the rest of the run), never on the one
the other tests share. What the FakeCluster in tests/unit/test_procedure_faults.py still covers is
only what a real server cannot be made to do at one exact step (a watch dropped at one event, a
409 between a read and a patch).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.cluster_support import (create_cronjob, list_jobs, private_control_plane, read_cronjob, read_job,
                                           record_annotations, sleep_until,
                                           slot_job_name, terminal, wait_for, wait_for_slot_job)
from tests.conftest import K8s, create_test_namespace
from tests.harness import ClusterInfo, cluster, cronctl, cronctl_env, requested_k8s_version, start_cronctl

# one private cluster, so these run one after another on one xdist worker; the disk tests are
# about the local disk, not the controller, and run on the default version only (not `compat`)
pytestmark = [pytest.mark.cluster, pytest.mark.xdist_group("private-cluster")]
compat = pytest.mark.compat


@dataclass
class Private:
    """A control plane of this module's own (own state directory), so its faults hurt no other test."""

    info: ClusterInfo
    k8s: K8s

    @property
    def kubeconfig(self) -> str:
        return str(self.info.kubeconfig)

    def stop(self, component: str) -> None:
        cluster.stop(component, self.info.state_dir)

    def start(self, component: str) -> None:
        cluster.start(component, self.info.state_dir)

    def restart(self, component: str) -> None:
        cluster.restart(component, self.info.state_dir)

    def compact(self) -> int:
        return int(cluster.compact(self.info.state_dir))


@pytest.fixture(scope="module")
def private() -> Iterator[Private]:
    with private_control_plane("cronctl-fault-cluster-") as (info, k8s):
        yield Private(info=info, k8s=k8s)


def _start_run(p: Private, ns: str, name: str, run_dir: Path, *extra: str,
               env_extra: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return start_cronctl(["run-manual", name, "-n", ns, "--yes", "--settle", "1s", "--run-dir", str(run_dir), *extra],
                         p.kubeconfig, env=cronctl_env(**(env_extra or {})))


def _record(run_dir: Path) -> dict[str, Any]:
    (d,) = [x for x in run_dir.iterdir() if x.is_dir()]
    return dict(json.loads((d / "record.json").read_text()))


def _job_running(p: Private, ns: str) -> Any:
    return [j for j in list_jobs(p.k8s, ns) if (j.get("status") or {}).get("active")]


def _run_until_the_job_runs(p: Private, hint: str, run_dir: Path) -> tuple[str, subprocess.Popen[str]]:
    """A fresh namespace with a 20 s CronJob, run-manual started on it, returned once its Job runs."""
    ns = create_test_namespace(p.k8s, hint)
    create_cronjob(p.k8s, ns, "orders", duration=20)
    proc = _start_run(p, ns, "orders", run_dir)
    try:
        # 180 s: on a CI machine at load 11 the cronctl start, the preflight and the pod's start took
        # more than the 60 s this once had
        wait_for("the manual Job to run", lambda: _job_running(p, ns), timeout=180)
    except BaseException:
        proc.kill()  # no run left behind riding out a control plane the fixture then takes down
        proc.communicate()
        raise
    return ns, proc


@compat
def test_apiserver_restarted_while_run_manual_waits(private: Private, tmp_path: Path) -> None:
    ns, proc = _run_until_the_job_runs(private, "t-fault-restart", tmp_path)
    private.restart("kube-apiserver")
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, err
    assert [j["metadata"]["name"] for j in list_jobs(private.k8s, ns)] == ["orders-manual"]  # exactly one Job
    cj = read_cronjob(private.k8s, ns, "orders")
    assert cj["spec"]["suspend"] is False and record_annotations(cj) == {}
    rec = _record(tmp_path)
    # the restart ended the watch (a reconnect), or came before it and was ridden out (failed attempts)
    w = rec["watch"]
    assert rec["outcome"] == "succeeded" and w["reconnects"] + w["reconnect_errors"] >= 1, w


def test_apiserver_down_right_after_the_job_is_created_is_ridden_out(private: Private, tmp_path: Path) -> None:
    # The window CI once hit by chance (a restart between the Job's creation and the step written
    # after it ended the run with exit 7, the CronJob suspended, the Job running): hit exactly here.
    ns = create_test_namespace(private.k8s, "t-fault-made")
    create_cronjob(private.k8s, ns, "orders", duration=2)
    proc = _start_run(private, ns, "orders", tmp_path, env_extra={"CRONCTL_TEST_PAUSE_AFTER_STEP": "job-made:8"})
    wait_for("the manual Job to exist", lambda: list_jobs(private.k8s, ns), timeout=60)
    private.stop("kube-apiserver")
    try:
        time.sleep(14)  # past the pause: the step write after the creation finds no server, again and again
    finally:
        private.start("kube-apiserver")
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, err
    assert "connection refused; the Job is in flight, so cronctl tries again every 2s" in err, err
    assert err.count("tries again every") == 1, err  # said once, not per attempt
    assert [j["metadata"]["name"] for j in list_jobs(private.k8s, ns)] == ["orders-manual"]
    cj = read_cronjob(private.k8s, ns, "orders")
    assert cj["spec"]["suspend"] is False and record_annotations(cj) == {}
    rec = _record(tmp_path)
    assert rec["outcome"] == "succeeded" and rec["watch"]["reconnect_errors"] >= 2, rec.get("watch")


@compat
def test_etcd_compacted_past_the_watch_gives_a_real_410_and_a_relist(private: Private, tmp_path: Path) -> None:
    ns, proc = _run_until_the_job_runs(private, "t-fault-compact", tmp_path)
    time.sleep(1)
    private.stop("kube-apiserver")
    # writes after the watch's last resourceVersion, then a compaction past it: the resumed watch
    # is too old for the new apiserver and for etcd alike
    rev = private.compact()
    assert rev > 0
    private.start("kube-apiserver")
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, err
    rec = _record(tmp_path)
    assert rec["watch"]["relists"] >= 1, rec["watch"]
    assert [j["metadata"]["name"] for j in list_jobs(private.k8s, ns)] == ["orders-manual"]
    assert read_cronjob(private.k8s, ns, "orders")["spec"]["suspend"] is False


@compat
def test_apiserver_down_when_run_manual_starts_is_one_clear_error_and_nothing_changes(
        private: Private, tmp_path: Path) -> None:
    ns = create_test_namespace(private.k8s, "t-fault-down")
    create_cronjob(private.k8s, ns, "orders", duration=2)
    private.stop("kube-apiserver")
    try:
        t0 = time.monotonic()
        proc = _start_run(private, ns, "orders", tmp_path)
        out, err = proc.communicate(timeout=120)
        took = time.monotonic() - t0
    finally:
        private.start("kube-apiserver")
    assert proc.returncode != 0 and "Traceback" not in err
    # one attempt per request, no retries: the time is Python's start-up plus one refused
    # connection, about 2 s here; 60 s bounds it even with four suites on two cores
    assert "cannot reach the API server" in err and took < 60, (took, err)
    cj = read_cronjob(private.k8s, ns, "orders")
    assert cj["spec"]["suspend"] is False and record_annotations(cj) == {}
    assert list_jobs(private.k8s, ns) == []


@compat
def test_apiserver_down_at_the_restore_step_then_restore_finishes_later(private: Private, tmp_path: Path) -> None:
    ns = create_test_namespace(private.k8s, "t-fault-restore")
    create_cronjob(private.k8s, ns, "orders", duration=2)
    # 20 s after the logs are saved: on a loaded machine noticing the Job's end and stopping the API
    # server took more than the 12 s this once had, and the restore went through before the fault
    proc = _start_run(private, ns, "orders", tmp_path, env_extra={"CRONCTL_TEST_PAUSE_AFTER_STEP": "finished:20"})
    wait_for("the manual Job to complete",
             lambda: [j for j in list_jobs(private.k8s, ns) if (j.get("status") or {}).get("succeeded")], timeout=60)
    time.sleep(1)  # inside the pause after the logs are saved
    private.stop("kube-apiserver")
    try:
        t0 = time.monotonic()
        out, err = proc.communicate(timeout=120)
        took = time.monotonic() - t0
    finally:
        private.start("kube-apiserver")
    assert proc.returncode != 0 and "Traceback" not in err, err
    assert "restore failed" in err and "cannot reach the API server" in err and took < 40, (took, err)
    rec = _record(tmp_path)
    assert rec["outcome"] == "succeeded-not-restored" and rec["step"] == "restore-failed"
    assert read_cronjob(private.k8s, ns, "orders")["spec"]["suspend"] is True  # left suspended, explained
    r = cronctl(["restore", "orders", "-n", ns, "--yes"], private.kubeconfig, timeout=120)
    assert r.returncode == 0, r.stderr
    cj = read_cronjob(private.k8s, ns, "orders")
    assert cj["spec"]["suspend"] is False and record_annotations(cj) == {}


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A real 4 MiB filesystem (tmpfs) of its own, so it can really fill up or turn read-only.
    Needs root to mount (CI runs as root)."""
    if os.geteuid() != 0:
        pytest.fail("the disk-full tests mount a tmpfs and need root (CI runs as root)", pytrace=False)
    mnt = tmp_path / "disk"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt)], check=True)
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def _fill(path: Path) -> None:
    """Write until the filesystem says ENOSPC (unbuffered, so nothing is left to flush)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (65536, 512, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError:
                pass
    finally:
        os.close(fd)


@pytest.mark.parametrize("fault", ["read-only", "full", "world-writable"])
def test_an_unusable_run_directory_is_found_before_anything_changes(private: Private, small_disk: Path,
                                                                     fault: str) -> None:
    ns = create_test_namespace(private.k8s, f"t-fault-disk-{fault}")
    create_cronjob(private.k8s, ns, "orders", duration=2)
    (small_disk / "runs").mkdir()
    if fault == "read-only":
        subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    elif fault == "world-writable":  # issue 12: another local user could swap the run directory
        os.chmod(small_disk / "runs", 0o777)
    else:
        _fill(small_disk / "filler")
    proc = _start_run(private, ns, "orders", small_disk / "runs")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 5 and "Traceback" not in err, err  # 5: bad input, nothing changed
    assert "run directory" in err and "nothing was changed" in err
    if fault == "world-writable":
        assert "world-writable without the sticky bit" in err and list((small_disk / "runs").iterdir()) == []
    cj = read_cronjob(private.k8s, ns, "orders")
    assert cj["spec"]["suspend"] is False and record_annotations(cj) == {}
    assert list_jobs(private.k8s, ns) == []


def test_the_disk_filling_up_while_logs_are_saved_still_restores_and_names_the_missing_logs(
        private: Private, small_disk: Path) -> None:
    ns = create_test_namespace(private.k8s, "t-fault-disk-fills")
    create_cronjob(private.k8s, ns, "orders", duration=6)
    proc = _start_run(private, ns, "orders", small_disk)
    wait_for("the manual Job to run", lambda: _job_running(private, ns), timeout=60)
    _fill(small_disk / "filler")  # another process fills the disk while the Job runs
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0 and "Traceback" not in err, err
    assert "missing from the run directory" in err and "main" in err and "No space left" in err, err
    cj = read_cronjob(private.k8s, ns, "orders")
    assert cj["spec"]["suspend"] is False and record_annotations(cj) == {}  # restored all the same


def _occurrences(doc: Any) -> list[dict[str, Any]]:
    """Every per-slot record in bundle.json (wherever the schema nests them)."""
    if isinstance(doc, dict):
        found = list(doc["occurrences"]) if isinstance(doc.get("occurrences"), list) else []
        return found + [o for k, v in doc.items() if k != "occurrences" for o in _occurrences(v)]
    if isinstance(doc, list):
        return [o for v in doc for o in _occurrences(v)]
    return []


def test_controller_manager_down_for_two_slots_then_back(private: Private, tmp_path: Path) -> None:
    """kube-controller-manager stopped for two `*/1` slots: when it is back it starts only the most
    recent one, at once; the earlier is never run. cronctl's prediction (made while it was down),
    the bundle and `cronctl history` afterwards say exactly that. A second CronJob with
    startingDeadlineSeconds=10 loses both slots: history calls them missed-deadline."""
    from datetime import datetime, timedelta, timezone

    from cronctl.procedure.predict import predict

    utc = timezone.utc
    ns = create_test_namespace(private.k8s, "t-fault-kcm")
    create_cronjob(private.k8s, ns, "tick", schedule="*/1 * * * *", duration=1, policy="Allow")
    create_cronjob(private.k8s, ns, "tock", schedule="*/1 * * * *", duration=1, policy="Allow", deadline=10)

    def common_slot() -> dict[str, Any] | None:
        # a slot both CronJobs have a Job for (created together, they normally share the first)
        names = {j["metadata"]["name"] for j in list_jobs(private.k8s, ns)}
        return next((j for j in list_jobs(private.k8s, ns) if j["metadata"]["name"].startswith("tick-")
                     and "tock-" + j["metadata"]["name"].split("-", 1)[1] in names), None)

    first = wait_for("a scheduled Job of each for the same slot", common_slot, timeout=150)
    t0 = datetime.strptime(first["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"],
                           "%Y-%m-%dT%H:%M:%S%z").astimezone(utc)
    private.stop("kube-controller-manager")
    try:
        t1, t2 = t0 + timedelta(minutes=1), t0 + timedelta(minutes=2)
        # long enough after t2 that tock's deadline (10 s) has passed for both slots
        sleep_until(t2 + timedelta(seconds=15))
        pred = predict(read_cronjob(private.k8s, ns, "tick"), datetime.now(utc), suspended=False)
        assert pred.decision == "create" and pred.catch_up_for == t2 and pred.never_made_up == 1, pred
    finally:
        private.start("kube-controller-manager")
    wait_for_slot_job(private.k8s, ns, "tick", t2, timeout=60)  # the catch-up Job
    # tock's t0 Job ran its 1 s, but the Job controller (in the stopped kube-controller-manager too)
    # may mark it Complete only now: CI judged it "running" a moment after the restart
    wait_for("tock's t0 Job to be marked finished", lambda: terminal(read_job(
        private.k8s, ns, slot_job_name("tock", t0)) or {"status": {}}), timeout=60)
    names = {j["metadata"]["name"] for j in list_jobs(private.k8s, ns)}
    assert slot_job_name("tick", t1) not in names  # never made up, as predicted
    out = tmp_path / "bundle"
    r = cronctl(["bundle", "tick", "-n", ns, "--out", str(out), "--no-logs"], private.kubeconfig, timeout=120)
    assert r.returncode == 0, r.stderr
    occ = {o["expected"]: o for o in _occurrences(json.loads((out / "bundle.json").read_text()))}
    z = lambda t: t.strftime("%Y-%m-%dT%H:%M:%SZ")  # noqa: E731
    # the bundle judges the slots as history does (below)
    assert occ[z(t1)]["verdict"] == "missed", occ[z(t1)]
    assert occ[z(t2)]["verdict"] in ("ran-late", "running"), occ[z(t2)]
    judged_at = datetime.now(utc)
    r = cronctl(["history", "-n", ns, "-o", "json"], private.kubeconfig, timeout=120)
    assert r.returncode == 0, r.stderr
    hist = {h["name"]: {s["slot"]: s for s in h["slots"]} for h in json.loads(r.stdout)["cronjobs"]}
    tick, tock = hist["tick"], hist["tock"]
    assert tick[z(t1)]["verdict"] == "missed" and "cannot tell which" in tick[z(t1)]["reason"], tick[z(t1)]
    assert tick[z(t2)]["verdict"] in ("ran-late", "running") and tick[z(t2)]["start_delay_seconds"] >= 15, tick[z(t2)]
    assert tock[z(t0)]["verdict"] == "ran"
    for t in (t1, t2):
        if judged_at < t0 + timedelta(minutes=3):
            assert tock[z(t)]["verdict"] == "missed-deadline", tock[z(t)]
            assert "startingDeadlineSeconds=10" in tock[z(t)]["reason"]
        else:
            # judged after tock's next slot (a loaded machine): the controller's decision no longer
            # shows the deadline drop, and the evidence cannot tell it from the controller being down
            print(f"history ran {judged_at - t0} after t0, past the next slot: {tock[z(t)]}")
            assert tock[z(t)]["verdict"] in ("missed-deadline", "missed"), tock[z(t)]


def test_a_port_taken_between_picking_and_binding_it_starts_the_control_plane_again_on_other_ports(
        monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    # CI once lost a whole suite this way: four control planes starting side by side, an outgoing
    # connection took the apiserver's freshly picked port, kube-apiserver exited "bind: address
    # already in use", and every test of that pytest worker failed at setup. Here a socket of the
    # test takes the picked port (scripts/cluster's test-only TAKE_PORT_ENV), as that connection did.
    monkeypatch.setenv(cluster.TAKE_PORT_ENV, "apiserver")
    state = Path(tempfile.mkdtemp(prefix="cronctl-port-cluster-"))
    try:
        info = cluster.up(version=requested_k8s_version(), state=state)
        err = capfd.readouterr().err
        assert "kube-apiserver's port was taken by another process meanwhile" in err, err
        log = (state / "logs" / "kube-apiserver.log").read_text()
        starts = log.split("\n==== ")[1:]
        assert len(starts) == 2 and "address already in use" in starts[0], log[-2000:]  # really failed on it
        ports = [re.search(r"--secure-port=(\d+)", s).group(1) for s in starts]  # type: ignore[union-attr]
        assert ports[0] != ports[1] and info.server == f"https://127.0.0.1:{ports[1]}"
        assert cluster.info(state) is not None  # the second start runs
    finally:
        cluster.down(state)


def _ledger_jobs(url: str) -> set[str]:
    from cronctl.errors import LedgerError
    from cronctl.ledger.store import evidence_for

    try:
        return {j["metadata"]["name"] for j in evidence_for(url, None, namespace=None, name=None, since=None).jobs}
    except LedgerError:  # the recorder has not made the file yet
        return set()


@compat
def test_the_recorder_rides_out_an_apiserver_restart_and_a_compaction_past_its_watch(private: Private,
                                                                                     tmp_path: Path) -> None:
    from cronctl import model

    ns = create_test_namespace(private.k8s, "t-fault-record")
    create_cronjob(private.k8s, ns, "orders", suspend=True, duration=1)  # no scheduled Job: the test makes them
    url = f"sqlite:///{tmp_path / 'ledger.sqlite'}"
    rec = start_cronctl(["record", "-n", ns, "--ledger", url, "--status-every", "5s"], private.kubeconfig,
                        env=cronctl_env())

    def made(name: str) -> None:
        body = model.build_manual_job(read_cronjob(private.k8s, ns, "orders"), name)
        private.k8s.batch.create_namespaced_job(ns, body)
        wait_for(f"the recorder to keep {name}", lambda: name in _ledger_jobs(url), timeout=120)

    try:
        made("before")
        private.restart("kube-apiserver")
        made("after-restart")
        private.stop("kube-apiserver")
        assert private.compact() > 0  # past every watch's resourceVersion: the resumed watches get 410
        private.start("kube-apiserver")
        made("after-compaction")
    finally:
        rec.send_signal(15)
        _out, err = rec.communicate(timeout=120)
    assert rec.returncode == 0, err
    lists = [int(m) for m in re.findall(r"(\d+) lists", err)]
    assert lists and lists[-1] > 3, err[-3000:]  # the three first lists, and again after the 410
    assert "Traceback" not in err
