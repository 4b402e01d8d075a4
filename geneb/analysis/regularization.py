"""Regularisation sensitivity: does the model ranking depend on the probe's C?

Uses the linear probe's overall macro-MCC at every C of the sweep, per regime, on the same
tasks at every C: a task that lacks a (model, C) cell (a crashed or unfinished C) is left out
of the sweep's comparison for that regime and named (``c_sweep_gaps``), because a macro over
fewer tasks is not comparable (C = 1000 can look best on the 2 of 3 tasks it finished).
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
from scipy import stats

from geneb.analysis.aggregates import OVERALL, aggregate_scores

#: The groups within which C values are compared.
SWEEP = ["standardize", "regime"]


def _linear_sweep(perf: pd.DataFrame) -> pd.DataFrame:
    return perf[(perf["probe"] == "linear") & perf["C"].notna()]


def c_sweep_gaps(perf: pd.DataFrame) -> pd.DataFrame:
    """Tasks left out of the C comparison: per (standardize, regime, task), the (model, C)
    cells it lacks among those of its sweep. Empty when every task has every cell.

    ``perf``: :func:`geneb.analysis.performance.performance_matrix` output.
    """
    rows = []
    for (std, regime), g in _linear_sweep(perf).groupby(SWEEP, sort=True):
        want = set(itertools.product(sorted(g["model"].unique()), sorted(g["C"].unique())))
        for task, t in g.groupby("task", sort=True):
            missing = sorted(want - set(zip(t["model"], t["C"], strict=True)))
            if missing:
                rows.append((std, regime, task, len(missing),
                             ", ".join(f"{m} at C={c:g}" for m, c in missing)))
    return pd.DataFrame(rows, columns=[*SWEEP, "task", "n_missing", "missing"])


def macro_by_c(perf: pd.DataFrame, scope: str = OVERALL) -> pd.DataFrame:
    """Linear-probe macro-MCC per (standardize, regime, model, C) for one scope, over the
    tasks that have every (model, C) cell of their sweep (``c_sweep_gaps`` names the others);
    ``n_tasks``: how many tasks that is (the same at every C of a sweep)."""
    lin = _linear_sweep(perf)
    gaps = c_sweep_gaps(perf)
    if len(gaps):
        drop = pd.MultiIndex.from_frame(gaps[[*SWEEP, "task"]])
        lin = lin[~pd.MultiIndex.from_frame(lin[[*SWEEP, "task"]]).isin(drop)]
    agg = aggregate_scores(lin) if len(lin) else pd.DataFrame(
        columns=[*SWEEP, "scope", "model", "C", "n_tasks", "macro_mcc"])
    g = agg[agg["scope"] == scope]
    cols = ["standardize", "regime", "model", "C", "n_tasks", "macro_mcc"]
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
