"""Files written safely (issue 12, item 3): the run directory and the bundle, attacked by a
second local user (``nobody``, through setpriv) in a shared directory, and on a real read-only
or full filesystem (a tmpfs of its own). Needs root, as CI has: to be two users and to mount.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest

from cronctl import safefile
from cronctl.bundle.write import write_bundle
from cronctl.cli import main
from cronctl.errors import BadInput, ExitCode, Refused
from cronctl.procedure.base import RunDir
from harness import start_cronctl

WHEN = datetime(2026, 12, 2, 11, 35, tzinfo=timezone.utc)
FILES = {"bundle.json": b"{}\n", "logs/pod-a/main.log": b"secret=hunter2\n"}
DUMP = Path(__file__).parent.parent / "golden" / "bundle" / "incident-004.dump.yaml"
NOBODY = 65534

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: to act as a second user (nobody) and "
                                "to mount a tmpfs (CI runs as root)")


def as_nobody(*argv: str) -> None:
    """Run a command as the second local user, as an attacker on the same machine would."""
    subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", *argv], check=True)


@pytest.fixture
def public() -> Iterator[Path]:
    """A directory the second user can reach (pytest's own tmp_path is private to root)."""
    import shutil
    import tempfile

    d = Path(tempfile.mkdtemp(prefix="cronctl-files-", dir="/tmp"))
    os.chmod(d, 0o755)
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def _dir(parent: Path, name: str, mode: int) -> Path:
    d = parent / name
    d.mkdir()
    os.chmod(d, mode)
    return d


@pytest.fixture
def shared(public: Path) -> Path:
    """A directory everyone can write, without the sticky bit (the issue's ``--run-dir``)."""
    return _dir(public, "shared", 0o777)


@pytest.fixture
def sticky(public: Path) -> Path:
    """A directory like /tmp: everyone can write, the sticky bit protects each one's names."""
    return _dir(public, "sticky", 0o1777)


def _mount(tmp_path: Path, name: str, options: str) -> Iterator[Path]:
    mnt = tmp_path / name
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(mnt)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A real 64 KiB filesystem, which a bundle with a 200 KB log fills."""
    yield from _mount(tmp_path, "small", "size=64k,mode=0700")


@pytest.fixture
def read_only_disk(tmp_path: Path) -> Iterator[Path]:
    yield from _mount(tmp_path, "ro", "size=64k,mode=0700,ro")


# -- the run directory -------------------------------------------------------------------------

@needs_root
def test_a_world_writable_run_dir_root_without_sticky_bit_is_refused_with_exit_5(shared: Path) -> None:
    with pytest.raises(BadInput) as e:
        RunDir.create(str(shared), "sync", "abc123")
    assert e.value.exit_code == ExitCode.BAD_INPUT
    assert "world-writable without the sticky bit" in e.value.message and "\n" not in e.value.message
    assert list(shared.iterdir()) == []


@needs_root
def test_the_issues_attack_another_user_never_reads_the_pods_written_to_a_shared_run_dir(shared: Path) -> None:
    """Before: in a world-writable root, nobody renamed cronctl's run directory away, put a 0777 one
    of theirs with a 0666 ``pods.json.tmp`` in its place, and read the pods' secrets."""
    try:
        d = RunDir.create(str(shared), "sync", "abc123")
    except BadInput as e:
        assert "world-writable without the sticky bit" in e.message
    else:
        as_nobody("mv", str(d.path), str(shared / "moved"))
        as_nobody("mkdir", "-m", "0777", str(d.path))
        as_nobody("sh", "-c", f"umask 0; : > {d.path / 'pods.json.tmp'}")
        try:
            d.write_json("pods.json", [{"env": "DB_PASSWORD=hunter2"}])
        except OSError:
            pass
    r = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "grep", "-rqs",
                        "hunter2", str(shared)])
    assert r.returncode != 0, "the second user read the secret"


@needs_root
def test_a_run_dir_root_owned_by_another_user_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "theirs"
    root.mkdir()
    os.chmod(tmp_path, 0o755)
    os.chown(root, NOBODY, NOBODY)
    with pytest.raises(BadInput, match=f"belongs to uid {NOBODY}"):
        RunDir.create(str(root), "sync", "abc123")
    assert list(root.iterdir()) == []


@needs_root
def test_in_a_sticky_directory_a_name_planted_by_another_user_is_refused_not_used(sticky: Path) -> None:
    elsewhere = sticky / "nobodys"
    as_nobody("mkdir", "-m", "0777", str(elsewhere))
    as_nobody("ln", "-s", str(elsewhere), str(sticky / "sync-abc123"))
    with pytest.raises(BadInput, match="File exists"):
        RunDir.create(str(sticky), "sync", "abc123")
    assert list(elsewhere.iterdir()) == []


