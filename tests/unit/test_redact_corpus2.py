"""A second, larger redaction corpus (issue 26), made fresh: secrets as they stand in command
lines (tool x flag form, as a line of text and as a ``command``/``args`` list), env values by
name, provider token shapes, connection strings, and the fields of a pod that hold headers, hook
commands, termination messages, annotations and kubelet Events; and harmless look-alikes that a
naive rule would hit (``*_KEY_ARN``, ``TOKEN_BUCKET_*``, ``-p 8080``, ``--password-file /path``,
``curl -u user`` without a password, public keys and certificates, ...).

A secret case passes when its secret is absent from what the redactor returns; a look-alike when
what comes back equals what went in. The summary test prints recall (secrets masked / secrets)
and precision (secret cases changed / all cases changed) and asserts both >= 0.97.

``CRONCTL_REDACT_FILE=/path/to/redact.py`` measures another copy of the module (the old rules),
without asserting: ``CRONCTL_REDACT_FILE=/tmp/old_redact.py pytest -s -k summary this_file``.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import random
import shlex
from typing import Any, Callable

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
_rng = random.Random(2026_12_06)
_ALNUM = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"


def _v(n: int = 14, extra: str = "") -> str:
    """A fresh secret value: letters and digits (and ``extra``), at least one digit."""
    chars = _ALNUM + extra
    s = "".join(_rng.choice(chars) for _ in range(n - 1))
    return s[: n // 2] + str(_rng.randint(2, 9)) + s[n // 2:]


def _hex(n: int) -> str:
    return "".join(_rng.choice("0123456789abcdef") for _ in range(n))


def _b64(n: int) -> str:
    return "".join(_rng.choice(_ALNUM + "+/") for _ in range(n))


# -- secrets -------------------------------------------------------------------------------------
# (id, kind, payload, secret): kind "text" (a line), "argv" (command + args), "env" ((name, value)),
# "obj" (a Kubernetes dict), "objs" (a list of dicts masked as one output, in order)
Case = tuple[str, str, Any, str]
SECRETS: list[Case] = []

#: shell command lines with {V} where the secret stands; each is a line of text and an argv list
COMMANDS: list[tuple[str, str]] = [
    ("curl-u", "curl -fsS -u deploy:{V} https://nexus.example/service/rest/v1/status"),
    ("curl-user", "curl --user admin:{V} -X POST https://jenkins.example/job/x/build"),
    ("curl-user-eq", "curl --user=ci:{V} https://api.example/v1"),
    ("curl-u-glued", "curl -uci-bot:{V} https://artifactory.example/api/system/ping"),
    ("curl-proxy-user", "curl --proxy-user px:{V} -x http://proxy:3128 https://example.com"),
    ("curl-oauth2-bearer", "curl --oauth2-bearer {V} https://api.example/me"),
    ("curl-cert-pass", "curl --cert /etc/tls/client.pem:{V} https://mtls.example"),
    ("redis-cli-a", "redis-cli -h cache -p 6379 -a {V} PING"),
    ("redis-cli-pass", "redis-cli --pass {V} -h cache INFO"),
    ("mysql-p", "mysql -h db -u root -p{V} -e 'select 1'"),
    ("mysqldump-p", "mysqldump -u backup -p{V} --single-transaction orders"),
    ("mysqlsh-p", "mysqlsh -u admin -p{V} --sql -e 'select 1'"),
    ("mysqlsh-password-eq", "mysqlsh --password={V} --uri admin@db:3306"),
    ("mariadb-p", "mariadb -uapp -p{V} shop"),
    ("mysqladmin-password", "mysqladmin --password={V} ping"),
    ("psql-pgpassword", "PGPASSWORD={V} psql -h db -U app -c 'vacuum'"),
    ("pg-dump-env-pgpassword", "env PGPASSWORD={V} pg_dump -h db orders"),
    ("sqlcmd-P", "sqlcmd -S tcp:sql.example,1433 -U sa -P {V} -Q 'SELECT 1'"),
    ("bcp-P", "bcp dbo.orders out /tmp/o.dat -S sql -U sa -P {V} -c"),
    ("ldapsearch-w", "ldapsearch -x -H ldaps://ldap.example -D cn=admin,dc=example,dc=org -w {V} -b dc=example,dc=org"),
    ("ldapmodify-w", "ldapmodify -x -D cn=admin,dc=example -w {V} -f /tmp/change.ldif"),
    ("ldappasswd-s", "ldappasswd -x -D cn=admin,dc=example -W -s {V} uid=bob,dc=example"),
    ("smbclient-U", "smbclient //files.example/backup -U svc-backup%{V} -c 'ls'"),
    ("smbclient-user-eq", "smbclient //files/share --user=svc%{V} -c 'put dump.sql'"),
    ("sshpass-p", "sshpass -p {V} ssh -o StrictHostKeyChecking=no deploy@10.0.0.5 uptime"),
    ("sshpass-p-glued", "sshpass -p{V} scp dump.sql deploy@backup:/srv/"),
    ("docker-login-p", "docker login -u ci -p {V} registry.example.com"),
    ("docker-login-password", "docker login --username ci --password {V} ghcr.io"),
    ("docker-login-password-eq", "docker login --password={V} -u ci quay.io"),
    ("podman-login-p", "podman login -u robot -p {V} quay.io"),
    ("buildah-login-p", "buildah login -u robot -p {V} registry.example"),
    ("nerdctl-login-p", "nerdctl login -u ci -p {V} harbor.example"),
    ("helm-registry-login", "helm registry login oci.example -u ci -p {V}"),
    ("helm-repo-password", "helm repo add internal https://charts.example --username ci --password {V}"),
    ("az-login-p", "az login -u ops@example.com -p {V}"),
    ("az-login-sp", "az login --service-principal -u 5f1c2d3e-aaaa-bbbb-cccc-111122223333 -p {V} --tenant example.onmicrosoft.com"),
    ("az-password", "az login --username ops@example.com --password {V}"),
    ("gcloud-set-password", "gcloud sql users set-password app --instance=orders --password={V}"),
    ("aws-configure-secret", "aws configure set aws_secret_access_key {V}"),
    ("aws-configure-session", "aws configure set aws_session_token {V} --profile ci"),
    ("vault-login-token", "vault login {V}"),
    ("vault-login-userpass", "vault login -method=userpass username=ops password={V}"),
    ("twine-p", "twine upload -u __token__ -p {V} dist/*"),
    ("twine-password", "twine upload --username ci --password {V} dist/*"),
    ("keytool-storepass", "keytool -importcert -noprompt -alias ca -file ca.pem -keystore t.jks -storepass {V}"),
    ("keytool-keypass", "keytool -genkeypair -alias app -keystore k.jks -keypass {V} -dname CN=app"),
    ("keytool-srcstorepass", "keytool -importkeystore -srckeystore a.p12 -srcstorepass {V} -destkeystore b.jks"),
    ("openssl-pass", "openssl pkcs12 -export -in c.pem -inkey k.pem -out c.p12 -passout pass:{V}"),
    ("openssl-passin", "openssl rsa -in enc.key -passin pass:{V} -out plain.key"),
    ("openssl-enc-pass", "openssl enc -aes-256-cbc -salt -in dump.sql -out dump.enc -pass pass:{V}"),
    ("openssl-enc-k", "openssl enc -aes-256-cbc -in a -out b -k {V}"),
    ("htpasswd-b", "htpasswd -b /etc/nginx/.htpasswd admin {V}"),
    ("htpasswd-nb", "htpasswd -nbB metrics {V}"),
    ("skopeo-src-creds", "skopeo copy --src-creds ci:{V} docker://a.example/x:1 docker://b.example/x:1"),
    ("skopeo-dest-creds", "skopeo copy --dest-creds=robot:{V} oci:/tmp/x docker://quay.io/x:1"),
    ("kubectl-from-literal", "kubectl create secret generic db --from-literal=password={V} -n prod"),
    ("kubectl-from-literal-key", "kubectl create secret generic api --from-literal=api-key={V}"),
    ("oc-login-p", "oc login https://api.ocp.example:6443 -u admin -p {V}"),
    ("mongosh-p", "mongosh --host mongo -u root -p {V} --authenticationDatabase admin"),
    ("mongodump-password", "mongodump --username backup --password {V} --out /backup"),
    ("cqlsh-p", "cqlsh cassandra 9042 -u cassandra -p {V}"),
    ("ipmitool-P", "ipmitool -I lanplus -H 10.0.0.9 -U admin -P {V} power status"),
    ("zip-P", "zip -r -P {V} backup.zip /data"),
    ("7z-p", "7z a -p{V} -mhe=on backup.7z /data"),
    ("ssh-keygen-N", "ssh-keygen -t ed25519 -N {V} -f /tmp/id"),
    ("lftp-u", "lftp -u ftpuser,{V} ftp.example.com -e 'mirror -R /data /in; quit'"),
    ("sqlplus-userpass", "sqlplus system/{V}@//oracle.example:1521/ORCL @job.sql"),
    ("rabbitmqctl-add-user", "rabbitmqctl add_user svc-orders {V}"),
    ("rabbitmqctl-change-password", "rabbitmqctl change_password admin {V}"),
    ("mc-alias-set", "mc alias set minio http://minio:9000 minioadmin {V}"),
    ("echo-password-stdin", "echo {V} | docker login --password-stdin -u ci registry.example"),
    ("snmpwalk-A", "snmpwalk -v3 -l authPriv -u mon -a SHA -A {V} -x AES -X xPriv9Zq2 10.0.0.1"),
    ("doctl-t", "doctl auth init -t {V}"),
    ("etcdctl-user", "etcdctl --user root:{V} --endpoints https://etcd:2379 endpoint health"),
    ("wget-http-password", "wget --http-user=ci --http-password={V} https://files.example/a.tgz"),
    ("psql-conninfo", "psql 'host=db port=5432 user=app password={V} dbname=orders'"),
    ("influx-password", "influx -username admin -password {V} -execute 'show databases'"),
    ("java-keystore-password", "java -Djavax.net.ssl.keyStorePassword={V} -jar app.jar"),
    ("gpg-passphrase", "gpg --batch --pinentry-mode loopback --passphrase {V} -d secrets.gpg"),
    ("wp-dbpass", "wp config create --dbname=wp --dbuser=wp --dbpass={V} --dbhost=db"),
    ("cypher-shell-p", "cypher-shell -a neo4j://graph:7687 -u neo4j -p {V}"),
    ("rabbitmqadmin-p", "rabbitmqadmin -H mq -u admin -p {V} list queues"),
    ("git-extraheader", "git -c http.extraHeader='Authorization: Basic {V}' clone https://git.example/x.git"),
    ("unzip-P", "unzip -P {V} export.zip -d /tmp/x"),
]

for cid, template in COMMANDS:
    value = _v()
    line = template.format(V=value)
    SECRETS.append((f"text-{cid}", "text", line, value))
    SECRETS.append((f"argv-{cid}", "argv", shlex.split(line), value))

#: the same commands quoted by `sh -c` in a container's args (one string, as lint and bundle see it)
for cid, template in COMMANDS[::6]:
    value = _v()
    SECRETS.append((f"sh-c-{cid}", "argv", ["/bin/sh", "-c", "set -e; " + template.format(V=value) + " && echo ok"],
                    value))

_DOCKER_JSON = base64.b64encode(json.dumps(
    {"auths": {"registry.example": {"auth": base64.b64encode(b"ci:" + _v().encode()).decode()}}}).encode()).decode()
_PEM = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA" + _b64(48) + "\n" + _b64(64)
        + "\n-----END RSA PRIVATE KEY-----")

#: env vars by name: (name, value)
ENV: list[tuple[str, str]] = [
    ("DB_PASSWORD", _v()), ("STRIPE_SECRET_KEY", "sk_live_" + _v(24)),
    ("SLACK_WEBHOOK_URL", f"https://hooks.slack.com/services/T{_v(8).upper()}/B{_v(8).upper()}/{_v(24)}"),
    ("DOCKER_CONFIG_JSON", _DOCKER_JSON), ("OAUTH_CLIENT_SECRET", _v(32)), ("REDIS_AUTH", _v()),
    ("SMTP_PASS", _v()), ("DBPASS", _v()), ("JWT_SIGNING_KEY", _v(40)), ("ENCRYPTION_KEY", _b64(44)),
    ("SESSION_SECRET", _v(30)), ("COOKIE_SECRET", _v(30)), ("API_KEY", _v(32)), ("X_API_KEY", _v(32)),
    ("GITHUB_PAT", _v(40)), ("NPM_AUTH_TOKEN", _v(36)), ("HMAC_KEY", _hex(64)), ("SSH_PRIVATE_KEY", _PEM),
    ("AZURE_CLIENT_SECRET", _v(34, "~._-")), ("AWS_SECRET_ACCESS_KEY", _b64(40)), ("AWS_SESSION_TOKEN", _b64(120)),
    ("DISCORD_WEBHOOK", f"https://discord.com/api/webhooks/{_rng.randint(10**17, 10**18)}/{_v(60, '_-')}"),
    ("TEAMS_WEBHOOK_URL", f"https://acme.webhook.office.com/webhookb2/{_hex(8)}-{_hex(4)}/IncomingWebhook/{_hex(32)}/{_v(20)}"),
    ("MASTER_KEY", _hex(32)), ("LICENSE_KEY", _v(40)), ("RAILS_MASTER_KEY", _hex(32)),
    ("DJANGO_SECRET_KEY", _v(50, "!@#%^*(-_=+)")), ("DATADOG_API_KEY", _hex(32)), ("DD_APP_KEY", _hex(40)),
    ("NEW_RELIC_LICENSE_KEY", _hex(40)), ("PUSHER_APP_SECRET", _hex(20)), ("CONSUL_HTTP_TOKEN", _v(36)),
    ("VAULT_TOKEN", "hvs." + _v(24)), ("KAFKA_SASL_PASSWORD", _v()), ("LDAP_BIND_PW", _v()), ("DB_PASS", _v()),
    ("MONGO_INITDB_ROOT_PASSWORD", _v()), ("REGISTRY_PASSWORD", _v()), ("BASIC_AUTH_CREDENTIALS", "admin:" + _v()),
    ("WEBHOOK_SECRET", "whsec_" + _v(32)), ("SIGNING_SECRET", _hex(32)), ("CLIENT_SECRET", _v(40)),
    ("TWILIO_AUTH_TOKEN", _hex(32)), ("SENDGRID_API_KEY", "SG." + _v(22) + "." + _v(43)),
    ("SNOWFLAKE_PASSWORD", _v()), ("AIRFLOW__CORE__FERNET_KEY", _b64(43) + "="),
    ("MINIO_ROOT_PASSWORD", _v()), ("RABBITMQ_DEFAULT_PASS", _v()), ("GRAFANA_ADMIN_PASSWORD", _v()),
]
for name, value in ENV:
    SECRETS.append((f"env-{name}", "env", (name, value), value))

#: known token shapes in neutral text
TOKENS: list[tuple[str, str]] = [
    ("github-ghp", "ghp_" + _v(36)), ("github-pat", "github_pat_11" + _v(20) + "_" + _v(59)),
    ("gitlab-glpat", "glpat-" + _v(20)), ("gitlab-deploy", "gldt-" + _v(20)), ("gitlab-runner", "glrt-" + _v(20)),
    ("slack-xoxb", f"xoxb-{_rng.randint(10**11, 10**12)}-{_rng.randint(10**12, 10**13)}-{_v(24)}"),
    ("slack-xapp", f"xapp-1-A{_v(10).upper()}-{_rng.randint(10**12, 10**13)}-{_hex(64)}"),
    ("stripe-sk", "sk_live_" + _v(24)), ("stripe-rk", "rk_live_" + _v(24)), ("stripe-whsec", "whsec_" + _v(32)),
    ("google-aiza", "AIza" + _v(35, "_-")), ("google-gocspx", "GOCSPX-" + _v(28, "_-")),
    ("google-ya29", "ya29.a0" + _v(60, "_-")), ("google-refresh", "1//0" + _v(40, "_-")),
    ("npm", "npm_" + _v(36)), ("pypi", "pypi-AgEIcHlwaS5vcmc" + _v(60, "_-")), ("dockerhub", "dckr_pat_" + _v(27, "_-")),
    ("huggingface", "hf_" + _v(34)), ("openai", "sk-proj-" + _v(48, "_-")), ("anthropic", "sk-ant-api03-" + _v(80, "_-")),
    ("vault-hvs", "hvs." + _v(24)), ("vault-hvb", "hvb." + _v(90, "_-")), ("do", "dop_v1_" + _hex(64)),
    ("shopify", "shpat_" + _hex(32)), ("grafana-sa", "glsa_" + _v(32) + "_" + _hex(8)), ("newrelic", "NRAK-" + _v(27).upper()),
    ("linear", "lin_api_" + _v(40)), ("databricks", "dapi" + _hex(32)), ("postman", f"PMAK-{_hex(24)}-{_hex(34)}"),
    ("age", "AGE-SECRET-KEY-1" + "".join(_rng.choice("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L") for _ in range(58))),
    ("atlassian", "ATATT3xFfGF0" + _v(60, "_-=")), ("pulumi", "pul-" + _hex(40)), ("doppler", "dp.pt." + _v(43)),
    ("sendgrid", "SG." + _v(22) + "." + _v(43)), ("mailgun", "key-" + _hex(32)),
    ("telegram", f"{_rng.randint(10**8, 10**9)}:AA{_v(33, '_-')}"), ("square", "sq0atp-" + _v(22, "_-")),
    ("azure-ad-secret", _v(3) + "8Q~" + _v(34, "_~.-")), ("aws-akia", "AKIA" + _v(16).upper()),
    ("aws-session", "IQoJb3JpZ2luX2VjE" + _b64(200)), ("jwt", "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJjaSJ9." + _v(43, "_-")),
    ("openssh-b64", "b3BlbnNzaC1rZXktdjEAAAAA" + _b64(60)),
    ("pem-b64", base64.b64encode(b"-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEI" + _v(40).encode()).decode()),
    ("docker-config-b64", _DOCKER_JSON), ("twilio-sk", "SK" + _hex(32)),
]
for tid, tok in TOKENS:
    SECRETS.append((f"token-{tid}", "text", f"2026-12-06T01:02:03Z INFO using credential {tok} for upload", tok))

#: connection strings and URLs
CONN: list[tuple[str, str, str]] = []
for cid, template in [
    ("mssql-braces", "Server=tcp:sql.example,1433;Database=orders;User Id=sa;Password={{{V};x}};Encrypt=true"),
    ("mssql-plain", "Server=sql;Database=orders;User ID=app;Password={V};TrustServerCertificate=True"),
    ("odbc-pwd-braces", "Driver={{ODBC Driver 18 for SQL Server}};Server=sql;UID=app;PWD={{{V}}}"),
    ("odbc-pwd", "DSN=orders;UID=app;PWD={V}"),
    ("jdbc-query", "jdbc:mysql://db:3306/orders?user=app&password={V}&useSSL=true"),
    ("jdbc-sqlserver", "jdbc:sqlserver://sql:1433;databaseName=o;user=sa;password={V};"),
    ("mongodb-srv", "mongodb+srv://app:{V}@cluster0.abcde.mongodb.net/orders?retryWrites=true"),
    ("rediss", "rediss://default:{V}@cache.example:6380/0"),
    ("amqps", "amqps://orders:{V}@mq.example:5671/prod"),
    ("postgres-url", "postgresql://app:{V}@db.example:5432/orders?sslmode=require"),
    ("azure-storage", "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={V}==;EndpointSuffix=core.windows.net"),
    ("azure-servicebus", "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={V}="),
    ("kafka-jaas", 'sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="app" password="{V}";'),
    ("oracle-ezconnect", "app/{V}@//oracle.example:1521/ORCLPDB1"),
    ("ftp-url", "ftp://upload:{V}@ftp.example.com/in/"),
    ("ldap-url", "ldaps://cn=admin:{V}@ldap.example:636"),
    ("https-userinfo", "https://ci-bot:{V}@git.example.com/acme/app.git"),
    ("sas-sig", "https://acme.blob.core.windows.net/b/x?sv=2022-11-02&se=2026-12-31&sp=r&sig={V}%3D"),
    ("redis-conf", "requirepass {V}"),
    ("pgpass-line", "db.example:5432:orders:app:{V}"),
]:
    value = _v()
    SECRETS.append((f"conn-{cid}", "text", template.format(V=value), value))


_POD = "orders-sync-29936830-x7k2q"


def _pod(container: Obj, annotations: dict[str, str] | None = None, status: Obj | None = None) -> Obj:
    """A pod of the orders Job (builders.pod) whose one container ``main`` carries ``container``."""
    return builders.pod(_POD, namespace="prod", annotations=annotations or {}, status=status, containers=[
        {"name": "main", "image": "registry.example/orders:1.2", **container}])


def _event(message: str, reason: str = "FailedPostStartHook") -> Obj:
    """A Warning about that pod (builders.event)."""
    return builders.event(reason, message, builders.T(12, 0), kind="Pod", name=_POD, etype="Warning",
                          namespace="prod")


_S = [_v() for _ in range(16)]
STRUCTURE: list[Case] = [
    ("probe-authorization-header", "obj", _pod({"livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080,
     "httpHeaders": [{"name": "Authorization", "value": f"Bearer {_S[0]}"}]}}}), _S[0]),
    ("probe-api-key-header", "obj", _pod({"readinessProbe": {"httpGet": {"path": "/ready", "port": 8080,
     "httpHeaders": [{"name": "X-Api-Key", "value": _S[1]}]}}}), _S[1]),
    ("startup-probe-exec", "obj", _pod({"startupProbe": {"exec": {"command": [
        "redis-cli", "-a", _S[2], "ping"]}}}), _S[2]),
    ("prestop-exec-curl", "obj", _pod({"lifecycle": {"preStop": {"exec": {"command": [
        "/bin/sh", "-c", f"curl -fsS -u admin:{_S[3]} -X POST http://localhost:8080/drain"]}}}}), _S[3]),
    ("poststart-http-header", "obj", _pod({"lifecycle": {"postStart": {"httpGet": {"path": "/warm", "port": 8080,
     "httpHeaders": [{"name": "X-Auth-Token", "value": _S[4]}]}}}}), _S[4]),
    ("termination-message", "obj", _pod({}, status={"phase": "Failed", "containerStatuses": [{
        "name": "main", "state": {"terminated": {"exitCode": 1, "reason": "Error",
                                                 "message": f"mysql -uroot -p{_S[5]} failed: access denied"}}}]}),
     _S[5]),
    ("kubelet-event-hook", "obj", _event(
        f"Exec lifecycle hook ([/bin/sh -c curl -u admin:{_S[6]} http://localhost/drain]) for Container \"main\" "
        f"in Pod \"orders-sync-29936830-x7k2q_prod(4f3c)\" failed - error: command terminated with exit code 7"), _S[6]),
    ("kubelet-event-sshpass", "obj", _event(
        f"Exec lifecycle hook ([sshpass -p {_S[7]} ssh backup@10.0.0.5 sync]) for Container \"main\" failed"), _S[7]),
    ("annotation-db-password", "obj", _pod({}, annotations={"example.com/db-password": _S[8]}), _S[8]),
    ("annotation-api-token", "obj", _pod({}, annotations={"ci.example.com/api-token": _S[9]}), _S[9]),
    ("env-valuefrom-literal", "obj", _pod({"env": [{"name": "DB_PASSWORD", "value": _S[10],
                                                    "valueFrom": None}]}), _S[10]),
    ("order-late-env-masks-earlier-event", "objs", [
        _event(f"connected as app with {_S[11]} to db", reason="Started"),
        _pod({"env": [{"name": "DB_PASSWORD", "value": _S[11]}]})], _S[11]),
    ("order-late-flag-masks-earlier-log", "objs", [
        _event(f"retrying: auth {_S[12]} rejected", reason="BackOff"),
        _pod({"args": ["--api-token", _S[12]]})], _S[12]),
    ("jwt-split-over-args", "obj", _pod({"args": ["--jwt-header", "eyJhbGciOiJIUzI1NiJ9",
                                                  "--jwt-payload", "eyJzdWIiOiJjaSIsImV4cCI6MTc5fQ",
                                                  "--jwt-sig", _S[13]]}), _S[13]),
    ("identity-private-key-arg", "obj", _pod({"args": ["--identity", _PEM.replace("\n", "\\n")]}),
     _PEM.split("\n")[1]),
    ("env-webhook-url-in-args-echo", "obj", _pod({"env": [{"name": "SLACK_WEBHOOK_URL", "value": f"https://hooks.example/{_S[14]}"}],
                                                  "args": ["notify", f"--url=https://hooks.example/{_S[14]}"]}), _S[14]),
]
SECRETS += STRUCTURE

# -- look-alikes -----------------------------------------------------------------------------------
LOOK_ALIKES: list[tuple[str, str, Any]] = []

ENV_HARMLESS: list[tuple[str, str]] = [
    ("KMS_KEY_ARN", "arn:aws:kms:eu-west-1:123456789012:key/0b4e3c1a-2f6d-4c8e-9a7b-1d2e3f4a5b6c"),
    ("API_KEY_HEADER", "X-Api-Key"), ("SECRET_MANAGER_REGION", "eu-west-1"), ("COOKIE_DOMAIN", ".example.com"),
    ("TOKEN_BUCKET_CAPACITY", "100"), ("SESSION_AFFINITY", "ClientIP"), ("TOKEN_BUCKET_REFILL_RATE", "25"),
    ("DB_PASSWORD_FILE", "/run/secrets/db-password"), ("SECRET_NAME", "orders-db-credentials"),
    ("KEY_VAULT_NAME", "kv-prod-weu"), ("AUTH_PROVIDER", "oidc"), ("TOKEN_ENDPOINT", "https://login.example/oauth2/token"),
    ("JWT_ISSUER", "https://login.example/"), ("JWT_AUDIENCE", "orders-api"), ("OAUTH_CLIENT_ID", "orders-batch"),
    ("COOKIE_SECURE", "true"), ("COOKIE_SAMESITE", "Lax"), ("SESSION_STORE", "redis"),
    ("PASSWORD_HASH_ALGORITHM", "argon2id"), ("SECRETS_MANAGER_ENDPOINT", "https://secretsmanager.eu-west-1.amazonaws.com"),
    ("KEY_ROTATION_DAYS", "90"), ("PUBLIC_KEY_PATH", "/etc/keys/pub.pem"), ("TLS_CERT_PATH", "/etc/tls/tls.crt"),
    ("CERT_MANAGER_NAMESPACE", "cert-manager"), ("KEYCLOAK_REALM", "prod"), ("KEYSPACE", "orders"),
    ("TOKENIZERS_PARALLELISM", "false"), ("PASSTHROUGH_MODE", "enabled"), ("BYPASS_CACHE", "1"),
    ("CACHE_KEY_PREFIX", "orders:v2:"), ("SORT_KEY", "created_at"), ("PARTITION_KEY", "tenant_id"),
    ("AUTH_MODE", "iam"), ("SIGNATURE_VERSION", "v4"), ("KMS_KEY_ALIAS", "alias/orders-prod"),
    ("SECRET_ARN", "arn:aws:secretsmanager:eu-west-1:123456789012:secret:orders-db-AbCdEf"),
    ("DOCKER_CONFIG", "/kaniko/.docker"), ("SESSION_COOKIE_NAME", "sid"), ("TOKEN_REFRESH_INTERVAL", "5m"),
    ("SECRET_MOUNT_PATH", "/var/run/secrets/app"), ("API_KEY_ID", "k-42"), ("ENCRYPTION_KEY_ID", "orders-2026"),
    ("AUTHOR", "platform-team"), ("PASSWORD_RESET_URL", "https://example.com/reset"), ("LOG_LEVEL", "info"),
]
for name, value in ENV_HARMLESS:
    LOOK_ALIKES.append((f"env-{name}", "env", (name, value)))

TEXT_HARMLESS: list[tuple[str, str]] = [
    ("docker-run-p", "docker run -d -p 8080:80 --name web nginx:1.27"),
    ("redis-cli-p-port", "redis-cli -h cache -p 6379 ping"),
    ("psql-p-port", "psql -h db -p 5432 -U app -d orders -c 'select 1'"),
    ("ssh-p-port", "ssh -p 2222 deploy@bastion.example uptime"),
    ("scp-P-port", "scp -P 2222 dump.sql deploy@backup:/srv/"),
    ("mysql-P-port", "mysql -h db -P 3306 -u app orders"),
    ("mysql-p-prompt", "mysql -u app -p orders"),
    ("curl-u-no-password", "curl -u alice https://api.example.com/v1/me"),
    ("curl-u-env-refs", 'curl -u "$API_USER:$API_PASS" https://api.example.com'),
    ("curl-cert-path", "curl --cert /etc/tls/client.pem --key /etc/tls/client.key https://mtls.example"),
    ("curl-header-accept", "curl -H 'Accept: application/json' https://api.example.com/v1/orders?page=2"),
    ("password-file-flag", "app --password-file /run/secrets/db-password --verbose"),
    ("password-stdin", "docker login --password-stdin -u ci registry.example < /run/secrets/token"),
    ("sshpass-f", "sshpass -f /run/secrets/ssh-pass ssh deploy@10.0.0.5 uptime"),
    ("sshpass-e", "sshpass -e ssh deploy@10.0.0.5 uptime"),
    ("openssl-pass-env", "openssl enc -aes-256-cbc -in a -out b -pass env:BACKUP_PASSPHRASE"),
    ("openssl-passin-file", "openssl rsa -in enc.key -passin file:/run/secrets/key-pass -out plain.key"),
    ("htpasswd-prompt", "htpasswd -B /etc/nginx/.htpasswd admin"),
    ("vault-login-oidc", "vault login -method=oidc role=ops"),
    ("vault-login-stdin", "vault login -"),
    ("aws-configure-region", "aws configure set region eu-west-1"),
    ("az-login-identity", "az login --identity --username 5f1c2d3e-aaaa-bbbb-cccc-111122223333"),
    ("az-login-u-only", "az login -u ops@example.com"),
    ("kubectl-from-file", "kubectl create secret generic tls --from-file=tls.key=/etc/tls/tls.key"),
    ("gcloud-key-file", "gcloud auth activate-service-account --key-file=/var/run/secrets/gcp/key.json"),
    ("twine-repository", "twine upload --repository testpypi dist/*"),
    ("ldapsearch-anon", "ldapsearch -x -H ldap://ldap.example -b dc=example,dc=org uid=bob"),
    ("sqlcmd-E", "sqlcmd -S sql.example -E -Q 'SELECT 1'"),
    ("tar-p", "tar -pxzf backup.tgz -C /restore"),
    ("cp-p", "cp -p /data/a /backup/a"),
    ("mkdir-p", "mkdir -p /var/lib/orders/tmp"),
    ("port-forward", "kubectl port-forward svc/orders 8080:80"),
    ("docker-login-no-creds", "docker login registry.example.com"),
    ("smbclient-kerberos", "smbclient //files/share -k -c 'ls'"),
    ("keytool-list", "keytool -list -keystore /etc/ssl/cacerts -storetype PKCS12"),
    ("keytool-storepass-env", "keytool -list -keystore t.jks -storepass:env STOREPASS"),
    ("token-ttl-flag", "vault token create -policy=ci -ttl=1h"),
    ("api-key-header-flag", "app --api-key-header X-Api-Key"),
    ("secret-name-flag", "app --secret-name orders-db"),
    ("no-password-flag", "pg_dump --no-password -h db orders"),
    ("password-prompt-flag", "app --password-prompt"),
    ("cookie-domain-flag", "app --cookie-domain .example.com"),
    ("session-affinity-flag", "kubectl expose deploy/orders --session-affinity ClientIP --port 80"),
    ("kms-key-arn-flag", "app --kms-key-arn arn:aws:kms:eu-west-1:123456789012:key/abc"),
    ("auth-type-flag", "app --auth-type basic"),
    ("key-file-flag", "app --key-file /etc/keys/app.pem"),
    ("cacert", "curl --cacert /etc/ssl/ca.pem https://api.example.com"),
    ("public-ssh-key", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKq7w9b8c1d2e3f4g5h6i7j8k9l0m1n2o3p4q5r6s7t8 deploy@ci"),
    ("certificate-b64", "certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUM1ekNDQWMrZ0F3SUJBZ0lCQURBTkJna3Foa2lH"),
    ("public-key-pem", "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----"),
    ("stripe-publishable", "Stripe.setPublishableKey('pk_live_51H8abcdefghijklmnop')"),
    ("aws-arn-role", "assumed role arn:aws:iam::123456789012:role/orders-batch"),
    ("image-digest", "image registry.example/orders@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"),
    ("git-sha", "deployed 4b825dc642cb6eb9a060e54bf8d69288fbee4904 to prod"),
    ("uuid", "request 0b4e3c1a-2f6d-4c8e-9a7b-1d2e3f4a5b6c done"),
    ("conn-trusted", "Server=sql;Database=orders;Trusted_Connection=True;"),
    ("conn-empty-password", "Server=sql;Database=orders;User Id=app;Password=;"),
    ("conn-password-ref", "Server=sql;Database=orders;User Id=app;Password=${DB_PASSWORD};"),
    ("jdbc-no-creds", "jdbc:postgresql://db:5432/orders?sslmode=require&connectTimeout=10"),
    ("mongodb-replicaset", "mongodb://db1:27017,db2:27017/orders?replicaSet=rs0"),
    ("url-user-only", "https://git@github.com/acme/app.git"),
    ("url-port", "https://db.internal:5432/orders"),
    ("token-bucket-log", "token bucket exhausted: capacity 100, refill 10/s"),
    ("password-reset-log", "password reset email sent to user 42"),
    ("probe-failed-event", "Liveness probe failed: HTTP probe failed with statuscode: 401"),
    ("backoff-event", "Back-off restarting failed container main in pod orders-sync-29936830-x7k2q"),
    ("mount-failed-event", 'MountVolume.SetUp failed for volume "db-password" : secret "db-password" not found'),
    ("secret-key-ref", "secretKeyRef: {name: orders-db, key: password}"),
    ("label-selector", "app.kubernetes.io/name=orders,app.kubernetes.io/component=batch"),
    ("sk-in-package", "pip install scikit-learn==1.5.2 sk-video==1.1.10"),
    ("auth-failed", "auth failed for user svc-orders: password authentication failed"),
    ("key-label", "key: app"),
    ("token-expired", "token expired at 2026-12-06T01:00:00Z, refreshing"),
    ("pgpass-path", "PGPASSFILE=/run/secrets/pgpass"),
    ("kms-decrypt-log", "kms:Decrypt on arn:aws:kms:eu-west-1:123456789012:key/0b4e3c1a denied"),
    ("docker-login-stdin-ref", 'echo "$REGISTRY_TOKEN" | docker login --password-stdin -u ci registry.example'),
    ("helm-install", "helm upgrade --install orders ./chart -n prod --set image.tag=1.2.3 --wait"),
    ("openssl-x509", "openssl x509 -in cert.pem -noout -subject -enddate"),
    ("mc-ls", "mc ls minio/backups"),
]
for lid, line in TEXT_HARMLESS:
    LOOK_ALIKES.append((f"text-{lid}", "text", line))
for lid, line in TEXT_HARMLESS[:24:3]:
    LOOK_ALIKES.append((f"argv-{lid}", "argv", shlex.split(line)))

LOOK_ALIKES += [
    ("probe-host-header", "obj", _pod({"livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080,
     "httpHeaders": [{"name": "Host", "value": "orders.example.com"}, {"name": "Accept", "value": "application/json"}]}}})),
    ("prestop-sleep", "obj", _pod({"lifecycle": {"preStop": {"exec": {"command": ["/bin/sh", "-c", "sleep 15"]}}}})),
    ("annotation-password-policy", "obj", _pod({}, annotations={"example.com/password-policy": "strict"})),
    ("annotation-vault-agent", "obj", _pod({}, annotations={
        "vault.hashicorp.com/agent-inject-secret-db": "database/creds/orders",
        "vault.hashicorp.com/role": "orders"})),
    ("event-started", "obj", _event("Started container main", reason="Started")),
    ("event-hook-no-secret", "obj", _event(
        "Exec lifecycle hook ([/bin/sh -c curl -fsS http://localhost:8080/drain]) for Container \"main\" failed")),
]


# -- held out: written after the rules above, measured once before any change to the rules ---------
HOLDOUT_SECRETS: list[Case] = []
for cid, template in [
    ("mysql-user-password-eq", "mysql --user=root --password={V} orders"),
    ("pg-restore-quoted", "PGPASSWORD='{V}' pg_restore -h db -d orders /backup/orders.dump"),
    ("redis-cli-u-url", "redis-cli -u redis://default:{V}@cache:6379 ping"),
    ("curl-user-quoted", 'curl -sS --user "bot:{V}" https://api.example/v2/ping'),
    ("curl-vault-token-header", 'curl -H "X-Vault-Token: {V}" https://vault:8200/v1/secret/data/x'),
    ("curl-private-token-header", 'curl --header "PRIVATE-TOKEN: {V}" https://gitlab.example/api/v4/projects'),
    ("curl-cookie-header", 'curl -H "Cookie: session={V}" https://app.example/admin'),
    ("wget-authorization-token", 'wget --header="Authorization: token {V}" https://api.example/x'),
    ("az-account-key", "az storage blob upload --account-name acme --account-key {V} -f x.gz -c backups"),
    ("az-sas-token", 'az storage blob list --sas-token "{V}" -c backups --account-name acme'),
    ("aws-ssm-value", "aws ssm put-parameter --name /prod/db --value {V} --type SecureString"),
    ("kubectl-docker-password", "kubectl create secret docker-registry reg --docker-username=ci --docker-password={V}"),
    ("helm-set-password", "helm upgrade orders ./chart --set db.password={V}"),
    ("terraform-var", 'terraform apply -auto-approve -var "db_password={V}"'),
    ("ansible-become-pass", "ansible-playbook site.yml -e ansible_become_pass={V}"),
    ("psql-url", 'psql "postgres://app:{V}@db/orders" -c "select 1"'),
    ("mongodump-uri", 'mongodump --uri "mongodb://backup:{V}@mongo:27017/?authSource=admin"'),
    ("sqlcmd-P-quoted", 'sqlcmd -S sql -U sa -P "{V}" -i /jobs/nightly.sql'),
    ("echo-vault-login-stdin", 'echo "{V}" | vault login -'),
    ("printf-password-stdin", "printf '%s' {V} | docker login --password-stdin -u ci ghcr.io"),
    ("docker-run-e", "docker run --rm -e DB_PASSWORD={V} orders:1.2"),
    ("spring-arg", "java -jar app.jar --spring.datasource.password={V}"),
    ("export-aws-secret", "export AWS_SECRET_ACCESS_KEY={V}"),
    ("mysql-pwd-env", "set -x; MYSQL_PWD={V} mysql -h db -e 'show tables'"),
    ("yaml-quoted-password", '  password: "{V}"'),
    ("yaml-auth-token", "  auth_token: {V}"),
    ("authorization-token", "Authorization: Token {V}"),
]:
    value = _v()
    HOLDOUT_SECRETS.append((f"holdout-{cid}", "text", template.format(V=value), value))
for name in ("PG_PASS", "SMTP_PASSWORD", "GH_TOKEN", "SENTRY_AUTH_TOKEN", "ARGOCD_AUTH_TOKEN", "CF_API_TOKEN",
             "DIGITALOCEAN_ACCESS_TOKEN", "ENCRYPTION_PASSPHRASE", "APP_KEY", "NEXTAUTH_SECRET"):
    value = _v(32)
    HOLDOUT_SECRETS.append((f"holdout-env-{name}", "env", (name, value), value))

HOLDOUT_LOOK_ALIKES: list[tuple[str, str, Any]] = [(f"holdout-{i}", "text", line) for i, line in [
    ("curl-u-ref", 'curl -u "${API_USER}" https://api.example'),
    ("redis-scan", "redis-cli -n 3 --scan --pattern 'orders:*'"),
    ("mysql-defaults-file", "mysql --defaults-extra-file=/etc/mysql/app.cnf -e 'select 1'"),
    ("ssh-i", "ssh -i /etc/ssh/id_ed25519 deploy@host uptime"),
    ("gpg-passphrase-file", "gpg --batch --passphrase-file /run/secrets/gpg -d x.gpg"),
    ("helm-auth-disabled", "helm install orders ./chart --set auth.enabled=false"),
    ("ssm-get-parameter", "aws ssm get-parameter --name /prod/db-password --with-decryption"),
    ("kubectl-get-secret", "kubectl get secret db-password -o yaml"),
    ("vault-kv-get", "vault kv get secret/orders/db"),
    ("az-keyvault-show", "az keyvault secret show --name db-password --vault-name kv-prod"),
    ("echo-tee", "echo done | tee /tmp/status"),
    ("docker-login-username", "docker login --username ci registry.example"),
    ("openssl-rand", "openssl rand -base64 32"),
    ("keytool-printcert", "keytool -printcert -file /etc/ssl/c.pem"),
    ("secret-not-found", 'Error: secret "db-password" not found'),
    ("authorization-missing", "Authorization header missing in request to /v1/orders"),
]] + [(f"holdout-env-{n}", "env", (n, v)) for n, v in [
    ("PASSWORD_MIN_LENGTH", "14"), ("TOKEN_AUDIENCE", "api"), ("SECRET_VERSION", "3"), ("AUTH_ENABLED", "false")]]

SECRETS += HOLDOUT_SECRETS
LOOK_ALIKES += HOLDOUT_LOOK_ALIKES


# -- the measure -----------------------------------------------------------------------------------

def _env_pod(name: str, value: str) -> Obj:
    return _pod({"env": [{"name": name, "value": value}, {"name": "LOG_LEVEL", "value": "info"}]})


def _mask(kind: str, payload: Any) -> Any:
    red = R.Redactor()
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
    return secret in text or (json.dumps(secret)[1:-1] in text)


def _changed(kind: str, payload: Any) -> bool:
    return bool(_mask(kind, payload) != _unmasked(kind, payload))


@pytest.mark.skipif(bool(os.environ.get("CRONCTL_REDACT_FILE")), reason="measuring another copy")
@pytest.mark.parametrize("kind, payload, secret", [pytest.param(k, p, s, id=i) for i, k, p, s in SECRETS])
def test_every_secret_of_the_fresh_corpus_is_masked(kind: str, payload: Any, secret: str) -> None:
    assert not _leaks(kind, payload, secret), _mask(kind, payload)


@pytest.mark.skipif(bool(os.environ.get("CRONCTL_REDACT_FILE")), reason="measuring another copy")
@pytest.mark.parametrize("kind, payload", [pytest.param(k, p, id=i) for i, k, p in LOOK_ALIKES])
def test_every_look_alike_of_the_fresh_corpus_is_kept(kind: str, payload: Any) -> None:
    assert _mask(kind, payload) == _unmasked(kind, payload)


def measure() -> tuple[float, float, list[str], list[str]]:
    """(recall, precision, ids of leaked secrets, ids of changed look-alikes)."""
    leaked = [i for i, k, p, s in SECRETS if _leaks(k, p, s)]
    changed = [i for i, k, p in LOOK_ALIKES if _changed(k, p)]
    masked = len(SECRETS) - len(leaked)
    recall = masked / len(SECRETS)
    precision = masked / (masked + len(changed)) if masked + len(changed) else 0.0
    return recall, precision, leaked, changed


def test_summary_recall_and_precision_of_the_fresh_corpus() -> None:
    assert len(SECRETS) >= 150 and len(LOOK_ALIKES) >= 80
    recall, precision, leaked, changed = measure()
    masked = len(SECRETS) - len(leaked)
    print(f"\nREDACTION corpus 2 ({os.environ.get('CRONCTL_REDACT_FILE') or 'cronctl.redact'}): "
          f"{len(SECRETS)} secrets, {len(LOOK_ALIKES)} look-alikes: recall {recall:.3f} ({masked}/{len(SECRETS)}), "
          f"precision {precision:.3f} ({len(changed)} look-alike(s) changed)")
    hold_leaked = [i for i in leaked if i.startswith("holdout-")]
    hold_changed = [i for i in changed if i.startswith("holdout-")]
    hm = len(HOLDOUT_SECRETS) - len(hold_leaked)
    print(f"  of which held out: {len(HOLDOUT_SECRETS)} secrets, {len(HOLDOUT_LOOK_ALIKES)} look-alikes: recall "
          f"{hm / len(HOLDOUT_SECRETS):.3f}, precision {hm / max(1, hm + len(hold_changed)):.3f}")
    print("  leaked:", ", ".join(leaked) or "-")
    print("  changed:", ", ".join(changed) or "-")
    if os.environ.get("CRONCTL_REDACT_FILE"):
        return
    assert recall >= 0.97
    assert precision >= 0.97


_check: Callable[..., Any] = measure  # keep mypy/ruff quiet about an unused helper in -k runs
