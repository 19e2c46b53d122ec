"""The fast YAML writer reads back to exactly the data it was given."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from cronctl.bundle.yamlout import dump, scalar
from cronctl.manifest import load_objects

DUMP = Path(__file__).parent.parent / "golden" / "bundle" / "incident-004.dump.yaml"
TRICKY = ["", " ", "yes", "No", "ON", "off", "y", "n", "null", "Null", "~", "true", "False", "1", "1.5", "1e3",
          "0x1f", "0o17", "017", ".5", ".inf", "-.inf", ".nan", "2026-12-02T10:00:00Z", "2026-12-02",
          "12:30", "1:2:3", "a: b", "a:b", "a:", "a #b", "a#b", "#x", " lead", "trail ", "two  spaces", "-", "- x",
          "-x", "? x", ":x", "*x", "&x", "!x", "%x", "@x", "`x", "|x", ">x", "{x}", "[x]", "x,y", "'q'", '"q"',
          "multi\nline", "tab\tx", "back\\slash", "ёлка: ёж", "日本", "\u0085nel", "a\u2028b", "\ufeffbom",
          "nb\u00a0sp", "emoji 😀", "<redacted:1>", "https://<redacted:1>@db:5432/x", "*/10 * * * *",
          "registry.example/img:1.4.2", "kubectl.kubernetes.io/last-applied-configuration", "=", "a=b", "+1", "-1"]


@pytest.mark.parametrize("s", TRICKY)
def test_tricky_strings_read_back_as_the_same_string(s: str) -> None:
    doc = {s: s, "list": [s, {s: [s]}]}
    assert yaml.safe_load(dump(doc)) == doc
    assert yaml.load(dump(doc), Loader=yaml.CSafeLoader) == doc


def test_plain_scalars_are_used_where_kubectl_would() -> None:
    assert scalar("mp-orders-sync") == "mp-orders-sync"
    assert scalar("batch.kubernetes.io/job-name") == "batch.kubernetes.io/job-name"
    assert scalar("registry.example/img:1.4.2") == "registry.example/img:1.4.2"
    assert scalar("Created job x") == "Created job x"
    assert scalar("yes") == '"yes"' and scalar("2026-12-02T10:00:00Z") == '"2026-12-02T10:00:00Z"'
    assert scalar(None) == "null" and scalar(True) == "true" and scalar(3) == "3"


def test_a_kubectl_dump_round_trips_and_reads_like_kubectl() -> None:
    objs = load_objects(str(DUMP))
    doc = {"apiVersion": "v1", "items": objs, "kind": "List", "metadata": {"resourceVersion": ""}}
    text = dump(doc)
    assert yaml.safe_load(text) == doc
    assert text.startswith("apiVersion: v1\nitems:\n- apiVersion: batch/v1\n  kind: CronJob\n  metadata:\n")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=8), json_values, max_size=5))
def test_any_json_shaped_mapping_round_trips(doc: dict[str, object]) -> None:
    assert yaml.safe_load(dump(doc)) == (doc or {})


# the plain-scalar pattern before issue 39: one regular expression of alternatives, right but ~125
# bytes of the engine's memory per character (a 16 MB string took 1.98 GB)
_OLD_PLAIN = re.compile(r"[A-Za-z_/](?:[A-Za-z0-9_./@+=,\-]|:(?=[^\s])| (?=[^\s#]))*\Z")


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.text(alphabet="aZ_/09.@+=,-: #\t\nx", max_size=12))
def test_the_linear_plain_test_decides_as_the_old_pattern_did(s: str) -> None:
    from cronctl.bundle.yamlout import _plain

    assert _plain(s) == bool(_OLD_PLAIN.match(s)), repr(s)


def test_a_long_plain_string_costs_no_memory_per_character() -> None:
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert dump({"x": "a" * (8 * 1024 * 1024)}).startswith("x: aaa")
    grew_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grew_mb < 200, grew_mb  # the old pattern: ~985 MB for these 8 MB
