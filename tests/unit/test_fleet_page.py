"""The fleet health page (`cronctl history --html`, issue 28 item 4): the pure model
(cronctl/bundle/fleet.py: rows, grouping, columns, cells, hover titles), the rendered HTML (colours
by verdict, escaping of hostile text, the Content-Security-Policy) and the CLI on a dump.

Histories are written in the shape of ``history -o json`` (checked against its schema); the CLI
tests judge a real dump. What a browser makes of the page is in test_fleet_browser.py."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import stat
from datetime import datetime, timedelta, timezone
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from cronctl.bundle.fleet import MAX_COLUMNS, SEVERITY, bucket_for, cluster_of, fleet_page, worst
from cronctl.bundle.render import COLOURS, render_fleet_html
from cronctl.history import DUPLICATE, LOST, VERDICTS

UTC = timezone.utc
ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "cronctl" / "data" / "history.schema.json").read_text())
NOW = datetime(2026, 12, 2, 11, 35, tzinfo=UTC)
DUMP = ROOT / "tests" / "golden" / "bundle" / "incident-004.dump.yaml"
DUMP_NOW = "2026-12-02T11:35:00Z"
# what a browser would do with it if it became markup (as in test_report_browser.py), and what a
# terminal would (an OSC 52 clipboard write, a bidi override)
PWN = "document.documentElement.setAttribute('data-pwned','{n}')"
ATTACKS = [f"<img src=x onerror=\"{PWN.format(n=1)}\">", f"<script>{PWN.format(n=2)}</script>",
           f"<svg onload=\"{PWN.format(n=3)}\"></svg>", "</td></tr></table><h1 id=forged>forged</h1><table><tr><td>",
           "\" onmouseover=\"alert(1)\" x=\"", "' style='background:url(https://evil.example/x)'",
           "]]><!--", "&lt;b&gt;"]
HOSTILE = "\x1b]52;c;ZXZpbA==\x07 \u202eevil " + " ".join(ATTACKS)


def z(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def history(name: str, slots: list[tuple[datetime, str]], *, ns: str = "shop", since: datetime | None = None,
            ledger: str | None = None, reason: str = "why {v}", schedule: str = "0 * * * *",
            error: str | None = None) -> dict[str, Any]:
    """One history as `cronctl history -o json` gives it (the fields the schema requires). A slot's
    verdict may name its outcome after a slash (``ran/failed``); else a slot with a Job succeeded."""
    since = since or NOW - timedelta(days=7)
    rows = []
    for t, spec in slots:
        v, _, o = spec.partition("/")
        jobs = [] if v in LOST or v == "due" else [f"{name}-{int(t.timestamp()) // 60}"] + (
            [f"{name}-again"] if v in DUPLICATE else [])
        outcome = o or ("none" if not jobs else "running" if v == "running" else "succeeded")
        rows.append({"slot": z(t), "slot_local": z(t), "verdict": v, "outcome": outcome,
                     "failure_reason": "BackoffLimitExceeded" if outcome == "failed" else None, "jobs": jobs,
                     "job_details": [], "start_delay_seconds": None, "duration_seconds": None,
                     "reason": reason.format(v=v), "manual_beside": [], "manual_beside_total": 0})
    counts = {v: 0 for v in VERDICTS}
    outcomes = {o: 0 for o in ("succeeded", "failed", "running", "unknown", "none")}
    for r in rows:
        counts[r["verdict"]] += 1
        outcomes[r["outcome"]] += 1
    h: dict[str, Any] = {
        "namespace": ns, "name": name, "schedule": schedule, "time_zone": None, "zone": "UTC",
        "concurrency_policy": "Forbid", "starting_deadline_seconds": None, "suspended": False,
        "last_schedule_time": None, "error": error,
        "window": None if error else {"since": z(since), "until": z(NOW), "limited_by": "--since", "evidence_from": None},
        "slots": [] if error else rows, "manual_runs": [], "counts": counts, "outcome_counts": outcomes, "controller_now": None, "notes": [],
    }
    if ledger is not None:
        h["ledger"] = ledger
    jsonschema.validate({"now": z(NOW), "missing": [], "cronjobs": [h]}, SCHEMA)
    return h


def every(minutes: int, verdict: str = "ran", *, days: int = 7, odd: dict[datetime, str] | None = None
          ) -> list[tuple[datetime, str]]:
    """The slots of a schedule every ``minutes`` over the last ``days`` (``odd``: other verdicts)."""
    start = NOW - timedelta(days=days)
    t = start + timedelta(seconds=-int(start.timestamp()) % (minutes * 60))
    out = []
    while t <= NOW:
        out.append((t, (odd or {}).get(t, verdict)))
        t += timedelta(minutes=minutes)
    return out


def rows_of(page: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for c in page["clusters"] for ns in c["namespaces"] for r in ns["rows"]]


def the_row(page: dict[str, Any], name: str) -> dict[str, Any]:
    return next(r for r in rows_of(page) if r["name"] == name)


# --- the model -----------------------------------------------------------------------------------

def test_every_verdict_has_a_severity_and_a_colour_lost_before_failed_before_doubled_before_late() -> None:
    assert sorted(SEVERITY) == sorted([*VERDICTS, "failed"]) and len(SEVERITY) == len(set(SEVERITY))
    rank = {v: i for i, v in enumerate(SEVERITY)}
    assert max(rank[v] for v in LOST) < rank["failed"] < min(rank[v] for v in DUPLICATE)
    assert max(rank[v] for v in DUPLICATE) < rank["ran-late"] < rank["ran"] == len(SEVERITY) - 1
    assert worst(["ran", "ran-late", "duplicate", "ran"]) == "duplicate"
    assert worst(["ran", "missed-suspended", "dst-doubled"]) == "missed-suspended"
    assert set(VERDICTS) <= set(COLOURS)


def test_one_row_per_cronjob_grouped_by_cluster_then_namespace() -> None:
    hs = [history("b-sync", every(60), ns="shop"), history("a-report", every(60), ns="shop"),
          history("clean", every(60), ns="ops"),
          history("gone", every(60), ns="shop", ledger="prod-eu-1; deleted 2026-12-01T08:00:00Z"),
          history("kept", every(60), ns="shop", ledger="prod-eu-1")]
    page = fleet_page(hs, now=NOW, here="kind-dev")
    assert [c["name"] for c in page["clusters"]] == ["kind-dev", "prod-eu-1"]
    live, eu = page["clusters"]
    assert [(ns["name"], [r["name"] for r in ns["rows"]]) for ns in live["namespaces"]] == [
        ("ops", ["clean"]), ("shop", ["a-report", "b-sync"])]
    assert [(ns["name"], [r["name"] for r in ns["rows"]]) for ns in eu["namespaces"]] == [("shop", ["gone", "kept"])]
    assert page["cronjobs"] == len(rows_of(page)) == 5
    assert sorted(r["id"] for r in rows_of(page)) == list(range(5))  # anchors are positions, not data
    gone = the_row(page, "gone")
    assert gone["deleted"] == "2026-12-01T08:00:00Z" and "deleted 2026-12-01T08:00:00Z" in gone["summary"]
    assert cluster_of({"ledger": "a; deleted x"}, "here") == ("a; deleted x", None)  # not the recorder's form
    assert cluster_of({}, "here") == ("here", None)


def test_an_hourly_cronjob_has_a_cell_per_slot_where_the_verdict_changes() -> None:
    odd = every(60)[100][0]
    page = fleet_page([history("h", every(60, odd={odd: "missed"}), reason="no Job: {v}")], now=NOW)
    g = page["grid"]
    assert g["size"] == 3600 and g["words"] == "1 hour" and g["columns"] <= MAX_COLUMNS
    cells = the_row(page, "h")["cells"]
    assert sum(c["span"] for c in cells) == g["columns"]  # the row fills the grid
    assert [c["verdict"] for c in cells if c["kind"] == "slots"] == ["ran", "missed", "ran"]
    missed = next(c for c in cells if c["verdict"] == "missed")
    assert missed["span"] == 1 and missed["slots"] == 1
    assert missed["title"] == f"{odd:%Y-%m-%d %H:%M} UTC: missed (no Job)\nno Job: missed"
    ran = [c for c in cells if c["verdict"] == "ran"]
    assert sum(c["slots"] for c in ran) == len(every(60)) - 1
    assert ran[0]["title"] == f"{every(60)[0][0]:%Y-%m-%d %H:%M} to {odd:%Y-%m-%d %H:%M} UTC: 100 slots, ran 100"


def test_a_ten_minute_cronjob_is_bucketed_by_the_hour_and_a_column_takes_its_worst_verdict() -> None:
    slots = every(10)
    assert len(slots) == 1008
    hour = slots[300][0].replace(minute=0)
    odd = {hour + timedelta(minutes=10): "ran-late", hour + timedelta(minutes=40): "missed-deadline"}
    h = history("ten", every(10, odd=odd), schedule="*/10 * * * *", reason="because {v}")
    page = fleet_page([h], now=NOW)
    cells = the_row(page, "ten")["cells"]
    assert len(cells) == 3 and sum(c["slots"] for c in cells) == 1008
    bad = cells[1]
    assert bad["verdict"] == "missed-deadline" and bad["span"] == 1 and bad["slots"] == 6
    lines = bad["title"].split("\n")
    assert lines[0] == (f"{hour:%Y-%m-%d %H:%M} to {hour + timedelta(hours=1):%H:%M} UTC: 6 slots, "
                        "missed-deadline 1, ran-late 1, ran 4")
    assert lines[1:] == [f"{hour + timedelta(minutes=40):%Y-%m-%d %H:%M} UTC: missed-deadline (no Job)",
                         "because missed-deadline"]


def test_a_healthy_cronjob_every_minute_is_one_cell_and_no_row_has_more_cells_than_columns() -> None:
    calm = history("calm", every(1), schedule="* * * * *")
    assert len(calm["slots"]) == 10081
    # the worst case: the verdict changes in every column
    flip = history("flip", [(t, "ran" if int(t.timestamp()) // 3600 % 2 else "ran-late") for t, _v in every(15)])
    page = fleet_page([calm, flip], now=NOW)
    assert [c["kind"] for c in the_row(page, "calm")["cells"]] == ["slots"]
    assert len(the_row(page, "flip")["cells"]) == page["grid"]["columns"]


def test_a_lost_stretch_names_its_worst_slots_and_counts_the_rest() -> None:
    odd = {t: "missed-suspended" for t, _v in every(10)[200:260]}
    page = fleet_page([history("s", every(10, odd=odd), reason="suspended by {v}")], now=NOW)
    bad = next(c for c in the_row(page, "s")["cells"] if c["verdict"] == "missed-suspended")
    lines = bad["title"].split("\n")
    assert f"{bad['slots']} slots, missed-suspended 60" in lines[0]
    assert lines[-1] == "... and 57 more missed-suspended" and len(lines) == 1 + 3 * 2 + 1


def test_a_cell_whose_worst_is_only_late_names_one_late_slot() -> None:
    hour = every(10)[300][0].replace(minute=0)
    odd = {hour + timedelta(minutes=m): "ran-late" for m in (0, 20, 30)}
    page = fleet_page([history("late", every(10, odd=odd), reason="late because {v}")], now=NOW)
    cell = next(c for c in the_row(page, "late")["cells"] if c["verdict"] == "ran-late")
    assert cell["title"].split("\n") == [
        f"{hour:%Y-%m-%d %H:%M} to {hour + timedelta(hours=1):%H:%M} UTC: 6 slots, ran-late 3, ran 3",
        f"{hour:%Y-%m-%d %H:%M} UTC: ran-late (Job late-{int(hour.timestamp()) // 60})", "late because ran-late",
        "... and 2 more ran-late"]


def test_columns_before_a_cronjobs_window_are_marked_not_judged_and_an_error_has_no_cells() -> None:
    young = NOW - timedelta(days=2, minutes=5)
    page = fleet_page([history("old", every(60)), history("young", every(60, days=2), since=young),
                       history("broken", [], error="bad minute '61' in '61 * * * *'")], now=NOW)
    first = the_row(page, "young")["cells"][0]
    assert first["kind"] == "unjudged" and first["span"] >= 5 * 24 - 1 and z(young) in first["title"]
    broken = the_row(page, "broken")
    assert broken["cells"] == [] and broken["status"] == "error" and "61" in broken["summary"]


@pytest.mark.parametrize("span, size", [(timedelta(minutes=30), 60), (timedelta(hours=6), 300),
                                        (timedelta(days=1), 600), (timedelta(days=7), 3600),
                                        (timedelta(days=30), 21600), (timedelta(days=90), 86400)])
def test_the_column_size_keeps_any_window_within_the_column_limit(span: timedelta, size: int) -> None:
    assert bucket_for(span) == size
    page = fleet_page([history("x", [], since=NOW - span)], now=NOW)
    g = page["grid"]
    assert g["size"] == size and g["columns"] <= MAX_COLUMNS
    assert sum(a["span"] for a in g["axis"]) == g["columns"] and len(g["axis"]) <= 13


def test_the_summary_counts_lost_and_doubled_slots_and_the_worst_cronjobs_come_first() -> None:
    hs = [history("fine", every(60)),
          history("twice", every(60, odd={every(60)[5][0]: "duplicate", every(60)[9][0]: "dst-doubled"})),
          history("lossy", every(60, odd={t: "missed" for t, _v in every(60)[:3]}))]
    page = fleet_page(hs, now=NOW)
    n = len(every(60))
    assert the_row(page, "fine")["summary"] == f"none lost, failed or doubled of {n} slots"
    assert the_row(page, "twice")["summary"] == f"duplicate 2 of {n} slots"
    assert the_row(page, "lossy")["summary"] == f"lost 3 of {n} slots"
    assert [r["name"] for r in page["problems"]] == ["lossy", "twice"]
    assert (page["lost"], page["duplicate"], page["lost_cronjobs"], page["duplicate_cronjobs"]) == (3, 2, 1, 1)
    assert page["counts"]["ran"] == 3 * n - 5


# --- the HTML ------------------------------------------------------------------------------------

class Page(HTMLParser):
    """Elements, attributes, the text, every title, the ``<style>`` and the CSP of a page."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: dict[str, int] = {}
        self.attrs: list[tuple[str, str, str]] = []
        self.text: list[str] = []
        self.style = ""
        self.csp = ""
        self.rows: list[list[tuple[str, str]]] = []  # (class, title) of each CronJob row's cells
        self._in: str | None = None
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] = self.tags.get(tag, 0) + 1
        a = {k: v or "" for k, v in attrs}
        self.attrs += [(tag, k, v) for k, v in a.items()]
        if tag == "meta" and a.get("http-equiv", "").lower() == "content-security-policy":
            self.csp = a["content"]
        if tag == "tr" and a.get("id", "").startswith("r"):
            self.rows.append([])
        if tag == "i" and self.rows and "k" not in a.get("class", "").split() and self._in != "th":
            self.rows[-1].append((a.get("class", ""), a.get("title", "")))
        if tag in ("style", "th"):
            self._in = tag

    def handle_endtag(self, tag: str) -> None:
        if tag in ("style", "th"):
            self._in = None

    def handle_data(self, data: str) -> None:
        if self._in == "style":
            self.style += data
        else:
            self.text.append(data)


