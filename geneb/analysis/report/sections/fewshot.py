"""Few-shot degradation: the headline cells compared across regimes."""

from __future__ import annotations

import pandas as pd

from geneb.analysis import figures
from geneb.analysis.fewshot import (
    ceiling_drop_correlation,
    fewshot_by_scope,
    fewshot_degradation,
    fewshot_scope_summary,
    regime_means,
)
from geneb.analysis.report.context import ReportContext
from geneb.analysis.report.page import Page, regime_label
from geneb.analysis.table import select


def fewshot(page: Page, ctx: ReportContext) -> None:
    """Mean macro-MCC per regime and each model's drop from full data."""
    page.h(2, "Few-shot degradation")
    regs = ctx.regs
    shot_regs = [r for r in regs if r != "full"]
    if "full" not in regs or not shot_regs:
        page.left_out(
            "few-shot degradation needs the full regime and at least one k-shot "
            f"regime; the results have {', '.join(regs)}."
        )
        return
    rm = regime_means(ctx.agg)
    deg = fewshot_degradation(ctx.agg)
    page.table("regime_means", rm, "Mean macro-MCC over models per regime", show=False)
    page.table("fewshot_degradation", deg, "Few-shot degradation", show=False)
    page.table(
        "regime_means_headline",
        select(rm, **ctx.main_sel),
        "Mean macro-MCC over models per regime (headline probe)",
    )
    page.table(
        "fewshot_degradation_headline",
        select(deg, **ctx.main_sel)[
            ["model", "regime", "macro_mcc", "full_macro_mcc", "drop_abs", "drop_rel"]
        ],
        "Drop from full data per model (relative = absolute / full)",
    )
    page.figure(
        figures.fewshot_lines(
            ctx.agg_main[ctx.agg_main["scope"] == "overall"],
            regs,
            page.figure_path("fewshot.png"),
            "macro-MCC by regime",
        ),
        "Few-shot degradation: macro-MCC per regime and model",
    )
    _per_category(page, ctx, deg)


def _per_category(page: Page, ctx: ReportContext, deg: pd.DataFrame) -> None:
    """Drops per category (model x category x regime), their means, and ceiling vs drop."""
    by_scope = fewshot_by_scope(ctx.agg)
    summary = fewshot_scope_summary(by_scope)
    page.table("fewshot_by_category", by_scope,
               "Few-shot drop per model, scope (overall and each category) and regime",
               show=False)
    page.table("fewshot_category_summary", summary, "Few-shot drops per scope", show=False)
    head = select(summary, **ctx.main_sel)
    page.table(
        "fewshot_category_summary_headline",
        head[["scope", "regime", "n_models", "mean_full_macro_mcc", "mean_macro_mcc",
              "mean_drop_abs", "mean_drop_rel", "drop_rel_of_means"]],
        "Per category and regime, over models: mean full-data and k-shot score, mean "
        "absolute and relative drop (headline probe)",
    )
    ceiling = ceiling_drop_correlation(deg)
    page.table("fewshot_ceiling_drop", ceiling, "Full-data score (ceiling) against absolute "
               "drop: Spearman over models per regime")
    for r in select(ceiling, **ctx.main_sel).itertuples():
        if r.spearman_rho == r.spearman_rho:
            page.p(f"{regime_label(r.regime)}: Spearman between a model's full-data macro-MCC "
                   f"and its absolute drop rho = {r.spearman_rho:.2f} (p = {r.spearman_p:.3g}, "
                   f"{r.n_models} models); positive: higher ceilings lose more.")
