"""Write a bundle to disk: a directory, or a ``.tar.gz`` when the path ends so.

Every file is created 0600 and every directory 0700 whatever the umask (the bundle holds logs
and object specs: private to the user). ``SHA256SUMS`` lists every other file in the format of
``sha256sum`` (``<hex>  <path>``), so ``sha256sum -c SHA256SUMS`` inside the bundle checks it.

Nothing is overwritten (evidence is never lost): an existing non-empty directory or an existing
archive is refused, and so is a symbolic link. The bundle is written under a temporary name of
its own (``.<name>.<random>.partial``, created by this process) next to the target and renamed
(a directory) or linked (an archive) into place, so an interrupted write never leaves a half
bundle under the final name; on failure only that temp name is removed. Files and directories
are made by :mod:`cronctl.safefile` (exclusive, no links followed, the parent checked).
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
import tarfile
from datetime import datetime

from cronctl import safefile
from cronctl.errors import BadInput, Refused

FILE_MODE = safefile.FILE_MODE
DIR_MODE = safefile.DIR_MODE


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
    """Write ``files`` (path -> bytes, without SHA256SUMS) plus SHA256SUMS to ``out``; return ``out``.

    ``Refused`` (exit 3) when ``out`` exists (a link included); ``BadInput`` (exit 5) when its
    parent is missing, not ours, world-writable without the sticky bit, read-only or full — and
    then nothing is left behind.
    """
    _check_paths(files)
    all_files = dict(files)
    all_files["SHA256SUMS"] = sha256sums(files)
    tar = out.endswith((".tar.gz", ".tgz"))
    out = out if tar else (out.rstrip("/") or out)
    _refuse_existing(out, tar=tar)
    try:
        with safefile.closing_fd(safefile.open_parent(out)) as parent_fd:
            if tar:
                _write_tar(all_files, out, mtime, parent_fd)
            else:
                _write_dir(all_files, out, parent_fd)
    except FileExistsError as e:  # appeared while we wrote: nothing of ours is left
        raise Refused(f"{out} already exists; choose another --out") from e
    except OSError as e:
        raise _cannot_write(out, e) from e
    return out


def _cannot_write(out: str, e: OSError) -> BadInput:
    return BadInput(f"cannot write the bundle to {out}: {safefile.describe(e)}; nothing was written",
                    hint="choose another --out (a directory of your own with free space)")


def _refuse_existing(out: str, *, tar: bool) -> None:
    try:
        st = os.lstat(out)
    except FileNotFoundError:
        return
    except OSError as e:
        raise _cannot_write(out, e) from e
    if stat.S_ISLNK(st.st_mode):
        raise Refused(f"{out} is a symbolic link; cronctl does not write through links: choose another --out")
    if stat.S_ISDIR(st.st_mode) and st.st_uid != os.geteuid():
        raise Refused(f"{out} belongs to uid {st.st_uid}, not to you: choose another --out")
    try:
        empty_dir = not tar and stat.S_ISDIR(st.st_mode) and not os.listdir(out)
    except OSError as e:
        raise _cannot_write(out, e) from e
    if not empty_dir:
        raise Refused(f"{out} already exists{'' if tar else ' and is not an empty directory'}; "
                      "choose another --out")


def _write_dir(files: dict[str, bytes], out: str, parent_fd: int) -> None:
    base = os.path.basename(out)
    tmp = safefile.temp_name(base, "partial")
    try:
        fd = safefile.make_dir(tmp, dir_fd=parent_fd, shown=os.path.join(os.path.dirname(out), tmp))
    except FileExistsError:
        raise  # not ours (a 64-bit random name someone guessed): never removed
    except BaseException:
        safefile.remove_tree(tmp, dir_fd=parent_fd)  # made by us, then a failure or a signal
        raise
    try:
        # the open directories of the current path, by fd (sorted paths: a directory's files are
        # consecutive, so each directory is made and opened once, and only one chain is open)
        chain: list[tuple[str, int]] = []
        try:
            for path, data in sorted(files.items()):
                *dirs, leaf = path.split("/")
                keep = 0
                while keep < min(len(chain), len(dirs)) and chain[keep][0] == dirs[keep]:
                    keep += 1
                while len(chain) > keep:
                    os.close(chain.pop()[1])
                for d in dirs[keep:]:
                    below = chain[-1][1] if chain else fd
                    chain.append((d, safefile.make_dir(d, dir_fd=below, shown=f"{out}/{'/'.join(dirs)}")))
                safefile.create_file(leaf, data, dir_fd=chain[-1][1] if chain else fd, shown=f"{out}/{path}")
        finally:
            for _, c in chain:
                os.close(c)
            os.close(fd)
        # rename(2) replaces an empty directory (checked above) and fails on anything else
        os.rename(tmp, base, src_dir_fd=parent_fd, dst_dir_fd=parent_fd)
    except BaseException:
        safefile.remove_tree(tmp, dir_fd=parent_fd)  # ours: made by this process just above
        raise


def _write_tar(files: dict[str, bytes], out: str, mtime: datetime, parent_fd: int) -> None:
    base = os.path.basename(out)
    top = base[: -len(".tar.gz")] if base.endswith(".tar.gz") else base[: -len(".tgz")]
    ts = int(mtime.timestamp())
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
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
    tmp = safefile.temp_name(base, "partial")
    safefile.create_file(tmp, buf.getvalue(), dir_fd=parent_fd, shown=os.path.join(os.path.dirname(out), tmp))
    try:
        # link(2) never replaces: an archive that appeared meanwhile is kept, ours is dropped
        os.link(tmp, base, src_dir_fd=parent_fd, dst_dir_fd=parent_fd, follow_symlinks=False)
    finally:
        os.unlink(tmp, dir_fd=parent_fd)  # ours: created exclusively just above


def _tar_dir(tar: tarfile.TarFile, name: str, ts: int) -> None:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    info.mode = DIR_MODE
    info.mtime = ts
    tar.addfile(info)


def write_page(data: bytes, path: str) -> str:
    """Write one report file (``cronctl history --html``) to ``path``: a new file of ours (0600,
    exclusive, no link followed) in the checked parent, renamed over the old page in one step, so a
    reader (a web server, a browser reloading) never sees half a page. ``BadInput`` (exit 5) when the
    parent is missing, not ours, world-writable without the sticky bit, read-only or full, or ``path``
    is a directory: then the old page is left as it was and nothing else is left behind."""
    name = os.path.basename(path)
    try:
        safefile.component(name)
        with safefile.closing_fd(safefile.open_parent(path)) as parent_fd:
            safefile.replace_file(name, data, dir_fd=parent_fd, shown=path)
    except OSError as e:
        raise BadInput(f"cannot write the page to {path}: {safefile.describe(e)}; nothing was written",
                       hint="choose another file (in a directory of your own with free space)") from e
    return path