def hostile_page() -> tuple[dict[str, Any], str]:
    hs = [history("web" + ATTACKS[0], every(60, odd={every(60)[7][0]: "missed"}), ns="ns" + ATTACKS[3],
                  reason="reason " + HOSTILE, schedule="0 * * * *" + ATTACKS[1]),
          history("ledger-side", every(60), ledger="eu" + ATTACKS[2] + "; deleted 2026-12-01T08:00:00Z")]
    page = fleet_page(hs, now=NOW, here="ctx" + ATTACKS[4], source="the dump " + ATTACKS[5])
    return page, render_fleet_html(page)


def test_the_effects_cronctl_claim_recorded_are_in_the_summary_and_the_hover() -> None:
    # issue 36 item 2: a slot with two Jobs and one effect is not the incident two effects are; the
    # history rows carry the effect (history --ledger with claim rows), the page says it
    slots = every(60, days=1, odd={NOW.replace(minute=0) - timedelta(hours=3): "duplicate",
                                   NOW.replace(minute=0) - timedelta(hours=5): "ran"})
    h = history("pay", slots)
    effects = {"done": 0}
    for row in h["slots"]:
        if row["verdict"] == "duplicate":
            eff = {"effect": "refused-duplicate", "refusals": 1}
        elif row["slot"] == z(NOW.replace(minute=0) - timedelta(hours=5)):
            eff = {"effect": "ambiguous", "refusals": 0}
        else:
            eff = {"effect": "done", "refusals": 0}
        effects[eff["effect"]] = effects.get(eff["effect"], 0) + 1
        row["effect"] = {**eff, "attempt": 1, "holder": row["jobs"][0], "completed": None, "refused_by": None}
    jsonschema.validate({"now": z(NOW), "missing": [], "cronjobs": [h]}, SCHEMA)
    (row,) = rows_of(fleet_page([h], now=NOW))
    assert row["summary"].endswith(f"; effects ambiguous 1, refused-duplicate 1, done {effects['done']}"), row["summary"]
    titles = [c["title"] for c in row["cells"] if c["kind"] == "slots"]
    assert any("duplicate" in t and "effect refused-duplicate, 1 claimer(s) refused" in t for t in titles), titles
    # without claim rows nothing is said of effects
    (plain,) = rows_of(fleet_page([history("pay", slots)], now=NOW))
    assert "effect" not in plain["summary"] and not any("effect" in c["title"] for c in plain["cells"] if c.get("title"))


