"""Offline input: a `kubectl get cronjob,jobs,pods,events -o yaml` dump, and what a broken one does."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

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
