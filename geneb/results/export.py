"""``geneb results export --format geneb-submission``: a model's GENEB submission file from a
results table (the document: :func:`geneb.results.submission.submission_from_results`)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from geneb import _fs
from geneb._version import __version__
from geneb.constraints import BOOL, String, validate_params
from geneb.errors import LeaderboardError
from geneb.results.submission import submission_from_results
from geneb.results.table import read_results

if TYPE_CHECKING:
    from collections.abc import Mapping


@validate_params({"model": String(), "partial": BOOL})
def export_submission(results: str | os.PathLike[str] | pd.DataFrame, model: str,
                      out: str | os.PathLike[str], *, partial: bool = False,
                      meta: Mapping[str, Any] | None = None
                      ) -> tuple[Path, dict[str, Any], list[str]]:
    """Write the GENEB submission file of ``model`` to ``out`` atomically.

    Parameters
    ----------
    results : the results table (a path or a ``published:`` source) or a DataFrame of it.
    model : the model to export (its paper-protocol rows: linear, C = 1, features as stored).
    out : the file to write; nothing is written when the export is refused.
    partial : write what there is when tasks or seeds are missing (``meta.partial``).
    meta : ``display``, ``url``, ``training_data``, ``submitted_by``, ``params`` for ``meta``.

    Returns
    -------
    (the file written, the document, the tasks left out because GENEB does not have them)
    """
    df = results if isinstance(results, pd.DataFrame) else read_results(results)
    doc, foreign = submission_from_results(df, model, partial=partial,
                                           meta=meta, harness_version=f"geneb-{__version__}")
    path = Path(out)
    if path.is_dir():
        raise LeaderboardError(f"{str(path)!r} is a folder; expected the submission file's "
                               "path (e.g. M.json)", param="out")
    path.parent.mkdir(parents=True, exist_ok=True)
    _fs.write_bytes(path, (json.dumps(doc, allow_nan=False) + "\n").encode("utf-8"),
                    durable=True)
    return path, doc, foreign