def test_every_cronjob_is_a_table_row_whose_cells_are_coloured_by_verdict() -> None:
    odd = {every(60)[3][0]: "missed", every(60)[9][0]: "duplicate", every(60)[20][0]: "ran-late"}
    page = fleet_page([history("a", every(60, odd=odd)), history("b", every(60)),
                       history("c", every(60), ledger="other")], now=NOW)
    html = render_fleet_html(page)
    p = Page(html)
    assert len(p.rows) == 3
    model = {r["id"]: r for r in rows_of(page)}
    row_a = p.rows[[r["name"] for r in rows_of(page)].index("a")]
    assert len(row_a) == len(model[0]["cells"])
    classes = [c.split()[0] for c, _t in row_a]
    want = [f"v{VERDICTS.index(c['verdict'])}" if c["kind"] == "slots" else "e" for c in model[0]["cells"]]
    assert classes == want
    # the stylesheet gives each verdict's class the timeline's colour: lost red, doubled purple
    for v in VERDICTS:
        assert f".v{VERDICTS.index(v)}{{background:{COLOURS[v]}}}" in p.style, v
    assert {COLOURS[v] for v in LOST} == {"#dc2626"} and {COLOURS[v] for v in DUPLICATE} == {"#9333ea"}
    # a span class for every width a cell can have
    for n in range(2, page["grid"]["columns"] + 1):
        assert f".s{n}{{grid-column:span {n}}}" in p.style
    text = "".join(p.text)
    assert "169 columns of 1 hour each" in text and "worst verdict" in text  # the page says how it buckets
    for v in VERDICTS:  # the legend, with the fleet's count of each verdict
        assert f"({v})" in text


