"""Every probe solver, found through ONE registry keyed by (probe, protocol, backend).

The registry is data: :data:`SOLVERS` says which class serves each key, :data:`ALIASES` what
the other names a user may pass (``auto``, the linear-only names for the MLP) select,
:data:`REFUSALS` why a combination does not exist, :data:`TASK_PROBES` which probe serves a
task of another kind (regression tasks: ``ridge`` where the linear probe was asked for).
:func:`resolve_backend` (planning: checks, before any work), :func:`serving` (the probe a
task kind gets) and :func:`make_solver` (the worker) read it; nothing else chooses a solver.
Classes are imported only when asked for, so cuML/torch cost nothing otherwise.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

from geneb.errors import GenebError, ProbeError, unknown_name
from geneb.probe.solvers.base import (
    DEFAULT_TOL,
    FitResult,
    ProbeFit,
    ProbeProblem,
    SolverBackend,
)
from geneb.protocol import DEFAULT_PROTOCOL, PROTOCOLS


@dataclass(frozen=True)
class Solver:
    """One registry entry: the class, and how a run builds it.

    ``target``: "module:Class". ``run_options``: the constructor's keyword arguments taken
    from the run (``blas_threads``, ``fit_threads``, or ``threads`` = fit_threads, else
    blas_threads). ``check``: built once when resolved, so a missing dependency is named
    before any work (constructors that verify their dependencies). ``device``: where it
    computes: "cpu", "cuda" (always a GPU), or "auto" (CUDA when torch sees a GPU): a run
    of GPU solvers places its Dask workers one per GPU (``runs_on_gpu``).
    """

    target: str
    run_options: tuple[str, ...] = ()
    check: bool = False
    device: str = "cpu"


_S = "geneb.probe.solvers."
#: (probe, protocol, backend) -> the solver that serves it. The backends of a (probe,
#: protocol) are the keys listed here; the backend recorded in the results is the key's.
SOLVERS: dict[tuple[str, str, str], Solver] = {
    # batched CPU solver (the default without a usable cuML)
    ("linear", "converged", "fast"): Solver(_S + "fast:FastBackend", ("fit_threads",), True),
    ("linear", "converged", "sklearn"): Solver(_S + "sklearn_backend:SklearnBackend",
                                               check=True),
    ("linear", "converged", "torch"): Solver(_S + "torch_batched:TorchBatchedBackend",
                                             check=True, device="auto"),  # CPU or CUDA
    ("linear", "converged", "cuml"): Solver(_S + "cuml_backend:CumlBackend", check=True,
                                            device="cuda"),
    # the paper's literal scikit-learn LogisticRegression(C=C, max_iter=1000)
    ("linear", "paper", "sklearn"): Solver(_S + "paper:PaperSolver", ("blas_threads",)),
    # all fits of a pair trained at once as one stacked model (CUDA when torch sees a GPU)
    ("mlp", "converged", "torch"): Solver(_S + "mlp:TorchMLPProbe", ("threads",),
                                          device="auto"),
    ("mlp", "converged", "sklearn"): Solver(_S + "mlp:MLPProbe", ("blas_threads",)),  # reference
    # ridge regression, exact (one SVD per set of train rows): regression tasks (TASK_PROBES)
    ("ridge", "converged", "svd"): Solver(_S + "ridge:RidgeSolver"),
}

#: (probe, protocol) -> {name a user may pass: the backends it selects, first usable wins}.
ALIASES: dict[tuple[str, str], dict[str, tuple[str, ...]]] = {
    ("linear", "converged"): {"auto": ("cuml", "fast")},
    ("linear", "paper"): {"auto": ("sklearn",)},
    # neither fast nor cuML has an MLP: they select the default MLP backend
    ("mlp", "converged"): {"auto": ("torch",), "fast": ("torch",), "cuml": ("torch",)},
    ("ridge", "converged"): {"auto": ("svd",)},
}

#: task kind (``TaskSpec.kind``, ``geneb.probe.plan.REGRESSION``) -> {probe a run asks for:
#: the (probe, protocol) that serves it on tasks of that kind, or None where that probe is not
#: defined for the kind (nothing is planned)}. Kinds and probes not listed are served as asked.
#: Regression tasks: ridge stands in for the linear probe (one exact solve: its one protocol,
#: recorded "converged", and its ``auto`` backend, whatever the run asked for); the MLP has
#: no regression form. A probe that only stands in is not a name a user may pass.
TASK_PROBES: dict[str, dict[str, tuple[str, str] | None]] = {
    "regression": {"linear": ("ridge", "converged"), "mlp": None},
}

#: backend -> "module:function" saying whether it can run here (for picking ``auto``);
#: backends not listed always can.
USABLE: dict[str, str] = {"cuml": _S + "cuml_backend:cuml_available"}

#: Combinations that do not exist and why: (probe, protocol) -> message for any backend;
#: (probe, protocol, "") -> message for a backend that (probe, protocol) lacks (default: the
#: unknown-name error listing its backends). Formatted with probe, protocol and backend.
REFUSALS: dict[tuple[str, ...], str] = {
    ("mlp", "paper"): ("protocol='paper' is the paper's logistic regression: it applies to "
                       "probe='linear', got probe={probe!r}"),
    ("linear", "paper", ""): ("protocol='paper' fits scikit-learn's LogisticRegression itself: "
                              "backend must be 'auto' or 'sklearn', got backend={backend!r}"),
}

#: Probes that only serve a task kind in place of another (TASK_PROBES).
_STAND_INS = frozenset(s[0] for rule in TASK_PROBES.values() for s in rule.values() if s)
#: The probes a user may ask for, in declaration order.
PROBES: tuple[str, ...] = tuple(p for p in dict.fromkeys(p for p, _, _ in SOLVERS)
                                if p not in _STAND_INS)
#: Every backend name a user may pass (any probe a user may ask for, any protocol).
BACKEND_NAMES: tuple[str, ...] = tuple(dict.fromkeys(
    ["auto", *(b for p, _, b in SOLVERS if p in PROBES),
     *(a for (p, _), d in ALIASES.items() if p in PROBES for a in d)]))


def backends_for(probe: str, protocol: str = DEFAULT_PROTOCOL) -> tuple[str, ...]:
    """The backends that exist for (probe, protocol), in declaration order."""
    return tuple(b for p, pr, b in SOLVERS if (p, pr) == (probe, protocol))


def _load(target: str) -> Callable[..., object]:
    """The class or function ``"module:attr"`` names (every target in this registry is one)."""
    module, attr = target.split(":")
    found: object = getattr(importlib.import_module(module), attr)
    if not callable(found):
        raise TypeError(f"{target} is not callable")
    return found


def _pick(probe: str, protocol: str, backend: str) -> str:
    """The registry backend ``backend`` names for (probe, protocol), or an error saying why."""
    if probe not in PROBES and probe not in _STAND_INS:
        raise unknown_name("probe", probe, PROBES)
    if protocol not in PROTOCOLS:
        raise unknown_name("protocol", str(protocol), PROTOCOLS)
    why = REFUSALS.get((probe, protocol))
    if why is not None:
        raise ProbeError(why.format(probe=probe, protocol=protocol, backend=backend))
    own = backends_for(probe, protocol)
    aliases = ALIASES.get((probe, protocol), {})
    if backend in aliases:
        choices = aliases[backend]
        return next((b for b in choices[:-1] if b not in USABLE or _load(USABLE[b])()),
                    choices[-1])
    if backend not in own:
        why = REFUSALS.get((probe, protocol, ""))
        if why is not None:
            raise ProbeError(why.format(probe=probe, protocol=protocol, backend=backend))
        raise unknown_name("backend", backend, [*own, *aliases])
    return backend


def get_backend(name: str, *, probe: str = "linear", protocol: str = DEFAULT_PROTOCOL,
                **options: object) -> SolverBackend:
    """Instantiate the solver of (probe, protocol, ``name``); ``auto`` picks cuML for the
    linear probe when usable, else ``fast``. ``options`` go to the constructor."""
    backend = _pick(probe, protocol, name)
    solver = SOLVERS[(probe, protocol, backend)]
    try:
        cls = _load(solver.target)
    except ImportError as e:
        raise GenebError(f"backend {backend!r} cannot be imported: {e}") from e
    # SOLVERS' targets are SolverBackend classes (each solver's tests build it through here)
    return cast(SolverBackend, cls(**options))


def resolve_backend(backend: str, probe: str, protocol_name: str = DEFAULT_PROTOCOL) -> str:
    """Check (probe, protocol, backend) exists and can be built here (clear errors before any
    work); return the backend that will serve it (the name recorded in the results)."""
    if probe not in PROBES:  # a stand-in (ridge) is chosen by the task's kind, not asked for
        raise unknown_name("probe", probe, PROBES)
    name = _pick(probe, protocol_name, backend)
    if SOLVERS[(probe, protocol_name, name)].check:
        get_backend(name, probe=probe, protocol=protocol_name)  # names what is missing
    return name


def serving(kind: str, probe: str, protocol_name: str = DEFAULT_PROTOCOL,
            backend: str = "auto") -> tuple[str, str, str] | None:
    """The registry key (probe, protocol, backend) that serves the run's ``probe`` (with
    ``protocol_name``, ``backend``) on a task of ``kind`` ("classification", "regression"),
    or None where that probe is not defined for the kind (``TASK_PROBES``)."""
    rule = TASK_PROBES.get(kind, {})
    if probe in rule:
        stand_in = rule[probe]
        if stand_in is None:
            return None
        probe, protocol_name = stand_in
        backend = "auto"
    return probe, protocol_name, _pick(probe, protocol_name, backend)


def runs_on_gpu(probe: str, protocol_name: str, backend: str) -> bool:
    """Whether the solver of (probe, protocol, backend) computes on a GPU here."""
    from geneb.cluster import gpu_count

    device = SOLVERS[(probe, protocol_name, _pick(probe, protocol_name, backend))].device
    return device == "cuda" or (device == "auto" and gpu_count() > 0)


def make_solver(probe: str, protocol_name: str, backend: str, *, blas_threads: int | None = 1,
                fit_threads: int | None = None) -> SolverBackend:
    """The solver a worker runs for (probe, protocol, backend), with the threads the engine
    gives: ``fit_threads`` (in-process runs: every core given) where the solver parallelises
    a fit itself, else ``blas_threads``."""
    name = _pick(probe, protocol_name, backend)
    run: dict[str, int | None] = {"blas_threads": blas_threads, "fit_threads": fit_threads,
                                  "threads": fit_threads or blas_threads}
    options = {k: run[k] for k in SOLVERS[(probe, protocol_name, name)].run_options
               if k != "fit_threads" or fit_threads is not None}
    return get_backend(name, probe=probe, protocol=protocol_name, **options)


__all__ = [
    "ALIASES",
    "BACKEND_NAMES",
    "DEFAULT_TOL",
    "PROBES",
    "REFUSALS",
    "SOLVERS",
    "TASK_PROBES",
    "USABLE",
    "FitResult",
    "ProbeFit",
    "ProbeProblem",
    "Solver",
    "SolverBackend",
    "backends_for",
    "get_backend",
    "make_solver",
    "resolve_backend",
    "runs_on_gpu",
    "serving",
]
