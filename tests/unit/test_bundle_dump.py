"""Offline input: a `kubectl get cronjob,jobs,pods,events -o yaml` dump, and what a broken one does."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from cronctl.bundle.dump import LOGS_NOTE, load_dump
from cronctl.errors import BadInput

DUMP = Path(__file__).parent.parent / "golden" / "bundle" / "incident-004.dump.yaml"
AT = datetime(2027, 1, 1, tzinfo=timezone.utc)


def test_a_kubectl_list_dump_is_split_by_kind_and_other_kinds_ignored() -> None:
    raw = load_dump(str(DUMP), namespace=None, now=None, collected_at=AT)
    assert raw.namespace == "integrations"
    assert [c["metadata"]["name"] for c in raw.cronjobs] == ["mp-orders-sync"]
    assert len(raw.jobs) == 11  # 9 scheduled (10:20 was lost) + the manual fix + one unrelated Job
    assert len(raw.pods) == 10 and len(raw.events) == 49
    assert raw.source == "dump" and raw.logs == [] and raw.logs_note == LOGS_NOTE


def test_now_defaults_to_the_latest_timestamp_in_the_dump() -> None:
    raw = load_dump(str(DUMP), namespace=None, now=None, collected_at=AT)
    # the newest time written in the dump: the 11:30 Job's pod start (11:30:01Z)
    assert raw.now == datetime(2026, 12, 2, 11, 30, 1, tzinfo=timezone.utc)
    assert raw.now_source == "latest timestamp in the dump"
    given = datetime(2026, 12, 2, 12, 0, tzinfo=timezone.utc)
    assert load_dump(str(DUMP), namespace=None, now=given, collected_at=AT).now == given


def test_a_dump_cut_in_the_middle_is_refused_naming_the_file(tmp_path: Path) -> None:
    text = DUMP.read_text()
    cut = tmp_path / "cut.yaml"
    cut.write_text(text[: len(text) // 2].rsplit("\n", 1)[0] + "\n")
    with pytest.raises(BadInput, match=r"cut\.yaml: .*(truncated|malformed)"):
        load_dump(str(cut), namespace=None, now=None, collected_at=AT)


def test_a_dump_cut_mid_line_is_refused(tmp_path: Path) -> None:
    text = DUMP.read_text()
    cut = tmp_path / "cut.yaml"
    cut.write_text(text[:1000] + "  - {name: [")
    with pytest.raises(BadInput, match=r"cut\.yaml"):
        load_dump(str(cut), namespace=None, now=None, collected_at=AT)


def test_a_dump_without_cronjobs_is_bad_input(tmp_path: Path) -> None:
    f = tmp_path / "jobs.yaml"
    f.write_text("apiVersion: v1\nkind: List\nitems:\n- apiVersion: batch/v1\n  kind: Job\n  metadata: {name: j}\n")
    with pytest.raises(BadInput, match="no CronJob in the dump"):
        load_dump(str(f), namespace=None, now=None, collected_at=AT)


def test_an_item_without_a_name_is_bad_input(tmp_path: Path) -> None:
    f = tmp_path / "d.yaml"
    f.write_text("apiVersion: v1\nkind: List\nitems:\n- apiVersion: batch/v1\n  kind: CronJob\n  metadata: {}\n")
    with pytest.raises(BadInput, match=r"item 1 \(CronJob\) has no metadata.name"):
        load_dump(str(f), namespace=None, now=None, collected_at=AT)


def test_a_cronjob_without_a_schedule_is_bad_input(tmp_path: Path) -> None:
    f = tmp_path / "d.yaml"
    f.write_text("kind: CronJob\napiVersion: batch/v1\nmetadata: {name: c, namespace: n}\nspec: {}\n")
    with pytest.raises(BadInput, match="cronjob n/c: spec.schedule is missing"):
        load_dump(str(f), namespace=None, now=None, collected_at=AT)


def test_cronjobs_of_several_namespaces_need_a_namespace(tmp_path: Path) -> None:
    f = tmp_path / "d.yaml"
    cj = "apiVersion: batch/v1\nkind: CronJob\nmetadata: {{name: c, namespace: {ns}}}\nspec: {{schedule: '* * * * *'}}\n"
    f.write_text(cj.format(ns="a") + "---\n" + cj.format(ns="b"))
    with pytest.raises(BadInput, match=r"several namespaces \(a, b\)"):
        load_dump(str(f), namespace=None, now=None, collected_at=AT)
    assert [c["metadata"]["namespace"] for c in load_dump(str(f), namespace="b", now=None, collected_at=AT).cronjobs] == ["b"]


def _split(tmp_path: Path) -> tuple[Path, Path]:
    """The incident dump as two overlapping files: the CronJob, the events and the first half of the
    Jobs and pods; then every Job and pod again (a dump taken per kind, or twice)."""
    import yaml

    items = yaml.safe_load(DUMP.read_text())["items"]
    work = [i for i in items if i["kind"] in ("Job", "Pod")]
    rest = [i for i in items if i["kind"] not in ("Job", "Pod")]
    a, b = tmp_path / "a.yaml", tmp_path / "b.json"
    a.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": rest + work[: len(work) // 2]}))
    b.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": work}))
    return a, b


def test_several_dump_files_read_as_one_and_an_object_in_two_is_kept_once(tmp_path: Path) -> None:
    whole = load_dump(str(DUMP), namespace=None, now=None, collected_at=AT)
    a, b = _split(tmp_path)
    both = load_dump([str(a), str(b)], namespace=None, now=None, collected_at=AT)
    names = sorted(j["metadata"]["name"] for j in both.jobs)
    assert names == sorted(j["metadata"]["name"] for j in whole.jobs) and len(set(names)) == len(names)
    assert len(both.pods) == len(whole.pods) and len(both.events) == len(whole.events)
    assert both.now == whole.now and both.dump_file == f"{a}, {b}"
    # the first file alone misses half the Jobs: the files really are read together
    assert len(load_dump(str(a), namespace=None, now=None, collected_at=AT).jobs) < len(whole.jobs)


def test_history_and_bundle_take_from_dump_repeated_and_judge_as_the_whole_dump(tmp_path: Path, run_cli: Any) -> None:
    a, b = _split(tmp_path)
    now = "2026-12-02T11:35:00Z"
    whole = run_cli("history", "--from-dump", str(DUMP), "--now", now, "-o", "json")
    split = run_cli("history", "--from-dump", str(a), "--from-dump", str(b), "--now", now, "-o", "json")
    assert whole.exit_code == split.exit_code == 0, split.stderr
    assert split.stdout == whole.stdout
    import gc

    assert gc.isenabled()  # history pauses the cycle collector for its output, and only while it runs
    r = run_cli("bundle", "--from-dump", str(a), "--from-dump", str(b), "--now", now, "--out", str(tmp_path / "x"),
                "-o", "json")
    assert r.exit_code == 0, r.stderr
    doc = json.loads((tmp_path / "x" / "bundle.json").read_text())
    assert len(doc["cronjobs"][0]["jobs"]) == 10 and doc["cronjobs"][0]["verdict_counts"].get("duplicate", 0) == 0
    twice = run_cli("history", "--from-dump", "-", "--from-dump", "-", stdin=DUMP.read_text())
    assert twice.exit_code == 2 and "only once" in twice.stderr


def test_a_broken_item_in_the_second_dump_file_names_that_file(tmp_path: Path) -> None:
    a, _ = _split(tmp_path)
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: List\nitems:\n- kind: Job\n  metadata: {namespace: integrations}\n")
    with pytest.raises(BadInput, match=f"^{bad}: item 1 \\(Job\\) has no metadata.name"):
        load_dump([str(a), str(bad)], namespace=None, now=None, collected_at=AT)
