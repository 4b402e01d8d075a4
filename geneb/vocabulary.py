"""The names a user may give, defined once: probe kinds, solver backends, protocols, poolings,
truncation policies, strands, storage and compute dtypes, and the probe defaults.

Plain data with no imports (no numpy, no pandas), so every layer can import it: the
parameter declarations (:mod:`geneb.constraints`), the solver registry, the model adapters,
plans and the CLI. A test checks that the solver registry's keys use exactly these names.
"""

from __future__ import annotations

#: Probe kinds (``run_probes(probe=...)``, ``geneb probe --probe``).
PROBES: tuple[str, ...] = ("linear", "mlp")
#: Solver backends a user may ask for; ``auto`` picks the first usable one.
BACKENDS: tuple[str, ...] = ("auto", "fast", "sklearn", "torch", "cuml")
#: Probes a task kind gets in place of the one asked for, never named by a user: regression
#: tasks get ``ridge`` for ``linear`` (``geneb.probe.solvers.TASK_PROBES``), solved exactly
#: by its one backend ``svd`` (one SVD per set of train rows).
STAND_IN_PROBES: tuple[str, ...] = ("ridge",)
STAND_IN_BACKENDS: tuple[str, ...] = ("svd",)
#: ``converged``: every probe solved to its optimum (geneb's default). ``paper``: the GENEB
#: paper's literal ``LogisticRegression(C=C, max_iter=1000)`` with scikit-learn's defaults.
PROTOCOLS: tuple[str, ...] = ("converged", "paper")
DEFAULT_PROTOCOL = "converged"
#: The C values probed when none are given (``run_probes``, ``probe_arrays``, ``geneb probe``
#: and a plan without ``C``): C = 1; ``DEFAULT_C_SWEEP`` is the sweep to ask for.
DEFAULT_C: tuple[float, ...] = (1.0,)
#: GENEB's protocol: regime names as stored in the ``regime`` column (k shots per class, or
#: ``full``), the seeds of the k-shot draws, the C sweep, and the ridge penalty sweep of
#: regression tasks (the C sweep's decades). ``geneb.protocol`` uses them; here because the
#: CLI's help texts show them and must not import numpy.
REGIMES: tuple[str, ...] = ("1", "10", "full")
DEFAULT_SEEDS: tuple[int, ...] = (13, 17, 42, 123, 997)
DEFAULT_C_SWEEP: tuple[float, ...] = (0.01, 0.1, 1.0, 10.0, 100.0)
DEFAULT_ALPHA_SWEEP: tuple[float, ...] = (0.01, 0.1, 1.0, 10.0, 100.0)


def as_list_text(values: tuple[object, ...]) -> str:
    """A default as a CLI user types it: ``(0.01, 1.0, 10.0)`` -> ``"0.01,1,10"``."""
    return ",".join(f"{v:g}" if isinstance(v, float) else str(v) for v in values)

#: ``pooling`` values of the transformers adapter (what each means: ``geneb.models.pooling``).
POOLINGS: tuple[str, ...] = ("mean", "mean_nonspecial", "cls", "max", "last")
#: Sequences longer than the model's context: cut, or embedded as several windows.
TRUNCATIONS: tuple[str, ...] = ("truncate", "window")
#: ``forward``, or ``both``: the mean of the forward and reverse-complement embeddings.
STRANDS: tuple[str, ...] = ("forward", "both")
#: dtypes of the embeddings in the feature store.
STORAGE_DTYPES: tuple[str, ...] = ("float32", "float16")
#: Compute dtypes of a model (aliases included; ``auto``: float32 on CPU, bfloat16 on CUDA).
COMPUTE_DTYPES: tuple[str, ...] = (
    "auto", "float32", "fp32", "bfloat16", "bf16", "float16", "fp16", "half",
)  # fmt: skip
