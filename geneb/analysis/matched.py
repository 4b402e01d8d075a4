"""Matched-pair comparisons: models that differ in exactly one property, as in GENEB.

The rule (also in docs/analysis.md): two models form a matched pair for property ``p`` (one of
:data:`~geneb.analysis.properties.MATCH_PROPERTIES`: architecture, tokenization, pretraining
data class) when all three properties are known for both, they differ in ``p`` and agree on
the other two. Size is not matched (GENEB's pairs are not); the size of each model is in the
properties table. A model with any of the three unknown is in no pair (listed in the report).

Orientation, so that "favoured in k of n" has a direction: within a pair, ``model_a`` is the
model whose value of ``p`` sorts first (``value_a < value_b``). Scores are those of the
headline probe (linear, main C): per category, the model's mean over the category's tasks of
the per-task MCC (mean over seeds); category ``all`` is the macro over categories. The sign
test (two-sided, ``scipy.stats.binomtest`` with p = 1/2) counts the pairs where ``value_a``
wins against those where ``value_b`` wins; ties are left out of it and reported.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from geneb.analysis.aggregates import OVERALL
from geneb.analysis.properties import MATCH_PROPERTIES

#: The category name of the macro over categories in pair items.
ALL = "all"
PAIR_COLUMNS: tuple[str, ...] = ("property", "model_a", "model_b", "value_a", "value_b")
ITEM_COLUMNS: tuple[str, ...] = (*PAIR_COLUMNS, "category", "regime", "mcc_a", "mcc_b")


def find_matched_pairs(props: pd.DataFrame) -> pd.DataFrame:
    """Every matched pair of the models in ``props`` (see the module docstring for the rule)."""
    known = props.dropna(subset=list(MATCH_PROPERTIES)).sort_values("model")
    recs = known[["model", *MATCH_PROPERTIES]].to_dict("records")
    rows = []
    for i, a in enumerate(recs):
        for b in recs[i + 1 :]:
            diff = [p for p in MATCH_PROPERTIES if a[p] != b[p]]
            if len(diff) != 1:
                continue
            p = diff[0]
            lo, hi = (a, b) if a[p] < b[p] else (b, a)
            rows.append((p, lo["model"], hi["model"], lo[p], hi[p]))
    return pd.DataFrame(rows, columns=list(PAIR_COLUMNS))


def unmatched_models(props: pd.DataFrame) -> pd.DataFrame:
    """Models left out of matching, and which of the three properties they lack."""
    rows = []
    for rec in props.to_dict("records"):
        missing = [p for p in MATCH_PROPERTIES if rec[p] is None or rec[p] != rec[p]]
        if missing:
            rows.append((rec["model"], ", ".join(missing)))
    return pd.DataFrame(rows, columns=["model", "unknown_properties"])


def matched_pair_scores(agg_main: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """One row per pair x category x regime with both models' scores (:data:`ITEM_COLUMNS`).

    ``agg_main``: :func:`geneb.analysis.aggregates.aggregate_scores` rows of one probe
    configuration per regime (the headline probe). A pair is scored in a (category, regime)
    only where both models have a score.
    """
    score = {
        (r["model"], ALL if r["scope"] == OVERALL else r["scope"], r["regime"]): r["macro_mcc"]
        for r in agg_main[["model", "scope", "regime", "macro_mcc"]].to_dict("records")
    }
    cells = sorted({(c, r) for _, c, r in score})
    rows = []
    for pair in pairs.to_dict("records"):
        for cat, reg in cells:
            a = score.get((pair["model_a"], cat, reg))
            b = score.get((pair["model_b"], cat, reg))
            if a is None or b is None or np.isnan(a) or np.isnan(b):
                continue
            rows.append((*(pair[c] for c in PAIR_COLUMNS), cat, reg, float(a), float(b)))
    out = pd.DataFrame(rows, columns=list(ITEM_COLUMNS))
    return out.sort_values(["property", "regime", "category", "model_a", "model_b"]).reset_index(
        drop=True
    )


def matched_pair_summary(items: pd.DataFrame) -> pd.DataFrame:
    """Per property contrast (value_a vs value_b), category and regime: the paired outcome.

    Columns: property, value_a, value_b, category, regime, n_pairs, mean_diff (mean of
    mcc_a - mcc_b), k_a (pairs where value_a's model is ahead), k_b, ties, sign_p.
    """
    cols = ["property", "value_a", "value_b", "category", "regime"]
    rows = []
    for key, g in items.groupby(cols, sort=True):
        d = (g["mcc_a"] - g["mcc_b"]).to_numpy(dtype=float)
        k_a, k_b = int((d > 0).sum()), int((d < 0).sum())
        p = stats.binomtest(k_a, k_a + k_b, 0.5).pvalue if k_a + k_b else np.nan
        rows.append((*key, len(g), float(d.mean()), k_a, k_b, len(g) - k_a - k_b, float(p)))
    return pd.DataFrame(
        rows, columns=[*cols, "n_pairs", "mean_diff", "k_a", "k_b", "ties", "sign_p"]
    )


def largest_differences(items: pd.DataFrame, top: int) -> pd.DataFrame:
    """Per (contrast, category, regime) the ``top`` items with the largest |mcc_a - mcc_b|
    (a report lists these; the summary counts every pair), in ``items``' order."""
    if items.empty:
        return items
    gap = (items["mcc_a"] - items["mcc_b"]).abs()
    keys = ["property", "value_a", "value_b", "category", "regime"]
    rank = gap.groupby([items[k] for k in keys], sort=False).rank(method="first",
                                                                 ascending=False)  # fmt: skip
    return items[rank <= top]


def first_pairs(pairs: pd.DataFrame, top: int) -> pd.DataFrame:
    """The first ``top`` pairs of each contrast (property, value_a, value_b)."""
    return pairs.groupby(["property", "value_a", "value_b"], sort=False).head(top)
