"""bundle.json -> REPORT.md and report.html (jinja2, StrictUndefined), with an inline SVG timeline.

Pure apart from reading the packaged templates (cronctl/templates/bundle/). The SVG geometry is
computed here (:func:`timeline`), so the template only draws what it is given and the geometry
is tested without a browser.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from datetime import datetime, timedelta
from typing import Any

from cronctl.history import LOST
from cronctl.model import job_interval
from cronctl.textsafe import md_code, md_text, visible
from cronctl.timeutil import human_duration, local_and_utc, parse_rfc3339

Obj = dict[str, Any]

#: colours of the timeline; the legend in the template uses the same names
COLOURS = {
    "scheduled": "#2563eb", "manual": "#ea580c", "failed": "#dc2626", "overlap": "#dc2626",
    "ran": "#16a34a", "late": "#d97706", "lost": "#dc2626", "duplicate": "#9333ea",
    "pending": "#6b7280", "unknown": "#9ca3af", "suspended": "#6b7280",
    # the slot verdicts (cronctl.history): each in its legend group
    "ran-late": "#d97706", "running": "#2563eb", "skipped-forbid": "#dc2626", "missed-deadline": "#dc2626",
    "missed-suspended": "#dc2626", "missed-too-many": "#dc2626", "missed": "#dc2626", "dst-skipped": "#6b7280",
    "dst-doubled": "#9333ea", "evidence-gone": "#9ca3af", "due": "#6b7280",
}
MAX_EVENTS = 300  # events listed in the reports (the latest); bundle.json has all
MAX_ROWS = 60  # Jobs drawn; the latest are kept, the caption says how many were left out


@dataclass(frozen=True)
class Geometry:
    width: int = 1200
    left: int = 260  # label column
    right: int = 20
    top: int = 56  # tick band above the bars
    row: int = 22
    bar: int = 14


def _t(s: str | None) -> datetime | None:
    return parse_rfc3339(s) if s else None


def timeline(cj: Obj, *, geo: Geometry = Geometry()) -> Obj:
    """The drawing of one CronJob's analysis: axis, scheduled ticks, one bar per Job, overlaps.

    All coordinates are numbers rounded to 0.1 px; the axis is labelled in UTC and, for a CronJob
    in another zone, in that zone too (a band above); hover titles give both. The time span runs
    from the earliest tick or Job start to ``now`` (plus 3% margin on each side).
    """
    zone = str(cj["schedule"].get("zone") or "UTC")
    local = zone not in ("UTC", "Etc/UTC") and _zone(zone) is not None
    geo = replace(geo, top=geo.top + 14) if local else geo  # room for the local labels

    def when(s: str | None) -> str:
        t = _t(s)
        return local_and_utc(t, zone) if t else ""

    now = _t(cj["schedule"]["now"])
    assert now is not None
    jobs = cj["jobs"][-MAX_ROWS:]
    omitted = len(cj["jobs"]) - len(jobs)
    starts = [_t(j["started"] or j["created"]) for j in jobs]
    occ_times = [_t(o["expected"]) for o in cj["occurrences"]]
    candidates = [t for t in starts + occ_times if t is not None]
    t0 = min(candidates, default=now - timedelta(hours=1))
    t1 = now
    if t1 <= t0:
        t0 = t1 - timedelta(minutes=10)
    pad = (t1 - t0) * 0.03
    t0, t1 = t0 - pad, t1 + pad
    span = (t1 - t0).total_seconds()
    plot_w = geo.width - geo.left - geo.right

    def x(t: datetime) -> float:
        return round(geo.left + (t - t0).total_seconds() / span * plot_w, 1)

    height = geo.top + geo.row * max(1, len(jobs)) + 60
    rows: list[Obj] = []
    intervals: list[tuple[datetime, datetime]] = []  # each drawn Job's bar
    for i, j in enumerate(jobs):
        # the interval the overlaps were found on (a running Job: through the current second)
        s, e = job_interval(_t(j["started"]), _t(j["created"]), _t(j["completed"]), running=j["running"], now=now)
        y = geo.top + i * geo.row + (geo.row - geo.bar) / 2
        intervals.append((s, e))
        x0 = x(s)
        w = max(x(e) - x0, 2.0)  # at least 2 px, so a Job of no length still shows
        rows.append({
            "name": j["name"], "origin": j["origin"], "outcome": j["outcome"], "running": j["running"],
            "x": x0, "w": round(w, 1), "end_x": round(x0 + w, 1),
            "y": round(y, 1), "h": geo.bar,
            "label_y": round(y + geo.bar - 3, 1),
            "fill": COLOURS["manual"] if j["origin"] == "manual" else COLOURS["scheduled"],
            "stroke": COLOURS["failed"] if j["outcome"] == "Failed" else "none",
            "title": visible(f"{j['name']} ({j['origin']}) {when(j['started'] or j['created'])} -> "
                             f"{when(j['completed']) or 'running'} {j['outcome'] or ''}".strip()),
            "created_x": x(_t(j["created"]) or s),
        })
    ticks: list[Obj] = []
    for o in cj["occurrences"]:
        t = _t(o["expected"])
        if t is None or t < t0:
            continue
        # a slot whose run failed is drawn in the failure colour, whatever its verdict (ran is green)
        failed = o.get("slot_outcome") == "failed"
        why = f", failed{': ' + o['failure_reason'] if o.get('failure_reason') else ''}" if failed else ""
        ticks.append({"x": x(t), "verdict": o["verdict"], "colour": COLOURS["failed" if failed else o["verdict"]],
                      # one line: the reason quotes Events (anyone's text), a newline would forge a line
                      "title": visible(f"{when(o['expected'])} {o['verdict']}{why} {o['reason']}".strip()),
                      "lost": o["verdict"] in LOST})
    overlaps: list[Obj] = []
    for ov in cj["overlaps"]:
        os_, oe = _t(ov["start"]), _t(ov["end"])
        assert os_ is not None and oe is not None
        # the drawn Jobs that ran in the span (each of them ran beside another: the group's)
        inside = [i for i, (s, e) in enumerate(intervals) if s < oe and e > os_]
        if not inside:
            continue
        ra, rb = min(inside), max(inside)
        names = ", ".join(n["name"] for n in ov["jobs"]) + (f" and {ov['job_count'] - len(ov['jobs'])} more"
                                         if ov["job_count"] > len(ov["jobs"]) else "")
        overlaps.append({
            "x": x(os_), "w": round(max(x(oe) - x(os_), 2.0), 1),
            "y": round(geo.top + ra * geo.row, 1), "h": round((rb - ra + 1) * geo.row, 1),
            "title": (f"overlap: {ov['job_count']} Jobs ran at the same time for {human_duration(ov['seconds'])} "
                      f"(at most {ov['peak']} at once): {names}"),
        })
    suspended: list[Obj] = []
    for per in cj["suspended_periods"]:
        ps, pe = _t(per["start"]), _t(per["end"]) or now
        if ps is None or pe <= t0:
            continue
        ps = max(ps, t0)
        suspended.append({"x": x(ps), "w": round(max(x(pe) - x(ps), 2.0), 1),
                          "label": "suspended?" if per["inferred"] else "suspended",
                          "title": visible(per["source"])})
    axis = _axis(t0, t1, x, zone if local else None)
    return {
        "width": geo.width, "height": height, "left": geo.left, "top": geo.top,
        "plot_right": geo.width - geo.right, "bottom": geo.top + geo.row * max(1, len(jobs)),
        "rows": rows, "ticks": ticks, "overlaps": overlaps, "axis": axis, "omitted": omitted,
        "suspended": suspended, "zone": zone if local else None,
        "now_x": x(now), "colours": COLOURS,
        "legend_y": geo.top + geo.row * max(1, len(jobs)) + 34,
    }


_STEPS = [timedelta(seconds=s) for s in (10, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800,
                                          21600, 43200, 86400, 172800, 604800)]
#: calendar steps beyond a week, in months: a quarter, half a year, then whole years up to 5,000
_MONTH_STEPS = [1, 3, 6] + [12 * y for y in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000)]
#: the most gridlines an axis gets, whatever the span (a week's step over 8,000 years had drawn
#: 417,000 of them: a 380 MB report.html)
MAX_TICKS = 16


def _axis(t0: datetime, t1: datetime, x: Any, zone: str | None = None) -> list[Obj]:
    """About 6-12 labelled gridlines (never more than :data:`MAX_TICKS`) at a round step (UTC),
    each also labelled in ``zone``: a fixed step up to a week, then whole months or years."""
    span = t1 - t0
    tz = _zone(zone)
    if span / _STEPS[-1] > 12:
        return _calendar_axis(t0, t1, x)
    step = next(s for s in _STEPS if span / s <= 12)
    secs = int(step.total_seconds())
    first = datetime.fromtimestamp((int(t0.timestamp()) // secs + 1) * secs, t0.tzinfo)
    out: list[Obj] = []
    t = first
    fmt = "%H:%M:%S" if secs < 60 else ("%H:%M" if secs < 86400 else "%m-%d")

    def label(at: datetime) -> str:
        text = at.strftime(fmt)
        if secs < 86400 and (at.hour == 0 and at.minute == 0 and at.second == 0 or not out):
            text = at.strftime("%m-%d ") + text
        return text

    while t <= t1 and len(out) < MAX_TICKS:
        out.append({"x": x(t), "label": label(t), "local": label(t.astimezone(tz)) if tz else None})
        t += step
    return out


def _calendar_axis(t0: datetime, t1: datetime, x: Any) -> list[Obj]:
    """Gridlines on the first of a month (every 1, 3 or 6 months) or of a year (every 1, 2, 5, 10,
    ... years), at most 12 of them; labelled ``YYYY-MM`` or ``YYYY`` (UTC)."""
    months0 = t0.year * 12 + t0.month - 1
    months1 = t1.year * 12 + t1.month - 1
    step = next((m for m in _MONTH_STEPS if (months1 - months0) / m <= 12), _MONTH_STEPS[-1])
    fmt = "%Y" if step % 12 == 0 else "%Y-%m"
    out: list[Obj] = []
    k = (months0 // step + 1) * step
    while k <= months1 and len(out) < MAX_TICKS:
        year, month = divmod(k, 12)
        if 1 <= year <= 9999:
            t = datetime(year, month + 1, 1, tzinfo=t0.tzinfo)
            if t0 <= t <= t1:
                # a month or a year is the same in every zone, give or take a day: one label
                out.append({"x": x(t), "label": _year_label(t, fmt), "local": None})
        k += step
    return out


def _year_label(t: datetime, fmt: str) -> str:
    # strftime pads %Y to four digits on glibc only; a year is a year everywhere
    return f"{t.year:04d}" if fmt == "%Y" else f"{t.year:04d}-{t.month:02d}"


def _zone(zone: str | None) -> Any:
    """The ZoneInfo of ``zone`` (None: none, or unknown: the axis stays UTC only)."""
    if not zone:
        return None
    from zoneinfo import ZoneInfo

    try:
        return ZoneInfo(zone)
    except (ValueError, KeyError, OSError):
        return None


@lru_cache(maxsize=2)
def _env(autoescape: bool) -> Any:
    """The jinja2 environment of REPORT.md (False) or report.html (True), made once per process: it
    keeps the compiled templates (compiling the three took about 0.16 s a bundle)."""
    import jinja2

    from importlib.resources import files

    path = str(files("cronctl") / "templates" / "bundle")
    # Every value printed is untrusted (names, annotations, Event text, log notes): in report.html
    # (autoescaped) controls and bidi become visible escapes, in REPORT.md each value is escaped as
    # Markdown text (no raw HTML, links, images or extra table cells) unless a filter already did.
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(path), undefined=jinja2.StrictUndefined, autoescape=autoescape,
        trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
        finalize=_html_value if autoescape else _md_value,
    )
    env.filters["dur"] = lambda s: "" if s is None else human_duration(float(s))
    env.filters["md"] = _md_cell
    env.filters["code"] = lambda v, table=True: _Md(md_code(v, table=table))
    env.filters["dash"] = lambda v: "-" if v is None or v == "" or v == [] else v
    return env


class _Md(str):
    """Text already escaped for Markdown (by a filter): printed as it is."""


def _md_value(v: Any) -> Any:
    return v if isinstance(v, _Md) or not isinstance(v, str) else md_text(v)


def _html_value(v: Any) -> Any:
    # a str subclass (jinja2's Markup) is the template's own HTML; everything else is data
    return visible(v, multiline=True) if type(v) is str else v


def _md_cell(v: Any) -> str:
    """A value safe inside a Markdown table cell: one line, escaped, "-" for nothing."""
    if v is None or v == "":
        return "-"
    if isinstance(v, list):
        v = ", ".join(str(x) for x in v) or "-"
    return _Md(md_text(v))


def render_markdown(doc: Obj) -> str:
    """REPORT.md for a bundle document."""
    return str(_env(False).get_template("REPORT.md.j2").render(doc=doc, verdict_words=VERDICT_WORDS, max_events=MAX_EVENTS))


def render_html(doc: Obj) -> str:
    """report.html (self-contained: inline CSS and SVG, no scripts, no external requests)."""
    timelines = {cj["name"]: timeline(cj) for cj in doc["cronjobs"]}
    return str(_env(True).get_template("report.html.j2").render(
        doc=doc, timelines=timelines, verdict_words=VERDICT_WORDS, colours=COLOURS,
        max_events=MAX_EVENTS))


VERDICT_WORDS = {
    "ran": "ran once", "ran-late": "ran late", "duplicate": "duplicate", "running": "running",
    "skipped-forbid": "skipped (Forbid)", "missed-deadline": "missed (deadline)",
    "missed-suspended": "missed (suspended)", "missed-too-many": "missed (too many)", "missed": "missed",
    "dst-skipped": "DST: skipped", "dst-doubled": "DST: ran twice", "evidence-gone": "evidence gone",
    "due": "due",
    # a verdict this cronctl does not know: a ledger row another writer made (cronctl.ledger.store)
    "unknown": "unknown verdict",
}


def add_reports(files: dict[str, bytes], doc: Obj) -> None:
    """Render both reports into ``files``."""
    files["REPORT.md"] = render_markdown(doc).encode("utf-8")
    files["report.html"] = render_html(doc).encode("utf-8")


# --- the fleet health page (cronctl history --html) ------------------------------------------

#: the fleet page's cell colours, by verdict (the timeline's), and for the columns without a slot
FLEET_EMPTY = "#f3f4f6"
FLEET_UNJUDGED = "#e5e7eb"
#: a slot whose run failed (cronctl.bundle.fleet.FAILED): a darker red than a lost slot's, red all the same
FLEET_FAILED = "#991b1b"


def _fleet_verdicts(page: Obj | None) -> tuple[str, ...]:
    """The verdicts the fleet page colours: the judge's, and ``unknown`` when a ledger row held a
    verdict this cronctl does not know (shown as unknown, issue 39: it broke the page)."""
    from cronctl.history import VERDICTS

    return VERDICTS + (("unknown",) if page is not None and page["counts"].get("unknown") else ())


def fleet_css(columns: int, verdicts: tuple[str, ...] | None = None) -> str:
    """The fleet page's stylesheet: made of numbers and the colour table only (no data), so its
    hash can be the Content-Security-Policy's one allowed style."""
    rules = [
        "body{font-family:system-ui,sans-serif;margin:20px;color:#111827;font-size:13px}",
        "h1{font-size:21px}h2{font-size:18px;border-bottom:1px solid #d1d5db;padding-bottom:3px;margin-top:28px}",
        "h3{font-size:14px;margin:16px 0 4px}",
        "table{border-collapse:collapse;table-layout:fixed}",
        # every namespace's table is as wide as the page and its columns fixed: the time axes of all
        # of them start at one x; the summary wraps in its column instead of being cut
        "table.f{width:100%;min-width:960px}",
        "table.f th,table.f td{border-bottom:1px solid #e5e7eb;padding:2px 6px;text-align:left;vertical-align:middle;"
        "overflow:hidden;white-space:nowrap;text-overflow:ellipsis}",
        "table.f col.n{width:240px}table.f col.s{width:300px}",
        "table.f td.sum{white-space:normal;overflow:visible}",
        "table.f th small{color:#6b7280;font-weight:normal;margin-left:6px}",
        "ul.legend{list-style:none;padding:0;margin:6px 0;display:flex;flex-wrap:wrap;gap:2px 16px}",
        "ul.legend li{white-space:nowrap}ul.legend b{font-weight:normal;color:#6b7280}",
        f".t{{display:grid;grid-template-columns:repeat({columns},1fr);width:100%;height:14px}}",
        ".t i{display:block;min-width:0;border-right:1px solid #fff}",
        ".t.a{height:auto;color:#6b7280;font-size:11px}.t.a i{border-left:1px solid #9ca3af;"
        "border-right:0;padding-left:2px;overflow:hidden;white-space:nowrap;font-style:normal}",
        "i.k{display:inline-block;width:14px;height:12px;vertical-align:middle}",
        f".e{{background:{FLEET_EMPTY}}}.x{{background:{FLEET_UNJUDGED};"
        f"background-image:repeating-linear-gradient(45deg,#fff 0 2px,{FLEET_UNJUDGED} 2px 5px)}}",
        ".lost{color:#dc2626;font-weight:bold}.duplicate{color:#9333ea;font-weight:bold}.error{color:#b45309}",
        f".failed{{color:{FLEET_FAILED};font-weight:bold}}.vf{{background:{FLEET_FAILED}}}",
        ".how{max-width:1100px;color:#374151}",
    ]
    rules += [f".v{i}{{background:{COLOURS[v]}}}" for i, v in enumerate(verdicts or _fleet_verdicts(None))]
    rules += [f".s{n}{{grid-column:span {n}}}" for n in range(2, columns + 1)]
    return "".join(rules)