def test_hostile_names_reasons_and_cluster_names_stay_text() -> None:
    page, html = hostile_page()
    p = Page(html)
    # nothing became an element or an attribute
    assert p.tags.get("script", 0) == 0 and p.tags.get("img", 0) == 0 and p.tags.get("svg", 0) == 0
    assert p.tags.get("h1") == 1 and not any(k == "id" and v == "forged" for _t, k, v in p.attrs)
    assert not any(k.startswith("on") or k in ("src", "style", "x") for _t, k, v in p.attrs)
    assert {v for t, k, v in p.attrs if k == "href"} <= {f"#r{i}" for i in range(2)}
    assert len(p.rows) == 2
    text = "".join(p.text)
    for a in ATTACKS[:6]:
        assert a in text, a  # shown as it is written
    titles = [t for row in p.rows for _c, t in row]
    assert any("reason \\x1b]52;c;ZXZpbA==\\x07 \\u202eevil " + ATTACKS[0] in t for t in titles)
    # terminal controls and bidi are shown as escapes, in the text and in the hover titles
    assert "\x1b" not in html and "\u202e" not in html and "\x07" not in html
    assert f"Cluster eu{ATTACKS[2]}" in text and f"Cluster ctx{ATTACKS[4]}" in text


def test_the_page_allows_only_its_own_stylesheet_by_hash_and_no_script_or_request() -> None:
    _page, html = hostile_page()
    p = Page(html)
    rules = dict(r.strip().split(" ", 1) for r in p.csp.split(";"))
    assert rules["default-src"] == "'none'" and rules["script-src"] == "'none'" and rules["img-src"] == "'none'"
    assert rules["base-uri"] == "'none'" and rules["form-action"] == "'none'" and rules["object-src"] == "'none'"
    digest = base64.b64encode(hashlib.sha256(p.style.encode("utf-8")).digest()).decode()
    assert rules["style-src"] == f"'sha256-{digest}'"  # the one <style>, byte for byte
    assert "unsafe" not in p.csp
    assert p.tags.get("style") == 1 and p.tags.get("link", 0) == 0 and "<script" not in html.lower()
    assert not any(k == "style" for _t, k, _v in p.attrs)  # inline style attributes would be refused
    assert not re.search(r"(?:src|href)=\"(?!#r\d)", html)  # no request, no link out
    assert html.index("Content-Security-Policy") < html.index("<style>") < html.index("<title>") + 2000


