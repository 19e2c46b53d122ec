"""Who else writes spec.suspend (cronctl.gitops): detection from metadata, and the hold's strategy.

The managedFields entries have the shape the API server writes (manager, operation, apiVersion,
time, fieldsType FieldsV1, fieldsV1); the live tests (tests/cluster/test_gitops_live.py) make the
same entries with real server-side and client-side applies.
"""

from __future__ import annotations

import functools
import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

import builders
from cronctl import gitops, model


def entry(manager: str, operation: str, time: str, *, suspend: bool = True, sub: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"f:schedule": {}}
    if suspend:
        spec["f:suspend"] = {}
    e: dict[str, Any] = {"manager": manager, "operation": operation, "apiVersion": "batch/v1", "time": time,
                         "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": spec}}
    if sub:
        e["subresource"] = sub
    return e


# orders-sync in shop as the API returns it; each test gives its managedFields
cronjob = functools.partial(builders.cronjob, name="orders-sync", namespace="shop", labels={}, annotations={},
                            managed=[])


T1, T2, T3 = "2026-12-05T23:05:00Z", "2026-12-05T23:05:03Z", "2026-12-05T23:05:10Z"


def test_a_cronjob_only_people_wrote_has_no_gitops_tool_and_a_plain_hold() -> None:
    g = gitops.detect(cronjob(managed=[entry("kubectl-create", "Update", T1), entry("kubectl-patch", "Update", T2)]))
    assert g.tool is None and not g.sets_suspend
    assert gitops.choose(g, "auto").kind == "plain"


@pytest.mark.parametrize("manager", ["argocd-controller", "argocd-application-controller"])
def test_argo_cd_owning_spec_suspend_through_server_side_apply_is_refused_under_auto(manager: str) -> None:
    g = gitops.detect(cronjob(managed=[entry(manager, "Apply", T1)], suspend=False,
                              annotations={gitops.ARGO_TRACKING_ID: "orders:batch/CronJob:shop/orders-sync"}))
    assert (g.tool, g.sets_suspend, g.suspend_value, g.source) == ("argocd", True, False, "Application orders")
    s = gitops.choose(g, "auto")
    assert s.kind == "refuse"
    assert "ignoreDifferences" in s.remedy and "RespectIgnoreDifferences=true" in s.remedy and "orders" in s.remedy


def test_argo_cd_whose_manifest_omits_suspend_holds_plainly_and_says_a_forgotten_hold_goes_unseen() -> None:
    g = gitops.detect(cronjob(managed=[entry("argocd-controller", "Apply", T1, suspend=False)],
                              annotations={gitops.ARGO_TRACKING_ID: "orders:batch/CronJob:shop/orders-sync"}))
    assert g.tool == "argocd" and not g.sets_suspend
    assert gitops.choose(g, "auto").kind == "plain"
    assert "does not set spec.suspend" in g.words()


def test_flux_is_held_with_its_reconcile_annotation_under_auto() -> None:
    g = gitops.detect(cronjob(managed=[entry("kustomize-controller", "Apply", T1)],
                              labels={gitops.FLUX_NAME: "apps", gitops.FLUX_NAMESPACE: "flux-system"}))
    assert (g.tool, g.sets_suspend, g.source) == ("flux", True, "Kustomization flux-system/apps")
    assert gitops.choose(g, "auto").kind == "annotate"
    assert gitops.choose(g, "refuse").kind == "refuse"
    assert gitops.choose(g, "ignore").kind == "ignored"


def test_flux_labels_alone_name_the_tool_even_when_its_manifest_does_not_set_suspend() -> None:
    g = gitops.detect(cronjob(managed=[entry("kustomize-controller", "Apply", T1, suspend=False)],
                              labels={gitops.FLUX_NAME: "apps", gitops.FLUX_NAMESPACE: "flux-system"},
                              annotations={gitops.FLUX_RECONCILE: "disabled"}))
    assert g.tool == "flux" and not g.sets_suspend and g.reconcile_disabled
    assert "reconciling is disabled" in g.words()


def test_client_side_apply_whose_last_applied_sets_suspend_is_kubectl_apply_with_its_value() -> None:
    last = json.dumps({"apiVersion": "batch/v1", "kind": "CronJob", "spec": {"suspend": False}})
    g = gitops.detect(cronjob(managed=[entry("kubectl-client-side-apply", "Update", T1)],
                              annotations={gitops.LAST_APPLIED: last}))
    assert (g.tool, g.sets_suspend, g.suspend_value) == ("kubectl-apply", True, False)
    # nothing re-applies it by itself: the hold is plain, and the guard watches
    assert gitops.choose(g, "auto").kind == "plain"


def test_client_side_apply_by_argo_cd_is_argo_cd_from_its_tracking_annotation() -> None:
    last = json.dumps({"spec": {"suspend": False}})
    g = gitops.detect(cronjob(managed=[entry("argocd-controller", "Update", T1)],
                              annotations={gitops.LAST_APPLIED: last,
                                           gitops.ARGO_TRACKING_ID: "pay:batch/CronJob:shop/orders-sync"}))
    assert (g.tool, g.sets_suspend, g.suspend_value) == ("argocd", True, False)
    assert gitops.choose(g, "auto").kind == "refuse"


