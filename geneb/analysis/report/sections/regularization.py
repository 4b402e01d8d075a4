"""Regularisation sensitivity: does the ranking depend on the linear probe's C?"""

from __future__ import annotations

from geneb.analysis import figures
from geneb.analysis.regularization import (
    c_rank_agreement,
    c_sensitivity_summary,
    c_sweep_gaps,
    macro_by_c,
    mcc_range_over_c,
)
from geneb.analysis.report.context import ReportContext
from geneb.analysis.report.page import Page, fmt_c


def regularization(page: Page, ctx: ReportContext) -> None:
    """Macro-MCC per C, rank agreement between Cs, per-model range over C."""
    page.h(2, "Regularisation sensitivity")
    by_c = macro_by_c(ctx.perf)
    by_c = by_c[by_c["standardize"] == ctx.std]
    if not ctx.has_linear:
        page.left_out("the results have no linear-probe rows, so there is no C sweep.")
        return
    if by_c["C"].nunique() < 2:
        page.left_out(
            "the results have a single C "
            f"({fmt_c(ctx.main_c)}), so sensitivity to C cannot be measured (run geneb "
            "probe --C 0.01 0.1 1 10 100)."
        )
        return
    _warn_gaps(page, ctx)
    agree = c_rank_agreement(by_c)
    page.table("c_macro_mcc", by_c, "Macro-MCC per model and C", show=False)
    page.table(
        "c_rank_agreement", agree, "Spearman between rankings at each pair of C", show=False
    )
    page.table(
        "c_sensitivity",
        c_sensitivity_summary(agree),
        "Pairwise Spearman of model rankings across C, per regime",
    )
    page.table("c_mcc_range", mcc_range_over_c(by_c), "Per-model macro-MCC range over C")
    if len(ctx.models) < 3:
        page.p("With fewer than three models the Spearman statistics are NaN.", "note")
    page.figure(
        figures.c_curves(
            by_c, ctx.regs, page.figure_path("mcc_vs_c.png"), "linear probe: macro-MCC against C"
        ),
        "macro-MCC against C per regime",
    )


def _warn_gaps(page: Page, ctx: ReportContext) -> None:
    """Name the tasks the C comparison leaves out because some (model, C) cell is missing."""
    gaps = c_sweep_gaps(ctx.perf)
    gaps = gaps[gaps["standardize"] == ctx.std]
    if not len(gaps):
        return
    page.left_out(
        f"{gaps['task'].nunique()} task(s) lack some (model, C) cells, so C values are "
        "compared without them (the same tasks at every C; n_tasks in the tables): "
        + "; ".join(f"{r.task} (regime {r.regime}: {r.missing})"
                    for r in gaps.head(10).itertuples())
        + (f"; {len(gaps) - 10} more in c_sweep_gaps.csv" if len(gaps) > 10 else "")
    )
    page.table("c_sweep_gaps", gaps, "Tasks left out of the C comparison", show=False)
