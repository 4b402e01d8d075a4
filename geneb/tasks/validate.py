"""Vectorised validation of raw split data: sequences and labels.

Why vectorised: real task splits hold 20k+ rows (the cap is 100k), and loading must stay well
under a second, so sequence characters are checked on one byte buffer with a lookup table and
labels through pandas string operations, never row by row in Python.

Every error is a ``TaskError`` that names the file, the row and the offending value, plus how
many rows have the same problem. Where a row is described depends on the input format (see
``Locator``): csv/parquet rows are 1-based *data rows* (the header is not counted; the csv line
number is given too), FASTA records are named by the 1-based line number of their header.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import numpy as np
import pandas as pd

from geneb.errors import TaskError

#: Characters accepted in a sequence (after upper-casing): ACGT, N and the IUPAC ambiguity codes.
ALPHABET = "ACGTNRYSWKMBDHV"

#: Label values read as "missing" (besides a real NaN/None): empty cells and common NA spellings.
NA_TOKENS = frozenset({"", "nan", "NaN", "NAN", "NA", "N/A", "na", "null", "NULL", "None"})

_VALID = np.zeros(256, dtype=bool)
_VALID[np.frombuffer(ALPHABET.encode("ascii"), dtype=np.uint8)] = True

#: Describes row ``i`` (0-based) of a raw split for an error, e.g. "train.csv row 3 (line 4)".
Locator = Callable[[int], str]


def csv_locator(file: str) -> Locator:
    """Rows of a csv file: 1-based data row (header excluded) and the 1-based line number."""
    return lambda i: f"{file} row {i + 1} (line {i + 2})"


def table_locator(file: str) -> Locator:
    """Rows of a parquet file: 1-based data row."""
    return lambda i: f"{file} row {i + 1}"


def _short(value: object, n: int = 40) -> str:
    text = str(value)
    return repr(text if len(text) <= n else text[:n] + "...")


def _also(n_bad: int) -> str:
    return f" ({n_bad} rows have this problem)" if n_bad > 1 else ""


@dataclass(frozen=True)
class CheckedSequences:
    """Normalised sequences and what normalising did (``uppercased_rows`` rows had lower case)."""

    sequences: tuple[str, ...]
    lengths: np.ndarray
    uppercased_rows: int


def check_sequences(seqs: Sequence[object], where: Locator) -> CheckedSequences:
    """Upper-case and validate sequences; raise on empty/missing ones and foreign characters."""
    n = len(seqs)
    missing = np.fromiter((not isinstance(s, str) for s in seqs), dtype=bool, count=n)
    if missing.any():
        i = int(np.flatnonzero(missing)[0])
        raise TaskError(
            f"{where(i)}: missing sequence (got {seqs[i]!r}); every row needs a DNA sequence"
            f"{_also(int(missing.sum()))}"
        )
    strs = cast("Sequence[str]", seqs)  # every entry was just checked to be a str
    lengths = np.fromiter(map(len, strs), dtype=np.int64, count=n)
    ends = np.cumsum(lengths)
    starts = ends - lengths
    joined = "".join(strs)

    def row_col(pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rows = np.searchsorted(ends, pos, side="right")
        return rows, pos - starts[rows]

    # one byte per character: a non-ASCII character becomes '?', which the table rejects
    arr = np.frombuffer(joined.encode("ascii", errors="replace"), dtype=np.uint8)
    lower = (arr >= 97) & (arr <= 122)
    upper_arr = arr - (lower.astype(np.uint8) * 32) if lower.any() else arr
    bad = np.flatnonzero(~_VALID[upper_arr])
    bad_rows, bad_cols = row_col(bad)
    empty = np.flatnonzero(lengths == 0)
    if empty.size or bad.size:
        n_rows = int(np.unique(bad_rows).size + empty.size)
        if empty.size and (not bad.size or empty[0] < bad_rows[0]):
            raise TaskError(f"{where(int(empty[0]))}: empty sequence{_also(n_rows)}")
        i, pos = int(bad_rows[0]), int(bad[0])
        raise TaskError(
            f"{where(i)}: invalid character {joined[pos]!r} at position {int(bad_cols[0]) + 1} "
            f"of sequence {_short(strs[i])}; allowed: {ALPHABET} (any case){_also(n_rows)}"
        )
    n_lower_rows = 0
    if lower.any():
        n_lower_rows = int(np.unique(row_col(np.flatnonzero(lower))[0]).size)
        up = joined.upper()
        out = tuple(up[s:e] for s, e in zip(starts.tolist(), ends.tolist(), strict=True))
    else:
        out = tuple(strs)
    return CheckedSequences(out, lengths, n_lower_rows)


@dataclass(frozen=True)
class RawLabels:
    """Labels of one split classified per row: ``kind`` 1 = integer, 2 = string."""

    kind: np.ndarray  # int8 per row
    ints: np.ndarray  # int64 per row (valid where kind == 1)
    strs: np.ndarray  # object per row (stripped text)


def classify_labels(values: Sequence[object] | np.ndarray, where: Locator) -> RawLabels:
    """Sort each label into integer / string; raise on missing (NaN/empty) or fractional ones."""
    arr = np.asarray(values)
    n = arr.shape[0]
    if arr.dtype.kind in "iu":
        return RawLabels(np.ones(n, np.int8), arr.astype(np.int64), arr.astype(str).astype(object))
    if arr.dtype.kind == "f":
        nan = np.flatnonzero(np.isnan(arr))
        if nan.size:
            i = int(nan[0])
            raise TaskError(f"{where(i)}: missing label (NaN){_also(nan.size)}")
        frac = np.flatnonzero(arr != np.round(arr))
        if frac.size:
            i = int(frac[0])
            raise TaskError(
                f"{where(i)}: label {float(arr[i])!r} is not an integer class id{_also(frac.size)}"
            )
        ints = arr.astype(np.int64)
        return RawLabels(np.ones(n, np.int8), ints, ints.astype(str).astype(object))
    s = pd.Series(arr, dtype=object)
    isna = s.isna().to_numpy()
    text = s.astype(str).str.strip()
    missing = isna | text.isin(NA_TOKENS).to_numpy()
    if missing.any():
        i = int(np.flatnonzero(missing)[0])
        raise TaskError(
            f"{where(i)}: missing label (got {_short(arr[i])}); every row needs a label"
            f"{_also(int(missing.sum()))}"
        )
    is_int = text.str.fullmatch(r"[+-]?\d{1,18}").to_numpy(dtype=bool)
    # "1.0" (a float column written by pandas) is the integer 1; "1.5" is an error, not a name
    is_num = ~is_int & text.str.fullmatch(r"[+-]?(\d+\.\d*|\.\d+)([eE][+-]?\d+)?").to_numpy(bool)
    ints = np.zeros(n, dtype=np.int64)
    if is_int.any():
        ints[is_int] = text[is_int].astype(np.int64).to_numpy()
    if is_num.any():
        num = text[is_num].astype(float).to_numpy()
        frac = np.flatnonzero(num != np.round(num))
        if frac.size:
            i = int(np.flatnonzero(is_num)[frac[0]])
            raise TaskError(
                f"{where(i)}: label {text.iloc[i]!r} is not an integer class id{_also(frac.size)}"
            )
        ints[is_num] = num.astype(np.int64)
        is_int = is_int | is_num
    kind = np.where(is_int, 1, 2).astype(np.int8)
    return RawLabels(kind, ints, text.to_numpy(dtype=object))


def check_label_kinds(
    splits: Sequence[tuple[str, RawLabels, Locator]],
) -> str:
    """All labels of a task must be integers, or all strings; return ``"int"`` or ``"str"``."""
    first_name, first, _ = splits[0]
    expected = int(first.kind[0])
    names = {1: "an integer", 2: "a string"}
    for _name, raw, where in splits:
        other = np.flatnonzero(raw.kind != expected)
        if other.size:
            i = int(other[0])
            raise TaskError(
                f"{where(i)}: inconsistent label types: label {raw.strs[i]!r} is "
                f"{names[int(raw.kind[i])]} but the first label of {first_name} "
                f"({first.strs[0]!r}) is {names[expected]}; use only integer ids 0..K-1 or "
                f"only names{_also(other.size)}"
            )
    return "int" if expected == 1 else "str"


def check_two_classes(
    split: str, labels: np.ndarray, file: str, label_names: Sequence[str]
) -> None:
    """A split with a single class cannot train or evaluate a classifier."""
    present = np.unique(labels)
    if present.size < 2:
        lab = label_names[int(present[0])] if present.size else "(none)"
        raise TaskError(
            f"{file}: split {split!r} has only one class (label {lab!r} in all {labels.size} "
            f"rows); every split needs at least two classes"
        )


def _one_edit_apart(a: str, b: str) -> int | None:
    """Index of the single substituted/inserted/deleted character between a and b, else None."""
    if a == b or abs(len(a) - len(b)) > 1:
        return None
    if len(a) > len(b):
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    if len(a) == len(b):
        return i if a[i + 1 :] == b[i + 1 :] else None
    return i if a[i:] == b[i + 1 :] else None


def near_duplicate(a: str, b: str) -> bool:
    """Two class names that are most likely one class spelled two ways.

    Why these rules: a misspelt per-class FASTA file name (``backgroud.fa``) silently adds a
    class. Names that differ only in case, separators or a plural ``s`` are near-duplicates; so
    are names of 5+ characters one letter apart *inside* the word (``promoter``/``promotor``).
    A difference in the last character (``class_a``/``class_b``, ``H3K4me1``/``H3K4me2``) or in a
    digit is how real class sets are enumerated, so it is allowed.
    """

    def norm(s: str) -> str:
        s = "".join(ch for ch in s.casefold() if ch.isalnum())
        return s[:-1] if s.endswith("s") and len(s) > 3 else s

    if a != b and norm(a) == norm(b):
        return True
    if min(len(a), len(b)) < 5:
        return False
    i = _one_edit_apart(a, b)
    if i is None or i >= max(len(a), len(b)) - 1:
        return False
    changed = {c for c in (a[i : i + 1], b[i : i + 1]) if c}
    return all(c.isalpha() for c in changed)


def near_duplicate_pairs(names: Sequence[str]) -> list[tuple[str, str]]:
    """Every pair of ``names`` that ``near_duplicate`` flags, in input order."""
    names = list(names)
    return [(a, b) for i, a in enumerate(names) for b in names[i + 1 :] if near_duplicate(a, b)]


def check_eval_classes(
    train_file: str,
    train_labels: np.ndarray,
    split: str,
    labels: np.ndarray,
    where: Locator,
    label_names: Sequence[str],
) -> None:
    """An evaluation split must not hold a class the train split lacks: no probe can learn it.

    Why: a test label never seen in training is scored but can never be predicted, so the
    metric silently measures a typo or a mislabelled file rather than the model.
    """
    trained = set(np.unique(train_labels).tolist())
    unseen = np.flatnonzero(~np.isin(labels, list(trained)))
    if not unseen.size:
        return
    i = int(unseen[0])
    name = label_names[int(labels[i])]
    known = [label_names[k] for k in sorted(trained)]
    close = [k for k in known if near_duplicate(name, k)] or did_you_mean_labels(name, known)
    hint = f"; it looks like a misspelling of {close[0]!r}" if close else ""
    raise TaskError(
        f"{where(i)}: label {name!r} of split {split!r} never occurs in the train split "
        f"({train_file}, labels: {', '.join(repr(k) for k in known)}){hint}; a probe cannot "
        f"score a class it was never trained on{_also(int(unseen.size))}"
    )


def did_you_mean_labels(name: str, known: Sequence[str]) -> list[str]:
    """Near-duplicates first, else difflib's close matches (string labels only)."""
    if name.lstrip("+-").isdigit():
        return []
    import difflib

    return difflib.get_close_matches(name, list(known), n=1, cutoff=0.8)


