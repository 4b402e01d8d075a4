"""Does size buy accuracy? Spearman between log(parameter count) and macro-MCC.

Models without a parameter count (k-mer baselines) are left out: they have no size to scale.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd
from scipy import stats

from geneb.analysis.table import CONTEXT


def _sized(agg: pd.DataFrame, exclude: Iterable[str]) -> pd.DataFrame:
    excl = set(exclude)
    keep = agg["n_params"].notna() & (agg["n_params"] > 0) & ~agg["model"].isin(excl)
    return agg[keep]


def scaling_correlation(
    agg: pd.DataFrame, *, exclude: Iterable[str] = (), factor: float = 5.0
) -> pd.DataFrame:
    """Spearman rho and p between log10(n_params) and macro-MCC per (context, scope).

    ``exclude`` names models to leave out (e.g. an outlier). Also counts the pairs where a model
    at least ``factor`` times smaller has a higher macro-MCC (see :func:`smaller_beats_larger`).
    """
    sized = _sized(agg, exclude)
    pairs = smaller_beats_larger(agg, exclude=exclude, factor=factor)
    rows = []
    for key, g in sized.groupby([*CONTEXT, "scope"], dropna=False, sort=True):
        n = len(g)
        if n >= 3 and g["n_params"].nunique() > 1:
            rho, p = stats.spearmanr(np.log10(g["n_params"].astype(float)), g["macro_mcc"])
        else:
            rho = p = np.nan
        mask = np.ones(len(pairs), dtype=bool)
        for col, val in zip([*CONTEXT, "scope"], key, strict=True):
            mask &= (pairs[col] == val).to_numpy() | (pairs[col].isna().to_numpy() & pd.isna(val))
        n_cmp = _n_comparable(g["n_params"].to_numpy(dtype=float), factor)
        rows.append((*key, n, float(rho), float(p), n_cmp, int(mask.sum())))
    return pd.DataFrame(
        rows,
        columns=[
            *CONTEXT,
            "scope",
            "n_models",
            "spearman_rho",
            "spearman_p",
            "n_pairs_size_ratio",
            "n_smaller_better",
        ],
    )


def _n_comparable(sizes: np.ndarray, factor: float) -> int:
    return int(sum(1 for a in sizes for b in sizes if b >= factor * a))


def smaller_beats_larger(
    agg: pd.DataFrame, *, exclude: Iterable[str] = (), factor: float = 5.0
) -> pd.DataFrame:
    """Every pair where the smaller model (n_params ≤ larger / ``factor``) has higher macro-MCC."""
    sized = _sized(agg, exclude)
    rows = []
    for key, g in sized.groupby([*CONTEXT, "scope"], dropna=False, sort=True):
        recs = g[["model", "n_params", "macro_mcc"]].to_numpy()
        for small, ns, ms in recs:
            for large, nl, ml in recs:
                if nl >= factor * ns and ms > ml:
                    rows.append(
                        (*key, small, large, int(ns), int(nl), float(nl / ns), float(ms), float(ml))
                    )
    return pd.DataFrame(
        rows,
        columns=[
            *CONTEXT,
            "scope",
            "smaller_model",
            "larger_model",
            "n_params_smaller",
            "n_params_larger",
            "size_ratio",
            "macro_mcc_smaller",
            "macro_mcc_larger",
        ],
    )
