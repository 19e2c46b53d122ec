"""`cronctl completion bash|zsh|fish [--install]`: the shell completion scripts.

The scripts are Typer's (click-style: the shell calls ``cronctl`` back with
``_CRONCTL_COMPLETE=complete_<shell>`` and the app itself answers, so completions always match
the installed version). The same text is kept in completions/ (a test regenerates and compares).
"""

from __future__ import annotations

import os
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer
from typer._completion_classes import completion_init  # typer.completion imports them, not as its API
from typer._completion_shared import get_completion_script

from cronctl.cli import env as cli_env

# Register Typer's bash/zsh/fish completers, so that `_CRONCTL_COMPLETE=complete_bash cronctl`
# (what the scripts run on <TAB>) is answered. The app is built with add_completion=False, which
# would otherwise leave them unregistered.
completion_init()

PROG = "cronctl"
COMPLETE_VAR = "_CRONCTL_COMPLETE"


class Shell(str, Enum):
    bash = "bash"
    zsh = "zsh"
    fish = "fish"


#: the end of Typer's zsh script, and what replaces it. Typer's only registers the function with
#: ``compdef``: right when the file is sourced, but loaded from $fpath by compinit (the usual way,
#: and ``completion zsh --install``'s) the file's body runs at the first TAB of each new shell,
#: which then only registered the function and completed nothing. Loaded so (zsh_eval_context ends
#: in ``loadautofunc``), the body now also completes, as click's own zsh script does.
_ZSH_REGISTER = f"compdef _{PROG}_completion {PROG}"
_ZSH_LOAD = f"""\
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
  # loaded from $fpath at the first TAB: complete it now
  _{PROG}_completion "$@"
else
  # sourced (source <(cronctl completion zsh)): register it for the TABs to come
  compdef _{PROG}_completion {PROG}
fi"""


def completion_script(shell: str) -> str:
    """The completion script for ``shell``, exactly as kept in completions/."""
    script = get_completion_script(prog_name=PROG, complete_var=COMPLETE_VAR, shell=shell).strip()
    if shell == "zsh":
        assert script.endswith(_ZSH_REGISTER), "Typer's zsh script changed: see _ZSH_LOAD"
        script = script[:-len(_ZSH_REGISTER)] + _ZSH_LOAD
    return script + "\n"


def install_path(shell: str, env: dict[str, str] | None = None) -> Path:
    """Where each shell looks for a user's completion scripts by convention."""
    env = dict(os.environ) if env is None else env
    home = Path(env.get("HOME") or Path.home())
    data = Path(env.get("XDG_DATA_HOME") or home / ".local" / "share")
    config = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
    if shell == "bash":  # bash-completion loads these on demand
        return Path(env.get("BASH_COMPLETION_USER_DIR") or data / "bash-completion") / "completions" / PROG
    if shell == "zsh":  # a directory the user puts on $fpath
        return home / ".zfunc" / f"_{PROG}"
    return config / "fish" / "completions" / f"{PROG}.fish"


_AFTER = {
    "bash": "bash-completion loads it in new shells (package bash-completion must be installed).",
    "zsh": "add to ~/.zshrc, before compinit:  fpath+=(~/.zfunc); autoload -Uz compinit; compinit",
    "fish": "fish loads it in new shells.",
}


def completion(
    ctx: typer.Context,
    shell: Annotated[Shell, typer.Argument(help="bash, zsh or fish.")],
    install: Annotated[bool, typer.Option(
        "--install", help="Write the script to the shell's usual per-user location instead of printing it.")] = False,
) -> None:
    """Print (or --install) the shell completion script."""
    from cronctl.errors import BadInput

    script = completion_script(shell.value)
    if not install:
        typer.echo(script, nl=False)
        return
    path = install_path(shell.value)
    from cronctl import safefile

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with safefile.closing_fd(safefile.open_parent(str(path))) as parent_fd:
            safefile.replace_file(path.name, script.encode("utf-8"), dir_fd=parent_fd, shown=str(path))
    except OSError as e:
        raise BadInput(f"cannot write {path}: {safefile.describe(e)}") from None
    err = cli_env.of(ctx).err
    err.print(f"installed {shell.value} completion in {path}", markup=False)
    err.print(_AFTER[shell.value], markup=False)


def kubectl_complete(argv: list[str] | None = None) -> int:
    """Entry point of ``kubectl_complete-cronctl``.

    kubectl (1.26+) runs it for ``kubectl cronctl <TAB>`` with the words after ``cronctl``, the
    last one being the word under the cursor, and reads cobra's ``__complete`` answer: one
    candidate per line, then ``:<directive>`` (4 = no file completion; 0 = let the shell
    complete file names, used when cronctl has nothing to offer, e.g. after ``-f``).
    """
    import sys

    from typer._click.shell_completion import get_completion_class
    from typer.main import get_command

    from cronctl.cli import application

    words = list(sys.argv[1:] if argv is None else argv)
    incomplete = words.pop() if words else ""
    comp_cls = get_completion_class("bash")
    assert comp_cls is not None  # registered by completion_init() above
    comp = comp_cls(get_command(application()), {}, PROG, COMPLETE_VAR)
    values = [item.value for item in comp.get_completions(words, incomplete)]
    for v in values:
        sys.stdout.write(f"{v}\n")
    sys.stdout.write(":4\n" if values else ":0\n")
    return 0
