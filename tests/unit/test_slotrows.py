"""The history's TypedDicts (cronctl/slotrows.py) and the published schema of ``history -o json``
(cronctl/data/history.schema.json) name the same keys, the same required ones, and the same
verdicts: mypy checks the code against the types, this holds the types to the contract."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, get_args

import pytest

from cronctl import history, slotrows

SCHEMA = json.loads((Path(slotrows.__file__).parent / "data" / "history.schema.json").read_text())


def _object(node: dict[str, Any]) -> dict[str, Any]:
    """The object branch of a schema node (``{"anyOf": [null, object]}`` or an array's items)."""
    if node.get("type") == "array":
        return _object(node["items"])
    for branch in node.get("anyOf", []):
        if branch.get("type") == "object":
            return branch
    assert node.get("type") == "object", node
    return node


_CRONJOB = _object(SCHEMA["properties"]["cronjobs"])
_SLOT = _object(_CRONJOB["properties"]["slots"])
CASES = {
    "History": _CRONJOB,
    "SlotRow": _SLOT,
    "JobDetail": _object(_SLOT["properties"]["job_details"]),
    "ManualRun": _object(_CRONJOB["properties"]["manual_runs"]),
    "Window": _object(_CRONJOB["properties"]["window"]),
    "ControllerNow": _object(_CRONJOB["properties"]["controller_now"]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_typed_dict_names_the_keys_of_its_schema_object(name: str) -> None:
    typed, node = getattr(slotrows, name), CASES[name]
    assert node.get("additionalProperties") is False  # the schema is closed: its keys are all of them
    assert set(typed.__required_keys__) == set(node["required"])
    assert set(typed.__required_keys__) | set(typed.__optional_keys__) == set(node["properties"])


def test_the_verdicts_are_one_list() -> None:
    enum = _SLOT["properties"]["verdict"]["enum"]
    assert list(get_args(slotrows.Verdict)) == list(history.VERDICTS) == enum
    assert set(_CRONJOB["properties"]["counts"]["required"]) == set(enum)


def test_each_family_of_verdicts_is_drawn_from_the_one_list_and_each_map_covers_it() -> None:
    """The families (cronctl.slotrows: LOST, DUPLICATE, MADE, OPEN) hold only verdicts of the list and
    do not overlap where they must not; every map keyed by verdict (the report's colours and words,
    the fleet page's severity order, the terminal's styles) has every verdict, so a new verdict
    cannot be drawn without a colour or counted nowhere."""
    from cronctl.bundle import fleet, render
    from cronctl.cli import history as cli_history

    every = set(slotrows.VERDICTS)
    for family in (slotrows.LOST, slotrows.DUPLICATE, slotrows.MADE, slotrows.OPEN):
        assert family and family <= every
    assert slotrows.DUPLICATE <= slotrows.MADE
    assert not (slotrows.LOST & slotrows.MADE) and not (slotrows.LOST & slotrows.OPEN)
    assert not (slotrows.MADE & slotrows.OPEN)
    for name, keyed in (("render.COLOURS", render.COLOURS), ("render.VERDICT_WORDS", render.VERDICT_WORDS),
                        ("fleet.SEVERITY", fleet.SEVERITY), ("cli.history._STYLE", cli_history._STYLE)):
        assert every <= set(keyed), f"{name} lacks {sorted(every - set(keyed))}"


def test_the_outcomes_are_one_list() -> None:
    enum = _SLOT["properties"]["outcome"]["enum"]
    assert list(get_args(slotrows.Outcome)) == list(slotrows.OUTCOMES) == enum
    assert set(_CRONJOB["properties"]["outcome_counts"]["required"]) == set(enum)


@pytest.mark.parametrize("ends, expected", [
    ([], ("none", None)),
    ([(None, None)], ("unknown", None)),
    ([("running", None)], ("running", None)),
    ([("Complete", None)], ("succeeded", None)),
    ([("Failed", "BackoffLimitExceeded")], ("failed", "BackoffLimitExceeded")),
    ([("Failed", "BackoffLimitExceeded"), ("Failed", "DeadlineExceeded")], ("failed", "DeadlineExceeded")),
    # a failed attempt run again with --retry, or the failed one of a duplicate: the work was done
    ([("Failed", "BackoffLimitExceeded"), ("Complete", None)], ("succeeded", None)),
    ([("Complete", None), ("running", None)], ("running", None)),
])
def test_a_slot_s_outcome_comes_from_the_jobs_that_stand_for_it(
        ends: list[tuple[str | None, str | None]], expected: tuple[str, str | None]) -> None:
    details: Any = [{"outcome": o, "failure_reason": r} for o, r in ends]
    assert slotrows.slot_outcome(details) == expected


def test_the_event_record_names_the_keys_of_the_bundles_events() -> None:
    from cronctl.events import EventRecord

    bundle = json.loads((Path(slotrows.__file__).parent / "data" / "bundle.schema.json").read_text())
    node = _object(bundle["properties"]["cronjobs"])["properties"]["events"]["items"]
    assert node.get("additionalProperties") is False
    assert set(EventRecord.__required_keys__) == set(node["properties"])
    assert set(node.get("required", node["properties"])) <= set(EventRecord.__required_keys__)
