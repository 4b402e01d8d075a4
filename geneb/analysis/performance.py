"""Performance matrix: mean and sd of MCC over seeds for every (context, model, task) cell."""

from __future__ import annotations

import pandas as pd

from geneb.analysis.table import CONTEXT


def performance_matrix(results: pd.DataFrame) -> pd.DataFrame:
    """Mean and sample sd (ddof=1; NaN for one seed) of MCC over seeds, one row per cell.

    Columns: the :data:`CONTEXT` columns, model, task, category, n_seeds, mcc_mean, mcc_sd,
    n_test and n_params (first non-null value of the cell; the same for every seed).
    """
    keys = [*CONTEXT, "model", "task", "category"]
    g = results.groupby(keys, dropna=False, sort=True)
    out = g.agg(
        n_seeds=("seed", "nunique"),
        mcc_mean=("mcc", "mean"),
        mcc_sd=("mcc", "std"),
        n_test=("n_test", "first"),
        n_params=("n_params", "first"),
    ).reset_index()
    return out
