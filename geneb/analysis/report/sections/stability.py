"""Probe stability: the linear probe at the headline C against the MLP probe."""

from __future__ import annotations

from geneb.analysis import figures
from geneb.analysis.report.context import ReportContext
from geneb.analysis.report.page import Page, fmt_c, regime_label
from geneb.analysis.stability import paired_probe_scores, per_task_probe_agreement, probe_stability
from geneb.analysis.table import regime_order


def stability(page: Page, ctx: ReportContext) -> None:
    """Paired linear/MLP scores, their agreement per regime and a scatter plot."""
    page.h(2, "Probe stability: linear vs MLP")
    data, main_c = ctx.data, ctx.main_c
    if not ctx.has_linear:
        page.left_out(
            f"the cells used have no linear-probe rows{ctx.other_setting('linear')}, so there "
            "is nothing to compare the MLP probe with."
        )
        return
    if (data["probe"] == "mlp").sum() == 0:
        other = ctx.other_setting("mlp")
        page.left_out(
            (f"the cells used have no MLP-probe rows{other}, so " if other else
             "the results have no MLP-probe rows (run geneb probe --probe mlp), so ")
            + "linear and MLP rankings cannot be compared."
        )
        return
    assert main_c is not None  # has_linear says so
    paired = paired_probe_scores(data, C=main_c, standardize=ctx.std)
    if paired.empty:
        page.left_out(
            "no (regime, model, task, seed) has both a linear fit at "
            f"C = {fmt_c(main_c)} and an MLP fit, so the probes cannot be compared."
        )
        return
    page.table(
        "probe_paired_scores", paired, "Linear and MLP MCC per model-task pair", show=False
    )
    page.table(
        "probe_per_task_agreement",
        per_task_probe_agreement(paired),
        "Per-task Spearman between linear and MLP",
        show=False,
    )
    page.table("probe_stability", probe_stability(paired), "Linear vs MLP agreement per regime")
    if len(ctx.models) < 3:
        page.p("With fewer than three models the Spearman statistics are NaN.", "note")
    pr = "full" if "full" in set(paired["regime"]) else regime_order(paired["regime"])[-1]
    page.figure(
        figures.probe_scatter(
            paired[paired["regime"] == pr],
            page.figure_path("linear_vs_mlp.png"),
            f"{regime_label(pr)}, linear C = {fmt_c(main_c)}",
        ),
        "MLP against linear probe MCC per model-task pair",
    )
