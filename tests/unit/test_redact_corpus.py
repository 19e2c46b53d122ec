"""The redaction corpus: secret shapes that must be masked and harmless look-alikes that must be kept.

Each secret case is a line as it appears in a log, an env value, an argument or an annotation,
and the secret inside it; the line is masked when the secret is gone from the output. Each
look-alike must come out unchanged. The summary test prints recall (secrets masked / secrets)
and precision (masked secret lines / all lines that were changed) and asserts their floors.
"""

from __future__ import annotations

import pytest

from cronctl.redact import Redactor, looks_secret

GH = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"          # 36 after the prefix
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N"

#: (id, line, secret that must not survive)
SECRETS: list[tuple[str, str, str]] = [
    ("env-db-password", "DB_PASSWORD=Tr0ub4dor&3", "Tr0ub4dor"),
    ("env-github-token", "GITHUB_TOKEN=0123456789abcdef0123", "0123456789abcdef0123"),
    ("export-api-token", 'export API_TOKEN="q9w8e7r6t5"', "q9w8e7r6t5"),
    ("access-token-query", "GET /cb?code=1&access_token=ya29.a0AfH6SMB&state=x", "ya29.a0AfH6SMB"),
    ("access-token-kv", "access_token: 8f14e45fceea167a5a36", "8f14e45fceea167a5a36"),
    ("aws-secret-ini", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
     "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("aws-akia", "using key AKIAIOSFODNN7EXAMPLE for s3", "AKIAIOSFODNN7EXAMPLE"),
    ("aws-asia", "creds ASIAY34FZKBOKMUTVV7A expired", "ASIAY34FZKBOKMUTVV7A"),
    ("flag-password-two-words", "mysqldump --password hunter22 --all-databases", "hunter22"),
    ("flag-password-equals", "/app/sync --password=hunter23 --verbose", "hunter23"),
    ("flag-token-two-words", "cli login --token 9a8b7c6d5e4f", "9a8b7c6d5e4f"),
    ("flag-single-dash-go", "app -db-password s3cret99", "s3cret99"),
    ("mysql-p-glued", "mysql -h db -u root -pR00tPa55 orders", "R00tPa55"),
    ("pgpassword-in-sh-c", 'sh -c "PGPASSWORD=pgs3cret psql -h db -c select"', "pgs3cret"),
    ("url-password-slash", "postgres://orders:pa/ss@db:5432/orders", "pa/ss"),
    ("url-password-hash", "mysql://app:pa#ss1@db/app", "pa#ss1"),
    ("url-password-at", "redis://:p@ssw0rd@cache:6379/0", "p@ssw0rd"),
    ("url-password-plain", "amqp://guest:guestpw@rabbit:5672/", "guestpw"),
    ("url-user-only-token", f"git clone https://{GH}@github.com/acme/app.git", GH),
    ("url-user-only-hex", "https://0123456789abcdef0123456789abcdef@api.example.com/v1", "0123456789abcdef0123456789abcdef"),
    ("pem-rsa", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7x\nq2w3e4r5\n-----END RSA PRIVATE KEY-----",
     "MIIEowIBAAKCAQEA7x"),
    ("pem-openssh", "-----BEGIN OPENSSH PRIVATE KEY-----\\nb3BlbnNzaC1rZXktdjE\\n-----END OPENSSH PRIVATE KEY-----",
     "b3BlbnNzaC1rZXktdjE"),
    ("pem-cut", "key: -----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEF", "MIIEvQIBADANBgkqhkiG9w0BAQEF"),
    ("github-token-word", f"Authorization: token {GH}", GH),
    ("github-pat", "GH=github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
     "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"),
    ("github-app-token", "ghs_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2", "ghs_Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"),
    ("gitlab-pat", "glpat-AbCdEfGhIjKlMnOpQrSt in header", "glpat-AbCdEfGhIjKlMnOpQrSt"),
    ("slack-webhook", "POST https://hooks.slack.com/services/T0ABCDEF1/B0ABCDEF2/abcdefghijklmnopqrstuvwx",
     "abcdefghijklmnopqrstuvwx"),
    ("slack-bot-token", "slack: xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
     "AbCdEfGhIjKlMnOpQrStUvWx"),
    ("stripe-live", "charging with sk_live_4eC39HqLyjWDarjtT1zdp7dc", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    ("google-api-key", "maps key AIzaSyA-1234567890abcdefghijklmnopqrstu", "AIzaSyA-1234567890abcdefghijklmnopqrstu"),
    ("jwt", f"id_token {JWT}", JWT),
    ("bearer", "Authorization: Bearer 7f3c9a1e2b4d6f80", "7f3c9a1e2b4d6f80"),
    ("basic", "Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="),
    ("json-value-with-spaces", '{"password": "correct horse battery staple"}', "correct horse battery"),
    ("json-escaped-in-string", '"{\\"client_secret\\": \\"cs-991 x\\"}"', "cs-991 x"),
    ("yaml-secret", "  clientSecret: 7d9f1a2b3c4d", "7d9f1a2b3c4d"),
    ("pgpass-env", "PGPASS=pgpass-value-1", "pgpass-value-1"),
    ("tls-pem-env", "TLS_PEM=MIIBszCCAVmgAwIBAgIU", "MIIBszCCAVmgAwIBAgIU"),
    ("camel-api-key", "apiKey=AbC123xYz789", "AbC123xYz789"),
    ("header-api-key", "X-Api-Key: 5up3r-s3cr3t-k3y", "5up3r-s3cr3t-k3y"),
    ("spring-datasource-password", "spring.datasource.password=Spr1ngPw", "Spr1ngPw"),
    ("npm-token", "//registry.npmjs.org/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789",
     "npm_abcdefghijklmnopqrstuvwxyz0123456789"),
    ("sendgrid", "SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG",
     "SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG"),
    ("azure-account-key", "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=Zm9vYmFyYmF6cXV4+/==;",
     "Zm9vYmFyYmF6cXV4"),
    ("dsn-env", "SENTRY_DSN=https://abc123def456@o1.ingest.sentry.io/7", "abc123def456"),
    ("redis-password-flag", "redis-cli -a s3cr3tRedis --auth-token zz99yy88xx77", "zz99yy88xx77"),
    ("s3-presigned-signature", "GET /b/o?X-Amz-Credential=x%2F20261202&X-Amz-Signature=9f86d081884c7d65",
     "9f86d081884c7d65"),
    ("secret-key-base", "SECRET_KEY_BASE=deadbeefcafe1234", "deadbeefcafe1234"),
    ("yaml-password-word", "  password: hunter", "hunter"),
]

#: (id, line): must come out unchanged
LOOK_ALIKES: list[tuple[str, str]] = [
    ("password-policy", "password_policy=strict"),
    ("password-min-length", "PASSWORD_MIN_LENGTH=12"),
    ("token-count", "token_count=3"),
    ("token-ttl", "TOKEN_TTL=3600"),
    ("password-file-flag", "--password-file /run/secrets/db"),
    ("password-file-env", "DB_PASSWORD_FILE=/run/secrets/db-password"),
    ("password-stdin", "docker login --password-stdin registry.example"),
    ("no-password-flag", "pg_dump --no-password --verbose orders"),
    ("secret-name-yaml", "secretName: orders-db-credentials"),
    ("secret-key-ref", "secretKeyRef: {name: db, key: password}"),
    ("image-digest", "image: registry.example/app@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"),
    ("commit-sha", "built from commit 4b825dc642cb6eb9a060e54bf8d69288fbee4904"),
    ("uuid", "job uid 0b4e3c1a-2f6d-4c8e-9a7b-1d2e3f4a5b6c finished"),
    ("url-no-userinfo", "GET https://api.example.com/v1/orders?page=2 200"),
    ("url-port", "connecting to https://db.internal:5432/orders"),
    ("url-email-in-query", "https://host:8443/x?mail=a@b.com"),
    ("url-git-user", "git clone https://git@github.com/acme/app.git"),
    ("ssh-user", "ssh://deploy@bastion.example.com:22"),
    ("akia-in-word", "TAKIAWASEABCDEFGHIJKLMNOP is a word"),
    ("akia-short", "AKIA123"),
    ("key-label", "key: app"),
    ("primary-key", "primary_key=order_id"),
    ("public-key-path", "PUBLIC_KEY=/etc/keys/pub.pem"),
    ("token-expired-word", "token expired at 2026-12-02T10:00:00Z, refreshing"),
    ("basic-prose", "basic information about the run"),
    ("bearer-prose", "the bearer of bad news"),
    ("tokenizer", "TOKENIZER=wordpiece"),
    ("secretary", "secretary=jane"),
    ("password-reference", 'sh -c "PGPASSWORD=$DB_PASSWORD psql -h db"'),
    ("password-brace-reference", "PASSWORD=${DB_PASSWORD}"),
    ("password-empty", "password="),
    ("password-masked", "password=********"),
    ("auth-enabled", "AUTH_ENABLED=true"),
    ("auth-url", "AUTH_URL=https://login.example.com/oauth2/token"),
    ("session-timeout", "SESSION_TIMEOUT=30m"),
    ("key-id", "AWS_ACCESS_KEY_ID_NAME=prod"),
    ("mysql-port-flag", "mysql -h db -P 3306 -u app orders"),
    ("tar-p", "tar -pxf backup.tar -C /restore"),
    ("p-port-non-mysql", "server -p8080 --host 0.0.0.0"),
    ("job-name", "job mp-orders-sync-29936830 created"),
    ("event-message", "Created pod: mp-orders-sync-29936830-x7k2q"),
    ("log-level", "level=info msg=\"synced 42 orders\" duration=1.2s"),
    ("sk-in-word", "task-runner-0123456789abcdefghijklmnopqrstuvwxyz started"),
    ("cron-schedule", "schedule: */10 * * * *"),
    ("k8s-time", "lastScheduleTime: 2026-12-02T10:00:00Z"),
    ("hash-sum", "sha256sum 2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"),
    ("sig-verified", "signature verified: true"),
    ("passenger", "PASSENGER_COUNT=4"),
    ("auth-failed", "auth: failed for user bob"),
    ("token-expired-kv", "token: expired, refreshing"),
    ("secret-not-found", "secret: not found"),
    ("k8s-volume-event", 'MountVolume.SetUp failed for volume "creds" : secret "db-creds" not found'),
    ("k8s-key-event", "Error: couldn't find key password in Secret orders/db"),
    ("token-type", "token_type=bearer"),
    ("grant-type", "grant_type=password&username=bob"),
    ("cacert", "curl --cacert=/etc/ssl/ca.pem https://api.example.com"),
    ("pin-memory", "pin_memory: True"),
    ("keyboard", "keyboard: us"),
]


def _mask(line: str) -> str:
    return Redactor().text(line)


@pytest.mark.parametrize("line, secret", [pytest.param(l, s, id=i) for i, l, s in SECRETS])
def test_every_secret_shape_is_masked(line: str, secret: str) -> None:
    out = _mask(line)
    assert secret not in out, out
    assert "<redacted:" in out


@pytest.mark.parametrize("line", [pytest.param(l, id=i) for i, l in LOOK_ALIKES])
def test_every_harmless_look_alike_is_kept(line: str) -> None:
    assert _mask(line) == line


@pytest.mark.parametrize("name", ["PGPASS", "TLS_PEM", "DB_PASSWORD", "GITHUB_TOKEN", "MYSQL_PWD", "clientSecret",
                                  "AWS_SECRET_ACCESS_KEY", "STRIPE_API_KEY", "PGPASSWORD", "X-Api-Key"])
def test_env_names_that_hold_secrets_are_recognised(name: str) -> None:
    assert looks_secret(name)


@pytest.mark.parametrize("name", ["PASSWORD_FILE", "TOKEN_URL", "PASSWORD_MIN_LENGTH", "KEYCLOAK_URL", "key",
                                  "PRIMARY_KEY", "PUBLIC_KEY", "AUTH_ENABLED", "TOKENIZER", "secretName",
                                  "AWS_ACCESS_KEY_ID"])
def test_names_about_a_secret_are_not_secret(name: str) -> None:
    assert not looks_secret(name)


def test_recall_and_precision_of_the_corpus_meet_their_floors() -> None:
    assert len(SECRETS) >= 40 and len(LOOK_ALIKES) >= 40
    masked = sum(1 for _i, line, secret in SECRETS if secret not in _mask(line))
    false_pos = sum(1 for _i, line in LOOK_ALIKES if _mask(line) != line)
    recall = masked / len(SECRETS)
    precision = masked / (masked + false_pos) if masked + false_pos else 0.0
    print(f"\nREDACTION corpus: {len(SECRETS)} secrets, {len(LOOK_ALIKES)} look-alikes: "
          f"recall {recall:.3f} ({masked}/{len(SECRETS)}), precision {precision:.3f} "
          f"({false_pos} look-alike(s) changed)")
    assert recall >= 1.0
    assert precision >= 1.0