# --- the CLI ------------------------------------------------------------------------------------

def _dump_args(*more: str) -> list[str]:
    return ["history", "--from-dump", str(DUMP), "--now", DUMP_NOW, *more]


def test_html_writes_a_private_page_and_names_it_instead_of_the_table(run_cli: Any, tmp_path: Path) -> None:
    path = tmp_path / "fleet.html"
    r = run_cli(*_dump_args("--html", str(path)))
    assert r.exit_code == 0, r.stderr
    assert r.stdout.startswith(f"page written to {path}: 1 CronJob(s), 11 slot(s); lost 1 in 1 CronJob(s)")
    assert len(r.stdout.splitlines()) == 1  # the table is replaced
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    p = Page(path.read_text())
    assert len(p.rows) == 1 and "mp-orders-sync" in "".join(p.text) and p.csp
    # -o text keeps the table beside the page; a second run replaces the page
    path.write_text("old")
    r = run_cli(*_dump_args("--html", str(path), "-o", "text"))
    assert r.exit_code == 0 and "slots since" in r.stdout and path.read_text().startswith("<!DOCTYPE html>")
    assert sorted(os.listdir(tmp_path)) == ["fleet.html"]  # no temp file left


def test_html_with_json_keeps_stdout_json_and_the_line_goes_to_stderr(run_cli: Any, tmp_path: Path) -> None:
    r = run_cli(*_dump_args("--html", str(tmp_path / "p.html"), "-o", "json", "--fail-on", "lost"))
    assert r.exit_code == 8  # --fail-on still decides the exit, after the page is written
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, SCHEMA)
    assert "page written to" in r.stderr and (tmp_path / "p.html").is_file()