def check_class_files(splits: Sequence[tuple[str, Sequence[str]]]) -> None:
    """Per-class FASTA splits, as (split, class files): no near-duplicate class names, and the
    same classes in every split.

    Why: with one file per class, the class set *is* the set of file names, so a misspelt or
    missing file silently changes the task (an extra class, a class never evaluated).
    """
    stems: dict[str, dict[str, str]] = {}
    for split, class_files in splits:
        by_stem = {Path(f).stem: f for f in class_files}
        for a, b in near_duplicate_pairs(list(by_stem)):
            raise TaskError(
                f"{by_stem[a]} and {by_stem[b]}: class names {a!r} and {b!r} of split {split!r} "
                f"look like one class spelled two ways; rename one file (each file is a class)"
            )
        stems[split] = by_stem
    if "train" not in stems:
        return
    train = stems["train"]
    for split, by_stem in stems.items():
        if split == "train" or set(by_stem) == set(train):
            continue
        extra = sorted(set(by_stem) - set(train))
        lacking = sorted(set(train) - set(by_stem))
        pairs = [(a, b) for a in extra for b in lacking if near_duplicate_pairs([a, b])]
        if pairs:
            a, b = pairs[0]
            raise TaskError(
                f"{by_stem[a]}: class {a!r} of split {split!r} looks like a misspelling of "
                f"{train[b]} (class {b!r} of split 'train'); every split needs the same class files"
            )
        what = "; ".join(
            part
            for part in (
                f"only in {split!r}: " + ", ".join(by_stem[c] for c in extra) if extra else "",
                f"missing from {split!r}: " + ", ".join(train[c] for c in lacking)
                if lacking
                else "",
            )
            if part
        )
        raise TaskError(
            f"per-class FASTA splits 'train' and {split!r} hold different classes ({what}); "
            f"every split needs the same class files"
        )
