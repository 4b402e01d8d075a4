"""Macro- and micro-averaged MCC per model, overall and per category.

Macro-MCC is the unweighted mean over tasks (GENEB's headline number); micro-MCC weights each
task by its test-set size, so large tasks dominate. Disagreement between the two rankings shows
how much the headline depends on the weighting.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from geneb.analysis.table import CONTEXT

OVERALL = "overall"


def aggregate_scores(perf: pd.DataFrame) -> pd.DataFrame:
    """Macro and micro MCC per (context, scope, model); scope is ``overall`` or a category.

    ``perf`` is :func:`geneb.analysis.performance.performance_matrix` output. Columns: CONTEXT,
    scope, model, n_tasks, macro_mcc, micro_mcc, n_test_total, n_params.
    """
    frames = []
    for scope_col in (None, "category"):
        keys = [*CONTEXT, "model"] + ([scope_col] if scope_col else [])
        rows = []
        for key, g in perf.groupby(keys, dropna=False, sort=True):
            w = g["n_test"].to_numpy(dtype=float)
            m = g["mcc_mean"].to_numpy(dtype=float)
            micro = (
                float(np.sum(w * m) / np.sum(w))
                if np.all(np.isfinite(w)) and w.sum() > 0
                else np.nan
            )
            rows.append(
                (
                    *key[: len(CONTEXT) + 1],
                    key[-1] if scope_col else OVERALL,
                    len(g),
                    float(m.mean()),
                    micro,
                    float(np.nansum(w)),
                    g["n_params"].iloc[0],
                )
            )
        frames.append(
            pd.DataFrame(
                rows,
                columns=[
                    *CONTEXT,
                    "model",
                    "scope",
                    "n_tasks",
                    "macro_mcc",
                    "micro_mcc",
                    "n_test_total",
                    "n_params",
                ],
            )
        )
    out = pd.concat(frames, ignore_index=True)
    cols = [
        *CONTEXT,
        "scope",
        "model",
        "n_tasks",
        "macro_mcc",
        "micro_mcc",
        "n_test_total",
        "n_params",
    ]
    return out[cols].sort_values([*CONTEXT, "scope", "model"], kind="stable").reset_index(drop=True)


def macro_micro_agreement(agg: pd.DataFrame) -> pd.DataFrame:
    """Spearman and Kendall correlation between macro- and micro-MCC over models, per scope.

    NaN where fewer than 3 models (a rank correlation of two points says nothing).
    """
    rows = []
    for key, g in agg.groupby([*CONTEXT, "scope"], dropna=False, sort=True):
        n = len(g)
        if n >= 3 and g["micro_mcc"].notna().all():
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
