"""A synthetic results table with known structure, for the tests of the analyses and report.

Scores follow ``mcc = base[model] + offset[task] + shots penalty + C effect + noise`` so that the
leaders, the difficulty classes and the size effects are known in advance, and the table has
exactly the columns and types of :data:`geneb.results.schema.RESULTS_SCHEMA`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from geneb.results.schema import RESULT_COLUMNS, RESULTS_SCHEMA, RESULTS_SCHEMA_VERSION

#: model -> (parameter count or None for a k-mer baseline, base MCC)
EXAMPLE_MODELS: dict[str, tuple[int | None, float]] = {
    "kmer-4": (None, 0.40),
    "tiny-1m": (1_000_000, 0.55),
    "small-4m": (4_000_000, 0.50),
    "mid-20m": (20_000_000, 0.60),
    "big-100m": (100_000_000, 0.52),
}

#: task -> (category, difficulty offset, n_test)
EXAMPLE_TASKS: dict[str, tuple[str, float, int]] = {
    "prom_a": ("promoters", 0.30, 200),
    "prom_b": ("promoters", 0.20, 800),
    "enh_a": ("enhancers", -0.25, 300),
    "enh_b": ("enhancers", -0.05, 150),
    "meth_a": ("dna_methylation", 0.00, 500),
    "meth_b": ("dna_methylation", 0.10, 100),
}


def example_results(
    *,
    models: Mapping[str, tuple[int | None, float]] | None = None,
    tasks: Mapping[str, tuple[str, float, int]] | None = None,
    regimes: Sequence[str] = ("1", "10", "full"),
    seeds: Sequence[int] = (13, 17, 42),
    Cs: Sequence[float] = (0.1, 1.0, 10.0),
    mlp: bool = True,
    noise: float = 0.03,
    rng_seed: int = 0,
) -> pd.DataFrame:
    """A results table (one row per fit) with deterministic pseudo-random scores.

    Full-regime rows are identical across seeds, as the engine produces them. Each model's
    skill differs per category (``model index x category index`` interaction) so that category
    leaders differ.
    """
    models = dict(EXAMPLE_MODELS if models is None else models)
    tasks = dict(EXAMPLE_TASKS if tasks is None else tasks)
    rng = np.random.default_rng(rng_seed)
    cats = sorted({c for c, _, _ in tasks.values()})
    rows = []
    penalty = {"full": 0.0}
    for mi, (model, (n_params, base)) in enumerate(models.items()):
        for task, (cat, off, n_test) in tasks.items():
            inter = 0.08 * np.sin(1.7 * mi + 2.3 * cats.index(cat))
            for regime in regimes:
                k = None if regime == "full" else int(regime)
                pen = penalty.get(regime, 0.35 / (1 + np.log10(k or 1)) + 0.02 * mi)
                full_noise = {c: noise * rng.standard_normal() for c in Cs}
                full_noise_mlp = noise * rng.standard_normal()
                for seed in seeds:
                    for probe, c_list in (("linear", list(Cs)), ("mlp", [None])):
                        if probe == "mlp" and not mlp:
                            continue
                        for c in c_list:
                            c_eff = 0.0 if c is None else -0.03 * abs(np.log10(c)) * (1 + mi % 2)
                            if regime == "full":
                                eps = full_noise_mlp if c is None else full_noise[c]
                            else:
                                eps = noise * rng.standard_normal()
                            m = base + off + inter - pen + c_eff + eps
                            m += 0.02 if probe == "mlp" else 0.0
                            m = float(np.clip(m, -0.99, 0.99))
                            rows.append(_row(model, task, cat, regime, k, seed, c, probe,
                                             m, n_test, n_params))
    df = pd.DataFrame(rows, columns=list(RESULT_COLUMNS))
    # round-trip through the arrow schema so dtypes are those of a real table
    import pyarrow as pa

    return pa.Table.from_pandas(df, schema=RESULTS_SCHEMA, preserve_index=False).to_pandas()


def _row(model: str, task: str, cat: str, regime: str, k: int | None, seed: int,
         c: float | None, probe: str, m: float, n_test: int, n_params: int | None
         ) -> dict[str, Any]:
    """One results row with score ``m`` (MCC); the other metrics follow from it."""
    return {
        "schema_version": RESULTS_SCHEMA_VERSION,
        "model": model,
        "task": task,
        "category": cat,
        "regime": regime,
        "k": k,
        "seed": seed,
        "C": c,
        "probe": probe,
        "backend": "sklearn",
        "standardize": False,
        "take_all": False,
        "mcc": m,
        "accuracy": 0.5 + m / 2,
        "macro_f1": 0.5 + m / 2,
        "auroc": 0.5 + m / 2,
        "n_classes": 2,
        "n_train": 2 * (k or 500),
        "n_test": n_test,
        "n_iter": 12,
        "converged": True,
        "fit_seconds": 0.01,
        "train_rows": [] if k is None else list(range(2 * k)),
        "n_params": n_params,
        "store_fingerprint": f"fp-{model}-{task}",
        "task_fingerprint": f"tf-{task}",
        "geneb_version": "0.1.0",
        "sklearn_version": "1.9.1",
        "created": "2026-11-29T00:00:00+00:00",
    }
