"""Runs every rule over CronJob dicts and returns findings. Pure: ``now`` is a parameter."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Iterable

from cronctl.lint.rules import ANN_LINT_IGNORE, RULES, SEVERITIES, Rule, cj_annotations

Obj = dict[str, Any]


@dataclass(frozen=True)
class Finding:
    rule: str  # stable id, e.g. CJ003
    name: str  # stable slug, e.g. starting-deadline-zero
    severity: str  # error | warning | info
    message: str  # names the field and its value
    why: str
    fix: str
    field: str  # dotted path of the field at fault, e.g. spec.startingDeadlineSeconds
    kind: str
    namespace: str | None
    object_name: str
    source: str | None  # the file it came from; None for a live object

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.object_name}" if self.namespace else self.object_name

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule, "name": self.name, "severity": self.severity, "message": self.message,
            "why": self.why, "fix": self.fix, "field": self.field,
            "object": {"kind": self.kind, "namespace": self.namespace, "name": self.object_name,
                       "source": self.source},
        }


def ignored_rules(cj: Obj) -> set[str]:
    """Rule ids listed in the ``cronctl.io/lint-ignore`` annotation (comma or space separated)."""
    raw = cj_annotations(cj).get(ANN_LINT_IGNORE, "")
    return {p.strip().upper() for p in raw.replace(",", " ").split() if p.strip()}


def lint_object(cj: Obj, now: datetime, *, source: str | None = None,
                rules: Iterable[Rule] = RULES) -> list[Finding]:
    """Every finding for one CronJob, most severe first, then by rule id."""
    meta = cj.get("metadata") if isinstance(cj.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    name = str(meta.get("name") or "<unnamed>")
    ns = meta.get("namespace") if isinstance(meta.get("namespace"), str) else None
    skip = ignored_rules(cj)
    out: list[Finding] = []
    for rule in rules:
        if rule.id in skip:
            continue
        for hit in rule.check(cj, now):
            out.append(Finding(rule.id, rule.name, hit.severity or rule.severity, hit.message, rule.why, rule.fix,
                               hit.field, str(cj.get("kind") or "CronJob"), ns, name, source))
    out.sort(key=lambda f: (SEVERITIES.index(f.severity), f.rule))
    return out


def lint_objects(objs: Iterable[Obj], now: datetime, *, source: str | None = None) -> tuple[int, list[Finding]]:
    """Lint every CronJob among ``objs`` (other kinds are ignored): (CronJobs checked, findings)."""
    count = 0
    findings: list[Finding] = []
    for obj in objs:
        if obj.get("kind") != "CronJob":
            continue
        count += 1
        findings.extend(lint_object(obj, now, source=source))
    return count, findings


def summarize(findings: Iterable[Finding]) -> dict[str, int]:
    counts = {s: 0 for s in SEVERITIES}
    for f in findings:
        counts[f.severity] += 1
    return counts


def fails(findings: Iterable[Finding], fail_on: str) -> bool:
    """True when a finding is at or above ``fail_on`` (error > warning > info; ``none`` never fails)."""
    if fail_on == "none":
        return False
    limit = SEVERITIES.index(fail_on)
    return any(SEVERITIES.index(f.severity) <= limit for f in findings)
