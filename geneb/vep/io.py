"""Reading score tables back (``geneb vep evaluate``, the report), checked before use."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from geneb.errors import GenebError

NEEDED = ("task", "variant", "label", "model", "scorer", "window", "score", "status",
          "orientation")


def read_scores(paths: Sequence[str | Path]) -> pd.DataFrame:
    """Concatenate score tables (.parquet or .csv); each must have the columns of ``NEEDED``."""
    if not paths:
        raise GenebError("no score table given (expected files written by `geneb vep score`)")
    parts = []
    for p in map(Path, paths):
        if not p.is_file():
            raise GenebError(f"score table {str(p)!r} does not exist")
        try:
            df = pd.read_csv(p) if p.suffix == ".csv" else pd.read_parquet(p)
        except Exception as e:
            raise GenebError(f"{p}: cannot be read as a score table: {e}") from e
        missing = [c for c in NEEDED if c not in df.columns]
        if missing:
            raise GenebError(f"{p}: not a `geneb vep score` table (missing column(s) "
                             f"{', '.join(missing)})")
        parts.append(df)
    out = pd.concat(parts, ignore_index=True)
    dup = out.duplicated(["task", "model", "scorer", "window", "variant"])
    if dup.any():
        r = out[dup].iloc[0]
        raise GenebError(f"variant {r['variant']} of task {r['task']!r} is scored twice for "
                         f"model {r['model']!r}, scorer {r['scorer']!r}, window {r['window']} "
                         "(the same table given twice?)")
    return out
