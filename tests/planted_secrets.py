"""Secrets planted where the hostile-input rounds found leaks (issue 26), for the tests that assert no
command prints one: offline (tests/unit/test_redact_planted.py) and against the cluster
(tests/cluster/test_redact_planted_live.py). The dump is the seed-004 incident with, planted: env
values (a password, a webhook URL under a harmless name), an ``sh -c`` script (PGPASSWORD=, mysql -p,
a URL with credentials, curl -u), a probe's Authorization header, a secret-named annotation and a
note with password=, a run record's reason on the manual Job, a kubelet Event quoting a hook's
command line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

DUMP = Path(__file__).parent / "golden" / "bundle" / "incident-004.dump.yaml"
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


def planted_dump(tmp_path: Path) -> Path:
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


def leaks_in(where: str, text: str) -> list[str]:
    return [f"{where}: {k}" for k, v in PLANTED.items() if v in text]