def test_html_dash_writes_the_page_to_stdout_and_refuses_another_output_there(run_cli: Any) -> None:
    r = run_cli(*_dump_args("--html", "-"))
    assert r.exit_code == 0 and r.stdout.startswith("<!DOCTYPE html>") and r.stdout.rstrip().endswith("</html>")
    r = run_cli(*_dump_args("--html", "-", "-o", "json"))
    assert r.exit_code == 2 and "--html -" in r.stderr and r.stdout == ""


def test_html_into_a_missing_directory_or_onto_a_directory_is_bad_input(run_cli: Any, tmp_path: Path) -> None:
    r = run_cli(*_dump_args("--html", str(tmp_path / "no" / "p.html")))
    assert r.exit_code == 5 and "does not exist" in r.stderr and "nothing was written" in r.stderr
    (tmp_path / "d").mkdir()
    r = run_cli(*_dump_args("--html", str(tmp_path / "d")))
    assert r.exit_code == 5 and (tmp_path / "d").is_dir() and os.listdir(tmp_path / "d") == []
    assert sorted(os.listdir(tmp_path)) == ["d"]


# --- the page of a fleet, one CronJob at a time --------------------------------------------------

def test_the_streamed_page_is_the_page_of_every_history_and_masks_what_a_later_cronjob_taught() -> None:
    """history --html alone draws each history as its row and drops it (cronctl.cli.history.page_rows):
    the page must be the one fleet_page makes of every history held at once, masked after all were read.
    A secret that only CronJob b's failure shows (password=...) is echoed alone in a's, drawn first
    (a condition's reason is anyone's text: whoever can write a Job's status)."""
    from builders import T, cronjob, job, slotname, stamp

    from cronctl.bundle.fleet import Page
    from cronctl.cli.history import page_rows
    from cronctl.history import Options
    from cronctl.procedure.history import Fleet, prepare_all
    from cronctl.redact import Redactor

    secret = "Sup3rS3cretValue99"

    def failed(cj: str, t: datetime, reason: str) -> dict[str, Any]:
        return job(slotname(t, cj), slot=t, created=t + timedelta(seconds=1), cj=cj, cj_uid=f"uid-{cj}",
                   conditions=[{"type": "Failed", "status": "True", "reason": reason, "message": "Job failed",
                                "lastTransitionTime": stamp(t + timedelta(seconds=30))}])

    cjs = [cronjob("*/5 * * * *", name=n, uid=f"uid-{n}") for n in ("b", "a")]
    jobs = [failed("a", T(10, 0), f"gave up after {secret}"), failed("b", T(10, 0), f"login refused: password={secret}")]
    opts = Options(now=T(10, 30))

    def fleet() -> Fleet:
        return Fleet(prepare_all(cjs, jobs, [], opts), opts)

    held = list(fleet())
    assert secret in json.dumps(held)  # the histories hold it: the test means something
    red = Redactor()
    red.data_in_place(held)
    want = fleet_page(held, now=opts.now)
    streamed = fleet()
    page = Page(streamed.since, now=opts.now)
    bad = page_rows(streamed, Redactor(), page, {"lost"})
    got = page.model()
    assert got == want and [r["name"] for r in got["clusters"][0]["namespaces"][0]["rows"]] == ["a", "b"]
    assert got["failed"] == 2 and secret not in json.dumps(got)
    assert bad == [f"ns/{n} {s['slot']} {s['verdict']}" for h in held for s in h["slots"]
                   if s["verdict"] in LOST for n in (h["name"],)]
    with pytest.raises(RuntimeError):
        list(streamed)  # judged once: each history is dropped when handed out
