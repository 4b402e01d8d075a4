"""Where a variant row is, and the check that each variant is given once (variant folders)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from geneb.errors import TaskError


def row_location(src: Path, df: pd.DataFrame, i: int) -> str:
    """Where row ``i`` of a variant table is, for messages: ``<file> line N`` (its line in
    a CSV/VCF; row index as well when the table has no recorded lines)."""
    if "_line" in df.columns:
        return f"{src} line {int(df['_line'].iloc[i])}"
    return f"{src} line {i + 2} (row {i})"


def check_unique_variants(src: Path, df: pd.DataFrame) -> None:
    """Refuse a variant given twice (it would count twice in every metric and interval)."""
    key = df[["chrom", "pos", "ref", "alt"]].astype(str).agg(":".join, axis=1).to_numpy()
    dup = np.flatnonzero(pd.Series(key).duplicated(keep=False).to_numpy())
    if len(dup):
        i, j = (int(k) for k in dup[key[dup] == key[dup[0]]][:2])
        labels = sorted({int(df["label"].iloc[i]), int(df["label"].iloc[j])})
        what = f"with labels {labels[0]} and {labels[1]}" if len(labels) > 1 else "twice"
        second = row_location(src, df, j).removeprefix(f"{src} ")
        raise TaskError(f"{row_location(src, df, i)} and {second}: variant {key[i]} is given "
                        f"{what}; expected each variant once")
