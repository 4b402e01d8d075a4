"""Solver backends behind one interface, found through one registry with lazy imports."""

from __future__ import annotations

import importlib

from geneb.errors import GenebError, unknown_name
from geneb.probe.solvers.base import (
    DEFAULT_TOL,
    CellFit,
    ProbeCell,
    ProbeProblem,
    SolverBackend,
)

#: name -> "module:Class". Imported only when asked for, so cuML/torch cost nothing otherwise.
BACKENDS: dict[str, str] = {
    "fast": "geneb.probe.solvers.fast:FastBackend",  # batched CPU solver (default without GPU)
    "sklearn": "geneb.probe.solvers.sklearn_backend:SklearnBackend",
    "torch": "geneb.probe.solvers.torch_batched:TorchBatchedBackend",  # CPU or CUDA
    "cuml": "geneb.probe.solvers.cuml_backend:CumlBackend",
}


def get_backend(name: str, **options: object) -> SolverBackend:
    """Instantiate a backend by name; ``auto`` picks cuML when usable, else ``fast``."""
    if name == "auto":
        from geneb.probe.solvers.cuml_backend import cuml_available

        name = "cuml" if cuml_available() else "fast"
    if name not in BACKENDS:
        raise unknown_name("backend", name, [*BACKENDS, "auto"])
    module, cls = BACKENDS[name].split(":")
    try:
        mod = importlib.import_module(module)
    except ImportError as e:
        raise GenebError(f"backend {name!r} cannot be imported: {e}") from e
    return getattr(mod, cls)(**options)


__all__ = [
    "BACKENDS",
    "DEFAULT_TOL",
    "CellFit",
    "ProbeCell",
    "ProbeProblem",
    "SolverBackend",
    "get_backend",
]
