"""The test harness as a library: the local control plane, kubectl, and cronctl run as a process.

Each of these is found or started in exactly one place, here:

``cluster``
    ``scripts/cluster.py`` imported as a module (``up() -> ClusterInfo``, ``down()``, ``stop()``,
    ``start()``, ``compact()``, ``logs()``, ...). ``scripts/cluster`` is the same code for a shell.
``kubectl_path()``
    The kubectl to run: the one built with the server that runs (same version), else a real kubectl
    on PATH; None when there is none.
``start_cronctl()``
    The one way a test starts cronctl as an operator would: a separate process (``python -m cronctl``
    of this interpreter, or the installed console script next to it), its environment
    (``cronctl_env``), its run directory. ``cronctl()`` runs it to the end, ``on_a_terminal()`` runs
    it on a pseudo-terminal and answers its prompts. In-process runs (``cronctl.cli.main``) need none
    of this.

Only the standard library and cronctl's test dependencies are used; nothing here knows pytest.
"""

from __future__ import annotations

import importlib.util
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _load_cluster_script() -> ModuleType:
    """scripts/cluster.py as a module (scripts/ is no package); one copy per process."""
    name = "cronctl_scripts_cluster"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / "cluster.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # before exec: its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


cluster = _load_cluster_script()
ClusterInfo = cluster.ClusterInfo
ClusterError = cluster.ClusterError


def requested_k8s_version() -> str | None:
    """The Kubernetes version the tests ask for: ``$CRONCTL_TEST_K8S_VERSION`` (None: the default)."""
    return os.environ.get("CRONCTL_TEST_K8S_VERSION", "").strip() or None


# ---------------------------------------------------------------------------------------------
# kubectl
# ---------------------------------------------------------------------------------------------

def _is_kubectl(path: str) -> bool:
    try:
        r = subprocess.run([path, "version", "--client", "-o", "json"], capture_output=True, text=True, timeout=60)
        return r.returncode == 0 and "gitVersion" in json.loads(r.stdout).get("clientVersion", {})
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return False


def kubectl_path() -> str | None:
    """The kubectl built with the cluster (``scripts/cluster install``; the version that runs, else the
    one asked for, else the newest), else a ``kubectl`` on PATH that really is kubectl, else None."""
    built = cluster.kubectl()
    if os.access(built, os.X_OK):
        return str(built)
    other = shutil.which("kubectl")
    return other if other and _is_kubectl(other) else None


def run_kubectl(kubeconfig: str | os.PathLike[str], *args: str, check: bool = True,
                timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """kubectl against `kubeconfig`; with `check`, a failure fails the test with kubectl's stderr."""
    exe = kubectl_path()
    assert exe is not None, "no kubectl: run scripts/cluster install"
    r = subprocess.run([exe, "--kubeconfig", str(kubeconfig), *args], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=timeout)
    if check:
        assert r.returncode == 0, f"kubectl {' '.join(args)} failed: {r.stderr}"
    return r


# ---------------------------------------------------------------------------------------------
# cronctl as a process
# ---------------------------------------------------------------------------------------------

def cronctl_script() -> str:
    """The installed ``cronctl`` console script of this interpreter's environment (its bin directory)."""
    exe = shutil.which("cronctl", path=str(Path(sys.executable).parent))
    assert exe is not None, f"no cronctl console script next to {sys.executable}: pip install -e ."
    return exe


def cronctl_argv(args: Sequence[str], kubeconfig: str | os.PathLike[str] | None = None, *,
                 script: bool = False) -> list[str]:
    """The command line: ``python -m cronctl ARGS`` (or the console script) ``[--kubeconfig K]``."""
    head = [cronctl_script()] if script else [sys.executable, "-m", "cronctl"]
    return [*head, *args, *(["--kubeconfig", str(kubeconfig)] if kubeconfig is not None else [])]


def cronctl_env(run_dir: str | os.PathLike[str] | None = None, *, terminal: bool = False,
                **extra: str) -> dict[str, str]:
    """This process's environment for cronctl: no test hooks or debug switch leak in; without a
    terminal also ``NO_COLOR=1`` and ``CI=true`` (no prompts, plain progress lines), on a terminal none
    of ``NO_COLOR``, ``FORCE_COLOR``, ``CI``; ``run_dir``
    becomes ``$CRONCTL_RUN_DIR``; `extra` last."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRONCTL_TEST_KILL") and k != "CRONCTL_DEBUG"}
    if terminal:
        for k in ("NO_COLOR", "FORCE_COLOR", "CI"):
            env.pop(k, None)
    else:
        env["NO_COLOR"] = "1"
        env["CI"] = "true"
    if run_dir is not None:
        env["CRONCTL_RUN_DIR"] = str(run_dir)
    env.update(extra)
    return env


def _sigint_default() -> None:
    """``preexec_fn``: SIGINT back to its default. A shell without job control starts background
    commands with SIGINT ignored, and Python keeps an ignored SIGINT, so a suite launched with
    ``cmd &`` would otherwise test a cronctl that cannot be interrupted."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_cronctl(args: Sequence[str], kubeconfig: str | os.PathLike[str] | None = None, *,
                  run_dir: Path | None = None, cwd: str | os.PathLike[str] | None = None,
                  env: dict[str, str] | None = None, script: bool = False, python_code: str | None = None,
                  stdin: Any = subprocess.DEVNULL, stdout: Any = subprocess.PIPE, stderr: Any = subprocess.PIPE,
                  text: bool = True) -> subprocess.Popen[Any]:
    """Start cronctl as a separate process, as an operator runs it; the one place tests do.

    ``run_dir`` is created, becomes ``$CRONCTL_RUN_DIR`` and the working directory (unless ``cwd``);
    ``env`` defaults to ``cronctl_env(run_dir)``; SIGINT is at its default so a test can Ctrl-C it.
    ``python_code`` runs ``python -c CODE ARGS`` instead (a test that drives cronctl's own modules).
    """
    if run_dir is not None:
        run_dir.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-c", python_code, *args] if python_code is not None else \
        cronctl_argv(args, kubeconfig, script=script)
    return subprocess.Popen(argv, stdin=stdin, stdout=stdout, stderr=stderr, text=text,
                            env=env if env is not None else cronctl_env(run_dir),
                            cwd=str(cwd if cwd is not None else run_dir) if (cwd or run_dir) else None,
                            preexec_fn=_sigint_default)


