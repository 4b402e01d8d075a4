"""Reading a user's CSV (model info, model properties, task organisms) in ONE place.

Every cell is read as text with empty cells kept empty (a model id ``NA`` must stay ``NA``);
a missing file, an unreadable file and a missing column are one line naming the file and what
was expected, before any work.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from geneb.errors import GenebError


def read_user_csv(
    path: str | os.PathLike[str], *, what: str, required: Sequence[str], header: str
) -> pd.DataFrame:
    """The CSV at ``path`` as strings; ``what`` names the file kind in messages, ``required``
    the columns it must have, ``header`` an example header line shown when one is missing."""
    p = Path(path)
    if not p.is_file():
        raise GenebError(f"no {what} file at {str(p)!r}")
    try:
        df = pd.read_csv(p, dtype=str, keep_default_na=False)
    except Exception as e:  # pandas raises several types on malformed csv
        raise GenebError(f"{p}: not a readable CSV file: {e}") from e
    missing = [c for c in required if c not in df.columns]
    if missing:
        cols = ", ".join(repr(c) for c in missing)
        raise GenebError(
            f"{p}: no {cols} column; expected a header such as {header} "
            f"(found: {', '.join(df.columns)})"
        )
    return df
