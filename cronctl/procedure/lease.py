"""One active recorder per cluster and ledger: a ``coordination.k8s.io/v1`` Lease, held by renewing it.

The holder writes ``renewTime`` every ``duration / 3`` seconds; another recorder takes the Lease
over when ``renewTime + leaseDurationSeconds`` has passed (its holder died or lost the API server),
so failover takes at most the duration plus one poll. Writes use the Lease's resourceVersion: two
recorders racing for it cannot both win (409 Conflict for the second).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from cronctl import model
from cronctl.cluster import Obj
from cronctl.errors import Conflict
from cronctl.timeutil import UTC


def lease_name(cluster_name: str, ledger: str) -> str:
    """The Lease of one cluster's recorders into one ledger (a Kubernetes name, whatever the inputs)."""
    return "cronctl-record-" + hashlib.sha256(f"{cluster_name}\n{ledger}".encode()).hexdigest()[:16]


def _micro(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class Lease:
    cluster: Any  # the Cluster, in the Lease's namespace
    name: str
    holder: str
    duration: int = 15
    held: bool = False
    other: str = ""  # who holds it when we do not
    other_until: datetime | None = None
    transitions: int = field(default=0)

    def try_hold(self, now: datetime) -> bool:
        """Acquire or renew the Lease at ``now``; True while we hold it."""
        cur = self.cluster.get_lease(self.name)
        spec: Obj = (cur or {}).get("spec") or {}
        holder = str(spec.get("holderIdentity") or "")
        renewed = model.when(spec.get("renewTime")) or model.when(spec.get("acquireTime"))
        dur = spec.get("leaseDurationSeconds")
        dur = dur if isinstance(dur, int) and not isinstance(dur, bool) and dur > 0 else self.duration
        expired = renewed is None or renewed + timedelta(seconds=dur) < now
        if cur is not None and holder not in ("", self.holder) and not expired:
            self.held, self.other, self.other_until = False, holder, renewed + timedelta(seconds=dur) if renewed else None
            return False
        trans = spec.get("leaseTransitions")
        trans = trans if isinstance(trans, int) and not isinstance(trans, bool) else 0
        new_holder = holder != self.holder
        body: Obj = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                     "metadata": {"name": self.name},
                     "spec": {"holderIdentity": self.holder, "leaseDurationSeconds": self.duration,
                              "renewTime": _micro(now),
                              "acquireTime": _micro(now) if new_holder else spec.get("acquireTime") or _micro(now),
                              "leaseTransitions": trans + (1 if new_holder and cur is not None else 0)}}
        if cur is not None:
            body["metadata"]["resourceVersion"] = str(model.meta(cur).get("resourceVersion") or "")
        try:
            self.cluster.write_lease(body)
        except Conflict:
            self.held = False
            return False
        self.held, self.other, self.other_until = True, "", None
        self.transitions = body["spec"]["leaseTransitions"]
        return True

    def release(self) -> None:
        """Give the Lease up (a stop, not a death): another recorder takes it at its next poll."""
        if not self.held:
            return
        cur = self.cluster.get_lease(self.name)
        spec: Obj = (cur or {}).get("spec") or {}
        if cur is None or spec.get("holderIdentity") != self.holder:
            return
        body: Obj = {**cur, "spec": {**spec, "holderIdentity": None}}
        try:
            self.cluster.write_lease(body)
        except Conflict:
            pass
        self.held = False
