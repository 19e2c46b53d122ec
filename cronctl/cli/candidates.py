"""Dynamic shell completion values: CronJob names and namespaces from the cluster, runbook names
from the package, IANA zones from the zone database.

Typer calls these on <TAB> (``_CRONCTL_COMPLETE=complete_<shell>``) with the command line parsed
so far, so ``cronctl status -n billing <TAB>`` lists billing's CronJobs and ``--kubeconfig`` /
``--context`` are honoured. A cluster lookup is bounded: once the kubernetes client is imported, the
rest (loading kubeconfig, an exec credential plugin, the one list request) runs in a daemon
thread given :data:`CLUSTER_SECONDS`; unreachable, slow, forbidden or anything else gives no candidates,
never an error or a hang (a completion must not print into the user's command line).

Import cost: stdlib only; the kubernetes client is loaded only when a cluster lookup runs.
"""

from __future__ import annotations

import threading
from typing import Any

#: the most a cluster lookup may take before <TAB> gives up with no candidates
CLUSTER_SECONDS = 2.0


def _param(ctx: Any, name: str) -> Any:
    """A value given on the command line so far (``ctx.params``), looking through parent contexts."""
    while ctx is not None:
        value = (getattr(ctx, "params", None) or {}).get(name)
        if value is not None:
            return value
        ctx = getattr(ctx, "parent", None)
    return None


def _from_cluster(ctx: Any, resource: str) -> list[str]:
    """Names of ``resource`` (cronjobs of the namespace, or namespaces), within CLUSTER_SECONDS."""
    from cronctl.kube import connect, load_client

    found: list[str] = []
    try:
        load_client()  # the import takes what it takes (seconds on a loaded machine); it cannot hang
    except ImportError:
        return []

    def lookup() -> None:
        try:
            context = _param(ctx, "context")
            if isinstance(context, (list, tuple)):  # status --context, repeatable: the first one
                context = context[0] if context else None
            cluster = connect(_param(ctx, "kubeconfig"), context, _param(ctx, "namespace"))
            found.extend(cluster.list_names(resource, timeout=CLUSTER_SECONDS))
        except Exception:  # noqa: BLE001 - a completion says nothing rather than break the command line
            pass

    t = threading.Thread(target=lookup, name="cronctl-complete", daemon=True)
    t.start()
    t.join(CLUSTER_SECONDS)
    return [] if t.is_alive() else list(found)


def cronjob_names(ctx: Any, args: list[str], incomplete: str) -> list[str]:
    """CronJobs of the namespace given by -n (else the kubeconfig context's); ``cronjob/NAME`` is
    completed too, as kubectl writes it."""
    from cronctl.names import is_cronjob_ref

    if "/" in incomplete and not is_cronjob_ref(incomplete):
        return []
    kind = incomplete.partition("/")[0] + "/" if "/" in incomplete else ""
    return [kind + n for n in _from_cluster(ctx, "cronjobs")]


def explain_target(ctx: Any, args: list[str], incomplete: str) -> list[str]:
    """explain's SCHEDULE|cronjob/NAME: live CronJobs once ``cronjob/`` is typed (a schedule has no
    candidates)."""
    from cronctl.names import is_cronjob_ref

    return cronjob_names(ctx, args, incomplete) if is_cronjob_ref(incomplete) else []


def namespaces(ctx: Any, args: list[str], incomplete: str) -> list[str]:
    return _from_cluster(ctx, "namespaces")


def runbook_names(ctx: Any, args: list[str], incomplete: str) -> list[str]:
    from cronctl.runbooks import NAMES

    return list(NAMES)


#: in the zone database's directory but not zones anyone writes in spec.timeZone
_NOT_ZONES = {"Factory", "localtime", "posixrules"}


def zones(ctx: Any, args: list[str], incomplete: str) -> list[str]:
    """IANA zone names of the zone database (``zoneinfo.available_timezones``), sorted."""
    import zoneinfo

    return sorted(z for z in zoneinfo.available_timezones() - _NOT_ZONES if z.startswith(incomplete))
