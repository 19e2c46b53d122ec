"""The fleet health page's model: every CronJob's slots on one shared time grid. PURE.

Input: the histories of ``cronctl history`` (:func:`cronctl.history.slot_history`, the
``cronjobs`` of ``history -o json``), judged at ``now``. Output: a JSON-ready dict that
:func:`cronctl.bundle.render.render_fleet_html` draws; no I/O, no clock, no jinja2 here, so the
grid is tested without a template or a browser.

The grid. A week of a ``*/10`` CronJob is 1,008 slots; a thousand of them, a million cells: too
many DOM nodes for a page that must open at once. So the fleet's window (the earliest
``window.since`` to ``now``) is cut into at most :data:`MAX_COLUMNS` columns of one size from
:data:`BUCKETS` (a week: one hour each), aligned on UTC multiples of that size. A column holds the
slots that fall in it and takes the colour of the worst verdict among them (:data:`SEVERITY`);
an hourly CronJob has one slot per column, a ``*/10`` one six. Neighbouring columns of the same
colour are one cell (a CronJob that ran every slot of the week is one green cell), and the hover
title of a cell gives its time span, its slots' counts per verdict and the worst slots with their
reason and Job (a cell of one slot: that slot). So a row holds one element per change of colour,
never more than its columns.

Rows are grouped by cluster, then namespace: a history read from the ledger names its cluster in
``ledger`` (``NAME`` or ``NAME; deleted <time>``, :mod:`cronctl.procedure.history`); a live one
has none and belongs to ``here`` (the kubeconfig context, "this cluster", or a dump's file names).

Failure is its own fact: a slot whose run failed (its row's ``outcome``, beside the verdict) is
drawn in the failure colour (:data:`FAILED`) whatever its verdict, counted per row, cluster and
page, and named in the hover and the summary: a CronJob that fails every slot is never "none lost".
"""

from __future__ import annotations

import re
from functools import lru_cache
from datetime import datetime, timedelta
from typing import Any, Iterable

from cronctl.history import DUPLICATE, LOST, VERDICTS
from cronctl.slotrows import History, SlotRow
from cronctl.textsafe import visible
from cronctl.timeutil import UTC, parse_rfc3339, rfc3339_z

Obj = dict[str, Any]

#: the verdicts from worst to best: a cell of several slots takes the colour of its worst. A lost
#: slot (its work was not done) before a doubled one (done twice), before a late one; then what
#: cannot be judged yet or says nothing bad
SEVERITY = ("missed", "missed-deadline", "missed-too-many", "skipped-forbid", "missed-suspended",
            "failed", "duplicate", "dst-doubled", "ran-late", "evidence-gone", "running", "due", "dst-skipped", "ran")
#: the state a slot whose run failed is drawn in, whatever its verdict (``ran``, ``ran-late``,
#: ``duplicate`` with no success, ...): a Job was made, but the slot's work was not done. After the
#: lost verdicts (no Job at all), before the doubled ones
FAILED = "failed"
_RANK = {v: i for i, v in enumerate(SEVERITY)}
#: column sizes in seconds, the smallest that keeps the window within MAX_COLUMNS columns is taken
BUCKETS = (60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 2 * 86400, 7 * 86400,
           14 * 86400, 28 * 86400, 91 * 86400, 364 * 86400)
#: a week of hours, plus the two partial hours at its ends
MAX_COLUMNS = 170
#: the lost or doubled slots a cell's hover title names (time, verdict, reason, Jobs; of a milder
#: worst verdict one); the rest are counted
EXAMPLES = 3
#: a reason longer than this is cut in the hover title (the whole of it: cronctl history)
REASON_CHARS = 300
#: the CronJobs with lost or doubled slots listed at the top of the page, the worst first
MAX_PROBLEMS = 100
HERE = "this cluster"

_LEDGER = re.compile(r"^(?P<name>.*); deleted (?P<at>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)$", re.S)


def cluster_of(history: History, here: str) -> tuple[str, str | None]:
    """(cluster, deleted time or None) of one history: its ``ledger`` field, else ``here``."""
    kept = history.get("ledger")
    if not kept:
        return here, None
    m = _LEDGER.match(str(kept))
    return (m.group("name"), m.group("at")) if m else (str(kept), None)


def worst(verdicts: Iterable[str]) -> str:
    """The worst of ``verdicts`` by :data:`SEVERITY` (an unknown one counts as the worst)."""
    return min(verdicts, key=lambda v: _RANK.get(v, -1))


