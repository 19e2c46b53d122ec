"""Shell completion: the scripts in completions/ are what the app generates, and the bash one
really completes in a real bash against the installed `cronctl`."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from completion_support import bash_complete

from cronctl.cli import main
from harness import cronctl

ROOT = Path(__file__).resolve().parents[2]
FILES = {"bash": "cronctl.bash", "zsh": "_cronctl", "fish": "cronctl.fish"}


@pytest.mark.parametrize("shell", sorted(FILES))
def test_the_committed_script_is_exactly_what_cronctl_completion_prints(capfd, shell: str) -> None:
    assert main(["completion", shell]) == 0
    printed, errors = capfd.readouterr()
    kept = (ROOT / "completions" / FILES[shell]).read_text()
    assert printed == kept, f"regenerate: cronctl completion {shell} > completions/{FILES[shell]}"
    assert errors == ""
    assert "_CRONCTL_COMPLETE=complete_" in printed


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash on this machine")
def test_bash_completes_a_subcommand_from_its_prefix() -> None:
    assert bash_complete("cronctl", "ex") == ["explain"]


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash on this machine")
def test_bash_completes_a_flag_and_its_choices() -> None:
    assert bash_complete("cronctl", "lint", "--fail") == ["--fail-on"]
    assert bash_complete("cronctl", "lint", "--fail-on", "") == ["error", "warning", "info", "none"]


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash on this machine")
def test_bash_lists_every_subcommand_on_an_empty_word() -> None:
    got = bash_complete("cronctl", "")
    assert {"completion", "explain", "lint"} <= set(got)


@pytest.mark.parametrize(("shell", "where"), [
    ("bash", ".local/share/bash-completion/completions/cronctl"),
    ("zsh", ".zfunc/_cronctl"),
    ("fish", ".config/fish/completions/cronctl.fish"),
])
def test_install_writes_the_script_to_the_conventional_place_and_says_where(
        capfd, monkeypatch, tmp_path: Path, shell: str, where: str) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    for var in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "BASH_COMPLETION_USER_DIR"):
        monkeypatch.delenv(var, raising=False)
    assert main(["completion", shell, "--install"]) == 0
    out, err = capfd.readouterr()
    target = tmp_path / where
    assert target.read_text() == (ROOT / "completions" / FILES[shell]).read_text()
    assert out == ""  # nothing on stdout: the script went to the file
    assert f"installed {shell} completion in {target}" in err


def test_an_unknown_shell_is_a_usage_error(capfd) -> None:
    assert main(["completion", "tcsh"]) == 2
    assert "tcsh" in capfd.readouterr().err


def ask(shell: str, line: str, **extra: str) -> str:
    """What the installed cronctl answers when the zsh/fish script calls it back for `line`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("_CRONCTL")}
    env.update({"_CRONCTL_COMPLETE": f"complete_{shell}", "_TYPER_COMPLETE_ARGS": line, **extra})
    r = cronctl([], script=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_the_zsh_callback_offers_the_subcommand_with_its_help() -> None:
    assert ask("zsh", "cronctl ex").startswith("_arguments '*: :((\"explain\":\"Explain a schedule")


@pytest.mark.skipif(shutil.which("zsh") is None, reason="no zsh on this machine (apt-get install zsh)")
@pytest.mark.parametrize("how", ["fpath", "installed", "sourced"])
def test_zsh_completes_at_the_first_tab_of_a_new_shell(tmp_path: Path, how: str) -> None:
    """Issue 34 item 9: loaded from $fpath by compinit, the script's body runs at the first TAB; it
    only registered the function then, so every new shell missed its first TAB. In a real zsh on a
    pseudo-terminal: `cronctl ex` + one TAB becomes `cronctl explain`."""
    from completion_support import zsh_first_tab

    fpath_dir = None
    if how == "installed":
        env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "_CRONCTL"))}
        r = cronctl(["completion", "zsh", "--install"], script=True, env={**env, "HOME": str(tmp_path)})
        assert r.returncode == 0, r.stderr
        fpath_dir = tmp_path / ".zfunc"
    screen = zsh_first_tab("cronctl ex", b"plain", tmp_path, fpath_dir=fpath_dir, sourced=how == "sourced")
    assert b"plain" in screen, screen


def test_the_fish_callback_offers_the_flag_with_its_help() -> None:
    got = ask("fish", "cronctl lint --fail", _TYPER_COMPLETE_FISH_ACTION="get-args")
    assert got.splitlines()[0].startswith("--fail-on\tExit with code 8")


# --- dynamic values: zones, runbooks, and CronJobs/namespaces from a cluster in bounded time ----

NEEDS_BASH = pytest.mark.skipif(shutil.which("bash") is None, reason="no bash on this machine")


@NEEDS_BASH
def test_bash_completes_an_iana_zone_from_the_zone_database() -> None:
    assert bash_complete("cronctl", "explain", "@daily", "--tz", "Europe/Berl") == ["Europe/Berlin"]
    assert "America/New_York" in bash_complete("cronctl", "explain", "@daily", "--tz", "America/")


@NEEDS_BASH
def test_bash_completes_a_runbook_name_from_the_packaged_runbooks() -> None:
    from cronctl.runbooks import NAMES

    assert bash_complete("cronctl", "runbook", "dst") == ["dst-transition"]
    assert bash_complete("cronctl", "runbook", "") == list(NAMES)


