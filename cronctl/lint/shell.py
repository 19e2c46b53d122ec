"""How a ``sh -c SCRIPT`` container command can lose its exit code, for lint rule CJ028.

A Job's success is the container's exit code, and a shell wrapper decides that code: in
``a; b`` a failure of ``a`` is lost unless ``set -e`` is on; in ``a | b`` a failure of ``a`` is
lost unless ``set -o pipefail`` is on; ``a || true`` and a final ``exit 0`` turn any failure into
success. This module finds those and nothing else.

It is a small lexer for the POSIX shell language (quotes, escapes, ``$(...)``, backticks, comments,
here-documents) and a reading of the script's *top-level* commands only: a compound command
(``if``/``for``/``while``/``case``/``{ }``/``( )``) counts as one command, whose insides are
not judged. That errs on the side of saying nothing: a single command, ``exec prog``,
``a && b && c`` and ``if ...; then ...; fi`` are fine, and commands that cannot meaningfully
fail (``echo``, ``export``, ``set``, assignments, ``cmd || exit 1``) may come first.

Pure: stdlib only, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Sequence

SHELLS = frozenset({"sh", "bash", "ash", "dash", "ksh", "mksh", "zsh"})
#: a launcher that runs its arguments as the command (``env [VAR=x...] sh``, ``busybox sh``)
_LAUNCHERS = frozenset({"env", "busybox"})
#: commands whose failure does not matter to the run's outcome, so they may come before others
_HARMLESS = frozenset({"echo", "printf", "true", ":", "set", "export", "readonly", "local", "declare",
                       "typeset", "trap", "umask", "unset", "shift", "sleep", "exec"})
#: what makes a failure look like success at the end of ``cmd || ...``
_SWALLOW = frozenset({"true", ":", "echo", "printf"})
_OPENERS = {"if": "fi", "case": "esac", "for": "done", "while": "done", "until": "done", "select": "done",
            "{": "}", "(": ")", "[[": "]]"}
_REDIRS = ("<<<", "<<-", "&>>", "<<", ">>", ">&", "<&", "&>", ">|", "<>", "<", ">")
_SEPS = ("&&", "||", ";;", "|&", ";", "&", "|", "\n", "(", ")")



@dataclass(frozen=True)
class ShellCall:
    shell: str  # the shell as written, e.g. /bin/sh
    flags: frozenset[str]  # single-letter options given before the script, e.g. {"e", "u"}
    options: frozenset[str]  # -o NAME options, e.g. {"pipefail"}
    script: str
    index: int  # where the script stands in argv


def _base(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def _apply_options(args: Sequence[str], flags: set[str], options: set[str]) -> tuple[int, bool]:
    """Read ``-e``, ``-euo pipefail``, ``+e``, ``-o errexit`` ... from ``args`` into ``flags`` and
    ``options``; (index of the first non-option argument, whether ``-c`` was among them)."""
    i, has_c = 0, False
    while i < len(args):
        tok = args[i]
        if tok in ("--", "-"):
            return i + 1, has_c
        if len(tok) < 2 or tok[0] not in "-+" or tok.startswith("--"):
            if tok.startswith("--"):  # bash long options (--login, --norc): no effect here
                i += 1
                continue
            return i, has_c
        on = tok[0] == "-"
        i += 1
        for ch in tok[1:]:
            if ch == "o":
                if i < len(args):
                    name = args[i]
                    if name == "errexit":  # the same switch as -e
                        (flags.add if on else flags.discard)("e")
                    else:
                        (options.add if on else options.discard)(name)
                    i += 1
            elif ch == "c":
                has_c = True
            else:
                (flags.add if on else flags.discard)(ch)
    return i, has_c


def shell_call(argv: Sequence[str]) -> ShellCall | None:
    """The shell and script when ``argv`` (a container's command + args) runs ``SHELL [opts] -c
    SCRIPT``; None for anything else (a program, a shell running a script file)."""
    i = 0
    while i < len(argv) and _base(argv[i]) in _LAUNCHERS:
        i += 1
        while i < len(argv) and "=" in argv[i] and not argv[i].startswith("-"):
            i += 1
    if i >= len(argv) or _base(argv[i]) not in SHELLS:
        return None
    flags: set[str] = set()
    options: set[str] = set()
    used, has_c = _apply_options(argv[i + 1:], flags, options)
    at = i + 1 + used
    if not has_c or at >= len(argv):
        return None
    return ShellCall(argv[i], frozenset(flags), frozenset(options), argv[at], at)


# --------------------------------------------------------------------------- lexer


class Token(NamedTuple):
    kind: str  # "w" word, "op" operator, "redir" redirection, "heredoc" << <<- <<<
    text: str
    start: int  # offsets in the script
    end: int


def _skip_quoted(s: str, i: int) -> int:
    """Index after the quoted string, ``$(...)``, ``${...}`` or backtick string starting at ``i``."""
    c = s[i]
    if c == "'":
        j = s.find("'", i + 1)
        return len(s) if j < 0 else j + 1
    if c == "`":
        j = i + 1
        while j < len(s) and s[j] != "`":
            j += 2 if s[j] == "\\" else 1
        return min(j + 1, len(s))
    if c == '"':
        j = i + 1
        while j < len(s) and s[j] != '"':
            if s[j] == "\\":
                j += 2
            elif s[j] in "$`" and s.startswith(("$(", "${", "`"), j):
                j = _skip_quoted(s, j)
            else:
                j += 1
        return min(j + 1, len(s))
    # "$(" "${" "<(" ">(": balanced, quotes inside skipped
    close = "}" if s[i + 1] == "{" else ")"
    opener = s[i + 1]
    depth, j = 1, i + 2
    while j < len(s) and depth:
        ch = s[j]
        if ch in "'\"`":
            j = _skip_quoted(s, j)
            continue
        if ch == "\\":
            j += 2
            continue
        if ch == opener:
            depth += 1
        elif ch == close:
            depth -= 1
        j += 1
    return j


def tokens(script: str) -> list[Token]:
    """Words, operators and redirections of ``script`` (a redirection's target is the next word);
    comments, line continuations and here-document bodies are dropped."""
    out: list[Token] = []
    s, i, n = script, 0, len(script)
    heredocs: list[tuple[str, bool]] = []  # (delimiter, strip leading tabs) waiting for the next newline
    while i < n:
        c = s[i]
        if c == "\\" and s.startswith("\\\n", i):
            i += 2
            continue
        if c in " \t\r":
            i += 1
            continue
        if c == "#":
            j = s.find("\n", i)
            i = n if j < 0 else j
            continue
        if c == "\n":
            out.append(Token("op", "\n", i, i + 1))
            i += 1
            for delim, strip in heredocs:  # a here-document's body runs to its delimiter line
                while i < n:
                    j = s.find("\n", i)
                    line = s[i:] if j < 0 else s[i:j]
                    i = n if j < 0 else j + 1
                    if (line.lstrip("\t") if strip else line) == delim:
                        break
            heredocs = []
            continue
        if c in "<>" and s.startswith(("<(", ">("), i):
            j = _skip_quoted(s, i)
            out.append(Token("w", s[i:j], i, j))
            i = j
            continue
        redir = next((r for r in _REDIRS if s.startswith(r, i)), None)
        if redir is not None:
            out.append(Token("heredoc" if redir.startswith("<<") else "redir", redir, i, i + len(redir)))
            i += len(redir)
            if redir in ("<<", "<<-"):
                while i < n and s[i] in " \t":
                    i += 1
                j = i
                while j < n and s[j] not in " \t\n;&|<>()":
                    j = _skip_quoted(s, j) if s[j] in "'\"" else j + 1
                heredocs.append((s[i:j].replace("'", "").replace('"', "").replace("\\", ""), redir == "<<-"))
                out.append(Token("w", s[i:j], i, j))
                i = j
            continue
        sep = next((p for p in _SEPS if s.startswith(p, i)), None)
        if sep is not None:
            out.append(Token("op", "|" if sep == "|&" else sep, i, i + len(sep)))
            i += len(sep)
            continue
        j = i
        while j < n and s[j] not in " \t\r\n;&|<>()":
            if s[j] == "\\":
                j += 2
            elif s[j] in "'\"`" or s.startswith(("$(", "${"), j):
                j = _skip_quoted(s, j)
            else:
                j += 1
        out.append(Token("w", s[i:min(j, n)], i, min(j, n)))
        i = j
    return out


# --------------------------------------------------------------------------- top-level commands


def _starts_command(prev: Token | None) -> bool:
    """Whether a word after ``prev`` stands where a command (or a reserved word) may begin."""
    return prev is None or prev.kind == "op"


class _Depth:
    """Which compound commands (``if``...``fi``, ``{``...``}``, ``(``...``)``) are open."""

    def __init__(self) -> None:
        self.stack: list[str] = []

    def step(self, tok: Token, prev: Token | None) -> None:
        t = tok.text
        keyword = tok.kind == "op" or tok.kind == "w" and (_starts_command(prev) or t == "]]")
        if self.stack and t == self.stack[-1] and keyword:
            self.stack.pop()
        elif t in _OPENERS and keyword and not (self.stack and self.stack[-1] == "esac"):
            self.stack.append(_OPENERS[t])  # inside case, "(" and ")" belong to the patterns


@dataclass(frozen=True)
class Command:
    """One top-level command of a script (a compound command counts as one)."""

    toks: tuple[Token, ...]
    script: str

    @property
    def text(self) -> str:
        return self.script[self.toks[0].start:self.toks[-1].end]

    def split(self, *ops: str) -> list[list[Token]]:
        """The parts between top-level ``ops`` (``|`` = pipeline stages, ``||``, ``&&``)."""
        parts: list[list[Token]] = [[]]
        depth = _Depth()
        prev: Token | None = None
        for tok in self.toks:
            if not depth.stack and tok.kind == "op" and tok.text in ops:
                parts.append([])
            else:
                depth.step(tok, prev)
                parts[-1].append(tok)
            prev = tok
        return parts


def commands(script: str) -> list[Command]:
    """The top-level commands of ``script``, split at top-level ``;``, ``;;``, ``&`` and newlines
    (a newline right after ``&&``, ``||`` or ``|`` continues the command)."""
    out: list[Command] = []
    cur: list[Token] = []
    depth = _Depth()
    for tok in tokens(script):
        prev = cur[-1] if cur else None
        if not depth.stack and tok.kind == "op" and tok.text in (";", "&", "\n", ";;"):
            if tok.text == "\n" and prev is not None and prev.kind == "op" and prev.text in ("&&", "||", "|"):
                continue
            if cur:
                out.append(Command(tuple(cur), script))
            cur = []
            continue
        depth.step(tok, prev)
        cur.append(tok)
    if cur:
        out.append(Command(tuple(cur), script))
    return out


def _words(toks: Sequence[Token]) -> list[str]:
    """The command's words without assignments in front and redirections (with their targets)."""
    words: list[str] = []
    skip = False
    for tok in toks:
        if skip or tok.kind != "w":
            skip = tok.kind in ("redir", "heredoc")
            continue
        t = tok.text
        if not words and "=" in t and t.split("=", 1)[0].isidentifier() and "$(" not in t and "`" not in t:
            continue  # VAR=value; VAR=$(cmd) fails with cmd
        words.append(t)
    return words


def _harmless(toks: Sequence[Token]) -> bool:
    """One simple command whose failure cannot change the run's outcome: assignments, echo, set,
    a function definition, cat of a here-document ..."""
    words = _words(toks)
    if not words or words[0] in _HARMLESS:
        return True
    if words[0] == "cat" and any(t.kind == "heredoc" for t in toks):
        return True
    return len(toks) > 2 and [t.text for t in toks[1:3]] == ["(", ")"] and toks[1].kind == toks[2].kind == "op"


def _handles_failure(cmd: Command, after: Command | None) -> bool:
    """The command deals with its own failure: ``cmd || exit 1`` (or ``|| true``: ignored on
    purpose), a compound command with an ``exit`` inside (``if ! cmd; then exit 1; fi``), or the
    next command reads ``$?``."""
    if len(cmd.split("||")) > 1:
        return True
    words = [t.text for t in cmd.toks]
    if words[0] in _OPENERS and "exit" in words:
        return True
    return after is not None and ("$?" in after.text or "${?}" in after.text)


def _swallowed(cmd: Command) -> str | None:
    """``|| true`` (``|| :``, ``|| echo ...``, ``|| exit 0``) ending the command, as written."""
    parts = cmd.split("||")
    if len(parts) < 2 or len(Command(tuple(parts[-1]), cmd.script).split("&&")) > 1:
        return None
    words = _words(parts[-1])
    if words[:1] and words[0] in _SWALLOW:
        return f"|| {words[0]}"
    return "|| exit 0" if words == ["exit", "0"] else None


def _short(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def exit_code_problems(call: ShellCall) -> list[str]:
    """What in ``call``'s script can lose a failure, in words (empty: nothing found)."""
    flags, options = set(call.flags), set(call.options)
    cmds = commands(call.script)
    found: dict[str, str] = {}
    for k, cmd in enumerate(cmds):
        words = _words(cmd.toks)
        if words[:1] == ["set"]:
            _apply_options(words[1:], flags, options)
            continue
        text = _short(cmd.text)
        stages = cmd.split("|")
        if "pipefail" not in options and not all(_harmless(p) for p in stages[:-1]):
            found.setdefault("pipe", f"pipeline '{text}' without set -o pipefail")
        after = cmds[k + 1] if k + 1 < len(cmds) else None
        if after is None:
            swallowed = _swallowed(cmd)
            if swallowed:
                found["or"] = f"'{swallowed}' on the last command"
            elif words == ["exit", "0"] and "seq" in found:
                found["exit"] = "it ends with 'exit 0'"
            continue
        if _handles_failure(cmd, after) or all(_harmless(p) for p in cmd.split("&&", "|")):
            continue
        if "e" not in flags:
            found.setdefault("seq", f"'{text}' is followed by more commands without set -e")
        elif not all(_harmless(p) for p in cmd.split("&&")[:-1]):
            # set -e ignores a failure in an && list anywhere but after the last &&
            found.setdefault("and", f"'{text}' is followed by more commands, and set -e does not stop at a "
                                    "failure before &&")
    return list(found.values())
