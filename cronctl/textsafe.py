"""Untrusted text made safe for the operator's screen and for the Markdown report.

Pure (stdlib only). Anyone who can patch a CronJob, write an Event, print a log line in a Job
or hand over a dump controls text that cronctl shows. On a terminal that text must not act:
ESC starts CSI/OSC sequences (clear the screen, erase lines, set the window title, OSC 52 sets
the clipboard), C1 codes do the same on some terminals, BEL/BS/CR rewrite what is shown, bidi
controls reorder what is read, and zero-width characters hide inside what is read. :func:`visible` turns each such character into its Python
escape (``\\x1b``, ``\\u202e``), so the operator sees the attack instead of suffering it.
The printable rest of an escape sequence (``]52;c;...``) stays as plain text after ``\\x1b``.

Rich markup is a separate matter: ``cronctl.cli`` prints with markup off, so ``[link=...]``
in data is text. :func:`md_text` and :func:`md_code` are the same idea for REPORT.md.
"""

from __future__ import annotations

import re
import unicodedata

# Cc: C0 (U+0000-U+001F), DEL, C1 (U+0080-U+009F); the bidi embeddings, overrides, isolates and
# marks (U+061C, U+200E/F, U+202A-U+202E, U+2066-U+2069); the line and paragraph separators
# (U+2028/9: a line break to some terminals and viewers); the zero-width characters (U+180E,
# U+200B-U+200D, U+2060-U+2064, U+FEFF: invisible, they make two different names look the same);
# lone surrogates (from JSON "\ud800": they cannot be encoded and would crash the write).
_UNSAFE = ("\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069"
           "\ufeff\ud800-\udfff")
_ONE_LINE = re.compile(f"[\t{_UNSAFE}]")
_MULTI_LINE = re.compile(f"[{_UNSAFE.replace(chr(10) + '-', chr(11) + '-')}]")  # keeps \t and \n
_ASCII_SAFE = bytes(range(0x20, 0x7f)) + b"\t\n"  # the ASCII _MULTI_LINE keeps
#: Unicode categories escaped beyond the list above, by what a character is, not by a list (issue
#: 39: TAG characters U+E0000-E007F, U+206A-206F, U+FFF9-FFFB, the soft hyphen, U+1D173-1D17A
#: passed): every format character (Cf), surrogates, line and paragraph separators
_UNSAFE_CATEGORIES = frozenset({"Cf", "Cs", "Zl", "Zp", "Cc"})
_category = unicodedata.category


def _format_chars(text: str) -> str:
    """The characters of ``text`` outside ASCII whose category is unsafe (one lookup per distinct
    character: a megabyte of CJK text costs a set and a few thousand lookups)."""
    return "".join(sorted(c for c in set(text) if c > "\x7f" and _category(c) in _UNSAFE_CATEGORIES))


def _pattern(text: str, base: re.Pattern[str]) -> re.Pattern[str] | None:
    """The pattern that finds every unsafe character of ``text`` (``base``, plus the format
    characters it holds), or None when it holds none."""
    extra = "" if text.isascii() else _format_chars(text)
    if extra:
        return _extended(base.pattern, extra)
    return base if base.search(text) else None


_EXTENDED: dict[tuple[str, str], re.Pattern[str]] = {}


def _extended(base: str, extra: str) -> re.Pattern[str]:
    key = (base, extra)
    p = _EXTENDED.get(key)
    if p is None:
        p = re.compile(base[:-1] + re.escape(extra) + "]")
        if len(_EXTENDED) < 1024:
            _EXTENDED[key] = p
    return p


_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(m: re.Match[str]) -> str:
    c = m.group()
    if c in _SHORT:
        return _SHORT[c]
    o = ord(c)
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}" if o <= 0xFFFF else f"\\U{o:08x}"


