"""Per-category performance: the model x category heatmap and the aggregate tables."""

from __future__ import annotations

from geneb.analysis import figures
from geneb.analysis.aggregates import (
    macro_micro_agreement,
    macro_micro_ranks,
    rank_shift_summary,
)
from geneb.analysis.report.context import ReportContext
from geneb.analysis.report.page import Page, regime_label
from geneb.analysis.table import select


def categories(page: Page, ctx: ReportContext) -> None:
    """Heatmap of category scores, performance matrix, aggregates, macro/micro agreement."""
    page.h(2, "Per-category performance")
    main_agg = select(ctx.agg_main, regime=ctx.main_regime)
    wide = main_agg.pivot(index="model", columns="scope", values="macro_mcc")
    order = wide["overall"].sort_values(ascending=False).index
    wide = wide.loc[order, ["overall"] + [c for c in ctx.categories if c in wide.columns]]
    label = regime_label(ctx.main_regime)
    page.figure(
        figures.heatmap(
            wide,
            page.figure_path("heatmap_model_category.png"),
            f"macro-MCC per category, {label}",
        ),
        f"Model x category macro-MCC ({label}, headline probe)",
    )
    page.table(
        "performance_matrix",
        ctx.perf,
        "Performance matrix: mean and sd of MCC over seeds per cell",
        show=False,
    )
    page.table(
        "aggregates", ctx.agg, "Macro and micro MCC per context, scope and model", show=False
    )
    page.table(
        "macro_micro_agreement",
        macro_micro_agreement(ctx.agg),
        "Agreement of macro and micro rankings",
        show=False,
    )
    mm = select(macro_micro_agreement(ctx.agg_main), regime=ctx.main_regime)
    page.table(
        "macro_micro_agreement_headline", mm, f"Macro vs micro ranking agreement, {label}"
    )
    ranks = macro_micro_ranks(ctx.agg)
    shifts = rank_shift_summary(ranks)
    page.table("macro_micro_ranks", ranks, "Rank under macro- and micro-MCC per model",
               show=False)
    page.table("macro_micro_rank_shifts", shifts, "Macro vs micro rank shifts", show=False)
    page.table(
        "macro_micro_ranks_headline",
        select(ranks, regime=ctx.main_regime, **ctx.main_sel)[
            ["model", "macro_mcc", "micro_mcc", "macro_rank", "micro_rank", "rank_shift"]],
        f"Macro and micro rank per model, {label} (rank_shift = micro - macro)",
    )
    page.table(
        "macro_micro_rank_shifts_headline",
        select(shifts, **ctx.main_sel),
        "Per regime: models with the same rank under both, largest shift, same leader, "
        "top-5 overlap",
    )
