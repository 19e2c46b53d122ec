"""`cronctl lint`: risk checks on live CronJobs or manifest files, for people (table) and CI
(JSON, SARIF 2.1.0, exit code 8 at or above ``--fail-on``)."""

from __future__ import annotations

import os
from datetime import datetime
from enum import Enum
from typing import Annotated, Any, Optional

import typer

from cronctl.cli import env
from cronctl.cli.common import ContextOpt, KubeconfigOpt, RequestTimeoutOpt, SelectorOpt, NamespaceOpt, emit
from cronctl.cli.common import cronjob_arg, cronjob_names
from cronctl.cli.env import Environment
from cronctl.textsafe import visible


class LintOutput(str, Enum):
    text = "text"
    json = "json"
    yaml = "yaml"
    sarif = "sarif"


class FailOn(str, Enum):
    error = "error"
    warning = "warning"
    info = "info"
    none = "none"


_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def _cronjob_or_file(value: Optional[str]) -> Optional[str]:
    """The CronJob argument; a file given there (``lint -f a.yaml dir/b.yaml``) is told to take its
    own -f, whether or not its path is also a valid name (then: exit 6 below, with the same hint)."""
    from cronctl.errors import BadInput, BadUsage

    try:
        return cronjob_arg(value)
    except BadInput:
        if value is not None and os.path.exists(value):  # a usage mistake, as explain -f a.yaml b.yaml is
            raise BadUsage(_a_path_for_a_name(value)) from None
        raise


def _a_path_for_a_name(path: str) -> str:
    """kubectl's syntax is one -f per file (``kubectl apply -f a.yaml b.yaml`` is an error there too)."""
    what = "directory" if os.path.isdir(path) else "file"
    return f"{path} is a {what}, not a CronJob name: give each file its own -f (-f ... -f {path}), or a directory"


def lint(
    ctx: typer.Context,
    cronjob: Annotated[Optional[str], typer.Argument(
        help="CronJob to check (cronjob/NAME or NAME). Without it: every CronJob in the namespace, "
             "or in the files given with -f.", show_default=False, callback=_cronjob_or_file, autocompletion=cronjob_names)] = None,
    filename: Annotated[Optional[list[str]], typer.Option(
        "--filename", "-f", help="Manifest file (YAML/JSON, multi-document, or a kubectl List), or a directory "
        "(its *.yaml, *.yml, *.json); repeatable (-f a.yaml -f b.yaml); - = stdin. A file without a CronJob is "
        "skipped with a note.", show_default=False)] = None,
    recursive: Annotated[bool, typer.Option(
        "--recursive", "-R", help="With -f DIR: read its subdirectories too.")] = False,
    all_namespaces: Annotated[bool, typer.Option(
        "--all-namespaces", "-A", help="Check the CronJobs of every namespace.")] = False,
    output: Annotated[LintOutput, typer.Option(
        "--output", "-o", help="text (table), json, yaml, or sarif (SARIF 2.1.0 for code scanning).")] = LintOutput.text,
    fail_on: Annotated[FailOn, typer.Option(
        "--fail-on", help="Exit with code 8 when a finding at or above this severity exists.")] = FailOn.error,
    list_rules: Annotated[bool, typer.Option(
        "--rules", help="List every rule (id, severity, what it finds, why, fix) and exit.")] = False,
    now_text: Annotated[Optional[str], typer.Option(
        "--now", help="Evaluate time-dependent rules (DST, intervals) at this RFC3339 instant.",
        show_default=False)] = None,
    kubeconfig: KubeconfigOpt = None,
    request_timeout: RequestTimeoutOpt = None,
    selector: SelectorOpt = None,
    context: ContextOpt = None,
    namespace: NamespaceOpt = None,
) -> None:
    """Check CronJobs for known ways to lose, duplicate or hide work (rule ids CJ001 and on; --rules lists them)."""
    from cronctl import __version__
    from cronctl.errors import BadInput, ExitCode
    from cronctl.lint.engine import fails, lint_objects, lint_sources, summarize
    from cronctl.model import instant

    run = env.of(ctx)
    err = run.err
    if list_rules:
        _print_rules(run, output)
        return
    now = instant(now_text, what="--now") if now_text else run.now()
    run.selector_only_for_lists(cronjob, filename, "-f/--filename")
    name = cronjob  # cronjob/NAME -> NAME, checked by cronjob_arg
    texts: dict[str, str] = {}
    if recursive and not filename:
        from cronctl.errors import BadUsage

        raise BadUsage("-R/--recursive reads the directories of -f: give -f DIR")
    if filename:
        if all_namespaces:
            raise BadInput("--all-namespaces cannot be combined with -f/--filename")
        if name is not None and os.path.exists(name):
            from cronctl.errors import BadUsage

            raise BadUsage(_a_path_for_a_name(name))  # before anything is read: not a NotFound after it
        from cronctl.cli.common import file_list
        from cronctl.manifest import expand_paths, load_objects, read_text
        from cronctl.model import check_objects

        sources = []
        for path in expand_paths(file_list(filename), recursive=recursive):
            objs = load_objects(path)
            if path != "-":
                texts[path] = read_text(path)
            cronjobs = [o for o in objs if o.get("kind") == "CronJob"]
            if not cronjobs:  # a Deployment or a kustomization beside them: not lint's, not a failure
                err.print(visible(f"{'standard input' if path == '-' else path}: no CronJob, skipped"),
                          markup=False)
                continue
            check_objects(cronjobs, path)
            if name is not None:
                cronjobs = [o for o in cronjobs if (o.get("metadata") or {}).get("name") == name]
                if not cronjobs:
                    err.print(visible(f"{path}: no CronJob named {name} in this file"), markup=False)
            sources.append((path, cronjobs))
        checked, findings = lint_sources(sources, now)  # all files together: duplicates across them
        if name is not None and checked == 0:  # never "0 CronJobs checked", exit 0: a false green in CI
            from cronctl.errors import NotFound

            raise NotFound(f"no CronJob named {name} in {', '.join(filename)}"
                           + (f"; {name} is a file: give each file its own -f (-f {filename[-1]} -f {name})"
                              if os.path.isfile(name) else ""))
    else:

        cluster = run.connect(kubeconfig, context, namespace)
        if name is not None:
            if all_namespaces:
                raise BadInput("a CronJob name cannot be combined with --all-namespaces")
            objs = [cluster.get_cronjob(name)]
        else:
            objs = cluster.list_cronjobs(all_namespaces=all_namespaces)
            if not objs:
                where = "any namespace" if all_namespaces else f"namespace {cluster.namespace}"
                err.print(visible(f"no CronJobs in {where}"), markup=False)
        checked, findings = lint_objects(objs, now)

    # a finding quotes the CronJob (an sh -c script, an env value): masked like every other printer
    findings = _masked(findings, [o for _p, objs in sources for o in objs] if filename else objs)
    if output is LintOutput.sarif:
        from cronctl.lint.sarif import to_sarif

        emit(run.out, to_sarif(findings, tool_version=__version__, texts=texts), "json")
    elif output in (LintOutput.json, LintOutput.yaml):
        doc: dict[str, Any] = {"checked": checked, "summary": summarize(findings),
                               "findings": [f.to_dict() for f in findings]}
        emit(run.out, doc, output.value)
    else:
        _print_table(run, findings, checked)

    if fails(findings, fail_on.value):
        raise typer.Exit(int(ExitCode.FINDINGS))


