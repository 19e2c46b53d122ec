"""Reading Kubernetes objects from files: manifests, multi-document YAML, JSON, ``kubectl get -o
yaml|json`` Lists. Pure apart from reading the one file it is given.

The one loader every file reader uses (``explain -f``, ``lint -f``, ``bundle``/``history
--from-dump``, ``backfill --done-from``), with its limits in one place: a hostile file gets one
line naming the limit (:class:`BadInput`, exit 5), never a traceback, a runaway or an OOM.

- :data:`MAX_FILE_BYTES`: the size of one file (or standard input).
- :data:`MAX_DEPTH`: nesting of mappings and lists (Kubernetes objects nest about 20 deep).
- :data:`MAX_ALIAS_NODES`: mappings and lists that YAML aliases add beyond those written out
  (a 1.5 KB "billion laughs" document expands to billions); a recursive alias is refused.
- :data:`MAX_ALIAS_BYTES`: the characters of strings that YAML aliases add beyond those written
  out (a 256 KiB string aliased 4,000 times is 1 GiB in every report that prints it), counted
  through aliased mappings and lists too.
- :data:`MAX_INT_DIGITS`: the digits of one integer (Kubernetes integers are int64, 19 digits).
  Python's int-string limit is set to it explicitly around the parsers, whatever the process's
  default (``PYTHONINTMAXSTRDIGITS``), and an integer written in another base (``0x...``) is held
  to the same size.

YAML is read with libyaml (``yaml.CSafeLoader``) when PyYAML has it, else ``yaml.SafeLoader``.
Timestamps stay the strings they are written as (an unquoted ``2026-12-02T11:00:00Z`` is not
turned into a ``datetime``), as ``kubectl`` sends them to the API server. Every failure is a
:class:`BadInput` naming the file and, for syntax errors, the line and column.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
from collections.abc import Iterator
from typing import Any, Iterable

from cronctl.errors import BadInput

Obj = dict[str, Any]

MAX_FILE_BYTES = 256 * 1024 * 1024
MAX_DEPTH = 100
MAX_ALIAS_NODES = 100_000
MAX_ALIAS_BYTES = 16 * 1024 * 1024
#: the smallest int-string limit Python allows (``sys.set_int_max_str_digits``)
MAX_INT_DIGITS = 640
_INT_LIMIT = 10 ** MAX_INT_DIGITS


@contextlib.contextmanager
def _int_digits(source: str) -> Iterator[None]:
    """Python's int-string limit at :data:`MAX_INT_DIGITS` while a parser runs, and a longer integer
    as :class:`BadInput` (Python raises a bare ValueError)."""
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(MAX_INT_DIGITS)
    try:
        yield
    except ValueError as e:
        if "integer string conversion" not in str(e):
            raise
        raise BadInput(_too_long(source)) from None
    finally:
        sys.set_int_max_str_digits(old)


def _too_long(source: str) -> str:
    return f"{source}: an integer longer than the limit of {MAX_INT_DIGITS} digits (MAX_INT_DIGITS)"


def _check_int(value: Any, source: str) -> None:
    if isinstance(value, int) and not -_INT_LIMIT < value < _INT_LIMIT:
        raise BadInput(_too_long(source))


def read_text(path: str) -> str:
    """The file's text; ``-`` is standard input. More than :data:`MAX_FILE_BYTES` is refused."""
    try:
        if path == "-":
            stdin = getattr(sys.stdin, "buffer", None)  # a text-only stdin (a test runner's) has none
            data = stdin.read(MAX_FILE_BYTES + 1) if stdin is not None else \
                sys.stdin.read(MAX_FILE_BYTES + 1).encode("utf-8")
        else:
            data = _read_regular(path)
    except FileNotFoundError:
        raise BadInput(f"{path}: no such file") from None
    except IsADirectoryError:
        raise BadInput(f"{path}: is a directory, not a manifest file") from None
    except PermissionError:
        raise BadInput(f"{path}: permission denied") from None
    except OSError as e:
        raise BadInput(f"{path}: cannot read: {e.strerror}") from None
    if len(data) > MAX_FILE_BYTES:
        raise BadInput(f"{path}: larger than the limit of {MAX_FILE_BYTES // (1024 * 1024)} MiB "
                       "(MAX_FILE_BYTES)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BadInput(f"{path}: not UTF-8 text (byte {e.start})") from None


def _refuse_special(path: str, mode: int) -> None:
    """BadInput unless ``mode`` is a regular file's."""
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise BadInput(f"{path}: is a directory, not a manifest file")
    kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a character device" if stat.S_ISCHR(mode)
            else "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else "special")
    raise BadInput(f"{path}: is {kind}, not a regular file; cronctl reads only regular files "
                   "(for a pipe give - and send it to standard input)")


def _read_regular(path: str) -> bytes:
    """At most MAX_FILE_BYTES + 1 bytes of the regular file at ``path``. Anything else (a FIFO, whose
    read would block forever, a device, a directory) is refused before a byte is read: by ``stat``
    before the open, and by ``fstat`` on what was opened (non-blocking, so that opening a FIFO does
    not wait for a writer), so a file swapped in between is caught too."""
    _refuse_special(path, os.stat(path).st_mode)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        _refuse_special(path, os.fstat(fd).st_mode)
        os.set_blocking(fd, True)
        fh = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with fh:
        return fh.read(MAX_FILE_BYTES + 1)


def _loader() -> Any:
    """libyaml's safe loader where PyYAML has it, else the pure-Python one; timestamps kept as text."""
    global _LOADER
    if _LOADER is None:
        import yaml

        base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

        class Loader(base):  # type: ignore[valid-type,misc]
            pass

        def timestamp_as_text(loader: Any, node: Any) -> Any:
            return loader.construct_scalar(node)

        Loader.add_constructor("tag:yaml.org,2002:timestamp", timestamp_as_text)
        _LOADER = Loader
    return _LOADER


_LOADER: Any = None


def check_limits(doc: Any, source: str, *, aliases: bool = True) -> None:
    """Refuse a document nested deeper than :data:`MAX_DEPTH`, one whose aliases add more than
    :data:`MAX_ALIAS_NODES` mappings and lists or :data:`MAX_ALIAS_BYTES` characters of strings,
    and one that contains itself (a recursive alias).

    Iterative, and each distinct container is visited once, so the check itself stays linear in
    what was written, however much the aliases would expand to. An alias of a string is the same
    ``str`` object in two places (PyYAML constructs an anchored node once), so the strings aliases
    add are those counted more often in the expanded tree than by object; strings of one character
    are left out (CPython shares those whatever the input). ``aliases=False`` (JSON: no aliases, and
    ``json`` shares the objects of repeated keys) counts no strings.
    """
    if not isinstance(doc, (dict, list)):
        return
    size: dict[int, int] = {}  # id -> containers in the expanded subtree (itself included)
    chars: dict[int, int] = {}  # id -> characters of strings in the expanded subtree
    strings: dict[int, int] = {}  # id of each distinct string -> its length
    height: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[Any, int, bool]] = [(doc, 1, False)]
    while stack:
        node, depth, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            kids = [v for v in (node.values() if isinstance(node, dict) else node) if isinstance(v, (dict, list))]
            size[key] = 1 + sum(size[id(k)] for k in kids)
            if aliases:
                own = 0
                for v in (*node.keys(), *node.values()) if isinstance(node, dict) else node:
                    if type(v) is str and len(v) > 1:
                        own += len(v)
                        strings.setdefault(id(v), len(v))
                chars[key] = own + sum(chars[id(k)] for k in kids)
            height[key] = 1 + max((height[id(k)] for k in kids), default=0)
            continue
        if key in size:
            if depth - 1 + height[key] > MAX_DEPTH:
                raise BadInput(f"{source}: nested deeper than the limit of {MAX_DEPTH} levels (MAX_DEPTH)")
            continue
        if key in on_path:
            raise BadInput(f"{source}: a YAML alias refers to a mapping or list that contains it "
                           "(recursive alias)")
        if depth > MAX_DEPTH:
            raise BadInput(f"{source}: nested deeper than the limit of {MAX_DEPTH} levels (MAX_DEPTH)")
        on_path.add(key)
        stack.append((node, depth, True))
        for k in (node if isinstance(node, dict) else ()):
            _check_int(k, source)
        for v in (node.values() if isinstance(node, dict) else node):
            _check_int(v, source)
            if isinstance(v, (dict, list)) and id(v) not in size:
                stack.append((v, depth + 1, False))
            elif isinstance(v, (dict, list)) and depth + height[id(v)] > MAX_DEPTH:
                raise BadInput(f"{source}: nested deeper than the limit of {MAX_DEPTH} levels (MAX_DEPTH)")
    added = size[id(doc)] - len(size)
    if added > MAX_ALIAS_NODES:
        raise BadInput(f"{source}: YAML aliases expand to more than {MAX_ALIAS_NODES} extra mappings and "
                       "lists (MAX_ALIAS_NODES; an alias bomb?)")
    if aliases and chars[id(doc)] - sum(strings.values()) > MAX_ALIAS_BYTES:
        raise BadInput(f"{source}: YAML aliases expand to more than {MAX_ALIAS_BYTES // (1024 * 1024)} MiB of "
                       "extra strings (MAX_ALIAS_BYTES; an alias bomb?)")


