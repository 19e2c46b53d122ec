"""`cronctl alerts`: Prometheus alert rules for CronJobs, with windows from the exact schedule."""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Annotated, Any, Optional

import typer

from cronctl.cli import env
from cronctl.cli.common import ContextOpt, KubeconfigOpt, RequestTimeoutOpt, SelectorOpt, NamespaceOpt, emit
from cronctl.cli.env import Environment
from cronctl.cli.common import cronjob_arg, cronjob_names
from cronctl.textsafe import visible


class RuleFormat(str, Enum):
    prometheusrule = "prometheusrule"
    rules = "rules"


class Source(str, Enum):
    kube_state_metrics = "kube-state-metrics"
    recorder = "recorder"


class AlertsOutput(str, Enum):
    yaml = "yaml"
    json = "json"


def alerts(
    ctx: typer.Context,
    cronjob: Annotated[Optional[str], typer.Argument(
        help="CronJob (cronjob/NAME or NAME). Without it: every CronJob in the namespace, or in the files "
             "given with -f.", show_default=False, callback=cronjob_arg, autocompletion=cronjob_names)] = None,
    filename: Annotated[Optional[list[str]], typer.Option(
        "--filename", "-f", help="Manifest or dump (YAML/JSON, multi-document, or a kubectl List); repeatable; "
                                 "- = stdin.", show_default=False)] = None,
    all_namespaces: Annotated[bool, typer.Option(
        "--all-namespaces", "-A", help="Rules for the CronJobs of every namespace.")] = False,
    source: Annotated[Source, typer.Option(
        "--source", help="kube-state-metrics: rules per CronJob from its schedule over kube-state-metrics' metrics. "
        "recorder: one rule set over `cronctl record --metrics-address` metrics (exact slots: lost, failed, "
        "duplicate, no success, long run, overdue hold, the recorder itself); no CronJob is read, -n and CRONJOB narrow it.")]
    = Source.kube_state_metrics,
    fmt: Annotated[RuleFormat, typer.Option(
        "--format", help="prometheusrule (a monitoring.coreos.com/v1 PrometheusRule) or rules (plain rule "
                         "groups, what promtool check rules and Prometheus' rule_files read).")]
    = RuleFormat.prometheusrule,
    output: Annotated[AlertsOutput, typer.Option("--output", "-o", help="yaml or json.")] = AlertsOutput.yaml,
    margin: Annotated[str, typer.Option(
        "--margin", help="Added to every window (a duration: 10m, 1h30m; a bare number is seconds; 0 allowed).")] = "10m",
    expected_duration: Annotated[Optional[str], typer.Option(
        "--expected-duration", help="How long a run takes (90s, 20m, 1h; a bare number is seconds; default: the Job "
                                    "template's activeDeadlineSeconds, else nothing).", show_default=False)] = None,
    max_suspend: Annotated[str, typer.Option(
        "--max-suspend", help="Suspended longer than this (24h, 2d; a bare number is seconds) fires, unless a `cronctl pause --until` "
                              "says until when.")] = "24h",
    max_hold: Annotated[str, typer.Option(
        "--max-hold", help="--source recorder: a cronctl run holding the CronJob longer than this fires.")] = "2h",
    near_interval: Annotated[float, typer.Option(
        "--near-interval", help="--source recorder: a Job running longer than this fraction of the gap between "
                                "slots fires.", min=0.05, max=10.0)] = 0.8,
    alert_window: Annotated[str, typer.Option(
        "--alert-window", help="--source recorder: how long a lost, failed or duplicate slot keeps its alert "
        "firing.")]
    = "15m",
    recorder_job: Annotated[str, typer.Option(
        "--recorder-job", help="--source recorder: the Prometheus scrape job of the recorders (the up metric).")]
    = "cronctl-recorder",
    severity: Annotated[Optional[list[str]], typer.Option(
        "--severity", help="KIND=LEVEL for the severity label; kinds: missed, not-scheduled (default critical), "
                           "failed, overrun, suspended (default warning); with --source recorder: lost, failed, "
                           "duplicate, stale, recorder, ambiguous (default critical), long-run, overdue-hold, suspended, "
                           "conflict (default warning). Repeatable.", show_default=False)] = None,
    runbook_url: Annotated[Optional[str], typer.Option(
        "--runbook-url", help="The runbook_url annotation: the absolute http(s) URL where your team serves "
                              "the alerts runbook (cronctl runbook alerts prints it); {anchor} (the alert name in lower case), {namespace} and {cronjob} "
                              "are filled in (alone: no format spec). Without it no runbook_url is written (the runbook annotation names "
                              "the cronctl command).", show_default=False, metavar="URL")] = None,
    name: Annotated[str, typer.Option("--name", help="metadata.name of the PrometheusRule.")] = "cronctl-cronjobs",
    rule_namespace: Annotated[Optional[str], typer.Option(
        "--rule-namespace", help="metadata.namespace of the PrometheusRule (default: none written).",
        show_default=False)] = None,
    rule_label: Annotated[Optional[list[str]], typer.Option(
        "--rule-label", help="KEY=VALUE label on the PrometheusRule (for the operator's ruleSelector). Repeatable.",
        show_default=False)] = None,
    windows: Annotated[bool, typer.Option(
        "--windows", help="Print the windows computed for each CronJob (and how) instead of the rules.")] = False,
    now_text: Annotated[Optional[str], typer.Option(
        "--now", help="Compute the windows from this RFC3339 instant (default: now).", show_default=False)] = None,
    kubeconfig: KubeconfigOpt = None,
    request_timeout: RequestTimeoutOpt = None,
    selector: SelectorOpt = None,
    context: ContextOpt = None,
    namespace: NamespaceOpt = None,
) -> None:
    """Write Prometheus alert rules from each CronJob's exact schedule, over kube-state-metrics or over cronctl record's slot metrics (a slot lost or run twice, no success since due).

    --source kube-state-metrics (default): per CronJob, no successful run, not scheduled, last run
    failed, running past the next slot, suspended too long. --source recorder: rules over the
    metrics of `cronctl record --metrics-address`: a slot lost, failed or run twice (fires at the
    first evaluation after the recorder closed it), no success since due, a run near the interval, a
    pause or hold overdue, suspended too long, the recorder down or behind.
    """
    from cronctl import alerts as al
    from cronctl.cli import durations as flags
    from cronctl.errors import BadInput, BadUsage
    from cronctl.model import instant

    run = env.of(ctx)
    now = instant(now_text, what="--now") if now_text else run.now()
    recorder = source is Source.recorder
    defaults = al.RECORDER_SEVERITY_DEFAULTS if recorder else al.SEVERITY_DEFAULTS
    severities = dict(defaults)
    for item in severity or []:
        kind, sep, level = item.partition("=")
        if not sep or kind not in defaults or not level.strip():
            raise BadUsage(f"bad --severity {item!r}: expected KIND=LEVEL with KIND one of "
                           f"{', '.join(defaults)}")
        severities[kind] = level.strip()
    if rule_namespace is not None:
        from cronctl import names

        names.namespace(rule_namespace)  # BadInput (exit 5) naming the bad name
    labels: dict[str, str] = {}
    for item in rule_label or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise BadUsage(f"bad --rule-label {item!r}: expected KEY=VALUE")
        labels[key] = value
    if runbook_url is not None:
        al.check_runbook_url(runbook_url)
    if recorder:
        if run.selector is not None:
            raise BadUsage("-l/--selector selects CronJobs: --source recorder reads none")
        _recorder_rules(run, al.RecorderAlertOptions(
            margin=int(flags.MARGIN.seconds(margin)), max_suspend=int(flags.MAX_SUSPEND.seconds(max_suspend)),
            max_hold=int(flags.MAX_HOLD.seconds(max_hold)), near_interval=near_interval,
            recorder_job=recorder_job, window=int(flags.ALERT_WINDOW.seconds(alert_window)),
            severities=severities, runbook_url=runbook_url,
            namespace=None if all_namespaces else namespace, cronjob=cronjob),
            filename=filename, windows=windows, fmt=fmt, name=name, rule_namespace=rule_namespace, labels=labels,
            output=output.value)
        return
    opts = al.AlertOptions(
        margin=int(flags.MARGIN.seconds(margin)),
        expected_duration=int(flags.EXPECTED_DURATION.seconds(expected_duration)) if expected_duration else None,
        max_suspend=int(flags.MAX_SUSPEND.seconds(max_suspend)),
        severities=severities, runbook_url=runbook_url)

    objs = _cronjobs(run, cronjob, filename, all_namespaces, kubeconfig, context, namespace)
    result = al.build(objs, now, opts)
    for s in result.skipped:
        run.err.print(visible(f"warning: {s.ref}: {s.reason}"), markup=False)  # one value, one line
    if not result.groups:
        raise BadInput("no alert rules written: " + ("; ".join(f"{s.ref}: {s.reason}" for s in result.skipped)
                                                      or "no CronJobs"))
    doc: Any
    if windows:
        doc = result.windows
    elif fmt is RuleFormat.rules:
        doc = {"groups": result.groups}
    else:
        doc = al.prometheus_rule(result.groups, name=name, namespace=rule_namespace, labels=labels)
    emit(run.out, doc, output.value)


