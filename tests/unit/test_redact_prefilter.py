"""The redaction rules' pre-filter (``cronctl.redact._ANY_TRIGGER``): a text it lets go unread is one
the rules find nothing in. Held against the rules run without it, on texts made of the very words
that let rules run (each hint, line keyword and tool word, in any case), values, separators and
noise: a word left out of the pre-filter makes this fail."""

from __future__ import annotations

import re
from typing import Any

import pytest

import cronctl.redact as R

_WORDS = sorted({h for _p, _c, hs in R._RULES for h in hs} | set(R._LINE_KEYWORDS) | set(R._TOOLS) | {"echo"})
_VALUES = ["Hunter-22x", "S3cret-value-1", "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "AKIAIOSFODNN7EXAMPLE",
           "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N", "admin", "p@ss:w0rd",
           "https://u:pw-123456@db.example/x", "-p", "--password", "-u", "Bearer", "İ", "ß", "2026-11-30T00:40:00Z"]
_SEPARATORS = [" ", "=", ": ", ":", "\n", "-", "_", "'", '"', "/", "@", "://", ";", "\t", ""]


def _spans_unfiltered(s: str) -> list[tuple[int, int]]:
    keep = R._ANY_TRIGGER
    R._ANY_TRIGGER = re.compile("")  # matches every text: the rules always run
    try:
        return R.Redactor()._spans(s)
    finally:
        R._ANY_TRIGGER = keep


# a command line of every tool the rules know, with each of its secret flags: "mysql -p X", "aws put-parameter --value X"
_COMMANDS = sorted(f"{tool} {sub} {flag}".replace("  ", " ") for tool, subs in R._TOOLS.items()
                   for sub, flags in subs.items() for flag in flags)


def _texts() -> Any:
    from hypothesis import strategies as st

    word = st.sampled_from(_WORDS).flatmap(lambda w: st.sampled_from([w, w.upper(), w.title()]))
    command = st.tuples(st.sampled_from(_COMMANDS), st.sampled_from(["", " ", "="]), st.sampled_from(_VALUES)).map(
        "".join)
    piece = st.one_of(word, command, st.sampled_from(_VALUES), st.sampled_from(_SEPARATORS), st.text(max_size=8))
    return st.lists(piece, max_size=12).map("".join)


def test_the_prefilter_never_hides_what_the_rules_find() -> None:
    from hypothesis import given, settings

    @settings(max_examples=3000, deadline=None)
    @given(_texts())
    def check(s: str) -> None:
        assert R.Redactor()._spans(s) == _spans_unfiltered(s)

    check()


@pytest.mark.parametrize("word", _WORDS)
def test_every_word_that_lets_a_rule_run_is_in_the_prefilter(word: str) -> None:
    assert R._ANY_TRIGGER.search(word.lower())


def test_a_text_without_any_of_them_is_left_unread() -> None:
    # the Job names and verdicts of a 90-day history: what the pre-filter exists for
    for s in ["cj-0000-29805120", "ran", "scheduled", "Complete", "cluster", "nightly-report-29805130"]:
        assert not R._ANY_TRIGGER.search(s.lower()) and R.Redactor()._spans(s) == []