def parse_json(text: str, *, source: str = "<input>") -> Any:
    """One JSON value, under the same limits as YAML (nesting: :data:`MAX_DEPTH`)."""
    try:
        with _int_digits(source):
            data = json.loads(text)
    except json.JSONDecodeError as e:
        raise BadInput(f"{source}:{e.lineno}:{e.colno}: malformed JSON: {e.msg}") from None
    except RecursionError:
        raise BadInput(f"{source}: nested deeper than the limit of {MAX_DEPTH} levels (MAX_DEPTH)") from None
    check_limits(data, source, aliases=False)
    return data


def parse_documents(text: str, *, source: str = "<input>") -> list[Obj]:
    """Every object in the text, with ``List`` kinds (``kind: List``, ``CronJobList``, ...) flattened.

    Empty documents are skipped; a document that is not a mapping is an error.
    """
    import yaml

    try:
        with _int_digits(source):
            docs = list(yaml.load_all(text, Loader=_loader()))
    except RecursionError:  # the pure-Python loader only; libyaml stops at 1000 levels itself
        raise BadInput(f"{source}: nested deeper than the limit of {MAX_DEPTH} levels (MAX_DEPTH)") from None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark is not None else source
        problem = e.problem or e.context or "malformed YAML"
        raise BadInput(f"{where}: malformed YAML: {problem}") from None
    except yaml.YAMLError as e:
        raise BadInput(f"{source}: malformed YAML: {e}") from None
    out: list[Obj] = []
    for i, doc in enumerate(docs, start=1):
        if doc is None:
            continue
        if not isinstance(doc, dict):
            raise BadInput(f"{source}: document {i} is a {type(doc).__name__}, not a Kubernetes object")
        check_limits(doc, f"{source}: document {i}")
        out.extend(_flatten(doc, source, i))
    return out


