"""No wait is silent (issue 34): a server that accepts connections and never answers (a dead VPN, a
black-holed load balancer) fails each request within ``--request-timeout`` with one line and exit 7,
and on a terminal says whom it waits for after about a second. Kubernetes' flags before the command
(``cronctl -n ns status``), and a malformed kubeconfig (one line, exit 5).

The server here is real: a listening TCP socket on 127.0.0.1 that accepts every connection, reads
what the client sends (the request line, for a plain-HTTP server) and never writes a byte. That is a
behaviour a real server has and the local control plane cannot be made to have on demand.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import cronctl, on_a_terminal

from cronctl.errors import ExitCode
from conftest import RunCli


class SilentServer:
    """Accepts, reads, never answers. ``requests`` holds the first line of each plain-HTTP request."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.requests: list[str] = []
        self._conns: list[socket.socket] = []
        self._stop = False
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while not self._stop:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self._conns.append(c)  # kept open: the client waits for an answer that never comes
            threading.Thread(target=self._read, args=(c,), daemon=True).start()

    def _read(self, c: socket.socket) -> None:
        try:
            data = c.recv(65536)
        except OSError:
            return
        if data[:4] in (b"GET ", b"POST"):
            self.requests.append(data.split(b"\r\n", 1)[0].decode())

    def close(self) -> None:
        self._stop = True
        self.sock.close()
        for c in self._conns:
            c.close()


@pytest.fixture()
def silent() -> Iterator[SilentServer]:
    s = SilentServer()
    try:
        yield s
    finally:
        s.close()


def kubeconfig(tmp_path: Path, port: int, *, scheme: str = "https", namespace: str = "") -> Path:
    """Two contexts: ``tls`` (https, the default) and ``plain`` (http, the request line readable)."""
    ns = f", namespace: {namespace}" if namespace else ""
    p = tmp_path / "kubeconfig"
    p.write_text(f"""apiVersion: v1
kind: Config
clusters:
- name: tls
  cluster: {{server: "https://127.0.0.1:{port}", insecure-skip-tls-verify: true}}
- name: plain
  cluster: {{server: "http://127.0.0.1:{port}"}}
users:
- name: u
  user: {{token: not-a-secret}}
contexts:
- name: tls
  context: {{cluster: tls, user: u{ns}}}
- name: plain
  context: {{cluster: plain, user: u{ns}}}
current-context: {"tls" if scheme == "https" else "plain"}
""")
    return p


def _error_lines(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.strip()]


# -- --request-timeout --------------------------------------------------------------------------------

def test_a_server_that_never_answers_fails_within_the_default_timeout(silent: SilentServer, tmp_path: Path,
                                                                     run_cli: RunCli) -> None:
    """Before: 60.9 s of nothing, then exit 7. Now the default, 10 s per request, one line."""
    kc = kubeconfig(tmp_path, silent.port)
    t0 = time.monotonic()
    res = run_cli("status", "--kubeconfig", str(kc))
    took = time.monotonic() - t0
    assert res.exit_code == ExitCode.API_ERROR, res
    assert _error_lines(res.stderr) == [
        f"error: cannot reach the API server at https://127.0.0.1:{silent.port}: no answer within 10s "
        "(--request-timeout)"], res.stderr
    # 10 s, plus importing the client on a machine that may be loaded (CI shares its cores); before: 60.9 s
    assert 9.5 <= took < 45, took
    assert "connecting to" not in res.stderr  # not a terminal: no progress line


@pytest.mark.parametrize("argv", [
    ["status", "--request-timeout", "1s"],  # after the command
    ["--request-timeout", "1", "status"],  # before it (a bare number is seconds)
    ["--request-timeout", "30s", "status", "--request-timeout", "1s"],  # the command's own wins
    ["--request-timeout", "1s", "history", "-A"],
    ["--request-timeout", "1s", "explain", "cronjob/orders"],
    ["--request-timeout", "1s", "lint", "-A"],
    ["--request-timeout", "1s", "alerts", "-A"],
    ["--request-timeout", "1s", "runbook", "manual-run", "orders"],
])
def test_request_timeout_bounds_every_command_that_reads_the_api(silent: SilentServer, tmp_path: Path,
                                                                 run_cli: RunCli, argv: list[str]) -> None:
    kc = kubeconfig(tmp_path, silent.port)
    t0 = time.monotonic()
    res = run_cli(*argv, env={"KUBECONFIG": str(kc)})
    took = time.monotonic() - t0
    assert res.exit_code == ExitCode.API_ERROR, res
    assert f"error: cannot reach the API server at https://127.0.0.1:{silent.port}: no answer within 1s" \
        in res.stderr, res.stderr
    assert len(_error_lines(res.stderr)) == 1, res.stderr
    assert took < 25, took  # 1 s, plus importing the client and the command on a loaded machine (before: 60.9 s)


