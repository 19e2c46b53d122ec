"""cronctl.versions: which controller behaviour applies to which server version."""

from __future__ import annotations

import pytest

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
