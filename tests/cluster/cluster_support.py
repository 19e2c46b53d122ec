"""Helpers shared by the tests on the real control plane (run-manual, status, restore, bundle,
fidelity).

Setup and assertions go through the kubernetes client (``k8s`` fixture) with raw JSON, never
through cronctl's own code; cronctl itself is run as a separate process, exactly as an operator
runs it (exit code, stdout, stderr).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
T = TypeVar("T")
RECORD_PREFIX = "cronctl.dev/"


# The default schedule is yearly, so the controller creates no Job of its own during a test
# (a */1 CronJob can start one between the test's create and cronctl's suspend, which cronctl
# rightly refuses); tests about the controller's own Jobs pass a schedule.
def cronjob_body(name: str, *, schedule: str = "0 0 1 1 *", suspend: bool = False, duration: float = 3,
                 exit_code: int = 0, backoff: int = 0, deadline: int | None = None, tz: str | None = None,
                 log: str = "hello from the job", policy: str = "Forbid") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "schedule": schedule, "concurrencyPolicy": policy, "suspend": suspend,
        "successfulJobsHistoryLimit": 10, "failedJobsHistoryLimit": 10,
        "jobTemplate": {
            "metadata": {"labels": {"app": name, "tier": "batch"}, "annotations": {"team": "integrations"}},
            "spec": {"backoffLimit": backoff, "template": {
                "metadata": {"annotations": {"sim.cronctl.dev/duration-seconds": str(duration),
                                             "sim.cronctl.dev/exit-code": str(exit_code),
                                             "sim.cronctl.dev/log": log}},
                "spec": {"restartPolicy": "Never",
                         "initContainers": [{"name": "prepare", "image": "busybox:1.36"}],
                         "containers": [{"name": "main", "image": "busybox:1.36",
                                         "env": [{"name": "MODE", "value": "sync"}]}]}}},
        },
    }
    if deadline is not None:
        spec["startingDeadlineSeconds"] = deadline
    if tz is not None:
        spec["timeZone"] = tz
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name}, "spec": spec}


def create_cronjob(k8s: Any, ns: str, name: str, **kw: Any) -> dict[str, Any]:
    k8s.batch.create_namespaced_cron_job(ns, cronjob_body(name, **kw))
    return read_cronjob(k8s, ns, name)


def read_cronjob(k8s: Any, ns: str, name: str) -> dict[str, Any]:
    return dict(json.loads(k8s.batch.read_namespaced_cron_job(name, ns, _preload_content=False).data))


def list_jobs(k8s: Any, ns: str) -> list[dict[str, Any]]:
    return list(json.loads(k8s.batch.list_namespaced_job(ns, _preload_content=False).data)["items"])


def read_job(k8s: Any, ns: str, name: str) -> dict[str, Any] | None:
    for j in list_jobs(k8s, ns):
        if j["metadata"]["name"] == name:
            return j
    return None


#: cronctl's trail of finished runs: kept on purpose after the record is cleared (not part of the record)
RUNS_ANNOTATION = "cronctl.dev/runs"


def record_annotations(cj: dict[str, Any]) -> dict[str, str]:
    """cronctl's annotations on the CronJob but the trail of finished runs: the run record (and a pause)."""
    return {k: v for k, v in (cj["metadata"].get("annotations") or {}).items()
            if k.startswith(RECORD_PREFIX) and k != RUNS_ANNOTATION}


def terminal(job: dict[str, Any]) -> str | None:
    for c in (job.get("status") or {}).get("conditions") or []:
        if c["type"] in ("Complete", "Failed") and c["status"] == "True":
            return str(c["type"])
    return None


