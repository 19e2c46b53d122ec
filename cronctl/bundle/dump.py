"""Offline input: ``kubectl get cronjob,jobs,pods,events -o yaml`` (or ``-o json``) -> RawData.

Pure apart from reading the files. A dump has no logs (said so in the bundle) and no clock:
``now`` defaults to the latest timestamp found in the dump, so that the analysis does not call
every time after the dump was taken "lost".
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from cronctl.bundle.raw import Obj, RawData
from cronctl.errors import BadInput

KINDS = {"CronJob": "cronjobs", "Job": "jobs", "Pod": "pods", "Event": "events"}
LOGS_NOTE = "logs are not part of a kubectl dump; collect from the live cluster to include them"


def load_dump(paths: str | Sequence[str], *, namespace: str | None, now: datetime | None, collected_at: datetime,
              all_namespaces: bool = False) -> RawData:
    """Read the dump at ``paths`` (one file, or several read as one: ``--from-dump`` repeated, e.g.
    one file per namespace or one taken before the history limit and one after) into :class:`RawData`.
    An object found in more than one file (same kind, namespace, name and uid) is kept once, as the
    last file has it, so that overlapping dumps never make one Job two.

    ``namespace`` keeps only that namespace's objects (None: the namespace of the dump's CronJobs,
    which must then be one; ``all_namespaces`` keeps every namespace, and ``RawData.namespace`` is
    then ``"*"``). Objects of other kinds are ignored. A truncated or malformed dump is a
    :class:`BadInput` naming the file and the item: a cut ``kubectl -o yaml`` output loses its
    trailing ``kind: List``, which shows up as a document without ``kind``.
    """
    from cronctl.manifest import load_objects
    from cronctl.model import check_objects

    files = [paths] if isinstance(paths, str) else list(paths)
    path = ", ".join(files)  # for the messages about the whole dump
    kept: dict[tuple[str, str, str, str], tuple[str, int, Obj]] = {}
    for f in files:
        for i, o in enumerate(load_objects(f), start=1):
            _admit(o, f, i)
            meta = o["metadata"]
            ident = (str(o["kind"]), str(meta.get("namespace") or ""), str(meta["name"]), str(meta.get("uid") or ""))
            kept.pop(ident, None)  # dict order follows the file that has the object last
            kept[ident] = (f, i, o)
    buckets: dict[str, list[Obj]] = {"cronjobs": [], "jobs": [], "pods": [], "events": []}
    for f, i, o in kept.values():
        kind = o["kind"]
        if kind in KINDS:
            check_objects([o], f)  # the typed fields, as every file reader checks them
            _check(o, kind, f, i)
            buckets[KINDS[kind]].append(o)
    if not buckets["cronjobs"]:
        raise BadInput(f"{path}: no CronJob in the dump (expected `kubectl get cronjob,jobs,pods,events -o yaml`)")
    if all_namespaces:
        namespace = "*"
    elif namespace is None:
        nss = sorted({str(c["metadata"].get("namespace") or "default") for c in buckets["cronjobs"]})
        if len(nss) > 1:
            raise BadInput(f"{path}: CronJobs from several namespaces ({', '.join(nss)}); choose one with -n")
        namespace = nss[0]
    for key in buckets:
        if namespace != "*":
            buckets[key] = [o for o in buckets[key]
                            if str(o["metadata"].get("namespace") or namespace) == namespace]
    inferred = now is None
    if now is None:
        now = latest_timestamp([o for _f, _i, o in kept.values()]) or collected_at
    return RawData(
        namespace=namespace, source="dump", now=now,
        now_source="latest timestamp in the dump" if inferred else "--now",
        collected_at=collected_at, cronjobs=buckets["cronjobs"], jobs=buckets["jobs"],
        pods=buckets["pods"], events=buckets["events"], logs=[], logs_note=LOGS_NOTE, dump_file=path,
    )


def _admit(o: Obj, path: str, i: int) -> None:
    """Every item of a dump has a kind and a name (a cut ``kubectl -o yaml`` loses its closing
    ``kind: List``, which shows up here)."""
    kind = o.get("kind")
    if not isinstance(kind, str) or not kind:
        what = "a List without its closing 'kind: List' " if "items" in o else "an object without 'kind' "
        raise BadInput(f"{path}: item {i} is {what}(truncated or malformed dump?)")
    meta = o.get("metadata")
    if not isinstance(meta, dict) or not meta.get("name"):
        raise BadInput(f"{path}: item {i} ({kind}) has no metadata.name (truncated or malformed dump?)")


def _check(o: Obj, kind: str, path: str, i: int) -> None:
    """The few fields the analysis relies on must have the right shape."""
    name = o["metadata"]["name"]
    if kind == "CronJob":
        spec = o.get("spec")
        if not isinstance(spec, dict) or not isinstance(spec.get("schedule"), str):
            raise BadInput(f"{path}: item {i} (CronJob {name}) has no spec.schedule (truncated or malformed dump?)")
    elif kind in ("Job", "Pod"):
        for key in ("spec", "status"):
            if key in o and not isinstance(o[key], dict):
                raise BadInput(f"{path}: item {i} ({kind} {name}): {key} is not a mapping")


def latest_timestamp(objs: list[Obj]) -> datetime | None:
    """The latest instant in the typed timestamp fields of the dump's CronJobs, Jobs, Pods and Events
    (:func:`cronctl.model.typed_times`: checked at load, years MIN_YEAR..MAX_YEAR), a lower bound of
    when the dump was taken. Never from an arbitrary key: a Pod condition's ``lastProbeTime`` or a
    ConfigMap value of the year 9999 would otherwise move "now" there."""
    from cronctl.model import typed_times

    return max((t for o in objs if o.get("kind") in KINDS for t in typed_times(o)), default=None)
