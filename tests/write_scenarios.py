"""The runs of ``cronctl pause``, ``resume`` and ``restore`` whose output is kept as golden files
(tests/golden/write/, compared by tests/unit/test_write_documents.py, written by
tests/golden/write/regenerate.py): each case names a CronJob of tests/status_scenarios.py (or one
of its own) and the command line, run in this process over the fake of our Cluster boundary at
status_scenarios' fixed now and host (:func:`status_scenarios.environment`, :func:`status_scenarios._world`).

Like status_scenarios, this module imports no cronctl code at its top: the generator runs it
against whichever cronctl is importable (an older commit's, to make the goldens from it).
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from builders import T, cronjob, z

import status_scenarios as S

PAUSE = ["--reason", "warehouse migration (CHG-1234)", "--until", "2026-12-03T00:00:00Z", "--yes"]


@dataclass(frozen=True)
class Case:
    name: str
    scenario: str   # a scenario of status_scenarios, or LEFTOVER
    argv: tuple[str, ...]


#: not suspended, but a pause record is left on it (un-suspended with kubectl, or a GitOps revert)
LEFTOVER = "leftover-pause"
#: managed by Flux, whose kustomize-controller applies spec.suspend: a pause annotates it too
FLUX = "flux"


def _leftover() -> S.Scenario:
    return S.Scenario(LEFTOVER, "not suspended, with a pause record left behind",
                      cronjob("0 * * * *", last=T(11, 0), resource_version="3",
                              annotations={"cronctl.dev/paused-by": "bob", "cronctl.dev/paused-at": z(T(8, 0)),
                                           "cronctl.dev/pause-reason": "db upgrade"}))


def _flux() -> S.Scenario:
    applied = [{"manager": "kustomize-controller", "operation": "Apply", "time": z(T(9, 0)),
                "fieldsV1": {"f:spec": {"f:suspend": {}}}}]
    return S.Scenario(FLUX, "applied by Flux, spec.suspend in its manifest",
                      cronjob("0 * * * *", last=T(11, 0), resource_version="5", managed=applied,
                              labels={"kustomize.toolkit.fluxcd.io/name": "apps",
                                      "kustomize.toolkit.fluxcd.io/namespace": "flux-system"}))


def _cases() -> list[Case]:
    cases: list[Case] = []
    for fmt in ("json", "yaml", "text"):
        tail = ("-o", fmt) if fmt != "text" else ()
        cases += [
            Case(f"pause.{fmt}", "unzoned-no-policy", ("pause", "cj", "-n", "ns", *PAUSE, *tail)),
            Case(f"resume.{fmt}", "paused", ("resume", "cj", "-n", "ns", "--yes", *tail)),
            Case(f"restore.{fmt}", "hostile-record", ("restore", "cj", "-n", "ns", "--yes", *tail)),
        ]
    return cases + [
        Case("pause-flux.json", FLUX, ("pause", "cj", "-n", "ns", *PAUSE, "-o", "json")),
        Case("pause-flux-refused.json", FLUX, ("pause", "cj", "-n", "ns", *PAUSE, "--gitops", "refuse", "-o", "json")),
        Case("pause-already-suspended.json", "suspended-by-someone", ("pause", "cj", "-n", "ns", *PAUSE, "-o", "json")),
        Case("pause-already-paused.json", "paused", ("pause", "cj", "-n", "ns", *PAUSE, "-o", "json")),
        Case("pause-held.json", "held-by-run", ("pause", "cj", "-n", "ns", *PAUSE, "-o", "json")),
        Case("resume-not-suspended.json", "unzoned-no-policy", ("resume", "cj", "-n", "ns", "--yes", "-o", "json")),
        Case("resume-leftover.json", LEFTOVER, ("resume", "cj", "-n", "ns", "--yes", "-o", "json")),
        Case("resume-leftover.text", LEFTOVER, ("resume", "cj", "-n", "ns", "--yes")),
        Case("resume-no-pause.json", "suspended-by-someone", ("resume", "cj", "-n", "ns", "--yes", "-o", "json")),
        Case("resume-held.json", "held-by-run", ("resume", "cj", "-n", "ns", "--yes", "-o", "json")),
        Case("restore-forced.json", "stale-holder", ("restore", "cj", "-n", "ns", "--force", "--yes", "-o", "json")),
        Case("restore-stale.json", "stale-holder", ("restore", "cj", "-n", "ns", "--yes", "-o", "json")),
        Case("restore-nothing.json", "unzoned-no-policy", ("restore", "cj", "-n", "ns", "--yes", "-o", "json")),
        Case("restore-nothing.text", "unzoned-no-policy", ("restore", "cj", "-n", "ns", "--yes")),
        Case("restore-all-nothing.json", "unzoned-no-policy",
             ("restore", "cj", "-n", "ns", "--catch-up", "all", "--yes", "-o", "json")),
        Case("restore-no-record.json", "paused", ("restore", "cj", "-n", "ns", "--yes", "-o", "json")),
        Case("restore-running-child.json", "held-by-run", ("restore", "cj", "-n", "ns", "--yes", "-o", "json")),
    ]


def by_name() -> dict[str, Case]:
    return {c.name: c for c in _cases()}


def render(case: Case) -> str:
    """The run's exit code, stderr and stdout, as one text (what the golden file holds)."""
    from cronctl.cli import main

    sc = {LEFTOVER: _leftover, FLUX: _flux}.get(case.scenario, lambda: S.by_name()[case.scenario])()
    sc.cronjob["metadata"].setdefault("resourceVersion", "1")  # every write is guarded by it
    out, err = io.StringIO(), io.StringIO()
    with S._world(sc):  # the fake cluster as kube.connect, this host's name; the fixed clock is handed in
        code = main(list(case.argv), stdout=out, stderr=err, environment=S.environment())
    return f"$ cronctl {' '.join(case.argv)}\nexit {code}\n--- stderr\n{err.getvalue()}--- stdout\n{out.getvalue()}"