def _recorder_rules(run: Environment, opts: Any, *, filename: list[str] | None, windows: bool, fmt: RuleFormat, name: str,
                    rule_namespace: str | None, labels: dict[str, str], output: str) -> None:
    from cronctl import alerts as al
    from cronctl.errors import BadUsage

    if filename or windows:
        raise BadUsage("--source recorder reads no CronJob: -f and --windows are for --source kube-state-metrics")
    if opts.cronjob is not None and opts.namespace is None:
        raise BadUsage("--source recorder with a CRONJOB needs -n NAMESPACE (no cluster is read to find it)")
    if not opts.recorder_job or not opts.recorder_job.isprintable():
        raise BadUsage("--recorder-job: give the scrape job's name")
    groups = al.recorder_rules(opts)
    doc = {"groups": groups} if fmt is RuleFormat.rules else al.prometheus_rule(
        groups, name=name, namespace=rule_namespace, labels=labels)
    emit(run.out, doc, output)


def _cronjobs(run: Environment, name: str | None, filename: list[str] | None, all_namespaces: bool, kubeconfig: str | None,
              context: str | None, namespace: str | None) -> list[dict[str, Any]]:
    from cronctl.errors import BadInput, NotFound

    run.selector_only_for_lists(name, filename, "-f/--filename")
    if filename:
        if all_namespaces:
            raise BadInput("--all-namespaces cannot be combined with -f/--filename")
        from cronctl.cli.common import file_list
        from cronctl.manifest import load_objects
        from cronctl.model import check_objects

        found: list[dict[str, Any]] = []
        for path in file_list(filename):
            cronjobs = [o for o in load_objects(path) if o.get("kind") == "CronJob"]
            check_objects(cronjobs, path)
            found.extend(cronjobs)
        if name is not None:
            found = [o for o in found if (o.get("metadata") or {}).get("name") == name]
            if not found:
                raise NotFound(f"no CronJob named {name} in {', '.join(filename)}")
        if not found:
            raise BadInput(f"no CronJob in {', '.join(filename)}")
        return found

    cluster = run.connect(kubeconfig, context, namespace)
    if name is not None:
        if all_namespaces:
            raise BadInput("a CronJob name cannot be combined with --all-namespaces")
        return [cluster.get_cronjob(name)]
    objs = cluster.list_cronjobs(all_namespaces=all_namespaces)
    if not objs:
        raise BadInput("no CronJobs in " + ("any namespace" if all_namespaces else f"namespace {cluster.namespace}"))
    return objs
