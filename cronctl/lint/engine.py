"""Runs every rule over CronJob dicts and returns findings. Pure: ``now`` is a parameter."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Iterable, Sequence

from cronctl.lint.rules import ANN_LINT_IGNORE, RULES, SEVERITIES, Hit, Rule, cj_annotations

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
    """Every finding for one CronJob, most severe first, then by rule id. A rule over a set of
    CronJobs (duplicate work) sees this one alone."""
    return _lint([(cj, source)], now, rules)[0]


def findings_as_data(cj: Obj, now: datetime) -> list[Obj]:
    """:func:`lint_object`'s findings as plain data (rule, name, severity, message, field, fix): what
    the bundle holds. The bundle does not import lint (services are independent): its caller hands
    it this function (``cronctl.bundle.Request.lint``)."""
    return [{"rule": f.rule, "name": f.name, "severity": f.severity, "message": f.message, "field": f.field,
             "fix": f.fix} for f in lint_object(cj, now)]


def lint_objects(objs: Iterable[Obj], now: datetime, *, source: str | None = None) -> tuple[int, list[Finding]]:
    """Lint every CronJob among ``objs`` (other kinds are ignored) together: (CronJobs checked, findings)."""
    return lint_sources([(source, objs)], now)


def lint_sources(sources: Iterable[tuple[str | None, Iterable[Obj]]], now: datetime, *,
                 rules: Iterable[Rule] = RULES) -> tuple[int, list[Finding]]:
    """Lint every CronJob of every ``(source, objects)`` pair (a file, or None for live objects)
    together, so that rules over the set compare CronJobs across files: (CronJobs checked,
    findings), CronJob by CronJob in input order."""
    items = [(o, src) for src, objs in sources for o in objs if o.get("kind") == "CronJob"]
    return len(items), [f for found in _lint(items, now, rules) for f in found]


def _lint(items: Sequence[tuple[Obj, str | None]], now: datetime, rules: Iterable[Rule]) -> list[list[Finding]]:
    """The findings of each CronJob in ``items``: per-object rules on each, rules over the set on
    all of them; an object's lint-ignore annotation drops its own findings of the listed rules."""
    skips = [ignored_rules(cj) for cj, _ in items]
    hits: list[list[tuple[Rule, Hit]]] = [[] for _ in items]
    for rule in rules:
        if rule.check_set is not None:
            for i, hit in rule.check_set([cj for cj, _ in items], now):
                hits[i].append((rule, hit))
        elif rule.check is not None:
            for i, (cj, _) in enumerate(items):
                if rule.id not in skips[i]:
                    hits[i].extend((rule, hit) for hit in rule.check(cj, now))
    out = []
    for (cj, source), skip, found in zip(items, skips, hits):
        meta = cj.get("metadata") if isinstance(cj.get("metadata"), dict) else {}
        assert isinstance(meta, dict)
        name = str(meta.get("name") or "<unnamed>")
        ns = meta.get("namespace") if isinstance(meta.get("namespace"), str) else None
        findings = [Finding(rule.id, rule.name, hit.severity or rule.severity, hit.message, rule.why, rule.fix,
                            hit.field, str(cj.get("kind") or "CronJob"), ns, name, source)
                    for rule, hit in found if rule.id not in skip]
        findings.sort(key=lambda f: (SEVERITIES.index(f.severity), f.rule))
        out.append(findings)
    return out


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
