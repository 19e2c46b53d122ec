"""Whose Jobs the controller's UnexpectedJob warnings are about (cronctl.events.unexpected_jobs),
and what the bundle says of them: cronctl's own manual Jobs draw the warning at every sync while
they run and are expected; a Job made by hand outside cronctl is what an incident looks for."""

from __future__ import annotations

import json
from datetime import timedelta

from builders import T, cronjob, event, job, unexpected_job
from cronctl.bundle.analyse import Options, analyse_cronjob

WARNED = (T(10, 6), T(10, 8))  # first and last time the controller warned about a Job


def test_each_warned_job_is_attributed_from_the_evidence_and_only_a_hand_made_one_gets_a_note() -> None:
    runs = {"cronctl.dev/runs": json.dumps([{"run_id": "r0", "job_name": "cj-old-manual"}])}
    cj = cronjob("*/5 * * * *", policy="Forbid", created=T(10, 0), last=T(10, 5), annotations=runs)
    jobs = [
        job("cj-manual", slot=None, created=T(10, 6), manual=True, annotations={"cronctl.dev/run-id": "r1"}),
        job("cj-fix", slot=None, created=T(10, 6), manual=True),  # kubectl create job --from
        job("cj-29937000", slot=T(10, 5), created=T(10, 5, 1)),  # the controller's, forgotten
        job("cj-script", slot=None, created=T(10, 6)),  # a script's copy of the template: no mark at all
    ]
    events = [unexpected_job("cj-manual", *WARNED, count=4), unexpected_job("cj-fix", *WARNED, count=3),
              unexpected_job("cj-29937000", *WARNED, count=1),
              unexpected_job("cj-old-manual", *WARNED, count=2),  # gone; cronctl.dev/runs names it
              unexpected_job("cj-script", *WARNED, count=1),
              unexpected_job("cj-gone", *WARNED, count=5),  # gone; cronctl's own event names it
              event("CronctlJobCreated", "cronctl run r2 of alice: created Job cj-gone", *WARNED, etype="Warning")]
    a = analyse_cronjob(cj, jobs, [], events, Options(now=T(10, 9)))
    made_by = {u["job"]: (u["made_by"], u["events"]) for u in a["unexpected_jobs"]}
    assert made_by == {"cj-manual": ("cronctl", 4), "cj-fix": ("unknown", 3), "cj-29937000": ("controller", 1),
                       "cj-old-manual": ("cronctl", 2), "cj-gone": ("cronctl", 5), "cj-script": ("unknown", 1)}
    notes = sorted(n for n in a["notes"] if "UnexpectedJob" in n)
    assert len(notes) == 2 and notes[0].startswith("Job cj-fix was not made by the controller"), notes
    assert notes[1].startswith("Job cj-script was not made by the controller"), notes
    assert a["event_counts"]["UnexpectedJob"] == 16


def test_the_bundle_summary_counts_only_the_warnings_about_jobs_made_by_hand_outside_cronctl() -> None:
    from cronctl.bundle.assemble import _summary

    cj = cronjob("*/5 * * * *", policy="Forbid", created=T(10, 0), last=T(10, 5))
    jobs = [job("cj-manual", slot=None, created=T(10, 6), manual=True, annotations={"cronctl.dev/run-id": "r1"}),
            job("cj-fix", slot=None, created=T(10, 6) + timedelta(seconds=30), manual=True)]
    events = [unexpected_job("cj-manual", *WARNED, count=4), unexpected_job("cj-fix", *WARNED, count=3)]
    a = analyse_cronjob(cj, jobs, [], events, Options(now=T(10, 9)))
    s = _summary(a)
    assert (s["unexpected_job_events"], s["unexpected_job_events_by_hand"]) == (7, 3)
