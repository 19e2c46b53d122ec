"""Masking of secret material in everything cronctl writes. PURE: no I/O, no clock, stdlib only.

One rule set, used by the bundle (bundle.json, REPORT.md, report.html, objects.yaml, logs), by
run-manual and backfill (job.json, pods.json, saved logs, record.json, ``-o json``, the log tail),
by ``lint`` (table, JSON, SARIF), ``history`` and ``status`` (text and ``-o json``), by the error
line of :func:`cronctl.cli.main`, and for the API server's URL (:func:`safe_url`). It sits at the
bottom of the layers so that every writer can use it.

Two passes (issue 26). **Pass one** (:meth:`Redactor.learn`, and the first half of every
:meth:`Redactor.text`) walks the input and collects secret values by where they stand:

* **by structure**: the literal ``env[].value`` (and a ``valueFrom`` literal) of a variable whose
  name is secret (:func:`looks_secret`, decided word by word: ``DB_PASSWORD``, ``STRIPE_SECRET_KEY``,
  ``SLACK_WEBHOOK_URL``, ``DOCKER_CONFIG_JSON``, ``DBPASS``, ``LDAP_BIND_PW`` are; ``KMS_KEY_ARN``,
  ``API_KEY_HEADER``, ``SECRET_MANAGER_REGION``, ``COOKIE_DOMAIN``, ``TOKEN_BUCKET_CAPACITY``,
  ``SESSION_AFFINITY`` are not); probe and lifecycle ``httpHeaders`` values under a secret header
  name (``Authorization``, ``X-Api-Key``, ``Cookie``); probe and hook ``exec`` commands as command
  lines; annotations whose key names a secret (``example.com/db-password``); container termination
  messages, status and condition messages and Event messages as text;
* **in command lines** (``command``/``args`` lists, ``sh -c`` scripts, and any line of text that
  names a known program, such as a kubelet Event quoting a hook): the argument of a flag that
  takes a secret, from one table per tool (:data:`_TOOLS`: curl ``-u user:X``, redis-cli ``-a``,
  mysql-family ``-pX``, sqlcmd/bcp ``-P``, ldap* ``-w``, smbclient ``-U u%X``, sshpass ``-p``,
  docker/podman/buildah/nerdctl/helm ``login -p``, az/oc ``login -p``, twine ``-p``, keytool
  ``-storepass``, openssl ``-pass pass:X``, skopeo ``--creds``, kubectl ``create secret
  --from-literal``, ...), any flag whose name is secret (``--password X``, ``--token=X``), and the
  positional secrets of known subcommands (``vault login TOKEN``, ``aws configure set
  aws_secret_access_key V``, ``htpasswd -b file user PW``, ``rabbitmqctl add_user u PW``, ``mc
  alias set n url ak SK``, ``sqlplus user/PW@db``, ``echo PW | docker login --password-stdin``);
* **by shape in text**: ``name=value`` / ``name: value`` / ``"name": "value"`` with a secret name
  (env, JSON, YAML, query strings, connection strings, braces included: ``Password={a;b}``),
  ``scheme://user:pass@host``, ``https://TOKEN@host``, Oracle ``user/pw@//host``, ``.pgpass``
  lines, ``requirepass``; ``Bearer``/``Basic``/``token`` credentials; JWTs; PEM private key blocks
  and their base64; base64 docker config JSON; provider tokens (:data:`_RULES`: AWS, GitHub,
  GitLab, Slack, Stripe, Google, npm, PyPI, Docker Hub, Hugging Face, OpenAI, Anthropic, Vault,
  DigitalOcean, Shopify, Grafana, New Relic, Linear, Databricks, Postman, age, Atlassian, Pulumi,
  Doppler, SendGrid, Mailgun, Telegram, Square, Azure AD, Twilio, Discord and Teams webhooks).

**Pass two** masks every occurrence of every collected value everywhere, in one scan per string,
with one matcher (a trie-shaped regular expression of every value of at least
:data:`MIN_ECHO_LEN` characters) built once for the whole output: linear, and independent of
order (a value found late in the input is masked where it appeared earlier too, when the caller
lets :meth:`Redactor.learn` see the whole input first, as the bundle does). A value shorter than
that is masked only where a rule finds it.

One :class:`Redactor` is used for a whole output so that the same secret value always becomes the
same placeholder (``<redacted:1>``, numbered in order of first masking): a reader can still see
that two pods used the same token without seeing it. ``valueFrom`` references (secretKeyRef ...)
are names, not secrets, and are kept; so are ``$VAR``/``${VAR}`` references, ``env:``/``file:``
indirections, booleans and empty values. Secret objects themselves are never read by cronctl.

``Redactor(strict=True)`` (``cronctl bundle --redact strict``) also masks every env value and
every flag value whose name is not on a short allow-list of harmless words (:data:`_STRICT_ALLOW`)
unless the value is a number, a boolean, a duration or a path.

Known limits: a secret in free prose with no name, flag, scheme, known program or known prefix
("the password is hunter2") is not found; a value under a name cronctl does not recognise is
kept unless its shape is known or it was seen elsewhere under a secret name.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

Obj = dict[str, Any]

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

#: A collected secret value is masked wherever it appears again when it is at least this long;
#: shorter ones would hit ordinary words and numbers.
MIN_ECHO_LEN = 6
#: how many strings a Redactor remembers (their spans, read in pass one, clean in pass two): bounded
#: memory; a day of 1,000 CronJobs' history holds 145,000 Job names, each read in both passes
_MEMO_MAX = 1_000_000
_NO_SPANS: tuple[tuple[int, int], ...] = ()

# -- names ------------------------------------------------------------------------------------

#: a word of a name that makes its value secret wherever it is glued in (DBPASSWORD, APITOKEN)
_STRONG = ("PASSWORD", "PASSWD", "PASSPHRASE", "SECRET", "TOKEN", "CREDENTIAL", "APIKEY", "PRIVATEKEY",
           "ACCESSKEY", "SECRETKEY", "AUTHKEY", "WEBHOOK")
#: words that make a value secret only as a whole word (too short to match inside other words)
_SECRET_WORDS = frozenset({
    "PASS", "PWD", "PW", "KEY", "AUTH", "PRIVATE", "PEM", "DSN", "PIN", "SALT", "OTP", "CREDS", "PGPASS",
    "PASSCODE", "SIG", "HMAC", "JWT", "BEARER", "AUTHORIZATION", "PAT", "SIGNATURE", "APIKEY",
})
#: words that make a value secret only as the last word (``AUTH_COOKIE``, ``SESSION``; not
#: ``COOKIE_DOMAIN``, ``SESSION_AFFINITY``)
_LAST_ONLY = frozenset({"COOKIE", "SESSION", "SIGNATURE", "PIN"})
#: glued words that contain a strong word but are not secrets (TOKENIZER, SECRETARY)
_BENIGN_GLUED = re.compile(r"^(?:TOKENI[SZ]|SECRETAR|PASSWORDLESS)")
#: a word glued onto PASS that makes it a password (DBPASS, SMTPPASS, STOREPASS), unless one of these
_NOT_A_PASS = frozenset({"BYPASS", "COMPASS", "SURPASS", "TRESPASS", "OVERPASS", "UNDERPASS", "ENCOMPASS"})
#: a name ending in one of these words names something about the secret, not the secret itself
_NOT_THE_SECRET = frozenset({
    "FILE", "FILES", "PATH", "DIR", "URI", "ENDPOINT", "HOST", "PORT", "LENGTH", "LEN", "MIN",
    "MAX", "POLICY", "TTL", "TIMEOUT", "EXPIRY", "EXPIRES", "EXPIRATION", "NAME", "ID", "IDS", "TYPE",
    "COUNT", "ENABLED", "DISABLED", "REQUIRED", "FORMAT", "VERSION", "SIZE", "ALGORITHM", "ALG",
    "LIFETIME", "ROTATION", "MODE", "REF", "KIND", "STDIN", "FIELD", "PARAM", "PREFIX", "SOURCE",
    "ISSUER", "AUDIENCE", "SCOPE", "SCOPES", "LIMIT", "RETRIES", "INTERVAL", "DURATION", "SECONDS",
    "DAYS", "STRENGTH", "COMPLEXITY", "COLUMN", "LABEL", "PROVIDER", "STORE", "MOUNT", "VOLUME",
    "NAMESPACE", "KEYS", "REFRESHED", "EXPIRED", "USED", "AGE", "HINT", "PROMPT", "RESET", "LOCATION",
    # issue 26: an ARN or alias names a key, a header name is not its value, a region, a domain, a
    # rate or a capacity is configuration
    "ARN", "ALIAS", "HEADER", "REGION", "ZONE", "DOMAIN", "CAPACITY", "RATE", "REFILL", "BURST",
    "AFFINITY", "SECURE", "SAMESITE", "HTTPONLY", "BUCKET", "REALM", "USER", "USERNAME", "LOGIN",
    "ACCOUNT", "EMAIL", "ROLE", "GROUP", "ENGINE", "BACKEND", "METHOD", "STRATEGY", "CACHE", "QUEUE",
    "TOPIC", "TABLE", "SIZES", "LEVEL", "STATUS", "VAULT",
    # issue 39: a hash, digest or fingerprint of a secret is not the secret (kubeadm's
    # --discovery-token-ca-cert-hash sha256:...), a sink is where tokens go, a template names a field
    "HASH", "DIGEST", "CHECKSUM", "FINGERPRINT", "SINK", "TEMPLATE",
})
#: a name ending in URL holds a secret only when it names a webhook (the token is in its path)
_URL_WORDS = frozenset({"URL", "URLS"})
#: (secret word, next word) pairs that name a thing, not a secret: TOKEN_BUCKET, SECRET_MANAGER
_NAMES_A_THING = frozenset({("TOKEN", "BUCKET"), ("SECRET", "MANAGER"), ("SECRETS", "MANAGER"),
                            ("KEY", "VAULT"), ("PASSWORD", "HASH"), ("KEY", "MANAGER"), ("AUTH", "MODE"),
                            ("AUTH", "PROVIDER"), ("SECRET", "STORE"), ("SECRETS", "STORE")})
#: a first word that negates the rest (``--no-password``), or counts it (``max_tokens``, an LLM's limit)
_NEGATION = frozenset({"NO", "SKIP", "DISABLE", "WITHOUT", "IGNORE", "MAX", "MIN", "NUM"})
#: words before KEY that make it a data key, not a credential (primary_key, public_key)
_DATA_KEY = frozenset({
    "PRIMARY", "FOREIGN", "SORT", "PARTITION", "CACHE", "IDEMPOTENCY", "ROUTING", "SHARD", "LOOKUP",
    "DEDUP", "PUBLIC", "PUB", "OBJECT", "MAP", "GROUP", "ORDER", "UNIQUE", "RANGE", "LABEL", "HASH",
    "ROW", "MESSAGE", "DEDUPLICATION", "S3", "REGISTRY", "TLS", "SSH", "HOST", "KMS",
})
#: whole names that hold a secret without a secret word (a docker config holds registry auths)
_SECRET_NAMES = re.compile(r"^(?:DOCKER_?CONFIG_?JSON|DOCKERCONFIGJSON|DOCKERCFG|\.?DOCKERCFG|REGISTRY_?AUTHS?"
                           r"|NETRC|PGPASSFILE_?CONTENT|HTPASSWD)$")

_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def _words(name: str) -> list[str]:
    # split on anything not alphanumeric, then camelCase: dbPassword -> DB PASSWORD
    return [w.upper() for w in _WORDS.findall(name)]


def _is_pass_glued(w: str) -> bool:
    return len(w) > 4 and w.endswith("PASS") and w not in _NOT_A_PASS


@lru_cache(maxsize=8192)
def looks_secret(name: str) -> bool:
    """True when a value called ``name`` (env var, flag, JSON key, header, annotation, query
    parameter) is a secret, decided word by word (token boundaries: ``KMS_KEY_ARN`` names a key,
    ``API_KEY_HEADER`` names a header, ``TOKEN_BUCKET_CAPACITY`` is a rate limit)."""
    words = _words(name)
    if not words or words[0] in _NEGATION:
        return False
    if _SECRET_NAMES.match("_".join(words)):
        return True
    if words[-1] in _URL_WORDS:
        return any("WEBHOOK" in w for w in words)
    if words[-1] in _NOT_THE_SECRET:
        return False
    hits = []
    for i, w in enumerate(words):
        nxt = words[i + 1] if i + 1 < len(words) else None
        if nxt is not None and (w, nxt) in _NAMES_A_THING:
            continue
        if w in _LAST_ONLY:
            if nxt is None:
                hits.append(i)
            continue
        if (w in _SECRET_WORDS or _is_pass_glued(w)
                or (any(s in w for s in _STRONG) and not _BENIGN_GLUED.match(w))):
            hits.append(i)
    if not hits:
        return False
    if all(words[i] == "KEY" for i in hits):
        # a bare ``key`` (``key: app``) or a data key (primary_key, public_key) is not a credential
        return any(i > 0 and words[i - 1] not in _DATA_KEY for i in hits)
    return True


#: header names whose value is a credential, whatever looks_secret says
_SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie"})

#: strict mode keeps a value whose name ends in one of these words (or is one of them)
_STRICT_ALLOW = frozenset({
    "LEVEL", "TZ", "PORT", "HOST", "HOSTNAME", "REGION", "ZONE", "NAMESPACE", "MODE", "ENV", "ENVIRONMENT",
    "DEBUG", "VERBOSE", "VERBOSITY", "TIMEOUT", "INTERVAL", "SIZE", "COUNT", "LIMIT", "MAX", "MIN", "RETRIES",
    "WORKERS", "THREADS", "REPLICAS", "FORMAT", "LANG", "LOCALE", "PATH", "DIR", "FILE", "HOME", "NAME",
    "VERSION", "TAG", "IMAGE", "SCHEDULE", "DAYS", "SECONDS", "MINUTES", "HOURS", "DURATION", "TTL",
    "ENABLED", "DISABLED", "OUTPUT", "PROFILE", "CONCURRENCY", "PARALLELISM", "BATCH", "PAGE", "ZONEINFO",
    "O", "N", "V", "F", "C", "LOG", "COLOR", "QUIET", "DRY", "RUN", "TIMEZONE", "JOBS", "CONTEXT",
})
_STRICT_KEEP_VALUE = re.compile(
    r"(?i)^(?:-?\d+(?:\.\d+)?|true|false|yes|no|on|off|\d+(?:\.\d+)?(?:ns|us|ms|s|m|h|d|w|ki|mi|gi|k|m|g)"
    r"|/[A-Za-z0-9_.\-/]*|\./[A-Za-z0-9_.\-/]*|[a-z]{1,12})$")


def _strict_allowed(name: str) -> bool:
    words = _words(name)
    return bool(words) and (words[-1] in _STRICT_ALLOW) and not looks_secret(name)


# -- values that are not secrets even under a secret name ---------------------------------------

_PLACEHOLDER = re.compile(r"<redacted(?::\d+)?>")
_NOT_A_VALUE = re.compile(
    r"(?i)^(?:|true|false|yes|no|on|off|null|none|nil|undefined|\*+|x{3,}|redacted|masked|hidden|"
    # a status word in a message ("auth: failed", "token: expired", "secret: not found")
    r"failed|failure|expired|invalid|missing|required|denied|refused|rejected|unauthori[sz]ed|forbidden|ok|"
    r"error|unknown|empty|set|unset|present|absent|provided|found|not|rotated|valid|accepted|changed|"
    r"updated|n/a|stdin|-|env|file|"
    r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\$\([A-Za-z_][A-Za-z0-9_]*\)|%[A-Za-z_][A-Za-z0-9_]*%|\{\{.*\}\}|"
    # an indirection (openssl -pass env:X / file:/p, keytool -storepass:env), an absolute path
    r"(?:env|file|fd):\S*|/[A-Za-z0-9_.\-]+(?:/[A-Za-z0-9_.\-]+)+|"
    # a digest names content (sha256:<hex>), a one-brace template names a field ({token}, {api_key})
    r"(?:sha1|sha224|sha256|sha384|sha512|md5):[0-9A-Fa-f]{32,128}|\{[A-Za-z_][A-Za-z0-9_.\-]*\}|"
    r"<[a-z_\- ]+>)$")


def _is_value(v: str) -> bool:
    return not _NOT_A_VALUE.match(v) and not _PLACEHOLDER.search(v)


# -- rules on text -------------------------------------------------------------------------------
# Each rule names its secret group ``s`` (or one of s_d, s_q, s_e, s_b); ``check`` (if any)
# decides on the whole match.

_KEYWORDS = ("pass", "pwd", "secret", "token", "key", "auth", "cred", "private", "session", "cookie", "sig",
             "pem", "dsn", "pin", "salt", "otp", "hmac", "jwt", "bearer", "_pw", "webhook")
_KEYWORD = "(?:" + "|".join(_KEYWORDS) + ")"
# bounded: names are short, and an unbounded run would make a long log line quadratic
_NAME = rf"[A-Za-z0-9_.\-]{{0,64}}{_KEYWORD}[A-Za-z0-9_.\-]{{0,64}}"
_HOST_START = r"(?=[A-Za-z0-9\[])"
#: user:password of a URL, the password holding / # @ : too: up to the last @ before any ?, else any
#: (a port, ``host:8443/``, is not a password)
_USER_PASSWORD = (r"[^\s/?#@:'\"<>]{0,128}:(?!\d{1,5}(?:[/?#'\"<>\s]|$))"
                  r"(?:[^\s'\"<>?]{0,256}|[^\s'\"<>]{0,256}?)")

_GROUPS = ("s_d", "s_q", "s_e", "s_b", "s")


def _value_group(m: re.Match[str]) -> str:
    """The group holding the secret: ``s``, or the quoted/braced forms of a name=value rule."""
    return next((g for g in _GROUPS if g in m.re.groupindex and m.group(g) is not None), "s")


_FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")


def _kv_check(m: re.Match[str]) -> bool:
    if "oq" in m.re.groupindex and m.group("oq") and m.group("s") is not None and not m.group("s").isdigit():
        return False  # a quoted key takes a quoted value (JSON); `volume "creds" : secret "db"` is prose
    braced = m.group("s_b") if "s_b" in m.re.groupindex else None
    if braced is not None and _FIELD.fullmatch(braced) and looks_secret(braced):
        return False  # a URL or string template: ``api_key={api_key}`` names the field it is filled from
    return looks_secret(m.group("k"))


def _basic_check(m: re.Match[str]) -> bool:
    v = m.group("s")
    # base64 of user:pass, not "basic information"
    return bool(re.search(r"[0-9=+/]", v)) or (v.lower() != v and v.upper() != v)


def _b64_prefixes(texts: Iterable[str]) -> str:
    """The base64 characters fixed by each text at the start of an encoding (whole 3-byte groups)."""
    out = []
    for t in texts:
        b = base64.b64encode(t.encode()).decode()
        out.append(re.escape(b[: (len(t) // 3) * 4]))
    return "(?:" + "|".join(out) + ")"


#: base64 of a PEM private key, of a docker config JSON (``{"auths":``), of an OpenSSH key body
_B64_TEXTS = (["-----BEGIN " + x + "PRIVATE KEY" for x in ("", "RSA ", "EC ", "DSA ", "OPENSSH ", "ENCRYPTED ")]
              + ['{"auths":', '{ "auths":', '{\n  "auths":', '{\n\t"auths":', '{\n    "auths":', "openssh-key-v1"])
_B64_SECRET = _b64_prefixes(_B64_TEXTS)
_B64_HINTS = tuple(sorted({base64.b64encode(t.encode()).decode()[:8].lower() for t in _B64_TEXTS}))

_Check = Callable[[re.Match[str]], bool]
#: (pattern, check on the whole match or None, hints: lower-case literals one of which the text
#: must contain for the rule to be tried at all; a cheap str.find keeps long logs fast)
_Rule = tuple[re.Pattern[str], "_Check | None", tuple[str, ...]]


def _tok(pattern: str, *hints: str) -> _Rule:
    return (re.compile(pattern), None, hints)


_RULES: tuple[_Rule, ...] = (
    # PEM private key blocks (also cut ones): the body between the armour lines
    # (up to the next armour line, or the end of a cut one; bounded so that many BEGINs stay linear)
    (re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?P<s>(?:[^-]|-(?!----)){1,20000})"),
     None, ("private key",)),
    # scheme://user:password@host; the password may hold / # @ : (the last @ before any ?, else any)
    (re.compile(r"\b[A-Za-z][A-Za-z0-9+.\-]*://(?P<s>" + _USER_PASSWORD + ")@" + _HOST_START), None, ("://",)),
    # scheme://TOKEN@host: a user-only token (long, with a digit; not git@ or first.last@)
    (re.compile(r"\b[A-Za-z][A-Za-z0-9+.\-]*://(?P<s>(?=[A-Za-z_\-]*[0-9])[A-Za-z0-9_\-]{16,})@" + _HOST_START),
     None, ("://",)),
    # webhooks: the path is the credential (Slack, Discord, Teams/Office 365)
    _tok(r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9_\-]+(?:/[A-Za-z0-9_\-]+)*)",
         "hooks.slack.com"),
    _tok(r"discord(?:app)?\.com/api/webhooks/(?P<s>[0-9]+/[A-Za-z0-9_\-]+)", "discord"),
    _tok(r"\.webhook\.office\.com/webhookb2/(?P<s>[A-Za-z0-9@_\-]+(?:/[A-Za-z0-9@_\-]+)*)", "webhook.office"),
    # Oracle EZConnect / sqlplus user/password@//host or @host:port/service
    _tok(r"(?<![\w/.])[A-Za-z][\w$#]{0,29}/(?P<s>[^\s/@'\"]{1,128})@(?://[\w.\-]+|[\w.\-]+:\d+/)", "@"),
    # provider tokens with a known prefix (gitleaks rules)
    _tok(r"\b(?P<s>(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})\b", "akia", "asia", "abia", "acca", "a3t"),
    _tok(r"\b(?P<s>(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b",
         "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    _tok(r"\b(?P<s>gl(?:pat|dt|rt|cbt|ptt|ft|imt|agent|oas|soat)-[A-Za-z0-9_\-]{20,}|GR1348941[A-Za-z0-9_\-]{20,})",
         "gl", "gr1348941"),
    _tok(r"\b(?P<s>xox[abposre]-[A-Za-z0-9\-]{10,}|xapp-\d-[A-Za-z0-9\-]{10,})", "xox", "xapp-"),
    _tok(r"\b(?P<s>(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9+/=]{20,})", "sk_", "rk_", "whsec_"),
    _tok(r"\b(?P<s>AIza[0-9A-Za-z_\-]{35}|GOCSPX-[A-Za-z0-9_\-]{20,}|ya29\.[A-Za-z0-9_\-]{20,})", "aiza", "gocspx-",
         "ya29."),
    _tok(r"(?<![\w/])(?P<s>1//0[A-Za-z0-9_\-]{30,})", "1//0"),
    _tok(r"\b(?P<s>npm_[A-Za-z0-9]{36})\b", "npm_"),
    _tok(r"\b(?P<s>pypi-AgE[A-Za-z0-9_\-]{40,})", "pypi-"),
    _tok(r"\b(?P<s>dckr_pat_[A-Za-z0-9_\-]{20,})", "dckr_pat_"),
    _tok(r"\b(?P<s>hf_[A-Za-z0-9]{30,})\b", "hf_"),
    _tok(r"\b(?P<s>SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43})", "sg."),
    _tok(r"\b(?P<s>sk-(?:proj-|ant-[a-z0-9]+-)?[A-Za-z0-9_\-]{32,})", "sk-"),
    _tok(r"\b(?P<s>hv[sbr]\.[A-Za-z0-9_\-]{24,})", "hvs.", "hvb.", "hvr."),
    _tok(r"\b(?P<s>do[opr]_v1_[a-f0-9]{64})\b", "_v1_"),
    _tok(r"\b(?P<s>shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32})\b", "shp"),
    _tok(r"\b(?P<s>glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,2})", "glsa_", "glc_"),
    _tok(r"\b(?P<s>NRAK-[A-Z0-9]{27})\b", "nrak-"),
    _tok(r"\b(?P<s>lin_api_[A-Za-z0-9]{40})\b", "lin_api_"),
    _tok(r"\b(?P<s>dapi[a-f0-9]{32}(?:-\d)?)\b", "dapi"),
    _tok(r"\b(?P<s>PMAK-[a-f0-9]{24}-[a-f0-9]{34})\b", "pmak-"),
    _tok(r"\b(?P<s>AGE-SECRET-KEY-1[0-9A-Z]{58})\b", "age-secret-key-"),
    _tok(r"\b(?P<s>ATATT3[A-Za-z0-9_\-=]{20,})", "atatt3"),
    _tok(r"\b(?P<s>pul-[a-f0-9]{40})\b", "pul-"),
    _tok(r"\b(?P<s>dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,})", "dp."),
    _tok(r"\b(?P<s>key-[0-9a-f]{32})\b", "key-"),
    _tok(r"\b(?P<s>[0-9]{8,10}:AA[A-Za-z0-9_\-]{33})\b", ":aa"),
    _tok(r"\b(?P<s>sq0(?:atp|csp)-[A-Za-z0-9_\-]{22,})", "sq0"),
    _tok(r"(?<![A-Za-z0-9_~.\-])(?P<s>[A-Za-z0-9_~.\-]{3}\dQ~[A-Za-z0-9_~.\-]{31,34})(?![A-Za-z0-9_~.\-])", "q~"),
    _tok(r"\b(?P<s>SK[0-9a-f]{32})\b", "sk"),
    _tok(r"\b(?P<s>(?:FwoGZXIvYXdz|IQoJb3JpZ2lu)[A-Za-z0-9/+=]{40,})", "fwogzxivyxdz", "iqojb3jpz2lu"),
    (re.compile(r"(?<![A-Za-z0-9+/])(?P<s>" + _B64_SECRET + r"[A-Za-z0-9+/=]{8,})"), None, _B64_HINTS),
    # issue 39: prefixes of public secret-scanner rule sets (gitleaks, trufflehog) the first rules lacked
    _tok(r"\b(?P<s>LTAI[A-Za-z0-9]{20})\b", "ltai"),
    _tok(r"\b(?P<s>pat[A-Za-z0-9]{14}\.[a-f0-9]{64})\b", "pat"),
    _tok(r"\b(?P<s>CFPAT-[A-Za-z0-9_\-]{43})", "cfpat-"),
    _tok(r"\b(?P<s>dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64})\b", "dt0c01."),
    _tok(r"\b(?P<s>EZ[AT]K[A-Za-z0-9]{54})\b", "ezak", "eztk"),
    _tok(r"\b(?P<s>FLW(?:SEC|PUB)K(?:_TEST)?-[a-h0-9]{32}-X)", "flwseck"),
    _tok(r"\b(?P<s>fio-u-[A-Za-z0-9_\-=]{64})", "fio-u-"),
    _tok(r"\b(?P<s>[a-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{60,70})", "atlasv1"),
    _tok(r"\b(?P<s>ico-[A-Za-z0-9]{32})\b", "ico-"),
    _tok(r"\b(?P<s>[a-f0-9]{32}-us\d{1,2})\b", "-us"),
    _tok(r"\b(?P<s>ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})\b", "ntn_", "secret_"),
    _tok(r"\b(?P<s>pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_\-.]{32,64})", "pscale_"),
    _tok(r"\b(?P<s>pnu_[A-Za-z0-9]{36})\b", "pnu_"),
    _tok(r"\b(?P<s>rdme_[a-z0-9]{70})\b", "rdme_"),
    _tok(r"\b(?P<s>rubygems_[a-f0-9]{48})\b", "rubygems_"),
    _tok(r"\b(?P<s>xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16})\b", "xkeysib-"),
    _tok(r"\b(?P<s>shippo_(?:live|test)_[a-f0-9]{40})\b", "shippo_"),
    _tok(r"\b(?P<s>sntry[us]_[A-Za-z0-9_=+/\-]{40,})", "sntry"),
    _tok(r"\b(?P<s>tfp_[A-Za-z0-9_\-.=]{59})", "tfp_"),
    _tok(r"\b(?P<s>AQVN[A-Za-z0-9_\-]{35,38}|YC[A-Za-z0-9_\-]{38})(?![A-Za-z0-9_\-])", "aqvn", "yc"),
    _tok(r"\b(?P<s>sgp_(?:[a-f0-9]{16}_|local_)?[a-f0-9]{40})\b", "sgp_"),
    _tok(r"\b(?P<s>API-[A-Z0-9]{26})\b", "api-"),
    _tok(r"\b(?P<s>duffel_(?:test|live)_[A-Za-z0-9_\-=]{43})", "duffel_"),
    _tok(r"\b(?P<s>fo1_[A-Za-z0-9_\-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3})", "fo1_", "fm1", "fm2"),
    _tok(r"\b(?P<s>pat\.[A-Za-z0-9]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20})\b", "pat."),
    _tok(r"\b(?P<s>AKCp[A-Za-z0-9]{69}|cmVmdGtu[A-Za-z0-9]{56})\b", "akcp", "cmvmdgtu"),
    _tok(r"\b(?P<s>sk\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{20,})", "sk.eyj"),
    _tok(r"\b(?P<s>AAAA[A-Za-z0-9_\-]{7}:[A-Za-z0-9_\-]{140})", "aaaa"),
    _tok(r"\b(?P<s>CLOJARS_[a-z0-9]{60})\b", "clojars_"),
    _tok(r"\b(?P<s>tk-us-[A-Za-z0-9_\-]{48})", "tk-us-"),
    # Okta's API token scheme (``Authorization: SSWS 00...``)
    (re.compile(r"\bSSWS\s+(?P<s>[A-Za-z0-9_\-]{20,})"), None, ("ssws",)),
    # JWE (compact: five base64url parts, the header starting with eyJ; the encrypted key may be empty)
    _tok(r"\b(?P<s>eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,})",
         "eyj"),
    # JWT (three base64url parts, the first two starting with eyJ = '{"')
    _tok(r"\b(?P<s>eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*)", "eyj"),
    # an XML element or attribute named as a secret (<password>X</password>, password="X"), also
    # inside an env value or an Event; the name is judged as every name is (looks_secret)
    (re.compile(r"<(?P<k>[A-Za-z_][\w:.\-]{0,64})(?:\s[^<>]{0,256})?>(?P<s>[^<>\s][^<>]{0,1024}?)</(?P=k)\s*>"),
     lambda m: looks_secret(m.group("k").rsplit(":", 1)[-1]), ("</",)),
    # an Authorization header line with any scheme (Bearer, Basic, Bot, SSWS, Digest, a custom one)
    (re.compile(r"(?i)\b(?:proxy-)?authorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:(?!bearer\b|basic\b)[A-Za-z][\w.\-]{0,24}[ \t]+)"
                r"(?P<s>[A-Za-z0-9\-._~+/:=]{8,})"), None, ("authorization",)),
    # an Azure Functions key in a function URL (``?code=``), and any long ``code=`` of a URL query
    (re.compile(r"[?&]code=(?P<s>[A-Za-z0-9_\-/+%]{30,}(?:={0,2}|(?:%3D){0,2}))"), None, ("code=",)),
    # a .netrc line (``machine HOST login USER password X``, ``default ... password X``)
    (re.compile(r"(?im)(?:^|[\s\"'])(?:machine[ \t]+\S{1,256}|default)(?:[ \t]+(?:login|account|port)[ \t]+\S{1,256}){0,3}"
                r"[ \t]+password[ \t]+(?P<s>\S{1,512})"), None, ("password",)),
    # Bearer xxx (also "Authorization: Bearer"); Basic only when it looks like base64
    (re.compile(r"(?i)\bbearer\s+(?P<s>[A-Za-z0-9\-._~+/]{8,}=*)"), None, ("bearer",)),
    (re.compile(r"\b[Bb]asic\s+(?P<s>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])"), _basic_check, ("basic",)),
    # "token ghp_..." / "token: 0f3a...": the word token before a long value with a digit
    (re.compile(r"(?i)\btoken\s+(?P<s>(?=[A-Za-z_\-.]*[0-9])[A-Za-z0-9_\-.]{16,})"), None, ("token",)),
    # redis.conf / sentinel: requirepass X, masterauth X
    (re.compile(r"(?im)^[ \t]*(?:requirepass|masterauth|masterpass)[ \t]+(?P<s>\S+)"), None,
     ("requirepass", "masterauth", "masterpass")),
    # a .pgpass line: host:port:database:user:password
    (re.compile(r"(?m)^[ \t]*[\w.\-*]+:(?:\d{1,5}|\*):[\w.\-*]+:[\w.\-*@]+:(?P<s>\S+)[ \t]*$"), None, (":",)),
)

# Rules that never cross a line end and need a secret keyword on the line: applied only to the
# lines that hold one.
_LINE_RULES: tuple[tuple[re.Pattern[str], _Check | None], ...] = (
    # name=value, name: value, "name": "value with spaces", name := value, Password={a;b}
    # (not after "word:": an ARN's or URN's part, arn:...:secret:name)
    (re.compile(rf"(?<![A-Za-z0-9_.\-])(?<![A-Za-z0-9]:)(?P<oq>\\?[\"'])?(?P<k>{_NAME})(?(oq)\\?[\"'])[ \t]*(?::=|=|:)[ \t]*"
                r"(?:(?i:bearer|basic|token)[ \t]+)?"
                r"(?:\\\"(?P<s_e>(?:[^\"\\\n]|\\[^\"])*)\\\"|\"(?P<s_d>(?:[^\"\\\n]|\\.)*)\"|'(?P<s_q>[^'\n]*)'"
                r"|\{(?P<s_b>[^{}\n]*)\}(?=[;\s\"']|$)"
                r"|(?P<s><redacted:\d+>|\$[{(][A-Za-z_][A-Za-z0-9_]*[})]|[^\s\"',;&<>(){}\[\]]+))", re.I), _kv_check),
    # --password X, -password X (the value as the next word)
    (re.compile(rf"(?<![A-Za-z0-9_\-])--?(?P<k>{_NAME})[ \t]+(?!-)(?:\"(?P<s_d>[^\"\n]*)\"|'(?P<s_q>[^'\n]*)'"
                r"|(?P<s>[^\s\"']+))", re.I), _kv_check),
)
_LINE_KEYWORDS = _KEYWORDS
_LINE_KEYWORD = re.compile("|".join(re.escape(k) for k in _LINE_KEYWORDS))


def _hint_index() -> tuple[re.Pattern[str], dict[str, frozenset[int]]]:
    """One pattern finding every rule hint in a lower-cased text at once (a lookahead at each
    position, longest first), and for each hint the rules it lets run, including the rules of
    every hint inside it ("sk" inside "sk_")."""
    hints = sorted({h for _p, _c, hs in _RULES for h in hs}, key=len, reverse=True)
    rules: dict[str, set[int]] = {}
    for i, (_p, _c, hs) in enumerate(_RULES):
        for h in hs:
            rules.setdefault(h, set()).add(i)
    closure = {h: frozenset(i for g in hints if g in h for i in rules[g]) for h in hints}
    return re.compile("(?=(" + "|".join(re.escape(h) for h in hints) + "))"), closure


_HINT, _HINT_RULES = _hint_index()

# -- command lines: one table per tool ---------------------------------------------------------
# What part of a flag's value is the secret:
_V = "v"          # the whole value
_UP = "user:pw"   # after the first ':' (curl -u user:pw, skopeo --creds, etcdctl --user)
_UPCT = "user%pw"  # after the first '%' (smbclient -U user%pw)
_UCOMMA = "user,pw"  # after the first ',' (lftp -u user,pw)
_PASSARG = "pass:pw"  # openssl -pass pass:pw (env:, file:, fd:, stdin are indirections)
_CERTPW = "cert:pw"  # curl --cert file:pw
_LIT = "key=value"  # kubectl create secret --from-literal=key=value
# How it stands: s = the next word, e = --flag=value, g = glued -fvalue
_Flag = tuple[str, str]

_MYSQL_FLAGS: dict[str, _Flag] = {"-p": (_V, "g"), "--password": (_V, "se")}
_LDAP_FLAGS: dict[str, _Flag] = {"-w": (_V, "sg")}
_SMB_FLAGS: dict[str, _Flag] = {"-U": (_UPCT, "sg"), "--user": (_UPCT, "se"), "--password": (_V, "se")}
_LOGIN_FLAGS: dict[str, _Flag] = {"-p": (_V, "sg"), "--password": (_V, "se")}
_MONGO_FLAGS: dict[str, _Flag] = {"-p": (_V, "s"), "--password": (_V, "se")}
_SNMP_FLAGS: dict[str, _Flag] = {"-A": (_V, "sg"), "-X": (_V, "sg")}
_SQLCMD_FLAGS: dict[str, _Flag] = {"-P": (_V, "sg")}
_KEYTOOL_FLAGS: dict[str, _Flag] = {f: (_V, "s") for f in (
    "-storepass", "-keypass", "-srcstorepass", "-deststorepass", "-srckeypass", "-destkeypass", "-new")}
_OPENSSL_FLAGS: dict[str, _Flag] = {"-pass": (_PASSARG, "s"), "-passin": (_PASSARG, "s"),
                                    "-passout": (_PASSARG, "s"), "-k": (_V, "s"), "-K": (_V, "s")}

#: tool -> {"": flags anywhere after it, SUBCOMMAND: flags once that word was seen}
_TOOLS: dict[str, dict[str, dict[str, _Flag]]] = {
    "curl": {"": {"-u": (_UP, "sg"), "--user": (_UP, "se"), "-U": (_UP, "sg"), "--proxy-user": (_UP, "se"),
                  "--oauth2-bearer": (_V, "se"), "-E": (_CERTPW, "sg"), "--cert": (_CERTPW, "se"),
                  "--pass": (_V, "se"), "--proxy-pass": (_V, "se")}},
    "redis-cli": {"": {"-a": (_V, "sg"), "--pass": (_V, "se")}},
    **{t: {"": _MYSQL_FLAGS} for t in ("mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlcheck", "mysqlshow",
                                         "mysqlpump", "mysqlsh", "mariadb", "mariadb-dump", "mariadb-admin",
                                         "mysqlbinlog", "mysqlslap")},
    **{t: {"": _SQLCMD_FLAGS} for t in ("sqlcmd", "bcp", "osql", "isql")},
    **{t: {"": _LDAP_FLAGS} for t in ("ldapsearch", "ldapmodify", "ldapadd", "ldapdelete", "ldapwhoami",
                                        "ldapcompare", "ldapmodrdn", "ldapexop", "ldapurl")},
    "ldappasswd": {"": {**_LDAP_FLAGS, "-s": (_V, "sg"), "-a": (_V, "sg")}},
    **{t: {"": _SMB_FLAGS} for t in ("smbclient", "rpcclient", "smbcacls", "smbget", "smbmap", "net")},
    "sshpass": {"": {"-p": (_V, "sg")}},
    **{t: {"login": _LOGIN_FLAGS} for t in ("docker", "podman", "buildah", "nerdctl", "oras", "crane", "regctl",
                                              "helm", "az", "oc", "argocd", "cf")},
    "skopeo": {"": {"--creds": (_UP, "se"), "--src-creds": (_UP, "se"), "--dest-creds": (_UP, "se")},
               "login": _LOGIN_FLAGS},
    "twine": {"": {"-p": (_V, "s"), "--password": (_V, "se")}},
    "keytool": {"": _KEYTOOL_FLAGS},
    "openssl": {"": _OPENSSL_FLAGS},
    "kubectl": {"secret": {"--from-literal": (_LIT, "se")}},
    **{t: {"": _MONGO_FLAGS} for t in ("mongo", "mongosh", "mongodump", "mongorestore", "mongoexport",
                                         "mongoimport", "mongostat", "mongotop", "mongofiles")},
    **{t: {"": {"-p": (_V, "s"), "--password": (_V, "se")}} for t in ("cqlsh", "cypher-shell", "rabbitmqadmin",
                                                                      "ncftp", "ncftpput", "ncftpget", "clickhouse-client")},
    "ipmitool": {"": {"-P": (_V, "sg")}},
    "zip": {"": {"-P": (_V, "s"), "--password": (_V, "se")}},
    "unzip": {"": {"-P": (_V, "s")}},
    **{t: {"": {"-p": (_V, "g")}} for t in ("7z", "7za", "7zr", "rar", "unrar")},
    "ssh-keygen": {"": {"-N": (_V, "s"), "-P": (_V, "s")}},
    "lftp": {"": {"-u": (_UCOMMA, "s"), "--user": (_UCOMMA, "s")}},
    **{t: {"": _SNMP_FLAGS} for t in ("snmpwalk", "snmpget", "snmpset", "snmpbulkwalk", "snmpgetnext", "snmptrap",
                                        "snmptable", "snmpbulkget")},
    "doctl": {"": {"-t": (_V, "sg")}},
    "etcdctl": {"": {"--user": (_UP, "se")}},
    "wget": {"": {}},
    "vault": {"": {}},
    "aws": {"put-parameter": {"--value": (_V, "se")}},
    "htpasswd": {"": {}},
    "rabbitmqctl": {"": {}},
    "mc": {"": {}},
    "sqlplus": {"": {}},
    "psql": {"": {}},
    "pg_dump": {"": {}},
    "gcloud": {"": {}},
    "git": {"": {}},
}
#: programs that run the next word as a program (a tool after them is a new command)
_SEPARATORS = frozenset({";", "|", "||", "&&", "&", "\n", "(", ")", "{", "}", "then", "do", "else", "!"})
_STDIN_LOGIN = frozenset({"--password-stdin", "--with-token", "--token-stdin", "--stdin"})
_TOOL_WORD = re.compile(r"(?<![\w\-.])(?:" + "|".join(sorted((re.escape(t) for t in _TOOLS), key=len, reverse=True))
                        + r"|echo|printf)(?![\w\-])")
_STRIP = "([{`'\"$"


@lru_cache(maxsize=1)
def rules_id() -> str:
    """Which redaction rules these are: a digest of this module's source. A text these rules found
    nothing in on their own, under the same id, needs no second reading by them (the settled rows of
    ``Redactor.data_in_place``); any change of a rule, hint or tool table changes it."""
    import hashlib
    from importlib import resources

    return hashlib.sha256(resources.files("cronctl").joinpath("redact.py").read_bytes()).hexdigest()[:16]


def _any_trigger() -> re.Pattern[str]:
    """One pattern for a lower-cased text that nothing in :meth:`Redactor._spans` can act on
    without: every rule's hint, every line keyword, every tool word. A text it does not match holds
    nothing the rules find (a history's 13,000 Job names: 0.17 s of rule scans, 0.05 s of this)."""
    if any(not hs for _p, _c, hs in _RULES):  # a rule without a hint runs on every long text
        raise AssertionError("every redaction rule names its hints")
    words = {h for _p, _c, hs in _RULES for h in hs} | set(_LINE_KEYWORDS) | {t.lower() for t in _TOOLS}
    words |= {"echo", "printf"}
    return re.compile("|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)))


_ANY_TRIGGER = _any_trigger()


def _program(word: str) -> str:
    """``/usr/bin/mysql`` -> ``mysql``; ``([/bin/sh`` -> ``sh``; ``mysql.exe`` -> ``mysql``."""
    w = word.strip(_STRIP).rstrip(")]}`'\";,")
    w = w.rsplit("/", 1)[-1].rsplit("\\", 1)[-1].lower()
    return w[:-4] if w.endswith(".exe") else w


def _part(kind: str, value: str) -> tuple[int, int] | None:
    """The (start, end) of the secret inside a flag's ``value``, by the flag's kind."""
    if kind == _V:
        return (0, len(value)) if _is_value(value) else None
    if kind in (_UP, _UPCT, _UCOMMA, _LIT):
        sep = {_UP: ":", _UPCT: "%", _UCOMMA: ",", _LIT: "="}[kind]
        i = value.find(sep)
        if i < 0 or not _is_value(value[i + 1:]):
            return None
        return i + 1, len(value)
    if kind == _PASSARG:
        if value.startswith("pass:") and _is_value(value[5:]):
            return 5, len(value)
        return None
    if kind == _CERTPW:
        i = value.rfind(":")
        if i <= 1 or value[i + 1:].startswith(("/", "\\")) or not _is_value(value[i + 1:]):
            return None
        return i + 1, len(value)
    return None


#: a span inside one word of a command line: (word index, start, end)
_WordSpan = tuple[int, int, int]


def command_secrets(words: list[str], strict: bool = False) -> list[_WordSpan]:
    """The secrets of a command line given as words (``command + args``, or a tokenised line of
    text): each as (index of the word, start, end inside it). Separators (``;``, ``|``, ``&&``)
    are words of their own; a word naming a known program starts its command."""
    found: list[_WordSpan] = []
    tool: str | None = None
    positionals: list[int] = []
    flags_seen: list[str] = []
    expect: tuple[str, bool] | None = None  # (kind, generic) of the flag whose value is the next word
    segments: list[tuple[str | None, list[int], list[str]]] = []

    def close() -> None:
        segments.append((tool, positionals, flags_seen))

    for i, w in enumerate(words):
        if w in _SEPARATORS:
            close()
            tool, positionals, flags_seen, expect = None, [], [], None
            continue
        if expect is not None:
            kind, generic = expect
            expect = None
            if not (generic and w.startswith("-")):
                part = _part(kind, w)
                if part is not None:
                    found.append((i, *part))
                continue
        prog = _program(w)
        if (tool is None and not w.startswith("-")) or ((prog in _TOOLS or prog in ("echo", "printf"))
                            and not (tool in ("kubectl", "oc") and "create" in [words[p] for p in positionals])):
            if prog and not w.startswith("-"):
                if tool is not None:
                    close()
                tool, positionals, flags_seen = prog, [], []
                continue
        table = _TOOLS.get(tool or "", {})
        flags: dict[str, _Flag] = dict(table.get("", {}))
        for p in positionals:
            flags.update(table.get(words[p], {}))
        if w.startswith("-") and len(w) > 1:
            flags_seen.append(w)
            name, eq, value = w.partition("=")
            spec = flags.get(name)
            if spec is not None:
                kind, forms = spec
                if eq and "e" in forms:
                    part = _part(kind, value)
                    if part is not None:
                        found.append((i, len(name) + 1 + part[0], len(name) + 1 + part[1]))
                elif not eq and "s" in forms:
                    expect = (kind, False)
                continue
            glued = next((f for f, (_k, forms) in flags.items() if "g" in forms and len(f) == 2
                          and w.startswith(f) and len(w) > 2), None)
            if glued is not None:
                part = _part(flags[glued][0], w[2:])
                if part is not None:
                    found.append((i, 2 + part[0], 2 + part[1]))
                continue
            bare = name.lstrip("-")
            if ":" in bare:
                continue  # keytool -storepass:env VAR, -storepass:file PATH: an indirection
            if bare and looks_secret(bare):
                if eq:
                    if _is_value(value):
                        found.append((i, len(name) + 1, len(w)))
                else:
                    expect = (_V, True)
            elif strict and not _strict_allowed(bare):
                if eq:
                    if _is_value(value) and not _STRICT_KEEP_VALUE.match(value):
                        found.append((i, len(name) + 1, len(w)))
                elif i + 1 < len(words) and not words[i + 1].startswith("-") and words[i + 1] not in _SEPARATORS \
                        and _is_value(words[i + 1]) and not _STRICT_KEEP_VALUE.match(words[i + 1]):
                    found.append((i + 1, 0, len(words[i + 1])))
            continue
        positionals.append(i)
        found.extend(_positional(tool, words, positionals, flags_seen))
    close()
    # echo PW | docker login --password-stdin (| vault login -): the echoed words
    for k in range(len(segments) - 1):
        tool_k, pos_k, _f = segments[k]
        tool_n, pos_n, flags_n = segments[k + 1]
        if tool_k in ("echo", "printf") and (any(f in _STDIN_LOGIN for f in flags_n) or (
                tool_n == "vault" and [words[p] for p in pos_n][:2] == ["login", "-"])):
            for p in pos_k:
                if _is_value(words[p].strip("'\"")):
                    found.append((p, 0, len(words[p])))
    return found


def _positional(tool: str | None, words: list[str], pos: list[int], flags_seen: list[str]) -> list[_WordSpan]:
    """The secret among the positional words seen so far, judged when the last one arrives."""
    i = pos[-1]
    w = words[i]
    args = [words[p] for p in pos]
    n = len(args)
    whole = [(i, 0, len(w))] if _is_value(w) else []
    if tool == "vault" and n == 2 and args[0] == "login" and "=" not in w and w != "-":
        return whole
    if tool == "aws" and n == 4 and args[:2] == ["configure", "set"] and looks_secret(args[2]):
        return whole
    if tool == "htpasswd" and any(f.startswith("-") and not f.startswith("--") and "b" in f for f in flags_seen):
        nflag = any(f.startswith("-") and not f.startswith("--") and "n" in f for f in flags_seen)
        if n == (2 if nflag else 3):
            return whole
    if tool == "rabbitmqctl" and n == 3 and args[0] in ("add_user", "change_password", "authenticate_user"):
        return whole
    if tool == "mc" and ((n == 6 and args[:2] == ["alias", "set"]) or (n == 7 and args[:3] == ["config", "host", "add"])):
        return whole
    if tool == "sqlplus" and n == 1:
        m = re.match(r"^[A-Za-z][\w$#]*/([^@\s]+)(?:@|$)", w)
        if m and _is_value(m.group(1)):
            return [(i, m.start(1), m.end(1))]
    return []


_JWT_HEAD = re.compile(r"eyJ[A-Za-z0-9_\-]{5,}")
_JWT_PART = re.compile(r"[A-Za-z0-9_\-]{16,}")


def _split_jwts(words: list[str]) -> list[_WordSpan]:
    """A JWT given as three words (header, claims, signature: some tools take the parts apart): the
    claims and the signature, whole."""
    found: list[_WordSpan] = []
    for i in range(len(words) - 2):
        if (_JWT_HEAD.fullmatch(words[i]) and _JWT_HEAD.fullmatch(words[i + 1])
                and _JWT_PART.fullmatch(words[i + 2])):
            found += [(i + 1, 0, len(words[i + 1])), (i + 2, 0, len(words[i + 2]))]
    return found


#: a word of shell text: quoted parts glued to unquoted ones are one word; ; | & ( ) separate
_SHELL_WORD = re.compile(r"""(?:[^\s'";|&()]+|'[^']*'|"(?:[^"\\]|\\.)*")+|\|\||&&|[;|&()]""")


def _shell_words(line: str) -> list[tuple[str, int, int]]:
    """(unquoted word, start, end) of every word of ``line``; a separator is a word of its own."""
    out = []
    for m in _SHELL_WORD.finditer(line):
        raw = m.group(0)
        word = re.sub(r"""'([^']*)'|"((?:[^"\\]|\\.)*)\"""", lambda q: q.group(1) if q.group(1) is not None
                      else re.sub(r"\\(.)", r"\1", q.group(2)), raw) if ("'" in raw or '"' in raw) else raw
        out.append((word, m.start(), m.end()))
    return out


def _text_command_spans(s: str, strict: bool = False) -> list[tuple[int, int]]:
    """Spans of ``s`` holding the secrets of the command lines on its lines (those naming a tool)."""
    spans: list[tuple[int, int]] = []
    pos = 0
    while True:
        # one search per line that names a tool, resumed after that line: a 12 MB line holding a
        # million tool words was searched to its end once per word (173 s; issue 39)
        m = _TOOL_WORD.search(s, pos)
        if m is None:
            break
        start = max(s.rfind("\n", pos, m.start()) + 1, pos)  # pos is always where a line starts
        end = s.find("\n", m.end())
        end = len(s) if end == -1 else end
        pos = end + 1
        if end - start > 20000:
            continue  # a line this long is data, not a command line
        line = s[start:end]
        toks = _shell_words(line)
        for wi, a, b in command_secrets([t[0] for t in toks], strict):
            word, ws, we = toks[wi]
            value = word[a:b]
            raw = line[ws:we]
            at = raw.find(value, min(a, len(raw))) if value else -1
            if at < 0:
                at = raw.find(value)
            if value and at >= 0:
                spans.append((start + ws + at, start + ws + at + len(value)))
    return spans


def _keyword_lines(s: str, low: str) -> list[tuple[int, int]]:
    """The (start, end) of every line of ``s`` that holds a secret keyword, in order."""
    if not _LINE_KEYWORD.search(low):
        return []
    spans: set[tuple[int, int]] = set()
    for kw in _LINE_KEYWORDS:
        i = low.find(kw)
        while i != -1:
            start = s.rfind("\n", 0, i) + 1
            end = s.find("\n", i)
            end = len(s) if end == -1 else end
            spans.add((start, end))
            i = low.find(kw, end)
    return sorted(spans)


def _trie_pattern(values: Iterable[str]) -> str:
    """One regular expression matching any of ``values``, shaped as a trie so that Python's
    engine tries one branch per character instead of every value at every position; at a
    position, the longest value wins."""
    trie: dict[str, Any] = {}
    for v in values:
        node = trie
        for ch in v:
            node = node.setdefault(ch, {})
        node[""] = True

    def emit(node: dict[str, Any]) -> str:
        end = "" in node
        branches = [re.escape(ch) + emit(child) for ch, child in sorted(node.items()) if ch != ""]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        if end:
            return "(?:" + body + ")?"
        return body

    return emit(trie)


#: an RFC3339 time and nothing else (what the outputs hold most of): no rule can find a secret in it
_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d{1,9})?)?(Z|[+-]\d\d:\d\d)")