@pytest.mark.parametrize("argv", [
    ["pause", "orders", "--reason", "x", "--yes"], ["resume", "orders", "--yes"], ["restore", "orders", "--yes"],
    ["wait", "orders"], ["run-manual", "orders", "--yes"], ["backfill", "orders", "--missed", "--yes"],
    ["bundle", "orders", "--out", "{out}"],
])
def test_the_writers_and_waiters_take_request_timeout_too(silent: SilentServer, tmp_path: Path, run_cli: RunCli,
                                                          argv: list[str]) -> None:
    kc = kubeconfig(tmp_path, silent.port)
    argv = [a.replace("{out}", str(tmp_path / "b")) for a in argv]
    t0 = time.monotonic()
    res = run_cli(*argv, "--request-timeout", "1s", env={"KUBECONFIG": str(kc)})
    took = time.monotonic() - t0
    assert res.exit_code == ExitCode.API_ERROR, res
    assert "no answer within 1s (--request-timeout)" in res.stderr, res.stderr
    assert took < 25, took


@pytest.mark.parametrize("value, code, words", [
    ("abc", ExitCode.USAGE, "bad --request-timeout 'abc': "),
    ("-1s", ExitCode.USAGE, "bad --request-timeout '-1s': must not be negative"),
    ("3651d", ExitCode.USAGE, "bad --request-timeout '3651d': at most 3650d"),
])
def test_a_bad_request_timeout_is_one_usage_line(run_cli: RunCli, tmp_path: Path, value: str, code: int,
                                                 words: str) -> None:
    for argv in (["--request-timeout", value, "status"], ["status", "--request-timeout", value]):
        res = run_cli(*argv, env={"KUBECONFIG": str(tmp_path / "none")})
        assert res.exit_code == code, res
        [line] = _error_lines(res.stderr)
        assert line.startswith("error: " + words) and "MAX_" not in line, line


def test_request_timeout_zero_means_no_limit(silent: SilentServer, tmp_path: Path) -> None:
    """0 is kubectl's "no timeout": the command is still waiting after the 10 s default."""
    from harness import start_cronctl

    kc = kubeconfig(tmp_path, silent.port)
    p = start_cronctl(["--request-timeout", "0", "status", "--kubeconfig", str(kc)])
    try:
        with pytest.raises(Exception, match="timed out"):
            p.communicate(timeout=12)
    finally:
        p.kill()
        p.communicate()


def test_on_a_terminal_it_says_whom_it_waits_for_after_a_second(silent: SilentServer, tmp_path: Path) -> None:
    kc = kubeconfig(tmp_path, silent.port)
    code, screen = on_a_terminal(["status", "--request-timeout", "3s"], kc, cwd=tmp_path, timeout=30)
    text = screen.decode(errors="replace")
    assert code == ExitCode.API_ERROR, text
    assert f"connecting to https://127.0.0.1:{silent.port} \u2026" in text, text
    assert text.count("connecting to") == 1, text
    assert text.index("connecting to") < text.index("error: cannot reach the API server"), text


def test_a_prompt_answer_prints_no_connecting_line(tmp_path: Path) -> None:
    """A command that needs no server (explain of a schedule) never says it connects."""
    code, screen = on_a_terminal(["explain", "@daily"], cwd=tmp_path, timeout=30)
    assert code == 0 and b"connecting to" not in screen


# -- kubectl's flags before the command -----------------------------------------------------------------

def _plain(tmp_path: Path, silent: SilentServer, namespace: str = "") -> Path:
    return kubeconfig(tmp_path, silent.port, scheme="http", namespace=namespace)


def _wait_for_request(silent: SilentServer, n: int = 1) -> list[str]:
    deadline = time.monotonic() + 5
    while len(silent.requests) < n and time.monotonic() < deadline:
        time.sleep(0.05)
    return list(silent.requests)