def bucket_for(span: timedelta) -> int:
    """The column size (seconds) for a window of ``span``: the smallest of :data:`BUCKETS` whose
    columns, aligned on its multiples, number at most :data:`MAX_COLUMNS`."""
    secs = max(span.total_seconds(), 1.0)
    for b in BUCKETS:
        if secs / b + 2 <= MAX_COLUMNS:
            return b
    return BUCKETS[-1]


def _words(seconds: int) -> str:
    if seconds % 86400 == 0:
        n = seconds // 86400
        return "1 day" if n == 1 else f"{n} days"
    if seconds % 3600 == 0:
        n = seconds // 3600
        return "1 hour" if n == 1 else f"{n} hours"
    n = seconds // 60
    return "1 minute" if n == 1 else f"{n} minutes"


class Grid:
    """The shared columns: ``size`` seconds each from ``origin`` (a UTC multiple of the size)."""

    def __init__(self, since: datetime, until: datetime) -> None:
        self.size = bucket_for(until - since)
        s = int(since.timestamp())
        self.origin = s - s % self.size
        self.columns = max(1, (int(until.timestamp()) - self.origin) // self.size + 1)
        #: ``YYYY-MM-DDTHH:MM`` -> column, shared by the rows (a week has 10,080 minutes, a fleet's
        #: week a million slots)
        self.memo: dict[str, int] = {}

    def column(self, t: datetime) -> int:
        return self.column_at(int(t.timestamp()))

    def column_at(self, epoch: int) -> int:
        return min(max((epoch - self.origin) // self.size, 0), self.columns - 1)

    def start(self, col: int) -> datetime:
        return datetime.fromtimestamp(self.origin + col * self.size, UTC)

    def span_text(self, c0: int, c1: int) -> str:
        """``11-25 10:00 to 11-25 13:00 UTC``: columns c0..c1 (the end exclusive)."""
        a, b = self.start(c0), self.start(c1 + 1)
        fmt = "%Y-%m-%d %H:%M"
        end = b.strftime("%H:%M" if a.date() == b.date() else fmt)
        return f"{a.strftime(fmt)} to {end} UTC"

    def axis(self) -> list[Obj]:
        """Labelled stretches of columns above the rows (UTC), at most 12, each ``span`` columns wide
        and starting at a UTC multiple of the label step (midnight for days); the partial stretch at
        the start is left unlabelled when it is less than half a step."""
        span = self.columns * self.size
        step = next((s for s in _STEPS if s % self.size == 0 and span / s <= 12), _STEPS[-1])
        out: list[Obj] = []
        col, day = 0, None
        while col < self.columns:
            at = self.origin + col * self.size
            nxt = min(((at // step + 1) * step - self.origin) // self.size, self.columns)
            t = self.start(col)
            if step >= 28 * 86400:
                label = t.strftime("%Y-%m-%d")
            elif step >= 86400:
                label = t.strftime("%m-%d")
            else:
                label = t.strftime("%H:%M" if t.date() == day else "%m-%d %H:%M")
            if (nxt - col) * self.size * 2 < step and col == 0:
                label = ""
            else:
                day = t.date()
            out.append({"span": nxt - col, "label": label})
            col = nxt
        return out


_STEPS = (60, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 2 * 86400, 7 * 86400, 14 * 86400,
          28 * 86400, 91 * 86400, 364 * 86400, 5 * 364 * 86400)


@lru_cache(maxsize=4096)
def _day(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp())


def _epoch(text: str) -> int:
    """Unix seconds of a slot's ``YYYY-MM-DDTHH:MM:SSZ`` (history writes every slot so): the day from
    a cache, the time of day by hand, five times faster than parsing each (a fleet's week is a
    million slots); any other form is parsed in full."""
    if len(text) == 20 and text[10] == "T" and text[19] == "Z" and text[13] == text[16] == ":":
        try:
            return _day(text[:10]) + int(text[11:13]) * 3600 + int(text[14:16]) * 60 + int(text[17:19])
        except ValueError:
            pass
    return int(parse_rfc3339(text).timestamp())


def _when(slot: SlotRow) -> str:
    """A slot's time as the CronJob's zone shows it, and in UTC when the zone is another."""
    local = str(slot.get("slot_local") or slot["slot"])
    utc = str(slot["slot"])
    text = local[:16].replace("T", " ")
    if local[19:] in ("Z", "+00:00", ""):
        return text + " UTC"
    return f"{text} {local[19:]} ({utc[11:16]} UTC)"


def _cut(text: str) -> str:
    return text if len(text) <= REASON_CHARS else text[:REASON_CHARS - 1] + "…"


def _jobs(slot: SlotRow) -> str:
    jobs = [str(j) for j in slot.get("jobs") or []]
    if not jobs:
        return "no Job"
    return ("Job " if len(jobs) == 1 else "Jobs ") + ", ".join(jobs[:5]) + (
        f" and {len(jobs) - 5} more" if len(jobs) > 5 else "")


def state(slot: SlotRow) -> str:
    """What a slot's cell shows: :data:`FAILED` when its run failed, else its verdict. (A row the
    ledger kept before rows carried the outcome has it derived when read back: cronctl.ledger.store.)"""
    return FAILED if slot.get("outcome") == "failed" else slot["verdict"]


def _failed_words(slot: SlotRow) -> str:
    reason = slot.get("failure_reason")
    return f", failed{': ' + str(reason) if reason else ''}" if slot.get("outcome") == "failed" else ""


def _effect_words(slot: SlotRow) -> str:
    """The slot's business effect as cronctl claim recorded it (with a ledger holding its rows): two
    Jobs and one effect is not the incident two effects are."""
    eff = slot.get("effect")
    if not eff:
        return ""
    refused = int(eff.get("refusals") or 0)
    return f"; effect {eff.get('effect')}" + (f", {refused} claimer(s) refused" if refused else "")


def slot_text(slot: SlotRow) -> str:
    """One slot for a hover title: time, verdict (and a failed run, with its reason), Job(s), the
    effect where cronctl claim recorded one, reason."""
    # the title's own lines are its structure; a reason or Job name (anyone's text) is one line each
    return (f"{_when(slot)}: {visible(str(slot['verdict']) + _failed_words(slot))} "
            f"({visible(_jobs(slot) + _effect_words(slot))})\n"
            f"{visible(_cut(str(slot.get('reason') or '')))}").rstrip()


def _cell_title(grid: Grid, c0: int, c1: int, slots: list[SlotRow], bad: str) -> str:
    if len(slots) == 1:
        return slot_text(slots[0])
    counts: dict[str, int] = {}
    for s in slots:
        counts[s["verdict"]] = counts.get(s["verdict"], 0) + 1
    failed = sum(1 for s in slots if s.get("outcome") == "failed")
    head = (f"{grid.span_text(c0, c1)}: {len(slots)} slots, "
            + (f"failed {failed}; " if failed else "")
            + ", ".join(f"{v} {n}" for v, n in sorted(counts.items(), key=lambda kv: _RANK.get(kv[0], -1))))
    if bad == "ran":
        return head
    worst_slots = [s for s in slots if state(s) == bad]
    # lost and doubled slots are what an operator acts on: up to EXAMPLES of them in full; of a
    # milder verdict one (a fleet late every other hour would otherwise make a 50 MB page)
    k = EXAMPLES if bad in LOST or bad in DUPLICATE or bad == FAILED else 1
    lines = [head] + [slot_text(s) for s in worst_slots[:k]]
    if len(worst_slots) > k:
        lines.append(f"... and {len(worst_slots) - k} more {bad}")
    return "\n".join(lines)


def _cells(grid: Grid, history: History) -> list[Obj]:
    """The row of one CronJob: runs of columns of one state, each ``{"kind", "verdict", "span",
    "title", "slots"}``; kind ``slots`` (coloured by ``verdict``), ``empty`` (no slot falls there)
    or ``unjudged`` (before this CronJob's window: its evidence, creation or --since)."""
    by_col: dict[int, list[SlotRow]] = {}
    bad: dict[int, tuple[int, str]] = {}  # column -> (rank, verdict) of its worst slot
    memo = grid.memo
    for s in history["slots"]:
        text = s["slot"]
        c = memo.get(text[:16]) if len(text) == 20 else None
        if c is None:
            c = grid.column_at(_epoch(text))
            if len(text) == 20 and text[19] == "Z":
                memo[text[:16]] = c  # the column depends on the minute only (sizes are whole minutes)
        v = FAILED if s.get("outcome") == "failed" else s["verdict"]
        r = _RANK.get(v, -1)
        if c in by_col:
            by_col[c].append(s)
            if r < bad[c][0]:
                bad[c] = (r, v)
        else:
            by_col[c] = [s]
            bad[c] = (r, v)
    window = history["window"]
    first = grid.column(parse_rfc3339(window["since"])) if window else grid.columns
    states = [bad[c][1] if c in bad else "" if c >= first else "-" for c in range(grid.columns)]
    cells: list[Obj] = []
    c0 = 0
    for c in range(1, grid.columns + 1):
        if c < grid.columns and states[c] == states[c0]:
            continue
        state, span = states[c0], c - c0
        if state == "-":
            since = window["since"] if window else None
            cells.append({"kind": "unjudged", "verdict": None, "span": span, "slots": 0,
                          "title": (f"not judged: this CronJob's window starts at {since}"
                                    f" (limited by {window['limited_by']})") if window and since
                          else "not judged"})
        elif state == "":
            cells.append({"kind": "empty", "verdict": None, "span": span, "slots": 0, "title": ""})
        else:
            slots = [s for k in range(c0, c) for s in by_col.get(k, [])]
            cells.append({"kind": "slots", "verdict": state, "span": span, "slots": len(slots),
                          "title": _cell_title(grid, c0, c - 1, slots, state)})
        c0 = c
    return cells


def _summary(h: History, lost: int, failed: int, dup: int, deleted: str | None) -> str:
    if h.get("error"):
        return f"cannot judge the slots: {h['error']}"
    n = len(h["slots"])
    parts = [f"lost {lost}"] * bool(lost) + [f"failed {failed}"] * bool(failed) + [f"duplicate {dup}"] * bool(dup)
    text = (", ".join(parts) if parts else "none lost, failed or doubled") + f" of {n} slot{'s' * (n != 1)}"
    late = int(h["counts"].get("ran-late", 0))
    if late:
        text += f"; late {late}"
    if h.get("manual_runs"):
        text += f"; {len(h['manual_runs'])} manual run(s) for no slot"
    effects: dict[str, int] = {}
    for s in h["slots"]:
        if s.get("effect"):
            e = visible(str(s["effect"].get("effect")))  # a ledger row: anyone's text
            effects[e] = effects.get(e, 0) + 1
    if effects:  # cronctl claim's rows: the effects, the ones not done first
        order = {"ambiguous": 0, "failed": 1, "running": 2, "none": 3, "refused-duplicate": 4, "done": 5}
        text += "; effects " + ", ".join(f"{e} {n}" for e, n in sorted(effects.items(),
                                                                      key=lambda kv: (order.get(kv[0], -1), kv[0])))
    if h.get("suspended"):
        text += "; suspended now"
    if deleted:
        text += f"; deleted {deleted}"
    return text


def fleet_page(histories: list[History], *, now: datetime, here: str = HERE, source: str = "",
               here_heading: str | None = None) -> Obj:
    """The page's model of ``histories`` judged at ``now`` (:class:`Page`, its window from the
    earliest of theirs)."""
    page = Page(min((parse_rfc3339(w["since"]) for h in histories if (w := h["window"])), default=None),
                now=now, here=here, source=source, here_heading=here_heading)
    for h in histories:
        page.add(h)
    return page.model()


class Page:
    """The page's model, built one history at a time (:meth:`add`: each reduced to its row, so a
    fleet's two million slots are never held at once), then :meth:`model`.

    The model: ``clusters`` (each with its ``namespaces``, each with its ``rows``), the shared
    ``grid``, the fleet's ``counts`` per verdict, ``problems`` (the CronJobs with lost, failed or
    doubled slots, worst first) and the totals. ``since`` is the earliest window's start (None: an
    hour before ``now``), known before the first row: the grid's columns are laid from it.

    Each row has an ``id`` (its position: the page's anchors are never made of data), ``name``,
    ``namespace``, ``schedule``, ``zone``, ``lost``, ``failed``, ``duplicate``, ``summary`` (one line),
    ``status`` (``lost``, ``failed``, ``duplicate``, ``error`` or ``ok``) and ``cells`` (:func:`_cells`).
    Each cluster has a ``heading``: "Cluster NAME", for the live group ``here_heading`` when given (a
    dump's file names), else "This cluster" when the kubeconfig context has no name.
    """

    def __init__(self, since: datetime | None, *, now: datetime, here: str = HERE, source: str = "",
                 here_heading: str | None = None) -> None:
        self.now = now.astimezone(UTC)
        since = since if since is not None else self.now - timedelta(hours=1)
        if since >= self.now:
            since = self.now - timedelta(minutes=1)
        self.since = since
        self.grid = Grid(since, self.now)
        self.here, self.source, self.here_heading = here, source, here_heading
        self.counts = {v: 0 for v in VERDICTS}
        self.rows: list[Obj] = []
        self.failed_total = 0

    def add(self, h: History) -> Obj:
        """``h`` as its row (returned, and kept: nothing of ``h`` itself is kept)."""
        cluster, deleted = cluster_of(h, self.here)
        for v, n in (h.get("counts") or {}).items():
            self.counts[v] = self.counts.get(v, 0) + int(n)
        lost = sum(int(h["counts"].get(v, 0)) for v in LOST)
        dup = sum(int(h["counts"].get(v, 0)) for v in DUPLICATE)
        failed = sum(1 for s in h.get("slots") or [] if s.get("outcome") == "failed")
        self.failed_total += failed
        status = ("error" if h.get("error") else "lost" if lost else "failed" if failed else "duplicate" if dup
                  else "ok")
        row: Obj = {
            # one line each: a ledger row's schedule or zone is anyone's text (a title attribute keeps newlines)
            "id": len(self.rows), "cluster": cluster, "namespace": visible(str(h["namespace"])),
            "name": visible(str(h["name"])), "schedule": visible(str(h.get("schedule") or "")),
            "zone": visible(str(h.get("zone") or "UTC")),
            "suspended": bool(h.get("suspended")), "deleted": deleted, "lost": lost, "failed": failed,
            "duplicate": dup, "slots": len(h.get("slots") or []), "status": status,
            "summary": _summary(h, lost, failed, dup, deleted),
            "cells": [] if h.get("error") else _cells(self.grid, h),
        }
        self.rows.append(row)
        return row

    def model(self) -> Obj:
        """The page's model of every row added (grouped now: a row's texts may have been masked since)."""
        grid, counts = self.grid, self.counts
        clusters: dict[str, dict[str, list[Obj]]] = {}
        for row in self.rows:
            clusters.setdefault(row["cluster"], {}).setdefault(row["namespace"], []).append(row)
        problems = sorted((r for r in self.rows if r["lost"] or r["failed"] or r["duplicate"]),
                          key=lambda r: (-r["lost"], -r["failed"], -r["duplicate"], r["cluster"], r["namespace"],
                                         r["name"]))
        out_clusters: list[Obj] = []
        for name in sorted(clusters):
            nss: list[Obj] = [{"name": ns, "rows": sorted(rs, key=lambda r: str(r["name"]))}
                              for ns, rs in sorted(clusters[name].items())]
            rows: list[Obj] = [r for ns in nss for r in ns["rows"]]
            here = self.here
            heading = (self.here_heading if name == here and self.here_heading
                       else "This cluster" if name == here == HERE else f"Cluster {name}")
            out_clusters.append({
                "name": name, "heading": heading, "namespaces": nss, "cronjobs": len(rows),
                "lost": sum(r["lost"] for r in rows), "lost_cronjobs": sum(1 for r in rows if r["lost"]),
                "failed": sum(r["failed"] for r in rows), "failed_cronjobs": sum(1 for r in rows if r["failed"]),
                "duplicate": sum(r["duplicate"] for r in rows),
                "duplicate_cronjobs": sum(1 for r in rows if r["duplicate"]),
            })
        return {
            "now": rfc3339_z(self.now), "since": rfc3339_z(self.since), "source": self.source, "here": self.here,
            "grid": {"size": grid.size, "words": _words(grid.size), "columns": grid.columns,
                     "origin": rfc3339_z(grid.start(0)), "axis": grid.axis()},
            "counts": counts, "cronjobs": len(self.rows), "slots": sum(counts.values()),
            "lost": sum(counts.get(v, 0) for v in LOST), "duplicate": sum(counts.get(v, 0) for v in DUPLICATE),
            "failed": self.failed_total,
            "lost_cronjobs": sum(1 for p in problems if p["lost"]),
            "failed_cronjobs": sum(1 for p in problems if p["failed"]),
            "duplicate_cronjobs": sum(1 for p in problems if p["duplicate"]),
            "problems": problems[:MAX_PROBLEMS], "problems_total": len(problems),
            "clusters": out_clusters,
        }
