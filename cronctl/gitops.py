"""Who else writes ``spec.suspend``: GitOps controllers, told from a CronJob's own metadata (pure).

cronctl's hold is ``spec.suspend: true`` from the suspend to the restore. A GitOps controller that
applies a manifest setting ``spec.suspend`` puts Git's value back within its sync interval:
- Argo CD with self-heal re-applies the manifest (field manager ``argocd-controller``, or
  ``argocd-application-controller``); a field is kept out of sync only with the Application's
  ``ignoreDifferences`` on ``/spec/suspend`` and ``RespectIgnoreDifferences=true``, or with
  self-heal off. When the manifest omits ``suspend``, Argo CD sees no diff and leaves it alone.
- Flux's kustomize-controller applies server-side with forced ownership (manager
  ``kustomize-controller``) and skips an object annotated
  ``kustomize.toolkit.fluxcd.io/reconcile: disabled``.
- Flux's helm-controller (manager ``helm-controller``) and the Helm CLI (``helm``) write what the
  chart renders; the CLI only on the next ``helm upgrade``.
- ``kubectl apply`` (client side) leaves ``kubectl.kubernetes.io/last-applied-configuration``;
  a pipeline that re-applies it puts its ``suspend`` back.

:func:`detect` reads ``metadata.managedFields`` (who owns ``f:spec.f:suspend``, with the operation
and time), the tracking labels and annotations, and the last-applied annotation, and says which
tool manages the CronJob, whether that tool sets ``spec.suspend`` and to what, and which
Application, Kustomization or HelmRelease it is. :func:`choose` turns that and ``--gitops`` into
the hold's strategy, decided before cronctl's first write. runbooks/gitops.md has the table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from cronctl.decode import loads
from cronctl.errors import BadInput
from cronctl.timeutil import parse_rfc3339

Obj = dict[str, Any]

#: the annotation Flux's kustomize-controller honours: an object carrying it is not reconciled
FLUX_RECONCILE = "kustomize.toolkit.fluxcd.io/reconcile"
FLUX_DISABLED = "disabled"
FLUX_NAME = "kustomize.toolkit.fluxcd.io/name"
FLUX_NAMESPACE = "kustomize.toolkit.fluxcd.io/namespace"
HELM_RELEASE_NAME = "helm.toolkit.fluxcd.io/name"
HELM_RELEASE_NAMESPACE = "helm.toolkit.fluxcd.io/namespace"
ARGO_TRACKING_ID = "argocd.argoproj.io/tracking-id"
ARGO_INSTANCE = "app.kubernetes.io/instance"       # Argo CD's default (label) tracking
MANAGED_BY = "app.kubernetes.io/managed-by"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

#: field managers and the tool each one is
MANAGERS = {
    "argocd-controller": "argocd",
    "argocd-application-controller": "argocd",
    "kustomize-controller": "flux",
    "helm-controller": "flux-helm",
    "helm": "helm",
}
#: tools that re-apply by themselves (a hold they own is undone without anyone acting)
RECONCILERS = ("argocd", "flux", "flux-helm")
TOOL_WORDS = {
    "argocd": "Argo CD", "flux": "Flux (kustomize-controller)", "flux-helm": "Flux (helm-controller)",
    "helm": "Helm", "kubectl-apply": "kubectl apply", "other": "another client",
}
#: managers of one-shot writes by a person or a script: they own ``spec.suspend`` after a create,
#: patch or edit, but never put it back by themselves
_ONE_SHOT_PREFIXES = ("kubectl", "OpenAPI-Generator", "cronctl", "kube-controller-manager", "Go-http-client",
                      "python-requests", "k9s", "Mozilla")
_MODES = ("auto", "annotate", "refuse", "ignore")
ON_REVERT = ("suspend-again", "stop")


@dataclass(frozen=True)
class SuspendOwner:
    """One field manager that owns ``spec.suspend`` (``metadata.managedFields``)."""

    manager: str
    operation: str          # Apply (server-side apply) or Update
    time: datetime | None

    def as_dict(self) -> dict[str, Any]:
        """One of :meth:`GitOps.as_dict`'s ``suspend_owners`` (its time RFC3339 UTC, or null)."""
        return {"manager": self.manager, "operation": self.operation,
                "time": self.time.strftime("%Y-%m-%dT%H:%M:%SZ") if self.time else None}


