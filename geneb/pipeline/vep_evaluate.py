"""``geneb vep evaluate``: metrics of score tables, and optionally their offline page.

Here (the interface layer) because it joins the VEP metrics (``geneb.vep``) with the report's
page writer (``geneb.analysis.report``), which the analysis layers may not import.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from geneb.constraints import validate_params
from geneb.protocol import BOOT_SEED, N_BOOT_METRIC
from geneb.vep.evaluate import EVALUATE_PARAMS


@dataclass
class VepEvaluation:
    """Metrics per (task, model, scorer, window), warnings about left-out variants, and the
    files written (none without ``out``)."""

    metrics: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)


@validate_params(EVALUATE_PARAMS)
def evaluate_scores(
    scores: Sequence[str | os.PathLike[str]],
    *,
    out: str | os.PathLike[str] | None = None,
    n_boot: int = N_BOOT_METRIC,
    boot_seed: int = BOOT_SEED,
) -> VepEvaluation:
    """AUROC / AUPRC (/ Spearman) with bootstrap intervals of score tables from ``geneb vep
    score`` or ``vep probe``, on the variants every table of a task scored.

    Parameters
    ----------
    scores : sequence of path
        Score tables (``.parquet`` or ``.csv``), all checked before any work.
    out : path, optional
        A folder for ``tables/vep_metrics.csv``, the ROC figure and ``vep_report.html``
        (created when missing).
    n_boot : int
        Bootstrap resamples of each interval (at least 100).
    boot_seed : int
        Seed of the bootstrap.

    Returns
    -------
    VepEvaluation
        The metrics table (as ``vep_metrics.csv`` holds it), the notes, the files written.
    """
    from geneb.vep.evaluate import common_variants, evaluate
    from geneb.vep.io import read_scores

    df = read_scores([Path(p) for p in scores])
    notes = list(common_variants(df)[1])
    if out is None:
        return VepEvaluation(evaluate(df, n_boot=n_boot, boot_seed=boot_seed), notes)
    from geneb.analysis.report.vep_section import vep_page
    from geneb.vep.summary import summarise

    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    _, files = vep_page(summarise(df, n_boot=n_boot, boot_seed=boot_seed), folder)
    metrics = pd.read_csv(folder / "tables" / "vep_metrics.csv")
    return VepEvaluation(metrics, notes, files)
