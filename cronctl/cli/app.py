"""The typer application and its command table, loaded lazily.

Each command is a plain function in its own module (``cronctl.cli.<command>``). :data:`COMMANDS`
names them by module path, with the summary ``cronctl --help`` lists, in that order; a command's
module is imported only when that command runs (or its own ``--help``, or completion of command
names), as pip does. So ``cronctl --version`` and ``cronctl --help`` import no command module and
no console, and a new command adds nothing to the start-up of the others.

This module imports no command module, and command modules never import this one (the import
contract ``cli-app-is-a-table`` in .importlinter): there is no import cycle and nothing
registers itself by being imported. The summaries are checked against each command's docstring
(tests/unit/test_architecture.py).

Command modules import only typer, rich and light cronctl modules at import time; anything
heavy (the kubernetes client, jinja2) is imported inside the command function, so that
``cronctl explain`` starts fast.
"""

from __future__ import annotations

import functools
import importlib
from typing import Annotated, Any, NamedTuple, Optional

import typer
from typer.core import TyperArgument, TyperGroup

from cronctl import __version__


class Entry(NamedTuple):
    """One command of the table: its name, ``module:function``, and the summary --help lists."""

    name: str
    target: str
    summary: str


#: every command, in the order of ``cronctl --help``; ``summary`` is the first paragraph of the
#: function's docstring (listed whole, wrapped to the terminal's width)
COMMANDS: tuple[Entry, ...] = (
    Entry("alerts", "cronctl.cli.alerts:alerts",
          "Write Prometheus alert rules from each CronJob's exact schedule, over kube-state-metrics or over "
          "cronctl record's slot metrics (a slot lost or run twice, no success since due)."),
    Entry("backfill", "cronctl.cli.backfill:backfill",
          "Run lost slots, oldest first, one at a time under one lock and one suspension."),
    Entry("bundle", "cronctl.cli.bundle:bundle",
          "Save the evidence of a CronJob incident before history limits and the event TTL destroy it."),
    Entry("claim", "cronctl.cli.claim:claim",
          "Run COMMAND once per scheduled occurrence: claim its row in the ledger first, or exit."),
    Entry("completion", "cronctl.cli.completion:completion", "Print (or --install) the shell completion script."),
    Entry("diff", "cronctl.cli.diff:diff",
          "Show what the CronJob controller will do the moment a change is applied, before it is applied."),
    Entry("explain", "cronctl.cli.explain:explain",
          "Explain a schedule exactly as the Kubernetes CronJob controller computes it."),
    Entry("history", "cronctl.cli.history:history",
          "Why did (or didn't) it run at 14:20? Every scheduled slot with its verdict and reason."),
    Entry("lint", "cronctl.cli.lint:lint",
          "Check CronJobs for known ways to lose, duplicate or hide work (rule ids CJ001 and on; --rules lists them)."),
    Entry("pause", "cronctl.cli.pause:pause_cmd",
          "Suspend a CronJob on purpose, recording who, why and until when on it."),
    Entry("resume", "cronctl.cli.pause:resume_cmd",
          "Un-suspend a paused CronJob after showing what the controller will start."),
    Entry("reconcile", "cronctl.cli.reconcile:reconcile",
          "List expected occurrences whose effect is not done (none, failed, ambiguous), each as a replay request."),
    Entry("record", "cronctl.cli.record:record",
          "Keep every CronJob's slots in the ledger: CronJobs, Jobs, events and log tails, before Kubernetes "
          "deletes them."),
    Entry("restore", "cronctl.cli.restore:restore_cmd",
          "Put back the suspend value recorded by run-manual and clear its record."),
    Entry("run-manual", "cronctl.cli.run_manual:run_manual_cmd",
          "Suspend the CronJob, check nothing runs, run one Job from its template, wait, save logs, restore."),
    Entry("runbook", "cronctl.cli.runbook:runbook",
          "Print a runbook (manual run, incident bundle, catch-up, DST, Forbid, application locking, alerts, "
          "RBAC, exit codes)."),
    Entry("status", "cronctl.cli.status:status_cmd",
          "Schedule in words, zone, suspend and run record, child Jobs (manual/scheduled) with overlaps, next "
          "runs, and what the controller will do next."),
    Entry("wait", "cronctl.cli.wait:wait_cmd",
          "Re-attach to the manual run that holds the CronJob: follow its Job to the end, save every pod's logs, "
          "then finish as run-manual would (after success: the slot marked done, --catch-up, the restore; after "
          "a failure it stays suspended)."),
)

