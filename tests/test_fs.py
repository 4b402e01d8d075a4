"""geneb._fs: the one atomic write and the one file lock (every caller's guarantees, directly)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from geneb import _fs


def test_write_replaces_a_symlink_never_its_target(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"keep me")
    link = tmp_path / "out.txt"
    link.symlink_to(victim)
    assert _fs.write_bytes(link, b"new", durable=True)
    assert victim.read_bytes() == b"keep me"
    assert not link.is_symlink() and link.read_bytes() == b"new"
    assert sorted(os.listdir(tmp_path)) == ["out.txt", "victim.txt"]  # no temp left


@pytest.mark.parametrize("umask", [0o002, 0o022, 0o077])
def test_files_honour_the_umask(tmp_path, umask):
    old = os.umask(umask)
    try:
        _fs.write_bytes(tmp_path / "a", b"x")
        _fs.write_with(tmp_path / "b", lambda t: t.write_bytes(b"y"))
    finally:
        os.umask(old)
    for name in ("a", "b"):
        assert os.stat(tmp_path / name).st_mode & 0o777 == 0o666 & ~umask


def test_exclusive_never_clobbers(tmp_path):
    p = tmp_path / "doc.json"
    assert _fs.write_bytes(p, b"first", exclusive=True)
    assert not _fs.write_bytes(p, b"second", exclusive=True)
    assert p.read_bytes() == b"first"
    assert os.listdir(tmp_path) == ["doc.json"]


def test_failed_writer_leaves_the_old_file_and_no_temp(tmp_path):
    p = tmp_path / "table.csv"
    p.write_bytes(b"old")

    def half(t):
        t.write_bytes(b"half")
        raise RuntimeError("killed mid-write")

    with pytest.raises(RuntimeError, match="killed mid-write"):
        _fs.write_with(p, half)
    assert p.read_bytes() == b"old" and os.listdir(tmp_path) == ["table.csv"]


def test_planted_link_at_the_temp_name_is_not_followed(tmp_path):
    victim = tmp_path / "victim"
    victim.write_bytes(b"keep")
    p = tmp_path / "out"
    _fs.temp_path(p).symlink_to(victim)  # e.g. left by someone else with our pid
    _fs.write_with(p, lambda t: t.write_bytes(b"new"))
    assert victim.read_bytes() == b"keep" and p.read_bytes() == b"new"


def test_remove_temps_only_touches_temp_names(tmp_path):
    (tmp_path / ".part-1.parquet.9-9.partial").write_bytes(b"")
    (tmp_path / ".other.9-9.partial").write_bytes(b"")
    (tmp_path / "part-1.parquet").write_bytes(b"")
    _fs.remove_temps(tmp_path, ".part-")
    assert sorted(os.listdir(tmp_path)) == [".other.9-9.partial", "part-1.parquet"]


def test_lock_excludes_another_process_and_dies_with_it(tmp_path):
    lock = tmp_path / ".t.lock"
    code = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from geneb._fs import file_lock
        with file_lock(Path({str(lock)!r})):
            print("held", flush=True)
            time.sleep(60)
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, env=env)
    try:
        assert proc.stdout.readline().strip() == b"held"
        with pytest.raises(BlockingIOError), _fs.file_lock(lock, wait=False):
            pass
    finally:
        proc.kill()
        proc.wait()
    with _fs.file_lock(lock, wait=False):  # the kernel released it with the killed holder
        pass


def test_folder_lock_excludes_a_second_open_in_the_same_process(tmp_path):
    with _fs.file_lock(tmp_path, wait=False, folder=True) as fd:
        assert os.fstat(fd).st_ino == os.stat(tmp_path).st_ino
        with pytest.raises(BlockingIOError), _fs.file_lock(tmp_path, wait=False, folder=True):
            pass
    assert os.listdir(tmp_path) == []  # no lock file appears
