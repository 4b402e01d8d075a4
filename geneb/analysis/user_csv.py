"""Reading a user's CSV (model info, model properties, task organisms) in ONE place.

Every cell is read as text with empty cells kept empty (a model id ``NA`` must stay ``NA``);
a missing file, an unreadable file, a missing or repeated column and a line whose field count
differs from the header's are one line naming the file (and the line) and what was expected,
before any work. Why not ``pandas.read_csv``: a line with more fields than the header becomes
an index there (``kmer-2,5,7,8`` under ``model,n_params`` was read as model ``7``).

The frame's index is each row's line number in the file (1-based; the header is line 1), so
callers name the line a bad value is on even past blank lines and quoted line breaks.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from geneb.errors import GenebError


def _rows(p: Path) -> list[tuple[int, list[str]]]:
    """(line number, fields) of every non-blank line of the CSV at ``p``."""
    try:
        text = p.read_text(encoding="utf-8-sig")
        reader = csv.reader(io.StringIO(text, newline=""), strict=True)
        out = []
        line = 1
        for row in reader:
            if row and not (len(row) == 1 and not row[0].strip()):
                out.append((line, row))
            line = reader.line_num + 1
        return out
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise GenebError(f"{p}: not a readable CSV file: {e}") from e


def read_user_csv(
    path: str | os.PathLike[str], *, what: str, required: Sequence[str], header: str
) -> pd.DataFrame:
    """The CSV at ``path`` as strings; ``what`` names the file kind in messages, ``required``
    the columns it must have, ``header`` an example header line shown when one is missing.

    Parameters
    ----------
    path : str or path-like
        The CSV file.
    what : str
        The kind of file, for messages (``"model-properties"``).
    required : sequence of str
        Columns the header must name.
    header : str
        An example header line, shown when a column is missing.

    Returns
    -------
    pandas.DataFrame
        One row per data line, every cell a string, indexed by the line number in the file.
    """
    p = Path(path)
    if not p.is_file():
        raise GenebError(f"no {what} file at {str(p)!r}")
    rows = _rows(p)
    if not rows:
        raise GenebError(f"{p}: empty; expected a header such as {header}")
    names = [c.strip() for c in rows[0][1]]
    repeated = sorted({c for c in names if names.count(c) > 1})
    if repeated:
        raise GenebError(f"{p}: line {rows[0][0]}: column(s) {repeated} named twice")
    missing = [c for c in required if c not in names]
    if missing:
        cols = ", ".join(repr(c) for c in missing)
        raise GenebError(
            f"{p}: no {cols} column; expected a header such as {header} "
            f"(found: {', '.join(names)})"
        )
    for line, row in rows[1:]:
        if len(row) != len(names):
            raise GenebError(
                f"{p}: line {line}: {len(row)} fields, expected {len(names)} as in the header "
                f"({','.join(names)}); quote a value that holds a comma"
            )
    return pd.DataFrame([r for _, r in rows[1:]], columns=names,
                        index=[n for n, _ in rows[1:]], dtype=str)  # fmt: skip
