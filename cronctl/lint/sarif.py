"""Lint findings as a SARIF 2.1.0 log (OASIS standard; what GitHub code scanning and most CI
dashboards read). Pure: the caller passes the findings and, for files, their text (for lines)."""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping
from urllib.parse import quote

from cronctl.lint.engine import Finding
from cronctl.lint.rules import RULES, Rule

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def object_line(text: str, name: str) -> int | None:
    """1-based line of ``name: <name>`` (YAML or JSON) in a manifest's text, the best anchor a
    multi-document file offers for one object; None when not found."""
    pat = re.compile(r'^\s*"?name"?\s*:\s*["\']?' + re.escape(name) + r'["\']?\s*,?\s*$')
    for i, line in enumerate(text.splitlines(), start=1):
        if pat.match(line):
            return i
    return None


def _rule_descriptor(rule: Rule) -> dict[str, Any]:
    return {
        "id": rule.id,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.why},
        "help": {"text": f"{rule.why} Fix: {rule.fix}"},
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {"tags": ["kubernetes", "cronjob"]},
    }


def _result(f: Finding, index: int, texts: Mapping[str, str]) -> dict[str, Any]:
    logical = {
        "name": f.object_name,
        "fullyQualifiedName": f"{f.namespace or '-'}/cronjobs/{f.object_name}#{f.field}",
        "kind": "object",
    }
    location: dict[str, Any] = {"logicalLocations": [logical]}
    if f.source and f.source != "-":
        phys: dict[str, Any] = {"artifactLocation": {"uri": quote(f.source)}}
        line = object_line(texts.get(f.source, ""), f.object_name)
        if line is not None:
            phys["region"] = {"startLine": line}
        location["physicalLocation"] = phys
    return {
        "ruleId": f.rule,
        "ruleIndex": index,
        "level": LEVELS[f.severity],
        "message": {"text": f"{f.ref}: {f.message}. Fix: {f.fix}"},
        "locations": [location],
        "properties": {"field": f.field, "namespace": f.namespace, "object": f.object_name, "why": f.why},
    }


def to_sarif(findings: Iterable[Finding], *, tool_version: str,
             texts: Mapping[str, str] | None = None, rules: Iterable[Rule] = RULES) -> dict[str, Any]:
    """A SARIF 2.1.0 log with one run: every rule as a reportingDescriptor, every finding as a result."""
    rules = list(rules)
    index = {r.id: i for i, r in enumerate(rules)}
    texts = texts or {}
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "cronctl",
                "version": tool_version,
                "rules": [_rule_descriptor(r) for r in rules],
            }},
            "columnKind": "unicodeCodePoints",
            "results": [_result(f, index[f.rule], texts) for f in findings],
        }],
    }
