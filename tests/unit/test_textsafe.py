"""cronctl.textsafe: untrusted text made visible for the terminal and literal for Markdown."""

from __future__ import annotations

import json
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cronctl.textsafe import is_visible, json_visible, md_code, md_text, visible

# (attack, what is shown instead)
VECTORS = [
    ("\x1b]52;c;a3ViZWN0bA==\x07", "\\x1b]52;c;a3ViZWN0bA==\\x07"),  # OSC 52: set the clipboard
    ("\x1b]0;title\x1b\\", "\\x1b]0;title\\x1b\\"),  # OSC 0 ended by ST
    ("\x1b[2J\x1b[H", "\\x1b[2J\\x1b[H"),  # clear screen
    ("ok\r\x1b[2Kforged", "ok\\r\\x1b[2Kforged"),  # erase the line
    ("a\bb", "a\\x08b"),
    ("\x9b2J", "\\x9b2J"),  # C1 CSI
    ("\x85next", "\\x85next"),  # C1 NEL
    ("\x7f", "\\x7f"),
    ("\x00", "\\x00"),
    ("\u202eevil\u202c", "\\u202eevil\\u202c"),  # RLO ... PDF
    ("\u2066x\u2069", "\\u2066x\\u2069"),  # isolates
    ("\u200e\u200f\u061c", "\\u200e\\u200f\\u061c"),  # marks
    ("line\u2028sep", "line\\u2028sep"),
    ("\ud800", "\\ud800"),  # a lone surrogate (JSON "\ud800") cannot even be encoded
    ("a\nb\tc", "a\\nb\\tc"),  # one value, one line
    ("[/x] [link=https://e.example]x[/link] :smile:", "[/x] [link=https://e.example]x[/link] :smile:"),
    ("Zürich ünïcode 東京 🙂 C:\\path", "Zürich ünïcode 東京 🙂 C:\\path"),
]


@pytest.mark.parametrize(("raw", "shown"), VECTORS)
def test_each_control_escape_and_bidi_character_is_shown_as_its_escape(raw: str, shown: str) -> None:
    assert visible(raw) == shown


def test_a_block_of_lines_keeps_its_newlines_and_tabs_but_not_the_rest() -> None:
    assert visible("a\n\tb\x1b[2K\r\n", multiline=True) == "a\n\tb\\x1b[2K\\r\n"


SAFE = st.text(st.characters(codec="utf-8"), max_size=40)
ANY = st.text(max_size=40)


@given(ANY, st.booleans())
def test_visible_output_has_no_unsafe_character_and_visible_is_idempotent(s: str, multiline: bool) -> None:
    v = visible(s, multiline=multiline)
    assert is_visible(v, multiline=multiline)
    assert visible(v, multiline=multiline) == v
    for c in v:
        assert unicodedata.category(c) not in ("Cc", "Cs") or (multiline and c in "\n\t")
    v.encode("utf-8")  # always encodable


@given(st.dictionaries(ANY, ANY, max_size=4))
def test_json_visible_is_the_same_json_with_nothing_that_acts(d: dict[str, str]) -> None:
    text = json_visible(json.dumps(d, ensure_ascii=False, indent=2))
    assert json.loads(text) == d
    assert is_visible(text, multiline=True)


@pytest.mark.parametrize(("raw", "md"), [
    ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
    ("<img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)&gt;"),
    ("a | b", "a \\| b"),
    ("![t](https://tracker.example/p.gif)", "!\\[t\\](https\\://tracker.example/p.gif)"),  # no autolink either
    ("see www.example.org", "see www\\.example.org"),
    ("mail ops@example.org now", "mail `ops@example.org` now"),  # GFM links an address unless in code
    ("**bold** _it_ `code` ~~s~~", "\\*\\*bold\\*\\* \\_it\\_ \\`code\\` \\~\\~s\\~\\~"),
    ("two\nlines \x1b[2J", "two\\\\nlines \\\\x1b\\[2J"),
    ("&amp;", "&amp;amp;"),
])
def test_markdown_text_is_literal_on_one_line(raw: str, md: str) -> None:
    assert md_text(raw) == md


@pytest.mark.parametrize(("raw", "md", "table"), [
    ("job-1", "`job-1`", True),
    ("a`b", "``a`b``", True),
    ("`x", "`` `x ``", True),
    ("a|b", "`a\\|b`", True),
    ("a|b", "`a|b`", False),
    ("<b>\x1b", "`<b>\\x1b`", True),  # a code span shows < literally; the control is made visible
])
def test_a_code_span_fence_outlasts_the_backticks_inside(raw: str, md: str, table: bool) -> None:
    assert md_code(raw, table=table) == md


@given(ANY)
def test_markdown_text_never_leaves_a_raw_html_or_table_character(s: str) -> None:
    m = md_text(s)
    assert "\n" not in m
    # a word holding "@" is a code span (md_code: literal, its | escaped); the rest is escaped text
    from cronctl.textsafe import _MD_AT

    for w in _MD_AT.findall(visible(s)):
        m = m.replace(md_code(w), "", 1)
    assert "<" not in m and ">" not in m
    assert all(m[i - 1] == "\\" for i, c in enumerate(m) if c in "|[]`")


@given(st.text(alphabet=st.one_of(st.characters(max_codepoint=0x7f), st.sampled_from("\u2028\u202e\u200b\x85\u00e9")),
               max_size=40))
def test_json_visible_escapes_the_same_characters_on_its_ascii_fast_path(s: str) -> None:
    # every unsafe character (controls, DEL, C1, bidi, separators) as its \uXXXX; \t, \n and the rest kept
    want = "".join(f"\\u{ord(c):04x}" if not (c in "\t\n" or c.isprintable()) or c in "\u2028\u202e\u200b"
                   else c for c in s)
    assert json_visible(s) == want
