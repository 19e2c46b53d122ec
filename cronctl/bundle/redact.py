"""Masking of secret material before anything reaches the bundle. PURE: no I/O, no clock.

What is masked (PRODUCT.md, issue 5 "Safety"):

* literal ``env[].value`` in any pod spec (CronJob template, Job, Pod) whose *name* looks secret
  (TOKEN, PASSWORD, SECRET, KEY, CREDENTIAL, AUTH, ...);
* in every other string of a pod spec's ``env``/``command``/``args``, in log text and in event
  messages: bearer tokens, ``Authorization: Basic ...``, URLs with credentials
  (``scheme://user:pass@host``), JWTs, and ``password=...``-style pairs;
* the ``kubectl.kubernetes.io/last-applied-configuration`` annotation, which repeats the whole
  spec (env values included) as a JSON string.

One :class:`Redactor` is used for a whole bundle so that the same secret value always becomes the
same placeholder (``<redacted:1>``, numbered in order of first appearance): a reader can still see
that two pods used the same token without seeing it. ``valueFrom`` references (secretKeyRef ...)
are names, not secrets, and are kept. Secret objects themselves are never read by cronctl.
"""

from __future__ import annotations

import json
import re
from typing import Any

Obj = dict[str, Any]

#: substrings of an env var name that make its literal value secret (upper-cased comparison)
SECRET_NAME_PARTS = (
    "TOKEN", "PASSWORD", "PASSWD", "PASSPHRASE", "SECRET", "KEY", "CREDENTIAL", "AUTH",
    "PRIVATE", "SESSION", "COOKIE", "SIGNATURE", "CERT",
)
#: whole name components (split on _ - .) that are secret but too short to match as substrings
SECRET_NAME_WORDS = frozenset({"PWD", "PASS", "DSN", "PIN", "SALT", "OTP"})

_SPLIT = re.compile(r"[_\-.]+")

# Each pattern has exactly one group: the secret part, replaced by a placeholder.
_TEXT_PATTERNS: tuple[re.Pattern[str], ...] = (
    # scheme://user:pass@host  -> scheme://<redacted:n>@host
    re.compile(r"\b[A-Za-z][A-Za-z0-9+.\-]*://([^\s/@:'\"<>]+:[^\s/@'\"<>]+)@"),
    # Authorization: Bearer xxx / Basic xxx, or a bare "Bearer xxx"
    re.compile(r"(?i)\b(?:bearer|basic)\s+([A-Za-z0-9\-._~+/]{8,}=*)"),
    # JWT (three base64url parts, the first two starting with eyJ = '{"')
    re.compile(r"\b(eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*)"),
    # password=xyz, api_key: xyz, "token": "xyz", --secret=xyz
    re.compile(
        r"(?i)\b(?:password|passwd|pwd|secret|token|api[_\-]?key|access[_\-]?key|client[_\-]?secret"
        r"|private[_\-]?key)[\"']?\s*[=:]\s*[\"']?([^\s\"',;&]+)"
    ),
)

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
_PLACEHOLDER = re.compile(r"<redacted:\d+>")


def looks_secret(name: str) -> bool:
    """True when an environment variable called ``name`` should not have its literal value shown."""
    upper = name.upper()
    if any(part in upper for part in SECRET_NAME_PARTS):
        return True
    return any(word in SECRET_NAME_WORDS for word in _SPLIT.split(upper))


class Redactor:
    """Maps each distinct secret value to one stable placeholder for the life of the object.

    ``count`` is the number of values masked (occurrences, not distinct values), for the report.
    """

    def __init__(self) -> None:
        self._placeholders: dict[str, str] = {}
        self.count = 0

    def placeholder(self, value: str) -> str:
        """The placeholder for ``value`` (the same value always gets the same one)."""
        self.count += 1
        ph = self._placeholders.get(value)
        if ph is None:
            ph = f"<redacted:{len(self._placeholders) + 1}>"
            self._placeholders[value] = ph
        return ph

    @property
    def distinct(self) -> int:
        """How many distinct values were masked."""
        return len(self._placeholders)

    # -- text ---------------------------------------------------------------------------------

    def text(self, s: str) -> str:
        """``s`` with credentials in URLs, bearer/basic tokens, JWTs and key=value secrets masked."""
        if not s:
            return s
        for pat in _TEXT_PATTERNS:
            s = pat.sub(self._sub_group, s)
        return s

    def _sub_group(self, m: re.Match[str]) -> str:
        value = m.group(1)
        if value.startswith("<redacted:"):
            return m.group(0)
        start, end = m.span(1)
        base = m.start(0)
        whole = m.group(0)
        return whole[: start - base] + self.placeholder(value) + whole[end - base:]

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

    def _last_applied(self, text: str) -> str:
        try:
            data = json.loads(text)
        except ValueError:
            return self.text(text)
        if isinstance(data, dict):
            self._mask_object_in_place(data)
        return json.dumps(data, separators=(",", ":"), sort_keys=True)

    def _pod_spec(self, spec: Obj) -> None:
        for key in ("initContainers", "containers", "ephemeralContainers"):
            for c in spec.get(key) or []:
                if not isinstance(c, dict):
                    continue
                for env in c.get("env") or []:
                    if not isinstance(env, dict) or not isinstance(env.get("value"), str):
                        continue
                    if _PLACEHOLDER.fullmatch(env["value"]):
                        continue  # already masked (an object reached twice, e.g. a YAML alias)
                    if looks_secret(str(env.get("name", ""))) and env["value"] != "":
                        env["value"] = self.placeholder(env["value"])
                    else:
                        env["value"] = self.text(env["value"])
                for field in ("command", "args"):
                    if isinstance(c.get(field), list):
                        c[field] = [self.text(a) if isinstance(a, str) else a for a in c[field]]


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

