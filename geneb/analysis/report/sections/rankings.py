"""Rankings and their instability: leaders per category, leader changes, rank correlations."""

from __future__ import annotations

from geneb.analysis import figures
from geneb.analysis.rankings import (
    category_leaders,
    category_rank_correlations,
    leader_changes,
    leader_shifts,
)
from geneb.analysis.report.context import ReportContext
from geneb.analysis.report.page import Page, regime_label
from geneb.analysis.table import select


def rankings(page: Page, ctx: ReportContext) -> None:
    """Ranks per scope; leaders, leader changes and rank correlations with two+ models."""
    page.h(2, "Rankings and their instability")
    page.table("rankings", ctx.ranks, "Rank of every model per context and scope", show=False)
    models, regs, cats = ctx.models, ctx.regs, ctx.categories
    label = regime_label(ctx.main_regime)
    if len(models) < 2:
        page.left_out(
            f"rankings, leaders, rank correlations and rank changes need at least two "
            f"models; the results have one ({models[0]})."
        )
        return
    leaders = category_leaders(ctx.agg)
    page.table("category_leaders", leaders, "Leader per context and scope", show=False)
    lead_main = select(leaders, **ctx.main_sel)
    page.table(
        "category_leaders_headline",
        lead_main[["regime", "scope", "leader", "leader_macro_mcc", "runner_up", "margin"]],
        "Leader per category and regime (headline probe)",
    )
    if len(regs) >= 2:
        changes = leader_changes(leaders)
        page.table("leader_changes", changes, "All leader changes between regimes", show=False)
        page.table(
            "leader_changes_headline",
            select(changes, **ctx.main_sel),
            "Categories whose leader changes between regimes (headline probe)",
        )
        _leader_shifts(page, ctx)
    else:
        page.left_out(
            "leader changes between regimes need at least two regimes; the "
            f"results have one ({regs[0]})."
        )
    corr = category_rank_correlations(ctx.agg)
    page.table(
        "category_rank_correlations",
        corr,
        "Spearman/Kendall between the rankings of every pair of scopes",
        show=False,
    )
    if len(models) < 3:
        page.p(
            "Rank correlations between categories need at least three models; they are NaN here.",
            "note",
        )
    if len(cats) < 2:
        page.left_out(
            "rank changes across categories need at least two categories; the "
            f"results have one ({cats[0]})."
        )
        return
    rk = select(ctx.ranks, regime=ctx.main_regime, **ctx.main_sel)
    bump = rk.pivot(index="model", columns="scope", values="rank")
    bump = bump[["overall"] + [c for c in cats if c in bump.columns]]
    page.figure(
        figures.rank_changes(
            bump, page.figure_path("rank_changes.png"), f"model rank per category, {label}"
        ),
        "Rank of each model per category (1 = best)",
    )
    cm = select(corr, regime=ctx.main_regime, **ctx.main_sel)
    cm = cm[cm["scope_a"] != "overall"]
    if cm["spearman_rho"].notna().any():
        page.p(
            f"Between categories ({label}), Spearman between rankings: median "
            f"{cm['spearman_rho'].median():.2f}, minimum {cm['spearman_rho'].min():.2f} over "
            f"{len(cm)} category pairs."
        )


def _leader_shifts(page: Page, ctx: ReportContext) -> None:
    """Each category's leader per regime beside the full-data leader and its rank there."""
    if "full" not in ctx.regs:
        return
    shifts = leader_shifts(ctx.agg)
    page.table("leader_shifts", shifts, "Leader per scope and regime against the full-data "
               "leader", show=False)
    head = select(shifts, **ctx.main_sel)
    page.table(
        "leader_shifts_headline",
        head[["scope", "regime", "leader", "leader_macro_mcc", "reference_leader",
              "reference_leader_rank", "changed"]],
        "Leader of each category per regime; reference = the full-data leader, its rank in "
        "the regime, changed = another model leads (headline probe)",
    )
    cats = head[head["scope"] != "overall"]
    for regime, g in cats[cats["regime"] != "full"].groupby("regime", sort=False):
        changed = sorted(g.loc[g["changed"], "scope"])
        page.p(f"{regime_label(regime)}: the full-data leader leads no more in "
               f"{len(changed)} of {len(g)} categories"
               + (f" ({', '.join(changed)})." if changed else "."))
