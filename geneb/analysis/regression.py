"""Regression tasks in analysis: ridge rows kept apart from the classification analyses.

Why apart: a regression task's scores are Spearman / Pearson / R^2, not MCC, so its rows
(``probe == "ridge"``; ``geneb.probe.ridge_probe``) are removed from the table every MCC
analysis reads (``geneb.analysis.table.load_results``) and summarised here, in their own
table and report section: never averaged with, ranked against or plotted beside an MCC.
"""

from __future__ import annotations

import os

import pandas as pd

from geneb.analysis.table import _read_parquet, is_regression_row
from geneb.results.schema import CELL_IDENTITY, analysis_rows

#: Columns of the regression summary (one row per task, model, alpha, standardisation).
SUMMARY = ["task", "model", "alpha", "standardize", "n_train", "n_test", "spearman",
           "spearman_lo", "spearman_hi", "pearson", "pearson_lo", "pearson_hi", "r2", "r2_lo",
           "r2_hi"]


def load_regression(results: str | os.PathLike[str] | pd.DataFrame) -> pd.DataFrame:
    """The ridge rows of a results table (the newest row per cell), possibly empty."""
    from pathlib import Path

    df = results.copy() if isinstance(results, pd.DataFrame) else _read_parquet(Path(results))
    if "probe" not in df:
        return df.iloc[0:0]
    reg = df[is_regression_row(df)].reset_index(drop=True)
    order = reg["created"].astype(str).tolist() if "created" in reg else None
    keep = analysis_rows({c: reg[c].tolist() for c in CELL_IDENTITY if c in reg}, order)
    return reg.iloc[keep].reset_index(drop=True)


def regression_summary(reg: pd.DataFrame) -> pd.DataFrame:
    """One row per (task, model, alpha, standardise): the metrics and their intervals.

    Full-data ridge fits do not depend on the seed, so the seeds' rows are identical and the
    first one stands for them."""
    if reg.empty:
        return pd.DataFrame(columns=SUMMARY)
    cols = [c for c in SUMMARY if c in reg]
    g = reg.sort_values(["task", "model", "alpha", "seed"], kind="stable")
    return g.drop_duplicates(["task", "model", "alpha", "standardize"])[cols].reset_index(
        drop=True)
