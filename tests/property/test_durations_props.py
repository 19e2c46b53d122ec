"""Properties of the one duration grammar (cronctl.durations): what it writes it reads back, it agrees
with a reference reading of Go's time.ParseDuration grammar (plus ``d`` and bare seconds), and it
refuses everything else with DurationError, never another exception."""

from __future__ import annotations

import re
from fractions import Fraction

from hypothesis import example, given, settings
from hypothesis import strategies as st

from cronctl import durations
from cronctl.schedule.parse import go_parse_duration

INT64 = st.integers(min_value=-(1 << 63), max_value=(1 << 63) - 1)
UNIT_NS = {"ns": 1, "us": 1000, "\u00b5s": 1000, "\u03bcs": 1000, "ms": 10**6, "s": 10**9, "m": 60 * 10**9,
           "h": 3600 * 10**9, "d": 86400 * 10**9}
# the reference: Go's grammar (https://pkg.go.dev/time#ParseDuration) written as a regular expression,
# with cronctl's d, and its bare number
_NUM = r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
_UNIT = "|".join(sorted(map(re.escape, UNIT_NS), key=len, reverse=True))
GO_GRAMMAR = re.compile(rf"[+-]?(?:0|(?:{_NUM}(?:{_UNIT}))+)")
BARE = re.compile(rf"[+-]?{_NUM}")
COMPONENT = re.compile(rf"({_NUM})({_UNIT})")


def reference(text: str) -> Fraction | None:
    """The exact value in nanoseconds a text means, or None when it is not in the grammar."""
    s = text.strip()
    if BARE.fullmatch(s):
        s += "s"
    if not GO_GRAMMAR.fullmatch(s):
        return None
    sign = -1 if s.startswith("-") else 1
    body = s.lstrip("+-")
    if body == "0":
        return Fraction(0)
    return sign * sum(Fraction(num) * UNIT_NS[unit] for num, unit in COMPONENT.findall(body))


component = st.tuples(
    st.one_of(st.integers(0, 10**6).map(str),
              st.tuples(st.integers(0, 9999), st.integers(0, 10**6)).map(lambda p: f"{p[0]}.{p[1]}"),
              st.integers(0, 10**6).map(lambda f: f".{f}"), st.integers(0, 999).map(lambda n: f"{n}.")),
    st.sampled_from(sorted(UNIT_NS)),
).map("".join)
well_formed = st.tuples(st.sampled_from(["", "+", "-"]), st.lists(component, min_size=1, max_size=5)).map(
    lambda t: t[0] + "".join(t[1]))
alphabet = st.sampled_from(list("0123456789.+-smhdnuµμ eE_xy\t:") + ["\u0660", "\uff11"])


@settings(max_examples=400, deadline=None)
@given(INT64)
@example((1 << 63) - 1)
@example(-(1 << 63))
def test_what_format_go_writes_parse_reads_back(ns: int) -> None:
    text = durations.format_go(ns)
    assert durations.parse(text) == ns
    assert go_parse_duration(text) == ns  # and Go's own units read it too (no d in it)


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=0, max_value=3650 * 86400 * 10**9))
def test_what_format_short_writes_parse_reads_back(ns: int) -> None:
    assert durations.parse(durations.format_short(ns)) == ns


@settings(max_examples=500, deadline=None)
@given(well_formed)
@example("1d12h")
@example("1.5h")
@example("-.5s")
def test_a_well_formed_duration_means_what_the_reference_says(text: str) -> None:
    want = reference(text)
    assert want is not None
    if abs(want) >= (1 << 63) - 64:  # past Go's int64 nanoseconds (about 292 years)
        try:
            durations.parse(text)
        except durations.DurationTooLong:
            return
        assert abs(want) < (1 << 63) + 64, text  # at the very edge, truncated fractions may still fit
        return
    got = durations.parse(text)
    # Go reads each fraction through a float64 and truncates: at most one nanosecond off per component
    parts = max(1, len(COMPONENT.findall(text)))
    assert abs(got - want) <= parts, (text, got, want)
    if "." not in text:
        assert got == want


@settings(max_examples=500, deadline=None)
@given(well_formed.filter(lambda t: "d" not in t))
def test_without_days_it_is_gos_parse_duration_exactly(text: str) -> None:
    try:
        want = go_parse_duration(text)
    except durations.DurationError:
        want = None
    try:
        got: int | None = durations.parse(text)
    except durations.DurationTooLong:
        got = None
    assert got == want


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.integers(0, 10**9).map(str), st.floats(0, 1e6, allow_nan=False).map(lambda f: f"{f:.3f}")))
def test_a_bare_number_is_seconds(text: str) -> None:
    assert durations.parse(text) == durations.parse(text + "s")


@settings(max_examples=1000, deadline=None)
@given(st.one_of(st.text(alphabet, max_size=14), st.text(max_size=10)))
@example("1e3")
@example("nan")
@example("1h 30m")
@example("\uff11s")
def test_junk_is_refused_and_the_grammar_is_exactly_the_reference(text: str) -> None:
    want = reference(text)
    try:
        got = durations.parse(text)
    except durations.DurationTooLong:
        assert want is not None and abs(want) >= (1 << 63) - 64, text
    except durations.DurationError:
        assert want is None, text
    else:
        assert want is not None, text
        assert abs(got - want) <= len(COMPONENT.findall(text)) + 1