def _flatten(doc: Obj, source: str, index: int) -> Iterable[Obj]:
    kind = doc.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and "items" in doc:
        items = doc.get("items") or []
        if not isinstance(items, list):
            raise BadInput(f"{source}: document {index}: 'items' of a {kind} is not a list")
        for j, item in enumerate(items):
            if not isinstance(item, dict):
                raise BadInput(f"{source}: document {index}: item {j} is not an object")
            if "kind" not in item and kind != "List":
                item = {**item, "kind": kind[: -len("List")]}
            yield item
    else:
        yield doc


def load_objects(path: str) -> list[Obj]:
    """Every object in the file at ``path`` (``-`` for stdin). JSON is read as YAML (a superset)."""
    text = read_text(path)
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        data = parse_json(text, source=path)
        docs = data if isinstance(data, list) else [data]
        out: list[Obj] = []
        for i, doc in enumerate(docs, start=1):
            if not isinstance(doc, dict):
                raise BadInput(f"{path}: document {i} is not a Kubernetes object")
            out.extend(_flatten(doc, path, i))
        return out
    return parse_documents(text, source=path)


#: what ``-f DIR`` reads in a directory: kubectl's manifest extensions (``kubectl apply -f DIR``)
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
#: directories ``-f DIR -R`` walks at most (a symlink loop or a huge tree stops here, one line)
MAX_WALKED_DIRS = 10_000


def expand_paths(paths: Iterable[str], *, recursive: bool = False) -> list[str]:
    """The files of ``-f`` arguments, as kubectl reads them: a file (or ``-``) is itself; a directory
    is its ``*.yaml``, ``*.yml`` and ``*.json`` files in name order, with ``recursive`` those of its
    subdirectories too (each directory's files, then its subdirectories, in name order). A directory
    holding none is refused (``BadInput``): a mistyped or empty path in CI must not check nothing."""
    out: list[str] = []
    for path in paths:
        if path == "-" or not os.path.isdir(path):
            out.append(path)  # read_text says what is wrong with it, if anything
            continue
        found: list[str] = []
        walked = 0
        todo = [path]
        while todo:
            folder = todo.pop(0)
            walked += 1
            if walked > MAX_WALKED_DIRS:
                raise BadInput(f"{path}: more than {MAX_WALKED_DIRS} directories under it (MAX_WALKED_DIRS)")
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError as e:
                raise BadInput(f"{folder}: cannot list the directory: {e.strerror}") from None
            found += [e.path for e in entries if e.name.endswith(MANIFEST_SUFFIXES) and e.is_file()]
            if recursive:
                todo[0:0] = [e.path for e in entries if e.is_dir()]
        if not found:
            hint = "" if recursive else " (-R reads its subdirectories too)"
            raise BadInput(f"{path}: is a directory without any *.yaml, *.yml or *.json file{hint}")
        out += found
    return out


def of_kind(objs: Iterable[Obj], kind: str) -> list[Obj]:
    return [o for o in objs if o.get("kind") == kind]
