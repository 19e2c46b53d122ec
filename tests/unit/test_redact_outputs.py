"""Redaction applied where cronctl writes: echoes of known secrets, command lines, the run
directory (job.json, pods.json, logs, record.json), run-manual's ``-o json``, the API server's URL
in the bundle and in error messages."""

from __future__ import annotations

import copy
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from builders import container_status, job, pod, terminated
from cronctl.bundle.analyse import Options
from cronctl.bundle.assemble import build_bundle
from cronctl.lint.engine import findings_as_data
from cronctl.bundle.dump import load_dump
from cronctl.bundle.render import add_reports
from cronctl.cli import main
from cronctl.errors import ExitCode
from cronctl.clock import SystemClock
from cronctl.procedure.base import Progress, QuietReporter, RunDir
from cronctl.procedure.run_manual import RunOptions, RunResult
from cronctl.procedure.steps.context import RunContext, masked, save
from cronctl.procedure.steps.evidence import save_logs
from cronctl.redact import Redactor, safe_url
from fake_cluster import FakeCluster

Obj = dict[str, Any]
DUMP = Path(__file__).parent.parent / "golden" / "bundle" / "incident-004.dump.yaml"
NOW = datetime(2026, 12, 2, 11, 35, tzinfo=timezone.utc)
PASSWORD = "Pg-s3cret-77"          # a literal env value under a secret name
FLAG_SECRET = "fl4g-s3cret"        # only ever passed as `--api-token X`


# the run's pod: the secret in an annotation, the command, an env value and the termination message
POD = pod("job-x-abcde", created="2026-12-02T10:00:00Z", annotations={"note": f"PGPASSWORD={PASSWORD}"},
          containers=[{"name": "main", "image": "registry.example/app@sha256:" + "a" * 64,
                       "command": ["sh", "-c", f"psql postgres://app:{PASSWORD}@db/app"],
                       "args": ["--api-token", FLAG_SECRET, "--verbose"],
                       "env": [{"name": "PGPASS", "value": PASSWORD}, {"name": "LOG_LEVEL", "value": "debug"}]}],
          phase="Succeeded", statuses=[container_status("main", terminated(0, message=f"done; used {PASSWORD}"))])
# its Job, with a secret in cronctl's reason annotation
JOB = job("job-x", uid="u1", cj_uid=None, namespace=None, annotations={"cronctl.dev/reason": "token=abc123def"},
          spec={"template": {"metadata": {}, "spec": POD["spec"]}}, status={"succeeded": 1})


def test_a_value_masked_under_its_env_name_is_masked_wherever_it_is_echoed() -> None:
    red = Redactor()
    red.learn(copy.deepcopy(POD))
    pod = red.kube_object(copy.deepcopy(POD))
    log = red.text(f"connecting with {PASSWORD} as app\nstill {PASSWORD}")
    text = json.dumps(pod) + log
    assert PASSWORD not in text and FLAG_SECRET not in text
    ph = pod["spec"]["containers"][0]["env"][0]["value"]
    assert ph == "<redacted:1>" and log == f"connecting with {ph} as app\nstill {ph}"
    assert pod["spec"]["containers"][0]["env"][1] == {"name": "LOG_LEVEL", "value": "debug"}
    flag_arg = pod["spec"]["containers"][0]["args"]
    assert flag_arg[0] == "--api-token" and flag_arg[1].startswith("<redacted:") and flag_arg[2] == "--verbose"


def test_the_value_after_a_secret_flag_and_mysqls_glued_p_are_masked_in_a_command_line() -> None:
    red = Redactor()
    out = red.argv(["mysqldump", "-u", "root", "-pR00tPa55", "--password", "other-pw1", "--port", "3306",
                    "--password-file", "/run/secrets/db", "orders"])
    assert out == ["mysqldump", "-u", "root", "-p<redacted:1>", "--password", "<redacted:2>", "--port", "3306",
                   "--password-file", "/run/secrets/db", "orders"]
    # a flag at the end of `command` takes its value from `args`
    pod = {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "c", "command": ["app", "--token"], "args": ["t0ken-value-9", "-p8080"]}]}}
    c = red.kube_object(pod)["spec"]["containers"][0]
    assert c["command"] == ["app", "--token"] and c["args"] == ["<redacted:3>", "-p8080"]


