"""cronctl.versions: which controller behaviour applies to which server version."""

from __future__ import annotations

import pytest

from builders import cronjob, job, slotname
from cronctl.versions import behaviour_for, parse_version


@pytest.mark.parametrize("git, want", [
    ("v1.36.3", (1, 36, 3)), ("v1.37.2-eks-4a1b", (1, 37, 2)), ("1.34", (1, 34, 0)), ("v1.35.4+k3s1", (1, 35, 4)),
    ("garbage", None), ("", None),
])
def test_parse_version(git: str, want: tuple[int, int, int] | None) -> None:
    assert parse_version(git) == want


@pytest.mark.parametrize("git, adopts", [
    ("v1.34.4", False), ("v1.35.4", False), ("v1.36.3", False), ("v1.37.2", True), ("v1.38.0", True),
    ("v1.20.0", None), ("unknown", None), (None, None),
])
def test_adoption_of_an_existing_slot_job_by_version(git: str | None, adopts: bool | None) -> None:
    b = behaviour_for(git)
    assert b.adopts_slot_job is adopts
    text = b.adoption_text("orders-29937148", "2026-12-02T16:28:00Z")
    assert "orders-29937148" in text
    if adopts:
        assert "adopts it" in text and "#136918" not in text
    else:
        assert "#136918" in text and "UnexpectedJob" in text
    if adopts is None:
        assert "from 1.37" in text  # both outcomes said for a version cronctl does not know


@pytest.mark.parametrize("git, adopts", [("v1.36.3", False), ("v1.37.2", True), (None, None)])
def test_the_restore_prediction_names_an_existing_slot_job_and_the_version_outcome(
        git: str | None, adopts: bool | None) -> None:
    from datetime import datetime, timezone

    from cronctl.procedure.predict import predict

    now = datetime(2026, 12, 2, 16, 5, 20, tzinfo=timezone.utc)
    slot_job = slotname(datetime(2026, 12, 2, 16, 5, tzinfo=timezone.utc), "orders")
    jobs = [job(slot_job, cj_uid=None)]  # named for the slot, owned by nothing
    cj = cronjob(name="orders", created="2026-12-02T16:00:30Z", policy="Forbid", suspend=True)  # every minute
    p = predict(cj, now, suspended=False, jobs=jobs, server_version=git)  # type: ignore[arg-type]
    assert p.decision == "create" and p.job_name == slot_job and p.existing_job == slot_job
    assert p.adopts is adopts and p.as_dict()["adopts_existing_job"] is adopts
    assert slot_job in p.text and "will start right away" not in p.text
    # without such a Job the usual catch-up is predicted, whatever the version
    q = predict(cj, now, suspended=False, jobs=[], server_version=git)  # type: ignore[arg-type]
    assert q.existing_job is None and "will start right away" in q.text
