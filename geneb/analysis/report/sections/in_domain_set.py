"""Smaller beats larger within an explicit set of in-domain models (GENEB's scale check).

GENEB counts, among its in-domain models, the pairs where a model at least 5x smaller has the
higher aggregate MCC. The set is named in the report: the models given to ``build_report``
(``in_domain_models``), else those whose pretraining-data class covers human tasks
(:data:`geneb.analysis.domain.IN_DOMAIN_CLASSES`). Summary key: ``in_domain_set``.
"""

from __future__ import annotations

import pandas as pd

from geneb.analysis.domain import in_domain_set, smaller_beats_larger_within
from geneb.analysis.report.context import ReportContext
from geneb.analysis.report.page import Page, regime_label
from geneb.analysis.report.sections.controlled import FACTOR, records
from geneb.analysis.scaling import TOP_PAIRS

#: The smaller-ahead pairs shown in the page (all of them are in the CSV).
SHOWN_PAIRS = 40


def in_domain_models(page: Page, ctx: ReportContext) -> None:
    """Counts per regime and the smaller-ahead pairs within the in-domain set."""
    page.h(3, f"Smaller beats larger within the in-domain set (size ratio >= {FACTOR:g})")
    if not ctx.has_linear:
        page.left_out("the in-domain comparison uses the linear probe; the table has none.")
        return
    models, rule = in_domain_set(ctx.props, ctx.extra.get("in_domain_models"))
    outside = sorted(set(ctx.models) - set(models))
    page.p(f"In-domain set ({len(models)} models; rule: {rule}): {', '.join(models) or 'none'}. "
           f"Outside it: {', '.join(outside) or 'none'}.")
    members = pd.DataFrame({"model": ctx.models}).assign(
        in_domain=lambda d: d["model"].isin(models),
        pretraining_data_class=lambda d: d["model"].map(
            dict(zip(ctx.props["model"], ctx.props["pretraining_data_class"], strict=True))))
    page.table("in_domain_set", members, "Models in and out of the in-domain set", show=False)
    ov = ctx.agg_main[ctx.agg_main["scope"] == "overall"]
    sizes = dict(zip(ctx.props["model"], ctx.props["n_params"], strict=True))
    counts, pairs = smaller_beats_larger_within(ov, sizes, models, factor=FACTOR)
    every, _ = smaller_beats_larger_within(ov, sizes, list(ctx.models), factor=FACTOR)
    counts = pd.concat([counts.assign(models="in-domain set"), every.assign(models="all models")],
                       ignore_index=True)[["models", *counts.columns]]
    ctx.summary["in_domain_set"] = {"models": models, "rule": rule, "factor": FACTOR,
                                    "counts": records(counts)}
    if counts.empty:
        page.left_out("no model of the in-domain set has a parameter count.")
        return
    page.table("in_domain_set_counts", counts, "Pairs within the in-domain set (and among all "
               f"models): size ratio >= {FACTOR:g}, and those where the smaller model has the "
               "higher macro-MCC")
    page.table("in_domain_set_pairs", _largest_margins(pairs),
               f"Smaller-ahead pairs within the in-domain set: the {TOP_PAIRS} largest margins "
               "per regime (every pair is counted above; the table stays linear in the models)",
               show=False)
    head = pairs[pairs["regime"] == ctx.main_regime].sort_values("size_ratio", ascending=False)
    if len(head):
        page.table("in_domain_set_pairs_headline", head.head(SHOWN_PAIRS),
                   f"Smaller-ahead pairs, {regime_label(ctx.main_regime)}, largest size ratio "
                   f"first (first {SHOWN_PAIRS})")


def _largest_margins(pairs: pd.DataFrame) -> pd.DataFrame:
    """Per regime, the :data:`TOP_PAIRS` pairs where the smaller model leads by the most."""
    if pairs.empty:
        return pairs
    margin = pairs["macro_mcc_smaller"] - pairs["macro_mcc_larger"]
    order = pairs.assign(_margin=margin).sort_values(["regime", "_margin"],
                                                     ascending=[True, False], kind="mergesort")
    return order.groupby("regime", sort=False).head(TOP_PAIRS).drop(columns="_margin")
