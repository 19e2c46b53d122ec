"""Every document the code, tests and README cite is in the repository (docs/), and every section
of docs/SEMANTICS.md they cite exists there."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _tracked_text() -> dict[str, str]:
    files = subprocess.run(["git", "ls-files", "cronctl", "tests", "scripts", "bench", "README.md"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split()
    out: dict[str, str] = {}
    for f in files:
        p = ROOT / f
        if p.suffix in (".py", ".md", ".json", ".j2", ".sh", ".txt") and p.is_file():
            out[f] = p.read_text(errors="replace")
    return out


def test_every_cited_document_is_in_the_repository() -> None:
    cited = {(f, m) for f, text in _tracked_text().items()
             for m in re.findall(r"\b((?:docs|notes)/[A-Za-z_]+\.md)", text)}
    assert cited, "no citations found: the scan is broken"
    missing = sorted((f, m) for f, m in cited if not (ROOT / m).is_file())
    assert missing == []


def test_every_cited_section_of_the_semantics_exists() -> None:
    heads = set(re.findall(r"^#+ (\d+(?:\.\d+)*)[. ]", (ROOT / "docs" / "SEMANTICS.md").read_text(), re.M))
    cited = {(f, s) for f, text in _tracked_text().items()
             for s in re.findall(r"docs/SEMANTICS\.md,? §(\d+(?:\.\d+)*)", text)}
    assert cited, "no section citations found: the scan is broken"
    assert sorted((f, s) for f, s in cited if s not in heads) == []
