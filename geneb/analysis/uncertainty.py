"""Uncertainty beyond GENEB: bootstrap intervals for macro-MCC and ranks, paired tests.

Two sources of variation are resampled separately. Over tasks: which tasks happen to be in
the benchmark (tasks drawn with replacement, the same draw for every model, so comparisons
stay paired). Over seeds: which k-shot rows were drawn (seeds drawn with replacement, the same
draw for every model and task, since a seed fixes the rows for all models). Full-data fits do
not depend on the seed, so their seed intervals have zero width by construction.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from geneb.analysis.table import CONTEXT

N_BOOT = 2000
BOOT_SEED = 0
LEVEL = 0.95


def _ranks(scores: np.ndarray) -> np.ndarray:
    """Rank along axis 0, 1 = highest score, ties share the best rank."""
    return stats.rankdata(-scores, axis=0, method="min")


def _ci(samples: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    a = (1 - level) / 2
    lo, hi = np.percentile(samples, [100 * a, 100 * (1 - a)], axis=-1)
    return lo, hi


def _interval_rows(key: tuple, models: list[str], counts: tuple[int, ...], obs: np.ndarray,
                   boot: np.ndarray, level: float) -> list[tuple]:
    """One row per model: context key, model, counts, observed macro-MCC with its percentile
    CI, rank with its percentile CI (from the ranks within each bootstrap sample)."""
    lo, hi = _ci(boot, level)
    rlo, rhi = _ci(_ranks(boot).astype(float), level)
    rank = _ranks(obs)
    return [(*key, model, *counts, float(obs[i]), float(lo[i]), float(hi[i]), int(rank[i]),
             float(rlo[i]), float(rhi[i])) for i, model in enumerate(models)]


def _model_task_matrix(g: pd.DataFrame) -> tuple[list[str], list[str], np.ndarray]:
    wide = g.pivot(index="model", columns="task", values="mcc_mean").dropna(axis=1)
    return list(wide.index), list(wide.columns), wide.to_numpy(dtype=float)


def bootstrap_over_tasks(
    perf: pd.DataFrame, *, n_boot: int = N_BOOT, seed: int = BOOT_SEED, level: float = LEVEL
) -> pd.DataFrame:
    """Percentile CIs for each model's macro-MCC and rank, resampling tasks (paired).

    Per context, over the tasks every model has: ``rng = default_rng(seed)``, one draw of
    ``rng.integers(0, n_tasks, (n_boot, n_tasks))`` shared by all models (the draw
    ``scipy.stats.bootstrap`` makes, so its percentile interval for one model is identical).
    """
    rows = []
    for key, g in perf.groupby(list(CONTEXT), dropna=False, sort=True):
        models, tasks, m = _model_task_matrix(g)
        if not tasks:
            continue
        rng = np.random.default_rng(seed)
        idx = rng.integers(0, len(tasks), (n_boot, len(tasks)))
        boot = m[:, idx].mean(axis=2)  # (models, n_boot)
        rows += _interval_rows(key, models, (len(tasks),), m.mean(axis=1), boot, level)
    return pd.DataFrame(
        rows,
        columns=[
            *CONTEXT,
            "model",
            "n_tasks",
            "macro_mcc",
            "ci_low",
            "ci_high",
            "rank",
            "rank_ci_low",
            "rank_ci_high",
        ],
    )


def bootstrap_over_seeds(
    results: pd.DataFrame, *, n_boot: int = N_BOOT, seed: int = BOOT_SEED, level: float = LEVEL
) -> pd.DataFrame:
    """Percentile CIs for macro-MCC and rank, resampling seeds (shared by all models and tasks).

    Per context, over the tasks every model has and the seeds every (model, task) cell has;
    ``rng.integers(0, n_seeds, (n_boot, n_seeds))`` picks the seeds of each resample.
    """
    rows = []
    for key, g in results.groupby(list(CONTEXT), dropna=False, sort=True):
        wide = g.pivot_table(
            index=["model", "task"], columns="seed", values="mcc", aggfunc="mean"
        ).dropna(axis=1)
        if wide.shape[1] == 0:
            continue
        models = sorted(g["model"].unique())
        per_task = wide.reset_index().groupby("task")["model"].nunique()
        tasks = sorted(per_task[per_task == len(models)].index)
        if not tasks:
            continue
        x = np.stack([wide.loc[[(mo, t) for t in tasks]].to_numpy(dtype=float) for mo in models])
        n_seeds = x.shape[2]
        rng = np.random.default_rng(seed)
        idx = rng.integers(0, n_seeds, (n_boot, n_seeds))
        boot = x[:, :, idx].mean(axis=3).mean(axis=1)  # (models, n_boot)
        rows += _interval_rows(key, models, (len(tasks), n_seeds), x.mean(axis=2).mean(axis=1),
                               boot, level)
    return pd.DataFrame(
        rows,
        columns=[
            *CONTEXT,
            "model",
            "n_tasks",
            "n_seeds",
            "macro_mcc",
            "ci_low",
            "ci_high",
            "rank",
            "rank_ci_low",
            "rank_ci_high",
        ],
    )


def holm(p: np.ndarray) -> np.ndarray:
    """Holm step-down adjusted p-values (family-wise error control)."""
    p = np.asarray(p, dtype=float)
    n = len(p)
    order = np.argsort(p, kind="stable")
    adj = np.empty(n)
    running = 0.0
    for i, j in enumerate(order):
        running = max(running, min(1.0, (n - i) * p[j]))
        adj[j] = running
    return adj


def adjacent_model_tests(perf: pd.DataFrame, *, alpha: float = 0.05) -> pd.DataFrame:
    """Wilcoxon signed-rank tests between models adjacent in the macro-MCC ranking.

    Per context, over the tasks every model has; p-values Holm-corrected over the adjacent
    pairs of the context. ``separable`` is ``p_holm < alpha``. Identical scores on every task
    give p = 1 (nothing to separate).
    """
    rows = []
    for key, g in perf.groupby(list(CONTEXT), dropna=False, sort=True):
        models, tasks, m = _model_task_matrix(g)
        if len(models) < 2 or not tasks:
            continue
        obs = m.mean(axis=1)
        order = sorted(range(len(models)), key=lambda i: (-obs[i], models[i]))
        recs = []
        for r in range(len(order) - 1):
            a, b = order[r], order[r + 1]
            d = m[a] - m[b]
            if np.all(d == 0):
                stat, p = np.nan, 1.0
            else:
                res = stats.wilcoxon(m[a], m[b])
                stat, p = float(res.statistic), float(res.pvalue)
            recs.append([r + 1, models[a], models[b], float(obs[a]), float(obs[b]), stat, p])
        adj = holm(np.array([rec[-1] for rec in recs]))
        for rec, pa in zip(recs, adj, strict=True):
            rows.append((*key, *rec, len(tasks), float(pa), bool(pa < alpha)))
    return pd.DataFrame(
        rows,
        columns=[
            *CONTEXT,
            "rank",
            "model",
            "next_model",
            "macro_mcc",
            "next_macro_mcc",
            "wilcoxon_statistic",
            "p_value",
            "n_tasks",
            "p_holm",
            "separable",
        ],
    )
