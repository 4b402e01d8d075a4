"""Rankings per category and overall, leaders per regime, and how unstable they are.

A single leaderboard hides that the best model differs between categories and between data
regimes; these tables make that visible.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
from scipy import stats

from geneb.analysis.table import CONTEXT, regime_order

NO_REGIME = [c for c in CONTEXT if c != "regime"]


def model_rankings(agg: pd.DataFrame) -> pd.DataFrame:
    """Rank models by macro-MCC within each (context, scope): 1 = best, ties share the best rank."""
    out = agg.copy()
    out["rank"] = (
        out.groupby([*CONTEXT, "scope"], dropna=False)["macro_mcc"]
        .rank(ascending=False, method="min")
        .astype(int)
    )
    return out.sort_values([*CONTEXT, "scope", "rank", "model"], kind="stable").reset_index(
        drop=True
    )


def category_leaders(agg: pd.DataFrame) -> pd.DataFrame:
    """The best model (highest macro-MCC) per (context, scope); tied leaders joined by ' = '.

    Also the runner-up and the margin between them (NaN with one model).
    """
    rows = []
    for key, g in agg.groupby([*CONTEXT, "scope"], dropna=False, sort=True):
        g = g.sort_values(["macro_mcc", "model"], ascending=[False, True])
        best = g["macro_mcc"].iloc[0]
        tied = g.loc[np.isclose(g["macro_mcc"], best, rtol=0, atol=1e-12), "model"]
        leader = " = ".join(sorted(tied))
        rest = g[~g["model"].isin(tied)]
        runner = rest["model"].iloc[0] if len(rest) else ""
        margin = float(best - rest["macro_mcc"].iloc[0]) if len(rest) else np.nan
        rows.append((*key, leader, float(best), runner, margin, len(g)))
    return pd.DataFrame(
        rows,
        columns=[
            *CONTEXT,
            "scope",
            "leader",
            "leader_macro_mcc",
            "runner_up",
            "margin",
            "n_models",
        ],
    )


def leader_changes(leaders: pd.DataFrame) -> pd.DataFrame:
    """For every pair of regimes, how many categories have a different leader.

    Only categories (not the overall scope) present in both regimes are counted.
    """
    rows = []
    cats = leaders[leaders["scope"] != "overall"]
    for key, g in cats.groupby(NO_REGIME, dropna=False, sort=True):
        regs = regime_order(g["regime"])
        for a, b in itertools.combinations(regs, 2):
            la = g[g["regime"] == a].set_index("scope")["leader"]
            lb = g[g["regime"] == b].set_index("scope")["leader"]
            common = sorted(set(la.index) & set(lb.index))
            changed = [c for c in common if la[c] != lb[c]]
            rows.append((*key, a, b, len(common), len(changed), ";".join(changed)))
    return pd.DataFrame(
        rows,
        columns=[
            *NO_REGIME,
            "regime_a",
            "regime_b",
            "n_categories",
            "n_changed",
            "changed_categories",
        ],
    )


def category_rank_correlations(agg: pd.DataFrame) -> pd.DataFrame:
    """Spearman and Kendall correlation of model scores between every pair of scopes.

    Computed over the models present in both scopes; NaN where fewer than 3 models or where
    every model has the same score in a scope (a correlation is then undefined).
    """
    rows = []
    for key, g in agg.groupby(list(CONTEXT), dropna=False, sort=True):
        wide = g.pivot(index="model", columns="scope", values="macro_mcc")
        scopes = ["overall"] + sorted(c for c in wide.columns if c != "overall")
        scopes = [s for s in scopes if s in wide.columns]
        for a, b in itertools.combinations(scopes, 2):
            pair = wide[[a, b]].dropna()
            n = len(pair)
            if n >= 3 and pair[a].nunique() > 1 and pair[b].nunique() > 1:
                rho, p = stats.spearmanr(pair[a], pair[b])
                tau, pt = stats.kendalltau(pair[a], pair[b])
            else:
                rho = p = tau = pt = np.nan
            rows.append((*key, a, b, n, float(rho), float(p), float(tau), float(pt)))
    return pd.DataFrame(
        rows,
        columns=[
            *CONTEXT,
            "scope_a",
            "scope_b",
            "n_models",
            "spearman_rho",
            "spearman_p",
            "kendall_tau",
            "kendall_p",
        ],
    )


def leader_shifts(agg: pd.DataFrame, reference: str = "full") -> pd.DataFrame:
    """Per context, scope and regime: the leader there, the ``reference`` regime's leader,
    that model's rank in this regime, and whether the leader changed.

    One row per (context, scope, regime) whose scope also has a ``reference`` row; the
    reference regime's own rows have ``changed`` False and rank 1. Tied leaders are joined by
    ' = ' (as in :func:`category_leaders`); a leader counts as changed when the two strings
    differ, and the reference leader's rank is the best rank of the tied models.
    """
    ranked = model_rankings(agg)
    leaders = category_leaders(agg)
    ref = leaders[leaders["regime"] == reference][[*NO_REGIME, "scope", "leader"]]
    ref = ref.rename(columns={"leader": "reference_leader"})
    m = leaders.merge(ref, on=[*NO_REGIME, "scope"], how="inner")
    rank_of = {
        (*(r[c] for c in NO_REGIME), r["scope"], r["regime"], r["model"]): int(r["rank"])
        for r in ranked[[*NO_REGIME, "scope", "regime", "model", "rank"]].to_dict("records")
    }
    m["reference_leader_rank"] = [
        min(rank_of.get((*(r[c] for c in NO_REGIME), r["scope"], r["regime"], name), 10**9)
            for name in r["reference_leader"].split(" = "))
        for r in m.to_dict("records")
    ]
    m["changed"] = m["leader"] != m["reference_leader"]
    m["reference_regime"] = reference
    order = {r: i for i, r in enumerate(regime_order(m["regime"]))}
    m = m.assign(_o=m["regime"].map(order)).sort_values([*NO_REGIME, "scope", "_o"])
    cols = [*NO_REGIME, "scope", "regime", "leader", "leader_macro_mcc", "reference_regime",
            "reference_leader", "reference_leader_rank", "changed"]
    return m[cols].reset_index(drop=True)
