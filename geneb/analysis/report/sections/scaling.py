"""Model size and metadata: parameter counts, scaling with size, matched comparisons."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from geneb.analysis import figures
from geneb.analysis.metadata import GROUP_COLUMNS, metadata_groups
from geneb.analysis.report.context import ReportContext
from geneb.analysis.report.page import Page, regime_label
from geneb.analysis.scaling import TOP_PAIRS, scaling_correlation, smaller_beats_larger
from geneb.analysis.table import select


def scaling(page: Page, ctx: ReportContext) -> None:
    """Model table, Spearman of log(size) against macro-MCC, and metadata groups."""
    page.h(2, "Model size and metadata")
    meta = ctx.meta
    page.table(
        "model_metadata",
        meta,
        "Models: parameter count (published where the catalogue has it, else measured)"
        + (" and the model-properties file's own columns" if ctx.info is not None else ""),
    )
    page.p(ctx.params_note)
    unsized = sorted(meta.loc[meta["n_params"].isna(), "model"])
    if unsized:
        page.p(
            "Without a parameter count (k-mer baselines or unknown), left out of the scaling "
            f"analysis: {', '.join(unsized)}."
        )
    excl = ctx.scaling_exclude
    sized = [m for m in meta.loc[meta["n_params"].notna(), "model"] if m not in excl]
    if excl:
        page.p(f"Excluded from scaling by request: {', '.join(excl)}.")
    if len(sized) < 3:
        page.left_out(
            f"the scaling analysis needs at least three models with a parameter count; "
            f"the results have {len(sized)}."
        )
    else:
        _scaling(page, ctx, sized)
        _with_and_without(page, ctx)
    _groups(page, ctx)


def _scaling(page: Page, ctx: ReportContext, sized: list[str]) -> None:
    label = regime_label(ctx.main_regime)
    sc = scaling_correlation(ctx.agg, exclude=ctx.scaling_exclude)
    pairs = smaller_beats_larger(ctx.agg, exclude=ctx.scaling_exclude, top=TOP_PAIRS)
    page.table("scaling_correlation", sc, "Scaling per context and scope (n_pairs_size_ratio, "
               "n_smaller_better: counts over every pair)", show=False)  # fmt: skip
    page.table(
        "smaller_beats_larger",
        pairs,
        f"Pairs where a model at least 5x smaller has higher macro-MCC: the {TOP_PAIRS} "
        "largest margins per context and scope (counts: scaling_correlation)",
        show=False,
    )
    head = select(sc, regime=ctx.main_regime, **ctx.main_sel)
    page.table(
        "scaling_headline",
        head,
        f"Spearman between log10(parameters) and macro-MCC, {label}",
    )
    ov = head[head["scope"] == "overall"].iloc[0]
    page.p(
        f"Overall: rho = {ov['spearman_rho']:.2f} (p = {ov['spearman_p']:.3g}, "
        f"{int(ov['n_models'])} models); in {int(ov['n_smaller_better'])} of "
        f"{int(ov['n_pairs_size_ratio'])} "
        "pairs with a size ratio of at least 5 the smaller model scores higher."
    )
    ph = select(pairs, regime=ctx.main_regime, **ctx.main_sel)
    ph = ph[ph["scope"] == "overall"]
    if len(ph):
        page.table(
            "smaller_beats_larger_headline",
            ph[
                [
                    "smaller_model",
                    "larger_model",
                    "size_ratio",
                    "macro_mcc_smaller",
                    "macro_mcc_larger",
                ]
            ],
            f"Smaller model ahead (overall, headline probe; the {TOP_PAIRS} largest margins)",
        )
    pts = select(ctx.agg_main, regime=ctx.main_regime)
    pts = pts[(pts["scope"] == "overall") & pts["model"].isin(sized)]
    page.figure(
        figures.scaling_scatter(
            pts,
            page.figure_path("scaling.png"),
            f"{label}: Spearman rho = {ov['spearman_rho']:.2f} (p = {ov['spearman_p']:.3g})",
        ),
        "macro-MCC against parameter count",
    )


def _groups(page: Page, ctx: ReportContext) -> None:
    info, meta = ctx.info, ctx.meta
    group_cols = [c for c in GROUP_COLUMNS if info is not None and c in meta.columns]
    if info is None:
        page.p(
            "No --model-properties file with columns of its own (architecture, tokenization, "
            "pretraining_data) was given: no matched comparisons by them.",
            "note",
        )
        return
    if not group_cols:
        page.left_out(
            "the model-properties file has none of the columns "
            f"{', '.join(GROUP_COLUMNS)}, so there are no matched comparisons."
        )
        return
    ov = select(ctx.agg_main, regime=ctx.main_regime)
    ov = ov[ov["scope"] == "overall"]
    groups = metadata_groups(ov, meta, group_cols)
    if groups.empty:
        page.left_out(
            "no value of "
            + ", ".join(group_cols)
            + " is shared by two models, so there is nothing to match."
        )
        return
    page.table(
        "metadata_groups",
        groups,
        "Matched comparisons: models ranked within groups sharing a property "
        f"({regime_label(ctx.main_regime)}, overall macro-MCC)",
    )


def _with_and_without(page: Page, ctx: ReportContext) -> None:
    """Scaling with every sized model and, when models are named, without them: overall and
    per category, side by side (GENEB reports both: with and without its outlier)."""
    variants: list[tuple[str, Sequence[str]]] = [("all", ())]
    if ctx.scaling_exclude:
        variants.append(("without " + ", ".join(ctx.scaling_exclude), ctx.scaling_exclude))
    parts = [scaling_correlation(ctx.agg, exclude=excl).assign(models=name)
             for name, excl in variants]
    both = pd.concat(parts, ignore_index=True)
    cols = ["models", *[c for c in both.columns if c != "models"]]
    both = both[cols].drop(columns=["n_pairs_size_ratio", "n_smaller_better"])
    page.table("scaling_variants", both, "Scaling with every sized model and without the "
               "named ones, per context and scope", show=False)
    head = select(both, regime=ctx.main_regime, **ctx.main_sel)
    head = head.assign(_o=head["scope"] != "overall").sort_values(["_o", "scope"], kind="stable")
    page.table(
        "scaling_variants_headline",
        head[["models", "scope", "n_models", "spearman_rho", "spearman_p"]],
        f"Spearman between log10(parameters) and macro-MCC, {regime_label(ctx.main_regime)}: "
        "every sized model" + (" and without " + ", ".join(ctx.scaling_exclude)
                               if ctx.scaling_exclude else ""),
    )
