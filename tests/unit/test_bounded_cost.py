"""Bounded cost on pile-ups (issue 26, "Cost"): what a few kilobytes to a megabyte of realistic input
may cost. Each shape is generated here; bench/bench_pileup.py runs the same shapes at 1x/2x/4x.

- 2,000 running Jobs of one every-minute Allow CronJob: overlaps are groups found by a sweep, not
  1,999,000 pairs (1.09 GB of bundle.json);
- Jobs over 7,000 years: the timeline's axis has a bounded number of gridlines (a week's step had
  made report.html 380 MB);
- a string aliased 4,000 times: the YAML loader counts the characters aliases add (MAX_ALIAS_BYTES);
- 1,000 identical CronJobs: lint's duplicate-work rule (CJ032) compares schedules, not every pair;
- every numeric flag has a cap.
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import RunCli
from builders import cronjob, job, z
from fake_cluster import FakeCluster
from cronctl import model
from cronctl.bundle.analyse import Options, analyse_cronjob
from cronctl.bundle.assemble import build_bundle
from cronctl.lint.engine import findings_as_data
from cronctl.bundle.dump import load_dump
from cronctl.bundle.render import MAX_TICKS, _axis, render_html, render_markdown, timeline
from cronctl.errors import BadInput, ExitCode
from cronctl.lint.rules import Hit
from cronctl.manifest import MAX_ALIAS_BYTES, parse_documents, parse_json

UTC = timezone.utc
T0 = datetime(2026, 12, 1, tzinfo=UTC)


# the every-minute Allow CronJob of the pile-ups (created a day before the first Job)
PILEUP: dict[str, Any] = dict(schedule="* * * * *", name="pileup", created=T0 - timedelta(days=1), policy="Allow",
                              containers=[{"name": "c", "image": "i"}])


def pileup(n: int) -> tuple[Any, list[Any], datetime]:
    """N Jobs of an every-minute Allow CronJob, one started each minute, none finished; and now."""
    cj = cronjob(**PILEUP)
    jobs = [job(f"pileup-{int((T0 + timedelta(minutes=i)).timestamp()) // 60}", owner=cj,
                start=T0 + timedelta(minutes=i, seconds=2)) for i in range(n)]
    return cj, jobs, T0 + timedelta(minutes=n)


# -- overlaps: a sweep line, groups ------------------------------------------------------------------

def test_hung_jobs_of_an_allow_cronjob_are_one_overlap_group_not_every_pair() -> None:
    cj, jobs, now = pileup(300)  # 44,850 pairs before
    a = analyse_cronjob(cj, jobs, [], [], Options(now=now))
    [g] = a["overlaps"]
    assert (g["job_count"], g["peak"], g["ongoing"], g["manual_beside_scheduled"]) == (300, 300, True, False)
    assert g["start"] == z(T0 + timedelta(minutes=1, seconds=2))  # the second one started beside the first
    assert g["end"] == z(now + timedelta(seconds=1)) and g["peak_at"] == z(T0 + timedelta(minutes=299, seconds=2))
    assert len(g["jobs"]) == model.MAX_OVERLAP_NAMES and g["jobs"][0]["name"] == jobs[0]["metadata"]["name"]


def test_two_thousand_hung_jobs_make_a_bundle_of_a_few_megabytes(run_cli: RunCli, tmp_path: Path) -> None:
    cj, jobs, _now = pileup(2000)  # before: 1,999,000 pairs, a 1.09 GB bundle.json
    f = tmp_path / "dump.json"
    f.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [cj, *jobs]}))
    res = run_cli("bundle", "--from-dump", str(f), "--out", str(tmp_path / "b"), "-o", "json")
    assert res.exit_code == 0, res.stderr
    doc = json.loads((tmp_path / "b" / "bundle.json").read_text())
    assert [g["job_count"] for g in doc["cronjobs"][0]["overlaps"]] == [2000]
    total = sum(p.stat().st_size for p in (tmp_path / "b").rglob("*") if p.is_file())
    assert total < 20_000_000, total
    md = (tmp_path / "b" / "REPORT.md").read_text()
    assert "| 2000: `pileup-" in md and "and 1980 more (0 manual in all)" in md


def test_a_manual_job_beside_a_scheduled_one_is_flagged_in_its_group_only() -> None:
    cj = cronjob(**PILEUP)
    jobs = [job("a", owner=cj, start=T0, done=T0 + timedelta(minutes=10)),
            job("m", owner=cj, start=T0 + timedelta(minutes=5), done=T0 + timedelta(minutes=6), manual=True),
            job("b", owner=cj, start=T0 + timedelta(minutes=20), done=T0 + timedelta(minutes=30)),
            job("c", owner=cj, start=T0 + timedelta(minutes=25), done=T0 + timedelta(minutes=40))]
    a = analyse_cronjob(cj, jobs, [], [], Options(now=T0 + timedelta(hours=1)))
    got = [([n["name"] for n in g["jobs"]], g["manual"], g["manual_beside_scheduled"], g["seconds"]) for g in a["overlaps"]]
    assert got == [(["a", "m"], 1, True, 60), (["b", "c"], 0, False, 300)]


_minute = st.integers(min_value=0, max_value=60)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_minute, st.integers(min_value=0, max_value=20), st.booleans()), max_size=12))
def test_the_groups_hold_exactly_the_pairs_that_overlap(ivs: list[tuple[int, int, bool]]) -> None:
    recs = [model.JobRecord(name=f"j{i}", uid=f"j{i}", origin="manual" if m else "scheduled", scheduled_for=None,
                            claims=None, created=None, started=None, completed=None, outcome="Complete",
                            start=T0 + timedelta(minutes=s), end=T0 + timedelta(minutes=s + d), running=False)
            for i, (s, d, m) in enumerate(ivs)]
    pairs = model.overlaps(recs)
    groups = model.overlap_groups(recs)
    origin = {r.name: r.origin for r in recs}
    for a, b, s, e in pairs:  # every pair lies in one group, in its span
        [g] = [g for g in groups if a in g.names and b in g.names and g.start <= s and e <= g.end]
    for g in groups:  # a group is the union of its pairs, and no more (a Job may end one and begin the next)
        mine = [p for p in pairs if {p[0], p[1]} <= set(g.names) and g.start <= p[2] and p[3] <= g.end]
        assert {n for p in mine for n in p[:2]} == set(g.names)
        assert (g.start, g.end) == (min(p[2] for p in mine), max(p[3] for p in mine))
        assert g.manual_beside_scheduled == any(origin[p[0]] != origin[p[1]] for p in mine)
        assert 2 <= g.peak <= len(g.names)
    assert all(x.end <= y.start for x, y in zip(groups, groups[1:]))  # disjoint, in order


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_minute, st.integers(min_value=0, max_value=20), st.booleans()), max_size=14),
       st.integers(min_value=1, max_value=4))
def test_beside_lists_the_first_overlapping_jobs_by_start_and_counts_them_all(
        ivs: list[tuple[int, int, bool]], cap: int) -> None:
    recs = [model.JobRecord(name=f"j{i}", uid=f"j{i}", origin="manual" if m else "scheduled", scheduled_for=None,
                            claims=None, created=None, started=None, completed=None, outcome="Complete",
                            start=T0 + timedelta(minutes=s), end=T0 + timedelta(minutes=s + d), running=False)
            for i, (s, d, m) in enumerate(ivs)]
    these = [r for r in recs if r.origin == "manual"]
    others = [r for r in recs if r.origin == "scheduled"]
    got = model.beside(these, others, cap=cap)
    for r in these:
        want = sorted((o for o in others if o.overlaps(r)), key=lambda o: (o.start, o.name))
        if r.end <= r.start:
            assert r.name not in got  # no interval, beside nothing
            continue
        assert got[r.name].total == len(want)
        # the listed names are the first ``cap`` by start; at one instant, any of the tied ones
        listed = got[r.name].names
        assert len(listed) == min(cap, len(want)) and set(listed) <= {o.name for o in want}
        assert sorted(o.start for o in others if o.name in listed) == [o.start for o in want[:len(listed)]]


def test_two_thousand_manual_jobs_beside_two_thousand_scheduled_ones_are_counted_not_paired(
        run_cli: RunCli, tmp_path: Path) -> None:
    # history's manual_beside and manual runs were pairwise (4,000,000 checks, every name listed)
    cj, jobs, now = pileup(2000)
    manual = [job(f"pileup-fix-{i}", owner=cj, start=T0 + timedelta(minutes=i, seconds=30), manual=True)
              for i in range(2000)]
    f = tmp_path / "dump.json"
    f.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [cj, *jobs, *manual]}))
    res = run_cli("history", "--from-dump", str(f), "--now", z(now), "-o", "json")
    assert res.exit_code == 0, res.stderr
    [h] = json.loads(res.stdout)["cronjobs"]
    runs = {r["job"]: r for r in h["manual_runs"]}
    assert len(runs) == 2000
    # the last manual Job started at minute 1999:30, beside all 2,000 scheduled ones (all still running)
    last = runs["pileup-fix-1999"]
    assert last["overlaps_total"] == 2000 and len(last["overlaps"]) == model.MAX_OVERLAP_NAMES
    assert runs["pileup-fix-0"]["overlaps_total"] == 2000  # the first one: every later one started beside it
    beside = [r for r in h["slots"] if r["manual_beside"]]
    assert beside and all(len(r["manual_beside"]) <= model.MAX_OVERLAP_NAMES for r in beside)
    assert max(r["manual_beside_total"] for r in beside) == 2000
    assert any("and 1980 more ran at the same time" in r["reason"] for r in beside)


# -- the timeline's axis -----------------------------------------------------------------------------

def bundle_of(items: list[Any], now: datetime, tmp_path: Path) -> Any:
    """bundle.json's document for a dump of ``items`` at ``now`` (as `bundle --from-dump` makes it)."""
    f = tmp_path / "dump.json"
    f.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    raw = load_dump(str(f), namespace=None, now=now, collected_at=now)
    return build_bundle(raw, None, Options(now=now), lint=findings_as_data).doc