def test_an_unknown_server_side_applier_of_suspend_is_refused_unless_ignored() -> None:
    g = gitops.detect(cronjob(managed=[entry("platform-operator", "Apply", T1)]))
    assert g.tool == "other" and g.sets_suspend
    assert gitops.choose(g, "auto").kind == "refuse"
    assert "platform-operator" in gitops.choose(g, "auto").remedy
    assert gitops.choose(g, "ignore").kind == "ignored"


def test_a_status_subresource_entry_does_not_count_as_owning_spec_suspend() -> None:
    g = gitops.detect(cronjob(managed=[entry("argocd-controller", "Apply", T1, sub="status")]))
    assert g.tool is None


def test_helm_controller_setting_suspend_is_refused_with_the_helmrelease_named() -> None:
    g = gitops.detect(cronjob(managed=[entry("helm-controller", "Apply", T1)],
                              labels={gitops.HELM_RELEASE_NAME: "orders", gitops.HELM_RELEASE_NAMESPACE: "shop"}))
    assert (g.tool, g.source) == ("flux-helm", "HelmRelease shop/orders")
    s = gitops.choose(g, "auto")
    assert s.kind == "refuse" and "flux suspend helmrelease orders -n shop" in s.remedy


def test_reverted_by_names_the_newest_writer_of_suspend_other_than_cronctl() -> None:
    cj = cronjob(managed=[entry("cronctl", "Update", T2), entry("argocd-controller", "Apply", T3),
                 entry("kubectl-create", "Update", T1)])
    who = gitops.reverted_by(cj)
    assert who is not None and (who.manager, who.operation) == ("argocd-controller", "Apply")
    assert model.hold_reverted(cj).startswith("spec.suspend set back to false by argocd-controller (Apply) at "
                                              "2026-12-05T23:05:10Z")
    cj["spec"]["suspend"] = True
    assert model.hold_reverted(cj) == ""


def test_a_reverted_hold_is_not_called_a_forged_record() -> None:
    rec = model.RunRecord(run_id="r1", original_suspend=False, operator="alice", reason="", job_name="j",
                          step="created", started=T1)
    ann_fields = {f"f:{k}": {} for k in rec.to_annotations()}
    record_entry = {"manager": "cronctl", "operation": "Update", "time": T2, "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:metadata": {"f:annotations": ann_fields}}}
    cj = cronjob(managed=[record_entry, entry("argocd-controller", "Apply", T3)], annotations=rec.to_annotations())
    assert model.record_unconfirmed(cj) is None          # the record is cronctl's
    assert "argocd-controller" in model.hold_reverted(cj)  # and the hold was undone
    # while suspended, a suspend owned by someone else is still unconfirmed (planted record)
    cj["spec"]["suspend"] = True
    assert "spec.suspend by argocd-controller" in (model.record_unconfirmed(cj) or "")


@pytest.mark.parametrize("bad", [None, "x", 5, [], {"managedFields": "x"}])
def test_detection_never_raises_on_garbled_metadata(bad: Any) -> None:
    cj = {"metadata": {"managedFields": [bad, {"manager": 3, "fieldsV1": bad}], "labels": bad,
                       "annotations": {gitops.LAST_APPLIED: "{not json"}}, "spec": bad}
    assert gitops.detect(cj).tool is None


def test_an_unknown_gitops_mode_is_a_programming_error() -> None:
    with pytest.raises(ValueError):
        gitops.choose(gitops.GitOps(), "sometimes")


def test_the_bundle_names_the_gitops_tool_and_notes_that_a_hold_does_not_stay() -> None:
    from datetime import timezone

    import jsonschema

    from cronctl.bundle.analyse import Options, analyse_cronjob

    cj = cronjob(managed=[entry("kustomize-controller", "Apply", T1)],
                 labels={gitops.FLUX_NAME: "apps", gitops.FLUX_NAMESPACE: "flux-system"})
    cj["metadata"].update(uid="u1", creationTimestamp="2026-12-05T22:00:00Z")
    a = analyse_cronjob(cj, [], [], [], Options(now=datetime(2026, 12, 5, 23, 10, tzinfo=timezone.utc)))
    assert a["gitops"]["tool"] == "flux" and a["gitops"]["source"] == "Kustomization flux-system/apps"
    assert any("does not stay" in n and "Flux" in n for n in a["notes"])
    schema = json.loads((Path(__file__).parents[2] / "cronctl" / "data" / "bundle.schema.json").read_text())
    jsonschema.Draft202012Validator(_find_gitops(schema)).validate(a["gitops"])
    # a CronJob nobody manages carries no gitops key (the bundle of before, unchanged)
    plain = cronjob(managed=[entry("kubectl-create", "Update", T1)])
    plain["metadata"].update(uid="u2", creationTimestamp="2026-12-05T22:00:00Z")
    assert "gitops" not in analyse_cronjob(plain, [], [], [], Options(now=datetime(2026, 12, 5, 23, 10,
                                                                                      tzinfo=timezone.utc)))


def _find_gitops(node: Any) -> Any:
    if isinstance(node, dict):
        if "gitops" in node.get("properties", {}):
            return node["properties"]["gitops"]
        for v in node.values():
            r = _find_gitops(v)
            if r is not None:
                return r
    elif isinstance(node, list):
        for v in node:
            r = _find_gitops(v)
            if r is not None:
                return r
    return None
