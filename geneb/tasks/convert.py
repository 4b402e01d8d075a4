"""Converters: downloaded source files -> a geneb task folder or variant folder.

A classification task becomes ``train.csv`` / ``test.csv`` (+ ``valid.csv``) with columns
``sequence,label`` (labels as the source gives them; the loader maps names to ids), which is
what ``geneb.tasks.loader`` reads. A variant set becomes ``variants.csv`` (``chrom``, ``pos``
1-based, ``ref``, ``alt``, ``label`` 0/1, optional ``score``, other columns kept) plus
``reference.fa``, the layout of ``../shared/variants/brca1_findlay2018``.

Each converter reads only what it is given and writes only into ``out``; errors name the
source file and what was expected. Everything unpacked (archive members, ``.gz`` files) is
bounded by :class:`geneb.tasks.limits.FetchLimits`: declared sizes are checked before
unpacking and real sizes while streaming.
"""

from __future__ import annotations

import bisect
import gzip
import shutil
import tarfile
import zipfile
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from geneb.errors import TaskError
from geneb.tasks.limits import FetchLimits, copy_capped, format_bytes
from geneb.tasks.readers import read_labelled_fasta
from geneb.tasks.reference import UserReference, extract_windows
from geneb.tasks.variant_rows import row_location
from geneb.tasks.variants import RefRecord, check_variant_rows, parse_records

if TYPE_CHECKING:
    from _typeshed import SupportsRead

SPLIT_ROLES = ("train", "valid", "test")
VARIANT_COLUMNS = ("chrom", "pos", "ref", "alt", "label")


def _unpack(
    src: SupportsRead[bytes], out: Path, declared: int, packed: int, what: str, limits: FetchLimits
) -> Path:
    """Copy ``src`` to ``out`` unless its declared or real size is over the unpack limit."""
    limit, why = limits.unpack_limit(packed)
    if declared > limit:
        raise TaskError(
            f"{what}: declares {format_bytes(declared)} unpacked, over {format_bytes(limit)} "
            f"({why}); refused before unpacking, nothing was kept"
        )
    try:
        with out.open("wb") as dst:
            copy_capped(src, dst, limit, what, why)
    except BaseException:
        out.unlink(missing_ok=True)
        raise
    return out


def extract_member(
    archive: Path, member: str, out: Path, limits: FetchLimits | None = None
) -> Path:
    """Copy one member of a .zip / .tar(.gz) archive to ``out`` (no other member is touched).

    The member's declared size is checked against the unpack limit before anything is
    unpacked, and the bytes really written while streaming (a header can lie).
    """
    limits = limits or FetchLimits()
    packed = archive.stat().st_size
    what = f"{archive} member {member!r}"
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as z:
                info = z.getinfo(member)
                with z.open(info) as src:
                    return _unpack(src, out, info.file_size, packed, what, limits)
        if tarfile.is_tarfile(archive):
            with tarfile.open(archive) as t:
                # read headers up to the member only (getmember would scan the whole archive)
                info_t = next((i for i in t if i.name == member), None)
                if info_t is None:
                    raise KeyError(member)
                src_t = t.extractfile(info_t)
                if src_t is None:
                    raise KeyError(member)
                with src_t:
                    return _unpack(src_t, out, info_t.size, packed, what, limits)
    except KeyError:
        raise TaskError(f"{archive}: archive has no member {member!r}") from None
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error, OSError) as e:
        raise TaskError(f"{what}: cannot be unpacked ({type(e).__name__}: {e})") from None
    raise TaskError(f"{archive}: not a zip or tar archive; expected one holding {member!r}")


def gunzip(path: Path, out: Path, limits: FetchLimits | None = None) -> Path:
    """Decompress ``path`` into ``out``, bounded like an archive member (gzip has no size
    header to trust, so only the streamed bytes count); a bad or cut stream is a TaskError."""
    limits = limits or FetchLimits()
    try:
        with gzip.open(path, "rb") as src:
            return _unpack(src, out, 0, path.stat().st_size, str(path), limits)
    except (gzip.BadGzipFile, EOFError, zlib.error) as e:
        raise TaskError(f"{path}: not a complete gzip file ({type(e).__name__}: {e})") from None


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


def _fasta_table(path: Path, scratch: Path, limits: FetchLimits) -> pd.DataFrame:
    opened = path
    if path.suffix == ".gz":  # decompressed into the (temporary) output folder, then removed
        opened = gunzip(path, scratch / f".{path.stem}.decompressed", limits)
    try:
        seqs, labels, _ = read_labelled_fasta(opened, shown=str(path))
    finally:
        if opened != path:
            opened.unlink()
    return pd.DataFrame({"sequence": seqs, "label": labels})


