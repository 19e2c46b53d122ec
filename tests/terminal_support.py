"""Replaying terminal attacks (issue 12): the payloads, cronctl on a pseudo-terminal, and the checks
of the bytes the terminal receives. Used by tests/unit/test_terminal_injection.py and
tests/cluster/test_terminal_injection_live.py.
"""

from __future__ import annotations

import re
from pathlib import Path

from harness import on_a_terminal

# The attacks, as a hostile user of the cluster would write them.
OSC52 = "\x1b]52;c;a3ViZWN0bCBkZWxldGUgbnMgcHJvZA==\x07"  # clipboard := "kubectl delete ns prod"
TITLE = "\x1b]0;prod is fine\x07"  # window title
CLEAR = "\x1b[2J\x1b[H"  # clear the screen, cursor home
ERASE = "\r\x1b[2K"  # erase the line just printed
BIDI = "\u202eevil\u202c"  # right-to-left override
C1_CSI = "\x9b2J"  # C1 CSI: clear the screen on terminals that honour C1
MARKUP = "[link=https://evil.example]click[/link] [reverse]rev[/reverse] [/x]"
PAYLOAD = OSC52 + TITLE + CLEAR + ERASE + BIDI + C1_CSI + " " + MARKUP

# what the operator must see instead (each control written as its escape)
SHOWN = ["\\x1b]52;c;a3ViZWN0bCBkZWxldGUgbnMgcHJvZA==\\x07", "\\x1b]0;prod is fine\\x07", "\\x1b[2J",
         "\\x1b[2K", "\\u202eevil\\u202c", "\\x9b2J", MARKUP]

# rich's own styling: SGR only (``ESC [ params m``)
SGR = re.compile(rb"\x1b\[[0-9;]*m")
# a live status line also moves the cursor: hide/show it, erase the line, go up (rich's Live)
LIVE = re.compile(rb"\x1b\[(?:\?25[lh]|2K|[0-9]*[AGK])|\r")


def cronctl_in_pty(args: list[str], tmp: Path, *, script: str | None = None, timeout: float = 60,
                   **extra_env: str) -> tuple[int, bytes]:
    """The installed `cronctl` (or ``python -c script``) with stdout+stderr on a pty (stdin not), a wide
    colour terminal and no kubeconfig: (exit code, bytes). A preset of ``harness.on_a_terminal``."""
    env = {"TERM": "xterm-256color", "COLUMNS": "400", "LINES": "50", "KUBECONFIG": str(tmp / "no-kubeconfig"),
           **extra_env}
    return on_a_terminal(args, cwd=tmp, script=True, python_code=script, timeout=timeout, stdin_terminal=False,
                         **env)


def assert_nothing_acts(screen: bytes, *, live: bool = False) -> str:
    """No escape, control or bidi character from the data reaches the terminal; returns the text."""
    rest = SGR.sub(b"", screen)
    if live:
        rest = LIVE.sub(b"", rest)
    assert b"\x1b" not in rest, _around(rest, b"\x1b")
    assert b"\x07" not in rest, _around(rest, b"\x07")
    text = rest.decode("utf-8")
    for bad in ("\u202e", "\u202c", "\x9b", "\x08"):
        assert bad not in text, (bad, text)
    assert "Traceback" not in text and "MarkupError" not in text, text
    return text.replace("\r\n", "\n")


def _around(data: bytes, needle: bytes) -> str:
    i = data.find(needle)
    return f"raw {needle!r} reaches the terminal: ...{data[max(0, i - 80):i + 80]!r}..."


def assert_shown(text: str, shown: list[str] = SHOWN) -> None:
    flat = re.sub(r"\s*\n\s*", "", text)  # rich folds long cells: join the lines back
    for s in shown:
        assert re.sub(r"\s", "", s) in re.sub(r"\s", "", flat), f"{s!r} is not shown as text in:\n{text}"
