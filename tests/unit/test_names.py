"""Names are Kubernetes names before any request or path is made of them (issue 12, item 4).

The commands run for real (``cronctl.cli.main``) against a kubeconfig whose server is a local
HTTP listener that records every request: a refused name must leave it untouched, and a valid
one must reach it (so the listener does see what cronctl sends).
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from itertools import product
from pathlib import Path

import pytest

from cronctl import names
from cronctl.cli import main
from cronctl.errors import BadInput

GOOD_CRONJOBS = ["a", "mp-orders-sync", "a.b-c", "x" * 52, "0abc"]
BAD_CRONJOBS = ["", "../../other/cronjobs/victim", "..", ".", "a/b", "A", "a_b", "-a", "a-", "a..b", ".a",
                "x" * 53, "a b", "a\x1b[2J", "deployment/x", "cronjob/", "cronjob/../x", "a\u202eb", "é"]
BAD_NAMESPACES = ["", "..", "sec/../other", "a.b", "A", "x" * 64, "-a", "a\n"]
BAD_JOB_NAMES = ["", "../x", "a/b", "x" * 64, "A"]


@pytest.mark.parametrize("text", GOOD_CRONJOBS)
def test_a_valid_cronjob_name_is_kept(text: str) -> None:
    assert names.cronjob_name(text) == text


@pytest.mark.parametrize(("prefix", "name"), list(product(list(names.CRONJOB_TYPES) + ["CronJob", "CJ"], ["a", "b.c"])))
def test_every_kubectl_type_prefix_of_a_cronjob_gives_the_bare_name(prefix: str, name: str) -> None:
    assert names.cronjob_name(f"{prefix}/{name}") == name
    assert names.is_cronjob_ref(f"{prefix}/{name}")


@pytest.mark.parametrize("text", BAD_CRONJOBS)
def test_an_invalid_cronjob_name_is_refused_in_one_line(text: str) -> None:
    with pytest.raises(BadInput) as e:
        names.cronjob_name(text)
    assert "\n" not in e.value.message and "\x1b" not in e.value.message
    assert "cronjob" in e.value.message


@pytest.mark.parametrize("text", BAD_NAMESPACES)
def test_an_invalid_namespace_is_refused(text: str) -> None:
    with pytest.raises(BadInput, match="namespace"):
        names.namespace(text)


@pytest.mark.parametrize("text", BAD_JOB_NAMES)
def test_an_invalid_job_name_is_refused(text: str) -> None:
    with pytest.raises(BadInput, match="job"):
        names.job_name(text)


def test_the_limits_are_the_api_servers() -> None:
    assert names.namespace("n" * 63) and names.job_name("j" * 63) and names.cronjob_name("c" * 52)
    assert names.job_name("a.b")  # a Job name is a subdomain, like the API's
    with pytest.raises(BadInput, match="52"):
        names.cronjob_name("c" * 53)


def test_a_schedule_with_a_slash_is_not_a_cronjob_reference() -> None:
    assert not names.is_cronjob_ref("*/5 * * * *")
    assert not names.is_cronjob_ref("mp-orders-sync")


# -- every command, end to end -----------------------------------------------------------------

class _Recorder(http.server.BaseHTTPRequestHandler):
    seen: list[str] = []

    def _answer(self) -> None:
        type(self).seen.append(f"{self.command} {self.path}")
        body = b'{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}'
        self.send_response(404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PATCH = _answer

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def api(tmp_path: Path) -> Iterator[tuple[str, list[str]]]:
    """A kubeconfig pointing at a local listener; the list of requests it got."""
    seen: list[str] = []
    handler = type("Handler", (_Recorder,), {"seen": seen})
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    kc = tmp_path / "kubeconfig"
    kc.write_text(f"""apiVersion: v1
kind: Config
clusters: [{{name: c, cluster: {{server: "http://127.0.0.1:{srv.server_address[1]}"}}}}]
users: [{{name: u, user: {{token: t}}}}]
contexts: [{{name: ok, context: {{cluster: c, user: u, namespace: sec}}}},
           {{name: evil, context: {{cluster: c, user: u, namespace: "../other"}}}}]
