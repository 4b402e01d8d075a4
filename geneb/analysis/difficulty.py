"""Task difficulty: which tasks every model solves, none solves, or models disagree on."""

from __future__ import annotations

import numpy as np
import pandas as pd

from geneb.analysis.table import CONTEXT
from geneb.errors import GenebError

#: GENEB's thresholds on a task's mean MCC over models (easy above, hard below) and on its
#: sd over models (high variance above; the paper's "models disagree most", sd > 0.12).
EASY = 0.70
HARD = 0.35
HIGH_VARIANCE = 0.12


def task_difficulty(
    perf: pd.DataFrame,
    *,
    easy: float = EASY,
    hard: float = HARD,
    high_variance: float = HIGH_VARIANCE,
) -> pd.DataFrame:
    """Per (context, task): mean and sd (ddof=1) of MCC over models, and its class.

    ``difficulty`` is ``easy`` (mean > ``easy``), ``hard`` (mean < ``hard``) or ``medium``;
    ``high_variance`` is sd over models > ``high_variance`` (False with a single model).
    """
    if not hard < easy:
        raise GenebError(f"hard threshold {hard} must be below the easy threshold {easy}")
    out = (
        perf.groupby([*CONTEXT, "task", "category"], dropna=False, sort=True)
        .agg(
            n_models=("model", "nunique"), mean_mcc=("mcc_mean", "mean"), sd_mcc=("mcc_mean", "std")
        )
        .reset_index()
    )
    out["difficulty"] = np.select(
        [out["mean_mcc"] > easy, out["mean_mcc"] < hard], ["easy", "hard"], "medium"
    )
    out["high_variance"] = out["sd_mcc"].fillna(0.0) > high_variance
    return out


def difficulty_summary(
    diff: pd.DataFrame, thresholds: tuple[float, float, float] = (EASY, HARD, HIGH_VARIANCE)
) -> pd.DataFrame:
    """Per context: how many tasks are easy, medium, hard and high-variance, the thresholds
    that made them so (named in the row), and the tasks of each class (``;``-joined, sorted).

    ``diff``: :func:`task_difficulty` output computed with ``thresholds`` = (easy, hard,
    high_variance).
    """
    easy, hard, high_variance = thresholds
    rows = []
    for key, g in diff.groupby(list(CONTEXT), dropna=False, sort=True):
        of = {c: sorted(g.loc[g["difficulty"] == c, "task"]) for c in ("easy", "medium", "hard")}
        hv = sorted(g.loc[g["high_variance"], "task"])
        rows.append((*key, len(g), len(of["easy"]), len(of["medium"]), len(of["hard"]), len(hv),
                     easy, hard, high_variance, ";".join(of["easy"]), ";".join(of["hard"]),
                     ";".join(hv)))
    return pd.DataFrame(rows, columns=[
        *CONTEXT, "n_tasks", "n_easy", "n_medium", "n_hard", "n_high_variance",
        "easy_threshold", "hard_threshold", "high_variance_threshold", "easy_tasks",
        "hard_tasks", "high_variance_tasks",
    ])


def top_placements(perf: pd.DataFrame, tasks: list[str], props: pd.DataFrame,
                   prop: str = "pretraining_data_class", top: int = 3) -> pd.DataFrame:
    """Per context and task of ``tasks``: the ``top`` models by MCC (ties broken by name) and
    their ``prop`` (from :func:`geneb.analysis.properties.resolve_properties`; None unknown).

    Columns: the context, task, place (1 = best), model, mcc_mean and the property.
    """
    value = dict(zip(props["model"], props[prop], strict=True))
    sub = perf[perf["task"].isin(tasks)]
    rows = []
    for key, g in sub.groupby([*CONTEXT, "task"], dropna=False, sort=True):
        g = g.sort_values(["mcc_mean", "model"], ascending=[False, True]).head(top)
        for place, r in enumerate(g.itertuples(index=False), start=1):
            rows.append((*key, place, r.model, float(r.mcc_mean), value.get(r.model)))
    return pd.DataFrame(rows, columns=[*CONTEXT, "task", "place", "model", "mcc_mean", prop])
