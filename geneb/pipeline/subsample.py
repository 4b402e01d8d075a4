"""``geneb probe-subsample``: the subsampling curve of every (model, task) asked for.

Here (the interface layer) because the curve CSV is written with the report's cell escaping
(``geneb.analysis.report.page.csv_safe``), which the probe layer may not import.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import pandas as pd

from geneb.constraints import validate_params
from geneb.probe.subsample import STABLE_TOL, SUBSAMPLE_PARAMS, TOL
from geneb.protocol import DEFAULT_C, DEFAULT_SEEDS


@dataclass
class SubsampleStudy:
    """The curve (one row per fit), its stability summary, and the pairs left out (why)."""

    curve: pd.DataFrame
    summary: pd.DataFrame
    skipped: list[str] = field(default_factory=list)


@validate_params({**SUBSAMPLE_PARAMS, "tol": TOL})
def subsample_study(
    store: str | os.PathLike[str],
    models: Sequence[str],
    tasks: Sequence[str],
    *,
    sizes: str | Iterable[int] | None = None,
    seeds: str | Iterable[int] = DEFAULT_SEEDS,
    Cs: str | Iterable[float] = DEFAULT_C,  # noqa: N803 - C is the conventional name
    backend: str = "auto",
    standardize: bool = False,
    tol: float = STABLE_TOL,
    out: str | os.PathLike[str] | None = None,
) -> SubsampleStudy:
    """:func:`geneb.probe.subsample.subsample_curve` for every (model, task), its stability
    summary, and the curve CSV written to ``out`` (checked before the first fit).

    Parameters
    ----------
    store : str or os.PathLike
        The feature store.
    models, tasks : sequence of str
        Every model is fitted on every task.
    sizes : str or iterable of int, optional
        Subsample sizes; default 1/8, 1/4, 1/2 and all of the row cap, for the tasks whose
        train split is above it (the others are skipped, and listed).
    seeds : str or iterable of int
        The seeds of the subsample draws (the same at every size).
    Cs : str or iterable of float
        Inverse L2 strengths; one curve per C.
    backend : str
        The linear probe's backend.
    standardize : bool
        Standardise features on the subsample's rows.
    tol : float
        Stabilised: the last change of the mean MCC is at most this.
    out : str or os.PathLike, optional
        A CSV file for the curve (text cells escaped, written atomically).

    Returns
    -------
    SubsampleStudy
        The curve, the summary and the skipped pairs.
    """
    from geneb.probe.subsample import (
        check_curve_out,
        default_sizes,
        stability_summary,
        subsample_curve,
    )
    from geneb.store import FeatureStore

    if out is not None:
        check_curve_out(os.fspath(out))
    # validate_params gave each list its canonical form: a tuple of ints / floats
    size_list = list(cast("Sequence[int]", sizes or ()))
    seed_list, c_list = list(cast("Sequence[int]", seeds)), list(cast("Sequence[float]", Cs))
    fs = FeatureStore(store, "r")
    curves, skipped = [], []
    for m in models:
        for t in tasks:
            chosen = size_list or default_sizes(len(fs.labels_rows(m, t, "train")[0]))
            if not chosen:
                skipped.append(f"{m}/{t}: the train split is not above the cap")
                continue
            curves.append(subsample_curve(str(store), m, t, chosen, seed_list, Cs=c_list,
                                          backend=backend, standardize=standardize))
    curve = pd.concat(curves, ignore_index=True) if curves else pd.DataFrame()
    summary = stability_summary(curve, tol) if len(curve) else pd.DataFrame()
    if out is not None and len(curve):
        _write_curve(curve, Path(out))
    return SubsampleStudy(curve, summary, skipped)


def _write_curve(curve: pd.DataFrame, out: Path) -> None:
    """The curve CSV, its text cells escaped as the report's tables are (a model or task name
    starting with ``=`` is not run by a spreadsheet), written atomically."""
    from geneb._fs import write_with
    from geneb.analysis.report.page import csv_safe

    write_with(out, lambda tmp: csv_safe(curve).to_csv(tmp, index=False))
