"""Reading Kubernetes objects from files: manifests, multi-document YAML, JSON, ``kubectl get -o
yaml|json`` Lists. Pure apart from reading the one file it is given.

Every failure is a :class:`BadInput` naming the file and, for syntax errors, the line and column.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Iterable

from cronctl.errors import BadInput

Obj = dict[str, Any]


def read_text(path: str) -> str:
    """The file's text; ``-`` is standard input."""
    if path == "-":
        return sys.stdin.read()
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except FileNotFoundError:
        raise BadInput(f"{path}: no such file") from None
    except IsADirectoryError:
        raise BadInput(f"{path}: is a directory, not a manifest file") from None
    except PermissionError:
        raise BadInput(f"{path}: permission denied") from None
    except UnicodeDecodeError as e:
        raise BadInput(f"{path}: not UTF-8 text (byte {e.start})") from None
    except OSError as e:
        raise BadInput(f"{path}: cannot read: {e.strerror}") from None


def parse_documents(text: str, *, source: str = "<input>") -> list[Obj]:
    """Every object in the text, with ``List`` kinds (``kind: List``, ``CronJobList``, ...) flattened.

    Empty documents are skipped; a document that is not a mapping is an error.
    """
    import yaml

    try:
        docs = list(yaml.safe_load_all(text))
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
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise BadInput(f"{path}:{e.lineno}:{e.colno}: malformed JSON: {e.msg}") from None
        docs = data if isinstance(data, list) else [data]
        out: list[Obj] = []
        for i, doc in enumerate(docs, start=1):
            if not isinstance(doc, dict):
                raise BadInput(f"{path}: document {i} is not a Kubernetes object")
            out.extend(_flatten(doc, path, i))
        return out
    return parse_documents(text, source=path)


def of_kind(objs: Iterable[Obj], kind: str) -> list[Obj]:
    return [o for o in objs if o.get("kind") == kind]
