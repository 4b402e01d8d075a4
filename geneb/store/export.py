"""Export one store entry to a single file for tools that do not read Zarr.

Formats:
* ``npz``: arrays ``embeddings`` (n, d), ``labels`` (n,), ``row`` (n,), plus ``provenance``
  (a 0-d string array holding the entry's provenance as JSON).
* ``parquet``: one row per sample with columns ``row`` (int64), ``label`` (int64) and
  ``embedding`` (``fixed_size_list<float>[d]``, float32 or float16 as stored). A fixed-size
  list keeps d-wide matrices as one column (pyarrow, polars and DuckDB read it; thousands of
  scalar columns make parquet metadata huge and slow). The schema metadata carries
  ``geneb.key`` and ``geneb.provenance`` (JSON). Read back with
  ``np.stack(table["embedding"].to_numpy(zero_copy_only=False))`` or, without a copy per
  row, ``table["embedding"].combine_chunks().flatten().to_numpy().reshape(n, d)``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import numpy as np

from geneb.errors import StoreError
from geneb.store.feature_store import FeatureStore
from geneb.store.keys import StoreKey

FORMATS = ("npz", "parquet")


def export_entry(
    store: FeatureStore, key: StoreKey, fmt: Literal["npz", "parquet"], out: str | Path
) -> Path:
    """Write entry ``key`` (must be complete; every checksum is verified) to ``out``."""
    if fmt not in FORMATS:
        raise StoreError(f"unknown export format {fmt!r}; expected one of {', '.join(FORMATS)}")
    entry = store.get(key.model, key.task, key.split)
    out = Path(out)
    if out.parent and not out.parent.exists():
        raise StoreError(f"cannot write {out}: folder {out.parent} does not exist")
    prov = json.dumps(entry.provenance.to_dict(), sort_keys=True, default=str)
    if fmt == "npz":
        with open(out, "wb") as f:  # a file object: numpy would otherwise append ".npz"
            np.savez(
                f,
                embeddings=entry.embeddings,
                labels=entry.labels,
                row=entry.rows,
                provenance=np.array(prov),
            )
        return out
    import pyarrow as pa
    import pyarrow.parquet as pq

    n, d = entry.embeddings.shape
    values = pa.array(np.ascontiguousarray(entry.embeddings).reshape(-1))
    emb = pa.FixedSizeListArray.from_arrays(values, d)
    table = pa.table(
        {"row": pa.array(entry.rows), "label": pa.array(entry.labels), "embedding": emb},
    ).replace_schema_metadata({"geneb.key": str(key), "geneb.provenance": prov})
    pq.write_table(table, out)
    return out
