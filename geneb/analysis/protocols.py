"""Comparing the two linear-probe protocols of one results table: converged vs paper.

``geneb probe --protocol paper`` records the GENEB paper's literal probe beside geneb's
converged one (``protocol`` column, part of a cell's identity). A user checking a published
number wants to know how far the two land apart and whether the conclusions (model rankings)
change. :func:`compare_protocols` answers both from the table alone:

* ``cells``: every linear cell present under both protocols, with both MCCs, their difference
  (paper - converged) and the paper fit's convergence warnings;
* ``summary``: per (regime, C, standardize): cells compared, mean and largest |difference|,
  share of cells more than 0.01 apart, paper cells that warned;
* ``ranks``: per (task, regime, C, standardize): Kendall's tau between the model rankings (by
  MCC averaged over seeds) under the two protocols; and the same per (regime, C, standardize)
  for the overall ranking (mean over the common tasks), task ``"(all tasks)"``.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pandas as pd

from geneb.analysis.table import load_results

CELL: tuple[str, ...] = ("model", "task", "regime", "seed", "C", "standardize")
GROUP: tuple[str, ...] = ("regime", "C", "standardize")
ALL_TASKS = "(all tasks)"


def compare_protocols(
    results: str | os.PathLike[str] | pd.DataFrame,
) -> dict[str, pd.DataFrame]:
    """Compare the paper protocol's linear probes with the converged ones, cell by cell.

    Parameters
    ----------
    results : str, os.PathLike or pandas.DataFrame
        A results table holding both protocols' rows (``geneb probe --protocol paper`` and
        the default).

    Returns
    -------
    dict of str to pandas.DataFrame
        The ``cells``, ``summary`` and ``ranks`` tables (see the module docstring); empty
        tables (with their columns) when the table holds only one protocol.
    """
    df = load_results(results)
    lin = df[df["probe"] == "linear"]
    conv = lin[lin["protocol"] == "converged"]
    paper = lin[lin["protocol"] == "paper"]
    warn = (paper["n_convergence_warnings"] if "n_convergence_warnings" in paper.columns
            else pd.Series(np.nan, index=paper.index))
    cells = conv[list(CELL) + ["mcc"]].merge(
        paper[list(CELL) + ["mcc"]].assign(paper_warnings=warn.to_numpy()),
        on=list(CELL), suffixes=("_converged", "_paper"),
    )
    cells["mcc_diff"] = cells["mcc_paper"] - cells["mcc_converged"]
    cells = cells.sort_values(list(CELL), kind="stable").reset_index(drop=True)
    return {"cells": cells, "summary": _summary(cells), "ranks": _ranks(cells)}


def _summary(cells: pd.DataFrame) -> pd.DataFrame:
    cols = [*GROUP, "n_cells", "mean_abs_diff", "max_abs_diff", "share_over_0.01",
            "paper_cells_warned"]
    if cells.empty:
        return pd.DataFrame(columns=cols)
    rows = []
    for key, g in cells.groupby(list(GROUP), sort=True):
        d = g["mcc_diff"].abs()
        rows.append([*key, len(g), float(d.mean()), float(d.max()), float((d > 0.01).mean()),
                     int((g["paper_warnings"].fillna(0) > 0).sum())])
    return pd.DataFrame(rows, columns=cols)


def _kendall(a: np.ndarray, b: np.ndarray) -> float:
    """Kendall's tau-b of two score vectors over the same models (nan for < 2 models)."""
    if len(a) < 2:
        return float("nan")
    from scipy.stats import kendalltau

    return float(kendalltau(a, b).statistic)


def _ranks(cells: pd.DataFrame) -> pd.DataFrame:
    cols = ["task", *GROUP, "n_models", "kendall_tau", "same_best_model"]
    if cells.empty:
        return pd.DataFrame(columns=cols)
    per = (cells.groupby(["task", *GROUP, "model"], sort=True)[["mcc_converged", "mcc_paper"]]
           .mean().reset_index())
    rows = []
    for key, g in per.groupby(["task", *GROUP], sort=True):
        rows.append(_rank_row(key[0], key[1:], g))
    # overall: mean over the tasks every model has in this context
    for key, g in per.groupby(list(GROUP), sort=True):
        n_models = g["model"].nunique()
        counts = g.groupby("task")["model"].nunique()
        common = counts[counts == n_models].index
        agg = g[g["task"].isin(common)].groupby("model")[["mcc_converged", "mcc_paper"]].mean()
        rows.append(_rank_row(ALL_TASKS, key, agg.reset_index()))
    return pd.DataFrame(rows, columns=cols)


def _rank_row(task: str, key: tuple[Any, ...], g: pd.DataFrame) -> list[Any]:
    a, b = g["mcc_converged"].to_numpy(), g["mcc_paper"].to_numpy()
    models = g["model"].to_numpy()
    same = bool(len(g)) and models[np.argmax(a)] == models[np.argmax(b)]
    return [task, *key, len(g), _kendall(a, b), same]
