"""Uncertainty beyond GENEB: bootstrap intervals for macro-MCC and ranks, paired tests.

Every interval is for the paper's macro-MCC (mean over categories of the mean over each
category's tasks, :mod:`geneb.analysis.aggregates`), and each resample is aggregated the same way.
Two sources of variation are resampled separately. Over tasks: which tasks happen to be in
the benchmark; tasks are drawn with replacement *within each category* (stratified: every
category keeps its number of tasks and its weight of one, as the definition has it), the same
draw for every model, so comparisons stay paired. Over seeds: which k-shot rows were drawn
(seeds drawn with replacement, the same draw for every model and task, since a seed fixes
the rows for all models). Full-data fits do not depend on the seed, so their seed intervals
have zero width by construction.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from geneb.analysis.table import CONTEXT
from geneb.protocol import BOOT_SEED, CI_LEVEL, N_BOOT_REPORT, macro_mcc


def _ranks(scores: np.ndarray) -> np.ndarray:
    """Rank along axis 0, 1 = highest score, ties share the best rank."""
    ranks: np.ndarray = stats.rankdata(-scores, axis=0, method="min")
    return ranks


def _ci(samples: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    a = (1 - level) / 2
    lo, hi = np.percentile(samples, [100 * a, 100 * (1 - a)], axis=-1)
    return lo, hi


def _interval_rows(key: tuple[Any, ...], models: list[str], counts: tuple[int, ...],
                   obs: np.ndarray, boot: np.ndarray, level: float) -> list[tuple[Any, ...]]:
    """One row per model: context key, model, counts, observed macro-MCC with its percentile
    CI, rank with its percentile CI (from the ranks within each bootstrap sample)."""
    lo, hi = _ci(boot, level)
    rlo, rhi = _ci(_ranks(boot).astype(float), level)
    rank = _ranks(obs)
    return [(*key, model, *counts, float(obs[i]), float(lo[i]), float(hi[i]), int(rank[i]),
             float(rlo[i]), float(rhi[i])) for i, model in enumerate(models)]


def _model_task_matrix(
    g: pd.DataFrame,
) -> tuple[list[str], list[str], np.ndarray, np.ndarray]:
    """(models, tasks every model has, model x task MCC matrix, category of each task)."""
    wide = g.pivot(index="model", columns="task", values="mcc_mean").dropna(axis=1)
    cat_of = g.drop_duplicates("task").set_index("task")["category"]
    cats = cat_of.reindex(wide.columns).astype(str).to_numpy()
    return list(wide.index), list(wide.columns), wide.to_numpy(dtype=float), cats


def _stratified_task_boot(
    m: np.ndarray, cats: np.ndarray, n_boot: int, seed: int
) -> np.ndarray:
    """(models, n_boot) macro-MCC of resamples drawing tasks with replacement within categories.

    ``rng = default_rng(seed)``; for each category in sorted order, one draw of
    ``rng.integers(0, n_c, (n_boot, n_c))`` shared by every model. With one category this is
    exactly the draw ``scipy.stats.bootstrap`` makes.
    """
    rng = np.random.default_rng(seed)
    drawn, drawn_cats = [], []
    for c in np.unique(cats):
        cols = np.flatnonzero(cats == c)
        idx = rng.integers(0, len(cols), (n_boot, len(cols)))
        drawn.append(m[:, cols][:, idx])  # (models, n_boot, n_c): the resampled tasks
        drawn_cats.append(np.full(len(cols), c))
    return macro_mcc(np.concatenate(drawn, axis=2), np.concatenate(drawn_cats))


def bootstrap_over_tasks(
    perf: pd.DataFrame, *, n_boot: int = N_BOOT_REPORT, seed: int = BOOT_SEED,
    level: float = CI_LEVEL,
) -> pd.DataFrame:
    """Percentile CIs for each model's macro-MCC and rank, resampling tasks within categories.

    Per context, over the tasks every model has; see :func:`_stratified_task_boot` for the
    draw (shared by all models, so ranks within a resample are paired).
    """
    rows = []
    for key, g in perf.groupby(list(CONTEXT), dropna=False, sort=True):
        models, tasks, m, cats = _model_task_matrix(g)
        if not tasks:
            continue
        boot = _stratified_task_boot(m, cats, n_boot, seed)
        rows += _interval_rows(key, models, (len(tasks),), macro_mcc(m, cats), boot, level)
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
    results: pd.DataFrame, *, n_boot: int = N_BOOT_REPORT, seed: int = BOOT_SEED,
    level: float = CI_LEVEL,
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
        cat_of = g.drop_duplicates("task").set_index("task")["category"]
        cats = cat_of.reindex(tasks).astype(str).to_numpy()
        n_seeds = x.shape[2]
        rng = np.random.default_rng(seed)
        idx = rng.integers(0, n_seeds, (n_boot, n_seeds))
        per_task = x[:, :, idx].mean(axis=3)  # (models, tasks, n_boot)
        boot = macro_mcc(np.moveaxis(per_task, 1, -1), cats)  # (models, n_boot)
        rows += _interval_rows(key, models, (len(tasks), n_seeds), macro_mcc(x.mean(axis=2), cats),
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

    Models are ordered by the paper's macro-MCC; the test pairs the per-task MCCs of the two
    models (tasks are the units, as in the task bootstrap). Per context, over the tasks every
    model has; p-values Holm-corrected over the adjacent
    pairs of the context. ``separable`` is ``p_holm < alpha``. Identical scores on every task
    give p = 1 (nothing to separate).
    """
    rows = []
    for key, g in perf.groupby(list(CONTEXT), dropna=False, sort=True):
        models, tasks, m, cats = _model_task_matrix(g)
        if len(models) < 2 or not tasks:
            continue
        obs = macro_mcc(m, cats)
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
