"""Task difficulty: mean and spread of MCC over models per task."""

from __future__ import annotations

from geneb.analysis.difficulty import task_difficulty
from geneb.analysis.report.context import ReportContext
from geneb.analysis.report.page import Page, regime_label
from geneb.analysis.table import select


def difficulty(page: Page, ctx: ReportContext) -> None:
    """Easy / hard / high-variance tasks of the headline probe."""
    page.h(2, "Task difficulty")
    diff = task_difficulty(ctx.perf)
    page.table("task_difficulty", diff, "Task difficulty per context", show=False)
    dm = select(diff, regime=ctx.main_regime, **ctx.main_sel)
    page.table(
        "task_difficulty_headline",
        dm[["task", "category", "n_models", "mean_mcc", "sd_mcc", "difficulty", "high_variance"]],
        f"Task difficulty, {regime_label(ctx.main_regime)}: easy = mean MCC over models "
        "> 0.70, hard < 0.35, high variance = sd over models > 0.12",
    )
