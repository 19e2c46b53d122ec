"""Tables of short cells and one long text, for terminals of any width and for pipes.

Rich's tables fold every column to fit the console, which is 80 columns when output is piped or
in a CI log: a Job name, a field path or a slot then breaks mid-word and cannot be copied or
grepped. Here short cells are never broken; only the long text (a reason, a finding) wraps:

- not a terminal (``width`` None): one line per row with the text whole at its end, so that
  ``grep 14:20`` shows the row and its reason; the notes of a row follow, indented;
- a terminal with at least :data:`MIN_TEXT` columns left beside the cells: the text and the notes
  wrap in that room;
- a narrower terminal: the text and the notes go under the row, indented, wrapped to the width.

Untrusted text is made visible here (``cronctl.textsafe``), before widths are measured.
"""

from __future__ import annotations

import textwrap
from typing import NamedTuple

from cronctl.textsafe import visible

#: a text column narrower than this is no use: the text goes under its row instead
MIN_TEXT = 30
GAP = "  "
INDENT = "    "


class Row(NamedTuple):
    cells: list[list[str]]  # per column, its lines (several Jobs: one per line; most cells: one line)
    text: str  # the long text, last column
    notes: list[str] = []  # lines that belong under the text (a finding's why and fix)


class Line(NamedTuple):
    text: str
    kind: str  # head, row (a row's first line), more (its other lines), under (text or notes under it)
    note_at: int | None = None  # where a note starts on this line (to be shown dim), if one does


def lay_out(heads: list[str], text_head: str, rows: list[Row], width: int | None) -> tuple[list[Line], list[int]]:
    """The lines of the table, and where each cell column starts on a row's lines."""
    rows = [Row([[visible(s) for s in c] or [""] for c in r.cells], visible(r.text), [visible(n) for n in r.notes])
            for r in rows]
    widths = [max([len(h)] + [len(s) for r in rows for s in r.cells[i]]) for i, h in enumerate(heads)]
    starts = [sum(widths[:i]) + len(GAP) * i for i in range(len(heads))]
    indent = sum(widths) + len(GAP) * len(widths)
    below = width is not None and width - indent < MIN_TEXT
    wrap_at = None if width is None else max(width - len(INDENT), 20) if below else width - indent

    def wrap(text: str) -> list[str]:
        if wrap_at is None:
            return [text] if text else []
        return textwrap.wrap(text, wrap_at, break_long_words=False, break_on_hyphens=False)

    def cells_line(k: int, r: Row) -> str:
        return GAP.join((c[k] if k < len(c) else "").ljust(w) for c, w in zip(r.cells, widths))

    head = GAP.join(h.ljust(w) for h, w in zip(heads, widths)) + ("" if below else GAP + text_head)
    lines = [Line(head.rstrip(), "head")]
    for r in rows:
        text = wrap(r.text)
        notes = [part for n in r.notes for part in wrap(n)]
        if width is None:  # piped: the row on one line; notes under it
            beside, under = text[:1], notes
        elif below:
            beside, under = [], text + notes
        else:
            beside, under = text + notes, []
        for k in range(max(1, len(beside), *(len(c) for c in r.cells))):
            line = cells_line(k, r) + (GAP + beside[k] if k < len(beside) else "")
            note_at = indent if len(text) <= k < len(beside) else None
            lines.append(Line(line.rstrip(), "row" if k == 0 else "more", note_at))
        for k, part in enumerate(under):
            lines.append(Line(INDENT + part, "under", len(INDENT) if k >= len(under) - len(notes) else None))
    return lines, starts


class Column(NamedTuple):
    """A column of a :func:`fit` table: its head, its priority (0: always shown; the highest is
    dropped first when the terminal is too narrow, as kubectl's printers leave the -o wide columns
    out), and whether its cells may fold onto more lines (a long text, never a name or a time)."""

    head: str
    priority: int = 0
    folds: bool = False


def fit(columns: list[Column], rows: list[list[str]], width: int | None, *, wide: bool = False) -> list[str]:
    """The lines of a plain table (heads, then rows, columns three blanks apart) that fit ``width``.

    ``width`` None (a pipe, a file) or ``wide`` (-o wide): every column, one line per row, nothing
    folded, so that grep sees whole rows. On a terminal: while the table is wider than the
    terminal, the column of the highest priority is dropped; if the priority-0 columns alone are
    still too wide, a folding column wraps its cells (at blanks) in the room that is left.
    Cells are made visible first (escapes shown) so that widths are right.
    """
    gap = "   "
    rows = [[visible(c) for c in r] for r in rows]
    keep = list(range(len(columns)))

    def widths(idx: list[int]) -> dict[int, int]:
        return {i: max([len(columns[i].head)] + [len(r[i]) for r in rows]) for i in idx}

    def total(w: dict[int, int]) -> int:
        return sum(w.values()) + len(gap) * (len(w) - 1)

    w = widths(keep)
    if width is not None and not wide:
        while total(w) > width:
            droppable = [i for i in keep if columns[i].priority > 0]
            if not droppable:
                break
            worst = max(droppable, key=lambda i: (columns[i].priority, i))
            keep.remove(worst)
            w = widths(keep)
        over = total(w) - width
        folding = [i for i in keep if columns[i].folds]
        if over > 0 and folding:
            i = folding[0]
            w[i] = max(len(columns[i].head), 12, w[i] - over)
    lines = [gap.join(columns[i].head.ljust(w[i]) for i in keep).rstrip()]
    for r in rows:
        cells = {i: (textwrap.wrap(r[i], w[i], break_long_words=False, break_on_hyphens=False) or [""])
                 if columns[i].folds and len(r[i]) > w[i] else [r[i]] for i in keep}
        for k in range(max(len(c) for c in cells.values())):
            lines.append(gap.join((cells[i][k] if k < len(cells[i]) else "").ljust(w[i]) for i in keep).rstrip())
    return lines