_BY_NAME = {e.name: e for e in COMMANDS}


def command_function(entry: Entry) -> Any:
    """The function an entry names (its module imported now)."""
    module, function = entry.target.split(":")
    return getattr(importlib.import_module(module), function)


@functools.lru_cache(maxsize=None)
def load_command(entry: Entry) -> Any:
    """The click command of one entry, built by typer's public route (a one-command Typer app made
    into a click command: ``typer.main.get_command``), exactly as registering it on the root would;
    once per process (a click command holds no state of a run; an in-process caller runs many)."""
    one = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
    one.command(entry.name)(command_function(entry))
    cmd = typer.main.get_command(one)
    placeholders(cmd)
    return cmd


#: the placeholder of an option that names none itself, by what its value is (kubectl's and
#: click's style: a word in capitals). Durations are DURATION, instants INSTANT.
_METAVARS = {
    "kubeconfig": "FILE", "filename": "FILE", "context": "NAME", "namespace": "NAME", "job_name": "NAME",
    "name": "NAME", "recorder_job": "NAME", "rule_namespace": "NAME", "lease_namespace": "NAME",
    "selector": "SELECTOR", "out": "PATH", "run_dir": "DIR", "reason": "TEXT", "occurrence": "INSTANT",
    "now": "INSTANT", "now_text": "INSTANT", "runbook_url": "URL", "severity": "KIND=LEVEL", "rule_label": "KEY=VALUE",
    "near_interval": "FRACTION", "max_log_bytes": "BYTES", "log_bytes": "BYTES", "buffer": "N",
}
#: duration flags (cronctl.cli.durations)
_DURATIONS = {"settle", "timeout", "expected_duration", "max_age", "since", "window", "margin", "max_suspend",
              "keep", "status_every", "max_hold", "alert_window", "request_timeout"}


class _Argument(TyperArgument):
    """typer's argument, shown as click shows one: ``CRONJOB``, or ``[CRONJOB]`` when optional (typer
    writes a required one ``{CRONJOB}``)."""

    def make_metavar(self, ctx: Any, *, usage: bool = False) -> str:
        var = str(self.metavar or (self.name or "").upper())
        var += "..." if self.nargs != 1 and not var.endswith("...") else ""
        return f"[{var}]" if usage and not self.required and not var.startswith("[") else var


def placeholders(cmd: Any) -> None:
    """One style of placeholder in every help: ``CRONJOB`` for an argument (``[CRONJOB]`` when it
    may be left out), ``-f FILE``, ``--timeout DURATION``, ``-o [text|json|yaml]`` for a choice, as
    click and kubectl write them (typer's own are ``<str>``, ``<int range>``, ``{cronjob}``)."""
    for p in cmd.params:
        if p.param_type_name == "argument" and isinstance(p, TyperArgument):
            p.__class__ = _Argument
        if getattr(p, "metavar", None) or getattr(p, "is_flag", False) or getattr(p, "hidden", False):
            continue
        name = str(p.name)
        choices = getattr(p.type, "choices", None)
        if p.param_type_name == "argument":
            p.metavar = name.upper()  # a choice's values are in its help text
        elif choices:
            p.metavar = "[" + "|".join(str(getattr(c, "value", c)) for c in choices) + "]"
        elif name in _DURATIONS:
            p.metavar = "DURATION"
        elif name in _METAVARS:
            p.metavar = _METAVARS[name]
        else:
            p.metavar = {"integer": "N", "integer range": "N", "float": "NUMBER", "float range": "NUMBER"}.get(
                getattr(p.type, "name", ""), "TEXT")