@needs_root
def test_in_a_sticky_directory_the_run_directory_is_private_and_ours(sticky: Path) -> None:
    d = RunDir.create(str(sticky), "sync", "abc123")
    d.write_json("pods.json", [])
    d.write_text("logs/p/c.log", "x\n")
    st = d.path.stat()
    assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (os.geteuid(), 0o700)
    assert {str(p.relative_to(d.path)): stat.S_IMODE(p.stat().st_mode) for p in d.path.rglob("*")} == {
        "pods.json": 0o600, "logs": 0o700, "logs/p": 0o700, "logs/p/c.log": 0o600}
    # nobody can neither read nor list it
    r = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "ls", str(d.path)],
                       capture_output=True)
    assert r.returncode != 0


def test_a_run_directory_swapped_after_creation_is_not_written(tmp_path: Path) -> None:
    d = RunDir.create(str(tmp_path / "runs"), "sync", "abc123")
    d.path.rename(tmp_path / "moved")
    (tmp_path / "decoy").mkdir()
    os.symlink(tmp_path / "decoy", d.path)
    with pytest.raises(OSError, match="symbolic link"):
        d.write_json("record.json", {})
    d.path.unlink()
    d.path.mkdir()
    with pytest.raises(OSError, match="no longer the run directory"):
        d.write_json("record.json", {})
    assert list((tmp_path / "decoy").iterdir()) == [] and list(d.path.iterdir()) == []


def test_a_planted_link_inside_the_run_directory_is_neither_followed_nor_removed(tmp_path: Path) -> None:
    d = RunDir.create(str(tmp_path / "runs"), "sync", "abc123")
    victim = tmp_path / "victim"
    victim.write_text("keep")
    os.symlink(victim, d.path / "record.json.tmp")  # the old fixed temp name
    os.symlink(victim, d.path / "logs")
    d.write_json("record.json", {"a": 1})
    assert json.loads((d.path / "record.json").read_text()) == {"a": 1}
    with pytest.raises(OSError, match="symbolic link"):
        d.write_text("logs/p/c.log", "x")
    assert victim.read_text() == "keep" and (d.path / "record.json.tmp").is_symlink()
    assert [p.name for p in d.path.iterdir() if p.name.endswith(".tmp")] == ["record.json.tmp"]


@needs_root
def test_a_full_disk_fails_the_write_and_leaves_no_temp_file(small_disk: Path) -> None:
    d = RunDir.create(str(small_disk / "runs"), "sync", "abc123")
    with pytest.raises(OSError, match="No space left"):
        d.write_text("logs/p/c.log", "x" * 200_000)
    assert [p.name for p in d.path.rglob("*") if p.is_file()] == []


# -- the bundle --------------------------------------------------------------------------------

def _bundle_cli(out: Path, capfd: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["bundle", "--from-dump", str(DUMP), "--now", "2026-12-02T11:35:00Z", "--out", str(out)])
    return code, capfd.readouterr().err


@pytest.mark.parametrize("target", ["dir", "dangling", "file"])
@pytest.mark.parametrize("suffix", ["", ".tar.gz"])
def test_out_as_a_symlink_is_refused_with_one_line_and_nothing_written_through_it(
        tmp_path: Path, capfd: pytest.CaptureFixture[str], target: str, suffix: str) -> None:
    dest = tmp_path / f"dest{suffix}"
    if target == "dir":
        dest.mkdir()
    elif target == "file":
        dest.write_text("keep")
    out = tmp_path / f"link{suffix}"
    os.symlink(dest, out)
    code, err = _bundle_cli(out, capfd)
    assert code == ExitCode.REFUSED, err
    assert "is a symbolic link" in err and "Traceback" not in err
    assert out.is_symlink()
    if target == "dir":
        assert list(dest.iterdir()) == []
    elif target == "file":
        assert dest.read_text() == "keep"
    else:
        assert not dest.exists()
    assert not [p for p in tmp_path.iterdir() if "partial" in p.name]


@needs_root
@pytest.mark.parametrize("suffix", ["", ".tar.gz"])
def test_a_read_only_disk_is_a_clear_error_with_exit_5(read_only_disk: Path, capfd: pytest.CaptureFixture[str],
                                                       suffix: str) -> None:
    code, err = _bundle_cli(read_only_disk / f"b{suffix}", capfd)
    assert code == ExitCode.BAD_INPUT, err
    assert "Read-only file system" in err and "Traceback" not in err
    assert list(read_only_disk.iterdir()) == []


