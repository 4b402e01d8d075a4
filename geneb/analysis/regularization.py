"""Regularisation sensitivity: does the model ranking depend on the probe's C?

Uses the linear probe's overall macro-MCC at every C of the sweep, per regime.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
from scipy import stats


def macro_by_c(agg: pd.DataFrame, scope: str = "overall") -> pd.DataFrame:
    """Linear-probe macro-MCC per (standardize, regime, model, C) for one scope."""
    g = agg[(agg["probe"] == "linear") & (agg["scope"] == scope) & agg["C"].notna()]
    cols = ["standardize", "regime", "model", "C", "macro_mcc"]
    return g[cols].sort_values(cols[:4]).reset_index(drop=True)


def c_rank_agreement(by_c: pd.DataFrame) -> pd.DataFrame:
    """Spearman of the model scores between every pair of C values, per regime.

    ``adjacent`` marks neighbouring values of the sweep (0.01-0.1, 0.1-1, ...).
    """
    rows = []
    for (std, regime), g in by_c.groupby(["standardize", "regime"], sort=True):
        wide = g.pivot(index="model", columns="C", values="macro_mcc")
        cs = sorted(wide.columns)
        for i, j in itertools.combinations(range(len(cs)), 2):
            pair = wide[[cs[i], cs[j]]].dropna()
            if len(pair) >= 3 and pair[cs[i]].nunique() > 1 and pair[cs[j]].nunique() > 1:
                rho = float(stats.spearmanr(pair[cs[i]], pair[cs[j]])[0])
            else:
                rho = np.nan
            rows.append((std, regime, cs[i], cs[j], j == i + 1, len(pair), rho))
    return pd.DataFrame(
        rows,
        columns=["standardize", "regime", "C_a", "C_b", "adjacent", "n_models", "spearman_rho"],
    )


def c_sensitivity_summary(agreement: pd.DataFrame) -> pd.DataFrame:
    """Per regime: mean and minimum pairwise Spearman across C, and the mean over adjacent pairs."""
    rows = []
    for (std, regime), g in agreement.groupby(["standardize", "regime"], sort=True):
        r = g["spearman_rho"]
        adj = g.loc[g["adjacent"], "spearman_rho"]
        rows.append((std, regime, len(g), float(r.mean()), float(r.min()), float(adj.mean())))
    return pd.DataFrame(
        rows,
        columns=["standardize", "regime", "n_pairs", "mean_rho", "min_rho", "mean_adjacent_rho"],
    )


def mcc_range_over_c(by_c: pd.DataFrame) -> pd.DataFrame:
    """Per (regime, model): min, max and range of macro-MCC over C, and the best C."""
    rows = []
    for (std, regime, model), g in by_c.groupby(["standardize", "regime", "model"], sort=True):
        best = g.loc[g["macro_mcc"].idxmax()]
        lo, hi = float(g["macro_mcc"].min()), float(g["macro_mcc"].max())
        rows.append((std, regime, model, len(g), lo, hi, hi - lo, float(best["C"])))
    return pd.DataFrame(
        rows,
        columns=[
            "standardize",
            "regime",
            "model",
            "n_C",
            "min_macro_mcc",
            "max_macro_mcc",
            "range",
            "best_C",
        ],
    )
