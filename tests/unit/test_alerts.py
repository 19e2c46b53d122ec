"""`cronctl alerts`: the windows against a brute-force minute walk, the rules' shape, hostile input,
and `promtool check rules` on every output form."""

from __future__ import annotations

import functools
import json
import subprocess
from datetime import datetime, timezone
from typing import Any
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
import yaml

from builders import manifest
from cronctl import alerts as al
from cronctl.schedule import parse

from harness import cronctl
from tool_support import promtool

ROOT = Path(__file__).resolve().parents[2]
UTC = timezone.utc


def _brute_slots(expr: str, zone: str, since: datetime, days: int) -> list[int]:
    """Every UTC minute in [since, since + days] whose wall time in ``zone`` matches the five fields
    (robfig's day rule: both day fields when either is '*', else either). Independent of the
    engine's walk: it only borrows the parsed field values. A fall-back hour's minutes match twice
    and a spring-forward hour's never, which is what the controller does (docs/SEMANTICS.md §3)."""
    s = parse(expr, zone)
    minutes, hours, doms, months = set(s.minutes), set(s.hours), set(s.days_of_month), set(s.months)
    dows = set(s.days_of_week)
    tz = ZoneInfo(zone)
    start = int(since.timestamp()) // 60 * 60
    if start < since.timestamp():
        start += 60
    out = []
    for u in range(start, start + days * 86400 + 1, 60):
        w = datetime.fromtimestamp(u, tz)
        if w.minute not in minutes or w.hour not in hours or w.month not in months:
            continue
        dom_ok, dow_ok = w.day in doms, (w.isoweekday() % 7) in dows
        if (dom_ok and dow_ok) if (s.dom_star or s.dow_star) else (dom_ok or dow_ok):
            out.append(u)
    return out


def _brute_gaps(slots: list[int]) -> tuple[int, int, list[tuple[int, int]]]:
    """base (the shortest length with at most MAX_EXCEPTIONS gaps longer), longest, and the gaps
    longer than base, from the list of slots."""
    gaps = [(a, b) for a, b in zip(slots, slots[1:])]
    lengths = sorted({b - a for a, b in gaps})
    base = next(length for length in lengths
                if sum(1 for a, b in gaps if b - a > length) <= al.MAX_EXCEPTIONS)
    for nxt in lengths:  # up by at most an hour while fewer slots are delayed than terms saved
        if base < nxt <= base + 3600 and sum(1 for a, b in gaps if b - a <= base) < \
                sum(1 for a, b in gaps if b - a == nxt):
            base = nxt
    return base, max(b - a for a, b in gaps), [(a, b) for a, b in gaps if b - a > base]


CASES = [
    ("0 9,10 * * *", "Europe/Berlin", datetime(2026, 12, 3, tzinfo=UTC), 200),  # 1 h and 23 h: too many differ
    ("0 9 * * 1-5", "Europe/Berlin", datetime(2026, 12, 3, tzinfo=UTC), 400),
    ("0 3 1 * *", "UTC", datetime(2026, 12, 3, tzinfo=UTC), 400),
    ("0 9 * * *", "Europe/Berlin", datetime(2027, 1, 1, tzinfo=UTC), 400),
    ("30 1 * * *", "America/New_York", datetime(2026, 9, 1, tzinfo=UTC), 120),
    ("*/10 * * * *", "America/New_York", datetime(2026, 10, 25, tzinfo=UTC), 20),
    ("0 * * * *", "Europe/Berlin", datetime(2027, 3, 20, tzinfo=UTC), 20),
    ("30 6-16/4 * * 1-5", "Asia/Kolkata", datetime(2026, 12, 3, tzinfo=UTC), 200),
    ("0 0 13 * 5", "Europe/Berlin", datetime(2026, 12, 3, tzinfo=UTC), 400),
    ("15 2 * * 0", "Europe/Berlin", datetime(2027, 3, 1, tzinfo=UTC), 250),
    ("0 0 * * SUN", "Europe/Berlin", datetime(2026, 12, 3, tzinfo=UTC), 400),
]


