"""Write a bundle to disk: a directory, or a ``.tar.gz`` when the path ends so.

Every file is created 0600 and every directory 0700 whatever the umask (the bundle holds logs
and object specs: private to the user). ``SHA256SUMS`` lists every other file in the format of
``sha256sum`` (``<hex>  <path>``), so ``sha256sum -c SHA256SUMS`` inside the bundle checks it.

Nothing is overwritten (evidence is never lost): an existing non-empty directory or an existing
archive is refused. The bundle is written under a temporary name next to the target and renamed
into place, so an interrupted write never leaves a half bundle under the final name.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import tarfile
from datetime import datetime

from cronctl.errors import BadInput, Refused

FILE_MODE = 0o600
DIR_MODE = 0o700


def sha256sums(files: dict[str, bytes]) -> bytes:
    """The SHA256SUMS text for ``files`` (sorted by path, two spaces, as sha256sum writes)."""
    lines = [f"{hashlib.sha256(data).hexdigest()}  {path}\n" for path, data in sorted(files.items())]
    return "".join(lines).encode("ascii")


def _check_paths(files: dict[str, bytes]) -> None:
    for p in files:
        parts = p.split("/")
        if p.startswith("/") or any(x in ("", ".", "..") for x in parts):
            raise BadInput(f"refusing to write bundle file with unsafe path {p!r}")


def write_bundle(files: dict[str, bytes], out: str, *, mtime: datetime) -> str:
    """Write ``files`` (path -> bytes, without SHA256SUMS) plus SHA256SUMS to ``out``; return ``out``."""
    _check_paths(files)
    all_files = dict(files)
    all_files["SHA256SUMS"] = sha256sums(files)
    if out.endswith((".tar.gz", ".tgz")):
        _write_tar(all_files, out, mtime)
    else:
        _write_dir(all_files, out)
    return out


def _write_dir(files: dict[str, bytes], out: str) -> None:
    out = out.rstrip("/") or out
    if os.path.exists(out) and (not os.path.isdir(out) or os.listdir(out)):
        raise Refused(f"{out} already exists and is not an empty directory; choose another --out")
    parent = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(parent):
        raise BadInput(f"{out}: parent directory {parent} does not exist")
    tmp = os.path.join(parent, f".{os.path.basename(out)}.partial-{os.getpid()}")
    try:
        _mkdir(tmp)
        for path, data in sorted(files.items()):
            full = os.path.join(tmp, *path.split("/"))
            d = os.path.dirname(full)
            if not os.path.isdir(d):
                _makedirs(d, stop=tmp)
            fd = os.open(full, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.chmod(full, FILE_MODE)  # the umask may have removed bits; never added any
        if os.path.isdir(out):
            os.rmdir(out)  # empty (checked above)
        os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _mkdir(path: str) -> None:
    os.mkdir(path, DIR_MODE)
    os.chmod(path, DIR_MODE)


def _makedirs(path: str, *, stop: str) -> None:
    parent = os.path.dirname(path)
    if parent != stop and not os.path.isdir(parent):
        _makedirs(parent, stop=stop)
    _mkdir(path)


def _write_tar(files: dict[str, bytes], out: str, mtime: datetime) -> None:
    if os.path.exists(out):
        raise Refused(f"{out} already exists; choose another --out")
    parent = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(parent):
        raise BadInput(f"{out}: parent directory {parent} does not exist")
    base = os.path.basename(out)
    top = base[: -len(".tar.gz")] if base.endswith(".tar.gz") else base[: -len(".tgz")]
    tmp = os.path.join(parent, f".{base}.partial-{os.getpid()}")
    ts = int(mtime.timestamp())
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
        with os.fdopen(fd, "wb") as raw, tarfile.open(fileobj=raw, mode="w:gz") as tar:
            dirs_done: set[str] = set()
            _tar_dir(tar, top, ts)
            for path, data in sorted(files.items()):
                parts = path.split("/")
                for i in range(1, len(parts)):
                    d = "/".join(parts[:i])
                    if d not in dirs_done:
                        dirs_done.add(d)
                        _tar_dir(tar, f"{top}/{d}", ts)
                info = tarfile.TarInfo(f"{top}/{path}")
                info.size = len(data)
                info.mode = FILE_MODE
                info.mtime = ts
                tar.addfile(info, io.BytesIO(data))
        os.chmod(tmp, FILE_MODE)
        if os.path.exists(out):
            raise Refused(f"{out} already exists; choose another --out")
        os.rename(tmp, out)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _tar_dir(tar: tarfile.TarFile, name: str, ts: int) -> None:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    info.mode = DIR_MODE
    info.mtime = ts
    tar.addfile(info)
