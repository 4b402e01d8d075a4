"""Macro- and micro-averaged MCC per model, overall and per category, as in the GENEB paper.

- per-task MCC: the mean over seeds of one (context, model, task) cell;
- category score: the mean over the category's tasks of the per-task MCC;
- overall **macro-MCC**: the mean over categories of the category scores, so every category
  weighs the same however many tasks it has (GENEB's headline number);
- overall **micro-MCC**: the mean over all tasks of the per-task MCC (unweighted), so large
  categories (in GENEB, histone modification and promoters: over half of the tasks) dominate.

Within one category the two coincide (both are the mean over its tasks). Disagreement between
the overall macro and micro rankings shows how much the headline depends on the weighting.
geneb once weighted micro-MCC by test-set size; that has no use in the paper's protocol and is
gone. The definitions live once in :func:`geneb.protocol.macro_micro` (used here per model,
by the bootstrap of :mod:`geneb.analysis.uncertainty` and by every other analysis).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from geneb.analysis.table import CONTEXT
from geneb.protocol import category_means, macro_micro
from geneb.results.geneb_tasks import geneb_task_order

OVERALL = "overall"

COLUMNS: tuple[str, ...] = (
    *CONTEXT,
    "scope",
    "model",
    "n_tasks",
    "n_categories",
    "macro_mcc",
    "micro_mcc",
    "n_params",
)


def aggregate_scores(perf: pd.DataFrame) -> pd.DataFrame:
    """Macro and micro MCC per (context, scope, model); scope is ``overall`` or a category.

    ``perf`` is :func:`geneb.analysis.performance.performance_matrix` output (one row per
    context, model and task, ``mcc_mean`` = mean over seeds). Columns: :data:`COLUMNS`.
    For a category scope, ``macro_mcc == micro_mcc`` = the mean over its tasks. Every mean is
    summed in GENEB's task order (``geneb.results.geneb_tasks.geneb_task_order``), as GENEB
    sums: on GENEB's published rows these are its published micro, macro and category values
    exactly.
    """
    keys = [*CONTEXT, "model"]
    rows = []
    for key, g in perf.groupby(keys, dropna=False, sort=True):
        g = g.iloc[geneb_task_order(g["task"].astype(str).tolist())]
        mcc = g["mcc_mean"].to_numpy(dtype=float)
        cats = g["category"].to_numpy()
        params = g["n_params"].dropna()
        n_params = params.iloc[0] if len(params) else np.nan
        macro, micro = macro_micro(mcc, cats)
        names, means = category_means(mcc, cats)
        rows.append((*key, OVERALL, g["task"].nunique(), len(names), macro, micro, n_params))
        for c, m in zip(names, means.tolist(), strict=True):
            n = g.loc[g["category"] == c, "task"].nunique()
            rows.append((*key, c, n, 1, m, m, n_params))
    out = pd.DataFrame(rows, columns=[*keys, "scope", "n_tasks", "n_categories", "macro_mcc",
                                      "micro_mcc", "n_params"])[list(COLUMNS)]
    out["n_tasks"] = out["n_tasks"].astype(int)
    out["n_categories"] = out["n_categories"].astype(int)
    return out.sort_values([*CONTEXT, "scope", "model"], kind="stable").reset_index(drop=True)


def macro_micro_agreement(agg: pd.DataFrame) -> pd.DataFrame:
    """Spearman and Kendall correlation between overall macro- and micro-MCC over models.

    Only the ``overall`` scope: within a category the two are equal by definition.
    NaN where fewer than 3 models (a rank correlation of two points says nothing).
    """
    rows = []
    ov = agg[agg["scope"] == OVERALL]
    for key, g in ov.groupby([*CONTEXT, "scope"], dropna=False, sort=True):
        n = len(g)
        if (
            n >= 3
            and g["micro_mcc"].notna().all()
            and g["macro_mcc"].nunique() > 1
            and g["micro_mcc"].nunique() > 1
        ):
            rho, p = stats.spearmanr(g["macro_mcc"], g["micro_mcc"])
            tau, pt = stats.kendalltau(g["macro_mcc"], g["micro_mcc"])
        else:
            rho = p = tau = pt = np.nan
        rows.append((*key, n, float(rho), float(p), float(tau), float(pt)))
    return pd.DataFrame(
        rows,
        columns=[
            *CONTEXT,
            "scope",
            "n_models",
            "spearman_rho",
            "spearman_p",
            "kendall_tau",
            "kendall_p",
        ],
    )


def macro_micro_ranks(agg: pd.DataFrame) -> pd.DataFrame:
    """Per context and model (overall scope): macro- and micro-MCC, the rank under each
    (1 = best, ties share the best rank) and ``rank_shift`` = micro rank - macro rank."""
    ov = agg[agg["scope"] == OVERALL].copy()
    keys = [*CONTEXT, "scope"]
    g = ov.groupby(keys, dropna=False)
    ov["macro_rank"] = g["macro_mcc"].rank(ascending=False, method="min").astype(int)
    ov["micro_rank"] = g["micro_mcc"].rank(ascending=False, method="min").astype(int)
    ov["rank_shift"] = ov["micro_rank"] - ov["macro_rank"]
    cols = [*CONTEXT, "model", "macro_mcc", "micro_mcc", "macro_rank", "micro_rank", "rank_shift"]
    return ov.sort_values([*CONTEXT, "macro_rank", "model"])[cols].reset_index(drop=True)


def rank_shift_summary(ranks: pd.DataFrame, top: int = 5) -> pd.DataFrame:
    """Per context, from :func:`macro_micro_ranks`: models whose rank is the same under both,
    the largest rank shift (absolute), whether the leader is the same, and how many of the
    ``top`` models by macro-MCC are also in the micro top ``top``."""
    rows = []
    for key, g in ranks.groupby(list(CONTEXT), dropna=False, sort=True):
        top_macro = set(g.loc[g["macro_rank"] <= top, "model"])
        top_micro = set(g.loc[g["micro_rank"] <= top, "model"])
        same_leader = set(g.loc[g["macro_rank"] == 1, "model"]) == set(
            g.loc[g["micro_rank"] == 1, "model"])
        rows.append((*key, len(g), int((g["rank_shift"] == 0).sum()),
                     int(g["rank_shift"].abs().max()), bool(same_leader), top,
                     len(top_macro & top_micro)))
    return pd.DataFrame(rows, columns=[*CONTEXT, "n_models", "n_same_rank", "max_abs_rank_shift",
                                       "same_leader", "top", "n_top_in_both"])
