"""Reading one split of a task folder as it is on disk (csv, parquet, one FASTA per split, one
FASTA per class), before validation: the formats are described in :mod:`geneb.tasks.loader`.
Kept apart from the loader so the fetch converters can read labelled FASTA the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from geneb.errors import TaskError
from geneb.tasks.validate import Locator, csv_locator, table_locator

FASTA_EXTENSIONS = (".fa", ".fasta", ".fna")


@dataclass(frozen=True)
class RawSplit:
    """One split as read from disk, before validation."""

    name: str
    file: str
    fmt: str
    sequences: list[Any]
    labels: Any
    where: Locator
    ignored_columns: tuple[str, ...] = ()
    #: fasta-per-class only: the class files, in the order their records were read
    class_files: tuple[str, ...] = ()


# --------------------------------------------------------------------------- reading


def split_sources(folder: Path, split: str) -> list[tuple[str, Path]]:
    """Every (format, path) in ``folder`` that could hold ``split`` (more than one is an error)."""
    found: list[tuple[str, Path]] = []
    for fmt, cand in (("csv", folder / f"{split}.csv"), ("parquet", folder / f"{split}.parquet")):
        if cand.is_file():
            found.append((fmt, cand))
    for ext in FASTA_EXTENSIONS:
        cand = folder / f"{split}{ext}"
        if cand.is_file():
            found.append(("fasta", cand))
    if (folder / split).is_dir():
        found.append(("fasta-per-class", folder / split))
    return found


def _find_source(folder: Path, split: str) -> tuple[str, Path] | None:
    found = split_sources(folder, split)
    if len(found) > 1:
        names = ", ".join(p.name + ("/" if p.is_dir() else "") for _, p in found)
        raise TaskError(
            f"{folder}: split {split!r} is given more than once ({names}); keep exactly one"
        )
    return found[0] if found else None


def _check_columns(df: pd.DataFrame, file: str) -> tuple[str, ...]:
    df.columns = [str(c).strip().lstrip("\ufeff") for c in df.columns]
    missing = [c for c in ("sequence", "label") if c not in df.columns]
    if missing:
        found = ", ".join(repr(c) for c in df.columns) or "(none)"
        raise TaskError(
            f"{file}: missing column(s) {', '.join(repr(c) for c in missing)}; expected columns "
            f"'sequence' and 'label', found: {found}"
        )
    return tuple(c for c in df.columns if c not in ("sequence", "label"))


def read_csv_frame(path: Path, header: str) -> pd.DataFrame:
    """A csv file as text cells (nothing read as NA), column names stripped of spaces and a
    byte-order mark; an empty or unreadable file is one line naming it (``header``: the
    header the caller expects, for the message)."""
    try:
        df = pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False)
    except pd.errors.EmptyDataError:
        raise TaskError(f"{path}: the file is empty; expected a header {header!r}") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as e:
        raise TaskError(f"{path}: not a readable csv file: {str(e).strip()}") from None
    df.columns = [str(c).strip().lstrip("\ufeff") for c in df.columns]
    return df


def _read_csv(path: Path, split: str) -> RawSplit:
    file = str(path)
    df = read_csv_frame(path, "sequence,label")
    ignored = _check_columns(df, file)
    return RawSplit(
        split,
        file,
        "csv",
        df["sequence"].tolist(),
        df["label"].to_numpy(dtype=object),
        csv_locator(file),
        ignored,
    )


def _read_parquet(path: Path, split: str) -> RawSplit:
    file = str(path)
    try:
        df = pd.read_parquet(path)
    except Exception as e:  # pyarrow raises several unrelated types for a bad file
        raise TaskError(f"{file}: not a readable parquet file: {e}") from None
    ignored = _check_columns(df, file)
    seqs = [s if isinstance(s, str) else None for s in df["sequence"].tolist()]
    labels = df["label"]
    if labels.dtype.kind in "iuf":
        lab: Any = labels.to_numpy()
    else:
        lab = labels.to_numpy(dtype=object)
    return RawSplit(split, file, "parquet", seqs, lab, table_locator(file), ignored)


def _parse_fasta(path: Path) -> tuple[list[str], list[int], list[str]]:
    """Headers (without '>'), their 1-based line numbers and the joined sequences."""
    headers: list[str] = []
    lines_at: list[int] = []
    seqs: list[list[str]] = []
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        bad_line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise TaskError(
            f"{path} line {bad_line}: not UTF-8 text (byte 0x{data[e.start]:02x} at column {col}); "
            f"expected a text FASTA file"
        ) from None
    for lineno, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line:
            continue
        if line.startswith(">"):
            headers.append(line[1:].strip())
            lines_at.append(lineno)
            seqs.append([])
        elif not headers:
            raise TaskError(
                f"{path} line {lineno}: sequence data {line[:40]!r} before the first '>' header"
            )
        else:
            seqs[-1].append(line)
    if not headers:
        raise TaskError(f"{path}: no FASTA records (no line starts with '>')")
    return headers, lines_at, ["".join(parts) for parts in seqs]


def _header_label(header: str) -> str | None:
    tokens = header.split()
    for tok in tokens[1:]:
        if tok.startswith("label="):
            return tok[len("label=") :]
    if tokens and "|" in tokens[0]:
        return tokens[0].rsplit("|", 1)[1]
    return None


def read_labelled_fasta(path: Path, shown: str | None = None) -> tuple[list[str], list[str],
                                                                        list[int]]:
    """Sequences, labels and line numbers of a FASTA whose headers carry the label
    (``>id label=VALUE`` or ``>id|VALUE``); ``shown`` names the file in messages."""
    file = shown or str(path)
    headers, lines_at, seqs = _parse_fasta(path)
    labels: list[str] = []
    for header, lineno in zip(headers, lines_at, strict=True):
        lab = _header_label(header)
        if lab is None:
            raise TaskError(
                f"{file} line {lineno}: no label in header {('>' + header)[:60]!r}; write it as "
                f"'>id label=VALUE' or '>id|VALUE'"
            )
        labels.append(lab)
    return seqs, labels, lines_at


def _read_fasta_file(path: Path, split: str) -> RawSplit:
    file = str(path)
    seqs, labels, lines_at = read_labelled_fasta(path)
    where: Locator = lambda i: f"{file} line {lines_at[i]}"  # noqa: E731
    return RawSplit(split, file, "fasta", seqs, np.array(labels, dtype=object), where)


def _read_fasta_dir(path: Path, split: str) -> RawSplit:
    files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix in FASTA_EXTENSIONS)
    if not files:
        raise TaskError(
            f"{path}: directory for split {split!r} holds no FASTA file "
            f"({', '.join(FASTA_EXTENSIONS)}); expected one file per class, e.g. {path}/0.fa"
        )
    seqs: list[str] = []
    labels: list[str] = []
    rec_file: list[str] = []
    rec_line: list[int] = []
    for f in files:
        _, lines_at, s = _parse_fasta(f)
        seqs.extend(s)
        labels.extend([f.stem] * len(s))
        rec_file.extend([str(f)] * len(s))
        rec_line.extend(lines_at)
    where: Locator = lambda i: f"{rec_file[i]} line {rec_line[i]}"  # noqa: E731
    return RawSplit(
        split,
        str(path),
        "fasta-per-class",
        seqs,
        np.array(labels, dtype=object),
        where,
        class_files=tuple(str(f) for f in files),
    )


_READERS = {
    "csv": _read_csv,
    "parquet": _read_parquet,
    "fasta": _read_fasta_file,
    "fasta-per-class": _read_fasta_dir,
}


def read_raw_split(folder: Path, split: str) -> RawSplit | None:
    """Read one split of a task folder as it is on disk, or None if the folder has no such split."""
    src = _find_source(folder, split)
    if src is None:
        return None
    fmt, path = src
    raw = _READERS[fmt](path, split)
    if len(raw.sequences) == 0:
        raise TaskError(f"{raw.file}: split {split!r} has no data rows")
    return raw
