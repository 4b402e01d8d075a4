"""Variant task folders: ``variants.csv`` (or ``variants.vcf[.gz]``) + ``reference.fa``.

Everything is validated before any scoring starts, and the first problem is reported as one
line naming the file, the row and the value (``TaskError``).

- ``variants.csv``: columns ``chrom``, ``pos`` (1-based), ``ref``, ``alt``, ``label`` (0/1);
  optional ``score`` (a continuous measurement, used for Spearman); other columns are kept.
- ``variants.vcf`` / ``variants.vcf.gz``: VCF 4.x. One row per ALT allele. The label comes from
  ``INFO/LABEL`` (0/1) when present, else from ``INFO/CLNSIG`` by ``clnsig_label`` (pathogenic
  -> 1, benign -> 0, anything else is an error). ``INFO/SCORE`` becomes the ``score`` column.
- ``reference.fa``: records named ``CHROM:START-END`` (1-based, inclusive: a region) or
  ``CHROM`` (a whole chromosome starting at 1); text after the first space is a comment.
"""

from __future__ import annotations

import gzip
import hashlib
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from geneb.errors import TaskError
from geneb.tasks.variant_rows import check_unique_variants, row_location
from geneb.vocabulary import VARIANTS

REQUIRED = ("chrom", "pos", "ref", "alt", "label")
ALLELE = re.compile(r"^[ACGTN]+$")
_REGION = re.compile(r"^(?P<chrom>[^:\s]+):(?P<start>[\d,]+)-(?P<end>[\d,]+)$")
VCF_NAMES = ("variants.vcf", "variants.vcf.gz")
#: CLNSIG terms (lower case, ``_``/space-insensitive) and the label they map to.
CLNSIG_POSITIVE = {"pathogenic", "likely_pathogenic", "pathogenic/likely_pathogenic"}
CLNSIG_NEGATIVE = {"benign", "likely_benign", "benign/likely_benign"}
#: label spellings accepted for 1 and 0 (a parquet boolean column reads as True/False)
LABEL_VALUES = {"1": 1, "1.0": 1, "True": 1, "true": 1, "0": 0, "0.0": 0, "False": 0, "false": 0}


@dataclass(frozen=True)
class RefRecord:
    """One FASTA record: ``seq[0]`` is base ``start`` (1-based) of ``chrom``."""

    chrom: str
    start: int
    seq: str

    @property
    def end(self) -> int:
        return self.start + len(self.seq) - 1


@dataclass(frozen=True, eq=False)
class VariantTask:
    """A validated variant task. ``table`` has one row per variant, in file order, with the
    required columns normalised (upper-case alleles, int ``pos``/``label``) plus ``record``
    (index into ``records``) and ``offset`` (0-based position of the variant in that record)."""

    name: str
    folder: Path
    source: Path
    table: pd.DataFrame
    records: tuple[RefRecord, ...]
    fingerprint: str

    def __len__(self) -> int:
        return len(self.table)

    @property
    def has_score(self) -> bool:
        return "score" in self.table.columns


