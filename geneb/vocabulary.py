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
    """A default as a CLI user types it.

    Parameters
    ----------
    values : tuple
        The default (``(0.01, 1.0, 10.0)``).

    Returns
    -------
    str
        ``"0.01,1,10"``: floats in ``%g``, comma-separated.
    """
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

#: The model options' "not set" values (``geneb.models.options.OPTION_DEFAULTS`` maps each
#: option to its own). ``extract``, the adapters, ``geneb extract``, plans and an entry's
#: provenance record (``geneb.store.Provenance``, below the models layer) all take them from
#: here, the one module every layer may import.
DEFAULT_DEVICE = "auto"
DEFAULT_POOLING = "mean"
DEFAULT_LAYER = -1  # the last hidden layer
DEFAULT_TRUNCATION = "truncate"
DEFAULT_STRANDS = "forward"
DEFAULT_STORAGE_DTYPE = "float32"
#: What ``dtype`` not set (``auto``) computes in on the CPU; the dtype an entry's provenance
#: records when the adapter does not say.
CPU_COMPUTE_DTYPE = "float32"

#: Variant-effect windows: bases around each variant (even), for ``load_task``, ``geneb vep``,
#: the vep runners and a plan's ``[vep]`` table.
DEFAULT_VEP_WINDOW = 1024

#: Bootstrap resamples by default: ``N_BOOT_REPORT`` for the report's aggregates
#: (``geneb.analysis``; ``geneb report --n-boot``), ``N_BOOT_METRIC`` for the intervals computed
#: per cell (ridge rows in the results table) and per VEP table row, which are many, so fewer
#: resamples each. The rule an ``n_boot`` must meet is ``geneb.constraints.N_BOOT_RULE``.
N_BOOT_REPORT = 2000
N_BOOT_METRIC = 1000

#: Parameter counts cutting the capacity tiers of the report: GENEB's "< 200M, 200M-1B, > 1B"
#: (``geneb.analysis.capacity``; ``build_report(tier_edges=...)``, ``geneb report --tier-edges``).
CAPACITY_TIER_EDGES: tuple[float, ...] = (200e6, 1e9)

#: Task kinds. A sequence task's ``task.json`` ``kind`` (``geneb.tasks.spec.TaskSpec.kind``);
#: a task catalogue entry's ``kind`` (``geneb.tasks.catalogue``: a sequence task or a variant
#: set); and the task API's kinds (``Task.kind``, the evaluators registered by
#: ``geneb.evaluation``; GFMBench's list names the kind of each of its tasks).
CLASSIFICATION = "classification"
REGRESSION = "regression"
VARIANTS = "variants"
ZERO_SHOT_VARIANT = "zero_shot_variant"
SUPERVISED_VARIANT = "supervised_variant"
SEQUENCE_TASK_KINDS: tuple[str, ...] = (CLASSIFICATION, REGRESSION)
CATALOGUE_KINDS: tuple[str, ...] = (CLASSIFICATION, VARIANTS)
GFMBENCH_KINDS: tuple[str, ...] = (CLASSIFICATION, ZERO_SHOT_VARIANT, SUPERVISED_VARIANT)


def format_param_count(n: float) -> str:
    """A parameter count as a reader writes it.

    Parameters
    ----------
    n : float
        The count (``200e6``).

    Returns
    -------
    str
        ``"200M"``, ``"1.2B"``, ``"350K"``; below a thousand the number itself (``"512"``).
    """
    for unit, div in (("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= div:
            return f"{n / div:g}{unit}"
    return f"{n:g}"
