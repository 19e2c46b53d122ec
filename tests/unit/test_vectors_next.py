"""Every line of next-sample.jsonl (computed by the real robfig/cron v3.0.1 with tzdata 2025b)
is one case: the parse must succeed or fail as upstream did, and 8 successive ``Next`` calls
must give upstream's instants (``null`` = Go's zero time = no run within 5 years)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from robfig_oracle import robfig_next

from cronctl.errors import ScheduleError
from cronctl.schedule import parse
from cronctl.schedule.parse import CronParseError
from cronctl.timeutil import parse_rfc3339, rfc3339_z

VECTORS = Path(__file__).resolve().parents[1] / "data" / "vectors" / "next-sample.jsonl"
LINES: list[dict[str, Any]] = [json.loads(x) for x in VECTORS.read_text().splitlines() if x.strip()]


def _id(i: int, case: dict[str, Any]) -> str:
    return f"{i:03d}-{case['group']}-{case['expr']!r}-{case['tz']}"


CASES = [pytest.param(c, id=_id(i, c)) for i, c in enumerate(LINES)]
VALID = [pytest.param(c, id=_id(i, c)) for i, c in enumerate(LINES) if not c.get("error")]
SPEC = [pytest.param(c, id=_id(i, c)) for i, c in enumerate(LINES)
        if not c.get("error") and c.get("kind") != "every"]
ZONED = [pytest.param(c, id=_id(i, c)) for i, c in enumerate(LINES)
         if not c.get("error") and c["tz"] is not None and c.get("next_local")]
INVALID = [pytest.param(c, id=_id(i, c)) for i, c in enumerate(LINES) if c.get("error")]


def test_the_vector_file_is_complete() -> None:
    assert len(LINES) == 386
    assert {c["group"] for c in LINES} >= {"syntax", "dst", "dst-edge", "dst-midnight", "invalid"}


@pytest.mark.parametrize("case", VALID)
def test_next_walk_matches_upstream(case: dict[str, Any]) -> None:
    sched = parse(case["expr"], case["tz"])
    got: list[str | None] = []
    t: datetime | None = parse_rfc3339(case["start"])
    for _ in case["next"]:
        t = None if t is None else sched.next_after(t)
        got.append(None if t is None else rfc3339_z(t))
    assert got == case["next"]


@pytest.mark.parametrize("case", SPEC)
def test_the_spec_go_oracle_matches_upstream_too(case: dict[str, Any]) -> None:
    sched = parse(case["expr"], case["tz"])
    u: int | None = int(parse_rfc3339(case["start"]).timestamp() // 1)
    got: list[str | None] = []
    for _ in case["next"]:
        u = None if u is None else robfig_next(sched._walker, u)
        got.append(None if u is None else rfc3339_z(datetime.fromtimestamp(u, tz=parse_rfc3339(case["start"]).tzinfo)))
    assert got == case["next"]


@pytest.mark.parametrize("case", ZONED)
def test_local_wall_times_and_weekdays_match_upstream(case: dict[str, Any]) -> None:
    from zoneinfo import ZoneInfo

    zone = ZoneInfo(case["tz"])
    sched = parse(case["expr"], case["tz"])
    runs = sched.runs(parse_rfc3339(case["start"]), len(case["next"]))
    want = [x for x in case["next_local"] if x is not None]
    got = [f"{r.astimezone(zone).isoformat(timespec='seconds')} {r.astimezone(zone):%a}" for r in runs]
    assert got == [w.replace("Z ", "+00:00 ") for w in want]


@pytest.mark.parametrize("case", INVALID)
def test_upstream_rejections_are_rejected_with_one_clear_line(case: dict[str, Any]) -> None:
    with pytest.raises(ScheduleError) as info:
        parse(case["expr"], case["tz"])
    msg = str(info.value)
    assert "\n" not in msg and msg
    err = info.value
    assert isinstance(err, CronParseError)
    if case.get("panic"):
        assert err.upstream.startswith("panic:")
    else:
        assert err.upstream == case["error_msg"]


@pytest.mark.parametrize("case", CASES)
def test_api_create_validity_matches_upstream(case: dict[str, Any]) -> None:
    from cronctl.schedule import validate_for_api

    problems = validate_for_api(case["expr"], case["tz"])
    assert (problems == []) == case["api_create_valid"], problems
