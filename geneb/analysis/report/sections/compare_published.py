"""Compared with GENEB's published leaderboard (``geneb report --compare geneb``): the user's
models ranked among GENEB's 41 on the tasks both have, per regime and category, with the
comparability panel (:mod:`geneb.analysis.compare_published`)."""

from __future__ import annotations

import pandas as pd

from geneb.analysis.aggregates import OVERALL
from geneb.analysis.compare_published import Comparison
from geneb.analysis.report.context import ReportContext
from geneb.analysis.report.page import Page, regime_label
from geneb.analysis.report.sections.controlled import records

#: Columns of the page's ranking tables (the CSV has every column).
SHOWN = ["rank", "rank_ci_low", "rank_ci_high", "model", "source", "n_params", "n_tasks",
         "macro_mcc", "micro_mcc", "published_macro_mcc", "published_rank"]


def compare_published(page: Page, ctx: ReportContext) -> None:
    """The comparison asked with --compare; nothing without it."""
    comp = ctx.extra.get("compare")
    if comp is None:
        return
    page.h(2, "Compared with GENEB's published leaderboard")
    page.p(f"Published source: {comp.source} (each value GENEB's mean over its five seeds). "
           f"Your models: {', '.join(comp.user_models)}. Every model is scored on the common "
           "set of each regime (the GENEB tasks all your models have), with GENEB's own "
           "categories; ranks 1 = best among all models, intervals from "
           f"{ctx.n_boot} resamples of the common tasks within categories.")
    page.p(comp.notes[0])  # only paper-protocol rows are compared: said once, plainly
    for note in comp.notes[1:]:
        page.p(note, "note")
    ranks = comp.ranks
    for regime in [r for r in ("full", "10", "1") if r in set(ranks.get("regime", []))]:
        _regime(page, ctx, comp, regime)
    page.table("compare_ranks", ranks, "Every model, regime and scope (overall and each "
               "category) on the common set", show=False)
    page.table("compare_common_tasks", comp.common, "GENEB's tasks and whether each is in the "
               "common set, per regime", show=False)
    page.table("compare_categories", comp.categories, "GENEB's categories: tasks in the "
               "common set, complete or not, the missing ones", show=False)
    page.table("compare_comparability", comp.comparability,
               "Comparability: how your compared rows were made, against GENEB's")
    if len(comp.excluded):
        page.table("compare_excluded", comp.excluded, "Your rows left out of the comparison")
    ctx.summary["compare_geneb"] = {
        "source": comp.source, "notes": comp.notes,
        "ranks": records(ranks[(ranks["source"] == "user")]),
        "categories": records(comp.categories[~comp.categories["complete"]]),
    }


def _shown(df: pd.DataFrame) -> pd.DataFrame:
    """Ranks as whole numbers where they are (percentile bounds may fall between two)."""
    out = df.copy()
    for col in [c for c in ("rank_ci_low", "rank_ci_high", "published_rank") if c in out]:
        v = out[col].astype(float)
        if bool(((v.dropna() % 1) == 0).all()):
            out[col] = v.round().astype("Int64")
    return out


def _regime(page: Page, ctx: ReportContext, comp: Comparison, regime: str) -> None:
    ranks, cats, common = comp.ranks, comp.categories, comp.common
    r = ranks[ranks["regime"] == regime]
    c = cats[cats["regime"] == regime]
    inc = common[(common["regime"] == regime) & common["in_common"]]
    page.h(3, f"{regime_label(regime)}: {len(inc)} of {len(common[common['regime'] == regime])}"
              " GENEB tasks in the common set")
    page.p("Common set: " + ", ".join(
        f"{n if isinstance(n, str) else t}" for t, n in zip(inc["task"], inc["task_name"],
                                                            strict=True)) + ".")
    short = c[(c["n_common"] > 0) & ~c["complete"]]
    absent = c[c["n_common"] == 0]
    if len(short) or len(absent):
        page.p("Flagged: the overall macro-MCC here is over "
               f"{int((c['n_common'] > 0).sum())} of {len(c)} categories"
               + (", of which " + ", ".join(f"{x.category} has {x.n_common} of {x.n_geneb} tasks"
                                              for x in short.itertuples()) if len(short) else "")
               + (f"; no task of {', '.join(absent['category'])}" if len(absent) else "")
               + ". These are not GENEB's headline numbers: every model is scored on the same "
               "tasks, never on a silent average of what each has.", "warning")
    single = c[c["n_common"] == 1]
    if len(single):
        page.p(f"{len(single)} of the common set's categories have a single task "
               f"({', '.join(single['category'])}): the task bootstrap resamples tasks within "
               "categories and cannot vary those, so the rank intervals leave out their "
               "task-to-task variation" + (" (here every category has one task: each interval "
                                           "is a point)." if len(single) == int(
                                               (c["n_common"] > 0).sum()) else "."), "note")
    over = r[r["scope"] == OVERALL].sort_values(["rank", "model"])
    page.table(f"compare_overall_{regime}", _shown(over[SHOWN]),
               f"Overall macro-MCC on the common set, {regime_label(regime)}")
    page.p("published_macro_mcc and published_rank: the published model's score and rank on "
           "all of GENEB's tasks (its leaderboard), for reference.", "note")
    mine = r[(r["source"] == "user") & (r["scope"] != OVERALL)].sort_values(["scope", "model"])
    cols = ["scope", "model", "n_tasks", "n_geneb_tasks", "complete", "macro_mcc", "rank",
            "rank_ci_low", "rank_ci_high", "n_models"]
    page.table(f"compare_user_categories_{regime}", _shown(mine[cols]),
               f"Your models per category, {regime_label(regime)} (complete = the common set "
               "has all of GENEB's tasks of the category)")