def far_span(years: int, n: int = 50) -> tuple[list[Any], datetime]:
    """``n`` finished Jobs of a weekly CronJob spread over ``years`` years ending in 8999, and now."""
    end = datetime(8999, 12, 1, tzinfo=UTC)
    start = datetime(9000 - years, 1, 2, tzinfo=UTC)
    cj = cronjob("0 0 * * 0", name="far", created=start - timedelta(days=1), policy="Allow",
                 containers=[{"name": "c", "image": "i"}])
    step = (end - start) / n
    jobs = [job(f"far-{i:04d}", owner=cj, start=start + step * i, done=start + step * i + timedelta(minutes=5))
            for i in range(n)]
    return [cj, *jobs], end + timedelta(days=1)


def test_the_axis_of_jobs_over_seven_thousand_years_has_a_bounded_number_of_gridlines(tmp_path: Path) -> None:
    items, now = far_span(7030)  # MIN_YEAR 1970 .. MAX_YEAR 9000: before, one gridline per week (366,000)
    tl = timeline(bundle_of(items, now, tmp_path)["cronjobs"][0])
    assert 2 <= len(tl["axis"]) <= MAX_TICKS
    assert [t["label"] for t in tl["axis"]][:2] == ["2000", "3000"]


def test_the_reports_of_a_far_span_are_small_whatever_the_span(tmp_path: Path) -> None:
    docs = [bundle_of(*far_span(years), tmp_path) for years in (10, 100, 1000, 7030)]
    sizes = [len(render_html(d)) + len(render_markdown(d)) for d in docs]
    assert max(sizes) < 1_000_000, sizes  # 500 judged scheduled times and 50 Jobs: about 630 KB
    assert max(sizes) - min(sizes) < 20_000, sizes  # the span changes labels, not the size


