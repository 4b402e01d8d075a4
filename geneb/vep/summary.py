"""The variant-effect results as plain data for the report section.

Why here: the report (``geneb.analysis.report.vep_section``) reads vep outputs only as plain
data (tables, lists of curve points), never by importing ``geneb.vep``; the interface layer
(``geneb vep evaluate``, ``geneb run``) calls :func:`summarise` and hands its dict over.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from geneb.protocol import BOOT_SEED
from geneb.protocol import N_BOOT_METRIC as N_BOOT
from geneb.vep.evaluate import (
    auroc,
    common_variants,
    evaluate,
    oriented,
    roc_points,
)


def _curves(scores: pd.DataFrame, task: str) -> list[tuple[str, Any, Any]]:
    """ROC curves of every (model, scorer, window) on one task: (legend label, fpr, tpr)."""
    out = []
    ok = scores[(scores["task"] == task) & (scores["status"] == "ok")]
    for (m, s, w), g in ok.groupby(["model", "scorer", "window"], sort=True):
        y, sc = g["label"].to_numpy(), oriented(g)
        if len(pd.unique(y)) < 2:
            continue
        fpr, tpr = roc_points(y, sc)
        out.append((f"{m} {s} w{w} ({auroc(y, sc):.3f})", fpr, tpr))
    return out


def summarise(scores: pd.DataFrame, *, n_boot: int = N_BOOT, seed: int = BOOT_SEED
              ) -> dict[str, Any]:
    """Metrics (bootstrap CIs), per-status counts, notes and ROC curves of the score tables.

    Keys: ``metrics`` and ``status`` (DataFrames), ``notes`` (warnings about variants left
    out), ``supervised`` (any ``probe-*`` scorer), ``curves`` (task -> list of (label, fpr,
    tpr), every task present), ``n_boot`` and ``seed``."""
    metrics = evaluate(scores, n_boot=n_boot, seed=seed)
    scores, notes = common_variants(scores)  # the ROC curves: the variants the metrics use
    status = (scores.groupby(["task", "model", "scorer", "window", "status"]).size()
              .rename("n").reset_index())
    return {
        "metrics": metrics,
        "status": status,
        "notes": list(notes),
        "supervised": bool(scores["scorer"].astype(str).str.startswith("probe-").any()),
        "curves": {task: _curves(scores, task) for task in sorted(scores["task"].unique())},
        "n_boot": n_boot,
        "seed": seed,
    }
