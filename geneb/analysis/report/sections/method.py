"""Method statement: protocol, aggregation, seeds, solver, tolerance, versions (from the table)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from geneb.analysis.report.context import ReportContext
from geneb.analysis.report.page import Page, fmt_c, regime_label

#: The aggregation and uncertainty definitions, one line each (also in docs/analysis.md).
AGGREGATION_LINES = (
    "Per-task MCC: the mean over seeds of one model-task cell.",
    "Category score: the mean over the category's tasks of the per-task MCC.",
    "macro-MCC (headline, as in GENEB): the mean over categories of the category scores; "
    "every category weighs the same.",
    "micro-MCC: the mean over all tasks of the per-task MCC (unweighted); large categories "
    "weigh more.",
)


def _uniq(s: pd.Series) -> list[str]:
    return sorted({str(v) for v in s.dropna() if str(v) != ""})


def _created_range(data: pd.DataFrame) -> str:
    c = _uniq(data["created"])
    return f"{c[0]} to {c[-1]}" if c else "(not recorded)"


def _max_iter_seen(data: pd.DataFrame) -> str:
    return str(int(np.nanmax(data["n_iter"]))) if data["n_iter"].notna().any() else "-"


def _seeds_line(seeds: list[int]) -> str:
    if seeds:
        return f"Seeds: {', '.join(map(str, seeds))}."
    return ("Seeds: none in the rows: each row is a mean over seeds as published (the rows say "
            "so: no row has a seed); the per-task MCC is that mean, and nothing is resampled "
            "over seeds.")


def _convergence_line(ctx: ReportContext) -> str:
    if ctx.seed_means:
        return "Convergence: not recorded (published means, not fits)."
    data = ctx.data
    return (f"Convergence: {int(data['converged'].sum())} of {len(data)} cells converged; "
            f"largest n_iter {_max_iter_seen(data)}.")


def method(page: Page, ctx: ReportContext) -> None:
    """The report's title and method statement."""
    from geneb.protocol import MAX_ITER

    try:
        from geneb.probe.solvers.base import DEFAULT_TOL

        tol = f"{DEFAULT_TOL:g}"
    except ImportError:  # pragma: no cover - the solver interface ships with geneb
        tol = "unknown"
    data = ctx.data
    page.h(1, "GENEB report")
    page.h(2, "Method")
    seeds = sorted(int(s) for s in data["seed"].dropna().unique())
    cs = sorted(data.loc[data["probe"] == "linear", "C"].dropna().unique())
    items = [
        f"{len(ctx.df_all)} {'rows' if ctx.seed_means else 'cells'} in the table; "
        f"{len(data)} used: "
        f"{data['model'].nunique()} models, {data['task'].nunique()} tasks in "
        f"{data['category'].nunique()} categories.",
        "Regimes: "
        + ", ".join(regime_label(r) for r in ctx.regs)
        + "; k-shot regimes draw k train rows per class per seed, the same rows for every "
        "model; the test split is always whole.",
        _seeds_line(seeds),
        "Probes: " + ", ".join(_uniq(data["probe"])) + "; linear = L2 logistic regression "
        f"with C in {', '.join(fmt_c(c) for c in cs) or '-'}, headline C = {fmt_c(ctx.main_c)}; "
        f"max_iter {MAX_ITER}, gradient tolerance {tol} (the engine default; not recorded "
        "per row). Backends: " + (", ".join(_uniq(data["backend"])) or "not recorded") + ".",
        f"Features {'standardised on the probe train rows' if ctx.std else 'as stored'}"
        + (
            f"; {ctx.n_other_std} cells with the other setting are not used (geneb report "
            f"{'--no-standardize' if ctx.std else '--standardize'} uses them)."
            if ctx.n_other_std
            else "."
        ),
        _convergence_line(ctx),
        "Headline analyses (leaderboard, categories, rankings, scaling, difficulty, uncertainty): "
        "linear probe at the headline C, per regime. Few-shot: the same cells across regimes. "
        "Regularisation: every C. Probe stability: linear at the headline C against the MLP, "
        "paired on (regime, model, task, seed).",
        *AGGREGATION_LINES,
        "Rankings, leaders, scaling, few-shot and regularisation use the macro-MCC.",
        f"Uncertainty: {ctx.n_boot} bootstrap resamples, numpy default_rng({ctx.boot_seed}), "
        "95% percentile intervals of the macro-MCC; over tasks, tasks are resampled within "
        "each category (stratified); Wilcoxon signed-rank tests over tasks between models "
        "adjacent in the macro-MCC ranking, Holm-corrected.",
        "Versions: geneb "
        + (", ".join(_uniq(data["geneb_version"])) or "not recorded")
        + "; scikit-learn "
        + (", ".join(_uniq(data["sklearn_version"])) or "not recorded")
        + ". Cells created "
        + _created_range(data)
        + ".",
    ]
    if "task_synthetic" in data and data["task_synthetic"].fillna(False).astype(bool).any():
        syn = sorted(data.loc[data["task_synthetic"].fillna(False).astype(bool), "task"].unique())
        items.insert(
            0,
            f"SYNTHETIC DATA: {len(syn)} of {data['task'].nunique()} tasks are generated by "
            f"geneb's synthetic starter suite, not real biological data ({', '.join(syn)}).",
        )
    if ctx.dropped_tasks:
        items.append(
            "Tasks not probed for every model, left out so that averages compare like "
            f"with like: {', '.join(ctx.dropped_tasks)}."
        )
    if not ctx.has_linear:
        items.append("The table has no linear-probe rows: headline analyses use the MLP probe.")
    items.append(
        "Protocol: every probe solved to convergence (geneb's default)."
        if ctx.protocol == "converged"
        else "Protocol: the GENEB paper's literal LogisticRegression(C, max_iter=1000) "
        "(the table has no converged rows)."
    )
    page.ul(items)