def test_every_span_from_a_minute_to_seven_thousand_years_gets_two_to_sixteen_gridlines() -> None:
    start = datetime(1970, 1, 1, tzinfo=UTC)
    limit = (datetime(9000, 1, 1, tzinfo=UTC) - start).total_seconds()
    for seconds in [s for s in (60 * 1.7 ** k for k in range(60)) if s <= limit] + [limit]:
        end = start + timedelta(seconds=seconds)
        axis = _axis(start, end, lambda t: 0.0, "Europe/Berlin")
        assert 2 <= len(axis) <= MAX_TICKS, (seconds, len(axis))


# -- YAML aliases of strings count by the characters they add ------------------------------------------

def aliased_string(n: int, size: int = 256 * 1024, *, through_mapping: bool = False) -> str:
    """A CronJob whose annotations hold one ``size``-character string and ``n`` aliases of it (or of a
    mapping holding it)."""
    big = "x" * size
    if through_mapping:
        head = f"  labels: {{}}\n  x-base: &m {{s: \"{big}\"}}\n  x-copies:\n"
        refs = "".join("  - *m\n" for _ in range(n))
        meta = head + refs
    else:
        meta = "  annotations:\n" + f"    a0: &s \"{big}\"\n" + "".join(f"    a{i}: *s\n" for i in range(1, n + 1))
    return ("apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: aliased\n  namespace: ns\n" + meta
            + "spec:\n  schedule: '*/5 * * * *'\n  jobTemplate: {spec: {template: {spec: {containers: "
              "[{name: c, image: i}]}}}}\n")


