"""Uncertainty: bootstrap intervals of the macro-MCC and paired tests between adjacent models."""

from __future__ import annotations

from geneb.analysis.report.context import ReportContext
from geneb.analysis.report.page import Page, regime_label
from geneb.analysis.uncertainty import adjacent_model_tests


def uncertainty(page: Page, ctx: ReportContext) -> None:
    """Bootstrap tables (tasks within categories; seeds) and Wilcoxon tests with Holm."""
    page.h(2, "Uncertainty")
    page.table(
        "bootstrap_tasks",
        ctx.boot_tasks,
        "Bootstrap over tasks (within categories): macro-MCC and rank CIs",
        show=False,
    )
    if ctx.seed_means:
        page.left_out(
            "intervals over seeds: every row is a mean over seeds as published (no row has a "
            "seed), so the seeds cannot be resampled; only the task bootstrap is given."
        )
    else:
        page.table(
            "bootstrap_seeds", ctx.boot_seeds, "Bootstrap over seeds: macro-MCC and rank CIs",
            show=False,
        )
    page.p(
        f"Intervals are 95% percentile intervals of the macro-MCC from {ctx.n_boot} bootstrap "
        f"resamples (numpy default_rng({ctx.boot_seed})), each resample aggregated as the "
        "headline (mean over categories of category means). Over tasks: within each category, "
        "its tasks drawn with replacement (every category keeps its weight), the same draw for "
        "every model. Over seeds: seeds drawn with replacement, the same draw for every model "
        "and task; full-data fits do not depend on the seed, so their seed intervals have zero "
        "width."
    )
    if len(ctx.models) < 2:
        page.left_out("paired tests between adjacent models need at least two models.")
        return
    alpha = ctx.alpha
    tests = adjacent_model_tests(ctx.perf_main, alpha=alpha)
    page.table(
        "adjacent_tests",
        tests,
        f"Wilcoxon signed-rank over tasks between adjacent models (Holm, alpha = {alpha:g})",
    )
    for regime in ctx.regs:
        t = tests[tests["regime"] == regime]
        if t.empty:
            continue
        pairs = list(zip(t["model"], t["next_model"], t["separable"], strict=True))
        sep = [f"{a} > {b}" for a, b, s in pairs if s]
        not_sep = [f"{a} vs {b}" for a, b, s in pairs if not s]
        n_t = int(t["n_tasks"].iloc[0])
        msg = (
            f"{regime_label(regime)}: separable adjacent ranks: "
            f"{'; '.join(sep) if sep else 'none'}; not separable: "
            f"{'; '.join(not_sep) if not_sep else 'none'}."
        )
        if 2.0 / 2**n_t >= alpha:
            msg += (
                f" With {n_t} tasks the smallest possible two-sided Wilcoxon p is "
                f"{2.0 / 2**n_t:.3g}, so no pair can be separated at {alpha:g}."
            )
        page.p(msg)
