"""A fast YAML writer for JSON-shaped data (Kubernetes objects). PURE.

PyYAML's representer is pure Python even with libyaml and took most of a 2,000-Job bundle's
time. Kubernetes objects only hold dicts, lists, strings, numbers, booleans and null, so a small
block-style emitter does: plain scalars where that is unambiguous, JSON double-quoted strings
(valid YAML double-quoted scalars) everywhere else. The output reads like ``kubectl get -o yaml``
(block mappings, sequences not indented under their key) and loads back with
``yaml.safe_load`` to the same data (tests/unit/test_bundle_yamlout.py checks the round trip).
"""

from __future__ import annotations

import json
import re
from typing import Any

# Plain (unquoted) only for text that YAML 1.1 and 1.2 both read back as this same string: starts
# with a letter, '/' or '_'; then letters, digits and _ . / @ + = - , spaces (never two in a row,
# never ' #' or trailing) and ':' not followed by a space or the end.
_PLAIN_CHARS = re.compile(r"[A-Za-z_/][A-Za-z0-9_./@+=,\- :]*")


def _plain(s: str) -> bool:
    """Whether ``s`` may stand plain: one scan of a character class and a few substring tests, linear
    with no backtracking state (the old single pattern of alternatives kept ~125 bytes per character:
    a 16 MB string took 1.98 GB; issue 39)."""
    return (_PLAIN_CHARS.fullmatch(s) is not None and "  " not in s and " #" not in s and ": " not in s
            and not s.endswith((" ", ":")))
# words YAML 1.1 resolves to booleans, null or special floats
_RESERVED = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null", "nan", "inf"})


_MEMO: dict[str, str] = {}  # keys and common values repeat thousands of times in a List


def scalar(v: Any) -> str:
    """One scalar as YAML text."""
    if isinstance(v, str):
        r = _MEMO.get(v)
        if r is None:
            r = _string(v)
            if len(_MEMO) < 100_000:
                _MEMO[v] = r
        return r
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v != v:
            return ".nan"
        if v in (float("inf"), float("-inf")):
            return ".inf" if v > 0 else "-.inf"
        return json.dumps(v)
    return _string(str(v))


def _string(s: str) -> str:
    if _plain(s) and s.lower() not in _RESERVED:
        return s
    # JSON escapes are YAML double-quoted escapes; readable non-ASCII text stays as it is, but
    # every non-printable character is escaped (YAML treats e.g. U+0085 and U+2028 as line breaks)
    q = json.dumps(s, ensure_ascii=False)
    if q.isprintable():
        return q
    # \u/\U escapes for the rest (YAML has \U; JSON's surrogate pairs would not read back)
    return "".join(c if c.isprintable() else (f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}")
                   for c in q)


def dump(data: Any) -> str:
    """``data`` (a dict or list of JSON-shaped values) as a block-style YAML document."""
    out: list[str] = []
    _node(data, 0, out)
    return "".join(out)


def _node(v: Any, ind: int, out: list[str]) -> None:
    pad = " " * ind
    if isinstance(v, dict):
        if not v:
            out.append(pad + "{}\n")
            return
        for k, x in v.items():
            key = scalar(k)
            if isinstance(x, dict) and x:
                out.append(f"{pad}{key}:\n")
                _node(x, ind + 2, out)
            elif isinstance(x, list) and x:
                out.append(f"{pad}{key}:\n")
                _node(x, ind, out)  # kubectl/PyYAML style: "- " at the key's indentation
            else:
                out.append(f"{pad}{key}: {_inline(x)}\n")
    elif isinstance(v, list):
        if not v:
            out.append(pad + "[]\n")
            return
        for x in v:
            if isinstance(x, dict) and x:
                sub: list[str] = []
                _node(x, ind + 2, sub)
                first = sub[0]
                out.append(f"{pad}- {first[ind + 2:]}")
                out.extend(sub[1:])
            elif isinstance(x, list) and x:
                sub = []
                _node(x, ind + 2, sub)
                out.append(f"{pad}- {sub[0][ind + 2:]}")
                out.extend(sub[1:])
            else:
                out.append(f"{pad}- {_inline(x)}\n")
    else:
        out.append(pad + _inline(v) + "\n")


def _inline(x: Any) -> str:
    if isinstance(x, dict):
        return "{}"
    if isinstance(x, list):
        return "[]"
    return scalar(x)
