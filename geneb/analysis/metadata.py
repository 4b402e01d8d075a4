"""Model metadata: parameter counts from the results table plus an optional model-info CSV.

The CSV (one row per model, a ``model`` column plus free columns such as ``architecture``,
``tokenization``, ``pretraining_data``) lets the report compare models that share a property.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from geneb.analysis.user_csv import read_user_csv
from geneb.errors import GenebError

#: Columns of the model-info CSV used for matched comparisons when present.
GROUP_COLUMNS: tuple[str, ...] = ("architecture", "tokenization", "pretraining_data")


def read_model_info(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read and check a model-info CSV: a ``model`` column, one row per model, no empty ids."""
    p = Path(path)
    info = read_user_csv(p, what="model-info", required=("model",),
                         header=f"model,{','.join(GROUP_COLUMNS)}")
    info["model"] = info["model"].str.strip()
    empty = info["model"] == ""
    if empty.any():
        row = int(info.index[empty.to_numpy()][0])  # the line in the file
        raise GenebError(f"{p}: line {row}: empty model id")
    dup = info["model"].duplicated()
    if dup.any():
        row = int(info.index[dup.to_numpy()][0])
        raise GenebError(f"{p}: line {row}: model {info['model'][dup].iloc[0]!r} listed twice")
    return info.reset_index(drop=True)


def model_metadata(results: pd.DataFrame, model_info: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per model of the results: n_params (null for k-mer baselines) and info columns.

    A model with two different parameter counts in the table is an error (two different
    models under one id). Info rows for models not in the results are ignored.
    """
    counts = results.groupby("model")["n_params"].agg(lambda s: sorted(set(s.dropna())))
    bad = counts[counts.map(len) > 1]
    if len(bad):
        raise GenebError(
            f"results table: model {bad.index[0]!r} has several parameter counts {bad.iloc[0]}"
        )
    meta = pd.DataFrame(
        {"model": counts.index, "n_params": [c[0] if c else np.nan for c in counts]}
    )
    if model_info is not None:
        extra = model_info.drop(columns=[c for c in ("n_params",) if c in model_info.columns])
        meta = meta.merge(extra, on="model", how="left")
    return meta.reset_index(drop=True)


def metadata_groups(
    scores: pd.DataFrame, meta: pd.DataFrame, columns: Sequence[str] | None = None
) -> pd.DataFrame:
    """Matched comparisons: models ranked within each group sharing a metadata value.

    ``scores`` has model and macro_mcc (one context and scope). For each column of ``columns``
    (default: those of :data:`GROUP_COLUMNS` present in ``meta``), every value shared by at
    least two models gives a group. Columns: facet, value, model, macro_mcc, rank_in_group,
    n_models.
    """
    if columns is None:
        columns = [c for c in GROUP_COLUMNS if c in meta.columns]
    m = scores[["model", "macro_mcc"]].merge(meta, on="model", how="left")
    rows = []
    for col in columns:
        vals = m[col].fillna("").astype(str)
        for value, g in m[vals != ""].groupby(col, sort=True):
            if len(g) < 2:
                continue
            g = g.sort_values(["macro_mcc", "model"], ascending=[False, True])
            ranks = g["macro_mcc"].rank(ascending=False, method="min").astype(int)
            for (_, r), rank in zip(g.iterrows(), ranks, strict=True):
                rows.append((col, value, r["model"], float(r["macro_mcc"]), int(rank), len(g)))
    return pd.DataFrame(
        rows, columns=["facet", "value", "model", "macro_mcc", "rank_in_group", "n_models"]
    )
