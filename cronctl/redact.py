"""Masking of secret material in everything cronctl writes. PURE: no I/O, no clock, stdlib only.

One rule set, used by the bundle (bundle.json, REPORT.md, report.html, objects.yaml, logs), by
run-manual and backfill (job.json, pods.json, saved logs, record.json, ``-o json``, the log tail),
by the error line of :func:`cronctl.cli.main`, and for the API server's URL (:func:`safe_url`).
It sits at the bottom of the layers so that every writer can use it.

What is masked (the shapes follow the gitleaks / detect-secrets detectors where one fits):

* **by name**: a literal ``env[].value`` whose name looks secret (:func:`looks_secret`: a word
  PASSWORD, PASSWD, PASS, PWD, SECRET, TOKEN, KEY, CREDENTIAL(S), AUTH, PRIVATE, PEM, DSN, PIN,
  SALT, OTP, COOKIE, SESSION, SIGNATURE, CERT, PGPASS, ... anywhere in the name, also glued
  (``PGPASSWORD``, ``apiKey``), unless the name ends in a word that says it is not the secret
  itself: ``_FILE``, ``_PATH``, ``_URL``, ``_LENGTH``, ``_POLICY``, ``_COUNT``, ``_ID``, ...);
* **in text** (every other env value, command/args, annotations, event messages, log lines,
  error messages, the run record): ``name=value`` / ``name: value`` / ``"name": "va lue"`` with a
  secret-looking name (``DB_PASSWORD=``, ``GITHUB_TOKEN=``, ``aws_secret_access_key =``, in URLs'
  query strings, in ``sh -c`` strings); CLI flags ``--password X``, ``--password=X``, mysql's
  ``-pX``; ``scheme://user:pass@host`` (passwords with ``/``, ``#``, ``@``, ``:``) and user-only
  tokens ``https://TOKEN@host``; ``Bearer``/``Basic``/``token`` credentials; JWTs; PEM private key
  blocks; provider tokens: AWS ``AKIA``/``ASIA`` key ids, GitHub ``ghp_``/``gho_``/``ghs_``/
  ``ghu_``/``ghr_``/``github_pat_``, GitLab ``glpat-``, Slack ``xox?-`` and webhook URLs, Stripe
  ``sk_live_``, Google ``AIza``, npm ``npm_``, SendGrid, OpenAI-style ``sk-``;
* **by echo**: a value already masked once (an env value under a secret name, a value a rule
  above found) is masked wherever it appears again in the same output (args, logs, events),
  when it is at least :data:`MIN_ECHO_LEN` characters long.

One :class:`Redactor` is used for a whole output so that the same secret value always becomes the
same placeholder (``<redacted:1>``, numbered in order of first appearance): a reader can still see
that two pods used the same token without seeing it. ``valueFrom`` references (secretKeyRef ...)
are names, not secrets, and are kept; so are ``$VAR``/``${VAR}`` references, booleans and empty
values. Secret objects themselves are never read by cronctl.

Known limits: a secret in free prose with no name, flag, scheme or known prefix ("the password is
hunter2") is not found; a value under a name cronctl does not recognise is kept unless it was
seen under a secret name; an echoed value shorter than :data:`MIN_ECHO_LEN` is masked only where
a rule finds it; ``-pX`` is recognised only after a mysql/mariadb program name.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import lru_cache, partial
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

Obj = dict[str, Any]

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

#: An echoed secret value (known from a name or a rule) is masked wherever it appears again when
#: it is at least this long; shorter ones would hit ordinary words and numbers.
MIN_ECHO_LEN = 6

# -- names ------------------------------------------------------------------------------------

#: a word of a name that makes its value secret wherever it is glued in (DBPASSWORD, APITOKEN)
_STRONG = ("PASSWORD", "PASSWD", "PASSPHRASE", "SECRET", "TOKEN", "CREDENTIAL", "APIKEY", "PRIVATEKEY",
           "ACCESSKEY", "SECRETKEY", "AUTHKEY")
#: words that make a value secret only as a whole word (too short to match inside other words)
_SECRET_WORDS = frozenset({
    "PASS", "PWD", "KEY", "AUTH", "PRIVATE", "PEM", "DSN", "PIN", "SALT", "OTP", "COOKIE", "SESSION",
    "SIGNATURE", "CERT", "CREDS", "PGPASS", "PASSCODE", "SIG", "HMAC", "JWT", "BEARER", "AUTHORIZATION",
})
#: glued words that contain a strong word but are not secrets (TOKENIZER, SECRETARY)
_BENIGN_GLUED = re.compile(r"^(?:TOKENI[SZ]|SECRETAR|PASSWORDLESS)")
#: a name ending in one of these words names something about the secret, not the secret itself
_NOT_THE_SECRET = frozenset({
    "FILE", "FILES", "PATH", "DIR", "URL", "URI", "ENDPOINT", "HOST", "PORT", "LENGTH", "LEN", "MIN",
    "MAX", "POLICY", "TTL", "TIMEOUT", "EXPIRY", "EXPIRES", "EXPIRATION", "NAME", "ID", "IDS", "TYPE",
    "COUNT", "ENABLED", "DISABLED", "REQUIRED", "FORMAT", "VERSION", "SIZE", "ALGORITHM", "ALG",
    "LIFETIME", "ROTATION", "MODE", "REF", "KIND", "STDIN", "FIELD", "PARAM", "PREFIX", "SOURCE",
    "ISSUER", "AUDIENCE", "SCOPE", "SCOPES", "LIMIT", "RETRIES", "INTERVAL", "DURATION", "SECONDS",
    "DAYS", "STRENGTH", "COMPLEXITY", "COLUMN", "LABEL", "PROVIDER", "STORE", "MOUNT", "VOLUME",
    "NAMESPACE", "KEYS", "REFRESHED", "EXPIRED", "USED", "AGE", "HINT", "PROMPT", "RESET", "LOCATION",
})
#: a first word that negates the rest (``--no-password``)
_NEGATION = frozenset({"NO", "SKIP", "DISABLE", "WITHOUT", "IGNORE"})
#: words before KEY that make it a data key, not a credential (primary_key, public_key)
_DATA_KEY = frozenset({
    "PRIMARY", "FOREIGN", "SORT", "PARTITION", "CACHE", "IDEMPOTENCY", "ROUTING", "SHARD", "LOOKUP",
    "DEDUP", "PUBLIC", "PUB", "OBJECT", "MAP", "GROUP", "ORDER", "UNIQUE", "RANGE", "LABEL", "HASH",
    "ROW", "MESSAGE", "DEDUPLICATION", "S3", "REGISTRY",
})

_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def _words(name: str) -> list[str]:
    # split on anything not alphanumeric, then camelCase: dbPassword -> DB PASSWORD
    return [w.upper() for w in _WORDS.findall(name)]


@lru_cache(maxsize=4096)
def looks_secret(name: str) -> bool:
    """True when a value called ``name`` (env var, flag, JSON key, query parameter) is a secret."""
    words = _words(name)
    if not words or words[0] in _NEGATION or words[-1] in _NOT_THE_SECRET:
        return False
    hits = [i for i, w in enumerate(words)
            if w in _SECRET_WORDS or (any(s in w for s in _STRONG) and not _BENIGN_GLUED.match(w))]
    if not hits:
        return False
    if all(words[i] == "KEY" for i in hits):
        # a bare ``key`` (``key: app``) or a data key (primary_key, public_key) is not a credential
        return any(i > 0 and words[i - 1] not in _DATA_KEY for i in hits)
    return True


# -- values that are not secrets even under a secret name ---------------------------------------

_PLACEHOLDER = re.compile(r"<redacted(?::\d+)?>")
_NOT_A_VALUE = re.compile(
    r"(?i)^(?:|true|false|yes|no|on|off|null|none|nil|undefined|\*+|x{3,}|redacted|masked|hidden|"
    # a status word in a message ("auth: failed", "token: expired", "secret: not found")
    r"failed|failure|expired|invalid|missing|required|denied|refused|rejected|unauthori[sz]ed|forbidden|ok|"
    r"error|unknown|empty|set|unset|present|absent|provided|found|not|rotated|valid|accepted|changed|"
    r"updated|n/a|"
    r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\$\([A-Za-z_][A-Za-z0-9_]*\)|%[A-Za-z_][A-Za-z0-9_]*%|\{\{.*\}\}|"
    r"<[a-z_\- ]+>)$")


def _is_value(v: str) -> bool:
    return not _NOT_A_VALUE.match(v) and not _PLACEHOLDER.search(v)


# -- rules ---------------------------------------------------------------------------------------
# Each rule masks its named group ``s``; ``check`` (if any) decides on the whole match.

_KEYWORDS = ("pass", "pwd", "secret", "token", "key", "auth", "cred", "private", "session", "cookie", "sig",
             "cert", "pem", "dsn", "pin", "salt", "otp", "hmac", "jwt", "bearer")
_KEYWORD = "(?:" + "|".join(_KEYWORDS) + ")"
# bounded: names are short, and an unbounded run would make a long log line quadratic
_NAME = rf"[A-Za-z0-9_.\-]{{0,64}}{_KEYWORD}[A-Za-z0-9_.\-]{{0,64}}"
_HOST_START = r"(?=[A-Za-z0-9\[])"
#: user:password of a URL, the password holding / # @ : too: up to the last @ before any ?, else any
#: (a port, ``host:8443/``, is not a password)
_USER_PASSWORD = (r"[^\s/?#@:'\"<>]{0,128}:(?!\d{1,5}(?:[/?#'\"<>\s]|$))"
                  r"(?:[^\s'\"<>?]{0,256}|[^\s'\"<>]{0,256}?)")


def _value_group(m: re.Match[str]) -> str:
    """The group holding the secret: ``s``, or the quoted forms of a name=value rule."""
    return next((g for g in ("s_d", "s_q", "s_e") if g in m.re.groupindex and m.group(g) is not None), "s")


def _kv_check(m: re.Match[str]) -> bool:
    if "oq" in m.re.groupindex and m.group("oq") and m.group("s") is not None and not m.group("s").isdigit():
        return False  # a quoted key takes a quoted value (JSON); `volume "creds" : secret "db"` is prose
    return looks_secret(m.group("k"))


_MYSQL_WORD = re.compile(r"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlshow|mariadb(?:-dump|-admin)?)"
                         r"\b[^;|&\n]*$")


def _after_mysql(m: re.Match[str]) -> bool:
    # the same command: a mysql-family program before it on the line, no ; | & between
    return bool(_MYSQL_WORD.search(m.string, max(0, m.start() - 512), m.start()))


def _basic_check(m: re.Match[str]) -> bool:
    v = m.group("s")
    # base64 of user:pass, not "basic information"
    return bool(re.search(r"[0-9=+/]", v)) or (v.lower() != v and v.upper() != v)


_Check = Callable[[re.Match[str]], bool]
#: (pattern, check on the whole match or None, hints: lower-case literals one of which the text
#: must contain for the rule to be tried at all; a cheap str.find keeps long logs fast)
_Rule = tuple[re.Pattern[str], "_Check | None", tuple[str, ...]]

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
    # Slack incoming webhooks: the path after /services/ is the credential
    (re.compile(r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9_\-]+(?:/[A-Za-z0-9_\-]+)*)"),
     None, ("hooks.slack.com",)),
    # provider tokens with a known prefix (gitleaks rules)
    (re.compile(r"\b(?P<s>(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})\b"), None,
     ("akia", "asia", "abia", "acca", "a3t")),
    (re.compile(r"\b(?P<s>(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b"), None,
     ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    (re.compile(r"\b(?P<s>glpat-[A-Za-z0-9_\-]{20,})"), None, ("glpat-",)),
    (re.compile(r"\b(?P<s>xox[abposr]-[A-Za-z0-9\-]{10,})"), None, ("xox",)),
    (re.compile(r"\b(?P<s>(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{10,})\b"), None, ("sk_", "rk_")),
    (re.compile(r"\b(?P<s>AIza[0-9A-Za-z_\-]{35})"), None, ("aiza",)),
    (re.compile(r"\b(?P<s>npm_[A-Za-z0-9]{36})\b"), None, ("npm_",)),
    (re.compile(r"\b(?P<s>SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43})"), None, ("sg.",)),
    (re.compile(r"\b(?P<s>sk-(?:proj-|ant-[a-z0-9]+-)?[A-Za-z0-9_\-]{32,})"), None, ("sk-",)),
    # JWT (three base64url parts, the first two starting with eyJ = '{"')
    (re.compile(r"\b(?P<s>eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*)"), None, ("eyj",)),
    # Bearer xxx (also "Authorization: Bearer"); Basic only when it looks like base64
    (re.compile(r"(?i)\bbearer\s+(?P<s>[A-Za-z0-9\-._~+/]{8,}=*)"), None, ("bearer",)),
    (re.compile(r"\b[Bb]asic\s+(?P<s>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])"), _basic_check, ("basic",)),
    # "token ghp_..." / "token: 0f3a...": the word token before a long value with a digit
    (re.compile(r"(?i)\btoken\s+(?P<s>(?=[A-Za-z_\-.]*[0-9])[A-Za-z0-9_\-.]{16,})"), None, ("token",)),
)

# Rules that never cross a line end and need a secret keyword (or mysql) on the line: applied
# only to the lines that hold one.
_LINE_RULES: tuple[tuple[re.Pattern[str], _Check | None], ...] = (
    # name=value, name: value, "name": "value with spaces", name := value (JSON, YAML, env, query)
    (re.compile(rf"(?<![A-Za-z0-9_.\-])(?P<oq>\\?[\"'])?(?P<k>{_NAME})(?(oq)\\?[\"'])[ \t]*(?::=|=|:)[ \t]*"
                r"(?:(?i:bearer|basic|token)[ \t]+)?"
                r"(?:\\\"(?P<s_e>(?:[^\"\\\n]|\\[^\"])*)\\\"|\"(?P<s_d>(?:[^\"\\\n]|\\.)*)\"|'(?P<s_q>[^'\n]*)'"
                r"|(?P<s><redacted:\d+>|\$[{(][A-Za-z_][A-Za-z0-9_]*[})]|[^\s\"',;&<>(){}\[\]]+))", re.I), _kv_check),
    # --password X, -password X (the value as the next word)
    (re.compile(rf"(?<![A-Za-z0-9_\-])--?(?P<k>{_NAME})[ \t]+(?!-)(?:\"(?P<s_d>[^\"\n]*)\"|'(?P<s_q>[^'\n]*)'"
                r"|(?P<s>[^\s\"']+))", re.I), _kv_check),
    # mysql -pX (the password glued to -p, after a mysql-family program earlier on the line)
    (re.compile(r"(?<=[ \t])-p(?P<s>[^\s'\";|&]+)"), _after_mysql),
)
_LINE_KEYWORDS = _KEYWORDS + ("mysql", "mariadb")


def _keyword_lines(s: str, low: str) -> list[tuple[int, int]]:
    """The (start, end) of every line of ``s`` that holds a secret keyword, in order."""
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


_MYSQL = re.compile(r"(?:^|/)(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlshow|mariadb"
                    r"(?:-dump|-admin)?)$")
_FLAG = re.compile(r"^--?([A-Za-z][A-Za-z0-9_\-]*)$")


class Redactor:
    """Maps each distinct secret value to one stable placeholder for the life of the object.

    ``count`` is the number of values masked (occurrences, not distinct values), for the report.
    Every value masked once is also masked where it is echoed later (:data:`MIN_ECHO_LEN`);
    :meth:`learn` teaches the values of objects before any output is masked.
    """

    def __init__(self) -> None:
        self._placeholders: dict[str, str] = {}
        self._known: set[str] = set()
        self._echo: re.Pattern[str] | None = None
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

    @property
    def distinct(self) -> int:
        """How many distinct values were masked."""
        return len(self._placeholders)

    def _remember(self, value: str) -> None:
        if len(value) >= MIN_ECHO_LEN and value not in self._known and _is_value(value):
            self._known.add(value)
            self._echo = None

    # -- learning -------------------------------------------------------------------------

    def learn(self, obj: Any) -> None:
        """Remember the literal secret env values of a CronJob/Job/Pod dict (or a list of them),
        so that their echoes anywhere in the same output are masked too."""
        if isinstance(obj, list):
            for o in obj:
                self.learn(o)
            return
        if not isinstance(obj, dict):
            return
        for spec in _pod_specs(obj):
            for c in _containers(spec):
                for env in c.get("env") or []:
                    if (isinstance(env, dict) and isinstance(env.get("value"), str)
                            and looks_secret(str(env.get("name", "")))):
                        self._remember(env["value"])

    # -- text ---------------------------------------------------------------------------------

    def text(self, s: str) -> str:
        """``s`` with every secret shape of the rule set, and every known secret value, masked."""
        if not s:
            return s
        low = s.lower()
        exact = len(low) == len(s)  # lower() can change the length of some non-ASCII text
        for pat, check, hints in _RULES:
            if not exact or any(h in low for h in hints):
                s = pat.sub(partial(self._sub, check=check), s)
                low = s.lower()
        exact = len(low) == len(s)
        spans = _keyword_lines(s, low) if exact else [(0, len(s))]
        if spans:
            parts: list[str] = []
            pos = 0
            for start, end in spans:
                line = s[start:end]
                for pat, check in _LINE_RULES:
                    line = pat.sub(partial(self._sub, check=check), line)
                parts += [s[pos:start], line]
                pos = end
            s = "".join(parts) + s[pos:]
        return self._echoes(s)

    def _sub(self, m: re.Match[str], check: Callable[[re.Match[str]], bool] | None) -> str:
        name = _value_group(m)
        value = m.group(name)
        if not value or not _is_value(value) or (check is not None and not check(m)):
            return m.group(0)
        start, end = m.span(name)
        base = m.start(0)
        whole = m.group(0)
        return whole[: start - base] + self.placeholder(value) + whole[end - base:]

    def _echoes(self, s: str) -> str:
        if not self._known:
            return s
        if self._echo is None:
            alts = "|".join(re.escape(v) for v in sorted(self._known, key=len, reverse=True))
            self._echo = re.compile(rf"(<redacted:\d+>)|(?:{alts})")
        return self._echo.sub(lambda m: m.group(0) if m.group(1) else self.placeholder(m.group(0)), s)

    def argv(self, args: list[Any]) -> list[Any]:
        """A command line (command + args) with secrets masked: every word as text, the word
        after a secret-named flag (``--password X``) and mysql's ``-pX``."""
        mysql = any(isinstance(a, str) and _MYSQL.search(a) for a in args)
        out: list[Any] = []
        mask_next = False
        for a in args:
            if not isinstance(a, str):
                out.append(a)
                mask_next = False
                continue
            if mask_next and not a.startswith("-") and _is_value(a) and not _PLACEHOLDER.search(a):
                out.append(self.placeholder(a))
            elif mysql and a.startswith("-p") and len(a) > 2 and _is_value(a[2:]) and not _PLACEHOLDER.search(a):
                out.append("-p" + self.placeholder(a[2:]))
            else:
                out.append(self.text(a))
            f = _FLAG.match(a)
            mask_next = bool(f and looks_secret(f.group(1)))
        return out

    def data(self, value: Any) -> Any:
        """A copy of JSON-shaped ``value`` with every string masked as text (run records)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self.data(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.data(v) for v in value]
        return value

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
        for ann in _annotation_maps(obj):
            for k, v in list(ann.items()):
                if not isinstance(v, str):
                    continue
                # annotations are free text (tools keep URLs, commands, logs there)
                ann[k] = self._last_applied(v) if k == LAST_APPLIED else self.text(v)
        kind = obj.get("kind")
        if kind == "Event" or ("involvedObject" in obj and "reason" in obj):
            for key in ("message", "note"):
                if isinstance(obj.get(key), str):
                    obj[key] = self.text(obj[key])
            return
        for pod_spec in _pod_specs(obj):
            self._pod_spec(pod_spec)
        status = obj.get("status")
        if isinstance(status, dict):
            # a container's termination message is free text the application wrote (often its last log line)
            for key in ("initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses"):
                for cs in status.get(key) or []:
                    for st in ((cs or {}).get("state") or {}, (cs or {}).get("lastState") or {}):
                        for detail in st.values() if isinstance(st, dict) else []:
                            if isinstance(detail, dict) and isinstance(detail.get("message"), str):
                                detail["message"] = self.text(detail["message"])
            if isinstance(status.get("message"), str):
                status["message"] = self.text(status["message"])
            # a condition's message can quote the application (a PodFailurePolicy rule, a pod's reason)
            conditions = status.get("conditions")
            for cond in conditions if isinstance(conditions, list) else []:
                if isinstance(cond, dict) and isinstance(cond.get("message"), str):
                    cond["message"] = self.text(cond["message"])

    def _last_applied(self, text: str) -> str:
        try:
            data = json.loads(text)
        except ValueError:
            return self.text(text)
        if isinstance(data, dict):
            self._mask_object_in_place(data)
        return json.dumps(data, separators=(",", ":"), sort_keys=True)

    def _pod_spec(self, spec: Obj) -> None:
        for c in _containers(spec):
            for env in c.get("env") or []:
                if not isinstance(env, dict) or not isinstance(env.get("value"), str):
                    continue
                if _PLACEHOLDER.fullmatch(env["value"]):
                    continue  # already masked (an object reached twice, e.g. a YAML alias)
                if looks_secret(str(env.get("name", ""))) and env["value"] != "":
                    env["value"] = self.placeholder(env["value"])
                else:
                    env["value"] = self.text(env["value"])
            cmd = c.get("command") if isinstance(c.get("command"), list) else None
            args = c.get("args") if isinstance(c.get("args"), list) else None
            if cmd is None and args is None:
                continue
            # one command line: a flag at the end of command takes its value from args
            masked = self.argv((cmd or []) + (args or []))
            if cmd is not None:
                c["command"] = masked[: len(cmd)]
            if args is not None:
                c["args"] = masked[len(cmd or []):]


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


def _annotation_maps(obj: Obj) -> list[Obj]:
    """The annotations of the object and of the templates inside it (Job, pod)."""
    maps: list[Obj] = []

    def add(meta: Any) -> None:
        if isinstance(meta, dict) and isinstance(meta.get("annotations"), dict):
            maps.append(meta["annotations"])

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
