"""Writing a bundle: private modes, SHA256SUMS that sha256sum -c accepts, no overwrite."""

from __future__ import annotations

import os
import stat
import subprocess
import tarfile
from datetime import datetime, timezone
from pathlib import Path

import pytest

from cronctl.bundle.write import sha256sums, write_bundle
from cronctl.errors import BadInput, Refused

FILES = {"bundle.json": b"{}\n", "logs/pod-a/main.log": b"hello\n", "logs/pod-a/main.previous.log": b"",
         "REPORT.md": b"# r\n"}
WHEN = datetime(2026, 12, 2, 11, 35, tzinfo=timezone.utc)


def _modes(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): stat.S_IMODE(p.stat().st_mode) for p in root.rglob("*")}


def test_a_directory_bundle_has_0600_files_and_0700_dirs_even_with_a_lax_umask(tmp_path: Path) -> None:
    old = os.umask(0o000)
    try:
        write_bundle(FILES, str(tmp_path / "b"), mtime=WHEN)
    finally:
        os.umask(old)
    root = tmp_path / "b"
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    modes = _modes(root)
    assert modes == {"bundle.json": 0o600, "logs": 0o700, "logs/pod-a": 0o700, "logs/pod-a/main.log": 0o600,
                     "logs/pod-a/main.previous.log": 0o600, "REPORT.md": 0o600, "SHA256SUMS": 0o600}


def test_sha256sums_is_checked_by_sha256sum_c(tmp_path: Path) -> None:
    write_bundle(FILES, str(tmp_path / "b"), mtime=WHEN)
    r = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=tmp_path / "b", capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count(": OK") == len(FILES)
    (tmp_path / "b" / "REPORT.md").write_bytes(b"tampered")
    r = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=tmp_path / "b", capture_output=True, text=True)
    assert r.returncode != 0 and "REPORT.md: FAILED" in r.stdout


def test_sha256sums_lines_are_sorted_with_two_spaces() -> None:
    text = sha256sums({"b": b"", "a": b"abc"}).decode()
    assert text == ("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  a\n"
                    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  b\n")


def test_a_tar_gz_bundle_has_private_members_under_one_top_directory(tmp_path: Path) -> None:
    out = tmp_path / "inc.tar.gz"
    write_bundle(FILES, str(out), mtime=WHEN)
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    with tarfile.open(out) as tar:
        members = {m.name: m for m in tar.getmembers()}
        assert set(members) == {"inc", "inc/logs", "inc/logs/pod-a", "inc/bundle.json", "inc/REPORT.md",
                                "inc/SHA256SUMS", "inc/logs/pod-a/main.log", "inc/logs/pod-a/main.previous.log"}
        for m in members.values():
            assert m.mode == (0o700 if m.isdir() else 0o600), m.name
            assert m.mtime == int(WHEN.timestamp())
        tar.extractall(tmp_path / "x", filter="data")
    r = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=tmp_path / "x" / "inc", capture_output=True, text=True)
    assert r.returncode == 0, r.stdout


def test_an_existing_bundle_is_never_overwritten(tmp_path: Path) -> None:
    write_bundle(FILES, str(tmp_path / "b"), mtime=WHEN)
    with pytest.raises(Refused, match="already exists"):
        write_bundle(FILES, str(tmp_path / "b"), mtime=WHEN)
    write_bundle(FILES, str(tmp_path / "b.tar.gz"), mtime=WHEN)
    with pytest.raises(Refused, match="already exists"):
        write_bundle(FILES, str(tmp_path / "b.tar.gz"), mtime=WHEN)
    assert (tmp_path / "b" / "REPORT.md").read_bytes() == b"# r\n"


def test_an_empty_existing_directory_is_used(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    write_bundle(FILES, str(tmp_path / "b"), mtime=WHEN)
    assert (tmp_path / "b" / "SHA256SUMS").exists()


def test_a_missing_parent_directory_is_bad_input_and_leaves_nothing(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="does not exist"):
        write_bundle(FILES, str(tmp_path / "no" / "b"), mtime=WHEN)
    assert list(tmp_path.iterdir()) == []


def test_unsafe_paths_are_refused(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="unsafe path"):
        write_bundle({"../escape": b""}, str(tmp_path / "b"), mtime=WHEN)
