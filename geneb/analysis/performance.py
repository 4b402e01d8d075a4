"""Performance matrix: mean and sd of MCC over seeds for every (context, model, task) cell."""

from __future__ import annotations

import pandas as pd

from geneb.analysis.table import CONTEXT


def performance_matrix(results: pd.DataFrame) -> pd.DataFrame:
    """Mean and sample sd (ddof=1; NaN for one seed) of MCC over seeds, one row per cell.

    Columns: the :data:`CONTEXT` columns, model, task, category, n_seeds, mcc_mean, mcc_sd,
    n_test and n_params (first non-null value of the cell; the same for every seed). A row
    that is already a mean over seeds (a published one: ``seed`` null, ``n_seeds`` stated,
    ``geneb.results.published``) counts as the seeds it states.
    """
    keys = [*CONTEXT, "model", "task", "category"]
    g = results.groupby(keys, dropna=False, sort=True)
    stated = "n_seeds" in results.columns  # rows that are already seed means say how many
    out = g.agg(
        n_seeds=("seed", "nunique"),
        **({"_stated": ("n_seeds", "max")} if stated else {}),
        mcc_mean=("mcc", "mean"),
        mcc_sd=("mcc", "std"),
        n_test=("n_test", "first"),
        n_params=("n_params", "first"),
    ).reset_index()
    if stated:  # a published value (seed null) is the mean over the seeds it states
        out["n_seeds"] = out["n_seeds"].where(out["_stated"].isna(), out["_stated"]).astype(int)
        out = out.drop(columns="_stated")
    return out
