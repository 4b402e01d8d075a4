"""The full-data solver of another git revision, for ``real_size.py --before REV``.

``solver_at(rev)`` imports the solver's modules as they were at ``rev`` under other names, so
the former and the current solver run alternately in one process; ``before_regime`` runs the
full regime with the former one swapped into the fast backend.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np

#: The modules of the full-data solver taken from the other revision (those it does not have
#: are the current ones; ``row_blocks`` joined 2026-12-02, after the fifth round's "before"
#: runs, which used the current one: the calling thread in its maps; ``fast_int16`` is new in
#: the sixth round, absent at its "before" revision; ``fast_rowspace`` is the eighth round's,
#: swapped in by ``before_regime`` where the revision has it).
SOLVER_MODULES = ("fast_path", "fast_gram", "fast_full", "fast_precond", "fast_passes",
                  "fast_kernels", "fast_kron", "fast_int16", "numeric", "lapack_factor",
                  "blas_calls", "row_blocks", "fast_rowspace")


def solver_at(rev: str) -> ModuleType:
    """The full-data solver (``fast_full`` with its ``fast_path``) as it was at git revision
    ``rev`` of this repository, imported under other names (the before/after comparison runs
    both in one process, alternating)."""
    root = Path(__file__).resolve().parents[1]
    tmp = Path(tempfile.mkdtemp(prefix="geneb-solver-"))
    names = {}
    for mod in SOLVER_MODULES:
        show = subprocess.run(["git", "-C", str(root), "show",
                               f"{rev}:geneb/probe/solvers/{mod}.py"], capture_output=True,
                              text=True)
        if show.returncode == 0:
            names[mod] = show.stdout
    for mod, text in names.items():
        for other in names:
            text = text.replace(f"geneb.probe.solvers.{other} import", f"before_{other} import")
        (tmp / f"before_{mod}.py").write_text(text)
    sys.path.insert(0, str(tmp))
    return importlib.import_module("before_fast_full")



def before_regime(data: tuple, solver: ModuleType, probe_regime: Callable[[tuple, str], dict]
                  ) -> dict:
    """The full regime (``probe_regime(data, "full")``, ``real_size.py``'s) with
    ``solver.solve_path`` (``solver_at``) in place of the current one."""
    from geneb.probe.solvers import fast

    kept = fast.solve_path
    takes_ones = "implicit_ones" in inspect.signature(solver.solve_path).parameters

    def former(Xa64, Xa32, y, n_classes, Cs, *, implicit_ones=False, **kw):  # noqa: ANN001
        if takes_ones:  # a revision with the implicit column of ones: called as it is
            return solver.solve_path(Xa64, Xa32, y, n_classes, Cs, implicit_ones=implicit_ones,
                                     **kw)
        # an older solver has no implicit column of ones: the copy with it, as its backend
        # made, counted in the first C's seconds like the design then was (prep)
        t0 = time.perf_counter()
        if implicit_ones:
            Xa32 = np.hstack([Xa32, np.ones((len(Xa32), 1), np.float32)])
        copy_s = time.perf_counter() - t0
        path = solver.solve_path(Xa64, Xa32, y, n_classes, Cs, **kw)
        return [dataclasses.replace(path[0], seconds=path[0].seconds + copy_s), *path[1:]]

    kept_rows = fast.solve_path_row_space, fast.use_row_space
    fast.solve_path = former
    if "before_fast_rowspace" in sys.modules or _importable("before_fast_rowspace"):
        rows = sys.modules["before_fast_rowspace"]
        fast.solve_path_row_space = (rows.solve_path_row_space if hasattr(rows, "_kernel32")
                                     else _float64_rows(rows.solve_path_row_space))
        fast.use_row_space = _former_rule(rows.use_row_space)
    try:
        return probe_regime(data, "full")
    finally:
        fast.solve_path = kept
        fast.solve_path_row_space, fast.use_row_space = kept_rows


def _importable(name: str) -> bool:
    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True


def _float64_rows(solve: Callable[..., object]) -> Callable[..., object]:
    """A former ``solve_path_row_space`` given float64 rows, as its caller then made them (the
    ninth round passes unstandardised float32 features as they are; the eighth round's solver
    would compute its kernel and basis in float32; a revision with ``_kernel32`` takes float32
    rows and is called as it is). The upcast is counted in the fit's
    preparation, as the former design's was (it also made a float32 copy: not counted)."""

    def former(X: np.ndarray, *args: object, **kw: object) -> object:
        return solve(np.array(X, dtype=np.float64), *args, **kw)  # it centres X in place

    return former


def _former_rule(rule: Callable[..., bool]) -> Callable[[int, int, int], bool]:
    """The current ``use_row_space(n, d, weight_rows)`` from a former one: the eighth round's
    ``use_row_space(n, d)``, which its caller combined with ``second_order(n, weight_rows)``."""
    from geneb.probe.solvers.base import second_order

    def combined(n: int, d: int, weight_rows: int = 1) -> bool:
        try:
            return bool(rule(n, d, weight_rows))
        except TypeError:
            return bool(rule(n, d)) and second_order(n, weight_rows)

    return combined
