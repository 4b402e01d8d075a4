"""Probe stability: do rankings survive swapping the linear probe for a small MLP?

Linear and MLP scores are paired on the same (regime, model, task) and only over the seeds both
probes were run with, so both see the same k-shot rows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from geneb.analysis.table import select
from geneb.protocol import macro_mcc


def paired_probe_scores(
    results: pd.DataFrame, *, C: float, standardize: bool = False
) -> pd.DataFrame:
    """Mean MCC of the linear probe (at ``C``) and the MLP per (regime, model, task).

    Columns: regime, model, task, category, n_seeds, linear_mcc, mlp_mcc. Empty without MLP rows.
    """
    lin = select(results, probe="linear", C=C, standardize=standardize)
    mlp = select(results, probe="mlp", standardize=standardize)
    keys = ["regime", "model", "task", "category", "seed"]
    m = lin[keys + ["mcc"]].merge(mlp[keys + ["mcc"]], on=keys, suffixes=("_linear", "_mlp"))
    cols = ["regime", "model", "task", "category", "n_seeds", "linear_mcc", "mlp_mcc"]
    if m.empty:
        return pd.DataFrame(columns=cols)
    out = (
        m.groupby(["regime", "model", "task", "category"], sort=True)
        .agg(
            n_seeds=("seed", "nunique"),
            linear_mcc=("mcc_linear", "mean"),
            mlp_mcc=("mcc_mlp", "mean"),
        )
        .reset_index()
    )
    return out[cols]


def _spearman(a: pd.Series, b: pd.Series) -> tuple[float, float]:
    if len(a) < 3 or a.nunique() < 2 or b.nunique() < 2:
        return np.nan, np.nan
    rho, p = stats.spearmanr(a, b)
    return float(rho), float(p)


def _top(s: pd.Series, k: int) -> list[str]:
    return list(s.sort_values(ascending=False, kind="stable").index[:k])


def probe_stability(paired: pd.DataFrame) -> pd.DataFrame:
    """Summary statistics of linear vs MLP agreement, one row per (regime, statistic).

    Statistics: Spearman over model-task pairs and over per-model macro-MCC (mean over
    categories of category means; value, p); per-task Spearman over models (median and number
    positive, of n tasks); whether the top-3 and top-5 model sets (by macro-MCC) are identical
    (1/0, with the overlap size in ``n``); mean signed MCC difference (MLP minus linear) over
    model-task pairs.
    """
    rows = []
    for regime, g in paired.groupby("regime", sort=True):
        rho, p = _spearman(g["linear_mcc"], g["mlp_mcc"])
        rows.append((regime, "spearman_model_task_pairs", rho, p, len(g)))
        # per-model macro-MCC as in GENEB: mean over categories of the category means
        per_model = pd.DataFrame(
            {m: macro_mcc(t[["linear_mcc", "mlp_mcc"]].to_numpy(dtype=float).T,
                          t["category"].to_numpy())
             for m, t in g.groupby("model", sort=True)},
            index=["linear_mcc", "mlp_mcc"],
        ).T
        rho, p = _spearman(per_model["linear_mcc"], per_model["mlp_mcc"])
        rows.append((regime, "spearman_model_macro", rho, p, len(per_model)))
        task_rhos = [
            _spearman(t["linear_mcc"], t["mlp_mcc"])[0] for _, t in g.groupby("task", sort=True)
        ]
        task_rhos = [r for r in task_rhos if np.isfinite(r)]
        med = float(np.median(task_rhos)) if task_rhos else np.nan
        rows.append((regime, "per_task_spearman_median", med, np.nan, len(task_rhos)))
        rows.append(
            (
                regime,
                "per_task_spearman_positive",
                float(sum(r > 0 for r in task_rhos)),
                np.nan,
                len(task_rhos),
            )
        )
        for k in (3, 5):
            if len(per_model) >= k:
                a = set(_top(per_model["linear_mcc"], k))
                b = set(_top(per_model["mlp_mcc"], k))
                rows.append((regime, f"top{k}_identical", float(a == b), np.nan, len(a & b)))
        diff = g["mlp_mcc"] - g["linear_mcc"]
        rows.append(
            (regime, "mean_signed_diff_mlp_minus_linear", float(diff.mean()), np.nan, len(g))
        )
    return pd.DataFrame(rows, columns=["regime", "statistic", "value", "p_value", "n"])


def per_task_probe_agreement(paired: pd.DataFrame) -> pd.DataFrame:
    """Spearman over models of linear vs MLP MCC, per (regime, task); NaN with < 3 models."""
    rows = []
    for (regime, task), t in paired.groupby(["regime", "task"], sort=True):
        rho, p = _spearman(t["linear_mcc"], t["mlp_mcc"])
        rows.append((regime, task, len(t), rho, p))
    return pd.DataFrame(rows, columns=["regime", "task", "n_models", "spearman_rho", "spearman_p"])
