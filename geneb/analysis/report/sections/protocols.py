"""Converged vs paper protocol: how far GENEB's literal probe lands from the optimum."""

from __future__ import annotations

from geneb.analysis.protocols import ALL_TASKS, compare_protocols
from geneb.analysis.report.context import ReportContext
from geneb.analysis.report.page import Page


def protocols(page: Page, ctx: ReportContext) -> None:
    """Per-cell MCC differences and ranking agreement, when the table holds both protocols.

    Only shown when ``geneb probe --protocol paper`` rows sit beside converged ones: the other
    sections use the converged rows alone, so this is where the paper's setting appears.
    """
    if "protocol" not in ctx.df_all.columns or ctx.df_all["protocol"].nunique() < 2:
        return
    cmp = compare_protocols(ctx.df_all)
    page.h(2, "Converged vs paper protocol")
    page.p(
        "Every other section uses the converged probes. The paper protocol is scikit-learn's "
        "LogisticRegression(C, max_iter=1000) at its defaults on the same rows; below: the "
        "per-cell MCC difference (paper - converged) and Kendall's tau between the model "
        "rankings under the two protocols."
    )
    if cmp["cells"].empty:
        page.left_out("no cell was probed under both protocols (same model, task, regime, "
                      "seed, C and standardisation).")
        return
    page.table("protocol_cells", cmp["cells"], "Per cell: MCC under both protocols", show=False)
    page.table("protocol_summary", cmp["summary"],
               "MCC difference (paper - converged) per regime and C")
    ranks = cmp["ranks"]
    page.table("protocol_rank_agreement", ranks[ranks["task"] == ALL_TASKS],
               "Kendall's tau of the overall model ranking (mean over common tasks)")
    page.table("protocol_rank_agreement_tasks", ranks,
               "Kendall's tau of the model ranking per task", show=False)
