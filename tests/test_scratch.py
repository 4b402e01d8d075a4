"""The pool of large work arrays (geneb.probe.solvers.scratch): memory reused, never while in
use, and arrays that behave like numpy's own."""

from __future__ import annotations

import gc
import threading

import numpy as np
import pytest
from realistic_embeddings import generate

from geneb.probe.solvers import fast_passes, scratch
from geneb.probe.solvers.fast_full import solve_path

BIG = (scratch.POOL_MIN_BYTES // 4 + 1024,)  # float32 entries just over the pool's minimum


def address(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


@pytest.fixture(autouse=True)
def empty_pool():
    scratch.release()
    yield
    gc.collect()
    scratch.release()


def test_memory_of_a_dropped_array_is_handed_out_again() -> None:
    a = scratch.empty(BIG, np.float32)
    where = address(a)
    del a
    b = scratch.empty((BIG[0] // 2, 2), np.float32)  # another shape, no more bytes
    assert address(b) == where
    assert b.shape == (BIG[0] // 2, 2) and b.dtype == np.float32 and b.flags.c_contiguous
    assert b.flags.writeable


def test_memory_a_view_still_uses_is_not_handed_out() -> None:
    a = scratch.empty(BIG, np.float32)
    a[:] = 7.0
    where = address(a)
    view = a[:10].reshape(2, 5)
    del a
    gc.collect()
    b = scratch.empty(BIG, np.float32)
    assert address(b) != where  # the view keeps the first buffer in use
    b[:] = -1.0
    np.testing.assert_array_equal(view, np.full((2, 5), 7.0, dtype=np.float32))
    del view, b
    gc.collect()
    assert scratch.free_bytes() >= 2 * BIG[0] * 4


def test_zeros_are_zero_on_reused_memory() -> None:
    a = scratch.empty(BIG, np.float64)
    a[:] = np.nan
    del a
    z = scratch.zeros(BIG, np.float64)
    assert z.dtype == np.float64 and not np.any(z)
    np.testing.assert_array_equal(z, np.zeros(BIG))


def test_small_arrays_are_plain_numpy_ones() -> None:
    small = scratch.empty((10, 10), np.float32)
    assert small.flags.owndata and small.shape == (10, 10)
    del small
    assert scratch.free_bytes() == 0


def test_the_pool_keeps_its_largest_free_buffers_only() -> None:
    sizes = [BIG[0] * (i + 1) for i in range(scratch.POOL_BUFFERS + 2)]
    arrays = [scratch.empty((s,), np.float32) for s in sizes]
    del arrays
    gc.collect()
    assert scratch.free_bytes() == 4 * sum(sizes[-scratch.POOL_BUFFERS:])
    scratch.release()
    assert scratch.free_bytes() == 0


def test_threads_never_share_a_buffer() -> None:
    seen: list[tuple[int, float]] = []
    errors: list[str] = []
    lock = threading.Lock()

    def work(value: float) -> None:
        for _ in range(20):
            a = scratch.empty(BIG, np.float32)
            a.fill(value)
            with lock:
                seen.append((address(a), value))
            if not (a == value).all():
                errors.append(f"buffer of thread {value} overwritten")
            del a

    threads = [threading.Thread(target=work, args=(float(t),)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(seen) == 80


@pytest.mark.skipif(not fast_passes.use_kernels(4096, 1025), reason="numba is not installed")
def test_a_path_on_reused_dirty_memory_has_the_same_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    """The full-data path's pooled arrays (int16 copy, Gram, preconditioner matrix): a second
    fit on the first one's memory, filled with NaN bits in between, and a fit with the pool
    off give the same coefficients to the bit."""
    X, y = generate(4096, 1024, 2, seed=5)

    def path() -> list[np.ndarray]:
        fits = solve_path(None, X, y, 2, [0.1, 10.0], tol=1e-8, max_iter=100, threads=2,
                          implicit_ones=True)
        assert all(f.converged for f in fits)
        return [f.theta for f in fits]

    first = path()
    gc.collect()
    assert scratch.free_bytes() >= X.nbytes // 2  # the int16 copy at least came back
    for buffer in scratch._free:
        buffer.fill(0xFF)  # NaN in every float dtype
    again = path()
    monkeypatch.setattr(scratch, "POOL_MIN_BYTES", 1 << 62)
    scratch.release()
    plain = path()
    for a, b, c in zip(first, again, plain, strict=True):
        assert np.array_equal(a, b) and np.array_equal(a, c)
