"""A third redaction corpus (issue 39), made fresh and measured before any rule was changed for it:
token shapes from public secret-scanner rule sets that the first two corpora did not use
(gitleaks/trufflehog-style prefixes: Alibaba, Airtable, Contentful, Dynatrace, EasyPost,
Flutterwave, Frame.io, Terraform Cloud, Infracost, Mailchimp, Notion, PlanetScale, Prefect,
ReadMe, RubyGems, Brevo, Shippo, Sentry, Typeform, Yandex, Sourcegraph, Octopus, Duffel, Fly.io,
Harness, Artifactory, Mapbox, Slack config tokens, Discord bot tokens, FCM server keys, Okta), the
shapes issue 39 found leaking (XML in an env value, Azure Functions ``?code=``, Okta ``SSWS``
under ``*_HEADER``, JWE, ``Authorization: Bot`` in ``curl -H``, a pod-template label ``.../api-key``,
a URL's password echoed alone, a ``.netrc`` line, ``age --identity``), values in structured
places (JSON and YAML inside a string, URL query, header lines) and look-alikes that name what
they are (digests, hashes, paths, templates, public keys, identifiers).

Each case: a secret passes when it is absent from what the redactor returns, a look-alike when
what comes back equals what went in. ``CRONCTL_REDACT_FILE=/path/to/redact.py`` measures another
copy of the module (``pytest -s -k summary``), without asserting.
"""

from __future__ import annotations

import importlib.util
import json
import os
import random
import string
from typing import Any

import pytest

import builders

Obj = dict[str, Any]