def cronctl(args: Sequence[str], kubeconfig: str | os.PathLike[str] | None = None, *,
            run_dir: Path | None = None, cwd: str | os.PathLike[str] | None = None, timeout: float = 300,
            input: str | None = None, script: bool = False, python_code: str | None = None,
            env: dict[str, str] | None = None, **extra_env: str) -> subprocess.CompletedProcess[str]:
    """Run cronctl to the end (stdin is not a terminal): exit code, stdout, stderr. ``extra_env`` is
    added to ``cronctl_env(run_dir)``; ``env`` replaces it."""
    if env is None:
        env = cronctl_env(run_dir, **extra_env)
    p = start_cronctl(args, kubeconfig, run_dir=run_dir, cwd=cwd, env=env, script=script, python_code=python_code,
                      stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL)
    try:
        out, err = p.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


def on_a_terminal(args: Sequence[str], kubeconfig: str | os.PathLike[str] | None = None, *,
                  cwd: Path, answers: Sequence[str] = (), timeout: float = 120, run_dir: Path | None = None,
                  python_code: str | None = None, script: bool = False, stdin_terminal: bool = True,
                  **env: str) -> tuple[int, bytes]:
    """Run cronctl with stdout and stderr (and stdin, unless not `stdin_terminal`) on a pseudo-terminal;
    answer each ``[y/N]`` prompt with the next of `answers`; return (exit code, the bytes the terminal received). `env` is added to
    ``cronctl_env(run_dir, terminal=True)`` (default ``TERM=xterm``, ``COLUMNS=200``). Fails (after
    killing it) if it runs past `timeout`."""
    env = {"TERM": "xterm", "COLUMNS": "200", **env}
    master, slave = os.openpty()
    try:
        p = start_cronctl(args, kubeconfig, cwd=cwd, run_dir=run_dir, script=script, python_code=python_code,
                          env=cronctl_env(run_dir, terminal=True, **env),
                          stdin=slave if stdin_terminal else subprocess.DEVNULL, stdout=slave, stderr=slave,
                          text=False)
    finally:
        os.close(slave)
    screen = b""
    answered = 0
    deadline = time.monotonic() + timeout
    try:
        while True:
            if time.monotonic() > deadline:
                p.kill()
                raise AssertionError(f"cronctl {list(args)} still running after {timeout}s; screen:\n{screen!r}")
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: the child closed its end
                    break
                if not chunk:
                    break
                screen += chunk
            if answered < len(answers) and screen.count(b"[y/N]") > answered:
                os.write(master, answers[answered].encode() + b"\n")
                answered += 1
            if p.poll() is not None and not ready:
                break
    finally:
        os.close(master)
    return p.wait(timeout=30), screen
