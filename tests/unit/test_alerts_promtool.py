"""`promtool test rules` on the rules `cronctl alerts` writes, with synthetic kube-state-metrics series.

promtool 2.42 (Debian's) starts every test at the Unix epoch and evaluates the rules at every step
from there. So that a scenario in 2027 costs a few hundred steps, not half a million, each run
moves promtool's clock: every ``time()`` in the rules becomes ``(time() + CLOCK)``, with CLOCK the
scenario's first instant; nothing else in the rules changes. The series carry real timestamps.
The expected firing times are computed here from the calendar (zoneinfo), not from the code under
test. The rules are tested without their annotations: promtool compares annotations literally, and
their text is checked by `promtool check rules` (templates) and test_alerts.py.
"""

from __future__ import annotations

import copy
import functools
import subprocess
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable
from zoneinfo import ZoneInfo

import yaml

from builders import manifest
from cronctl import alerts as al

from tool_support import promtool

UTC = timezone.utc
SEV = {"missed": "page-missed", "not-scheduled": "page-unscheduled", "failed": "ticket-failed",
       "overrun": "ticket-overrun", "suspended": "ticket-suspended"}
NO_SUCCESS, NOT_SCHEDULED = al.ALERT_NAMES["missed"], al.ALERT_NAMES["not-scheduled"]
FAILED, OVERRUN, SUSPENDED = al.ALERT_NAMES["failed"], al.ALERT_NAMES["overrun"], al.ALERT_NAMES["suspended"]


def _u(dt: datetime) -> int:
    return int(dt.timestamp())


# the CronJobs here: manifests in namespace shop with an empty pod template
_cj = functools.partial(manifest, namespace="shop", pod={})


def _values(step: int, start: int, end: int, value: Callable[[int], float | None]) -> str:
    """promtool's expanding notation for samples every ``step`` s from ``start`` (promtool's 0) to
    ``end``, blank wherever ``value`` is None; runs of one value compressed."""
    out: list[str] = []
    blanks = 0
    run_value: float | None = None
    run_len = 0

    def flush() -> None:
        nonlocal run_len
        if run_len:
            text = repr(run_value) if run_value is not None and not run_value.is_integer() else str(int(run_value or 0))
            out.append(f"{text}+0x{run_len - 1}" if run_len > 1 else text)
        run_len = 0

    if blanks:
        out.append(f"_x{blanks}")
    for t in range(start, end + 1, step):
        v = value(t)
        if v is None:
            flush()
            out.append("_")
            continue
        if run_len and v == run_value:
            run_len += 1
        else:
            flush()
            run_value, run_len = v, 1
    flush()
    return " ".join(out)


def _last(times: list[int]) -> Callable[[int], float | None]:
    """A timestamp gauge: the latest of ``times`` at or before t (absent before the first)."""
    ordered = sorted(times)

    def at(t: int) -> float | None:
        best = None
        for x in ordered:
            if x > t:
                break
            best = x
        return None if best is None else float(best)
    return at


@dataclass
class Scenario:
    step: int
    start: int
    end: int
    series: list[dict[str, str]] = field(default_factory=list)
    checks: dict[int, dict[str, list[dict[str, str]]]] = field(default_factory=dict)

    def add(self, metric: str, labels: dict[str, str], value: Callable[[int], float | None]) -> None:
        text = ", ".join(f'{k}="{v}"' for k, v in {**labels, "instance": "ksm:8080"}.items())
        self.series.append({"series": f"{metric}{{{text}}}", "values": _values(self.step, self.start, self.end, value)})

    def expect(self, at: datetime, alert: str, *alerts: dict[str, str]) -> None:
        assert (_u(at) - self.start) % self.step == 0, f"{at} is not on the {self.step}s evaluation grid"
        assert self.start <= _u(at) <= self.end
        self.checks.setdefault(_u(at) - self.start, {}).setdefault(alert, []).extend(alerts)

    def quiet(self, at: datetime, *names: str) -> None:
        for n in names:
            self.expect(at, n)


def _cronjob_series(sc: Scenario, name: str, successes: list[int], schedules: list[int],
                    suspended: Callable[[int], float] = lambda t: 0.0) -> None:
    labels = {"namespace": "shop", "cronjob": name}
    sc.add("kube_cronjob_status_last_successful_time", labels, _last(successes))
    sc.add("kube_cronjob_status_last_schedule_time", labels, _last(schedules))
    sc.add("kube_cronjob_created", labels, lambda t: float(sc.start - 86400 * 30))
    sc.add("kube_cronjob_spec_suspend", labels, suspended)


