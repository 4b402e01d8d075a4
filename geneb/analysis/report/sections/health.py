"""Fit health: cells whose fit did not converge, listed (and kept in every analysis)."""

from __future__ import annotations

from geneb.analysis.report.context import ReportContext
from geneb.analysis.report.page import Page


def health(page: Page, ctx: ReportContext) -> None:
    """Non-converged cells, or a sentence saying every fit converged."""
    bad = ctx.data[~ctx.data["converged"]]
    page.h(2, "Cells that did not converge")
    if ctx.seed_means:
        page.p("The rows are published means over seeds, not fits: whether each fit converged "
               "is not recorded in them.")
        return
    if bad.empty:
        page.p("Every fit in the table converged.")
        return
    cols = [c for c in ("model", "task", "regime", "seed", "C", "probe", "backend", "precision",
                        "protocol", "n_iter") if c in bad.columns]
    # "protocol" holds the protocol asked for (its name "converged" read as a verdict on rows
    # that did not converge): shown under a name that says so
    table = bad[cols].rename(columns={"protocol": "asked_protocol"})
    for c in ("seed", "n_iter"):  # stored as floats by the table loader; whole numbers here
        if c in table and table[c].notna().all():
            table[c] = table[c].round().astype("int64")
    n_mlp = int((bad["probe"] == "mlp").sum()) if "probe" in bad.columns else 0
    page.p(
        "These cells' fits stopped at their iteration limit (n_iter) before meeting the solver's "
        "tolerance; each score is that of the last iterate and is kept"
        + (f"; {n_mlp} are MLP cells, which often stop there on few-shot rows (few rows, a "
           "loss still falling slowly)" if n_mlp else "")
        + ". asked_protocol is the protocol each fit was run under, not a verdict on it."
    )
    page.table(
        "nonconverged",
        table,
        f"{len(bad)} cells did not converge (kept in every analysis, not hidden)",
        keep=("probe", "C"),  # an MLP row must not read as a logistic regression
    )
