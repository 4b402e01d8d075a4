"""Export one store entry to a single file for tools that do not read Zarr.

Formats:
* ``npz``: arrays ``embeddings`` (n, d), ``labels`` (n,), ``row`` (n,), plus ``provenance``
  (a 0-d string array holding the entry's provenance as JSON) and ``label_names`` (K,): the
  task's original label of each class id, so ``label_names[labels]`` are the task's labels.
* ``parquet``: one row per sample with columns ``row`` (int64), ``label`` (int64, the class
  id), ``label_name`` (string, the task's original label) and
  ``embedding`` (``fixed_size_list<float>[d]``, float32 or float16 as stored). A fixed-size
  list keeps d-wide matrices as one column (pyarrow, polars and DuckDB read it; thousands of
  scalar columns make parquet metadata huge and slow). The schema metadata carries
  ``geneb.key``, ``geneb.provenance`` and ``geneb.label_names`` (JSON). Read back with
  ``np.stack(table["embedding"].to_numpy(zero_copy_only=False))`` or, without a copy per
  row, ``table["embedding"].combine_chunks().flatten().to_numpy().reshape(n, d)``.

Entries written before the label map was recorded have no ``label_names`` / ``label_name``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import numpy as np

from geneb._fs import write_with
from geneb.errors import StoreError
from geneb.store.feature_store import FeatureStore
from geneb.store.keys import StoreKey

FORMATS = ("npz", "parquet")


def export_entry(
    store: FeatureStore, key: StoreKey, fmt: Literal["npz", "parquet"], out: str | Path
) -> Path:
    """Write entry ``key`` (must be complete; every checksum is verified) to ``out``, all or
    nothing."""
    if fmt not in FORMATS:
        raise StoreError(f"unknown export format {fmt!r}; expected one of {', '.join(FORMATS)}")
    entry = store.get(key.model, key.task, key.split)
    out = Path(out)
    if out.parent and not out.parent.exists():
        raise StoreError(f"cannot write {out}: folder {out.parent} does not exist")
    prov = json.dumps(entry.provenance.to_dict(), sort_keys=True, default=str)
    names = entry.label_names
    if fmt == "npz":
        arrays = {"embeddings": entry.embeddings, "labels": entry.labels, "row": entry.rows,
                  "provenance": np.array(prov)}
        if names is not None:
            arrays["label_names"] = np.array(names, dtype=str)

        def savez(tmp: Path) -> None:
            with open(tmp, "wb") as f:  # a file object: numpy would otherwise append ".npz"
                # allow_pickle: numpy's default, spelled out (mypy otherwise matches **arrays)
                np.savez(f, allow_pickle=True, **arrays)

        write_with(out, savez)  # all or nothing: a temporary file renamed into place
        return out
    import pyarrow as pa
    import pyarrow.parquet as pq

    n, d = entry.embeddings.shape
    values = pa.array(np.ascontiguousarray(entry.embeddings).reshape(-1))
    emb = pa.FixedSizeListArray.from_arrays(values, d)
    cols = {"row": pa.array(entry.rows), "label": pa.array(entry.labels)}
    meta = {"geneb.key": str(key), "geneb.provenance": prov}
    if names is not None:
        cols["label_name"] = pa.array(np.asarray(names, dtype=object)[entry.labels],
                                      type=pa.string())
        meta["geneb.label_names"] = json.dumps(list(names))
    table = pa.table({**cols, "embedding": emb}).replace_schema_metadata(meta)
    write_with(out, lambda tmp: pq.write_table(table, tmp))
    return out
