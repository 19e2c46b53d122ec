"""JSON from an object or a row, decoded with bounded depth and size. PURE: stdlib only.

Anyone who can annotate a CronJob writes JSON that cronctl decodes (the last-applied
configuration, ``cronctl.dev/runs``, a hold's GitOps part), and anyone who can write a shared
ledger writes its JSON columns. The standard library's decoder recurses once per level: a
2,000-deep value (10 KB, which the API server accepts) raised RecursionError, not ValueError,
and stopped ``record``, ``status``, ``lint``, ``history`` and ``bundle`` (issue 39).

:func:`loads` is the one decoder for all of them: it refuses a value deeper than
:data:`MAX_DEPTH`, longer than :data:`MAX_BYTES` or with an integer longer than
:data:`MAX_INT_DIGITS` with :class:`Undecodable` (a ValueError) before the decoder runs, so the
caller's ``except ValueError`` treats it as any garbled value: evidence, shown truncated
(:func:`excerpt`), never a crash. Kubernetes objects nest about 20 deep; the limits are the file
loader's (docs/LIMITS.md).
"""

from __future__ import annotations

import json
import re
from typing import Any

#: nesting of objects and arrays (the file loader's ``MAX_DEPTH``)
MAX_DEPTH = 100
#: characters of one JSON text (an annotation is at most 256 KiB; a stored object a few MiB)
MAX_BYTES = 16 * 1024 * 1024
#: digits of one integer (the file loader's ``MAX_INT_DIGITS``)
MAX_INT_DIGITS = 640
#: characters of a refused value shown as evidence
EXCERPT = 120

_LONG_DIGITS = re.compile(r"\d{%d}" % (MAX_INT_DIGITS + 1))
_LONG_INT = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|\d{%d,}' % (MAX_INT_DIGITS + 1))


class Undecodable(ValueError):
    """A JSON text that is not decoded: garbled, too deep, too large. ``str()`` is one line."""


def _too_deep(value: Any) -> bool:
    """Whether ``value`` nests deeper than :data:`MAX_DEPTH` (a walk with a stack of its own:
    linear, and no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if d > MAX_DEPTH:
            return True
        if isinstance(v, dict):
            stack.extend((x, d + 1) for x in v.values() if isinstance(x, (dict, list)))
        elif isinstance(v, list):
            stack.extend((x, d + 1) for x in v if isinstance(x, (dict, list)))
    return False


def check(text: str | bytes) -> str:
    """``text`` as str when its size is within the bounds, else :class:`Undecodable` saying which."""
    if isinstance(text, (bytes, bytearray, memoryview)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as e:
            raise Undecodable(f"not UTF-8 ({e.reason})") from None
    if not isinstance(text, str):
        raise Undecodable(f"not JSON text (a {type(text).__name__})")
    if len(text) > MAX_BYTES:
        raise Undecodable(f"too large ({len(text):,} characters; the limit is {MAX_BYTES:,})")
    if _LONG_DIGITS.search(text) and any(m.group()[0] != '"' for m in _LONG_INT.finditer(text)):
        raise Undecodable(f"an integer longer than {MAX_INT_DIGITS} digits")
    return text


def bounded(value: Any) -> Any:
    """``value`` (already decoded, e.g. by orjson) when it nests at most :data:`MAX_DEPTH` deep."""
    if isinstance(value, (dict, list)) and _too_deep(value):
        raise Undecodable(f"nested deeper than {MAX_DEPTH} levels")
    return value


def loads(text: str | bytes) -> Any:
    """``text`` decoded, or :class:`Undecodable` (a ValueError, one line) when it is not JSON or
    is outside the bounds. Never RecursionError."""
    s = check(text)
    try:
        value = json.loads(s)
    except RecursionError:  # the decoder recurses once per level
        raise Undecodable(f"nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as e:
        raise Undecodable(f"not JSON ({str(e).splitlines()[0] if str(e) else type(e).__name__})") from None
    if s.count("[") + s.count("{") > MAX_DEPTH:
        bounded(value)
    return value


def excerpt(value: object, limit: int = EXCERPT) -> str:
    """A refused value as evidence: its first ``limit`` characters and how many more there were."""
    s = value if isinstance(value, str) else repr(value)
    return s if len(s) <= limit else f"{s[:limit]}... ({len(s) - limit:,} more characters)"
