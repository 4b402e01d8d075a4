"""Controlled comparisons: model properties, matched pairs, capacity tiers, in-domain scale.

Every number also goes into ``ctx.summary`` (what ``geneb report --json`` prints), under the
keys ``model_properties``, ``matched_pairs``, ``matched_pairs_summary``, ``tiers`` and
``smaller_beats_larger`` (``all`` and ``in_domain``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from geneb.analysis import figures
from geneb.analysis.capacity import tier_fewshot, tier_gains, tier_labels, tier_scores
from geneb.analysis.domain import COVERS, smaller_beats_larger_in_domain
from geneb.analysis.matched import (
    ALL,
    find_matched_pairs,
    first_pairs,
    largest_differences,
    matched_pair_scores,
    matched_pair_summary,
    unmatched_models,
)
from geneb.analysis.properties import unused_user_models
from geneb.analysis.report.context import ReportContext
from geneb.analysis.report.page import Page, regime_label
from geneb.analysis.scaling import TOP_PAIRS

FACTOR = 5.0


def records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """JSON-ready rows: NaN -> None, numpy scalars -> Python, tuples -> lists."""

    def conv(v: Any) -> Any:
        if isinstance(v, tuple):
            return list(v)
        if isinstance(v, np.generic):
            v = v.item()
        if isinstance(v, float) and np.isnan(v):
            return None
        return v

    return [{k: conv(v) for k, v in r.items()} for r in df.to_dict("records")]


def controlled(page: Page, ctx: ReportContext) -> None:
    """Properties used, matched pairs, capacity tiers and the in-domain scale comparison."""
    page.h(2, "Controlled comparisons")
    props = ctx.props
    ctx.summary.update(matched_pairs=[], matched_pairs_summary=[], tiers={})
    ctx.summary["smaller_beats_larger"] = {"all": {}, "in_domain": {}}
    shown = props.assign(
        organisms=props["organisms"].map(lambda o: "; ".join(o) if isinstance(o, tuple) else o)
    )
    page.table(
        "model_properties",
        shown,
        "Model properties used (value and source: --model-properties file, else the geneb "
        "model catalogue, else the count measured on the loaded backbone)",
    )
    unused = unused_user_models(ctx.user_props, ctx.models)
    if unused:
        page.p(f"In the --model-properties file but not in the results: {', '.join(unused)}.")
    ctx.summary["model_properties"] = records(props)
    if not ctx.has_linear:
        page.left_out("the controlled comparisons use the linear probe; the table has none.")
        return
    agg_main = ctx.agg_main
    _matched(page, ctx, agg_main)
    _tiers(page, ctx, agg_main)
    _in_domain(page, ctx)


def _matched(page: Page, ctx: ReportContext, agg_main: pd.DataFrame) -> None:
    page.h(3, "Matched pairs")
    page.p(
        "Two models form a matched pair when architecture class, tokenization class and "
        "pretraining-data class are known for both, and they differ in exactly one of them. "
        "model_a holds the value that sorts first; mcc = the model's mean over a category's "
        "tasks of the per-task MCC (mean over seeds), category 'all' = the macro over "
        "categories; sign test: two-sided binomial (p = 1/2) over the pairs without a tie."
    )
    pairs = find_matched_pairs(ctx.props)
    unmatched = unmatched_models(ctx.props)
    if len(unmatched):
        page.table("unmatched_models", unmatched, "Models in no pair (a property unknown)")
    items = matched_pair_scores(agg_main, pairs)
    summary = matched_pair_summary(items)
    shown = largest_differences(items, TOP_PAIRS)
    ctx.summary["matched_pairs"] = records(shown)
    ctx.summary["n_matched_pairs"] = len(pairs)
    ctx.summary["matched_pairs_summary"] = records(summary)
    if pairs.empty:
        page.left_out("no two models of the results differ in exactly one property.")
        return
    page.p(f"{len(pairs)} matched pairs; every count and test below is over all of them, the "
           f"pair tables list at most {TOP_PAIRS} per contrast (and per category and regime "
           "for the scores: the largest differences).")  # fmt: skip
    page.table("matched_pairs", first_pairs(pairs, TOP_PAIRS), "Matched pairs (the first "
               f"{TOP_PAIRS} per contrast)")  # fmt: skip
    page.table("matched_pair_scores", shown, "Matched pairs: scores per category (the "
               f"{TOP_PAIRS} largest differences per contrast, category and regime)",
               show=False)  # fmt: skip
    head = summary[summary["regime"] == ctx.main_regime]
    page.table(
        "matched_pair_summary",
        summary,
        "Matched pairs per contrast and category: mean macro-MCC difference (a - b), "
        "k_a of n_pairs favour value_a, sign test",
    )
    over = head[head["category"] == ALL]
    if len(over):
        labels = [f"{r.value_a} vs {r.value_b}" for r in over.itertuples()]
        page.figure(
            figures.labelled_bars(
                labels,
                over["mean_diff"].to_numpy(dtype=float),
                page.figure_path("matched_pairs.png"),
                f"{regime_label(ctx.main_regime)}: matched pairs, overall",
                "mean macro-MCC difference (a - b)",
            ),
            "mean macro-MCC difference per matched-pair contrast",
        )


def _tiers(page: Page, ctx: ReportContext, agg_main: pd.DataFrame) -> None:
    edges = ctx.tier_edges
    page.h(3, "Capacity tiers")
    page.p(
        f"Tiers {', '.join(tier_labels(edges))} by parameter count (each tier includes its "
        "upper edge); tier score = mean overall macro-MCC of its models; gain intervals: "
        f"bootstrap over models within each tier ({ctx.n_boot} resamples, seed "
        f"{ctx.boot_seed}); few-shot degradation = mean of (full - k-shot) / full."
    )
    scores = tier_scores(agg_main, ctx.props, edges)
    gains = tier_gains(
        agg_main, ctx.props, edges, n_boot=ctx.n_boot, seed=ctx.boot_seed, alpha=ctx.alpha
    )
    few = tier_fewshot(agg_main, ctx.props, edges)
    ctx.summary["tiers"] = {
        "edges": list(edges),
        "labels": tier_labels(edges),
        "scores": records(scores),
        "gains": records(gains),
        "fewshot": records(few),
    }
    if scores.empty:
        page.left_out("no model of the results has a parameter count.")
        return
    page.table("tier_scores", scores, "Macro-MCC per capacity tier")
    if len(gains):
        page.table("tier_gains", gains, f"Gain between tiers ({1 - ctx.alpha:.0%} interval)")
    if len(few):
        page.table("tier_fewshot", few, "Few-shot relative degradation per tier")
    head = scores[scores["regime"] == ctx.main_regime]
    if len(head):
        page.figure(
            figures.labelled_bars(
                list(head["tier"]),
                head["mean_macro_mcc"].to_numpy(dtype=float),
                page.figure_path("tiers.png"),
                f"{regime_label(ctx.main_regime)}: macro-MCC per capacity tier",
                "mean macro-MCC",
            ),
            "macro-MCC per capacity tier",
        )


def _in_domain(page: Page, ctx: ReportContext) -> None:
    page.h(3, f"Smaller beats larger (size ratio >= {FACTOR:g}), in domain")
    page.p(
        "A model is in domain for a task when its pretraining-data class covers the task's "
        "organism class ("
        + "; ".join(f"{k}: {', '.join(sorted(v)) or 'none'}" for k, v in COVERS.items())
        + "). In-domain pairs are compared on the tasks in the domain of both models."
    )
    res = smaller_beats_larger_in_domain(ctx.perf_main, ctx.props, ctx.organisms,
                                         factor=FACTOR, top=TOP_PAIRS)  # fmt: skip
    no_org = sorted(set(ctx.perf_main["task"]) - set(ctx.organisms))
    if no_org:
        page.p(f"Tasks without an organism class (in no model's domain): {', '.join(no_org)}.")
    out: dict[str, Any] = {"factor": FACTOR, "tasks_without_organism": no_org,
                           "top_pairs": TOP_PAIRS}  # fmt: skip
    by_regime = {str(r["regime"]): r for r in res["counts"].to_dict("records")}
    for key in ("all", "in_domain"):
        counts = {reg: {"n_pairs": int(c[f"n_pairs_{key}"]),
                        "n_smaller_better": int(c[f"n_smaller_better_{key}"])}
                  for reg, c in by_regime.items()}  # fmt: skip
        out[key] = {"counts": counts, "pairs": records(res[key])}
        head = counts.get(ctx.main_regime, {"n_pairs": 0, "n_smaller_better": 0})
        page.p(
            f"{'All tasks' if key == 'all' else 'In domain'} ({regime_label(ctx.main_regime)}): "
            f"the smaller model is ahead in {head['n_smaller_better']} of {head['n_pairs']} "
            "pairs."
        )
        page.table(f"smaller_beats_larger_{key}", res[key],
                   f"Pairs compared ({key}): the {TOP_PAIRS} largest margins per regime "
                   "(counts: smaller_beats_larger_counts)", show=False)  # fmt: skip
    page.table("smaller_beats_larger_counts", res["counts"], "Pairs compared per regime",
               show=False)  # fmt: skip
    out["in_domain"]["excluded"] = records(res["excluded"])
    out["in_domain"]["n_excluded"] = {str(r): int(n) for r, n in
                                      zip(res["counts"]["regime"], res["counts"]["n_excluded"],
                                          strict=True)}  # fmt: skip
    if len(res["excluded"]):
        page.table("smaller_beats_larger_excluded", res["excluded"],
                   f"Excluded from in domain (the first {TOP_PAIRS} per regime; "
                   "n_excluded in smaller_beats_larger_counts)")  # fmt: skip
    ctx.summary["smaller_beats_larger"] = out