def _masked(findings: list[Any], objs: list[Any]) -> list[Any]:
    """``findings`` with the secrets of ``objs`` (collected first, cronctl.redact) masked in their messages."""
    from dataclasses import replace

    from cronctl.redact import Redactor

    red = Redactor()
    red.learn(objs)
    return [replace(f, message=red.text(f.message)) for f in findings]


def _print_table(run: Environment, findings: list[Any], checked: int) -> None:
    from rich.text import Text

    from cronctl.cli.layout import Row, lay_out
    from cronctl.lint.engine import summarize

    out = run.out
    if findings:
        # field paths and names are never broken: only the finding wraps, its why and fix under it
        rows = [Row([[f.severity], [f.rule], [f.ref]], f.message, [f"why: {f.why}", f"fix: {f.fix}"])
                for f in findings]
        lines, _ = lay_out(["SEVERITY", "RULE", "CRONJOB"], "FINDING", rows, run.table_width())
        for line in lines:
            text = Text(line.text)
            if line.kind == "row":
                sev = line.text.split(" ", 1)[0]
                text.stylize(_STYLE.get(sev, ""), 0, len(sev))
            if line.note_at is not None:
                text.stylize("dim", line.note_at)
            out.print(text)
    counts = summarize(findings)
    plural = "" if checked == 1 else "s"
    if findings:
        parts = ", ".join(f"{n} {sev}" for sev, n in counts.items() if n)
        out.print(f"{checked} CronJob{plural} checked: {parts}", markup=False)
    else:
        out.print(f"{checked} CronJob{plural} checked: no findings", markup=False)


def _print_rules(run: Environment, output: LintOutput) -> None:
    from cronctl.lint.rules import RULES

    if output is LintOutput.text:
        from cronctl.cli.layout import Row, lay_out

        rows = [Row([[r.id, r.name], [r.severity]], r.summary, [f"why: {r.why}", f"fix: {r.fix}"]) for r in RULES]
        lines, _ = lay_out(["RULE", "SEVERITY"], "FINDS", rows, run.table_width())
        for line in lines:
            run.out.print(line.text, markup=False)
        return
    doc = [{"id": r.id, "name": r.name, "severity": r.severity, "summary": r.summary, "why": r.why, "fix": r.fix}
           for r in RULES]
    if output is LintOutput.sarif:
        from cronctl import __version__
        from cronctl.lint.sarif import to_sarif

        emit(run.out, to_sarif([], tool_version=__version__), "json")
    else:
        emit(run.out, doc, output.value)
