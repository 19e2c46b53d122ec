"""RawData -> the bundle: what it found (:class:`cronctl.bundle.result.BundleResult`) and every file
of the bundle, in memory. PURE.

Order of work: mask secrets (one :class:`Redactor` for everything, in a fixed order so that
placeholders are stable), pick the CronJobs, analyse each, attach logs, and lay out the files:

    bundle.json            the documented record (cronctl/data/bundle.schema.json), made of the
                           result by :mod:`cronctl.bundle.document`
    objects.yaml           every object, redacted, without managedFields, as one ``kind: List``
                           (the shape of ``kubectl get cronjob,jobs,pods,events -o yaml``, so a
                           bundle can be fed back to ``cronctl bundle --from-dump``): evidence
    logs/<pod>/<container>.log, .previous.log
    REPORT.md, report.html (added by render)     SHA256SUMS (added by write)
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from dataclasses import dataclass, field, replace

from cronctl.bundle.analyse import Options, analyse
from cronctl.bundle.document import bundle_doc, bundle_json
from cronctl.bundle.document import summary as _summary  # noqa: F401 (the name tests/unit/test_unexpected_jobs.py imports)
from cronctl.bundle.raw import LogRecord, Obj, RawData
from cronctl.bundle.redact import Redactor, strip_managed_fields
from cronctl.bundle.result import (BundleResult, BundledCronJob, BundledLog, Collected, Counts, CronJobAnalysis,
                                   MissingRead)
from cronctl.redact import safe_url
from cronctl.errors import NotFound


@dataclass
class Bundle:
    """The bundle in memory: what it found, its ``bundle.json`` document (made of ``result``) and the
    other files (path -> bytes)."""

    result: BundleResult
    doc: Obj
    files: dict[str, bytes] = field(default_factory=dict)


#: the lint findings of one CronJob at an instant, as data (cronctl.lint.engine.findings_as_data): handed
#: in by the caller, so that the bundle, a service, does not import another service
Linter = Callable[[Obj, datetime], list[Obj]]


def build_bundle(raw: RawData, names: list[str] | None, opts: Options, *, strict_redaction: bool = False,
                 lint: Linter | None = None) -> Bundle:
    """Build the bundle for the CronJobs ``names`` (None: every CronJob in ``raw``).

    Raises NotFound when a named CronJob is not in ``raw``. ``raw``'s objects are masked in place
    (a bundle of 2,000 Jobs would otherwise hold every object twice): do not reuse ``raw``.
    ``strict_redaction`` (``--redact strict``) also masks every env and flag value not on the
    redactor's allow-list.
    """
    red = Redactor(strict=strict_redaction)
    # pass one over everything the bundle holds, so that a secret found anywhere (an env value, a
    # flag's argument, an Event, a log line) is masked everywhere, earlier places included
    red.learn(raw.cronjobs + raw.jobs + raw.pods + raw.events)
    red.learn([lg.text for lg in raw.logs if lg.text is not None])
    by_ts = lambda o: (str((o.get("metadata") or {}).get("creationTimestamp") or ""),  # noqa: E731
                       str((o.get("metadata") or {}).get("name") or ""))
    cronjobs = [red.mask_in_place(o) for o in sorted(raw.cronjobs, key=lambda o: str(o["metadata"]["name"]))]
    jobs = [red.mask_in_place(o) for o in sorted(raw.jobs, key=by_ts)]
    pods = [red.mask_in_place(o) for o in sorted(raw.pods, key=by_ts)]
    events = [red.mask_in_place(o) for o in raw.events]
    logs = [_redact_log(red, lg) for lg in sorted(raw.logs, key=lambda l: (l.pod, l.container, l.previous))]

    if names is not None:
        present = {str(c["metadata"]["name"]) for c in cronjobs}
        for n in names:
            if n not in present:
                from cronctl import names as k8s_names

                hint = k8s_names.did_you_mean(n, sorted(present))
                if raw.dump_file:  # a dump: name what it holds too
                    raise NotFound(f"cronjob {raw.namespace}/{n} not in {raw.dump_file}{hint} "
                                   f"(it holds: {k8s_names.held(sorted(present))})")
                raise NotFound(f"cronjob {raw.namespace}/{n} not found{hint}")
        cronjobs = [c for c in cronjobs if str(c["metadata"]["name"]) in names]

    analyses: list[tuple[CronJobAnalysis, list[Obj]]] = []
    kept_jobs: dict[str, Obj] = {}
    kept_pods: dict[str, Obj] = {}
    kept_events: set[str] = set()
    files: dict[str, bytes] = {}
    pod_to_cj: dict[str, str] = {}
    for cj in cronjobs:
        a = analyse(cj, jobs, pods, events, replace(opts, suspensions=raw.suspensions or opts.suspensions,
                                                    effects=raw.effects or opts.effects))
        job_names = {j.record.name for j in a.jobs}
        for j in jobs:
            if j["metadata"]["name"] in job_names:
                kept_jobs[j["metadata"]["name"]] = j
        pod_names = {p.name for j in a.jobs for p in j.pods}
        for p in pods:
            if p["metadata"]["name"] in pod_names:
                kept_pods[p["metadata"]["name"]] = p
                pod_to_cj[p["metadata"]["name"]] = a.view.name
        kept_events.update(e["name"] for e in a.events)
        analyses.append((a, lint(cj, opts.now) if lint is not None else []))

    # a CronJob's logs by its name (two of one name, in a hand-made dump: the latter's)
    index = {a.view.name: i for i, (a, _) in enumerate(analyses)}
    logs_of: list[list[BundledLog]] = [[] for _ in analyses]
    for lg in logs:
        cj_name = pod_to_cj.get(lg.pod)
        if cj_name is None:
            continue
        path = None
        if lg.text is not None:
            path = f"logs/{lg.pod}/{lg.container}{'.previous' if lg.previous else ''}.log"
            files[path] = lg.text.encode("utf-8")
        logs_of[index[cj_name]].append(BundledLog(pod=lg.pod, container=lg.container, previous=lg.previous, file=path,
                                           bytes=lg.bytes, truncated=lg.truncated, missing=lg.missing))

    items = ([strip_managed_fields(c) for c in cronjobs]
             + [strip_managed_fields(j) for j in kept_jobs.values()]
             + [strip_managed_fields(p) for p in kept_pods.values()]
             + [strip_managed_fields(e) for e in events if str(e["metadata"].get("name")) in kept_events])
    files["objects.yaml"] = dump_yaml_list(items)

    result = BundleResult(
        collected=Collected(
            at=raw.collected_at, by=raw.collected_by, source=raw.source, dump_file=raw.dump_file,
            namespace=raw.namespace, server=safe_url(raw.server) if raw.server else raw.server,
            server_version=raw.server_version, now=opts.now, now_source=raw.now_source,
            options=dict(raw.options), request_count=raw.request_count),
        missing=tuple(MissingRead(what=m.what, reason=red.text(m.reason), object=m.object) for m in raw.missing),
        logs_note=raw.logs_note,
        values_masked=red.count, distinct_values=red.distinct,
        counts=Counts(cronjobs=len(cronjobs), jobs=len(kept_jobs), pods=len(kept_pods), events=len(kept_events),
                      logs=sum(1 for lg in logs if lg.text is not None)),
        cronjobs=tuple(BundledCronJob(analysis=a, lint=tuple(found), logs=tuple(cj_logs))
                       for (a, found), cj_logs in zip(analyses, logs_of)),
    )
    doc = bundle_doc(result)
    files["bundle.json"] = bundle_json(doc)
    return Bundle(result=result, doc=doc, files=files)


def _redact_log(red: Redactor, lg: LogRecord) -> LogRecord:
    if lg.text is None:
        return lg
    text = red.text(lg.text)
    return LogRecord(pod=lg.pod, container=lg.container, previous=lg.previous, text=text,
                     bytes=len(text.encode("utf-8")), truncated=lg.truncated, missing=lg.missing)


def dump_yaml_list(items: list[Obj]) -> bytes:
    """Objects as one ``kind: List`` YAML document, like ``kubectl get -o yaml``."""
    from cronctl.bundle.yamlout import dump

    doc = {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}
    return dump(doc).encode("utf-8")
