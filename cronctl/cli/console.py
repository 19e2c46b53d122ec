"""The console every line cronctl prints goes through: untrusted text (names, annotations, logs,
API messages) never reaches the terminal as markup or as a control sequence. The run's two consoles
(stdout, stderr) are made by its Environment (cronctl.cli.env) from this class."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.text import Text

from cronctl.textsafe import is_visible, visible


class SafeConsole(Console):
    """A console for untrusted text: rich markup is never interpreted, and every control, escape
    and bidi character that reaches the screen is shown as its escape (``cronctl.textsafe``).

    Strings are made visible before layout (so widths are right); every other renderable (Text,
    tables, the live status line) is checked once more segment by segment, skipping only the
    control segments rich itself emits (cursor moves of the live display).
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(markup=False, highlight=False, emoji=False, **kwargs)

    def render_str(self, text: str, **kwargs: Any) -> Text:
        kwargs["markup"] = False
        return super().render_str(visible(text, multiline=True), **kwargs)

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterable[Segment]:
        for seg in super().render(renderable, options):
            if seg.control or is_visible(seg.text, multiline=True):
                yield seg
            else:
                yield Segment(visible(seg.text, multiline=True), seg.style)