@dataclass(frozen=True)
class GitOps:
    """Which tool manages a CronJob and what it does with ``spec.suspend``.

    ``tool`` is None when nothing but one-shot clients ever wrote the CronJob. ``sets_suspend``:
    the tool's manifest sets ``spec.suspend`` (it owns the field, or its last-applied
    configuration names it), ``suspend_value`` the value when known. ``source``: the Application,
    Kustomization or HelmRelease, where the metadata names it. ``reconcile_disabled``: Flux's
    reconcile annotation says ``disabled`` now.
    """

    tool: str | None = None
    sets_suspend: bool = False
    suspend_value: bool | None = None
    source: str | None = None
    owners: tuple[SuspendOwner, ...] = ()
    reconcile_disabled: bool = False
    evidence: tuple[str, ...] = field(default_factory=tuple)

    @property
    def reconciles(self) -> bool:
        """A tool that puts its manifest back by itself (Argo CD, Flux)."""
        return self.tool in RECONCILERS

    @property
    def tool_words(self) -> str:
        return TOOL_WORDS.get(self.tool or "", "none")

    def words(self) -> str:
        """One line for people: who manages it and what that means for ``spec.suspend``."""
        if self.tool is None:
            return "no GitOps controller seen (spec.suspend is written by nobody who puts it back)"
        who = self.tool_words + (f" ({self.source})" if self.source else "")
        if self.sets_suspend:
            val = "" if self.suspend_value is None else f"={str(self.suspend_value).lower()}"
            what = f"its manifest sets spec.suspend{val}: a hold is reverted at its next sync"
            if self.tool in ("helm", "kubectl-apply"):
                what = f"its manifest sets spec.suspend{val}: the next apply or upgrade reverts a hold"
        else:
            what = "its manifest does not set spec.suspend: a hold stays (and one left behind goes unseen)"
        if self.reconcile_disabled:
            what += f"; reconciling is disabled ({FLUX_RECONCILE}: {FLUX_DISABLED})"
        return f"managed by {who}; {what}"

    def as_dict(self) -> dict[str, Any]:
        """What was seen, under the keys a run record stores it (``plan.gitops`` of its record.json,
        with the :class:`Strategy`: :func:`hold_entry`), a stored format kept beside its type. The
        published documents that show it use the same keys: status and explain ``gitops`` (plus
        ``words``), bundle.json's CronJobs, pause's ``gitops`` (:func:`hold_entry`)."""
        return {"tool": self.tool, "sets_suspend": self.sets_suspend, "suspend_value": self.suspend_value,
                "source": self.source, "suspend_owners": [o.as_dict() for o in self.owners],
                "reconcile_disabled": self.reconcile_disabled, "evidence": list(self.evidence)}


def _meta(obj: Obj) -> Obj:
    m = obj.get("metadata")
    return m if isinstance(m, dict) else {}


def _strs(d: Any) -> dict[str, str]:
    return {str(k): v for k, v in d.items() if isinstance(v, str)} if isinstance(d, dict) else {}


def _time(v: Any) -> datetime | None:
    if not isinstance(v, str):
        return None
    try:
        return parse_rfc3339(v)
    except BadInput:
        return None


def suspend_owners(cronjob: Obj) -> tuple[SuspendOwner, ...]:
    """The field managers that own ``spec.suspend`` (main resource), newest write first."""
    out: list[SuspendOwner] = []
    for entry in _meta(cronjob).get("managedFields") or []:
        if not isinstance(entry, dict) or entry.get("subresource"):
            continue
        fv = entry.get("fieldsV1")
        spec = fv.get("f:spec") if isinstance(fv, dict) else None
        if isinstance(spec, dict) and "f:suspend" in spec:
            out.append(SuspendOwner(str(entry.get("manager") or "?"), str(entry.get("operation") or "?"),
                                    _time(entry.get("time"))))
    out.sort(key=lambda o: o.time.timestamp() if o.time else float("-inf"), reverse=True)
    return tuple(out)


def _one_shot(manager: str) -> bool:
    return manager.startswith(_ONE_SHOT_PREFIXES)


def _last_applied_suspend(ann: dict[str, str]) -> tuple[bool, bool | None]:
    """(the last-applied configuration sets spec.suspend, its value when a bool)."""
    raw = ann.get(LAST_APPLIED)
    if not raw or len(raw) > 1_000_000:
        return False, None
    try:
        doc = loads(raw)
    except ValueError:
        return False, None
    spec = doc.get("spec") if isinstance(doc, dict) else None
    if not isinstance(spec, dict) or "suspend" not in spec:
        return False, None
    v = spec["suspend"]
    return True, v if isinstance(v, bool) else None


