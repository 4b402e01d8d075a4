"""Large work arrays of the full-data fits, their memory kept for the process's next fit.

A full-data fit allocates a few arrays the size of its design or of its Hessian (the int16
copy of ``fast_int16``, the lagged Gram, the preconditioner matrices) and drops them at its
end; the next fit allocates them afresh. The first touch of freshly mapped memory is not
free: measured 2026-12-02 on this machine (a virtual machine that hands freed memory back to
its host), 0.7-1.5 GB/s, against ~8 GB/s to overwrite memory already mapped (164 MB: 237 ms
fresh, 19 ms reused): 0.25-0.3 s of a 2-5 s C path at 100,000 x 1,024 and 20,000 x 4,096.
``empty`` and ``zeros`` hand out arrays of at least ``POOL_MIN_BYTES`` from such kept
memory when some is free, and an array's memory goes back to the pool when the array and
every view of it are gone (a finalizer on the array that every view refers to), so memory
in use is never handed out twice, whichever thread asks. Smaller arrays are plain numpy
ones (malloc keeps those mapped itself).

The pool keeps at most ``POOL_BUFFERS`` free buffers (the largest); ``release`` drops them
all (a long-lived process that has finished probing gets the memory back).
"""

from __future__ import annotations

import threading
import weakref

import numpy as np

#: Arrays of at least this many bytes come from the pool (smaller ones: ``np.empty``): the
#: int16 copy of 10,000 x 768 (15 MB) and the Gram of width 1,024 (4.2 MB) are pooled; malloc
#: keeps only blocks below its mmap threshold (at most 32 MiB, lowered again as it trims).
POOL_MIN_BYTES = 4 * 2**20
#: Free buffers kept (a fit uses at most three of this size: the int16 copy, the lagged Gram,
#: a preconditioner matrix); beyond it, the smallest are dropped.
POOL_BUFFERS = 4

_lock = threading.Lock()
_free: list[np.ndarray] = []  # free uint8 buffers, each owning its memory


def empty(shape: tuple[int, ...], dtype: type) -> np.ndarray:
    """An uninitialised C-contiguous array of ``shape`` and ``dtype`` (as ``np.empty``),
    from the pool's kept memory when it is at least ``POOL_MIN_BYTES``.

    Parameters
    ----------
    shape : tuple of int
    dtype : numpy dtype

    Returns
    -------
    ndarray
        Writable; its memory returns to the pool once it and all its views are gone.
    """
    return _array(shape, dtype, zeroed=False)


def zeros(shape: tuple[int, ...], dtype: type) -> np.ndarray:
    """``empty`` filled with zeros (as ``np.zeros``: new memory comes zeroed from the
    system, so pages never written stay unmapped; kept memory is filled)."""
    return _array(shape, dtype, zeroed=True)


def _array(shape: tuple[int, ...], dtype: type, zeroed: bool) -> np.ndarray:
    """``empty`` (``zeroed`` False) or ``zeros`` (True): plain numpy below the pool's size."""
    dt = np.dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64))
    nbytes = count * dt.itemsize
    if nbytes < POOL_MIN_BYTES:
        return np.zeros(shape, dtype=dt) if zeroed else np.empty(shape, dtype=dt)
    buffer = _take(nbytes)
    if buffer is None:
        buffer = np.zeros(nbytes, dtype=np.uint8) if zeroed else np.empty(nbytes, np.uint8)
    elif zeroed:
        buffer[:nbytes].fill(0)
    owner = np.frombuffer(buffer.data[:nbytes], dtype=dt, count=count)
    weakref.finalize(owner, _give, buffer)  # views of owner keep owner, hence buffer, in use
    return owner.reshape(shape)


def release() -> None:
    """Drop every free buffer of the pool (buffers in use return to it later as usual)."""
    with _lock:
        _free.clear()


def free_bytes() -> int:
    """Bytes of the free buffers the pool keeps."""
    with _lock:
        return sum(b.nbytes for b in _free)


def _take(nbytes: int) -> np.ndarray | None:
    """The smallest free buffer of at least ``nbytes`` (removed from the pool), or None."""
    with _lock:
        fits = [i for i, b in enumerate(_free) if b.nbytes >= nbytes]
        if fits:
            return _free.pop(min(fits, key=lambda i: _free[i].nbytes))
    return None


def _give(buffer: np.ndarray) -> None:
    """Return ``buffer`` to the pool, keeping the ``POOL_BUFFERS`` largest free ones."""
    with _lock:
        _free.append(buffer)
        _free.sort(key=lambda b: b.nbytes, reverse=True)
        del _free[POOL_BUFFERS:]