def _module() -> Any:
    path = os.environ.get("CRONCTL_REDACT_FILE")
    if not path:
        import cronctl.redact as mod

        return mod
    spec = importlib.util.spec_from_file_location("redact_under_test", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


R = _module()
_rng = random.Random(2026_12_07)
_LOW = string.ascii_lowercase + string.digits
_UP = string.ascii_uppercase + string.digits
_MIX = string.ascii_letters + string.digits
_HEX = "0123456789abcdef"


def _r(n: int, alphabet: str = _MIX) -> str:
    """``n`` random characters of ``alphabet``, at least one digit when it has digits."""
    s = [_rng.choice(alphabet) for _ in range(n)]
    digits = [c for c in alphabet if c.isdigit()]
    if digits and not any(c.isdigit() for c in s):
        s[n // 2] = _rng.choice(digits)
    return "".join(s)


def _pw(n: int = 14) -> str:
    return _r(n, "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789")


_POD = "billing-export-29937000-k2m9x"


def _pod(container: Obj | None = None, *, annotations: dict[str, str] | None = None,
         labels: dict[str, str] | None = None, status: Obj | None = None) -> Obj:
    return builders.pod(_POD, namespace="prod", annotations=annotations or {}, labels=labels, status=status,
                        containers=[{"name": "main", "image": "registry.example/billing:3.1", **(container or {})}])


def _cronjob_label(key: str, value: str) -> Obj:
    """A CronJob whose pod template carries the label ``key: value``."""
    cj = builders.cronjob("*/5 * * * *", name="billing-export", namespace="prod")
    jt = cj["spec"].setdefault("jobTemplate", {}).setdefault("spec", {})
    tmpl = jt.setdefault("template", {"spec": {"containers": [{"name": "main", "image": "billing:3.1"}]}})
    tmpl.setdefault("metadata", {}).setdefault("labels", {})[key] = value
    return cj


def _event(message: str, reason: str = "BackOff") -> Obj:
    return builders.event(reason, message, builders.T(12, 0), kind="Pod", name=_POD, etype="Warning",
                          namespace="prod")


def _env_pod(name: str, value: str) -> Obj:
    return _pod({"env": [{"name": name, "value": value}, {"name": "LOG_LEVEL", "value": "info"}]})


Case = tuple[str, str, Any, str]

#: provider token shapes (gitleaks/trufflehog rule sets) the earlier corpora did not hold
TOKENS: list[tuple[str, str]] = [
    ("alibaba-access-key", "LTAI" + _r(20, _LOW)),
    ("airtable-pat", "pat" + _r(14) + "." + _r(64, _HEX)),
    ("contentful-pat", "CFPAT-" + _r(43, _LOW + "_-")),
    ("dynatrace", "dt0c01." + _r(24, _UP) + "." + _r(64, _UP)),
    ("easypost-live", "EZAK" + _r(54, _LOW)),
    ("flutterwave-secret", "FLWSECK_TEST-" + _r(32, _HEX) + "-X"),
    ("frameio", "fio-u-" + _r(64, _LOW + "_-")),
    ("terraform-cloud", _r(14, _LOW) + ".atlasv1." + _r(67, _MIX + "-_")),
    ("infracost", "ico-" + _r(32)),
    ("mailchimp", _r(32, _HEX) + "-us14"),
    ("notion-ntn", "ntn_" + _r(11, string.digits) + _r(35)),
    ("notion-secret", "secret_" + _r(43)),
    ("planetscale-token", "pscale_tkn_" + _r(43, _LOW + "_-")),
    ("planetscale-password", "pscale_pw_" + _r(43, _LOW + "_-")),
    ("prefect", "pnu_" + _r(36, _LOW)),
    ("readme", "rdme_" + _r(70, _LOW)),
    ("rubygems", "rubygems_" + _r(48, _HEX)),
    ("brevo", "xkeysib-" + _r(64, _HEX) + "-" + _r(16, _MIX)),
    ("shippo", "shippo_live_" + _r(40, _HEX)),
    ("sentry-user", "sntryu_" + _r(64, _HEX)),
    ("typeform", "tfp_" + _r(59, _MIX + "_-")),
    ("yandex-api-key", "AQVN" + _r(36, _MIX + "_-")),
    ("sourcegraph", "sgp_" + _r(40, _HEX)),
    ("octopus", "API-" + _r(26, _UP)),
    ("duffel", "duffel_live_" + _r(43, _MIX + "_-")),
    ("flyio", "fo1_" + _r(43, _MIX + "_-")),
    ("harness-pat", "pat." + _r(22) + "." + _r(24) + "." + _r(20)),
    ("artifactory", "AKCp" + _r(69)),
    ("mapbox-secret", "sk.eyJ1Ijoi" + _r(40) + "." + _r(22)),
    ("slack-config", "xoxe.xoxp-1-" + _r(164, _UP)),
    ("discord-bot", "M" + _r(23) + "." + _r(6) + "." + _r(27, _MIX + "_-")),
    ("fcm-server-key", "AAAA" + _r(7) + ":" + _r(140, _MIX + "_-")),
    ("okta-ssws", "SSWS 00" + _r(40, _MIX + "_-")),
    ("clojars", "CLOJARS_" + _r(60, _LOW)),
    ("scalingo", "tk-us-" + _r(48, _MIX + "_-")),
]
# a token where a scanner finds it: alone on a log line, as a JSON value under a neutral key, in a
# Event message; and as an env value under a name that says nothing
SECRETS: list[Case] = []
for tid, tok in TOKENS:
    SECRETS.append((f"token-{tid}-log", "text", f"2026-12-07T03:00:01Z INFO using {tok} for upload", tok))
    SECRETS.append((f"token-{tid}-env", "env", ("UPLOAD_CONFIG", tok), tok))

_S = [_pw() for _ in range(40)]
_JWT = ("eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9." + "eyJzdWIiOiJiaWxsaW5nIiwiZXhwIjo" + _r(30) + "." + _r(43, _MIX + "-_"))
_JWE = ("eyJhbGciOiJSU0EtT0FFUCIsImVuYyI6IkEyNTZHQ00ifQ." + _r(342, _MIX + "-_") + "." + _r(16, _MIX + "-_")
        + "." + _r(60, _MIX + "-_") + "." + _r(22, _MIX + "-_"))
_AGE = "AGE-SECRET-KEY-1" + _r(58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")
_AZ_CODE = _r(54, _MIX + "_-") + "=="
SECRETS += [
    # issue 39's leaks
    ("xml-password-in-env", "env", ("SETTINGS_XML", f"<settings><server><id>nexus</id><username>ci</username>"
                                                     f"<password>{_S[0]}</password></server></settings>"), _S[0]),
    ("azure-functions-code", "text", f"POST https://billing-fn.azurewebsites.net/api/export?code={_AZ_CODE}", _AZ_CODE),
    ("okta-ssws-header-env", "env", ("OKTA_AUTH_HEADER", f"SSWS 00{_S[1]}{_S[2]}"), f"00{_S[1]}{_S[2]}"),
    ("jwe-five-segments", "text", f"session={_JWE}", _JWE),
    ("jwe-alone", "text", f"decrypting {_JWE} with kid main", _JWE),
    ("curl-authorization-bot", "argv", ["curl", "-H", f"Authorization: Bot {_S[3]}.{_S[4]}",
                                        "https://discord.example/api/v10/users/@me"], f"{_S[3]}.{_S[4]}"),
    ("curl-authorization-bot-line", "text", f"curl -sS -H 'Authorization: Bot {_S[5]}' https://discord.example/api",
     _S[5]),
    ("template-label-api-key", "obj", _cronjob_label("example.com/api-key", _S[6]), _S[6]),
    ("pod-label-token", "obj", _pod(labels={"ci.example.com/deploy-token": _S[7]}), _S[7]),
    ("url-password-echoed-in-event", "objs", [
        _env_pod("BROKER_URL", f"amqp://billing:{_S[8]}@rabbitmq.prod:5672/"),
        _event(f"authentication failed for user billing with password {_S[8]}")], _S[8]),
    ("url-password-echoed-alone-in-event", "objs", [
        _pod({"args": ["--broker", f"amqp://billing:{_S[9]}@rabbitmq.prod:5672/"]}),
        _event(f"rejected: {_S[9]}")], _S[9]),
    ("netrc-termination-message", "obj", _pod(status={"phase": "Failed", "containerStatuses": [{
        "name": "main", "state": {"terminated": {"exitCode": 1, "reason": "Error",
                                                 "message": f"machine artifacts.example login ci password {_S[10]}"}}}]}),
     _S[10]),
    ("netrc-default-line", "text", f"default login anonymous password {_S[11]}", _S[11]),
    ("age-identity-inline", "argv", ["sh", "-c", f"echo '{_AGE}' > /tmp/k && age -d --identity /tmp/k secrets.age"],
     _AGE),
    # structured places: JSON and YAML inside a string, URL query, header lines
    ("json-in-string-client-secret", "env", ("APP_CONFIG_JSON", json.dumps({"oauth": {"client_id": "billing",
                                                                            "client_secret": _S[12]}})), _S[12]),
    ("json-in-string-escaped", "text", json.dumps(json.dumps({"apiKey": _S[13], "region": "eu"})), _S[13]),
    ("yaml-in-string", "env", ("APP_CONFIG_YAML", f"db:\n  host: pg.prod\n  password: {_S[14]}\n  pool: 5\n"), _S[14]),
    ("query-api-key", "text", f"GET https://maps.example/v2/geocode?q=berlin&apikey={_S[15]}&lang=de", _S[15]),
    ("query-sig", "text", f"https://store.blob.example/c/x.csv?sv=2022-11-02&se=2026-12-08&sp=r&sig={_S[16]}%3D",
     _S[16]),
    ("header-line-x-api-key", "text", f"> X-Api-Key: {_S[17]}", _S[17]),
    ("header-line-proxy-auth", "text", f"Proxy-Authorization: Basic {_S[18]}dXNlcjpwYXNz==", f"{_S[18]}dXNlcjpwYXNz=="),
    ("header-private-token", "argv", ["curl", "--header", f"PRIVATE-TOKEN: {_S[19]}", "https://gitlab.example/api/v4"],
     _S[19]),
    ("xml-attribute-password", "text", f'<connection user="etl" password="{_S[20]}" host="db"/>', _S[20]),
    ("xml-secret-element-in-event", "obj", _event(f"config rejected: <clientSecret>{_S[21]}</clientSecret>"), _S[21]),
    ("jwt-split-over-args", "argv", ["verify-session", *_JWT.split(".")], _JWT.split(".")[2]),
    ("netrc-env", "env", ("NETRC_CONTENT_B", f"machine api.example login bot password {_S[22]}"), _S[22]),
    ("ini-password", "text", f"[client]\nuser = backup\npassword = {_S[23]}\n", _S[23]),
    ("dotenv-quoted-export", "text", f"export STRIPE_API_KEY='{_S[24]}'", _S[24]),
    ("ssh-url-password", "text", f"sftp://deploy:{_S[25]}@files.example:22/upload", _S[25]),
    ("password-echo-bare-log", "objs", [
        _pod({"env": [{"name": "REDIS_URL", "value": f"redis://:{_S[26]}@redis.prod:6379/0"}]}),
        _event(f"NOAUTH {_S[26]}")], _S[26]),
]

LOOK_ALIKES: list[tuple[str, str, Any]] = [
    ("kubeadm-ca-cert-hash", "text", "kubeadm join 10.0.0.1:6443 --token-ttl 0 --discovery-token-ca-cert-hash "
                                     "sha256:" + _r(64, _HEX)),
    ("kubeadm-ca-cert-hash-argv", "argv", ["kubeadm", "join", "10.0.0.1:6443", "--discovery-token-ca-cert-hash",
                                           "sha256:" + _r(64, _HEX)]),
    ("token-sink-path", "env", ("OTEL_TOKEN_SINK", "/var/run/otel")),
    ("token-sink-path-text", "text", "OTEL_TOKEN_SINK=/var/run/otel"),
    ("url-template-token", "text", "https://api.example/v1/export?token={token}&since={since}"),
    ("url-template-env", "env", ("CALLBACK_URL_TEMPLATE", "https://hooks.example/cb?api_key={api_key}")),
    ("stripe-publishable", "text", "stripe publishable key pk_live_" + _r(24)),
    ("twilio-account-sid", "text", "twilio account AC" + _r(32, _HEX)),
    ("mapbox-public", "text", "MAPBOX_STYLE_TOKEN_KIND=public pk.eyJ1Ijoi" + _r(20)),
    ("git-commit", "env", ("GIT_COMMIT", _r(40, _HEX))),
    ("image-digest", "text", "image registry.example/billing@sha256:" + _r(64, _HEX)),
    ("password-min-length", "env", ("PASSWORD_MIN_LENGTH", "12")),
    ("secret-name-flag", "argv", ["app", "--secret-name", "billing-db-creds", "--token-ttl", "24h"]),
    ("netrc-path", "env", ("NETRC_FILE", "/root/.netrc")),
    ("age-identity-path", "argv", ["age", "-d", "--identity", "/keys/age.txt", "backup.age"]),
    ("bearer-token-file", "text", "bearer_token_file: /var/run/secrets/kubernetes.io/serviceaccount/token"),
    ("password-file-flag", "argv", ["pg_basebackup", "--password-file=/run/secrets/pg", "-D", "/data"]),
    ("authorization-required", "text", "Authorization: required"),
    ("curl-header-env-ref", "argv", ["curl", "-H", "Authorization: Bearer $TOKEN", "https://api.example"]),
    ("label-name-api-key-rotator", "obj", _cronjob_label("app.kubernetes.io/name", "api-key-rotator")),
    ("label-api-key-rotation", "obj", _cronjob_label("example.com/api-key-rotation", "enabled")),
    ("json-tokenizer", "env", ("MODEL_CONFIG", json.dumps({"tokenizer": "bpe", "max_tokens": 4096}))),
    ("xml-password-policy", "text", "<passwordPolicy><minLength>12</minLength></passwordPolicy>"),
    ("request-id-header", "text", "X-Request-Id: 4f3c2a1b-7d9e-4a8f-b6c5-2e1d0f9a8b7c"),
    ("arn-secret", "text", "arn:aws:secretsmanager:eu-west-1:123456789012:secret:billing/db-AbCdEf"),
    ("token-endpoint", "env", ("OIDC_TOKEN_ENDPOINT", "https://auth.example/oauth2/token")),
    ("azure-function-no-code", "text", "POST https://billing-fn.azurewebsites.net/api/export?name=daily"),
    ("sha512-checksum", "env", ("ARTIFACT_SHA512", _r(128, _HEX))),
    ("yaml-secret-ref", "env", ("APP_CONFIG_YAML", "db:\n  passwordRef: billing-db\n  host: pg.prod\n")),
    ("session-affinity", "env", ("SESSION_AFFINITY", "ClientIP")),
]


def _mask(kind: str, payload: Any, strict: bool = False) -> Any:
    red = R.Redactor(strict=strict)
    if kind == "text":
        return red.text(payload)
    if kind == "argv":
        return red.argv(list(payload))
    if kind == "env":
        return red.kube_object(_env_pod(*payload))
    if kind == "obj":
        return red.kube_object(payload)
    assert kind == "objs"
    red.learn(payload)
    return [red.kube_object(o) for o in payload]


def _unmasked(kind: str, payload: Any) -> Any:
    return _env_pod(*payload) if kind == "env" else payload


def _leaks(kind: str, payload: Any, secret: str) -> bool:
    out = _mask(kind, payload)
    text = out if isinstance(out, str) else json.dumps(out)
    return secret in text or json.dumps(secret)[1:-1] in text


def _changed(kind: str, payload: Any) -> bool:
    return bool(_mask(kind, payload) != _unmasked(kind, payload))


#: the leaks the rules keep, on purpose (docs/REDACTION.md): a Discord bot token alone on a line has no
#: literal a text could be filtered on; matching its shape on every text would cost every output
KNOWN_LEAKS = {"token-discord-bot-log": "no literal to filter on", "token-discord-bot-env": "no literal to filter on"}


@pytest.mark.skipif(bool(os.environ.get("CRONCTL_REDACT_FILE")), reason="measuring another copy")
@pytest.mark.parametrize("kind, payload, secret", [
    pytest.param(k, p, s, id=i, marks=[pytest.mark.xfail(strict=True, reason=KNOWN_LEAKS[i])] if i in KNOWN_LEAKS else [])
    for i, k, p, s in SECRETS])
def test_every_secret_of_the_third_corpus_is_masked(kind: str, payload: Any, secret: str) -> None:
    assert not _leaks(kind, payload, secret), _mask(kind, payload)


@pytest.mark.skipif(bool(os.environ.get("CRONCTL_REDACT_FILE")), reason="measuring another copy")
@pytest.mark.parametrize("kind, payload", [pytest.param(k, p, id=i) for i, k, p in LOOK_ALIKES])
def test_every_look_alike_of_the_third_corpus_is_kept(kind: str, payload: Any) -> None:
    assert _mask(kind, payload) == _unmasked(kind, payload)


@pytest.mark.skipif(bool(os.environ.get("CRONCTL_REDACT_FILE")), reason="measuring another copy")
def test_a_template_label_named_as_a_secret_is_masked_in_strict_mode_too() -> None:
    out = _mask("obj", _cronjob_label("example.com/api-key", _S[6]), strict=True)
    assert _S[6] not in json.dumps(out)


def measure() -> tuple[float, float, list[str], list[str]]:
    """(recall, precision, ids of leaked secrets, ids of changed look-alikes)."""
    leaked = [i for i, k, p, s in SECRETS if _leaks(k, p, s)]
    changed = [i for i, k, p in LOOK_ALIKES if _changed(k, p)]
    masked = len(SECRETS) - len(leaked)
    recall = masked / len(SECRETS)
    precision = masked / (masked + len(changed)) if masked + len(changed) else 0.0
    return recall, precision, leaked, changed


def test_summary_recall_and_precision_of_the_third_corpus() -> None:
    assert len(SECRETS) >= 90 and len(LOOK_ALIKES) >= 30
    recall, precision, leaked, changed = measure()
    masked = len(SECRETS) - len(leaked)
    print(f"\nREDACTION corpus 3 ({os.environ.get('CRONCTL_REDACT_FILE') or 'cronctl.redact'}): "
          f"{len(SECRETS)} secrets, {len(LOOK_ALIKES)} look-alikes: recall {recall:.3f} ({masked}/{len(SECRETS)}), "
          f"precision {precision:.3f} ({len(changed)} look-alike(s) changed)")
    print("  leaked:", ", ".join(leaked) or "-")
    print("  changed:", ", ".join(changed) or "-")
    if os.environ.get("CRONCTL_REDACT_FILE"):
        return
    assert recall >= 0.97
    assert precision >= 0.97