@needs_root
@pytest.mark.parametrize("suffix", ["", ".tar.gz"])
def test_a_full_disk_is_a_clear_error_and_leaves_no_partial_bundle(small_disk: Path, suffix: str) -> None:
    files = {**FILES, "logs/pod-a/big.log": os.urandom(200_000)}  # random: gzip cannot shrink it
    with pytest.raises(BadInput, match="No space left on device"):
        write_bundle(files, str(small_disk / f"b{suffix}"), mtime=WHEN)
    assert list(small_disk.iterdir()) == []


def test_a_missing_target_directory_is_a_clear_error(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    code, err = _bundle_cli(tmp_path / "no" / "such" / "b", capfd)
    assert code == ExitCode.BAD_INPUT and "does not exist" in err and "Traceback" not in err


@needs_root
def test_a_bundle_in_a_world_writable_directory_without_sticky_bit_is_refused(
        shared: Path, capfd: pytest.CaptureFixture[str]) -> None:
    code, err = _bundle_cli(shared / "b", capfd)
    assert code == ExitCode.BAD_INPUT and "world-writable without the sticky bit" in err
    assert list(shared.iterdir()) == []


@needs_root
@pytest.mark.parametrize("suffix", ["", ".tar.gz"])
def test_a_planted_partial_name_of_another_user_is_never_removed(sticky: Path, suffix: str) -> None:
    """Before: cronctl's cleanup removed ``.<out>.partial-<its pid>`` whoever had made it."""
    planted = sticky / f".b{suffix}.partial-{os.getpid()}"
    as_nobody("mkdir", str(planted))
    as_nobody("touch", str(planted / "theirs"))
    write_bundle(FILES, str(sticky / f"b{suffix}"), mtime=WHEN)
    assert (planted / "theirs").exists()
    assert sorted(p.name for p in sticky.iterdir()) == sorted([planted.name, f"b{suffix}"])


@needs_root
def test_an_existing_empty_directory_of_another_user_is_not_taken_over(sticky: Path) -> None:
    as_nobody("mkdir", str(sticky / "b"))
    with pytest.raises(Refused, match=f"belongs to uid {NOBODY}"):
        write_bundle(FILES, str(sticky / "b"), mtime=WHEN)
    assert sorted(p.name for p in sticky.iterdir()) == ["b"]


_SLOW_WRITER = """
import sys
from datetime import datetime, timezone
from cronctl.cli.runtime import sigterm_as_interrupt
from cronctl.bundle.write import write_bundle
sigterm_as_interrupt()   # what `cronctl bundle` installs
files = {f"logs/pod-{i // 100}/c{i}.log": b"x" * 4096 for i in range(30000)}
print("ready", flush=True)
try:
    write_bundle(files, sys.argv[1], mtime=datetime(2026, 12, 2, tzinfo=timezone.utc))
except KeyboardInterrupt:
    sys.exit(130)
sys.exit(0)
"""


def test_sigterm_while_writing_the_bundle_removes_the_partial_directory(tmp_path: Path) -> None:
    out = tmp_path / "b"
    p = subprocess.Popen([sys.executable, "-c", _SLOW_WRITER, str(out)], stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None and p.stdout.readline() == "ready\n"
    deadline = time.monotonic() + 60
    partial = []
    while not partial and time.monotonic() < deadline and p.poll() is None:
        partial = [x for x in os.listdir(tmp_path) if ".partial" in x]
    assert partial, "the writer finished before it could be interrupted"
    time.sleep(0.05)
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=60) == 130
    assert os.listdir(tmp_path) == []


def test_sigterm_during_cronctl_bundle_exits_130_and_leaves_nothing(tmp_path: Path) -> None:
    p = start_cronctl(["bundle", "--from-dump", str(DUMP), "--now", "2026-12-02T11:35:00Z", "--out", str(tmp_path / "b")],
                      script=True, cwd=tmp_path, stdout=None, env=dict(os.environ))
    assert p.stderr is not None and "collecting a bundle" in p.stderr.readline()  # the handler is in place
    time.sleep(0.1)
    p.send_signal(signal.SIGTERM)
    rest = p.stderr.read()
    assert p.wait(timeout=60) == 130, rest
    assert rest.startswith("error: interrupted: nothing was written to") and "Traceback" not in rest
    assert os.listdir(tmp_path) == []


def test_temp_names_are_random_and_hidden() -> None:
    a, b = safefile.temp_name("record.json"), safefile.temp_name("record.json")
    assert a != b and a.startswith(".record.json.") and a.endswith(".tmp")
    with pytest.raises(OSError, match="plain path component"):
        safefile.temp_name("../x")