def test_short_or_boolean_secret_values_are_not_masked_everywhere_they_appear() -> None:
    red = Redactor()
    red.learn({"kind": "Pod", "spec": {"containers": [{"name": "c", "env": [
        {"name": "AUTH_REQUIRED_FLAG", "value": "true"}, {"name": "PIN", "value": "42"}]}]}})
    assert red.text("synced 42 orders: true") == "synced 42 orders: true"


def test_the_run_directory_and_the_printed_record_have_every_secret_masked(tmp_path: Path) -> None:
    log = (f"login ok with {PASSWORD}\nDB_PASSWORD=other-s3cret-1 AKIAIOSFODNN7EXAMPLE\n"
           f"curl -H 'Authorization: Bearer 0123456789abcdefXYZ' https://u:p4ss/w0rd@api.example/x\n")
    secrets = (PASSWORD, FLAG_SECRET, "other-s3cret-1", "AKIAIOSFODNN7EXAMPLE", "0123456789abcdefXYZ", "p4ss/w0rd",
               "abc123def", "hunter22")
    cluster = FakeCluster(pods=[copy.deepcopy(POD)], logs={("job-x-abcde", False): log},
                          server="https://127.0.0.1:6443")
    opts = RunOptions(cronjob="job", reason="rotate key, was AKIAIOSFODNN7EXAMPLE")
    run = RunContext(cluster, opts, SystemClock(), QuietReporter())  # type: ignore[arg-type]
    run.dir = RunDir.create(str(tmp_path), "job", "r1")
    run.record = {"reason": run.opts.reason, "server": cluster.server_url()}
    tail = save_logs(run, copy.deepcopy(JOB))
    run.record["log_tail"] = tail
    save(run)
    written = {p.relative_to(run.dir.path).as_posix(): p.read_text() for p in run.dir.path.rglob("*") if p.is_file()}
    assert set(written) == {"job.json", "pods.json", "record.json", "logs/job-x-abcde/main.log"}
    for name, text in [*written.items(), ("the log tail", "\n".join(tail))]:
        for secret in secrets:
            assert secret not in text, (secret, name)
    assert "login ok with <redacted:" in written["logs/job-x-abcde/main.log"]
    assert json.loads(written["record.json"])["logs"][0]["file"] == "logs/job-x-abcde/main.log"
    assert json.loads(written["pods.json"])[0]["spec"]["containers"][0]["env"][1]["value"] == "debug"
    # what run-manual returns is what -o json prints, the log tail and the error line show
    shown = masked(run, RunResult(ExitCode.JOB_FAILED, "failed: see https://bot:hunter22@ci.example/x",
                                  run.record, copy.deepcopy(JOB)))
    printed = json.dumps(shown.record) + shown.message + json.dumps(shown.job)
    for secret in secrets:
        assert secret not in printed, secret
    assert shown.record["log_tail"] == tail


def test_what_a_run_reports_while_it_goes_on_is_masked_too() -> None:
    rep = QuietReporter()
    run = RunContext(FakeCluster(), RunOptions(cronjob="job"), SystemClock(), rep)  # type: ignore[arg-type]
    run.red.learn(copy.deepcopy(POD))
    run.reporter.step(f"job started with {PASSWORD}")
    run.reporter.warn("cannot read https://bot:hunter22@ci.example/x: refused")
    run.reporter.show("plan", [("reason", "rotate AKIAIOSFODNN7EXAMPLE")])
    run.reporter.progress(Progress(elapsed=1.0, last_log=f"GITHUB_TOKEN=ghp_{'a1' * 18}"))
    shown = "\n".join(rep.lines)
    for secret in (PASSWORD, "hunter22", "AKIAIOSFODNN7EXAMPLE", "a1a1a1a1"):
        assert secret not in shown, secret
    assert "job started with <redacted:" in shown and "cannot read https://<redacted:" in shown


def test_safe_url_drops_userinfo_and_token_query_values_and_keeps_the_rest() -> None:
    assert safe_url("https://admin:pa@ss/w0rd@10.0.0.1:6443/k8s/clusters/c-1?token=abc&x=1") == \
        "https://10.0.0.1:6443/k8s/clusters/c-1?token=<redacted>&x=1"
    assert safe_url("https://ghp_abc123abc123abc123@api.example") == "https://api.example"
    assert safe_url("https://127.0.0.1:6443") == "https://127.0.0.1:6443"