def _run(sc: Scenario, groups: list[dict[str, Any]], tmp_path: Path, only: tuple[str, ...] = ()) -> None:
    """promtool test rules on ``groups`` (only the alerts named in ``only``, if given), with its
    clock at ``sc.start``."""
    groups = copy.deepcopy(groups)
    for g in groups:
        g["rules"] = [r for r in g["rules"] if not only or r["alert"] in only]
        for r in g["rules"]:
            r.pop("annotations", None)
            r["expr"] = r["expr"].replace("time()", f"(time() + {sc.start})")
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"groups": [g for g in groups if g["rules"]]}))
    tests = [{"eval_time": f"{t}s", "alertname": name,
              "exp_alerts": [{"exp_labels": lab} for lab in alerts]}
             for t, by_name in sorted(sc.checks.items()) for name, alerts in by_name.items()]
    doc = {"rule_files": ["rules.yaml"], "evaluation_interval": f"{sc.step}s",
           "tests": [{"interval": f"{sc.step}s", "input_series": sc.series, "alert_rule_test": tests}]}
    (tmp_path / "test.yaml").write_text(yaml.safe_dump(doc, width=10**6))
    r = subprocess.run([promtool(), "test", "rules", "test.yaml"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, (r.stdout + r.stderr)[-6000:]


def _labels(name: str, kind: str, **extra: str) -> dict[str, str]:
    return {"namespace": "shop", "cronjob": name, "severity": SEV[kind], **extra}


def test_weekday_0900_berlin_is_quiet_over_weekends_and_dst_and_fires_at_each_missing_slot(tmp_path: Path) -> None:
    berlin = ZoneInfo("Europe/Berlin")
    now = datetime(2026, 12, 3, tzinfo=UTC)
    slots = [_u(datetime(d.year, d.month, d.day, 9, 0, tzinfo=berlin))
             for d in (date(2026, 12, 3) + timedelta(days=i) for i in range(400)) if d.isoweekday() <= 5]
    missing_monday = _u(datetime(2027, 1, 11, 9, tzinfo=berlin))  # the controller did not act
    failed_wednesday = _u(datetime(2027, 1, 20, 9, tzinfo=berlin))  # it ran, and failed
    rules = al.build([_cj("orders", "0 9 * * 1-5", "Europe/Berlin"), _cj("orders-missing", "0 9 * * 1-5",
                                                                          "Europe/Berlin")],
                     now, al.AlertOptions(margin=600, expected_duration=300, severities=SEV)).groups

    def scenario(first: datetime, last: datetime) -> Scenario:
        sc = Scenario(3600, _u(first), _u(last))
        _cronjob_series(sc, "orders", [s + 300 for s in slots], slots)
        _cronjob_series(sc, "orders-missing",
                        [s + 300 for s in slots if s not in (missing_monday, failed_wednesday)],
                        [s for s in slots if s != missing_monday])
        return sc

    # every hour of a normal weekend and of both DST weekends (2027-03-28 spring, 2027-10-31 autumn:
    # Friday 09:00 to Monday 09:00 is 71 h and 73 h there), Friday 06:00 UTC to Monday 12:00 UTC:
    # nothing fires for the CronJob whose runs all succeed
    for i, friday in enumerate((datetime(2026, 12, 11, 6, tzinfo=UTC), datetime(2027, 3, 26, 6, tzinfo=UTC),
                                datetime(2027, 10, 29, 6, tzinfo=UTC))):
        sc = scenario(friday - timedelta(days=5), friday + timedelta(days=4))
        for h in range(79):
            sc.quiet(friday + timedelta(hours=h), NO_SUCCESS, NOT_SCHEDULED)
        _run(sc, rules, tmp_path / f"weekend{i}", only=(NO_SUCCESS, NOT_SCHEDULED))

    sc = scenario(datetime(2027, 1, 4, tzinfo=UTC), datetime(2027, 1, 23, tzinfo=UTC))
    # Monday 2027-01-11 09:00 CET (08:00 UTC) was not started: quiet at the slot, firing at the
    # first evaluation after its grace (5 min run + 10 min margin), quiet again after Tuesday's run
    sc.quiet(datetime(2027, 1, 11, 8, tzinfo=UTC), NO_SUCCESS, NOT_SCHEDULED)
    sc.expect(datetime(2027, 1, 11, 9, tzinfo=UTC), NO_SUCCESS, _labels("orders-missing", "missed"))
    sc.expect(datetime(2027, 1, 11, 9, tzinfo=UTC), NOT_SCHEDULED, _labels("orders-missing", "not-scheduled"))
    sc.quiet(datetime(2027, 1, 12, 9, tzinfo=UTC), NO_SUCCESS, NOT_SCHEDULED)
    # Wednesday 2027-01-20 ran but failed: no success, firing after one day's window (not the
    # weekend's), while the schedule itself was kept
    sc.quiet(datetime(2027, 1, 20, 8, tzinfo=UTC), NO_SUCCESS)
    sc.expect(datetime(2027, 1, 20, 9, tzinfo=UTC), NO_SUCCESS, _labels("orders-missing", "missed"))
    sc.quiet(datetime(2027, 1, 20, 9, tzinfo=UTC), NOT_SCHEDULED)
    sc.quiet(datetime(2027, 1, 21, 9, tzinfo=UTC), NO_SUCCESS)
    _run(sc, rules, tmp_path / "missing", only=(NO_SUCCESS, NOT_SCHEDULED))


def _job_series(sc: Scenario, owner: str, job: str, started: int, ended: int | None, failed: bool = False) -> None:
    js = {"namespace": "shop", "job_name": job}
    sc.add("kube_job_owner", {**js, "owner_kind": "CronJob", "owner_name": owner, "owner_is_controller": "true"},
           lambda t: 1.0 if t >= started else None)
    sc.add("kube_job_status_start_time", js, lambda t: float(started) if t >= started else None)
    sc.add("kube_job_status_active", js,
           lambda t: None if t < started else 1.0 if ended is None or t < ended else 0.0)
    for cond in ("true", "false"):
        sc.add("kube_job_failed", {**js, "condition": cond},
               lambda t, cond=cond: None if t < started else
               float((failed and ended is not None and t >= ended) == (cond == "true")))


def test_a_weekday_job_runs_past_its_next_slot_on_its_own_gap_not_the_shortest(tmp_path: Path) -> None:
    # 0 9 * * 1-5 Europe/Berlin: a Job that starts Friday 09:00 has until Monday 09:00 (the shortest
    # gap, a day, would call it overrunning all Saturday); a Monday Job has until Tuesday 09:00
    berlin = ZoneInfo("Europe/Berlin")
    friday, saturday = datetime(2027, 1, 8, 9, tzinfo=berlin), datetime(2027, 1, 9, 9, tzinfo=berlin)
    monday, tuesday = datetime(2027, 1, 11, 9, tzinfo=berlin), datetime(2027, 1, 12, 9, tzinfo=berlin)
    sc = Scenario(1800, _u(datetime(2027, 1, 8, tzinfo=UTC)), _u(datetime(2027, 1, 13, tzinfo=UTC)))
    _job_series(sc, "weekday", "weekday-fri", _u(friday) + 5, _u(monday) - 3600)  # ends Monday 08:00
    _job_series(sc, "weekday", "weekday-mon", _u(monday) + 5, None)  # still running on Tuesday
    for t in (saturday, saturday + timedelta(hours=12), monday - timedelta(hours=1, minutes=30)):
        sc.quiet(t.astimezone(UTC), OVERRUN)
    sc.quiet((tuesday - timedelta(minutes=30)).astimezone(UTC), OVERRUN)
    sc.expect((tuesday + timedelta(minutes=30)).astimezone(UTC), OVERRUN,
              _labels("weekday", "overrun", job_name="weekday-mon"))
    rules = al.build([_cj("weekday", "0 9 * * 1-5", "Europe/Berlin")], datetime(2026, 12, 3, tzinfo=UTC),
                     al.AlertOptions(margin=600, severities=SEV)).groups
    _run(sc, rules, tmp_path, only=(OVERRUN,))


def test_a_monthly_job_gets_the_month_in_progress_as_its_window(tmp_path: Path) -> None:
    # 0 3 1 * *: January and February ran (5 min each); March 1 was not started
    monthly = [_u(datetime(2027, m, 1, 3, tzinfo=UTC)) for m in (1, 2)]
    sc = Scenario(600, _u(datetime(2027, 1, 31, tzinfo=UTC)), _u(datetime(2027, 3, 1, 4, tzinfo=UTC)))
    _cronjob_series(sc, "monthly", [s + 300 for s in monthly], monthly)
    sc.quiet(datetime(2027, 1, 31, 23, tzinfo=UTC), NO_SUCCESS, NOT_SCHEDULED)  # a 31-day month in progress
    sc.quiet(datetime(2027, 3, 1, 3, 10, tzinfo=UTC), NO_SUCCESS, NOT_SCHEDULED)
    # due at 03:00 + 10 min margin (scheduled) and at February's success + 28 days + 15 min grace (success)
    sc.expect(datetime(2027, 3, 1, 3, 20, tzinfo=UTC), NOT_SCHEDULED, _labels("monthly", "not-scheduled"))
    sc.quiet(datetime(2027, 3, 1, 3, 20, tzinfo=UTC), NO_SUCCESS)
    sc.expect(datetime(2027, 3, 1, 3, 30, tzinfo=UTC), NO_SUCCESS, _labels("monthly", "missed"))
    rules = al.build([_cj("monthly", "0 3 1 * *")], datetime(2026, 12, 3, tzinfo=UTC),
                     al.AlertOptions(margin=600, expected_duration=300, severities=SEV)).groups
    _run(sc, rules, tmp_path, only=(NO_SUCCESS, NOT_SCHEDULED))


def test_frequent_suspended_failed_and_overrunning_cronjobs(tmp_path: Path) -> None:
    t0 = datetime(2027, 2, 1, tzinfo=UTC)
    sc = Scenario(600, _u(t0), _u(t0 + timedelta(days=3)))
    H = timedelta(hours=1)

    # */10: runs (1 min each) until 12:00 on the second day, then nothing
    frequent = [_u(t0) + 600 * i for i in range(int(1.5 * 144) + 1)]
    _cronjob_series(sc, "frequent", [s + 60 for s in frequent], frequent)
    sc.quiet(t0 + 36 * H + timedelta(minutes=20), NO_SUCCESS)
    sc.expect(t0 + 36 * H + timedelta(minutes=30), NO_SUCCESS, _labels("frequent", "missed"))

    # */10, suspended from the second day 00:00: no missed-run alert while suspended; suspended too
    # long once that has lasted 24 h
    paused = [_u(t0) + 600 * i for i in range(144)]
    _cronjob_series(sc, "paused", [s + 60 for s in paused], paused,
                    suspended=lambda t: 1.0 if t >= _u(t0 + 24 * H) else 0.0)
    sc.quiet(t0 + 30 * H, NOT_SCHEDULED)
    sc.quiet(t0 + 47 * H + timedelta(minutes=50), SUSPENDED)
    sc.expect(t0 + 48 * H + timedelta(minutes=10), SUSPENDED, _labels("paused", "suspended"))

    # hourly, three Jobs: the second failed, the third (newest) succeeded
    # hourly, a Job that started at 05:00 and is still active two hours later
    jobs = [("batch", "batch-1", t0 + 1 * H, t0 + 1 * H + timedelta(minutes=2), False),
            ("batch", "batch-2", t0 + 2 * H, t0 + 2 * H + timedelta(minutes=10), True),
            ("batch", "batch-3", t0 + 3 * H, t0 + 3 * H + timedelta(minutes=2), False),
            ("slow", "slow-1", t0 + 5 * H, None, False)]
    for owner, job, started, ended, failed in jobs:
        _job_series(sc, owner, job, _u(started), _u(ended) if ended else None, failed)
    sc.quiet(t0 + 2 * H, FAILED)
    sc.expect(t0 + 2 * H + timedelta(minutes=20), FAILED, _labels("batch", "failed", job_name="batch-2"))
    sc.quiet(t0 + 3 * H + timedelta(minutes=10), FAILED)  # a newer Job: the failure is history
    sc.quiet(t0 + 5 * H + timedelta(minutes=50), OVERRUN)
    sc.expect(t0 + 6 * H + timedelta(minutes=10), OVERRUN, _labels("slow", "overrun", job_name="slow-1"))

    rules = al.build([_cj("frequent", "*/10 * * * *"), _cj("paused", "*/10 * * * *"),
                      _cj("batch", "0 * * * *"), _cj("slow", "0 * * * *")], datetime(2027, 1, 31, tzinfo=UTC),
                     al.AlertOptions(margin=600, expected_duration=300, max_suspend=86400, severities=SEV)).groups
    _run(sc, rules, tmp_path)