def _kubeconfig(path: Path, server: str, *, exec_sleep: int | None = None) -> Path:
    user: dict[str, object] = {"token": "t"}
    if exec_sleep is not None:  # a credential plugin that never answers in time
        user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": "sleep",
                         "args": [str(exec_sleep)], "interactiveMode": "Never"}}
    import yaml

    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": server, "insecure-skip-tls-verify": True}}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u", "namespace": "ns1"}}]}))
    return path


@NEEDS_BASH
@pytest.mark.parametrize("words", [("cronctl", "status", ""), ("cronctl", "run-manual", "-n", "billing", "ord"),
                                   ("cronctl", "lint", "-n", ""), ("cronctl", "explain", "cronjob/")])
def test_an_unreachable_cluster_completes_nothing_quickly_and_silently(tmp_path: Path, words: tuple[str, ...]) -> None:
    import time

    kc = _kubeconfig(tmp_path / "kc", "https://127.0.0.1:1")  # nothing listens on port 1
    t0 = time.monotonic()
    assert bash_complete(*words, KUBECONFIG=str(kc)) == []
    assert time.monotonic() - t0 < 20  # bounded (the lookup itself: 2 s; the rest is starting python)


@NEEDS_BASH
def test_a_cluster_lookup_that_hangs_is_abandoned_after_its_bound(tmp_path: Path) -> None:
    import time

    from cronctl.cli.candidates import CLUSTER_SECONDS

    # the credential plugin sleeps 60 s: without the bound, <TAB> would hang for a minute
    kc = _kubeconfig(tmp_path / "kc", "https://127.0.0.1:1", exec_sleep=60)
    t0 = time.monotonic()
    assert bash_complete("cronctl", "status", "", KUBECONFIG=str(kc)) == []
    took = time.monotonic() - t0
    assert CLUSTER_SECONDS <= took < 30, took


class _ApiServer:
    """A tiny plain-HTTP API server answering list requests from a table (items: a name, or a whole
    metadata; or an int: that error status), 404 elsewhere, recording each request's path and query.

    It stands in for kube-apiserver's list endpoints as the real client (cronctl.kube) reaches them
    over HTTP. A real server is not used here because the test is about which requests completion
    makes (a real server does not tell a client's requests apart) and which errors it swallows,
    answered at once and in a shell's time budget, without a control plane."""

    def __init__(self, lists: dict[str, Any]) -> None:
        import http.server
        import json
        import threading

        self.paths: list[str] = []
        self.requests: list[str] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                path = self.path.partition("?")[0]
                outer.paths.append(path)
                outer.requests.append(self.path)
                names = lists.get(path)
                if isinstance(names, int):  # an error status, e.g. 403 Forbidden
                    code, names = names, None
                else:
                    code = 200 if names is not None else 404
                body = json.dumps({"kind": "List", "items": [{"metadata": n if isinstance(n, dict) else {"name": n}}
                                                             for n in names or []]})
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(body.encode())

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()


@NEEDS_BASH
def test_cronjob_names_come_from_the_namespace_of_n_or_of_the_chosen_context(tmp_path: Path) -> None:
    import yaml

    api = _ApiServer({"/apis/batch/v1/namespaces/shop/cronjobs": ["orders", "orders-eu", "billing"],
                      "/apis/batch/v1/namespaces/ns1/cronjobs": ["nightly"],
                      "/apis/batch/v1/namespaces/ns2/cronjobs": ["other"],
                      "/api/v1/namespaces": ["default", "ns1", "shop"]})
    try:
        kc = _kubeconfig(tmp_path / "kc", api.url)
        doc = yaml.safe_load(kc.read_text())
        doc["contexts"].append({"name": "two", "context": {"cluster": "c", "user": "u", "namespace": "ns2"}})
        kc.write_text(yaml.safe_dump(doc))
        assert bash_complete("cronctl", "status", "-n", "shop", "ord", KUBECONFIG=str(kc)) == ["orders", "orders-eu"]
        assert bash_complete("cronctl", "wait", "--kubeconfig", str(kc), "") == ["nightly"]  # the context's ns1
        assert bash_complete("cronctl", "history", "--kubeconfig", str(kc), "--context", "two", "") == ["other"]
        assert bash_complete("cronctl", "explain", "-n", "shop", "cronjob/", KUBECONFIG=str(kc)) == [
            "cronjob/billing", "cronjob/orders", "cronjob/orders-eu"]
        assert bash_complete("cronctl", "lint", "-n", "s", KUBECONFIG=str(kc)) == ["shop"]
        # kubectl's flags before the command (cronctl -n shop status <TAB>) are honoured too
        assert bash_complete("cronctl", "-n", "shop", "status", "ord", KUBECONFIG=str(kc)) == ["orders", "orders-eu"]
        assert bash_complete("cronctl", "--kubeconfig", str(kc), "--context", "two", "history", "") == ["other"]
        assert bash_complete("cronctl", "-n", "s", KUBECONFIG=str(kc)) == ["shop"]
        assert bash_complete("cronctl", "status", "--request-t") == ["--request-timeout"]
        # a schedule has no candidates and asks the cluster nothing
        n = len(api.paths)
        assert bash_complete("cronctl", "explain", "@dai", KUBECONFIG=str(kc)) == [] and len(api.paths) == n
    finally:
        api.close()
