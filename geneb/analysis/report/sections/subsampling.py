"""Subsampling stability: MCC against training-subsample size (``geneb probe-subsample``)."""

from __future__ import annotations

from geneb.analysis import figures
from geneb.analysis.report.context import ReportContext
from geneb.analysis.report.page import Page
from geneb.analysis.report.sections.controlled import records


def subsampling(page: Page, ctx: ReportContext) -> None:
    """The curve given with --subsampling: summary per size, stabilised or not, a figure."""
    curve = ctx.extra.get("subsampling")
    if curve is None:
        return
    from geneb.probe.subsample import STABLE_TOL, stability_summary

    page.h(2, "Subsampling stability")
    summary = stability_summary(curve)
    page.p(
        "Linear probe fitted on stratified train subsamples of several sizes (the same seeds "
        "at each size; geneb probe-subsample). Stabilised: the mean MCC at the largest size "
        f"differs from the next smaller size by at most {STABLE_TOL}."
    )
    page.table("subsampling_curve", curve, "Subsampling: one row per fit", show=False)
    page.table("subsampling_summary", summary, "Mean MCC over seeds per subsample size")
    ctx.summary["subsampling"] = {"curve": records(curve), "summary": records(summary)}
    several_c = summary["C"].nunique() > 1
    series = {
        f"{m} / {t}" + (f" / C={c:g}" if several_c else ""): g
        for (m, t, c), g in summary.groupby(["model", "task", "C"], sort=True)
    }
    page.figure(
        figures.size_curves(series, page.figure_path("subsampling.png"),
                            "MCC against training-subsample size"),  # fmt: skip
        "mean MCC over seeds against training-subsample size",
    )
