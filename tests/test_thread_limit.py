"""geneb._threads.thread_limit against threadpoolctl's own view of the pools."""

from __future__ import annotations

import sys
import types

import numpy as np  # noqa: F401  (loads numpy's OpenBLAS pool)
import scipy.linalg.cython_blas  # noqa: F401  (and scipy's, which thread_limit loads)
from threadpoolctl import threadpool_info

from geneb import _threads
from geneb._threads import thread_limit


def _sizes() -> list[int]:
    return [pool["num_threads"] for pool in threadpool_info()]


def test_limits_inside_and_restores_after():
    before = _sizes()
    assert before, "expected at least numpy's BLAS pool"
    with thread_limit(1):
        assert _sizes() == [1] * len(before)
    assert _sizes() == before
    with thread_limit(None):  # None: the pools as they are
        assert _sizes() == before


def test_controller_is_kept_and_remade_after_an_import(monkeypatch):
    with thread_limit(1):
        pass
    first = _threads._controller()
    assert _threads._controller() is first  # no rescan while nothing was imported
    monkeypatch.setitem(sys.modules, "geneb_test_new_module", types.ModuleType("x"))
    second = _threads._controller()
    assert second is not first  # a module imported since: the libraries are found anew
    with thread_limit(1):
        assert set(_sizes()) == {1}


def test_a_limit_reaches_scipys_blas_loaded_inside_it():
    """scipy's BLAS (which the solvers call directly, loading it on their first call) is
    limited by a ``thread_limit`` entered before anything loaded it: a fresh interpreter
    enters the limit first, then calls a scipy BLAS routine, and threadpoolctl sees every
    pool at one thread. (Before, scipy's pool kept its default size, the machine's cores.)"""
    import subprocess

    code = (
        "import numpy as np\n"
        "from geneb._threads import thread_limit\n"
        "from threadpoolctl import threadpool_info\n"
        "with thread_limit(1):\n"
        "    from geneb.probe.solvers.blas_calls import routine\n"
        "    routine('dgemm')\n"
        "    pools = {p['filepath']: p['num_threads'] for p in threadpool_info()}\n"
        "assert any('scipy' in f and 'numpy' not in f for f in pools), pools\n"
        "assert set(pools.values()) == {1}, pools\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