class Redactor:
    """Collects secret values (pass one) and masks them everywhere (pass two); maps each distinct
    secret value to one stable placeholder for the life of the object.

    ``count`` is the number of values masked (occurrences, not distinct values), for the report.
    :meth:`learn` collects the values of objects (or any JSON-shaped data) before any output is
    masked, so that a value found late masks its earlier occurrences too. ``strict`` also masks
    every env and flag value not on the allow-list.
    """

    def __init__(self, strict: bool = False) -> None:
        self.strict = strict
        self._placeholders: dict[str, str] = {}
        self._known: set[str] = set()
        self._built: set[str] = set()
        self._pending: list[str] = []
        self._matcher: re.Pattern[str] | None = None
        self._cache: dict[str, Sequence[tuple[int, int]]] = {}
        # strings pass one has read (reading one again remembers nothing new) and strings pass two
        # found nothing in with the values known so far (emptied when a value is learned): a
        # history of 13,000 slots repeats most of its strings
        self._learned: set[str] = set()
        self._clean: set[str] = set()
        # ids of the containers :meth:`data_in_place` was told these very rules find nothing in (only
        # while it runs: it holds them, so that no id is reused meanwhile)
        self._settled: set[int] = set()
        self.count = 0

    def placeholder(self, value: str) -> str:
        """The placeholder for ``value`` (the same value always gets the same one)."""
        self.count += 1
        ph = self._placeholders.get(value)
        if ph is None:
            ph = f"<redacted:{len(self._placeholders) + 1}>"
            self._placeholders[value] = ph
            self._remember(value)
        return ph

    def forget_strings(self) -> None:
        """Drop the caches of strings read (their spans, the strings found clean): bounded memory
        for a redactor that lives long (the ledger's writes). The secret values learned and their
        placeholders are kept."""
        self._cache.clear()
        self._learned.clear()
        self._clean.clear()

    @property
    def distinct(self) -> int:
        """How many distinct values were masked."""
        return len(self._placeholders)

    def _remember(self, value: str) -> None:
        if len(value) >= MIN_ECHO_LEN and value not in self._known and _is_value(value):
            self._known.add(value)
            self._pending.append(value)
            self._clean.clear()
            part = _password_part(value)
            if part is not None:  # the parts of a learned secret are learned too (issue 39)
                self._remember(part)

    # -- pass one ---------------------------------------------------------------------------

    def learn(self, obj: Any) -> None:
        """Collect every secret value of ``obj``: a CronJob/Job/Pod/Event dict, a list of them, a
        string, or any JSON-shaped data (a run record), so that its occurrences anywhere in the
        same output are masked, earlier ones included."""
        if isinstance(obj, str):
            self._learn_all((obj,))
        elif isinstance(obj, list):
            self._learn_all(obj)
        elif isinstance(obj, dict):
            if _is_kube_object(obj):
                self._object(obj, write=False)
            else:
                self._learn_all(obj.values())

    def _learn_all(self, values: Iterable[Any]) -> None:
        # the walk of a large output (every string of 13,000 history rows): plain types inline
        learned = self._learned
        for v in values:
            t = type(v)
            if t is str:
                if v and v not in learned:
                    if not (len(v) <= 35 and _TIMESTAMP.fullmatch(v)):  # a time holds no secret
                        self._find(v)
                    if len(v) <= 4096 and len(learned) < _MEMO_MAX:
                        learned.add(v)
            elif t is list:
                if v:
                    self._learn_all(v)
            elif not (v is None or t is int or t is bool or t is float) and id(v) not in self._settled:
                self.learn(v)

    def _find(self, s: str) -> list[tuple[int, int]]:
        """Pass one on a string: the spans of the secrets the rules find, each value remembered.
        Short strings repeat across objects (the same args in 2,000 Jobs): their spans are kept."""
        if not s:
            return []
        cached = self._cached_spans(s)
        for a, b in cached:
            self._remember(s[a:b])
        return list(cached)

    def _cached_spans(self, s: str) -> Sequence[tuple[int, int]]:
        """:meth:`_spans` of ``s``, kept for a string up to 4 KiB (most hold none: one shared empty tuple)."""
        cached = self._cache.get(s) if len(s) <= 4096 else None
        if cached is None:
            cached = self._spans(s) or _NO_SPANS
            if len(s) <= 4096:
                if len(self._cache) > _MEMO_MAX:
                    self._cache.clear()
                self._cache[s] = cached
        return cached

    def _spans(self, s: str) -> list[tuple[int, int]]:
        if len(s) <= 35 and _TIMESTAMP.fullmatch(s):  # a time: holds no secret (90 days of history: 100,000)
            return []
        low = s.lower()
        exact = len(low) == len(s)  # lower() can change the length of some non-ASCII text
        if exact and not _ANY_TRIGGER.search(low):  # no hint, keyword or tool word: no rule can act
            return []
        spans: list[tuple[int, int]] = []
        run: set[int] = set()
        if exact and len(s) <= 2048:  # one scan for every hint; a long text: one str.find per hint
            for h in {m.group(1) for m in _HINT.finditer(low)}:
                run |= _HINT_RULES[h]
        for i, (pat, check, hints) in enumerate(_RULES if run or not exact or len(s) > 2048 else ()):
            if exact and (i not in run if len(s) <= 2048 else not any(h in low for h in hints)):
                continue
            for m in pat.finditer(s):
                g = _value_group(m)
                v = m.group(g)
                if v and _is_value(v) and (check is None or check(m)):
                    spans.append(m.span(g))
        lines = _keyword_lines(s, low) if exact else [(0, len(s))]
        for start, end in lines:
            line = s[start:end]
            for pat, check in _LINE_RULES:
                for m in pat.finditer(line):
                    g = _value_group(m)
                    v = m.group(g)
                    if v and _is_value(v) and (check is None or check(m)):
                        a, b = m.span(g)
                        spans.append((start + a, start + b))
        spans += _text_command_spans(s, self.strict)
        return _non_overlapping(spans)

    # -- pass two ---------------------------------------------------------------------------

    def _echo_hits(self, s: str) -> list[tuple[int, int]]:
        if self._pending and len(self._pending) > max(32, len(self._built) // 2):
            self._built |= set(self._pending)
            self._pending = []
            self._matcher = re.compile(r"<redacted:\d+>|(" + _trie_pattern(self._built) + ")")
        hits: list[tuple[int, int]] = []
        if self._matcher is not None:
            for m in self._matcher.finditer(s):
                if m.group(1) is not None and _bounded(s, m.start(1), m.end(1)):
                    hits.append(m.span(1))
        for v in self._pending:
            i = s.find(v)
            while i != -1:
                if _bounded(s, i, i + len(v)):
                    hits.append((i, i + len(v)))
                i = s.find(v, i + len(v))
        return hits

    def text(self, s: str) -> str:
        """``s`` with every secret the rules find in it, and every collected value, masked."""
        if not s or s in self._clean:
            return s
        spans = self._find(s)
        hits = self._echo_hits(s) if (self._known) else []
        if not spans and not hits:
            if len(s) <= 4096 and len(self._clean) < _MEMO_MAX:
                self._clean.add(s)
            return s
        return self._apply(s, _non_overlapping(spans + hits))

    def _apply(self, s: str, spans: list[tuple[int, int]]) -> str:
        parts: list[str] = []
        pos = 0
        for a, b in sorted(spans):
            parts += [s[pos:a], self.placeholder(s[a:b])]
            pos = b
        return "".join(parts) + s[pos:]

    def argv(self, args: list[Any]) -> list[Any]:
        """A command line (command + args) with secrets masked: the flag table of its program, a
        secret-named flag's value (``--password X``), positional secrets of known subcommands,
        and every word as text (an ``sh -c`` script is a command line of its own)."""
        return self._argv(args, write=True)

    def _argv(self, args: list[Any], write: bool) -> list[Any]:
        words = [a if isinstance(a, str) else "\0" for a in args]
        by_word: dict[int, list[tuple[int, int]]] = {}
        for wi, a, b in command_secrets(words, self.strict) + _split_jwts(words):
            by_word.setdefault(wi, []).append((a, b))
        out: list[Any] = []
        for i, a in enumerate(args):
            if not isinstance(a, str):
                out.append(a)
                continue
            spans = by_word.get(i, [])
            if not write:
                for x, y in spans:
                    self._remember(a[x:y])
                self._find(a)
                out.append(a)
                continue
            if spans and not _PLACEHOLDER.search(a):
                found = self._find(a)
                spans = _non_overlapping(spans + found + (self._echo_hits(a) if self._known else []))
                out.append(self._apply(a, spans))
            else:
                out.append(self.text(a))
        return out

    def data(self, value: Any) -> Any:
        """A copy of JSON-shaped ``value`` with every string masked as text (run records, history,
        status), its own values collected first."""
        self.learn(value)
        return self._data(value)

    def finds_nothing(self, value: Any) -> bool:
        """Whether the rules find nothing in JSON-shaped ``value`` on its own: no string in it holds
        a secret they find, and it holds no Kubernetes object (masked by structure) and nothing but
        JSON's types. :meth:`data` would then return it unchanged, having learned nothing. Only
        this redactor's cache of what each string holds is used (a recorder checks every row it keeps
        with one); the values it collected are neither read nor changed."""
        t = type(value)
        if t is str:
            if not value or (len(value) <= 35 and _TIMESTAMP.fullmatch(value)):
                return True
            return not self._cached_spans(value)
        if t is list:
            return all(self.finds_nothing(v) for v in value)
        if t is dict:
            return not _is_kube_object(value) and all(self.finds_nothing(v) for v in value.values())
        return value is None or t is int or t is bool or t is float

    @property
    def learned(self) -> int:
        """How many values this redactor has learned so far: a text masked before it grew may hold one
        learned since."""
        return len(self._known)

    def data_in_place(self, value: Any, settled: Iterable[dict[str, Any]] = (), *,
                      settled_ids: set[int] | None = None) -> Any:
        """:meth:`data` without the copy: ``value``'s own dicts and lists are masked (a history of
        145,000 slots: copying its 876,000 containers took 3 s of 4). Only for data the caller made
        and nothing else holds. Returns ``value`` (masked, when it is a string).

        ``settled``: dicts inside ``value`` in which these very rules (:func:`rules_id`) found
        nothing on their own: the ledger's history rows, checked when the recorder kept them. They
        are not read for secrets; and when nothing else in ``value`` holds one either (no value
        learned), nothing in them can be masked, so they are not walked at all. When a value was
        learned, they are masked with the rest, for its other occurrences. ``settled_ids``: the ids of
        such dicts, made once by the caller who masks many values against the same rows."""
        self._settled = settled_ids if settled_ids is not None else {id(d) for d in settled}
        try:
            self.learn(value)
            if self._known:  # a value found elsewhere may stand in a settled row too
                self._settled = set()
            if isinstance(value, (dict, list)):
                self._mask_tree(value)
                return value
            return self._data(value)
        finally:
            self._settled = set()

    def _mask_tree(self, value: dict[Any, Any] | list[Any]) -> None:
        clean = self._clean
        if isinstance(value, dict):
            if _is_kube_object(value):
                self._mask_object_in_place(value)  # by structure first, then every string as text
            pairs: Iterable[tuple[Any, Any]] = value.items()
        else:
            pairs = enumerate(value)
        for k, v in pairs:  # a value replaced, never a key added: the walk stays valid
            t = type(v)
            if t is str:
                if not v or v in clean:
                    continue
                if not self._known and len(v) <= 35 and _TIMESTAMP.fullmatch(v):
                    # a time holds no secret of its own (nor one learned, when none was)
                    if len(clean) < _MEMO_MAX:
                        clean.add(v)
                    continue
                m = self.text(v)
                if m is not v:
                    value[k] = m
            elif t is dict or t is list:
                if v and id(v) not in self._settled:
                    self._mask_tree(v)
            elif not (v is None or t is int or t is bool or t is float):
                value[k] = self._data(v)

    def _data(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            if _is_kube_object(value):
                # by structure first (a secret env value is masked whole), then every string as text
                value = self.kube_object(value)
            return dict(zip(value.keys(), self._data_all(value.values())))
        if isinstance(value, list):
            return self._data_all(value)
        return value

    def _data_all(self, values: Iterable[Any]) -> list[Any]:
        # pass two of a large output: plain types inline, a string found clean before returned as is
        clean = self._clean
        out: list[Any] = []
        add = out.append
        for v in values:
            t = type(v)
            if t is str:
                add(v if not v or v in clean else self.text(v))
            elif v is None or t is int or t is bool or t is float:
                add(v)
            else:
                add(self._data(v))
        return out

    # -- objects ------------------------------------------------------------------------------

    def kube_object(self, obj: Obj) -> Obj:
        """A copy of a CronJob/Job/Pod/Event dict with secret material masked (input untouched)."""
        out: Obj = _deep_copy(obj)
        self._mask_object_in_place(out)
        return out

    def mask_in_place(self, obj: Obj) -> Obj:
        """Mask ``obj`` itself (no copy) and return it."""
        self._mask_object_in_place(obj)
        return obj

    def _mask_object_in_place(self, obj: Obj) -> None:
        self._object(obj, write=False)  # its own values first: order does not matter inside it
        self._object(obj, write=True)

    def _str(self, s: str, write: bool) -> str:
        if write:
            return self.text(s)
        self._find(s)
        return s

    def _secret(self, v: str, write: bool) -> str:
        """A value that is wholly secret by where it stands."""
        if _PLACEHOLDER.fullmatch(v) or v == "":
            return v  # already masked (an object reached twice, e.g. a YAML alias), or nothing
        if write:
            return self.placeholder(v)
        self._remember(v)
        return v

    def _object(self, obj: Obj, write: bool) -> None:
        for labels in _annotation_maps(obj, "labels"):
            # a label named as a secret (``example.com/api-key``, issue 39) holds one, in every mode
            for k, v in list(labels.items()):
                if isinstance(k, str) and isinstance(v, str) and v and _secret_annotation(k):
                    new = self._secret(v, write)
                    if write:
                        labels[k] = new
        for ann in _annotation_maps(obj):
            for k, v in list(ann.items()):
                if not isinstance(v, str):
                    continue
                if k == LAST_APPLIED:
                    new = self._last_applied(v, write)
                elif _secret_annotation(k):
                    new = self._secret(v, write)
                else:
                    new = self._str(v, write)  # annotations are free text (tools keep URLs, commands, logs)
                if write:
                    ann[k] = new
        kind = obj.get("kind")
        if kind == "Event" or ("involvedObject" in obj and "reason" in obj):
            for key in ("message", "note"):
                if isinstance(obj.get(key), str):
                    new = self._str(obj[key], write)
                    if write:
                        obj[key] = new
            return
        for pod_spec in _pod_specs(obj):
            for c in _containers(pod_spec):
                self._container(c, write)
        status = obj.get("status")
        if isinstance(status, dict):
            self._status(status, write)

    def _status(self, status: Obj, write: bool) -> None:
        # a container's termination message is free text the application wrote (often its last log
        # line); a condition's message can quote the application (a PodFailurePolicy rule)
        holders: list[Obj] = [status]
        for key in ("initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses"):
            statuses = status.get(key)
            for cs in statuses if isinstance(statuses, list) else []:
                if not isinstance(cs, dict):
                    continue
                for st in (cs.get("state"), cs.get("lastState")):
                    if isinstance(st, dict):
                        holders.extend(d for d in st.values() if isinstance(d, dict))
        conditions = status.get("conditions")
        holders.extend(c for c in (conditions if isinstance(conditions, list) else []) if isinstance(c, dict))
        for h in holders:
            for key in ("message", "terminationMessage"):
                if isinstance(h.get(key), str):
                    new = self._str(h[key], write)
                    if write:
                        h[key] = new

    def _container(self, c: Obj, write: bool) -> None:
        env = c.get("env")
        for e in env if isinstance(env, list) else []:
            if not isinstance(e, dict):
                continue
            name = str(e.get("name", ""))
            holders = [e]
            vf = e.get("valueFrom")
            if isinstance(vf, dict) and isinstance(vf.get("value"), str):
                holders.append(vf)  # a literal under valueFrom (not an API field, but seen in the wild)
            for h in holders:
                v = h.get("value")
                if not isinstance(v, str):
                    continue
                if looks_secret(name) or (self.strict and not _strict_allowed(name) and _is_value(v)
                                          and not _STRICT_KEEP_VALUE.match(v)):
                    new = self._secret(v, write)
                else:
                    new = self._str(v, write)
                if write:
                    h["value"] = new
        cmd = c.get("command") if isinstance(c.get("command"), list) else None
        args = c.get("args") if isinstance(c.get("args"), list) else None
        if cmd is not None or args is not None:
            # one command line: a flag at the end of command takes its value from args
            masked = self._argv((cmd or []) + (args or []), write)
            if write and cmd is not None:
                c["command"] = masked[: len(cmd)]
            if write and args is not None:
                c["args"] = masked[len(cmd or []):]
        for key in ("livenessProbe", "readinessProbe", "startupProbe"):
            self._handler(c.get(key), write)
        lifecycle = c.get("lifecycle")
        if isinstance(lifecycle, dict):
            for key in ("postStart", "preStop"):
                self._handler(lifecycle.get(key), write)

    def _handler(self, h: Any, write: bool) -> None:
        """A probe or lifecycle hook: its exec command line and its HTTP headers."""
        if not isinstance(h, dict):
            return
        ex = h.get("exec")
        if isinstance(ex, dict) and isinstance(ex.get("command"), list):
            masked = self._argv(ex["command"], write)
            if write:
                ex["command"] = masked
        hg = h.get("httpGet")
        headers = hg.get("httpHeaders") if isinstance(hg, dict) else None
        for hd in headers if isinstance(headers, list) else []:
            if not isinstance(hd, dict) or not isinstance(hd.get("value"), str):
                continue
            name = str(hd.get("name", ""))
            if name.lower() in _SECRET_HEADERS or looks_secret(name):
                new = self._secret(hd["value"], write)
            else:
                new = self._str(hd["value"], write)
            if write:
                hd["value"] = new
        if isinstance(hg, dict):
            for key in ("path", "host"):
                if isinstance(hg.get(key), str):
                    new = self._str(hg[key], write)
                    if write:
                        hg[key] = new

    def _last_applied(self, text: str, write: bool) -> str:
        from cronctl.decode import loads

        try:
            data = loads(text)  # bounded: a 2,000-deep value is text, not a RecursionError (issue 39)
        except ValueError:
            return self._str(text, write)
        if not isinstance(data, dict):
            return self._str(text, write)
        self._object(data, write)
        if not write:
            return text
        return json.dumps(data, separators=(",", ":"), sort_keys=True)


_USERINFO = re.compile(r"^[^\s:/@]{0,128}:(?!//)(?P<p>\S{%d,})$" % MIN_ECHO_LEN)


def _password_part(value: str) -> str | None:
    """The password of a learned ``user:password`` (a URL's userinfo, ``curl -u``, ``--creds``): a
    log or an Event that echoes it alone (``authentication failed: PASSWORD``) is masked too."""
    m = _USERINFO.match(value)
    return m.group("p") if m and _is_value(m.group("p")) else None


def _non_overlapping(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` in order of priority (earlier wins), without those that overlap an accepted one."""
    if len(spans) <= 1:
        return [s for s in spans if s[1] > s[0]]
    accepted: list[tuple[int, int]] = []
    taken: list[tuple[int, int]] = []  # sorted
    import bisect

    for a, b in spans:
        if b <= a:
            continue
        k = bisect.bisect_left(taken, (a, b))
        if (k > 0 and taken[k - 1][1] > a) or (k < len(taken) and taken[k][0] < b):
            continue
        taken.insert(k, (a, b))
        accepted.append((a, b))
    return accepted


_ALNUM = re.compile(r"[A-Za-z0-9]")


def _bounded(s: str, a: int, b: int) -> bool:
    """An echo of a short value must stand as a word of its own (``hunter2`` not in ``hunter22``);
    a long one is specific enough to be masked inside a word too."""
    if b - a >= 12:
        return True
    if a > 0 and _ALNUM.match(s[a - 1]) and _ALNUM.match(s[a]):
        return False
    if b < len(s) and _ALNUM.match(s[b]) and _ALNUM.match(s[b - 1]):
        return False
    return True


#: annotation prefixes whose keys name secrets but whose values are references (Vault agent paths)
_REFERENCE_ANNOTATIONS = ("vault.hashicorp.com/", "secrets-store.csi", "external-secrets.io/")


def _secret_annotation(key: str) -> bool:
    """An annotation whose key names a secret (``example.com/db-password``) holds one."""
    if key.startswith(_REFERENCE_ANNOTATIONS):
        return False
    return looks_secret(key.rsplit("/", 1)[-1])


def _is_kube_object(d: Obj) -> bool:
    return isinstance(d.get("metadata"), dict) and (isinstance(d.get("kind"), str) or "spec" in d)


_URL_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*://)(?:" + _USER_PASSWORD + r"|[^\s/?#@]*)@" + _HOST_START)


def safe_url(url: str) -> str:
    """``url`` without userinfo (``https://user:pass@host`` -> ``https://host``) and with the
    values of secret-looking query parameters (``?token=``, ``?access_token=``, ``?sig=``) replaced
    by ``<redacted>``: the form in which an API server's URL is printed or stored."""
    url = _URL_USERINFO.sub(r"\1", url, count=1)
    try:
        parts = urlsplit(url)
    except ValueError:
        return Redactor().text(url)
    if not parts.netloc:
        return Redactor().text(url)
    netloc = parts.netloc
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = "&".join(f"{quote(k, safe='')}=" + ("<redacted>" if looks_secret(k) else quote(v, safe=''))
                         for k, v in pairs)
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _containers(spec: Obj) -> list[Obj]:
    out: list[Obj] = []
    for key in ("initContainers", "containers", "ephemeralContainers"):
        out.extend(c for c in spec.get(key) or [] if isinstance(c, dict))
    return out


def _annotation_maps(obj: Obj, field: str = "annotations") -> list[Obj]:
    """The annotations (or ``field``: labels) of the object and of the templates inside it (Job, pod)."""
    maps: list[Obj] = []

    def add(meta: Any) -> None:
        if isinstance(meta, dict) and isinstance(meta.get(field), dict):
            maps.append(meta[field])

    add(obj.get("metadata"))
    spec = obj.get("spec")
    if isinstance(spec, dict):
        for holder in (spec.get("template"), spec.get("jobTemplate")):
            if isinstance(holder, dict):
                add(holder.get("metadata"))
                inner = holder.get("spec")
                if isinstance(inner, dict) and isinstance(inner.get("template"), dict):
                    add(inner["template"].get("metadata"))
    return maps


def _pod_specs(obj: Obj) -> list[Obj]:
    """Every pod spec inside a CronJob, Job or Pod dict (or the same shapes without ``kind``)."""
    found: list[Obj] = []
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return found
    if "containers" in spec:  # a Pod
        found.append(spec)
    tmpl = spec.get("template")  # a Job
    if isinstance(tmpl, dict) and isinstance(tmpl.get("spec"), dict):
        found.append(tmpl["spec"])
    jt = spec.get("jobTemplate")  # a CronJob
    if isinstance(jt, dict):
        jspec = jt.get("spec")
        if isinstance(jspec, dict):
            t = jspec.get("template")
            if isinstance(t, dict) and isinstance(t.get("spec"), dict):
                found.append(t["spec"])
    return found


def _deep_copy(x: Any) -> Any:
    # JSON-shaped data only; much faster than copy.deepcopy for thousands of objects
    if isinstance(x, dict):
        return {k: _deep_copy(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_deep_copy(v) for v in x]
    return x


def strip_managed_fields(obj: Obj) -> Obj:
    """A shallow copy of ``obj`` whose metadata has no ``managedFields`` (noise in a bundle)."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or "managedFields" not in meta:
        return obj
    new_meta = {k: v for k, v in meta.items() if k != "managedFields"}
    return {**obj, "metadata": new_meta}
