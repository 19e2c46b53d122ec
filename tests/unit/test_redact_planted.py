"""No offline command prints a secret planted in a CronJob dump (issue 26): every printer goes
through the same redactor. The values are planted where the hostile-input round found leaks: an
``sh -c`` script quoted by lint (PGPASSWORD=, mysql -p, https://user:pw@), a run record's reason
printed by history, env values, probe headers, secret-named annotations, a kubelet Event quoting a
hook's command line; each command runs in every output format it has."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

DUMP = Path(__file__).parent.parent / "golden" / "bundle" / "incident-004.dump.yaml"
NOW = "2026-12-02T11:35:00Z"

PLANTED = {
    "env": "Env-pw-7Qx2mZ",
    "webhook": "WhPath9aB3cD4eF5gH6jK7",
    "pgpassword": "Pg-pw-3Kd8sL",
    "mysql": "My-pw-5Rt2vN",
    "url": "Url-pw-8Hq4wE",
    "annotation": "Ann-pw-2Zx6cV",
    "note": "Note-pw-4Bn7mQ",
    "reason": "Reason-pw-6Yt3kP",
    "hook": "Hook-pw-9Lk2jH",
    "header": "Hdr-tok-1Qa5sD",
    "curl": "Curl-pw-3Fg8hJ",
}


def _planted_dump(tmp_path: Path) -> Path:
    d: Any = yaml.safe_load(DUMP.read_text())
    items = d["items"]
    cj = next(i for i in items if i["kind"] == "CronJob")
    c = cj["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    c["env"] += [{"name": "DB_PASSWORD", "value": PLANTED["env"]},
                 {"name": "SLACK_WEBHOOK_URL", "value": f"https://hooks.slack.com/services/T01/B02/{PLANTED['webhook']}"}]
    c["command"] = ["/bin/sh", "-c"]
    c["args"] = [f"PGPASSWORD={PLANTED['pgpassword']} psql -h db -c 'vacuum'; "
                 f"mysql -uroot -p{PLANTED['mysql']} orders < /sql/sync.sql; "
                 f"curl -fsS https://bot:{PLANTED['url']}@api.example/v1/done; "
                 f"curl -u admin:{PLANTED['curl']} https://hooks.example/x"]
    c["livenessProbe"] = {"httpGet": {"path": "/healthz", "port": 8080, "httpHeaders": [
        {"name": "Authorization", "value": f"Bearer {PLANTED['header']}"}]}}
    cj["metadata"]["annotations"] = {"example.com/db-password": PLANTED["annotation"],
                                     "example.com/note": f"rotate with password={PLANTED['note']}"}
    manual = next(i for i in items if i["kind"] == "Job" and i["metadata"]["name"] == "mp-orders-sync-fix")
    manual["metadata"]["annotations"].update({
        "cronctl.dev/run-id": "r-1", "cronctl.dev/operator": "alice",
        "cronctl.dev/reason": f"rerun after rotating: password={PLANTED['reason']}"})
    ev = next(i for i in items if i["kind"] == "Event")
    ev["message"] = (f"Exec lifecycle hook ([/bin/sh -c sshpass -p {PLANTED['hook']} ssh backup@10.0.0.5 sync]) "
                     f"for Container \"sync\" failed")
    path = tmp_path / "planted.yaml"
    path.write_text(yaml.safe_dump(d))
    return path


def _leaks(where: str, text: str) -> list[str]:
    return [f"{where}: {k}" for k, v in PLANTED.items() if v in text]


def _commands(path: Path, out_dir: Path) -> list[list[str]]:
    f = str(path)
    cmds = [["lint", "-f", f, "--fail-on", "none", "--now", NOW, *o] for o in
            ([], ["-o", "json"], ["-o", "yaml"], ["-o", "sarif"])]
    cmds += [["history", "--from-dump", f, "--now", NOW, *o] for o in ([], ["-o", "json"], ["-o", "yaml"])]
    cmds += [["explain", "-f", f, "--now", NOW, *o] for o in ([], ["-o", "json"])]
    cmds += [["alerts", "-f", f]]
    cmds += [["bundle", "--from-dump", f, "--now", NOW, "--out", str(out_dir / f"b{i}"), *o]
             for i, o in enumerate(([], ["-o", "json"], ["--redact", "strict"]))]
    return cmds


def test_no_offline_command_prints_a_planted_secret(tmp_path: Path, run_cli: Any) -> None:
    path = _planted_dump(tmp_path)
    leaks: list[str] = []
    for args in _commands(path, tmp_path):
        res = run_cli(*args)
        assert res.exit_code in (0, 8), (args, res.stderr)
        leaks += _leaks(" ".join(args[:1] + args[4:]), res.stdout + res.stderr)
    files = [f for f in sorted(tmp_path.glob("b*/**/*")) if f.is_file()]
    assert len(files) >= 15  # three bundles were written
    for f in files:
        leaks += _leaks(str(f.relative_to(tmp_path)), f.read_text(errors="replace"))
    assert not leaks


def test_the_planted_values_are_really_in_the_dump_and_lint_still_finds_the_script(
        tmp_path: Path, run_cli: Any) -> None:
    path = _planted_dump(tmp_path)
    raw = path.read_text()
    assert all(v in raw for v in PLANTED.values())
    res = run_cli("lint", "-f", str(path), "--fail-on", "none", "--now", NOW, "-o", "json")
    doc = json.loads(res.stdout)
    assert doc["checked"] == 1 and doc["findings"]


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_history_masks_a_run_records_reason_and_keeps_the_rest(tmp_path: Path, run_cli: Any, fmt: str) -> None:
    path = _planted_dump(tmp_path)
    res = run_cli("history", "--from-dump", str(path), "--now", NOW, "-o", fmt)
    assert res.exit_code == 0, res.stderr
    assert PLANTED["reason"] not in res.stdout
    assert "rerun after rotating: password=<redacted:" in res.stdout