def test_a_server_url_with_credentials_never_reaches_bundle_json_or_the_reports() -> None:
    raw = load_dump(str(DUMP), namespace=None, now=NOW, collected_at=NOW)
    raw.server = "https://admin:Sup3rS3cret@k8s.example:6443/?access_token=tok123456789"
    bundle = build_bundle(raw, None, Options(now=NOW), lint=findings_as_data)
    add_reports(bundle.files, bundle.doc)
    assert bundle.doc["collected"]["server"] == "https://k8s.example:6443/?access_token=<redacted>"
    for name in ("bundle.json", "REPORT.md", "report.html"):
        text = bundle.files[name].decode()
        assert "Sup3rS3cret" not in text and "tok123456789" not in text, name


def _kubeconfig(tmp_path: Path, server: str) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "k", "cluster": {"server": server, "insecure-skip-tls-verify": True}}],
        "users": [{"name": "u", "user": {"token": "kubeconfig-token-1234"}}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u", "namespace": "ns"}}]}))
    return path


def test_the_kube_client_reports_its_server_without_the_kubeconfigs_userinfo(tmp_path: Path) -> None:
    from cronctl.kube import connect

    cluster = connect(str(_kubeconfig(tmp_path, "https://admin:Sup3rS3cret@127.0.0.1:1")), None, None)
    assert cluster.server_url() == "https://127.0.0.1:1"


@pytest.mark.parametrize("command", [["status", "cj"], ["bundle", "cj", "--out", "OUT"]])
def test_an_unreachable_server_with_credentials_in_its_url_is_named_without_them(
        tmp_path: Path, capfd: pytest.CaptureFixture[str], command: list[str]) -> None:
    kc = _kubeconfig(tmp_path, "https://admin:Sup3rS3cret@127.0.0.1:1")  # port 1: nothing listens
    args = [a.replace("OUT", str(tmp_path / "b")) for a in command]
    code = main([*args, "--kubeconfig", str(kc)])
    out, err = capfd.readouterr()
    assert code == 7, err
    assert "cannot reach the API server at https://127.0.0.1:1" in err
    assert "Sup3rS3cret" not in out + err


def test_an_error_message_quoting_a_credential_is_masked_on_the_error_line(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    # --done-from names a file; its error quotes the path, which here carries a credential
    code = main(["explain", "-f", str(tmp_path / "https:") + "//u:hunter22@x/y"])
    _out, err = capfd.readouterr()
    assert code == 5 and err.startswith("error: ")
    assert "hunter22" not in err and "<redacted:1>" in err


def test_status_and_its_overview_are_masked_where_the_cli_makes_their_documents() -> None:
    # the service returns what the CronJob says (typed); the document -o json prints (and the text
    # is printed from) is masked: a run record, a pause and past runs hold text anyone with patch wrote
    import builders
    from cronctl import model
    from cronctl.cli.status import overview_doc, status_doc
    from cronctl.procedure.status import collect_overview, collect_status

    rec = model.RunRecord(run_id="r-1", original_suspend=False, operator="alice", job_name="cj-m",
                          reason=f"rotate, was password={PASSWORD}", step="created", started="2026-12-02T11:00:00Z",
                          holder=f"host/1 token={FLAG_SECRET}")
    ann = {**rec.to_annotations(), model.ANN_PAUSED_BY: "bob", model.ANN_PAUSE_REASON: f"token={FLAG_SECRET}"}
    cj = builders.cronjob(suspend=True, annotations=ann)
    s = collect_status(FakeCluster(cj, []), "cj", NOW)  # type: ignore[arg-type]
    assert PASSWORD in s.record.reason if s.record else False  # typed: as written
    doc = json.dumps(status_doc(s))
    assert PASSWORD not in doc and FLAG_SECRET not in doc and "password=<redacted:" in doc
    rows = json.dumps(overview_doc(collect_overview(FakeCluster(cj, [], listed=True), all_namespaces=False,  # type: ignore[arg-type]
                                                    now=NOW)))
    assert FLAG_SECRET not in rows and '"run_id": "r-1"' in rows  # the run's holder, in its row
