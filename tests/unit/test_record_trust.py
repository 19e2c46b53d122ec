"""A record is not a credential (issue 12, item 7): the pure check of who wrote a run record.

The managedFields below have the shape the API server returns (checked against the real server
in tests/cluster/test_status_restore.py, where the same cases run end to end).
"""

from __future__ import annotations

import functools
from typing import Any

import pytest

from builders import cronjob
from cronctl import model

RECORD = model.RunRecord(run_id="r1", original_suspend=False, operator="alice", reason="catch up",
                         job_name="cj-manual", step="verified", started="2026-12-02T11:00:00Z",
                         holder="host/1", updated="2026-12-02T11:00:01Z").to_annotations()


def _fields(keys: list[str], suspend: bool) -> dict[str, Any]:
    f: dict[str, Any] = {"f:metadata": {"f:annotations": {".": {}, **{f"f:{k}": {} for k in keys}}}}
    if suspend:
        f["f:spec"] = {"f:suspend": {}}
    return f


def _entry(manager: str, keys: list[str], *, suspend: bool = False, subresource: str = "") -> dict[str, Any]:
    e = {"manager": manager, "operation": "Update", "apiVersion": "batch/v1", "time": "2026-12-02T11:00:00Z",
         "fieldsType": "FieldsV1", "fieldsV1": _fields(keys, suspend)}
    if subresource:
        e["subresource"] = subresource
    return e


# the CronJob here: daily and suspended; each test gives its annotations and managedFields
_cronjob = functools.partial(cronjob, "0 0 * * *", suspend=True)


def test_a_record_cronctl_wrote_in_one_patch_is_confirmed() -> None:
    cj = _cronjob(annotations=RECORD, managed=[_entry("kubectl-create", []),
                                               _entry("cronctl", list(RECORD), suspend=True),
                                               _entry("kube-controller-manager", [], subresource="status")])
    assert model.record_unconfirmed(cj) is None


def test_a_record_planted_with_kubectl_annotate_is_not_confirmed_and_names_the_writer() -> None:
    cj = _cronjob(annotations=RECORD, managed=[_entry("kubectl-create", [], suspend=True),
                                               _entry("kubectl-annotate", list(RECORD))])
    why = model.record_unconfirmed(cj)
    assert why is not None and "kubectl-annotate" in why and "cronctl.dev/original-suspend" in why


def test_one_annotation_edited_after_cronctls_write_makes_it_unconfirmed() -> None:
    keys = [k for k in RECORD if k != model.ANN_ORIGINAL_SUSPEND]
    cj = _cronjob(annotations=RECORD, managed=[_entry("cronctl", keys, suspend=True),
                                               _entry("kubectl-annotate", [model.ANN_ORIGINAL_SUSPEND])])
    why = model.record_unconfirmed(cj)
    assert why == "not written by cronctl (field manager): cronctl.dev/original-suspend by kubectl-annotate"


def test_a_record_saying_suspend_was_false_needs_the_suspend_set_by_cronctl_too() -> None:
    """An admin's suspend (kubectl patch) under a record claiming it was false before: the attack."""
    cj = _cronjob(annotations=RECORD, managed=[_entry("kubectl-patch", [], suspend=True),
                                               _entry("cronctl", list(RECORD))])
    why = model.record_unconfirmed(cj)
    assert why is not None and "spec.suspend by kubectl-patch" in why


def test_a_record_saying_suspend_was_true_does_not_need_to_own_suspend() -> None:
    """cronctl's suspend=true on a suspended CronJob changes nothing, so the server keeps the old owner."""
    rec = {**RECORD, model.ANN_ORIGINAL_SUSPEND: "true"}
    cj = _cronjob(annotations=rec, managed=[_entry("kubectl-patch", [], suspend=True), _entry("cronctl", list(rec))])
    assert model.record_unconfirmed(cj) is None


@pytest.mark.parametrize("managed", [[], None, [{"manager": "cronctl"}], [_entry("cronctl", list(RECORD),
                                                                                   suspend=True,
                                                                                   subresource="status")]])
def test_without_a_matching_managed_fields_entry_nothing_is_confirmed(managed: Any) -> None:
    cj = _cronjob(annotations=RECORD, managed=managed)
    why = model.record_unconfirmed(cj)
    assert why is not None and "no known manager" in why


def test_a_field_shared_with_another_manager_is_not_confirmed() -> None:
    cj = _cronjob(annotations=RECORD, managed=[_entry("cronctl", list(RECORD), suspend=True),
                                               _entry("someone", [model.ANN_RUN_ID])])
    why = model.record_unconfirmed(cj)
    assert why is not None and "cronctl.dev/run-id by cronctl, someone" in why
