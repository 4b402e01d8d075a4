"""Regression tasks: ridge probes scored by Spearman / Pearson / R^2, apart from MCC."""

from __future__ import annotations

import pandas as pd

from geneb.analysis.regression import regression_summary
from geneb.analysis.report.context import ReportContext
from geneb.analysis.report.page import Page


def regression(page: Page, ctx: ReportContext) -> None:
    """Per regression task, model and alpha: the metrics with bootstrap intervals."""
    regression_section(page, ctx.extra.get("regression"))


def regression_section(page: Page, reg: pd.DataFrame | None) -> None:
    """The section from the table's ridge rows (``geneb.analysis.regression``)."""
    if reg is None or reg.empty:
        return  # no regression task in the table: nothing to say
    page.h(2, "Regression tasks")
    page.p("Tasks with continuous labels are probed by ridge regression over the alpha sweep "
           "(full training data; k-shot is undefined without classes, and the fit does not "
           "depend on the seed). Scores: Spearman, Pearson and R^2 on the test split with 95% "
           "bootstrap intervals over test rows. They are reported here only: never averaged "
           "or ranked with the classification tasks' MCC.")
    page.table("regression", regression_summary(reg),
               "Regression tasks: Spearman, Pearson and R^2 per model and alpha")