def csp_for(css: str) -> str:
    """A Content-Security-Policy that allows nothing but the one stylesheet ``css`` (by its
    SHA-256): no script, no request, no form, no base, no plugin; inline style attributes too are
    refused, so the page uses classes only."""
    import base64
    import hashlib

    digest = base64.b64encode(hashlib.sha256(css.encode("utf-8")).digest()).decode("ascii")
    return (f"default-src 'none'; style-src 'sha256-{digest}'; img-src 'none'; script-src 'none'; "
            "object-src 'none'; base-uri 'none'; form-action 'none'")


def render_fleet_html(page: Obj) -> str:
    """The fleet health page (:func:`cronctl.bundle.fleet.fleet_page`) as one self-contained HTML
    file: inline CSS allowed by its hash, no script, every value autoescaped."""
    verdicts = _fleet_verdicts(page)
    css = fleet_css(page["grid"]["columns"], verdicts)
    classes = {**{v: f"v{i}" for i, v in enumerate(verdicts)}, "failed": "vf"}
    return str(_env(True).get_template("fleet.html.j2").render(
        page=page, css=_Css(css), csp=csp_for(css), verdict_class=classes, verdict_words=VERDICT_WORDS,
        colours=COLOURS, verdicts=verdicts))


def _Css(css: str) -> Any:
    """The stylesheet as template markup (it holds no data: :func:`fleet_css`)."""
    from markupsafe import Markup

    return Markup(css)
