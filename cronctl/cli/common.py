"""Shared CLI pieces: the safe console, kubectl's connection options, output format.

Only ``cronctl.cli`` imports typer and rich. Data goes to the run's ``out`` console (stdout),
diagnostics to its ``err`` (stderr): both are the Environment's (cronctl.cli.env), handed in. rich
honours ``NO_COLOR`` and turns styling off when the stream is not a TTY.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from enum import Enum
from typing import Annotated, Any, Optional

import typer
from rich.console import Console
from rich.text import Text

from cronctl.cli.candidates import cronjob_names as cronjob_names
from cronctl.cli.candidates import namespaces
from cronctl.textsafe import is_visible, json_visible, visible

# the click exception classes typer really runs on (cronctl.cli.exceptions says why)
from cronctl.cli.exceptions import Abort as Abort
from cronctl.cli.exceptions import ClickException as ClickException
from cronctl.cli.exceptions import Exit as Exit
from cronctl.cli.exceptions import UsageError as UsageError



def yaml_text(data: Any, **kwargs: Any) -> str:
    """``yaml.safe_dump(data, allow_unicode=True, ...)`` for the screen: a string holding a control,
    bidi or separator character is written double-quoted with it as ``\\uXXXX`` (same data)."""
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    def represent_str(dumper: yaml.SafeDumper, s: str) -> yaml.Node:
        return dumper.represent_scalar("tag:yaml.org,2002:str", s,
                                       style=None if is_visible(s, multiline=True) else '"')

    Dumper.add_representer(str, represent_str)
    # only double-quoted scalars can hold such characters now, and there \uXXXX is an escape
    return json_visible(yaml.dump(data, Dumper=Dumper, allow_unicode=True, **kwargs))


def json_text(data: Any) -> str:
    """``data`` as indented JSON for the screen: UTF-8 as it is, but every control, bidi or separator
    character as its ``\\uXXXX`` escape (same data); one trailing newline."""
    return json_visible(_indented_json(data)) + "\n"


def _indented_json(data: Any) -> str:
    """JSON indented by two, keys in their order, UTF-8 as it is, anything else as ``str()``.

    orjson writes it (the standard library's indenting encoder is pure Python: 0.6 s of a 90-day
    history, orjson 0.04 s). Its text is the standard library's but for a float under 1e-4 (``1e-5``,
    the same number) and NaN/Infinity (null: JSON has no NaN). What it refuses (an int beyond 64
    bits, a string with a lone surrogate) the standard library writes."""
    import orjson

    try:
        # as json.dumps(indent=2, default=str): a datetime or dataclass as str(), an int key as text
        return orjson.dumps(data, default=str, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS
                            | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS).decode()
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        import json

        return json.dumps(data, indent=2, ensure_ascii=False, default=str)



def emit(out: Console, data: Any, fmt: str) -> None:
    """The one writer of machine output: ``-o json`` (also lint's SARIF, which is JSON) or
    ``-o yaml`` of ``data`` on ``out`` (the run's stdout console), exactly as :func:`json_text` / :func:`yaml_text` write it
    (YAML block style, keys in the document's order, long strings never folded)."""
    text = yaml_text(data, sort_keys=False, width=1000) if fmt == "yaml" else json_text(data)
    stream = out.file
    stream.write(text)
    stream.flush()


@contextlib.contextmanager
def cycle_collection_paused() -> Iterator[None]:
    """The cyclic garbage collector off while a command builds a large output, on again after.

    A 1,000-CronJob history holds millions of dicts; every collection walked all of them again
    (half of ``history -A --since 1d``'s time). Reference counting still frees what the command
    drops: only cycles wait for the end. For commands that end, never for ``record``."""
    import gc

    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def safe_text(value: object, style: str = "") -> Text:
    """Untrusted data as a rich Text (never parsed as markup), on one line, escapes visible."""
    return Text(visible(str(value)), style=style)


#: the inputs services name in their errors (cronctl.errors.option) whose flag is not
#: ``--`` + the name with dashes
_FLAG_OF = {"slots": "--slot", "from_": "--from"}


def flag_of(name: str) -> str:
    """The flag that sets a service's input ``name`` (``occurrence`` -> ``--occurrence``,
    ``job_name`` -> ``--job-name``)."""
    return _FLAG_OF.get(name) or "--" + name.strip("_").replace("_", "-")


class Output(str, Enum):
    text = "text"
    json = "json"
    yaml = "yaml"


OutputOpt = Annotated[
    Output, typer.Option("--output", "-o", help="Output format: text for people, json/yaml for scripts.")
]


class ListOutput(str, Enum):
    """The formats of a command that lists, as kubectl's: ``wide`` shows every column whatever the
    terminal's width, ``name`` one ``cronjob.batch/NAME`` (or ``job.batch/NAME``) per line."""

    text = "text"
    wide = "wide"
    name = "name"
    json = "json"
    yaml = "yaml"


ListOutputOpt = Annotated[
    ListOutput, typer.Option("--output", "-o", help="Output format: text for people (fitted to the terminal), wide "
                             "(every column), name (kind/NAME per line, as kubectl -o name), json/yaml for scripts.")
]


def is_document(output: Any) -> bool:
    """``-o json`` or ``-o yaml``: the command writes its document (cronctl.cli.common.emit)."""
    return str(getattr(output, "value", output)) in ("json", "yaml")
KubeconfigOpt = Annotated[
    Optional[str],
    typer.Option("--kubeconfig", help="Path to the kubeconfig file (default: $KUBECONFIG or ~/.kube/config; in a "
                 "pod with neither, its ServiceAccount).",
                 envvar=None, show_default=False),
]
ContextOpt = Annotated[
    Optional[str], typer.Option("--context", help="The kubeconfig context to use.", show_default=False)
]


def request_timeout_opt(ctx: typer.Context, value: Optional[str]) -> None:
    """Option callback: ``--request-timeout`` after the command sets the run's bound (it wins over
    one before the command: this callback runs later); None (not given) changes nothing."""
    if value is not None:
        from cronctl.cli import env
        from cronctl.cli.durations import REQUEST_TIMEOUT

        env.of(ctx).request_timeout = REQUEST_TIMEOUT.seconds(value)


RequestTimeoutOpt = Annotated[
    Optional[str],
    typer.Option("--request-timeout", metavar="DURATION", show_default=False, expose_value=False,
                 callback=request_timeout_opt,
                 help="How long one API request may take, connection included, before the command fails with "
                 "exit 7 (5s, 1m; 0 = no limit). Default 10s. Also before the command."),
]


def selector_opt(ctx: typer.Context, value: Optional[str]) -> None:
    """Option callback: ``-l`` sets the run's label selector (cronctl.cli.env), for ``Environment.connect``."""
    if value is not None:
        from cronctl.cli import env

        if not value.strip() or not value.isprintable():
            raise UsageError(f"bad --selector {value!r}: expected a label selector such as team=billing")
        env.of(ctx).selector = value


SelectorOpt = Annotated[
    Optional[str],
    typer.Option("--selector", "-l", metavar="SELECTOR", show_default=False, expose_value=False,
                 callback=selector_opt,
                 help="Only the CronJobs with these labels, in kubectl's syntax (team=billing, tier!=web, "
                 "'env in (prod,staging)', owner, !legacy); the API server filters the list."),
]


def namespace_opt(value: Optional[str]) -> Optional[str]:
    """Option callback: a namespace is a Kubernetes name (exit 5 otherwise, before any request)."""
    from cronctl.names import namespace

    return None if value is None else namespace(value)


def cronjob_arg(value: Optional[str]) -> Optional[str]:
    """Argument callback: ``NAME`` or ``cronjob/NAME`` -> ``NAME``, a valid CronJob name (else exit 5)."""
    from cronctl.names import cronjob_name

    return None if value is None else cronjob_name(value)


def job_name_opt(value: Optional[str]) -> Optional[str]:
    """Option callback: ``--job-name`` is a valid Job name (else exit 5)."""
    from cronctl.names import job_name

    return None if value is None else job_name(value)


def file_list(filenames: list[str] | None, extra: list[str] | None = None) -> list[str]:
    """The files of ``-f a -f b`` (and of ``-f a b``: ``extra`` are the positionals of a command
    that takes no name beside -f), in order; ``-`` (stdin) at most once."""
    from cronctl.errors import BadUsage

    paths = [*(filenames or []), *(extra or [])]
    if paths.count("-") > 1:
        raise BadUsage("-f - (standard input) can be given only once")
    return paths


LedgerOpt = Annotated[
    Optional[str],
    typer.Option("--ledger", help="Also judge from the ledger cronctl record keeps (postgresql://..., sqlite:///PATH "
                 "or a file path; 'default' = $CRONCTL_LEDGER, else $XDG_STATE_HOME/cronctl/ledger.sqlite).",
                 show_default=False, metavar="URL"),
]


def ledger_choice(value: Optional[str]) -> tuple[bool, Optional[str]]:
    """(read the ledger?, its URL: None for the default file) from ``--ledger`` and $CRONCTL_LEDGER:
    the variable alone turns the ledger on; ``--ledger default`` is the variable, else the file."""
    import os

    env = os.environ.get("CRONCTL_LEDGER") or None
    if value is None:
        return env is not None, env
    return True, env if value == "default" else value


LedgerClusterOpt = Annotated[
    Optional[str],
    typer.Option("--cluster", help="With --ledger: read only the ledger (no API request), for this cluster's name "
                 "(as cronctl record --cluster wrote it) or 'all'.", show_default=False, metavar="NAME"),
]
NamespaceOpt = Annotated[
    Optional[str],
    typer.Option("--namespace", "-n", help="Namespace (default: the context's namespace, else 'default').",
                 show_default=False, callback=namespace_opt, autocompletion=namespaces),
]
YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]


class CatchUp(str, Enum):
    latest = "latest"
    none = "none"
    all = "all"


class GitOpsMode(str, Enum):
    auto = "auto"
    annotate = "annotate"
    refuse = "refuse"
    ignore = "ignore"


class OnRevert(str, Enum):
    suspend_again = "suspend-again"
    stop = "stop"


GitOpsOpt = Annotated[
    GitOpsMode,
    typer.Option("--gitops", help="How to hold a CronJob a GitOps controller manages, decided before the first write: "
                 "auto (Flux: also turn its reconcile off for the hold, with Flux's annotation; Argo CD or "
                 "another applier that sets spec.suspend: refuse, exit 3, naming the remedy), annotate (always set "
                 "Flux's annotation), refuse (refuse whenever a GitOps tool manages it), ignore (a plain suspend, "
                 "recorded). See cronctl runbook gitops."),
]
OnRevertOpt = Annotated[
    OnRevert,
    typer.Option("--on-revert", help="When someone else sets spec.suspend back during the hold (seen within 2s): "
                 "suspend-again (once; at the second revert stop fighting and name any Job started beside the "
                 "manual one) or stop (report it and stop fighting at once). Nothing is ever deleted."),
]
CatchUpOpt = Annotated[
    CatchUp,
    typer.Option("--catch-up", help="What un-suspending starts: latest (the controller's own: the latest missed "
                 "slot), none (mark it processed first: nothing starts, the slots given up are listed), or all "
                 "(first run every slot lost while suspended as its own Job, oldest first, as cronctl backfill "
                 "does; then nothing is left to catch up). none and all need patch on cronjobs/status."),
]