@pytest.mark.parametrize(("expr", "zone", "since", "days"), CASES, ids=[f"{c[0]}@{c[1]}" for c in CASES])
def test_windows_match_a_brute_force_minute_walk(expr: str, zone: str, since: datetime, days: int) -> None:
    slots = _brute_slots(expr, zone, since, days)
    got = al.schedule_gaps(parse(expr, zone), since, days)
    assert got is not None
    assert got.slots == len(slots)
    base, longest, longer = _brute_gaps(slots)
    assert got.base == base
    assert got.longest.length == longest
    assert [(g.start, g.end) for g in got.exceptions] == longer
    # running past the next slot: the most common gap, and every gap of another length, unless too many
    from collections import Counter

    pairs = list(zip(slots, slots[1:]))
    counts = Counter(b - a for a, b in pairs)
    usual = min(counts, key=lambda x: (-counts[x], x))
    other = [(a, b) for a, b in pairs if b - a != usual]
    assert got.usual == usual
    assert (None if len(other) > al.MAX_EXCEPTIONS else other) == \
        (None if got.unusual is None else [(g.start, g.end) for g in got.unusual])


def test_the_weekday_berlin_window_is_a_day_and_each_weekend_is_its_own_gap() -> None:
    got = al.schedule_gaps(parse("0 9 * * 1-5", "Europe/Berlin"), datetime(2026, 12, 3, tzinfo=UTC))
    assert got is not None
    assert got.base == 24 * 3600
    weekends = [g for g in got.exceptions]
    # every Friday-to-Monday gap; 72 h, except over the DST weekends (71 h in March, 73 h in October)
    assert all(datetime.fromtimestamp(g.start, ZoneInfo("Europe/Berlin")).isoweekday() == 5 for g in weekends)
    assert sorted({g.length // 3600 for g in weekends}) == [71, 72, 73]
    autumn = next(g for g in weekends if g.length == 73 * 3600)
    assert datetime.fromtimestamp(autumn.end, UTC) == datetime(2027, 11, 1, 8, tzinfo=UTC)


def test_a_weekly_job_keeps_one_term_for_its_long_autumn_week_not_one_per_ordinary_week() -> None:
    got = al.schedule_gaps(parse("0 0 * * SUN", "Europe/Berlin"), datetime(2026, 12, 3, tzinfo=UTC))
    assert got is not None and got.base == 168 * 3600
    assert [g.length // 3600 for g in got.exceptions] == [169]


def test_a_fall_back_repeat_is_not_the_shortest_gap() -> None:
    # 01:30 New York runs twice on 2026-11-01, one hour apart; Jobs longer than an hour are normal
    got = al.schedule_gaps(parse("30 1 * * *", "America/New_York"), datetime(2026, 9, 1, tzinfo=UTC))
    assert got is not None and got.shortest.length == 24 * 3600


def test_never_twice_in_the_horizon_is_skipped_with_a_reason() -> None:
    now = datetime(2026, 12, 3, tzinfo=UTC)
    rs = al.build([_cj("leap", "0 0 29 2 *"), _cj("never", "0 0 30 2 *")], now, al.AlertOptions())
    assert rs.groups == [] and [s.ref for s in rs.skipped] == ["shop/leap", "shop/never"]
    assert all("fewer than twice" in s.reason for s in rs.skipped)


# the CronJobs here: manifests in namespace shop with an empty pod template
_cj = functools.partial(manifest, namespace="shop", pod={})


def test_equal_schedules_are_walked_once_and_all_walks_stay_under_the_cap() -> None:
    # issue 39: 2,000 distinct schedules ran past 178 s; equal ones share one walk, and a run whose
    # distinct walks pass the cap writes nothing and says how to split it
    now = datetime(2026, 12, 3, tzinfo=UTC)
    every10 = al.schedule_gaps(parse("*/10 * * * *", None), now)
    assert every10 is not None and every10.slots == 400 * 144 + 1
    same = [_cj(f"s{i}", "*/10 * * * *") for i in range(3)]  # three CronJobs, one walk
    rs = al.build(same, now, al.AlertOptions(max_walk=every10.slots))
    assert [g["name"] for g in rs.groups][:3] == [f"cronctl.shop.s{i}" for i in range(3)], rs.groups
    with pytest.raises(al.BadInput) as e:
        al.build([*same, _cj("other", "*/5 * * * *")], now, al.AlertOptions(max_walk=every10.slots))
    assert e.value.message.startswith("no alert rules written: the 4 CronJobs' schedules would walk more than "
                                      f"{every10.slots:,} slots"), e.value.message
    assert "1 distinct schedules and zones walked" in e.value.message and "before CronJob 4" in e.value.message
    assert "-n" in (e.value.hint or "") and "\n" not in e.value.message
    # an @every schedule is arithmetic, not walked: 34 million one-second gaps cost nothing
    rs = al.build([_cj("tick", "@every 1s"), *same], now, al.AlertOptions(max_walk=every10.slots))
    assert len(rs.groups) == 5, rs.skipped


def test_grace_is_start_delay_plus_expected_run_plus_margin() -> None:
    now = datetime(2026, 12, 3, tzinfo=UTC)
    cj = _cj("orders", "*/10 * * * *", startingDeadlineSeconds=120)
    cj["spec"]["jobTemplate"]["spec"]["activeDeadlineSeconds"] = 300
    (win,) = al.build([cj], now, al.AlertOptions(margin=60)).windows
    assert win["no_success_window"] == 600 + 120 + 300 + 60
    assert win["not_scheduled_window"] == 600 + 120 + 60
    (win,) = al.build([cj], now, al.AlertOptions(margin=0, expected_duration=30)).windows
    assert win["no_success_window"] == 600 + 120 + 30 and win["grace"]["expected_run_from"] == "--expected-duration"


def test_every_rule_names_the_cronjob_and_points_at_its_runbook() -> None:
    now = datetime(2026, 12, 3, tzinfo=UTC)
    rs = al.build([_cj("orders", "0 9 * * 1-5", "Europe/Berlin")], now,
                  al.AlertOptions(runbook_url="https://runbooks.example/alerts.md#{anchor}"))
    group, stale = rs.groups
    assert {r["alert"] for r in group["rules"]} == set(al.ALERT_NAMES.values())
    for r in group["rules"]:
        assert r["labels"]["cronjob"] == "orders" and r["labels"]["namespace"] == "shop"
        assert "shop/orders" in r["annotations"]["summary"] + r["annotations"]["description"]
        assert r["annotations"]["runbook_url"] == f"https://runbooks.example/alerts.md#{r['alert'].lower()}"
        # the anchor exists in the runbook
        assert f"### {r['alert']}" in (ROOT / "runbooks" / "alerts.md").read_text()
    missed = next(r for r in group["rules"] if r["alert"] == "CronJobNoRecentSuccess")
    assert "09:00 on weekdays" in missed["annotations"]["description"]
    assert stale["rules"][0]["alert"] == al.STALE_ALERT


def test_a_pause_with_until_fires_after_the_until_not_after_max_suspend() -> None:
    now = datetime(2026, 12, 3, tzinfo=UTC)
    cj = _cj("orders", "0 9 * * *")
    cj["metadata"]["annotations"] = {"cronctl.dev/paused-by": "ops", "cronctl.dev/paused-until": "2026-12-10T00:00:00Z"}
    (group, _) = al.build([cj], now, al.AlertOptions(margin=0)).groups
    rule = next(r for r in group["rules"] if r["alert"] == "CronJobSuspendedTooLong")
    assert str(int(datetime(2026, 12, 10, tzinfo=UTC).timestamp())) in rule["expr"] and "for" not in rule


@pytest.mark.parametrize("name", ['a"b', "x{{ $value }}", "UPPER", "a" * 300])
def test_a_name_that_is_not_a_kubernetes_name_gets_no_rules(name: str) -> None:
    rs = al.build([_cj(name, "0 9 * * *")], datetime(2026, 12, 3, tzinfo=UTC), al.AlertOptions())
    assert rs.groups == [] and len(rs.skipped) == 1 and "not a Kubernetes name" in rs.skipped[0].reason


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return cronctl(["alerts", *args], cwd=ROOT, timeout=120)


def test_promtool_accepts_every_output_form(tmp_path: Path) -> None:
    examples = ROOT / "examples" / "mp-orders-sync.yaml"
    extra = tmp_path / "more.yaml"
    extra.write_text(yaml.safe_dump_all([
        _cj("weekday", "0 9 * * 1-5", "Europe/Berlin"), _cj("monthly", "0 3 1 * *"),
        _cj("hourly", "@hourly", "America/New_York"), _cj("every", "@every 90m"),
        _cj("paused", "*/5 * * * *") | {"metadata": {"name": "paused", "namespace": "shop", "annotations": {
            "cronctl.dev/paused-by": "ops", "cronctl.dev/paused-until": "2026-12-24T00:00:00Z"}}},
    ]))
    for form, out in (("rules", "yaml"), ("rules", "json"), ("prometheusrule", "yaml"), ("prometheusrule", "json")):
        r = _cli("-f", str(examples), "-f", str(extra), "--format", form, "-o", out, "--now", "2026-12-03T00:00:00Z",
                 "--severity", "failed=page", "--rule-label", "release=prom")
        assert r.returncode == 0, r.stderr
        doc = json.loads(r.stdout) if out == "json" else yaml.safe_load(r.stdout)
        if form == "prometheusrule":
            assert doc["kind"] == "PrometheusRule" and doc["metadata"]["labels"]["release"] == "prom"
            doc = doc["spec"]
        path = tmp_path / f"{form}.{out}.yaml"
        path.write_text(yaml.safe_dump(doc))
        check = subprocess.run([promtool(), "check", "rules", str(path)], capture_output=True, text=True, timeout=60)
        assert check.returncode == 0, check.stdout + check.stderr
        assert f"SUCCESS: {6 * len(al.ALERT_NAMES) + 1} rules found" in check.stdout  # six CronJobs and the expiry rule


@pytest.mark.parametrize(("args", "code", "words"), [
    (["--severity", "bogus=x"], 2, "bad --severity"),
    (["--margin", "soon"], 2, "bad --margin"),  # every bad value of a duration flag: 2 (issue 34)
    (["--runbook-url", "https://x/{nope}"], 2, "bad --runbook-url"),
    (["--runbook-url", "runbooks/alerts.md#{anchor}"], 2, "an absolute http:// or https:// URL"),
    (["--now", "yesterday"], 5, "--now"),
    (["--rule-namespace", "Not_A_Namespace"], 5, "bad namespace name"),
    (["--rule-label", "novalue"], 2, "bad --rule-label"),
])
def test_bad_flags_are_one_line_errors(args: list[str], code: int, words: str) -> None:
    r = _cli("-f", str(ROOT / "examples" / "mp-orders-sync.yaml"), *args)
    assert r.returncode == code, r.stderr
    assert words in r.stderr and "Traceback" not in r.stderr and r.stdout == ""


def test_a_file_without_a_usable_cronjob_is_bad_input(tmp_path: Path) -> None:
    f = tmp_path / "never.yaml"
    f.write_text(yaml.safe_dump(_cj("never", "0 0 30 2 *")))
    r = _cli("-f", str(f))
    assert r.returncode == 5 and "no alert rules written" in r.stderr and "shop/never" in r.stderr


def test_a_field_of_the_wrong_type_is_named_not_read_loosely() -> None:
    # the same check every command applies to a CronJob's controller inputs (model.cronjob_view)
    rs = al.build([_cj("orders", "*/10 * * * *", startingDeadlineSeconds="30")], datetime(2026, 12, 3, tzinfo=UTC),
                  al.AlertOptions())
    assert rs.groups == [] and "spec.startingDeadlineSeconds" in rs.skipped[0].reason


def test_a_kubectl_dump_gives_rules_for_its_cronjobs_only(tmp_path: Path) -> None:
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "orders-29000000", "namespace": "shop"}}
    event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e1", "namespace": "shop"}, "reason": "x"}
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        _cj("orders", "0 9 * * 1-5", "Europe/Berlin"), job, event, _cj("sweep", "*/10 * * * *")]}))
    r = _cli("-f", str(dump), "--format", "rules", "-o", "json", "--windows")
    assert r.returncode == 0, r.stderr
    assert [w["cronjob"] for w in json.loads(r.stdout)] == ["shop/orders", "shop/sweep"]
    r = _cli("-f", str(dump), "orders", "--format", "rules", "-o", "json")
    assert r.returncode == 0 and [g["name"] for g in json.loads(r.stdout)["groups"]] == ["cronctl.shop.orders",
                                                                                         "cronctl.rules"]


@pytest.mark.parametrize("source", ["kube-state-metrics", "recorder"])
def test_without_runbook_url_no_relative_link_is_written_and_with_one_every_rule_has_it(source: str) -> None:
    """Issue 34 item 15: the default was the relative runbooks/alerts.md#..., a dead link in every
    notification. Now there is none unless --runbook-url gives the team's absolute one."""
    args = ["--source", "recorder"] if source == "recorder" else \
        ["-f", str(ROOT / "examples" / "mp-orders-sync.yaml"), "--now", "2026-12-03T00:00:00Z"]
    def rules_of(r: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
        assert r.returncode == 0, r.stderr
        doc = yaml.safe_load(r.stdout)
        return [rule for g in doc["spec"]["groups"] for rule in g["rules"]]

    rules = rules_of(_cli(*args))
    assert rules and not [r for r in rules if "runbook_url" in r["annotations"]]
    url = "https://wiki.example.com/cronctl/alerts.md#{anchor}"
    rules = rules_of(_cli(*args, "--runbook-url", url))
    assert rules and all(r["annotations"]["runbook_url"] == url.format(anchor=r["alert"].lower()) for r in rules)