def detect(cronjob: Obj) -> GitOps:
    """Tell which tool manages ``cronjob`` and what it does with ``spec.suspend`` (never raises).

    The field managers decide first (a known manager that owns ``spec.suspend`` sets it, to the
    value the object has now when that manager wrote last); the tracking labels and annotations
    name the tool and its source object when no manager owns the field (then the manifest does
    not set it). A manager cronctl does not know that owns ``spec.suspend`` through server-side
    apply is ``other``: something re-applies it, and nobody can say when.
    """
    m = _meta(cronjob)
    labels, ann = _strs(m.get("labels")), _strs(m.get("annotations"))
    raw_spec = cronjob.get("spec")
    spec: Obj = raw_spec if isinstance(raw_spec, dict) else {}
    now_value = spec.get("suspend") if isinstance(spec.get("suspend"), bool) else None
    owners = suspend_owners(cronjob)
    evidence: list[str] = []
    tool: str | None = None
    sets = False
    value: bool | None = None
    for o in owners:
        t = MANAGERS.get(o.manager)
        if t is None and o.operation == "Apply" and not _one_shot(o.manager):
            t = "other"
        if t is not None:
            tool, sets = t, True
            evidence.append(f"field manager {o.manager} ({o.operation}) owns spec.suspend")
            # a manager that owns the field and wrote last set the value the object has now
            value = now_value if o is owners[0] else None
            break
    la_sets, la_value = _last_applied_suspend(ann)
    # the source object, from the tracking labels and annotations
    source = None
    by_labels: str | None = None
    if FLUX_NAME in labels:
        by_labels = "flux"
        source = f"Kustomization {labels.get(FLUX_NAMESPACE, '?')}/{labels[FLUX_NAME]}"
        evidence.append(f"labels {FLUX_NAME}/{FLUX_NAMESPACE}")
    elif HELM_RELEASE_NAME in labels:
        by_labels = "flux-helm"
        source = f"HelmRelease {labels.get(HELM_RELEASE_NAMESPACE, '?')}/{labels[HELM_RELEASE_NAME]}"
        evidence.append(f"label {HELM_RELEASE_NAME}")
    elif ARGO_TRACKING_ID in ann:
        by_labels = "argocd"
        app = ann[ARGO_TRACKING_ID].split(":", 1)[0]
        source = f"Application {app}"
        evidence.append(f"annotation {ARGO_TRACKING_ID}")
    elif labels.get(MANAGED_BY, "").lower() == "helm":
        by_labels = "helm"
        rel = ann.get("meta.helm.sh/release-name")
        source = f"Helm release {ann.get('meta.helm.sh/release-namespace', '?')}/{rel}" if rel else None
        evidence.append(f"label {MANAGED_BY}=Helm")
    elif ARGO_INSTANCE in labels and any(o.manager.startswith("argocd") for o in owners):
        by_labels = "argocd"
        source = f"Application {labels[ARGO_INSTANCE]}"
        evidence.append(f"label {ARGO_INSTANCE}")
    if tool is None and la_sets:
        # client-side apply: by a GitOps tool when it tracks the object, else by a person or pipeline
        tool, sets, value = by_labels or "kubectl-apply", True, la_value
        evidence.append(f"{LAST_APPLIED} sets spec.suspend")
    elif tool is not None and la_sets and value is None:
        value = la_value
    if tool is None and by_labels is not None:
        tool = by_labels
    elif tool == "other" and by_labels is not None:
        tool = by_labels
    if tool not in ("flux", "flux-helm", "argocd", "helm") and source is not None and by_labels != tool:
        source = None
    return GitOps(tool=tool, sets_suspend=sets, suspend_value=value, source=source, owners=owners,
                  reconcile_disabled=ann.get(FLUX_RECONCILE, "").lower() == FLUX_DISABLED,
                  evidence=tuple(evidence))


@dataclass(frozen=True)
class Strategy:
    """How a hold is made under the GitOps controller seen, decided before the first write.

    ``kind``: ``plain`` (suspend only), ``annotate`` (suspend plus Flux's reconcile annotation,
    put back at the restore), ``refuse`` (no write at all), ``ignored`` (``--gitops ignore``
    against a controller that sets spec.suspend: a plain hold, recorded as such).
    ``why`` says it for the plan; ``remedy`` (refuse only) what to do instead.
    """

    kind: str
    why: str
    remedy: str = ""

    def as_dict(self) -> dict[str, Any]:
        """The strategy's part of :func:`hold_entry` (``remedy`` only when there is one)."""
        return {"strategy": self.kind, "why": self.why, **({"remedy": self.remedy} if self.remedy else {})}


