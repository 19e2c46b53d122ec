"""Every runbook rendered against a real CronJob on the real control plane: the real namespace,
name, schedule, zone and state (suspend, lastScheduleTime, next runs, what unsuspending starts)
must appear; expectations are derived here from the object we created and the tz rules."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterator
from zoneinfo import ZoneInfo

import pytest
import yaml
from kubernetes import client
from kubernetes import config as kconfig
from kubernetes.client.rest import ApiException

from cluster_support import bare_job_template, cronjob_body, slot_job_name
from cronctl.cli import main
from cronctl.runbooks import NAMES

NAME = "mp-orders-sync"
SCHEDULE = "30 2 * * *"
ZONE = "America/New_York"


@pytest.fixture(scope="module")
def live(namespace_factory: Any, k8s: Any, kubeconfig: str) -> Iterator[dict[str, str]]:
    ns = namespace_factory.create("runbook-render")
    k8s.batch.create_namespaced_cron_job(ns, cronjob_body(NAME, schedule=SCHEDULE, tz=ZONE, suspend=True, history=None,
                                                          job_template=bare_job_template("sync", "busybox")))
    # The run two days before the most recent 02:30 (a real past slot; close to now, so the
    # controller's missed-run estimate is not disturbed by a DST change far back). A suspended
    # CronJob is left alone by the controller, so this status stays as written.
    last = most_recent_0230_new_york(datetime.now(timezone.utc)) - timedelta(days=2)
    last_text = last.strftime("%Y-%m-%dT%H:%M:%SZ")
    k8s.batch.patch_namespaced_cron_job_status(NAME, ns, {"status": {"lastScheduleTime": last_text}})
    yield {"ns": ns, "kubeconfig": kubeconfig, "last": last_text}
    namespace_factory.delete(ns)


def render(capfd: pytest.CaptureFixture[str], live: dict[str, str], *args: str) -> tuple[int, str, str]:
    code = main(["runbook", *args, "--kubeconfig", live["kubeconfig"], "-n", live["ns"]])
    out, err = capfd.readouterr()
    return code, out, err


def most_recent_0230_new_york(now: datetime) -> datetime:
    """The latest existing 02:30 New York wall time at or before now (a spring-forward day has none)."""
    z = ZoneInfo(ZONE)
    day = now.astimezone(z).date()
    while True:
        t = datetime(day.year, day.month, day.day, 2, 30, tzinfo=z)
        exists = t.astimezone(timezone.utc).astimezone(z).replace(tzinfo=None) == t.replace(tzinfo=None)
        if exists and t <= now:
            return t.astimezone(timezone.utc)
        day -= timedelta(days=1)


STATEFUL = [n for n in NAMES if n not in ("rbac", "exit-codes")]


@pytest.mark.parametrize("book", NAMES)
def test_every_runbook_renders_with_the_real_namespace_and_name(capfd, live, book: str) -> None:
    code, out, err = render(capfd, live, book, f"cronjob/{NAME}")
    assert code == 0, err
    assert err == ""
    assert live["ns"] in out
    if book != "rbac":
        assert NAME in out
    assert "$CJ" not in out and "$NS" not in out and "<schedule>" not in out  # no placeholder left


@pytest.mark.parametrize("book", STATEFUL)
def test_stateful_runbooks_show_schedule_zone_suspend_last_schedule_and_next_runs(capfd, live, book: str) -> None:
    code, out, _ = render(capfd, live, book, NAME)
    assert code == 0
    assert f"`{SCHEDULE}`" in out and ZONE in out
    assert "| suspend | true |" in out
    assert f"| lastScheduleTime | {live['last']} |" in out
    assert "| concurrencyPolicy | Forbid |" in out
    runs = re.findall(r"^- (\S+) = (\S+)$", out, re.M)
    assert len(runs) == 5
    for local, utc in runs:  # every next run is 02:30 New York time, and its UTC is consistent
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT02:30:00-0[45]:00", local), local
        assert datetime.fromisoformat(local) == datetime.fromisoformat(utc.replace("Z", "+00:00"))


def test_catch_up_runbook_names_the_job_unsuspending_would_start(capfd, live) -> None:
    now = datetime.now(timezone.utc)
    code, out, _ = render(capfd, live, "catch-up-after-suspend", NAME)
    assert code == 0
    # no startingDeadlineSeconds: the most recent missed 02:30 is started, named <name>-<unix minutes>
    expected = most_recent_0230_new_york(now)
    job = slot_job_name(NAME, expected)
    assert f"**start `{job}`**" in out, out


def test_dst_runbook_lists_the_zone_transitions_and_the_skipped_date(capfd, live) -> None:
    code, out, _ = render(capfd, live, "dst-transition", NAME)
    assert code == 0
    # New York springs forward on the second Sunday of March at 07:00Z; 02:30 that day is skipped.
    # The next such Sunday after now is within the runbook's one-year transition list.
    now = datetime.now(timezone.utc)

    def second_sunday_of_march(year: int) -> datetime:
        return next(datetime(year, 3, d) for d in range(8, 15) if datetime(year, 3, d).weekday() == 6)

    sunday = second_sunday_of_march(now.year)
    if sunday.replace(hour=7, tzinfo=timezone.utc) <= now:
        sunday = second_sunday_of_march(now.year + 1)
    assert f"{sunday:%Y-%m-%d}T07:00:00Z: gap (spring forward)" in out
    assert f"- {sunday:%Y-%m-%d} at 02:30: skipped" in out


def test_rbac_runbook_puts_the_namespace_into_the_role(capfd, live) -> None:
    code, out, _ = render(capfd, live, "rbac", NAME)
    assert code == 0
    assert out.count(f"namespace: {live['ns']}") == 2  # Role and RoleBinding


def test_a_missing_cronjob_is_exit_6_with_one_line(capfd, live) -> None:
    code, out, err = render(capfd, live, "manual-run", "no-such-cronjob")
    assert code == 6 and out == ""
    assert err.strip() == f"error: cronjob {live['ns']}/no-such-cronjob not found"


def test_the_rbac_runbook_role_is_enough_for_lint_runbook_and_status(capfd, live, k8s, tmp_path) -> None:
    """Bind a ServiceAccount to the Role exactly as the rbac runbook renders it, and use only that."""
    ns = live["ns"]
    code, text, _ = render(capfd, live, "rbac", NAME)
    assert code == 0
    docs = list(yaml.safe_load_all(re.search(r"```yaml\n(.*?)```", text, re.S).group(1)))
    role = next(d for d in docs if d["kind"] == "Role")
    binding = next(d for d in docs if d["kind"] == "RoleBinding")
    rbac = client.RbacAuthorizationV1Api(k8s.api)
    k8s.core.create_namespaced_service_account(ns, {"metadata": {"name": "oncall-bot"}})
    rbac.create_namespaced_role(ns, role)
    binding["subjects"] = [{"kind": "ServiceAccount", "name": "oncall-bot", "namespace": ns}]
    rbac.create_namespaced_role_binding(ns, binding)
    token = k8s.core.create_namespaced_service_account_token(
        "oncall-bot", ns, {"spec": {"expirationSeconds": 3600}}).status.token
    admin = yaml.safe_load(Path(live["kubeconfig"]).read_text())
    admin_cluster = admin["clusters"][0]
    op = tmp_path / "oncall.kubeconfig"
    op.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "clusters": [admin_cluster],
        "users": [{"name": "oncall-bot", "user": {"token": token}}],
        "contexts": [{"name": "oncall", "context": {"cluster": admin_cluster["name"], "user": "oncall-bot",
                                                      "namespace": ns}}],
        "current-context": "oncall"}))

    assert main(["lint", "--kubeconfig", str(op), "-o", "json", "--fail-on", "none"]) == 0
    out, err = capfd.readouterr()
    assert json.loads(out)["checked"] == 1, err
    assert main(["runbook", "manual-run", NAME, "--kubeconfig", str(op)]) == 0
    assert f"| schedule | `{SCHEDULE}`" in capfd.readouterr().out
    assert main(["status", NAME, "--kubeconfig", str(op), "-o", "json"]) == 0, capfd.readouterr().err
    capfd.readouterr()
    # least privilege: the API server refuses this identity a delete
    api = kconfig.new_client_from_config(config_file=str(op))
    with pytest.raises(ApiException) as e:
        client.BatchV1Api(api).delete_namespaced_cron_job(NAME, ns)
    assert e.value.status == 403
