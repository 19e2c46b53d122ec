"""What ``cronctl pause``, ``resume`` and ``restore`` print, byte for byte, against golden files:
the exit code, stderr (the steps, a run record's rows, the refusal) and stdout (``-o json``,
``-o yaml`` or the message) of each case of tests/write_scenarios.py, run through the command line
in this process over the fake cluster at a fixed now (:func:`write_scenarios.render`).

stdout is compared byte for byte; stderr word for word (its tables wrap at the console's width).
The goldens were made from cf859c2, the code before these services returned typed results and
their documents were made in cli/ (tests/golden/write/regenerate.py), so this holds that refactor
to what users got before it. ``CRONCTL_REGEN_GOLDEN=1`` rewrites them from the code under test:
review the diff by hand.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import write_scenarios as W

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "write"
REGEN = os.environ.get("CRONCTL_REGEN_GOLDEN") == "1"
CASES = list(W.by_name())


def _parts(text: str) -> tuple[str, str, str]:
    """(command line and exit code, stderr with its white space folded, stdout as it is). stderr's
    tables (a run record's rows) are laid out to the console's width, which $COLUMNS or the terminal
    pytest runs in decides; the words and their order are the same at any width."""
    head, rest = text.split("--- stderr\n", 1)
    err, out = rest.split("--- stdout\n", 1)
    return head, " ".join(err.split()), out


@pytest.mark.parametrize("case", CASES)
def test_the_output_matches_its_golden_file(case: str) -> None:
    got = W.render(W.by_name()[case])
    expected = GOLDEN / f"{case}.txt"
    if REGEN:
        expected.write_text(got)
    assert expected.exists(), f"no golden file {expected.name}: run tests/golden/write/regenerate.py and review it"
    assert _parts(got) == _parts(expected.read_text())


def test_every_golden_file_has_its_case() -> None:
    assert sorted(p.name for p in GOLDEN.glob("*.txt")) == sorted(f"{c}.txt" for c in CASES)


def test_a_restored_record_s_password_is_masked_and_its_escapes_stay_json_escapes() -> None:
    out = W.render(W.by_name()["restore.json"]).split("--- stdout\n", 1)[1]
    doc = json.loads(out)
    assert "Hunter-22x" not in out and doc["record"]["operator"].endswith("password=<redacted:1>")
    assert "\\u001b[2J" in out and "\x1b" not in out