def hold_entry(seen: GitOps, strategy: Strategy) -> dict[str, Any]:
    """The GitOps controller seen and how a hold is made under it, as a run record stores them
    (``plan.gitops`` of record.json: a stored format) and pause's ``-o json`` shows them: the keys of
    :meth:`GitOps.as_dict`, then those of :meth:`Strategy.as_dict`."""
    return {**seen.as_dict(), **strategy.as_dict()}


def argo_remedy(g: GitOps) -> str:
    app = g.source.split(" ", 1)[1] if g.source else "<app>"
    return (f"keep spec.suspend out of Argo CD's sync: in Application {app} add ignoreDifferences "
            f"[{{group: batch, kind: CronJob, jsonPointers: [/spec/suspend]}}] with syncOptions "
            f"[RespectIgnoreDifferences=true], or turn off self-heal for the run, or commit the suspend to Git; "
            f"then run again (cronctl runbook gitops)")


def choose(g: GitOps, mode: str) -> Strategy:
    """The strategy for ``--gitops MODE`` (auto, annotate, refuse, ignore) given what was detected.

    auto: Flux's kustomize-controller → annotate; Argo CD, Flux's helm-controller or an unknown
    applier that sets spec.suspend → refuse; a tool that does not set it, or Helm/kubectl apply
    (nothing re-applies them by itself; the guard watches) → plain. annotate: always annotate
    (refuses only nothing). refuse: refuse whenever a tool manages the CronJob. ignore: plain.
    """
    if mode not in _MODES:
        raise ValueError(mode)
    if g.tool is None:
        return Strategy("plain", "no GitOps controller seen: a plain suspend")
    who = g.tool_words + (f" ({g.source})" if g.source else "")
    if mode == "ignore":
        return Strategy("ignored" if g.sets_suspend else "plain",
                        f"--gitops ignore: a plain suspend although {who} manages it; the guard watches for a "
                        f"revert")
    if mode == "annotate" or (mode == "auto" and g.tool == "flux"):
        return Strategy("annotate", f"{who} manages it: {FLUX_RECONCILE}={FLUX_DISABLED} is set for the hold "
                                    f"and put back at the restore")
    if mode == "refuse":
        return Strategy("refuse", f"--gitops refuse: {who} manages it", remedy=_remedy(g))
    # auto
    if g.sets_suspend and g.tool in ("argocd", "flux-helm", "other"):
        return Strategy("refuse", f"{who} sets spec.suspend"
                        + ("" if g.suspend_value is None else f"={str(g.suspend_value).lower()}")
                        + " and puts it back at its next sync, which would let a scheduled Job start beside the "
                          "manual one", remedy=_remedy(g))
    if g.sets_suspend:
        return Strategy("plain", f"{who} sets spec.suspend, but only when someone applies it again; the guard "
                                 f"watches for that during the hold")
    return Strategy("plain", f"{who} manages it but does not set spec.suspend: a plain suspend holds")


def _remedy(g: GitOps) -> str:
    if g.tool == "argocd":
        return argo_remedy(g)
    if g.tool == "flux":
        return f"--gitops annotate sets {FLUX_RECONCILE}={FLUX_DISABLED} for the hold (cronctl runbook gitops)"
    if g.tool == "flux-helm":
        src = g.source.split(" ", 1)[1] if g.source else "<release>"
        return (f"suspend the HelmRelease first (flux suspend helmrelease {src.split('/')[-1]} -n "
                f"{src.split('/')[0]}) and resume it after the run, or use --gitops ignore (cronctl runbook gitops)")
    managers = ", ".join(sorted({o.manager for o in g.owners})) or "unknown"
    return (f"find what applies this CronJob as field manager {managers} and stop it for the run, then use "
            f"--gitops ignore (recorded) (cronctl runbook gitops)")


def put_back(hold: Any) -> dict[str, str | None]:
    """What a hold changed beside suspend, as restored (a merge-patch ``metadata.annotations`` part):
    Flux's reconcile annotation back to its value before the hold (None: removed). ``hold`` is the
    hold's GitOps part as recorded (JSON text or a dict); only that annotation, whatever it names."""
    if isinstance(hold, str):
        try:
            hold = loads(hold) if hold else {}
        except ValueError:
            return {}
    if not isinstance(hold, dict) or hold.get("strategy") != "annotate" or hold.get("annotation") != FLUX_RECONCILE:
        return {}
    prev = hold.get("previous")
    return {FLUX_RECONCILE: prev if isinstance(prev, str) else None}


def reverted_by(cronjob: Obj, *, not_manager: str = "cronctl") -> SuspendOwner | None:
    """Who set ``spec.suspend`` last, other than ``not_manager`` (the newest owner of the field)."""
    for o in suspend_owners(cronjob):
        if o.manager != not_manager:
            return o
    return None
