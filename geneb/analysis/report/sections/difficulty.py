"""Task difficulty: mean and spread of MCC over models per task, with the thresholds named."""

from __future__ import annotations

from geneb.analysis.difficulty import (
    EASY,
    HARD,
    HIGH_VARIANCE,
    difficulty_summary,
    task_difficulty,
    top_placements,
)
from geneb.analysis.report.context import ReportContext
from geneb.analysis.report.page import Page, regime_label
from geneb.analysis.table import select

#: Places per high-variance task counted by pretraining-data class (GENEB: "top-tier").
TOP_PLACES = 3


def difficulty(page: Page, ctx: ReportContext) -> None:
    """Easy / hard / high-variance tasks of the headline probe, their counts and thresholds,
    and who holds the top places on the high-variance tasks."""
    page.h(2, "Task difficulty")
    label = regime_label(ctx.main_regime)
    page.p(
        f"Thresholds: easy = mean MCC over models > {EASY:.2f}, hard = mean < {HARD:.2f}, "
        f"medium otherwise; high variance = sd over models (ddof 1) > {HIGH_VARIANCE:.2f}."
    )
    diff = task_difficulty(ctx.perf)
    page.table("task_difficulty", diff, "Task difficulty per context", show=False)
    summary = difficulty_summary(diff)
    page.table("task_difficulty_summary", summary, "Task classes per context with their "
               "thresholds and tasks", show=False)
    page.table(
        "task_difficulty_summary_headline",
        select(summary, **ctx.main_sel)[
            ["regime", "n_tasks", "n_easy", "n_medium", "n_hard", "n_high_variance",
             "easy_threshold", "hard_threshold", "high_variance_threshold"]],
        "Counts of easy, medium, hard and high-variance tasks per regime (headline probe)",
    )
    dm = select(diff, regime=ctx.main_regime, **ctx.main_sel)
    page.table(
        "task_difficulty_headline",
        dm[["task", "category", "n_models", "mean_mcc", "sd_mcc", "difficulty", "high_variance"]],
        f"Task difficulty, {label}: easy = mean MCC over models > {EASY:.2f}, hard < "
        f"{HARD:.2f}, high variance = sd over models > {HIGH_VARIANCE:.2f}",
    )
    hv = sorted(dm.loc[dm["high_variance"], "task"])
    if not hv or len(ctx.models) <= TOP_PLACES:
        return
    places = top_placements(select(ctx.perf, regime=ctx.main_regime, **ctx.main_sel), hv,
                            ctx.props, top=TOP_PLACES)
    page.table("high_variance_top_places", places, f"Top {TOP_PLACES} models of each "
               f"high-variance task, {label}, with their pretraining-data class", show=False)
    counts = (places.assign(pretraining_data_class=places["pretraining_data_class"]
                            .fillna("unknown"))
              .groupby("pretraining_data_class").size().rename("n_places").reset_index()
              .sort_values(["n_places", "pretraining_data_class"], ascending=[False, True]))
    counts["of_places"] = len(places)
    page.table("high_variance_top_places_by_pretraining", counts,
               f"Top-{TOP_PLACES} places on the {len(hv)} high-variance tasks ({label}) by the "
               "model's pretraining-data class (model catalogue)")