def convert_classification(
    files: Mapping[str, Path],
    fmt: str,
    columns: Mapping[str, str] | None,
    out: Path,
    limits: FetchLimits | None = None,
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
            _fasta_table(path, out, limits or FetchLimits())
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


def _copy_reference(path: Path, out: Path, limits: FetchLimits) -> None:
    target = out / "reference.fa"
    if path.suffix == ".gz":
        gunzip(path, target, limits)
    else:
        shutil.copyfile(path, target)
    with target.open("rb") as f:
        if f.read(1) != b">":
            raise TaskError(f"{path}: the reference is not a FASTA file (no leading '>')")


def convert_variants(
    files: Mapping[str, Path],
    columns: Mapping[str, str] | None,
    out: Path,
    limits: FetchLimits | None = None,
    reference: UserReference | None = None,
) -> tuple[dict[str, int], dict[str, Any] | None]:
    """Write ``variants.csv`` and ``reference.fa``; return ``({"variants": rows}, provenance)``.

    Rows are checked by the same function a variant folder's load uses
    (:func:`geneb.tasks.variants.check_variant_rows`), so a value refused there is refused here.
    With ``reference`` (the user's genome, :mod:`geneb.tasks.reference`) the reference file
    of ``files`` is not used: only the windows the variants need are cut from the user's file,
    and ``provenance`` says which file (its sha256) and how. A table without a ``ref`` column
    (the long-range benchmark publishes none) gets the reference base at ``pos``; this needs
    ``reference``.
    """
    if "variants" not in files or (reference is None and "reference" not in files):
        raise TaskError(
            f"a variant set needs 'variants' and 'reference' files, the catalogue gives "
            f"{sorted(files)}"
        )
    path = files["variants"]
    fmt = "parquet" if path.suffix == ".parquet" else ("tsv" if path.suffix == ".tsv" else "csv")
    df = _read_table(path, fmt, columns)
    derive_ref = reference is not None and "ref" not in df.columns
    need = [c for c in VARIANT_COLUMNS if not (derive_ref and c == "ref")]
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise TaskError(
            f"{path}: missing variant column(s) {', '.join(map(repr, missing))}; expected "
            f"{', '.join(VARIANT_COLUMNS)} (map source names in the entry's 'columns')"
        )
    df = check_variant_rows(path, df, with_ref=not derive_ref)
    provenance = None
    if reference is None:
        _copy_reference(files["reference"], out, limits or FetchLimits())
    else:
        provenance = extract_windows(reference, _windows(df, reference.flank), out / "reference.fa")
        if derive_ref:  # checked against alt and the windows by the folder's load
            df.insert(df.columns.get_loc("alt"), "ref", _bases_at(path, df, out / "reference.fa"))
            provenance["ref_from_reference"] = True
    ordered = [*VARIANT_COLUMNS, *(["score"] if "score" in df.columns else [])]
    df = df[ordered + [c for c in df.columns if c not in ordered]]
    df.to_csv(out / "variants.csv", index=False)
    return {"variants": len(df)}, provenance


def _windows(df: pd.DataFrame, flank: int) -> dict[str, list[tuple[int, int]]]:
    """Per chromosome, the spans ``[pos - flank, pos + len(ref) - 1 + flank]`` (1-based; a
    table without ``ref`` gets its reference base: length 1)."""
    out: dict[str, list[tuple[int, int]]] = {}
    lens = df["ref"].str.len().tolist() if "ref" in df.columns else [1] * len(df)
    for chrom, pos, n in zip(df["chrom"].tolist(), df["pos"].tolist(), lens, strict=True):
        out.setdefault(chrom, []).append((max(1, pos - flank), pos + n - 1 + flank))
    return out


def _bases_at(src: Path, df: pd.DataFrame, fasta: Path) -> list[str]:
    """The reference base at each row's ``pos`` (rows outside every window are an error)."""
    by_chrom: dict[str, list[RefRecord]] = {}
    for r in parse_records(fasta):
        by_chrom.setdefault(r.chrom, []).append(r)
    starts = {c: [r.start for r in recs] for c, recs in by_chrom.items()}
    bases = []
    for i, (chrom, pos) in enumerate(zip(df["chrom"].tolist(), df["pos"].tolist(), strict=True)):
        recs = by_chrom.get(chrom, [])
        j = bisect.bisect_right(starts.get(chrom, []), pos) - 1
        if j < 0 or pos > recs[j].end:
            raise TaskError(
                f"{row_location(src, df, i)}: {chrom}:{pos} is past the end of chromosome "
                f"{chrom} in the reference; expected a position on it"
            )
        bases.append(recs[j].seq[pos - recs[j].start])
    return bases
