"""Few-shot degradation: the headline cells compared across regimes."""

from __future__ import annotations

from geneb.analysis import figures
from geneb.analysis.fewshot import fewshot_degradation, regime_means
from geneb.analysis.report.context import ReportContext
from geneb.analysis.report.page import Page
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