class LazyGroup(TyperGroup):
    """The root group: the table's commands are loaded on first use; commands registered on the
    app the usual way (``@app.command``, as tests do) are kept beside them."""

    def list_commands(self, ctx: Any) -> list[str]:
        return [e.name for e in COMMANDS] + [n for n in self.commands if n not in _BY_NAME]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands and cmd_name in _BY_NAME:
            self.commands[cmd_name] = load_command(_BY_NAME[cmd_name])
        return self.commands.get(cmd_name)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        """As typer's, with its "Did you mean" drawn from the whole table (typer looks only at the
        commands loaded so far)."""
        from difflib import get_close_matches

        from cronctl.cli.exceptions import UsageError

        try:
            return super().resolve_command(ctx, args)
        except UsageError as e:
            matches = get_close_matches(args[0], self.list_commands(ctx)) if args else []
            if matches and "Did you mean" not in e.message:
                e.message = f"{e.message.rstrip('.')}. Did you mean {', '.join(repr(m) for m in matches)}?"
            raise

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The command list of ``cronctl --help`` from the table's summaries, importing nothing: each
        summary whole, wrapped beside the names (click's own list cuts it with "..." at the width)."""
        rows = []
        for name in self.list_commands(ctx):
            if name in _BY_NAME and name not in self.commands:
                rows.append((name, _BY_NAME[name].summary))
            else:
                cmd = self.get_command(ctx, name)
                if cmd is not None and not cmd.hidden:
                    rows.append((name, cmd.get_short_help_str(limit=1_000_000)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


app = typer.Typer(
    name="cronctl",
    cls=LazyGroup,
    help="Safe manual runs, Kubernetes-exact schedule explanations and incident bundles for CronJobs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    pretty_exceptions_show_locals=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _namespaces(ctx: Any, args: list[str], incomplete: str) -> list[str]:
    """Completion of the root -n: the cluster's namespaces (cronctl.cli.candidates, loaded on <TAB>)."""
    from cronctl.cli.candidates import namespaces

    return namespaces(ctx, args, incomplete)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"cronctl {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    version: Annotated[
        Optional[bool],
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit."),
    ] = None,
    debug: Annotated[
        bool,
        typer.Option("--debug", help="On an internal error, print its traceback (also CRONCTL_DEBUG=1)."),
    ] = False,
    kubeconfig: Annotated[Optional[str], typer.Option(
        "--kubeconfig", metavar="FILE", show_default=False,
        help="Path to the kubeconfig file, for every command (a command's own --kubeconfig wins).")] = None,
    context: Annotated[Optional[str], typer.Option(
        "--context", metavar="NAME", show_default=False,
        help="The kubeconfig context, for every command (a command's own --context wins).")] = None,
    namespace: Annotated[Optional[str], typer.Option(
        "--namespace", "-n", metavar="NAME", show_default=False, autocompletion=_namespaces,
        help="The namespace, for every command (a command's own -n wins).")] = None,
    request_timeout: Annotated[Optional[str], typer.Option(
        "--request-timeout", metavar="DURATION", show_default=False,
        help="How long one API request may take before it fails, exit 7 (5s, 1m; 0 = no limit; default "
             "10s). Waits such as --timeout are not requests.")] = None,
) -> None:
    """cronctl: the on-call tool for Kubernetes CronJobs."""
    from cronctl.cli import env

    run = env.of(ctx)
    if debug:
        run.debug = True
    run.kubeconfig, run.context = kubeconfig, context
    if namespace is not None:
        from cronctl.names import namespace as valid_namespace

        run.namespace = valid_namespace(namespace)
    if request_timeout is not None:
        from cronctl.cli.durations import REQUEST_TIMEOUT

        run.request_timeout = REQUEST_TIMEOUT.seconds(request_timeout)
