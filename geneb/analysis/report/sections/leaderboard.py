"""Leaderboard: overall macro-MCC per regime with bootstrap intervals over tasks and seeds,
and each model's MCC minus the best shortcut baseline's, per task and per category."""

from __future__ import annotations

from geneb.analysis.report.context import ReportContext
from geneb.analysis.report.page import Page, regime_label
from geneb.analysis.report.sections.task_audit import shortcut_gap
from geneb.analysis.table import select


def leaderboard(page: Page, ctx: ReportContext) -> None:
    """One ranked table per regime, the headline regime first."""
    page.h(2, "Leaderboard")
    for regime in [ctx.main_regime] + [r for r in ctx.regs if r != ctx.main_regime]:
        lb = select(select(ctx.ranks, regime=regime), **ctx.main_sel)
        lb = lb[lb["scope"] == "overall"][
            ["rank", "model", "n_params", "n_categories", "n_tasks", "macro_mcc", "micro_mcc"]
        ]
        bt = select(ctx.boot_tasks, regime=regime)[
            ["model", "ci_low", "ci_high", "rank_ci_low", "rank_ci_high"]
        ]
        bs = select(ctx.boot_seeds, regime=regime)[["model", "ci_low", "ci_high"]].rename(
            columns={"ci_low": "seed_ci_low", "ci_high": "seed_ci_high"}
        )
        lb = lb.merge(bt, on="model", how="left")
        if "official" in ctx.data.columns:  # published rows: official or self-reported
            flags = ctx.data.drop_duplicates("model").set_index("model")["official"]
            lb.insert(2, "official", lb["model"].map(flags).astype(bool))
        if not ctx.seed_means:
            lb = lb.merge(bs, on="model", how="left")
        page.table(
            f"leaderboard_{regime}",
            lb,
            f"Overall macro-MCC, {regime_label(regime)} (CIs: {ctx.n_boot} bootstrap "
            "resamples over tasks within categories"
            + ("; no interval over seeds: the rows are means over seeds)" if ctx.seed_means
               else "; seed_ci over seeds)"),
        )
    page.p(
        "macro-MCC is the mean over categories of each category's mean per-task MCC (per-task "
        "MCC = mean over seeds); micro-MCC is the mean over all tasks. Ranks: 1 = best, ties "
        "share the best rank."
    )
    single = ctx.single_task_categories
    if single:
        page.p(
            f"{len(single)} of {len(ctx.categories)} categories have a single task "
            f"({', '.join(single)}): the task bootstrap resamples tasks within categories, so "
            "it cannot vary those, and ci_low/ci_high leave out their task-to-task variation "
            + ("(here every category has one task: the task interval is a point). "
               if len(single) == len(ctx.categories) else "(the interval is too narrow). ")
            + ("The rows are means over seeds, so no interval measures the variation over "
               "seeds either." if ctx.seed_means else
               "The seed interval (seed_ci) still measures the probes' variation over seeds.")
        )
    shortcut_gap(page, ctx)
