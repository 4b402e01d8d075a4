"""Feature store with real processes: SIGKILL mid-write then resume, one writer per key,
sibling entries created in parallel."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
import zarr

import geneb.store.entry_io as fsmod
from geneb.errors import EntryIncompleteError
from geneb.store import FeatureStore, Provenance, StoreKey

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and flock")

D = 16
INNER, SHARD = 16 * D * 4, 128 * D * 4  # 16-row inner chunks, 128-row shards

CHILD = rf'''
import os, sys, time
import numpy as np
import geneb.store.entry_io as fsmod
from geneb.errors import EntryLockedError
from geneb.store import FeatureStore, Provenance, StoreKey

path, model, task, n, seed, batch, pause, hold = sys.argv[1:9]
n, seed, batch, pause = int(n), int(seed), int(batch), float(pause)
fsmod.INNER_BYTES, fsmod.SHARD_BYTES = {INNER}, {SHARD}
x = np.random.default_rng(seed).standard_normal((n, {D})).astype(np.float32)
key = StoreKey(model, task, "train")
if hold != "-":
    while not os.path.exists(hold + ".start"):
        time.sleep(0.005)
st = FeatureStore(path, mode="a")
try:
    with st.writer(key, provenance=Provenance(model, "r", task, "fp"), labels=np.arange(n) % 2,
                   rows=np.arange(n), dim={D}) as w:
        print("START", w.start_row, flush=True)
        for a in range(w.start_row, n, batch):
            w.append(x[a:a + batch])
            print("ROWS", w._next, flush=True)
            if hold != "-" and a == w.start_row:
                print("LOCKED", flush=True)
                while not os.path.exists(hold + ".go"):
                    time.sleep(0.005)
            time.sleep(pause)
except EntryLockedError as e:
    print("LOCKED-OUT", e, flush=True)
    sys.exit(3)
print("DONE", flush=True)
'''


@pytest.fixture
def child(tmp_path) -> Path:
    p = tmp_path / "child.py"
    p.write_text(CHILD)
    return p


_SPAWNED: list[subprocess.Popen] = []


@pytest.fixture(autouse=True)
def _no_leftover_children():
    """A failing test must not leave a child writer waiting on a flag forever."""
    yield
    while _SPAWNED:
        p = _SPAWNED.pop()
        if p.poll() is None:
            p.kill()
        p.communicate(timeout=30)


def spawn(child: Path, store: Path, model="m", task="t", n=3000, seed=0, batch=50, pause=0.0,
          hold="-") -> subprocess.Popen:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    p = subprocess.Popen(
        [sys.executable, str(child), str(store), model, task, str(n), str(seed), str(batch),
         str(pause), hold],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    _SPAWNED.append(p)
    return p


def read_until(proc: subprocess.Popen, pred, timeout=60.0) -> str:
    t0 = time.monotonic()
    assert proc.stdout is not None
    while time.monotonic() - t0 < timeout:
        line = proc.stdout.readline()
        if not line:
            raise AssertionError(f"child ended early: {proc.wait()} {proc.stderr.read()}")
        if pred(line):
            return line
    raise AssertionError("child too slow")


def data(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, D)).astype(np.float32)


def finish_in_process(store_path: Path, n: int, model="m", task="t") -> int:
    """Resume the entry in this process; returns the writer's start_row."""
    x = data(n)
    st = FeatureStore(store_path, mode="a")
    key = StoreKey(model, task, "train")
    with st.writer(key, provenance=Provenance(model, "r", task, "fp"), labels=np.arange(n) % 2,
                   rows=np.arange(n), dim=D) as w:
        start = w.start_row
        for a in range(start, n, 70):
            w.append(x[a : a + 70])
    return start


def shard_bytes(store_path: Path, key: StoreKey) -> dict[str, bytes]:
    d = store_path / key.path / "embeddings"
    return {p.name: p.read_bytes() for p in sorted(d.glob("c.*"))}


@pytest.fixture
def small(monkeypatch):
    monkeypatch.setattr(fsmod, "INNER_BYTES", INNER)
    monkeypatch.setattr(fsmod, "SHARD_BYTES", SHARD)


def test_sigkill_mid_write_then_resume_equals_uninterrupted(tmp_path, child, small):
    n = 3000
    key = StoreKey("m", "t", "train")
    ref = tmp_path / "ref"
    finish_in_process(ref, n)  # uninterrupted reference
    path = tmp_path / "s"
    proc = spawn(child, path, n=n, pause=0.01)
    line = read_until(proc, lambda s: s.startswith("ROWS") and int(s.split()[1]) >= 1000)
    written = int(line.split()[1])
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    st = FeatureStore(path)
    assert st.status(key) == "incomplete"
    with pytest.raises(EntryIncompleteError):
        st.get("m", "t", "train")
    assert zarr.open_group(str(path), mode="r")[key.path].attrs["complete"] is False
    start = finish_in_process(path, n)
    assert written <= start < n and start % 128 == 0  # continued, not restarted
    np.testing.assert_array_equal(FeatureStore(path).get("m", "t", "train").embeddings, data(n))
    assert shard_bytes(path, key) == shard_bytes(ref, key)
    assert FeatureStore(path).verify() == []


