"""The one way geneb limits the native thread pools (BLAS, OpenMP) around a block of work.

``threadpoolctl.threadpool_limits`` finds the loaded libraries anew on every call: it walks
every shared object of the process and reads files, 1.2-4.8 ms a call on this machine
(measured), against 0.03 ms for ``ThreadpoolController.limit`` on a controller made once. A
probe run of 75 small fits entered such a limit at least twice per call, which cost more than
a 1,000 x 256 C path's solve. The controller is kept, and made anew when a module has been
imported since (a library that brings its own pool, torch's OpenMP for one, is imported as a
module first), so a pool loaded later is still limited. scipy's BLAS and LAPACK, which the
solvers call directly (``probe.solvers.blas_calls``, loaded on their first call), are loaded
before the controller is made: a limit entered before that first call did not reach them, and
the first full-data fit of a process ran scipy's two OpenBLAS threads under each of its own
two (measured 2026-12-07: 16 slab products of a 2,000-row kernel in two Python threads 0.29-
0.49 s against 0.18-0.21 s with scipy's pool limited).
"""

from __future__ import annotations

import sys
from contextlib import AbstractContextManager
from typing import Any

_CONTROLLER: list[Any] = []  # [controller, number of modules when it was made]


def _controller() -> Any:
    """The cached ``ThreadpoolController``, made anew when ``sys.modules`` has grown."""
    if not _CONTROLLER:
        import scipy.linalg.cython_blas  # noqa: F401 (scipy's OpenBLAS, see the module doc)
        import scipy.linalg.cython_lapack  # noqa: F401
    n_modules = len(sys.modules)
    if not _CONTROLLER or _CONTROLLER[1] != n_modules:
        from threadpoolctl import ThreadpoolController

        controller = ThreadpoolController()
        _CONTROLLER[:] = [controller, len(sys.modules)]
    return _CONTROLLER[0]


def thread_limit(limits: int | None) -> AbstractContextManager[Any]:
    """A context in which every native thread pool runs at most ``limits`` threads.

    Parameters
    ----------
    limits : int or None
        The most threads each pool may use inside the block; ``None`` leaves them as they are.

    Returns
    -------
    contextlib.AbstractContextManager
        ``threadpoolctl``'s limiter: entering it applies the limits, leaving it restores the
        pools' previous sizes.
    """
    limiter: AbstractContextManager[Any] = _controller().limit(limits=limits)
    return limiter
