"""Every document the code, tests, docs and README cite is in the repository (docs/), every
numbered section of docs/SEMANTICS.md, ARCHITECTURE.md, BACKGROUND.md and STYLE.md they cite
exists there, and every relative Markdown link of README.md and docs/ (``[x](path)``,
``[x](path#anchor)``, ``[x](#anchor)``) points to a file that exists and a heading it has."""

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
             for m in re.findall(r"\b((?:docs|notes)/(?:commands/[a-z-]+|[A-Za-z_]+)\.md)", text)}
    assert cited, "no citations found: the scan is broken"
    assert any(m.startswith("docs/commands/") for _f, m in cited), "no docs/commands/ citation found"
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


# --- Markdown links in README.md and docs/ ---------------------------------------------------------

LINK = re.compile(r"\]\(([^)\s]+)\)")


def _markdown_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _outside_code(text: str) -> list[str]:
    """The lines of a Markdown text outside fenced code blocks, inline code spans removed."""
    lines, fence = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fence = not fence
            continue
        if not fence:
            lines.append(re.sub(r"`[^`]*`", "", line) if not line.startswith("#") else line)
    return lines


def _anchors(path: Path) -> set[str]:
    """GitHub's anchors for the headings of ``path``: lower case, punctuation dropped, blanks to '-',
    a repeated one numbered ``-1``, ``-2``, ..."""
    seen: dict[str, int] = {}
    out: set[str] = set()
    for line in _outside_code(path.read_text()):
        m = re.match(r"^#{1,6} +(.*?)#* *$", line)
        if not m:
            continue
        slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def _broken_links(files: list[Path]) -> list[tuple[str, str]]:
    broken = []
    for f in files:
        for line in _outside_code(f.read_text()):
            for target in LINK.findall(line):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:: not a file
                    continue
                path, _, anchor = target.partition("#")
                dest = (f.parent / path).resolve() if path else f
                if not dest.exists() or (anchor and (dest.suffix != ".md" or anchor not in _anchors(dest))):
                    broken.append((str(f.relative_to(ROOT)) if f.is_relative_to(ROOT) else f.name, target))
    return broken


def test_every_relative_link_of_the_readme_and_docs_resolves() -> None:
    files = _markdown_files()
    links = [t for f in files for line in _outside_code(f.read_text()) for t in LINK.findall(line)]
    assert len(links) > 50, "few links found: the scan is broken"
    assert _broken_links(files) == []


def test_a_broken_link_or_anchor_would_be_found(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other\n\n## `-o json` / `-o yaml`: the contract\n\n## Twice\n\n## Twice\n")
    page = tmp_path / "page.md"
    page.write_text("# Page\n\n[a](other.md) [b](other.md#-o-json---o-yaml-the-contract) [c](#page)\n"
                    "[d](other.md#twice-1) [e](https://example.com/x.md) `[f](not-a-link.md)`\n"
                    "[g](missing.md) [h](other.md#no-such-heading) [i](#nowhere) [j](other.md#twice-2)\n"
                    "```\n[k](in-a-code-block.md)\n```\n")
    assert [t for _f, t in _broken_links([page])] == ["missing.md", "other.md#no-such-heading", "#nowhere",
                                                      "other.md#twice-2"]
