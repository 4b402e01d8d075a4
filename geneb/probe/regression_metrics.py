"""Metrics of continuous predictions: Spearman, Pearson, R^2, with bootstrap intervals.

Definitions (tested equal to scipy / scikit-learn): Spearman = Pearson correlation of average
ranks (``scipy.stats.spearmanr``); Pearson (``scipy.stats.pearsonr``); R^2 = 1 - SS_res /
SS_tot (``sklearn.metrics.r2_score``: negative when worse than predicting the mean). A constant
prediction or target has an undefined correlation: NaN (stored as null). These are never
averaged with MCC: they live in their own result columns and report tables.
"""

from __future__ import annotations

import numpy as np

from geneb.probe.metrics import _average_ranks
from geneb.protocol import BOOT_SEED, CI_LEVEL, N_BOOT_METRIC

REGRESSION_METRICS: tuple[str, ...] = ("spearman", "pearson", "r2")


def pearson(a: np.ndarray, b: np.ndarray) -> float:
    """Pearson correlation (NaN when either side is constant)."""
    a = np.asarray(a, dtype=np.float64) - np.mean(a)
    b = np.asarray(b, dtype=np.float64) - np.mean(b)
    den = np.sqrt(float(a @ a) * float(b @ b))
    return float(a @ b / den) if den > 0 else float("nan")


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman rank correlation (average ranks for ties)."""
    return pearson(_average_ranks(np.asarray(a, np.float64)),
                   _average_ranks(np.asarray(b, np.float64)))


def r2(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Coefficient of determination (NaN when the target is constant)."""
    y = np.asarray(y_true, dtype=np.float64)
    p = np.asarray(y_pred, dtype=np.float64)
    ss_tot = float(((y - y.mean()) ** 2).sum())
    return 1.0 - float(((y - p) ** 2).sum()) / ss_tot if ss_tot > 0 else float("nan")


def regression_metrics(y_true: np.ndarray, y_pred: np.ndarray) -> dict[str, float]:
    """Spearman, Pearson and R^2 of predictions against targets."""
    return {"spearman": spearman(y_pred, y_true), "pearson": pearson(y_pred, y_true),
            "r2": r2(y_true, y_pred)}


def bootstrap_intervals(
    y_true: np.ndarray, y_pred: np.ndarray, *, n_boot: int = N_BOOT_METRIC,
    seed: int = BOOT_SEED, level: float = CI_LEVEL,
) -> dict[str, tuple[float, float]]:
    """Percentile bootstrap interval of each metric over rows (``default_rng(seed)``)."""
    y = np.asarray(y_true, dtype=np.float64)
    p = np.asarray(y_pred, dtype=np.float64)
    draws: dict[str, list[float]] = {m: [] for m in REGRESSION_METRICS}
    rng = np.random.default_rng(seed)
    for _ in range(n_boot if len(y) else 0):
        idx = rng.integers(0, len(y), len(y))
        for k, v in regression_metrics(y[idx], p[idx]).items():
            draws[k].append(v)
    a = (1 - level) / 2
    out: dict[str, tuple[float, float]] = {}
    for k, values in draws.items():
        b = np.asarray(values, dtype=np.float64)
        b = b[np.isfinite(b)]
        out[k] = ((float(np.percentile(b, 100 * a)), float(np.percentile(b, 100 * (1 - a))))
                  if len(b) else (float("nan"), float("nan")))
    return out
