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
