"""The real Flux kustomize-controller (v1.9.6, ``scripts/flux``) managing a CronJob on the local control
plane: what it does to a ``spec.suspend`` someone else changed. The ground truth a later test stands
on when it shows that cronctl's hold survives Flux.

Facts seen with the real controller (kustomize-controller v1.9.6 on Kubernetes 1.37.2):

* It applies with server-side apply, field manager ``kustomize-controller``, operation ``Apply``, and
  always with force (``ForceOwnership``; ``spec.force`` is about recreating immutable objects,
  not this): every field of the manifest, ``f:spec.f:suspend`` included when the manifest sets
  it, is owned by that one entry, and an Apply by another manager (``kubectl apply --server-side
  --force-conflicts --field-manager=other``) of ``suspend: true`` is undone at the next
  reconciliation without any conflict error.
* It adds two labels to each object it applies, ``kustomize.toolkit.fluxcd.io/name: <Kustomization>``
  and ``kustomize.toolkit.fluxcd.io/namespace: <its namespace>`` (owned by the same Apply entry),
  and no annotation.
* Drift is found by a dry-run apply every ``spec.interval`` (with jitter); nothing watches the
  applied objects. With ``interval: 5s`` a ``kubectl patch`` of suspend was undone 4.9-5.5 s later;
  each reconciliation took 0.2-0.4 s, and fetched the artifact again (it is not cached).
* ``kubectl patch`` writes as manager ``kubectl-patch`` (operation ``Update``), which takes
  ``f:spec.f:suspend`` out of Flux's entry. Before applying, Flux rewrites every ``Update`` entry
  whose manager name STARTS WITH ``kubectl`` (a prefix match: ``kubectl-patch``,
  ``kubectl-annotate``, ``kubectl-edit``, ``kubectl-client-side-apply``, ...), and
  ``before-first-apply``, into its own Apply entry; its apply then drops whatever of those fields
  the manifest does not hold: an annotation added with ``kubectl annotate`` disappears. Fields an
  ``Update`` of any other manager wrote (``--field-manager=cronctl``) and that the manifest does not
  hold are kept; the ones it holds (``spec.suspend``) are forced back.
* An object (not the Kustomization) annotated ``kustomize.toolkit.fluxcd.io/reconcile: disabled`` is
  skipped altogether: no apply, no cleanup of managedFields; removing the annotation brings it
  back at the next reconciliation.
* Each apply that changed something is an Event (reason ``Progressing``, note
  ``CronJob/<ns>/<name> configured``) on the Kustomization, reported by ``kustomize-controller``;
  the Kustomization's ``status.inventory`` lists ``<ns>_<name>_batch_CronJob``.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from cluster_support import cronjob_body, read_cronjob, run_kubectl
from flux_support import MANAGER, Flux, flux  # noqa: F401 (flux: the fixture)

# each test takes 10-25 s: part of the compatibility selection
pytestmark = [pytest.mark.cluster, pytest.mark.compat, pytest.mark.xdist_group("flux")]

INTERVAL = 5  # seconds: the Kustomizations' spec.interval
#: Flux's periodic reconciliation comes every interval (plus a few % of jitter); a revert must come
#: within a few of them, the rest is slack for a loaded machine
REVERT_WITHIN = 6 * INTERVAL
RECONCILE_ANNOTATION = "kustomize.toolkit.fluxcd.io/reconcile"


def suspend_owners(cj: dict[str, Any]) -> list[tuple[str, str]]:
    """(manager, operation) of each metadata.managedFields entry that owns f:spec.f:suspend."""
    return [(e.get("manager", ""), e.get("operation", "")) for e in cj["metadata"].get("managedFields") or []
            if "f:suspend" in ((e.get("fieldsV1") or {}).get("f:spec") or {})]


def patch_suspend(kubeconfig: str, ns: str, name: str, value: bool) -> dict[str, Any]:
    """A plain ``kubectl patch`` of spec.suspend (no cronctl): returns the object as patched."""
    r = run_kubectl(kubeconfig, "-n", ns, "patch", "cronjob", name, "--type=merge",
                    "-p", json.dumps({"spec": {"suspend": value}}), "-o", "json", "--show-managed-fields")
    return dict(json.loads(r.stdout))


def suspended(k8s: Any, ns: str, name: str) -> bool:
    return bool(read_cronjob(k8s, ns, name)["spec"].get("suspend"))


def test_flux_undoes_a_plain_kubectl_patch_of_suspend_within_its_interval(
        flux: Flux, kubeconfig: str, namespace: str, k8s: Any) -> None:
    body = cronjob_body("nightly-export", suspend=False)
    assert body["spec"]["suspend"] is False  # in the manifest, explicitly: Flux owns the field
    managed = flux.manage(namespace, [body], interval=f"{INTERVAL}s")
    cj = read_cronjob(k8s, namespace, "nightly-export")
    assert cj["spec"]["suspend"] is False
    labels = cj["metadata"].get("labels") or {}
    assert labels.get("kustomize.toolkit.fluxcd.io/name") == managed.name
    assert labels.get("kustomize.toolkit.fluxcd.io/namespace") == namespace
    assert suspend_owners(cj) == [(MANAGER, "Apply")], cj["metadata"]["managedFields"]
    assert flux.server is not None and any(managed.name in p for p in flux.server.requests)

    patched = patch_suspend(kubeconfig, namespace, "nightly-export", True)
    t0 = time.monotonic()
    assert patched["spec"]["suspend"] is True
    # the patch took the field from Flux: an Update by kubectl's patch manager owns it now
    assert suspend_owners(patched) == [("kubectl-patch", "Update")], patched["metadata"]["managedFields"]

    def reverted() -> dict[str, Any] | None:
        c = read_cronjob(k8s, namespace, "nightly-export")
        return c if c["spec"]["suspend"] is False else None

    cj = flux.wait_for("Flux to put spec.suspend back to false", reverted, timeout=REVERT_WITHIN)
    took = time.monotonic() - t0
    print(f"Flux reverted spec.suspend {took:.1f}s after the kubectl patch (interval {INTERVAL}s)")
    # a forced server-side apply: the field is Flux's again, and the patch's manager owns nothing of it
    assert suspend_owners(cj) == [(MANAGER, "Apply")], cj["metadata"]["managedFields"]
    # Ready again at its revision (the status may still say "reconciling" the moment the object is back: CI, stop 31)
    managed.wait_applied(timeout=60)


def test_flux_leaves_an_object_annotated_reconcile_disabled_alone(
        flux: Flux, kubeconfig: str, namespace: str, k8s: Any) -> None:
    managed = flux.manage(namespace, [cronjob_body("nightly-export", suspend=False)], interval=f"{INTERVAL}s")
    run_kubectl(kubeconfig, "-n", namespace, "annotate", "cronjob", "nightly-export",
                f"{RECONCILE_ANNOTATION}=disabled")
    assert patch_suspend(kubeconfig, namespace, "nightly-export", True)["spec"]["suspend"] is True

    time.sleep(3 * INTERVAL)   # three periodic reconciliations
    managed.reconcile_now()    # and one more that certainly ran to the end (status.lastHandledReconcileAt)
    assert suspended(k8s, namespace, "nightly-export"), "Flux changed an object annotated reconcile=disabled"
    assert ("kubectl-patch", "Update") in suspend_owners(read_cronjob(k8s, namespace, "nightly-export"))

    run_kubectl(kubeconfig, "-n", namespace, "annotate", "cronjob", "nightly-export", f"{RECONCILE_ANNOTATION}-")
    t0 = time.monotonic()
    flux.wait_for("Flux to put spec.suspend back to false once the annotation is gone",
                  lambda: not suspended(k8s, namespace, "nightly-export"), timeout=REVERT_WITHIN)
    print(f"Flux reverted spec.suspend {time.monotonic() - t0:.1f}s after the annotation was removed")
    assert suspend_owners(read_cronjob(k8s, namespace, "nightly-export")) == [(MANAGER, "Apply")]


def test_flux_strips_what_kubectl_wrote_but_only_reverts_the_suspend_another_manager_wrote(
        flux: Flux, kubeconfig: str, namespace: str, k8s: Any) -> None:
    # no periodic reconciliation between the three writes (an hour's interval): on a loaded machine a
    # 5 s one ran between kubectl's annotate and the patch and had already stripped the annotation
    # the patch's answer is checked for (matrix run, 1.37.2 and 1.36.3); reconcile_now is the one
    managed = flux.manage(namespace, [cronjob_body("nightly-export", suspend=False)], interval="1h")
    run_kubectl(kubeconfig, "-n", namespace, "annotate", "cronjob", "nightly-export", "example.com/by-kubectl=yes")
    run_kubectl(kubeconfig, "-n", namespace, "annotate", "--field-manager=cronctl", "cronjob", "nightly-export",
                "example.com/by-cronctl=yes")
    r = run_kubectl(kubeconfig, "-n", namespace, "patch", "--field-manager=cronctl", "cronjob", "nightly-export",
                    "--type=merge", "-p", json.dumps({"spec": {"suspend": True}}), "-o", "json",
                    "--show-managed-fields")
    managers = {(e["manager"], e["operation"]) for e in json.loads(r.stdout)["metadata"]["managedFields"]}
    assert {("kubectl-annotate", "Update"), ("cronctl", "Update")} <= managers

    managed.reconcile_now()   # a reconciliation that began after all three writes, run to the end
    cj = read_cronjob(k8s, namespace, "nightly-export")
    annotations = cj["metadata"].get("annotations") or {}
    assert "example.com/by-kubectl" not in annotations, "Flux kept an annotation kubectl-annotate wrote"
    assert annotations.get("example.com/by-cronctl") == "yes", "Flux removed an annotation manager cronctl wrote"
    assert cj["spec"]["suspend"] is False
    assert suspend_owners(cj) == [(MANAGER, "Apply")], cj["metadata"]["managedFields"]
    managers = {(e["manager"], e["operation"]) for e in cj["metadata"]["managedFields"]}
    assert ("cronctl", "Update") in managers and not any(m.startswith("kubectl") for m, _ in managers), managers


def test_a_new_revision_of_the_manifests_is_applied_before_update_returns(
        flux: Flux, namespace: str, k8s: Any) -> None:
    managed = flux.manage(namespace, [cronjob_body("nightly-export", suspend=False)], interval=f"{INTERVAL}s")
    first = managed.revision
    second = managed.update([cronjob_body("nightly-export", suspend=False, schedule="0 0 1 2 *")])
    ks = managed.kustomization()
    assert second != first and ks is not None and ks["status"]["lastAppliedRevision"] == second
    assert read_cronjob(k8s, namespace, "nightly-export")["spec"]["schedule"] == "0 0 1 2 *"
