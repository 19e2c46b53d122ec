"""Every document the code, tests, docs and README cite is in the repository (docs/), and every
numbered section of docs/SEMANTICS.md, ARCHITECTURE.md, BACKGROUND.md and STYLE.md they cite
exists there."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SECTIONED = ("SEMANTICS", "ARCHITECTURE", "BACKGROUND", "STYLE")
# "docs/SEMANTICS.md §4.2", "docs/BACKGROUND.md, §4.8", "SEMANTICS §3" (inside docs/), "BACKGROUND.md §2"
CITATION = re.compile(r"\b(?:docs/)?(" + "|".join(SECTIONED) + r")(?:\.md)?,? §(\d+(?:\.\d+)*)")


def _tracked_text() -> dict[str, str]:
    files = subprocess.run(["git", "ls-files", "cronctl", "tests", "scripts", "bench", "docs", "README.md"],
                           cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    out: dict[str, str] = {}
    for f in files:
        p = ROOT / f
        if p.suffix in (".py", ".md", ".json", ".j2", ".sh", ".txt") and p.is_file() and p != Path(__file__).resolve():
            out[f] = p.read_text(errors="replace")
    return out


def _sections(doc: str) -> set[str]:
    path = ROOT / "docs" / f"{doc}.md"
    return set(re.findall(r"^#+ (\d+(?:\.\d+)*)[. ]", path.read_text(), re.M)) if path.is_file() else set()


def test_every_cited_document_is_in_the_repository() -> None:
    cited = {(f, m) for f, text in _tracked_text().items()
             for m in re.findall(r"\b((?:docs|notes)/[A-Za-z_]+\.md)", text)}
    assert cited, "no citations found: the scan is broken"
    missing = sorted((f, m) for f, m in cited if not (ROOT / m).is_file())
    assert missing == []


def test_every_cited_section_exists() -> None:
    heads = {doc: _sections(doc) for doc in SECTIONED}
    cited = {(f, doc, s) for f, text in _tracked_text().items() for doc, s in CITATION.findall(text)}
    assert {doc for _f, doc, _s in cited} >= {"SEMANTICS", "BACKGROUND"}, "section citations not found: the scan is broken"
    assert sorted((f, doc, s) for f, doc, s in cited if s not in heads[doc]) == []


@pytest.mark.parametrize("text, expected", [
    ("see docs/SEMANTICS.md §4.2 and docs/BACKGROUND.md, §4.8", [("SEMANTICS", "4.2"), ("BACKGROUND", "4.8")]),
    ("(SEMANTICS §3; ARCHITECTURE.md §2.1)", [("SEMANTICS", "3"), ("ARCHITECTURE", "2.1")]),
    ("docs/STYLE.md mentions no section", []),
])
def test_the_citation_pattern_reads_every_form(text: str, expected: list[tuple[str, str]]) -> None:
    assert CITATION.findall(text) == expected


def test_a_missing_section_would_be_found() -> None:
    assert "99" not in _sections("BACKGROUND") and "4.8" in _sections("BACKGROUND")


def test_background_has_one_numbered_section_per_seed() -> None:
    text = (ROOT / "docs" / "BACKGROUND.md").read_text()
    assert re.findall(r"^## (\d+)\. Seed (\d+)", text, re.M) == [("2", "000"), ("3", "003"), ("4", "004")]
    top = [int(n) for n in re.findall(r"^## (\d+)\.", text, re.M)]
    assert top == list(range(1, len(top) + 1)), "top-level sections are numbered 1, 2, 3, ... without gaps"
