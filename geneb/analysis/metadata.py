"""Model metadata: parameter counts from the results table plus the user's own columns.

The user's model-properties file (:func:`geneb.analysis.properties.read_model_properties`)
may carry free columns such as ``architecture``, ``tokenization``, ``pretraining_data``
besides the properties; they let the report compare models that share one.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from geneb.errors import GenebError

#: The user's own columns used for matched comparisons when present.
GROUP_COLUMNS: tuple[str, ...] = ("architecture", "tokenization", "pretraining_data")
#: The user's own columns the comparison with GENEB shows (how each model was embedded).
COMPARE_COLUMNS: tuple[str, ...] = ("pooling", "recipe", "layer")


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
