"""Secrets on the real control plane: run-manual's run directory and ``-o json``, and the bundle,
hold no secret of the Job, its pods or its logs, nor the kubeconfig server URL's credentials."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from cluster_support import cronctl, cronjob_body, read_cronjob

pytestmark = [pytest.mark.cluster]

PASSWORD = "Pg-live-s3cret-42"                                  # literal env value under a secret name
GH = "ghp_" + "Live0123456789abcdefghijABCDEFGHIJ0123"           # only in the container's log
FLAG = "fl4g-live-s3cret"                                       # only as `--api-token X`
URL_PASSWORD = "Sup3r-url-pw"                                    # only in the kubeconfig's server URL
SECRETS = (PASSWORD, GH, FLAG, URL_PASSWORD)


def _kubeconfig_with_userinfo(kubeconfig: str, path: Path) -> str:
    """The test cluster's kubeconfig, its server URL carrying a user and password (ignored by the
    client, which authenticates with its certificate): what a copied Rancher or proxy URL looks like."""
    cfg = yaml.safe_load(Path(kubeconfig).read_text())
    for c in cfg["clusters"]:
        c["cluster"]["server"] = c["cluster"]["server"].replace("https://", f"https://admin:{URL_PASSWORD}@", 1)
    path.write_text(yaml.safe_dump(cfg))
    return str(path)


def _files(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text(errors="replace") for p in root.rglob("*") if p.is_file()}


def test_run_manual_and_bundle_write_no_secret_of_the_job_its_logs_or_the_server_url(
        kubeconfig: str, namespace: str, k8s: Any, tmp_path: Path) -> None:
    body = cronjob_body("payments", duration=1,
                        log=f"connecting as app with {PASSWORD}\nGITHUB_TOKEN={GH}\nsynced 7 payments")
    c = body["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    c["env"].append({"name": "DB_PASSWORD", "value": PASSWORD})
    c["args"] = ["--api-token", FLAG, "--dsn", f"postgres://app:{PASSWORD}@db/payments"]
    k8s.batch.create_namespaced_cron_job(namespace, body)
    kc = _kubeconfig_with_userinfo(kubeconfig, tmp_path / "kubeconfig")
    runs = tmp_path / "runs"

    r = cronctl(["run-manual", "payments", "-n", namespace, "--yes", "--settle", "1s", "-o", "json"], kc,
                run_dir=runs)
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert rec["outcome"] == "succeeded" and rec["server"].startswith("https://127.0.0.1:")
    run_dir = Path(rec["run_dir"])
    files = _files(run_dir)
    assert {"job.json", "pods.json", "record.json"} <= set(files) and any(f.startswith("logs/") for f in files)
    for name, text in [*files.items(), ("stdout", r.stdout), ("stderr", r.stderr)]:
        for secret in SECRETS:
            assert secret not in text, (secret, name)
    main_log = next(t for f, t in files.items() if f.endswith("/main.log"))
    assert "connecting as app with <redacted:" in main_log and "synced 7 payments" in main_log
    job = json.loads(files["job.json"])
    env = {e["name"]: e.get("value") for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["MODE"] == "sync" and env["DB_PASSWORD"].startswith("<redacted:")
    assert "/main] connecting as app with <redacted:" in r.stderr  # the log tail
    # the Job itself is the CronJob's template, untouched: masking is only in what cronctl writes
    assert read_cronjob(k8s, namespace, "payments")["spec"]["suspend"] is False

    out = tmp_path / "bundle"
    b = cronctl(["bundle", "payments", "-n", namespace, "--out", str(out)], kc)
    assert b.returncode == 0, b.stderr
    bundle_files = _files(out)
    assert {"bundle.json", "REPORT.md", "report.html", "objects.yaml"} <= set(bundle_files)
    for name, text in [*bundle_files.items(), ("stdout", b.stdout), ("stderr", b.stderr)]:
        for secret in SECRETS:
            assert secret not in text, (secret, name)
    assert json.loads(bundle_files["bundle.json"])["collected"]["server"] == rec["server"]