def wait_for(what: str, probe: Callable[[], T | None], timeout: float, every: float = 0.5) -> T:
    """Call `probe` until it returns something truthy; fail naming `what` after `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        got = probe()
        if got:
            return got
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(every)


def service_account_kubeconfig(k8s: Any, admin_kubeconfig: str, ns: str, account: str, path: Path) -> Path:
    """Write to `path` (mode 0600) a kubeconfig that acts as ServiceAccount `account` of `ns`.

    The token is a fresh one-hour TokenRequest; the server and CA come from the admin
    kubeconfig's current context, and the namespace `ns` is the context's default. The account
    and its RBAC must already exist.
    """
    token = k8s.core.create_namespaced_service_account_token(
        account, ns, {"spec": {"expirationSeconds": 3600}}).status.token
    admin = yaml.safe_load(Path(admin_kubeconfig).read_text())
    ctx = next(c for c in admin["contexts"] if c["name"] == admin["current-context"])
    cluster = next(c for c in admin["clusters"] if c["name"] == ctx["context"]["cluster"])
    kc = {"apiVersion": "v1", "kind": "Config", "clusters": [cluster],
          "users": [{"name": account, "user": {"token": token}}],
          "contexts": [{"name": account, "context": {"cluster": cluster["name"], "user": account,
                                                     "namespace": ns}}],
          "current-context": account}
    path.write_text(yaml.safe_dump(kc))
    path.chmod(0o600)
    return path


def kubectl_bin() -> str:
    """The kubectl built with the cluster (same version as the server)."""
    out = subprocess.run([str(ROOT / "scripts" / "cluster"), "env"], stdout=subprocess.PIPE, text=True,
                         check=True).stdout
    for line in out.splitlines():
        if line.startswith("export PATH="):
            return line.split('"')[1].split(":")[0] + "/kubectl"
    raise AssertionError(f"no PATH in scripts/cluster env: {out}")


def run_kubectl(kubeconfig: str, *args: str) -> str:
    r = subprocess.run([kubectl_bin(), "--kubeconfig", kubeconfig, *args],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
    assert r.returncode == 0, f"kubectl {' '.join(args)} failed: {r.stderr}"
    return r.stdout


def sigint_default() -> None:
    """``preexec_fn`` for a cronctl the test will Ctrl-C: SIGINT back to its default. A shell without
    job control starts background commands with SIGINT ignored, and Python keeps an ignored SIGINT,
    so a suite launched with ``cmd &`` would otherwise test a cronctl that cannot be interrupted."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def cronctl_cmd(args: list[str], kubeconfig: str) -> list[str]:
    return [sys.executable, "-m", "cronctl", *args, "--kubeconfig", kubeconfig]


def cronctl_env(run_dir: Path | None = None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRONCTL_TEST_KILL")}
    env["NO_COLOR"] = "1"
    env["CI"] = "true"  # never a terminal: no prompts, plain progress lines
    if run_dir is not None:
        env["CRONCTL_RUN_DIR"] = str(run_dir)
    env.update(extra)
    return env


def cronctl(args: list[str], kubeconfig: str, *, run_dir: Path | None = None, timeout: float = 300,
            **env: str) -> subprocess.CompletedProcess[str]:
    """Run cronctl as an operator would; stdin is not a terminal."""
    if run_dir is not None:
        run_dir.mkdir(parents=True, exist_ok=True)
    return subprocess.run(cronctl_cmd(args, kubeconfig), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=timeout, env=cronctl_env(run_dir, **env),
                          cwd=str(run_dir) if run_dir else None)


def run_record(run_dir: Path) -> dict[str, Any]:
    recs = sorted(run_dir.glob("*/record.json"))
    assert len(recs) == 1, f"expected one run directory in {run_dir}, found {recs}"
    return dict(json.loads(recs[0].read_text()))


def owned_jobs(k8s: Any, ns: str, cj: dict[str, Any]) -> list[dict[str, Any]]:
    uid = cj["metadata"]["uid"]
    return [j for j in list_jobs(k8s, ns)
            if any(r.get("uid") == uid and r.get("controller") for r in j["metadata"].get("ownerReferences") or [])]


def on_a_terminal(args: list[str], kubeconfig: str, answer: str | list[str], tmp_path: Path,
                  wait: float = 120) -> tuple[int, str]:
    """Run cronctl with stdin/stdout/stderr on a pseudo-terminal, answer the prompts (one answer
    each, in order), return (code, screen)."""
    import os
    import pty
    import select
    import time

    master, slave = pty.openpty()
    env = cronctl_env(tmp_path)
    env.pop("CI", None)
    env.pop("NO_COLOR", None)
    env["TERM"] = "xterm"
    env["COLUMNS"] = "200"
    p = subprocess.Popen(cronctl_cmd(args, kubeconfig), stdin=slave, stdout=slave, stderr=slave, env=env,
                         cwd=str(tmp_path), close_fds=True)
    os.close(slave)
    screen = b""
    answers = [answer] if isinstance(answer, str) else list(answer)
    answered = 0
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        r, _, _ = select.select([master], [], [], 0.2)
        if r:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            screen += chunk
        if answered < len(answers) and screen.count(b"[y/N]") > answered:
            os.write(master, answers[answered].encode() + b"\n")
            answered += 1
        if p.poll() is not None and not r:
            break
    os.close(master)
    return p.wait(timeout=30), screen.decode("utf-8", "replace")