def text_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number from 1, line) of a UTF-8 text file, gunzipped when the name ends in .gz.

    Why not ``open(path, "rt")``: a truncated or non-gzip ``.gz`` and a non-UTF-8 byte would
    surface as ``EOFError`` / ``BadGzipFile`` / ``UnicodeDecodeError`` far from the line at
    fault. Here each is a ``TaskError`` naming the file and line.
    """
    lineno = 0
    try:
        with gzip.open(path, "rb") if path.name.endswith(".gz") else path.open("rb") as f:
            for lineno, raw in enumerate(f, 1):  # noqa: B007 (lineno is read in the handlers)
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise TaskError(
                        f"{path} line {lineno}: not UTF-8 text (byte 0x{raw[e.start]:02x} at "
                        f"column {e.start + 1}); expected plain ASCII/UTF-8"
                    ) from None
                yield lineno, text
    except gzip.BadGzipFile as e:
        why = "the file is not gzip data; drop the .gz from its name" if lineno == 0 else e
        raise TaskError(f"{path} line {lineno + 1}: not gzip data ({why})") from None
    except EOFError:
        raise TaskError(
            f"{path} line {lineno + 1}: the gzip stream ends early (a truncated file? "
            f"{lineno} complete lines were read)"
        ) from None
    except zlib.error as e:
        raise TaskError(f"{path} line {lineno + 1}: corrupt gzip data ({e})") from None


def read_fasta(path: Path) -> list[tuple[str, str]]:
    """(name, sequence) per record; the name is the header up to the first whitespace.

    Two records of one name are refused (which one a variant refers to would be a guess)."""
    out: list[tuple[str, str]] = []
    name: str | None = None
    parts: list[str] = []
    header_line: dict[str, int] = {}
    for lineno, line in text_lines(path):
        line = line.strip()
        if not line:
            continue
        if line.startswith(">"):
            if name is not None:
                out.append((name, "".join(parts)))
            head = line[1:].split()
            if not head:
                raise TaskError(f"{path} line {lineno}: FASTA header without a name")
            name, parts = head[0], []
            if name in header_line:
                raise TaskError(
                    f"{path} lines {header_line[name]} and {lineno}: two records named "
                    f"{name!r}; expected one record per name"
                )
            header_line[name] = lineno
        elif name is None:
            raise TaskError(f"{path} line {lineno}: sequence before the first '>' header")
        else:
            parts.append(line.upper())
    if name is not None:
        out.append((name, "".join(parts)))
    if not out:
        raise TaskError(f"{path}: no FASTA records")
    return out


def parse_records(path: Path) -> tuple[RefRecord, ...]:
    """Reference records with their coordinates taken from the record names."""
    recs: list[RefRecord] = []
    for name, seq in read_fasta(path):
        m = _REGION.match(name)
        if m:
            start = int(m["start"].replace(",", ""))
            end = int(m["end"].replace(",", ""))
            if start < 1 or end - start + 1 != len(seq):
                raise TaskError(
                    f"{path}: record {name!r} names {end - start + 1} bases "
                    f"({start}-{end}), but its sequence has {len(seq)}"
                )
            recs.append(RefRecord(m["chrom"], start, seq))
        else:
            recs.append(RefRecord(name, 1, seq))
    return tuple(recs)


def clnsig_label(value: str) -> int | None:
    """ClinVar CLNSIG -> label: (likely) pathogenic 1, (likely) benign 0, else None.

    Conflicting, uncertain, risk-factor, drug-response and combined terms carry no two-class
    label; such rows are an error (filter the VCF, or give ``INFO/LABEL``)."""
    v = value.strip().lower().replace(" ", "_")
    if v in CLNSIG_POSITIVE:
        return 1
    if v in CLNSIG_NEGATIVE:
        return 0
    return None


def read_vcf(path: Path) -> pd.DataFrame:
    """The variant table of a VCF: one row per ALT allele; label from INFO LABEL or CLNSIG."""
    rows: list[dict[str, object]] = []
    for lineno, line in text_lines(path):
        if line.startswith("#") or not line.strip():
            continue
        cols = line.rstrip("\r\n").split("\t")
        if len(cols) < 8:
            raise TaskError(
                f"{path} line {lineno}: expected 8 tab-separated VCF columns, got {len(cols)}"
            )
        chrom, pos, vid, ref, alts, _q, _flt, info = cols[:8]
        keys: dict[str, str] = {}
        for item in info.split(";"):
            k, _, v = item.partition("=")
            keys[k] = v
        if "LABEL" in keys:
            lab = keys["LABEL"]
        elif "CLNSIG" in keys:
            mapped = clnsig_label(keys["CLNSIG"])
            if mapped is None:
                raise TaskError(
                    f"{path} line {lineno}: CLNSIG={keys['CLNSIG']!r} maps to no label "
                    "(expected Pathogenic/Likely_pathogenic -> 1 or Benign/Likely_benign "
                    "-> 0; filter such rows out or give INFO LABEL=0/1)"
                )
            lab = str(mapped)
        else:
            lab = ""
        for alt in alts.split(","):
            row: dict[str, object] = {
                "chrom": chrom, "pos": pos, "ref": ref, "alt": alt, "label": lab,
                "id": vid, "_line": lineno,
            }
            if "SCORE" in keys:
                row["score"] = keys["SCORE"]
            if "CLNSIG" in keys:
                row["clnsig"] = keys["CLNSIG"]
            rows.append(row)
    if not rows:
        raise TaskError(f"{path}: no variant lines")
    df = pd.DataFrame(rows)
    for col in ("score", "clnsig"):
        if col in df.columns:
            df[col] = df[col].fillna("")
    return df


def _source(folder: Path) -> Path:
    csv = folder / "variants.csv"
    vcfs = [folder / n for n in VCF_NAMES if (folder / n).is_file()]
    found = ([csv] if csv.is_file() else []) + vcfs
    if not found:
        raise TaskError(
            f"{folder}: not a variant task (expected variants.csv or variants.vcf[.gz] "
            "next to reference.fa)"
        )
    if len(found) > 1:
        raise TaskError(f"{folder}: several variant files ({', '.join(p.name for p in found)}); "
                        "keep one")
    return found[0]


def fetched_variant_folder(name: str) -> Path | None:
    """The folder ``geneb tasks fetch NAME`` made for a catalogue variant set, if any
    (``$GENEB_CACHE/variants/NAME``, complete)."""
    from geneb.tasks.cache import fetched_folders

    return fetched_folders(VARIANTS).get(name)


def _not_found(name: str) -> TaskError:
    """No such folder: say how to get it when ``name`` is a catalogue variant set."""
    from geneb.tasks.catalogue import load_task_catalogue

    entry = next((e for e in load_task_catalogue() if e.name == name), None)
    hint = ""
    if entry is not None and entry.kind == VARIANTS:
        why = entry.fetchable(reference_given=True)
        if why is not None:
            hint = f"; {name!r} is a catalogue variant set that cannot be fetched ({why})"
        else:
            ref = " --reference GENOME.fa" if entry.source.needs_reference() else ""
            hint = f"; {name!r} is a catalogue variant set: run geneb tasks fetch {name}{ref}"
    return TaskError(f"variant task folder {name!r} does not exist{hint}")


def load_variant_task(folder: str | Path) -> VariantTask:
    """Load and validate a variant task folder (see module doc), or a fetched catalogue variant
    set by name. Raises ``TaskError``."""
    folder = Path(folder)
    if not folder.is_dir():
        fetched = fetched_variant_folder(str(folder))
        if fetched is None:
            raise _not_found(str(folder))
        folder = fetched
    src = _source(folder)
    fasta = folder / "reference.fa"
    if not fasta.is_file():
        raise TaskError(f"{folder}: missing reference.fa (the sequence the variants refer to)")
    if src.name == "variants.csv":
        try:
            df = pd.read_csv(src, dtype=str, keep_default_na=False)
        except UnicodeDecodeError:
            for _ in text_lines(src):  # raises, naming the line with the byte
                pass
            raise TaskError(f"{src}: not UTF-8 text") from None
        except Exception as e:
            raise TaskError(f"{src}: cannot be read as CSV: {e}") from None
        missing = [c for c in REQUIRED if c not in df.columns]
        if missing:
            raise TaskError(
                f"{src}: missing column(s) {', '.join(missing)} (expected "
                f"{', '.join(REQUIRED)}; got {', '.join(df.columns)})"
            )
    else:
        df = read_vcf(src)
    if df.empty:
        raise TaskError(f"{src}: no variants")
    records = parse_records(fasta)
    table = _validate(src, df, records)
    h = hashlib.sha256()
    h.update(pd.util.hash_pandas_object(table[list(REQUIRED)], index=False).values.tobytes())
    for r in records:
        h.update(f"{r.chrom}:{r.start}\0".encode() + r.seq.encode())
    fingerprint = "sha256:" + h.hexdigest()
    return VariantTask(folder.resolve().name, folder, src, table, records, fingerprint)


def check_variant_rows(src: Path, df: pd.DataFrame, *, with_ref: bool = True) -> pd.DataFrame:
    """The one row check of a variant table, for a folder's load and a fetch's conversion alike.

    Positions must be integers >= 1 (``41276135.9`` is refused, never truncated), labels 0/1,
    alleles A/C/G/T/N with alt != ref, scores numbers. Returns the table normalised (int
    ``pos``/``label``, upper-case alleles, float ``score``); the first bad row raises, named
    by ``src`` and its line. ``with_ref=False``: a published table with no ``ref`` column (the
    converter takes ref from the reference genome, and the folder's load then checks it).
    """
    df = df.copy()
    n = len(df)
    allele_cols = ("ref", "alt") if with_ref else ("alt",)
    for col in ("chrom", *allele_cols):
        df[col] = df[col].astype(str).str.strip()
    for col in allele_cols:
        df[col] = df[col].str.upper()
    pos = pd.to_numeric(df["pos"], errors="coerce")
    lab = df["label"].astype(str).str.strip()
    pos_l, raw_pos, lab_l = pos.tolist(), df["pos"].tolist(), lab.tolist()
    alleles = {col: df[col].tolist() for col in allele_cols}
    for i in range(n):
        pv = pos_l[i]
        if pd.isna(pv) or not 1 <= pv < 2**53 or pv != int(pv):
            raise TaskError(f"{row_location(src, df, i)}: pos {raw_pos[i]!r} is not a "
                            "1-based position (expected an integer >= 1)")
        if lab_l[i] == "":
            raise TaskError(f"{row_location(src, df, i)}: missing label (expected 0 or 1)")
        if lab_l[i] not in LABEL_VALUES:
            raise TaskError(f"{row_location(src, df, i)}: label {lab_l[i]!r} (expected 0 or 1)")
        for col in allele_cols:
            if not ALLELE.match(alleles[col][i]):
                raise TaskError(f"{row_location(src, df, i)}: {col} allele {alleles[col][i]!r} "
                                "(expected letters A, C, G, T, N only)")
        if with_ref and alleles["ref"][i] == alleles["alt"][i]:
            raise TaskError(f"{row_location(src, df, i)}: alt equals ref ({alleles['alt'][i]!r})")
    df["pos"] = pos.astype(np.int64)
    df["label"] = lab.map(LABEL_VALUES).astype(np.int64)
    if "score" in df.columns:
        sc = pd.to_numeric(df["score"].replace("", np.nan), errors="coerce")
        given = df["score"].astype(str).str.strip() != ""
        bad = (sc.isna() & given) | np.isinf(sc.to_numpy(dtype=float, na_value=0.0))
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise TaskError(f"{row_location(src, df, i)}: score: expected a finite number "
                            f"(or an empty cell), got {df['score'].iloc[i]!r}")
        df["score"] = sc.astype(float)
    return df


def _validate(src: Path, df: pd.DataFrame, records: tuple[RefRecord, ...]) -> pd.DataFrame:
    df = check_variant_rows(src, df)
    check_unique_variants(src, df)
    n = len(df)
    by_chrom: dict[str, list[int]] = {}
    for j, r in enumerate(records):
        by_chrom.setdefault(r.chrom, []).append(j)
    rec_idx = np.empty(n, dtype=np.int64)
    offset = np.empty(n, dtype=np.int64)
    chroms, poss, refs = df["chrom"].tolist(), df["pos"].tolist(), df["ref"].tolist()
    for i in range(n):
        chrom, p, ref = chroms[i], int(poss[i]), refs[i]
        if chrom not in by_chrom:
            raise TaskError(f"{row_location(src, df, i)}: chrom {chrom!r} has no record in "
                            f"reference.fa (records: {', '.join(sorted(by_chrom))})")
        hit = [j for j in by_chrom[chrom]
               if records[j].start <= p and p + len(ref) - 1 <= records[j].end]
        if not hit:
            spans = ", ".join(f"{records[j].start}-{records[j].end}" for j in by_chrom[chrom])
            raise TaskError(f"{row_location(src, df, i)}: {chrom}:{p} ({ref}) is outside the "
                            f"reference (reference.fa covers {chrom}:{spans})")
        j = hit[0]
        o = p - records[j].start
        got = records[j].seq[o : o + len(ref)]
        if got != ref:
            raise TaskError(f"{row_location(src, df, i)}: ref {ref!r} does not match the reference "
                            f"at {chrom}:{p} ({got!r} in reference.fa)")
        rec_idx[i], offset[i] = j, o
    df["record"] = rec_idx
    df["offset"] = offset
    df.insert(0, "variant", np.arange(n, dtype=np.int64))
    return df.drop(columns=[c for c in ("_line",) if c in df.columns]).reset_index(drop=True)