def test_repeated_kills_at_random_moments_never_read_complete(tmp_path, child, small):
    """Kill at arbitrary moments (also inside shard or metadata writes): the entry reads as
    complete only when every row is there and correct; each rerun resumes."""
    n, path, key = 2000, tmp_path / "s", StoreKey("m", "t", "train")
    rng = np.random.default_rng(7)
    interrupted = 0
    for _ in range(4):
        proc = spawn(child, path, n=n, pause=0.002, batch=37)
        read_until(proc, lambda s: s.startswith("START"))
        time.sleep(float(rng.uniform(0.0, 0.06)))
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)
        st = FeatureStore(path)
        if st.status(key) == "complete":
            np.testing.assert_array_equal(st.get("m", "t", "train").embeddings, data(n))
        else:
            interrupted += 1
            with pytest.raises(EntryIncompleteError):
                st.get("m", "t", "train")
    assert interrupted >= 1
    finish_in_process(path, n)
    np.testing.assert_array_equal(FeatureStore(path).get("m", "t", "train").embeddings, data(n))


def test_truncated_shard_is_not_counted_as_written(tmp_path, small):
    """rows_written may be ahead of what is intact on disk (a shard cut short, a lost write):
    resume re-verifies shards and restarts at the first bad one."""
    n, path, key = 1000, tmp_path / "s", StoreKey("m", "t", "train")
    x = data(n)
    st = FeatureStore(path, mode="a")
    with pytest.raises(KeyboardInterrupt):
        with st.writer(key, provenance=Provenance("m", "r", "t", "fp"),
                       labels=np.arange(n) % 2, rows=np.arange(n), dim=D) as w:
            w.append(x[:700])
            raise KeyboardInterrupt
    assert st.plan(key, Provenance("m", "r", "t", "fp")).start_row == 640
    f = path / key.path / "embeddings" / "c.2.0"
    f.write_bytes(f.read_bytes()[:-50])
    assert finish_in_process(path, n) == 256
    np.testing.assert_array_equal(st.get("m", "t", "train").embeddings, x)


def test_second_writer_on_same_key_is_refused(tmp_path, child):
    path, hold = tmp_path / "s", str(tmp_path / "flag")
    Path(hold + ".start").touch()
    a = spawn(child, path, n=600, seed=1, batch=200, hold=hold)
    read_until(a, lambda s: s.startswith("LOCKED"))
    b = spawn(child, path, n=600, seed=2, batch=200)
    out_b, err_b = b.communicate(timeout=60)
    assert b.returncode == 3, err_b
    assert "being written by another process" in out_b
    Path(hold + ".go").touch()
    out_a, err_a = a.communicate(timeout=60)
    assert a.returncode == 0 and "DONE" in out_a, err_a
    e = FeatureStore(path).get("m", "t", "train")
    np.testing.assert_array_equal(e.embeddings, data(600, seed=1))  # A's rows only
    # once A is done, the lock is free again (released by the kernel with the process)
    with FeatureStore(path, mode="a").lock(StoreKey("m", "t", "train")):
        pass


def test_sibling_entries_created_in_parallel(tmp_path, child):
    """Processes creating entries under the same model (and store root) at the same moment."""
    path, hold = tmp_path / "s", str(tmp_path / "flag")
    procs = [
        spawn(child, path, model=m, task=f"task{i}", n=300, seed=i, batch=300, hold=hold)
        for m in ("org/model", "other")
        for i in range(2)
    ]
    Path(hold + ".go").touch()
    time.sleep(0.3)  # let all of them import and wait on the start flag
    Path(hold + ".start").touch()
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0 and "DONE" in out, err
    st = FeatureStore(path)
    models = ("org/model", "other")
    want = sorted(StoreKey(m, f"task{i}", "train") for m in models for i in range(2))
    assert st.keys(complete_only=True) == want
    for k in want:
        seed = int(k.task[-1])
        np.testing.assert_array_equal(st.get(*k.__dict__.values()).embeddings, data(300, seed))
    assert st.verify() == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        members = dict(zarr.open_group(str(path), mode="r").members(max_depth=None))
    assert members[want[0].path.split("/")[0]].attrs["model_id"] == "org/model"
    assert {k.path for k in want} <= set(members)