current-context: ok
""")
    try:
        yield str(kc), seen
    finally:
        srv.shutdown()
        srv.server_close()


#: every command that takes a CronJob name, with the extra arguments it needs to get that far
COMMANDS = [
    ["run-manual", "{}", "--yes", "--reason", "r"],
    ["status", "{}"], ["restore", "{}", "--yes"], ["pause", "{}", "--reason", "r", "--yes"],
    ["resume", "{}", "--yes"], ["backfill", "{}", "--yes"], ["bundle", "{}"], ["history", "{}"],
    ["lint", "{}"], ["runbook", "manual-run", "{}"], ["explain", "cronjob/{}"], ["wait", "{}"],
]
ATTACKS = ["../../other/cronjobs/victim", "cronjob/../x", "cronjobs.batch/a/b", "x%2F..", "A"]


def _run(argv: list[str], kubeconfig: str, capfd: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main([*argv, "--kubeconfig", kubeconfig])
    return code, capfd.readouterr().err


@pytest.mark.parametrize(("cmd", "bad"), list(product(COMMANDS, ATTACKS)),
                         ids=lambda v: " ".join(v) if isinstance(v, list) else v)
def test_every_command_refuses_a_path_as_cronjob_name_with_exit_5_and_no_request(
        api: tuple[str, list[str]], capfd: pytest.CaptureFixture[str], tmp_path: Path, cmd: list[str],
        bad: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    kubeconfig, seen = api
    argv = [a.format(bad.removeprefix("cronjob/") if a == "cronjob/{}" and bad.startswith("cronjob/") else bad)
            for a in cmd]
    code, err = _run([*argv, "-n", "sec"], kubeconfig, capfd)
    assert code == 5, err
    assert seen == []
    assert len(err.strip().splitlines()) == 1 and err.startswith("error: bad cronjob name"), err
    assert not list(tmp_path.rglob("runs")) and not list(tmp_path.parent.rglob("other"))


@pytest.mark.parametrize("cmd", COMMANDS, ids=lambda v: v[0])
def test_every_command_refuses_a_bad_namespace_with_no_request(
        api: tuple[str, list[str]], capfd: pytest.CaptureFixture[str], cmd: list[str]) -> None:
    kubeconfig, seen = api
    code, err = _run([*(a.format("good") for a in cmd), "-n", "../other"], kubeconfig, capfd)
    assert (code, seen) == (5, [])
    assert err.startswith("error: bad namespace name '../other'"), err


def test_a_bad_namespace_in_the_kubeconfig_context_is_refused_with_no_request(
        api: tuple[str, list[str]], capfd: pytest.CaptureFixture[str]) -> None:
    kubeconfig, seen = api
    code, err = _run(["status", "good", "--context", "evil"], kubeconfig, capfd)
    assert (code, seen) == (5, [])
    assert "bad namespace name '../other'" in err


def test_a_bad_job_name_is_refused_with_no_request(api: tuple[str, list[str]],
                                                  capfd: pytest.CaptureFixture[str]) -> None:
    kubeconfig, seen = api
    code, err = _run(["run-manual", "good", "--job-name", "../../x", "--yes", "--reason", "r"], kubeconfig, capfd)
    assert (code, seen) == (5, [])
    assert err.startswith("error: bad job name '../../x'"), err


def test_a_valid_name_does_reach_the_api_server_so_the_listener_sees_requests(
        api: tuple[str, list[str]], capfd: pytest.CaptureFixture[str]) -> None:
    kubeconfig, seen = api
    code, err = _run(["status", "cronjobs.batch/good"], kubeconfig, capfd)
    assert code == 6, err  # the listener answers 404
    assert "GET /apis/batch/v1/namespaces/sec/cronjobs/good" in seen


def test_the_run_directory_refuses_a_name_that_leaves_its_root(tmp_path: Path) -> None:
    from cronctl.procedure.base import RunDir

    root = tmp_path / "runs"
    for cronjob, run_id in (("../../escaped", "1"), ("a/../../escaped", "1"), ("ok", "../../escaped")):
        with pytest.raises(BadInput, match="not one plain path component"):
            RunDir.create(str(root), cronjob, run_id)
    assert not list(tmp_path.rglob("escaped*"))


def test_the_request_funnel_never_puts_a_path_into_a_url() -> None:
    from cronctl.kube import KubeCluster

    with pytest.raises(BadInput, match="API path"):
        KubeCluster(object(), namespace="a/b")
    c = KubeCluster(object(), namespace="ns")
    for bad in ("../x", "a/b", "", "..", "a?b"):
        with pytest.raises(BadInput, match="API path"):
            c.get_cronjob(bad)
    assert c.request_count == 0
