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


#: What a score table may be written as.
TABLE_SUFFIXES = (".parquet", ".csv")


def scores_path(out: str | Path | None, task: str, model: str, window: int, *,
                name: str | None = None, prefix: str = "vep") -> Path:
    """Where a score table goes, checked before any work: ``out``, or by default
    ``<prefix>-<task>-<model>-w<W>.parquet`` (``name``, when given, in place of the model);
    it must end in ``.parquet`` or ``.csv``, in a folder that exists."""
    from geneb.store.keys import safe_name

    if out is None:
        label = name or Path(model.removeprefix("hf:")).name or model
        out = f"{prefix}-{safe_name(task)}-{safe_name(label)}-w{window}.parquet"
    p = Path(out)
    if p.suffix not in TABLE_SUFFIXES:
        raise GenebError(f"out: {str(p)!r}: expected a file ending in "
                         f"{' or '.join(TABLE_SUFFIXES)}", param="out")
    if not p.parent.is_dir() and str(p.parent) not in ("", "."):
        raise GenebError(f"out: {str(p)!r}: folder {str(p.parent)!r} does not exist",
                         param="out")
    return p


def write_scores(df: pd.DataFrame, out: str | Path) -> Path:
    """Write a score table all-or-nothing (a temporary file renamed into place): ``.csv``
    as CSV, anything else as parquet. Returns the path written."""
    from geneb._fs import write_with

    p = Path(out)
    if p.suffix == ".csv":
        write_with(p, lambda tmp: df.to_csv(tmp, index=False))
    else:
        write_with(p, lambda tmp: df.to_parquet(tmp, index=False))
    return p
