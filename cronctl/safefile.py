"""Files and directories cronctl writes (run directories, bundles): created safely.

The rules, for every writer:

* **the parent is checked** before anything is made in it: it must be a directory owned by the
  caller or root, and not writable by everyone unless it has the sticky bit (``/tmp``): in a
  world-writable directory without it anyone can rename our files away and put theirs in place.
  Refused as :class:`Unsafe` (an ``OSError`` with a one-line ``strerror``).
* **exclusive creation, never through a symlink**: files ``O_CREAT|O_EXCL|O_NOFOLLOW`` mode 0600,
  directories ``mkdir`` 0700 (which never follows a final symlink either), everything below a
  directory reached by its file descriptor (``openat`` with ``O_NOFOLLOW``), so a link planted
  anywhere on the way is refused, not followed.
* **what was created is checked**: owner = the caller, mode exactly 0600 / 0700 (``fchmod``
  repairs what the umask took away; bits are never added).
* **temp names are ours**: ``.<name>.<random>.tmp`` / ``.<name>.partial-<random>``, created by this
  process with O_EXCL; cleanup removes only those, never a name someone else could have planted.

Everything here raises ``OSError`` (``Unsafe`` for a refusal); callers turn it into their own
error with :func:`describe`.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager

FILE_MODE = 0o600
DIR_MODE = 0o700
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class Unsafe(OSError):
    """cronctl refuses to write there: a link, a foreign owner, an open directory, a bad name."""

    def __init__(self, message: str) -> None:
        super().__init__(errno.EPERM, message)


def describe(e: OSError) -> str:
    """One line for ``e``: the refusal, or the system's words (``No space left on device``)."""
    return e.strerror or str(e)


def component(name: str) -> str:
    """``name`` if it is one plain path component (not empty, ``.``, ``..``; no ``/`` or NUL)."""
    if not name or name in (".", "..") or "/" in name or "\0" in name:
        raise Unsafe(f"refusing the file name {name!r}: not one plain path component")
    return name


def check_parent(fd: int, shown: str) -> None:
    """Refuse a directory others can tamper with (see the module rules). ``shown``: its path."""
    st = os.fstat(fd)
    if not stat.S_ISDIR(st.st_mode):
        raise Unsafe(f"{shown} is not a directory")
    if st.st_uid not in (os.geteuid(), 0):
        raise Unsafe(f"refusing to write in {shown}: it belongs to uid {st.st_uid}, not to you or root")
    if st.st_mode & stat.S_IWOTH and not st.st_mode & stat.S_ISVTX:
        raise Unsafe(f"refusing to write in {shown}: it is world-writable without the sticky bit "
                     f"(mode {stat.S_IMODE(st.st_mode):04o}), so anyone could replace what cronctl writes")


def _check_created(fd: int, shown: str, mode: int) -> None:
    """What we just created is ours and private: fix the umask's work, refuse anything else."""
    st = os.fstat(fd)
    if st.st_uid != os.geteuid():
        raise Unsafe(f"{shown} belongs to uid {st.st_uid}, not to cronctl's uid {os.geteuid()}")
    if stat.S_IMODE(st.st_mode) & ~mode:
        raise Unsafe(f"{shown} has mode {stat.S_IMODE(st.st_mode):04o}, not {mode:04o}")
    os.fchmod(fd, mode)


def open_dir(path: str, *, dir_fd: int | None = None) -> int:
    """A directory's fd, refusing a symlink in the last component."""
    try:
        return os.open(path, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR):  # O_NOFOLLOW|O_DIRECTORY on a link: either
            link = stat.S_ISLNK(os.lstat(path, dir_fd=dir_fd).st_mode)
            raise Unsafe(f"{path} is a symbolic link; cronctl does not follow links where it writes" if link
                         else f"{path} is not a directory") from e
        raise


def open_parent(path: str) -> int:
    """The fd of the directory ``path`` will be created in, checked with :func:`check_parent`.

    The path up to it is followed as given by the user (their own ``--out`` or ``--run-dir``);
    the directory it ends on is what is checked.
    """
    parent = os.path.dirname(os.path.abspath(path))
    try:
        fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError as e:
        raise FileNotFoundError(errno.ENOENT, f"the directory {parent} does not exist") from e
    try:
        check_parent(fd, parent)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_private_dir(name: str, *, dir_fd: int, shown: str) -> int:
    """Open directory ``name`` (no link) and check it is ours and 0700; its fd."""
    fd = open_dir(name, dir_fd=dir_fd)
    try:
        _check_created(fd, shown, DIR_MODE)
    except BaseException:
        os.close(fd)
        raise
    return fd


def make_dir(name: str, *, dir_fd: int, shown: str) -> int:
    """Create directory ``name`` (0700) in ``dir_fd``, exclusively; return its checked fd."""
    os.mkdir(component(name), DIR_MODE, dir_fd=dir_fd)
    return _open_private_dir(name, dir_fd=dir_fd, shown=shown)


def sub_dir(name: str, *, dir_fd: int, shown: str) -> int:
    """Directory ``name`` in ``dir_fd``: made (0700) if missing, else opened and checked; its fd."""
    try:
        return make_dir(name, dir_fd=dir_fd, shown=shown)
    except FileExistsError:
        return _open_private_dir(name, dir_fd=dir_fd, shown=shown)


def create_file(name: str, data: bytes, *, dir_fd: int, shown: str) -> None:
    """Write a new file ``name`` (0600) in ``dir_fd``; it must not exist (not even as a link)."""
    fd = os.open(component(name), _NEW_FILE, FILE_MODE, dir_fd=dir_fd)
    try:
        _check_created(fd, shown, FILE_MODE)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    except BaseException:
        _unlink_ours(name, dir_fd)  # created by this call (O_EXCL): a full disk leaves nothing behind
        raise
    finally:
        os.close(fd)


def temp_name(name: str, kind: str = "tmp") -> str:
    """A hidden name next to ``name`` that nobody can guess: ``.<name>.<random>.<kind>``."""
    return f".{component(name)}.{secrets.token_hex(8)}.{kind}"


def replace_file(name: str, data: bytes, *, dir_fd: int, shown: str) -> None:
    """Write ``name`` in ``dir_fd`` atomically: a temp file of ours (O_EXCL), then rename over it.

    On any failure (a full disk) the temp file, which this call created, is removed.
    """
    tmp = temp_name(name)
    create_file(tmp, data, dir_fd=dir_fd, shown=shown)  # removes its own file when it fails
    try:
        os.replace(tmp, component(name), src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        _unlink_ours(tmp, dir_fd)
        raise


def _unlink_ours(name: str, dir_fd: int) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except OSError:
        pass


def remove_tree(name: str, *, dir_fd: int) -> None:
    """Remove directory ``name`` (one cronctl created in this process) and all in it, without
    following links (``shutil.rmtree`` works by file descriptor on Linux)."""
    import shutil

    shutil.rmtree(component(name), dir_fd=dir_fd, ignore_errors=True)


@contextmanager
def closing_fd(fd: int) -> Iterator[int]:
    try:
        yield fd
    finally:
        os.close(fd)
