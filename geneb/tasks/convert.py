"""Converters: downloaded source files -> a geneb task folder or variant folder.

A classification task becomes ``train.csv`` / ``test.csv`` (+ ``valid.csv``) with columns
``sequence,label`` (labels as the source gives them; the loader maps names to ids), which is
what ``geneb.tasks.loader`` reads. A variant set becomes ``variants.csv`` (``chrom``, ``pos``
1-based, ``ref``, ``alt``, ``label`` 0/1, optional ``score``, other columns kept) plus
``reference.fa``, the layout of ``../shared/variants/brca1_findlay2018``.

Each converter reads only what it is given and writes only into ``out``; errors name the
source file and what was expected.
"""

from __future__ import annotations

import gzip
import shutil
import tarfile
import zipfile
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from geneb.errors import TaskError
from geneb.tasks.readers import read_labelled_fasta

SPLIT_ROLES = ("train", "valid", "test")
VARIANT_COLUMNS = ("chrom", "pos", "ref", "alt", "label")


def extract_member(archive: Path, member: str, out: Path) -> Path:
    """Copy one member of a .zip / .tar(.gz) archive to ``out`` (no other member is touched)."""
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as z, z.open(member) as src, out.open("wb") as dst:
                shutil.copyfileobj(src, dst)
            return out
        if tarfile.is_tarfile(archive):
            with tarfile.open(archive) as t:
                src = t.extractfile(member)
                if src is None:
                    raise KeyError(member)
                with src, out.open("wb") as dst:
                    shutil.copyfileobj(src, dst)
            return out
    except KeyError:
        raise TaskError(f"{archive}: archive has no member {member!r}") from None
    raise TaskError(f"{archive}: not a zip or tar archive; expected one holding {member!r}")


def _read_table(path: Path, fmt: str, columns: Mapping[str, str] | None) -> pd.DataFrame:
    try:
        if fmt == "parquet":
            df = pd.read_parquet(path)
        else:
            sep = "\t" if fmt == "tsv" else ","
            df = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False)
    except Exception as e:  # pandas/pyarrow raise many unrelated types for a bad file
        raise TaskError(f"{path}: not a readable {fmt} file: {e}") from None
    rename = {src: dst for dst, src in (columns or {}).items()}
    missing = [src for src in rename if src not in df.columns]
    if missing:
        raise TaskError(
            f"{path}: missing column(s) {', '.join(map(repr, missing))}; found: "
            f"{', '.join(map(repr, map(str, df.columns)))}"
        )
    return df.rename(columns=rename)


def _fasta_table(path: Path, scratch: Path) -> pd.DataFrame:
    opened = path
    if path.suffix == ".gz":  # decompressed into the (temporary) output folder, then removed
        opened = scratch / f".{path.stem}.decompressed"
        with gzip.open(path, "rb") as src, opened.open("wb") as dst:
            shutil.copyfileobj(src, dst)
    try:
        seqs, labels, _ = read_labelled_fasta(opened, shown=str(path))
    finally:
        if opened != path:
            opened.unlink()
    return pd.DataFrame({"sequence": seqs, "label": labels})


def convert_classification(
    files: Mapping[str, Path], fmt: str, columns: Mapping[str, str] | None, out: Path
) -> dict[str, int]:
    """Write ``<split>.csv`` for each split file; return the row count per split."""
    if "train" not in files or "test" not in files:
        raise TaskError(
            f"a task needs 'train' and 'test' files, the catalogue gives {sorted(files)}"
        )
    counts: dict[str, int] = {}
    for role in SPLIT_ROLES:
        if role not in files:
            continue
        path = files[role]
        df = (
            _fasta_table(path, out)
            if fmt == "fasta_label_in_id"
            else _read_table(path, fmt, columns)
        )
        missing = [c for c in ("sequence", "label") if c not in df.columns]
        if missing:
            raise TaskError(
                f"{path}: no column(s) {', '.join(map(repr, missing))} after renaming; give the "
                f"source column names in the catalogue entry's 'columns'"
            )
        df[["sequence", "label"]].to_csv(out / f"{role}.csv", index=False)
        counts[role] = len(df)
    return counts


def _copy_reference(path: Path, out: Path) -> None:
    target = out / "reference.fa"
    if path.suffix == ".gz":
        with gzip.open(path, "rb") as src, target.open("wb") as dst:
            shutil.copyfileobj(src, dst)
    else:
        shutil.copyfile(path, target)
    with target.open("rb") as f:
        if f.read(1) != b">":
            raise TaskError(f"{path}: the reference is not a FASTA file (no leading '>')")


def convert_variants(
    files: Mapping[str, Path], columns: Mapping[str, str] | None, out: Path
) -> dict[str, int]:
    """Write ``variants.csv`` and ``reference.fa``; return ``{"variants": rows}``."""
    if "variants" not in files or "reference" not in files:
        raise TaskError(
            f"a variant set needs 'variants' and 'reference' files, the catalogue gives "
            f"{sorted(files)}"
        )
    path = files["variants"]
    fmt = "parquet" if path.suffix == ".parquet" else ("tsv" if path.suffix == ".tsv" else "csv")
    df = _read_table(path, fmt, columns)
    missing = [c for c in VARIANT_COLUMNS if c not in df.columns]
    if missing:
        raise TaskError(
            f"{path}: missing variant column(s) {', '.join(map(repr, missing))}; expected "
            f"{', '.join(VARIANT_COLUMNS)} (map source names in the entry's 'columns')"
        )
    pos = pd.to_numeric(df["pos"], errors="coerce")
    bad = pos.isna() | (pos < 1)
    if bad.any():
        i = int(bad.to_numpy().nonzero()[0][0])
        raise TaskError(
            f"{path} row {i + 1}: 'pos' must be a 1-based position, got {df['pos'].iloc[i]!r}"
        )
    labels = pd.to_numeric(
        df["label"].astype(str).replace({"True": "1", "False": "0"}), errors="coerce"
    )
    bad = ~labels.isin([0, 1])
    if bad.any():
        i = int(bad.to_numpy().nonzero()[0][0])
        raise TaskError(f"{path} row {i + 1}: 'label' must be 0 or 1, got {df['label'].iloc[i]!r}")
    df["pos"] = pos.astype("int64")
    df["label"] = labels.astype("int64")
    ordered = [*VARIANT_COLUMNS, *(["score"] if "score" in df.columns else [])]
    df = df[ordered + [c for c in df.columns if c not in ordered]]
    df.to_csv(out / "variants.csv", index=False)
    _copy_reference(files["reference"], out)
    return {"variants": len(df)}
