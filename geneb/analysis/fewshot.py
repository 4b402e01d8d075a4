"""Few-shot degradation: how much of the full-data score survives with 10 or 1 shot per class."""

from __future__ import annotations

import numpy as np
import pandas as pd

from geneb.analysis.table import regime_order

NO_REGIME = ["probe", "standardize", "C"]


def regime_means(agg: pd.DataFrame, scope: str = "overall") -> pd.DataFrame:
    """Mean (over models) macro-MCC per regime, for one scope."""
    g = agg[agg["scope"] == scope]
    out = (
        g.groupby([*NO_REGIME, "regime"], dropna=False)
        .agg(n_models=("model", "nunique"), mean_macro_mcc=("macro_mcc", "mean"))
        .reset_index()
    )
    out["_o"] = out["regime"].map({r: i for i, r in enumerate(regime_order(out["regime"]))})
    return out.sort_values([*NO_REGIME, "_o"]).drop(columns="_o").reset_index(drop=True)


def fewshot_degradation(agg: pd.DataFrame, scope: str = "overall") -> pd.DataFrame:
    """Per model and few-shot regime: macro-MCC, absolute drop from full, relative drop.

    ``drop_abs = full - regime``; ``drop_rel = drop_abs / full`` (NaN when full ≤ 0, where a
    fraction of the full score has no meaning). Empty when there is no ``full`` regime.
    """
    g = agg[agg["scope"] == scope]
    cols = [*NO_REGIME, "model", "regime", "macro_mcc", "full_macro_mcc", "drop_abs", "drop_rel"]
    full = g[g["regime"] == "full"][[*NO_REGIME, "model", "macro_mcc"]].rename(
        columns={"macro_mcc": "full_macro_mcc"}
    )
    shots = g[g["regime"] != "full"][[*NO_REGIME, "model", "regime", "macro_mcc"]]
    if full.empty or shots.empty:
        return pd.DataFrame(columns=cols)
    m = shots.merge(full, on=[*NO_REGIME, "model"], how="inner")
    m["drop_abs"] = m["full_macro_mcc"] - m["macro_mcc"]
    m["drop_rel"] = np.where(m["full_macro_mcc"] > 0, m["drop_abs"] / m["full_macro_mcc"], np.nan)
    m["_k"] = m["regime"].astype(int)
    m = m.sort_values([*NO_REGIME, "model", "_k"], ascending=[True] * 4 + [False])
    return m[cols].reset_index(drop=True)


def fewshot_by_scope(agg: pd.DataFrame) -> pd.DataFrame:
    """:func:`fewshot_degradation` for every scope (``overall`` and each category), one table.

    Columns: ``scope`` then those of :func:`fewshot_degradation`; per model, category and
    few-shot regime, the category's score in full data and in the regime and the drops.
    """
    parts = [fewshot_degradation(agg, scope).assign(scope=scope)
             for scope in sorted(agg["scope"].unique())]
    parts = [p for p in parts if len(p)]
    if not parts:
        return pd.DataFrame(columns=["scope", *NO_REGIME, "model", "regime", "macro_mcc",
                                     "full_macro_mcc", "drop_abs", "drop_rel"])
    out = pd.concat(parts, ignore_index=True)
    return out[["scope", *[c for c in out.columns if c != "scope"]]]


def fewshot_scope_summary(by_scope: pd.DataFrame) -> pd.DataFrame:
    """Per scope and few-shot regime, over models: the mean full-data score, the mean k-shot
    score, the mean absolute drop and the mean relative drop (mean of each model's
    ``drop_rel``; models with a full score <= 0 are left out of it), plus ``drop_rel_of_means``
    = (mean full - mean k-shot) / mean full.

    ``by_scope``: :func:`fewshot_by_scope`. Sorted by context, scope, then fewest shots first.
    """
    cols = [*NO_REGIME, "scope", "regime"]
    out = (
        by_scope.groupby(cols, dropna=False, sort=True)
        .agg(n_models=("model", "nunique"), mean_full_macro_mcc=("full_macro_mcc", "mean"),
             mean_macro_mcc=("macro_mcc", "mean"), mean_drop_abs=("drop_abs", "mean"),
             mean_drop_rel=("drop_rel", "mean"))
        .reset_index()
    )
    full = out["mean_full_macro_mcc"]
    out["drop_rel_of_means"] = np.where(full > 0, (full - out["mean_macro_mcc"]) / full, np.nan)
    out["_k"] = out["regime"].astype(int)
    return out.sort_values([*NO_REGIME, "scope", "_k"]).drop(columns="_k").reset_index(drop=True)


def ceiling_drop_correlation(deg: pd.DataFrame) -> pd.DataFrame:
    """Per context and few-shot regime: Spearman rho and p between each model's full-data
    macro-MCC (its ceiling) and its absolute drop (NaN with fewer than 3 models).

    A positive rho: models with a higher full-data score lose more (GENEB's "inverse
    pattern"). ``deg``: :func:`fewshot_degradation` rows of one scope.
    """
    from scipy import stats

    rows = []
    for key, g in deg.groupby([*NO_REGIME, "regime"], dropna=False, sort=True):
        ok = len(g) >= 3 and g["full_macro_mcc"].nunique() > 1 and g["drop_abs"].nunique() > 1
        rho, p = stats.spearmanr(g["full_macro_mcc"], g["drop_abs"]) if ok else (np.nan, np.nan)
        rows.append((*key, len(g), float(rho), float(p)))
    return pd.DataFrame(rows, columns=[*NO_REGIME, "regime", "n_models", "spearman_rho",
                                       "spearman_p"])