def test_a_string_aliased_4000_times_is_refused_naming_the_limit(run_cli: RunCli, tmp_path: Path) -> None:
    f = tmp_path / "aliased.yaml"
    f.write_text(aliased_string(4000))  # 256 KB written, 1 GiB expanded: before, 1.05 GB of bundle
    res = run_cli("bundle", "--from-dump", str(f), "--out", str(tmp_path / "b"))
    assert res.exit_code == ExitCode.BAD_INPUT, res.stderr
    [line] = [ln for ln in res.stderr.splitlines() if ln.startswith("error: ")]
    assert "MAX_ALIAS_BYTES" in line and "aliases" in line, res.stderr
    assert not (tmp_path / "b").exists()


@pytest.mark.parametrize("through_mapping", [False, True])
def test_strings_aliases_add_are_counted_also_through_an_aliased_mapping(through_mapping: bool) -> None:
    with pytest.raises(BadInput, match="MAX_ALIAS_BYTES"):
        parse_documents(aliased_string(MAX_ALIAS_BYTES // (256 * 1024) + 1, through_mapping=through_mapping))
    parse_documents(aliased_string(MAX_ALIAS_BYTES // (256 * 1024) - 1, through_mapping=through_mapping))


def test_repeated_json_keys_are_not_aliases() -> None:
    key = "example.com/" + "k" * 200
    items = [{"metadata": {"name": f"n{i}", "annotations": {key: "v"}}} for i in range(90_000)]
    parse_json(json.dumps({"kind": "List", "items": items}))  # json shares repeated keys: 19 MB of them


# -- lint: the duplicate-work rule groups by a key ------------------------------------------------------

LINT_NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


def lint_cronjob(name: str, schedule: str = "*/10 * * * *", zone: str = "Etc/UTC", ns: str = "integrations",
                 image: str = "registry.example/sync:1.4", suspend: bool = False) -> Any:
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name, "namespace": ns},
            "spec": {"schedule": schedule, "timeZone": zone, "suspend": suspend,
                     "jobTemplate": {"spec": {"template": {"spec": {
                         "restartPolicy": "Never", "containers": [{"name": "c", "image": image, "args": ["--x"]}]}}}}}}


def pairwise_reference(cjs: list[Any], now: datetime) -> list[tuple[int, Hit]]:
    """CJ032 as it was, comparing every pair of a bucket (O(n²)): the answer the grouped rule must give."""
    from cronctl.lint.rules import POD, _ref, _shared_slot, _spec, _get, _when, _work, parsed_schedule
    from cronctl.timeutil import rfc3339_z

    groups: dict[Any, list[int]] = {}
    works = [_work(cj) for cj in cjs]
    for i, cj in enumerate(cjs):
        if works[i] is not None and _spec(cj).get("suspend") is not True:
            groups.setdefault((str(_get(cj, "metadata", "namespace")), works[i]), []).append(i)
    out = []
    for (_ns, (containers, _volumes)), members in groups.items():
        if len(members) < 2:
            continue
        images = ", ".join(dict.fromkeys(c[1] for c in containers))
        scheds = {i: parsed_schedule(cjs[i]) for i in members}
        meets = {(i, j): _shared_slot(scheds[i], scheds[j], now) for i in members for j in members if i < j}
        for i in members:
            others = [j for j in members if _ref(cjs[j]) != _ref(cjs[i])]
            if not others:
                continue
            shared = [(j, t) for j in others if (t := meets[(min(i, j), max(i, j))])]
            names = ", ".join(f"{_ref(cjs[j])} ({_when(cjs[j])})" for j in others[:5])
            names += f" and {len(others) - 5} more" if len(others) > 5 else ""
            msg = f"{POD}: image {images} with the same command, args, env and volumes as {names}"
            if shared:
                j, t = min(shared, key=lambda p: p[1])
                out.append((i, Hit(f"{msg}; both run at {rfc3339_z(t)} (with {_ref(cjs[j])}): that slot's work is "
                                   "done twice, possibly at once (Forbid does not hold across CronJobs)", POD,
                                   "warning")))
            else:
                out.append((i, Hit(f"{msg}; their slots do not meet in the next 5 weeks (one job split over "
                                   "two schedules? then lint-ignore it)", POD, "info")))
    return sorted(out, key=lambda h: h[0])


def mixed_fleet() -> list[Any]:
    """Copies on the same and on other schedules and zones, an unparsable schedule, a suspended copy,
    the same object twice, other work, another namespace: every branch of CJ032."""
    scheds = [("*/10 * * * *", "Etc/UTC"), ("30 12 * * *", "Europe/Berlin"), ("0 9 * * 1", "Etc/UTC"),
              ("*/15 * * * *", "America/New_York"), ("0 0 31 2 *", "Etc/UTC"), ("61 * * * *", "Etc/UTC"),
              ("5 4 * * *", "Asia/Kolkata")]
    out = []
    for i in range(40):
        expr, zone = scheds[(i * 7 + i // 3) % len(scheds)]
        out.append(lint_cronjob(f"cj-{i % 33}", expr, zone, ns="a" if i % 5 else "b",
                                image="registry.example/other:1" if i % 11 == 0 else "registry.example/sync:1.4",
                                suspend=i % 13 == 0))
    return out


def test_the_grouped_duplicate_work_rule_says_what_comparing_every_pair_said() -> None:
    from cronctl.lint.rules import check_duplicate_work

    fleet = mixed_fleet()
    got = check_duplicate_work(fleet, LINT_NOW)
    assert got == pairwise_reference(fleet, LINT_NOW)
    assert {h.severity for _i, h in got} == {"warning", "info"}


def test_a_thousand_identical_cronjobs_take_the_duplicate_work_rule_well_under_a_second() -> None:
    from cronctl.lint.rules import check_duplicate_work

    fleet = [lint_cronjob(f"same-{i:04d}") for i in range(1000)]
    t0 = time.process_time()
    got = check_duplicate_work(fleet, LINT_NOW)
    cpu = time.process_time() - t0  # before: 499,500 comparisons, about 8 s
    assert len(got) == 1000 and all("and 994 more" in h.message and h.severity == "warning" for _i, h in got)
    assert cpu < 1.0, cpu


# -- every numeric flag has a cap --------------------------------------------------------------------

@pytest.mark.parametrize("argv, limit", [
    (["explain", "@daily", "--count", "10001"], "MAX_COUNT"),
    (["explain", "* * * * *", "--dialect", "atlas", "--missed-limit", "10001"], "MAX_MISSED_LIMIT"),
    (["explain", "* * * * *", "--now", "2026-12-02T00:00:00Z", "--last-schedule", "2026-12-01T00:00:00Z",
      "--starting-deadline", str(2 ** 63)], "MAX_STARTING_DEADLINE"),
    (["backfill", "orders", "--missed", "--parallel", "501", "--dry-run"], "MAX_PARALLEL"),
    (["bundle", "--from-dump", "{dump}", "--out", "{out}", "--max-log-bytes", str(64 * 2 ** 20 + 1)], "MAX_LOG_BYTES"),
    (["history", "--from-dump", "{dump}", "--since", "3651d"], "MAX_DURATION"),
])
def test_a_numeric_flag_beyond_its_cap_is_one_line_exit_2(run_cli: RunCli, tmp_path: Path, argv: list[str],
                                                          limit: str) -> None:
    """Past its cap a flag's value is bad like any other bad value of it: exit 2 (issue 34), one line
    saying the cap in the user's words; the constant (``limit``) is docs/LIMITS.md's name, not shown."""
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [cronjob(**PILEUP)]}))
    res = run_cli(*[a.replace("{dump}", str(dump)).replace("{out}", str(tmp_path / "b")) for a in argv],
                  env={"KUBECONFIG": str(tmp_path / "no-such-kubeconfig")})
    starting_deadline = limit == "MAX_STARTING_DEADLINE"  # a controller input, as a manifest gives it: exit 5
    assert res.exit_code == (ExitCode.BAD_INPUT if starting_deadline else ExitCode.USAGE), (res.exit_code, res.stderr)
    [line] = [ln for ln in res.stderr.splitlines() if ln.startswith("error: ")]
    assert line.startswith("error: bad --") and "at most" in line or "MiB" in line, res.stderr
    assert (limit in line) == starting_deadline, line
    assert "Traceback" not in res.stderr
    assert not (tmp_path / "b").exists()


def test_the_caps_are_documented_in_docs_limits() -> None:
    doc = (Path(__file__).parents[2] / "docs" / "LIMITS.md").read_text()
    start = doc.index("## Limits: files and hostile input")
    end = doc.find("\n## ", start + 1)
    limits = doc[start:end if end >= 0 else len(doc)]
    for name in ("MAX_COUNT", "MAX_MISSED_LIMIT", "MAX_STARTING_DEADLINE", "MAX_PARALLEL", "MAX_LOG_BYTES",
                 "MAX_DURATION", "MAX_ALIAS_BYTES"):
        assert f"`{name}`" in limits, name


# -- status: the same groups ---------------------------------------------------------------------------

def test_status_shows_hung_jobs_as_one_overlap_line_and_flags_every_one() -> None:
    from cronctl.cli.status import status_doc
    from cronctl.procedure.status import collect_status

    cj, jobs, now = pileup(300)
    s = status_doc(collect_status(FakeCluster(cj, jobs, version="v1.34.0"), "pileup", now))  # type: ignore[arg-type]
    [g] = s["overlaps"]
    assert (g["job_count"], g["peak"], len(g["jobs"])) == (300, 300, model.MAX_OVERLAP_NAMES)
    assert all(j["overlapping"] for j in s["jobs"])