def visible(text: str, *, multiline: bool = False) -> str:
    """``text`` with every control, bidi and separator character written as its escape.

    ``multiline=True`` keeps ``\\n`` and ``\\t`` (a block of lines is meant); otherwise they are
    shown as ``\\n`` and ``\\t`` too, so one value cannot forge a second line of output. All
    other characters, backslashes included, are left alone: ``visible`` is idempotent.
    """
    pattern = _pattern(text, _MULTI_LINE if multiline else _ONE_LINE)
    return pattern.sub(_escape, text) if pattern is not None else text


def is_visible(text: str, *, multiline: bool = False) -> bool:
    """True when :func:`visible` would leave ``text`` unchanged."""
    return _pattern(text, _MULTI_LINE if multiline else _ONE_LINE) is None


# Markdown: HTML is raw in CommonMark, so &, < and > become entities; the punctuation that makes
# links, images, emphasis, code spans and table cells is backslash-escaped.
_MD_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_MD_SPECIAL = re.compile(r"[&<>\\`*_\[\]|~]")


# GFM's autolink extension makes links of bare text: ``http://``, ``https://``, ``ftp://`` and ``www.``
# (matched while inlines are parsed, so a backslash before the ``:`` or ``.`` stops it), and e-mail
# addresses, ``mailto:`` and ``xmpp:`` (matched after, on the text with its escapes undone: only a
# code span keeps them text).
_MD_AUTOLINK = re.compile(r"(?i)(?:(https?|ftp)(:)(?=//)|(www)(\.))")
_MD_AT = re.compile(r"[^\s`]*@[^\s`]*")


def _md_escape(s: str) -> str:
    s = _MD_SPECIAL.sub(lambda m: _MD_ENTITIES.get(m.group(), "\\" + m.group()), s)
    return _MD_AUTOLINK.sub(lambda m: f"{m.group(1) or m.group(3)}\\{m.group(2) or m.group(4)}", s)


def md_text(value: object) -> str:
    """A value as literal Markdown inline text, on one line and safe inside a table cell: no HTML,
    emphasis, link or image, and no autolink either (a URL's ``:`` and ``www.``'s dot are escaped; a
    word holding ``@``, an e-mail address to GFM, is a code span)."""
    s = visible(str(value))
    if "@" not in s:
        return _md_escape(s)
    out: list[str] = []
    pos = 0
    for m in _MD_AT.finditer(s):
        out += [_md_escape(s[pos:m.start()]), md_code(m.group())]
        pos = m.end()
    return "".join(out) + _md_escape(s[pos:])


def md_code(value: object, *, table: bool = True) -> str:
    """A value as a Markdown code span: a fence longer than any backtick run inside it.

    In a GFM table a ``|`` ends the cell even inside a code span, so there it is escaped
    (``table=False`` outside tables, where ``\\|`` would show its backslash).
    """
    s = visible(str(value))
    if table:
        s = s.replace("|", "\\|")
    longest = max((len(r) for r in re.findall("`+", s)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def json_visible(text: str) -> str:
    """JSON text (from ``json.dumps(..., ensure_ascii=False)``) with the characters :func:`visible`
    escapes written as ``\\uXXXX``: the same data, but nothing in it acts on a terminal."""
    # outside strings JSON has only structural whitespace, which this keeps
    if text.isascii() and not text.encode("ascii").translate(None, _ASCII_SAFE):
        return text  # every character printable, a tab or a newline: 12 MB in 0.03 s (the search: 0.13 s)
    pattern = _pattern(text, _MULTI_LINE)
    return pattern.sub(_json_escape, text) if pattern is not None else text


def _json_escape(m: re.Match[str]) -> str:
    c = ord(m.group())
    if c > 0xFFFF:  # JSON's \u holds 16 bits: a character beyond them is its surrogate pair
        c -= 0x10000
        return f"\\u{0xD800 + (c >> 10):04x}\\u{0xDC00 + (c & 0x3FF):04x}"
    return f"\\u{c:04x}"
