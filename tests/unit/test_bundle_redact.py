"""Masking of secret material: env values by name, credentials in text, stable placeholders."""

from __future__ import annotations

import json

import pytest

from builders import pod
from cronctl.bundle.redact import LAST_APPLIED, Redactor, looks_secret, strip_managed_fields


@pytest.mark.parametrize("name", [
    "API_TOKEN", "DB_PASSWORD", "passwd", "CLIENT_SECRET", "AWS_SECRET_ACCESS_KEY", "SIGNING_KEY",
    "GCP_CREDENTIALS", "BASIC_AUTH", "db_pwd", "SMTP_PASS", "SENTRY_DSN", "PRIVATE_PEM",
])
def test_env_names_that_look_secret_are_recognised(name: str) -> None:
    assert looks_secret(name)


@pytest.mark.parametrize("name", ["LOG_LEVEL", "TZ", "ORDERS_URL", "BATCH_SIZE", "PASSENGER_COUNT"])
def test_ordinary_env_names_are_not_secret(name: str) -> None:
    assert not looks_secret(name)


def test_a_literal_secret_env_value_is_masked_and_a_reference_is_kept() -> None:
    red = Redactor()
    p = pod("p", env=[{"name": "API_TOKEN", "value": "abc123"},
                      {"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db", "key": "pw"}}},
                      {"name": "LOG_LEVEL", "value": "debug"}])
    out = red.kube_object(p)
    env = out["spec"]["containers"][0]["env"]
    assert env[0] == {"name": "API_TOKEN", "value": "<redacted:1>"}
    assert env[1] == {"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db", "key": "pw"}}}
    assert env[2] == {"name": "LOG_LEVEL", "value": "debug"}
    assert p["spec"]["containers"][0]["env"][0]["value"] == "abc123"  # type: ignore[index]  # input untouched


def test_the_same_value_always_gets_the_same_placeholder_across_objects_and_logs() -> None:
    red = Redactor()
    a = red.kube_object(pod("p", env=[{"name": "TOKEN", "value": "t0k"}, {"name": "OTHER_KEY", "value": "k2"}]))
    b = red.kube_object(pod("p", env=[{"name": "API_TOKEN", "value": "t0k"}]))
    log = red.text("GET /x Authorization: Bearer t0k-but-longer-value\nGET /y Bearer t0k-but-longer-value")
    assert a["spec"]["containers"][0]["env"][0]["value"] == "<redacted:1>"
    assert a["spec"]["containers"][0]["env"][1]["value"] == "<redacted:2>"
    assert b["spec"]["containers"][0]["env"][0]["value"] == "<redacted:1>"
    assert log == "GET /x Authorization: Bearer <redacted:3>\nGET /y Bearer <redacted:3>"
    assert red.distinct == 3 and red.count == 5


def test_credentials_in_a_url_are_masked_but_host_and_path_kept() -> None:
    red = Redactor()
    s = red.text("connecting to postgres://orders:hunter2@db:5432/orders and https://example.com/x")
    assert s == "connecting to postgres://<redacted:1>@db:5432/orders and https://example.com/x"


def test_url_credentials_in_a_non_secret_env_value_and_args_are_masked() -> None:
    red = Redactor()
    out = red.kube_object(pod("p", containers=[{
        "name": "c", "image": "x", "env": [{"name": "DATABASE_URL", "value": "mysql://u:p4ss@h/db"}],
        "args": ["--upstream=https://bot:xyz789@api.example/v1", "--dry-run"]}]))
    c = out["spec"]["containers"][0]
    assert c["env"][0]["value"] == "mysql://<redacted:1>@h/db"
    assert c["args"] == ["--upstream=https://<redacted:2>@api.example/v1", "--dry-run"]


@pytest.mark.parametrize("line, expected", [
    ("password=hunter2 user=bob", "password=<redacted:1> user=bob"),
    ('{"token": "abcdef"}', '{"token": "<redacted:1>"}'),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic <redacted:1>"),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N", "jwt <redacted:1>"),
    ("nothing secret here: 42 orders synced", "nothing secret here: 42 orders synced"),
])
def test_log_lines_with_secrets_are_masked(line: str, expected: str) -> None:
    assert Redactor().text(line) == expected


def test_a_cronjob_template_and_its_last_applied_annotation_are_masked_alike() -> None:
    cj = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "cj", "annotations": {}},
          "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": {
              "containers": [{"name": "c", "image": "i", "env": [{"name": "SECRET", "value": "v"}]}]}}}}}}
    cj["metadata"]["annotations"][LAST_APPLIED] = json.dumps(cj)  # type: ignore[index]
    red = Redactor()
    out = red.kube_object(cj)
    tmpl_env = out["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["env"]
    assert tmpl_env == [{"name": "SECRET", "value": "<redacted:1>"}]
    applied = json.loads(out["metadata"]["annotations"][LAST_APPLIED])
    assert applied["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"] == "<redacted:1>"
    assert '"v"' not in out["metadata"]["annotations"][LAST_APPLIED]


def test_event_messages_are_masked() -> None:
    ev = {"kind": "Event", "metadata": {"name": "e"}, "involvedObject": {"kind": "Pod", "name": "p"},
          "reason": "Failed", "message": "pull from https://bot:pw@registry.example failed"}
    assert Redactor().kube_object(ev)["message"] == "pull from https://<redacted:1>@registry.example failed"


def test_managed_fields_are_stripped_without_touching_the_input() -> None:
    obj = {"metadata": {"name": "x", "managedFields": [{"manager": "m"}]}, "spec": {}}
    out = strip_managed_fields(obj)
    assert "managedFields" not in out["metadata"] and out["metadata"]["name"] == "x"
    assert "managedFields" in obj["metadata"]


def test_credentials_in_annotations_of_the_object_and_its_templates_are_masked() -> None:
    cj = {"kind": "CronJob", "metadata": {"name": "c", "annotations": {"note": "see https://u:pw1@wiki/x"}},
          "spec": {"jobTemplate": {"metadata": {"annotations": {"a": "token=abc"}}, "spec": {"template": {
              "metadata": {"annotations": {"sim/log": "Authorization: Bearer zzzzzzzzzz"}},
              "spec": {"containers": []}}}}}}
    out = Redactor().kube_object(cj)
    assert out["metadata"]["annotations"]["note"] == "see https://<redacted:1>@wiki/x"
    assert out["spec"]["jobTemplate"]["metadata"]["annotations"]["a"] == "token=<redacted:2>"
    assert out["spec"]["jobTemplate"]["spec"]["template"]["metadata"]["annotations"]["sim/log"] == \
        "Authorization: Bearer <redacted:3>"


def test_an_env_list_shared_by_two_objects_is_masked_once_in_place() -> None:
    # YAML aliases (&id001/*id001) make two loaded objects share one env list
    env: list[dict[str, object]] = [{"name": "API_TOKEN", "value": "t"}]
    a, b = pod("p", env=env), pod("p", env=env)
    a["spec"]["containers"][0]["env"] = b["spec"]["containers"][0]["env"] = env  # type: ignore[index]
    red = Redactor()
    red.mask_in_place(a)
    red.mask_in_place(b)
    assert env == [{"name": "API_TOKEN", "value": "<redacted:1>"}] and red.distinct == 1
