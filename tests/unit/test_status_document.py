"""The ``-o json`` documents of ``cronctl status CRONJOB`` and of the overview (``status -n NS``,
``status -A``), byte for byte, against golden files.

Each scenario of tests/status_scenarios.py (zoned Forbid with done, failed and running Jobs;
unzoned without a policy; held by a cronctl run record with its manual Job; paused past its until;
finished runs kept on the CronJob; a stale holder; a pile-up of 22 overlapping Jobs; suspended by
someone else; a CRON_TZ= prefix; a run record with escapes, a newline and a password) is run through
the command line in this process, the fake cluster handed to it as ``cronctl.kube.connect``, at a
fixed now (:func:`status_scenarios.render`), and its stdout compared with
tests/golden/status/<case>.<view>.json.

The goldens were made from the code before status returned typed results (commit 3a1653c; see
tests/golden/status/regenerate.py), so this holds the refactor (d458dbf) to what users got before
it, not to itself. One golden differs from that code on purpose: see
:func:`test_a_zone_prefix_s_golden_has_the_prediction_in_that_zone`. ``CRONCTL_REGEN_GOLDEN=1``
rewrites the goldens from the code under test, as for the other goldens: review the diff by hand.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import status_scenarios as S

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "status"
REGEN = os.environ.get("CRONCTL_REGEN_GOLDEN") == "1"
CASES = [(case, view) for case in S.by_name() for view in S.VIEWS]


@pytest.mark.parametrize("case, view", CASES, ids=[f"{c}.{v}" for c, v in CASES])
def test_the_document_matches_its_golden_file(case: str, view: str) -> None:
    code, out, err = S.render(S.by_name()[case], view)
    assert (code, err) == (0, "")
    expected = GOLDEN / S.golden_name(case, view)
    if REGEN:
        expected.write_text(out)
    assert expected.exists(), f"no golden file {expected.name}: run tests/golden/status/regenerate.py and review it"
    assert out == expected.read_text()


def test_every_golden_file_has_its_scenario() -> None:
    assert sorted(p.name for p in GOLDEN.glob("*.json")) == sorted(S.golden_name(c, v) for c, v in CASES)


def test_a_zone_prefix_s_golden_has_the_prediction_in_that_zone() -> None:
    # Made from today's code, not from 3a1653c: 1b023fd (a bug fix after it) shows a schedule with a
    # CRON_TZ=/TZ= prefix in that zone, the predictions' words too. Before it this line read
    # "a Job for 2026-12-02T11:00:00Z is due now (cj-29936820)", UTC alone; every other byte of the
    # three documents is the old code's (time_zone stays spec.timeZone: null)
    code, out, _ = S.render(S.by_name()["cron-tz-prefix"], "status")
    for doc in (json.loads(out), json.loads((GOLDEN / S.golden_name("cron-tz-prefix", "status")).read_text())):
        assert doc["time_zone"] is None
        assert doc["controller_next"]["text"] == \
            "a Job for 2026-12-02T16:30:00+05:30 (2026-12-02T11:00:00Z) is due now (cj-29936820)"


@pytest.mark.parametrize("view", list(S.VIEWS))
def test_a_run_record_s_password_is_masked_and_its_escapes_stay_json_escapes(view: str) -> None:
    code, out, _ = S.render(S.by_name()["hostile-record"], view)
    assert code == 0 and "Hunter-22x" not in out and "Hunter-22x" not in str(json.loads(out))
    assert "\x1b" not in out and "\r" not in out and "\u202e" not in out  # written as \u001b, \r, \u202e
    if view == "status":
        rec = json.loads(out)["record"]
        assert rec["operator"] == S.HOSTILE_OPERATOR.replace("Hunter-22x", "<redacted:1>")
        assert rec["reason"] == S.HOSTILE_REASON.replace("Hunter-22x", "<redacted:1>")