@pytest.mark.parametrize("argv, path", [
    (["-n", "billing", "status"], "/apis/batch/v1/namespaces/billing/cronjobs?"),
    (["--namespace", "billing", "status"], "/apis/batch/v1/namespaces/billing/cronjobs?"),
    (["-n", "billing", "status", "-n", "ops"], "/apis/batch/v1/namespaces/ops/cronjobs?"),  # the command's wins
    (["status"], "/apis/batch/v1/namespaces/fromctx/cronjobs?"),  # neither: the context's
    (["-n", "billing", "history"], "/apis/batch/v1/namespaces/billing/cronjobs?"),
    (["-n", "billing", "status", "orders"], "/apis/batch/v1/namespaces/billing/cronjobs/orders "),
])
def test_namespace_before_the_command_is_used(silent: SilentServer, tmp_path: Path, run_cli: RunCli,
                                              argv: list[str], path: str) -> None:
    kc = _plain(tmp_path, silent, namespace="fromctx")
    res = run_cli("--kubeconfig", str(kc), "--request-timeout", "1s", *argv)
    assert res.exit_code == ExitCode.API_ERROR, res
    [first, *_] = _wait_for_request(silent)
    assert first.startswith("GET " + path), first


def test_context_and_kubeconfig_before_the_command(silent: SilentServer, tmp_path: Path) -> None:
    """As ``kubectl cronctl --kubeconfig K --context C -n ns status``: a process, flags before the command."""
    kc = _plain(tmp_path, silent)
    # the current context is plain-HTTP; --context tls before the command picks the TLS cluster
    res = cronctl(["--kubeconfig", str(kc), "--context", "tls", "-n", "ops", "--request-timeout", "1s", "status"],
                  timeout=60)
    assert res.returncode == ExitCode.API_ERROR, res
    assert f"https://127.0.0.1:{silent.port}" in res.stderr, res.stderr
    res = cronctl(["--kubeconfig", str(tmp_path / "missing"), "status", "--kubeconfig", str(kc),
                   "--request-timeout", "1s"], timeout=60)  # the command's own --kubeconfig wins
    assert res.returncode == ExitCode.API_ERROR and f"http://127.0.0.1:{silent.port}" in res.stderr, res.stderr


def test_a_bad_namespace_before_the_command_is_bad_input(run_cli: RunCli) -> None:
    res = run_cli("-n", "Not_A_Name", "status")
    assert res.exit_code == ExitCode.BAD_INPUT, res
    assert len(_error_lines(res.stderr)) == 1 and "Not_A_Name" in res.stderr


# -- a malformed kubeconfig ----------------------------------------------------------------------------

@pytest.mark.parametrize("text, words", [
    ("garbage: [\n", "kubeconfig:2:1: malformed YAML: expected the node content"),
    ("", "the file is empty"),
    ("- a\n- b\n", "not a kubeconfig (a YAML list"),
    ("apiVersion: v1\nkind: Config\nclusters: []\nusers: []\n", "Expected key current-context"),
    ("apiVersion: v1\nkind: Config\ncurrent-context: x\nclusters: []\nusers: []\ncontexts: []\n",
     "Expected object with name x"),
    ("contexts: {a: 1}\n", "contexts and clusters must be lists"),
    ("\xff\xfe garbage", "not UTF-8 text"),
])
def test_a_malformed_kubeconfig_is_one_line_exit_5(run_cli: RunCli, tmp_path: Path, text: str,
                                                   words: str) -> None:
    p = tmp_path / "kubeconfig"
    p.write_bytes(text.encode("latin-1"))
    for argv in (["status", "--kubeconfig", str(p)], ["--kubeconfig", str(p), "status"]):
        res = run_cli(*argv)
        assert res.exit_code == ExitCode.BAD_INPUT, res
        [line] = _error_lines(res.stderr)
        assert line.startswith(f"error: cannot load kubeconfig {p}") and words in line, line
        assert "internal error" not in line and "\\n" not in line, line
    res = run_cli("status", env={"KUBECONFIG": str(p)})  # from $KUBECONFIG too
    assert res.exit_code == ExitCode.BAD_INPUT and len(_error_lines(res.stderr)) == 1, res
