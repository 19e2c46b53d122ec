"""kubectl's habits on the real control plane (issue 34): ``-l`` filtered by the API server for every
command that lists CronJobs, kubectl's flags before the command, ``-o name`` / ``-o wide``, the
overview fitted to a 120-column terminal, and ``--request-timeout`` against the real apiserver's
address while the apiserver is frozen (SIGSTOP: the kernel still accepts the connection, nobody
answers: what a dead VPN or a hung apiserver looks like)."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from harness import cronctl as run_cronctl
from harness import on_a_terminal

from cluster_support import cronctl, cronjob_body, private_control_plane
from cronctl.errors import ExitCode

pytestmark = [pytest.mark.cluster]


def _make(k8s: Any, ns: str) -> None:
    for name, team, tz in (("orders", "billing", "Europe/Berlin"), ("invoices", "billing", None),
                           ("cleanup", "ops", "America/New_York")):
        body = cronjob_body(name, schedule="0 2 * * 1-5", tz=tz)
        body["metadata"]["labels"] = {"team": team}
        k8s.batch.create_namespaced_cron_job(ns, body)


def test_selector_is_filtered_by_the_server_for_every_listing_command(kubeconfig: str, namespace: str,
                                                                      k8s: Any, tmp_path: Path) -> None:
    _make(k8s, namespace)
    billing = ["invoices", "orders"]
    r = cronctl(["status", "-n", namespace, "-l", "team=billing", "-o", "json"], kubeconfig)
    assert r.returncode == 0, r.stderr
    assert sorted(c["cronjob"] for c in json.loads(r.stdout)["cronjobs"]) == billing
    r = cronctl(["history", "-n", namespace, "-l", "team=billing", "-o", "json"], kubeconfig)
    assert r.returncode == 0, r.stderr
    assert sorted(c["name"] for c in json.loads(r.stdout)["cronjobs"]) == billing
    r = cronctl(["lint", "-n", namespace, "-l", "team!=billing", "-o", "json", "--fail-on", "none"], kubeconfig)
    assert r.returncode == 0, r.stderr
    assert {f["object"]["name"] for f in json.loads(r.stdout)["findings"]} <= {"cleanup"}, r.stdout
    r = cronctl(["alerts", "-n", namespace, "-l", "team=billing", "--windows", "-o", "json"], kubeconfig)
    assert r.returncode == 0, r.stderr
    assert "cleanup" not in r.stdout and "orders" in r.stdout and "invoices" in r.stdout
    r = cronctl(["bundle", "-n", namespace, "--all", "-l", "team in (ops)", "--no-logs",
                 "--out", str(tmp_path / "b"), "-o", "json"], kubeconfig)
    assert r.returncode == 0, r.stderr
    assert [c["name"] for c in json.loads(r.stdout)["cronjobs"]] == ["cleanup"]
    # a selector the server cannot parse: one usage line, exit 2
    r = cronctl(["status", "-n", namespace, "-l", "team in (ops"], kubeconfig)
    assert r.returncode == ExitCode.USAGE and r.stderr.startswith("error: bad --selector 'team in (ops': "), r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_flags_before_the_command_and_o_name(kubeconfig: str, namespace: str, k8s: Any) -> None:
    _make(k8s, namespace)
    r = run_cronctl(["--kubeconfig", kubeconfig, "-n", namespace, "status", "-o", "name"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["cronjob.batch/cleanup", "cronjob.batch/invoices", "cronjob.batch/orders"]
    r = run_cronctl(["--kubeconfig", kubeconfig, "-n", "default", "status", "orders", "-n", namespace, "-o", "name"])
    assert r.returncode == 0 and r.stdout == "cronjob.batch/orders\n", r.stderr  # the command's -n wins


def test_the_overview_fits_a_120_column_terminal_and_wide_shows_all(kubeconfig: str, namespace: str,
                                                                   k8s: Any, tmp_path: Path) -> None:
    _make(k8s, namespace)
    # one namespace (no NAMESPACE column: the test's namespaces are 50-character names) on 100 columns
    _, screen = on_a_terminal(["status", "-n", namespace], kubeconfig, cwd=tmp_path, COLUMNS="100", NO_COLOR="1",
                              timeout=120)
    text = screen.decode().replace("\r\n", "\n")
    table = [ln for ln in text.splitlines() if ln.strip()]
    assert table[0].split()[:2] == ["NAME", "SCHEDULE"], text
    assert all(len(ln) <= 100 for ln in table), [len(ln) for ln in table]  # before: about 190 columns
    assert "GITOPS" not in table[0] and "NEXT" in table[0], table[0]  # the columns of least use went first
    assert len([ln for ln in table if ln.startswith(("orders ", "invoices ", "cleanup "))]) == 3, text
    # the SCHEDULE column says the schedule, not the zone again
    assert "Europe/Berlin" not in text.split("orders", 1)[1].split("cleanup")[0].split("2026-")[0], text
    argv = ["status", "-A", "-l", "team"]
    _, screen = on_a_terminal([*argv, "-o", "wide"], kubeconfig, cwd=tmp_path, COLUMNS="120", NO_COLOR="1",
                              timeout=120)
    wide = [ln for ln in screen.decode().replace("\r\n", "\n").splitlines() if ln.strip()]
    assert wide[0].split() == ["NAMESPACE", "NAME", "SCHEDULE", "ZONE", "SUSPENDED", "RUN", "LAST", "LOST", "FAILED", "DUP",
                               "NEXT", "GITOPS"], wide[0]
    orders = next(ln for ln in wide if ln.startswith(namespace) and " orders " in ln)
    assert orders.count("Europe/Berlin") == 1 and "CET" in orders, orders  # in ZONE only; NEXT in its time


def test_request_timeout_against_a_frozen_apiserver(tmp_path: Path) -> None:
    """The real apiserver's address, its process stopped: before, 60.9 s of silence; now the bound."""
    from harness import cluster

    with private_control_plane("cronctl-frozen-") as (info, _k8s):
        pid = cluster.existing(info.state_dir).running_pid("kube-apiserver")
        assert pid is not None
        os.kill(pid, signal.SIGSTOP)
        try:
            t0 = time.monotonic()
            r = run_cronctl(["status", "-A", "--request-timeout", "2s"], info.kubeconfig, timeout=60)
            took = time.monotonic() - t0
            assert r.returncode == ExitCode.API_ERROR, (r.returncode, r.stderr)
            assert r.stderr.strip() == (f"error: cannot reach the API server at {info.server}: no answer within 2s "
                                        "(--request-timeout)"), r.stderr
            assert took < 30, took  # 2 s, plus the start of a process on a loaded machine (before: 60.9 s)
            code, screen = on_a_terminal(["status", "-A", "--request-timeout", "3s"], info.kubeconfig, cwd=tmp_path,
                                         timeout=60)
            assert code == ExitCode.API_ERROR and f"connecting to {info.server} \u2026".encode() in screen, screen
        finally:
            os.kill(pid, signal.SIGCONT)
