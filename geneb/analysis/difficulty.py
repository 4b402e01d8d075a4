"""Task difficulty: which tasks every model solves, none solves, or models disagree on."""

from __future__ import annotations

import numpy as np
import pandas as pd

from geneb.analysis.table import CONTEXT
from geneb.errors import GenebError


def task_difficulty(
    perf: pd.DataFrame,
    *,
    easy: float = 0.70,
    hard: float = 0.35,
    high_variance: float = 0.12,
) -> pd.DataFrame:
    """Per (context, task): mean and sd (ddof=1) of MCC over models, and its class.

    ``difficulty`` is ``easy`` (mean > ``easy``), ``hard`` (mean < ``hard``) or ``medium``;
    ``high_variance`` is sd over models > ``high_variance`` (False with a single model).
    """
    if not hard < easy:
        raise GenebError(f"hard threshold {hard} must be below the easy threshold {easy}")
    out = (
        perf.groupby([*CONTEXT, "task", "category"], dropna=False, sort=True)
        .agg(
            n_models=("model", "nunique"), mean_mcc=("mcc_mean", "mean"), sd_mcc=("mcc_mean", "std")
        )
        .reset_index()
    )
    out["difficulty"] = np.select(
        [out["mean_mcc"] > easy, out["mean_mcc"] < hard], ["easy", "hard"], "medium"
    )
    out["high_variance"] = out["sd_mcc"].fillna(0.0) > high_variance
    return out
