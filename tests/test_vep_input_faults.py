"""Broken variant input (issue 19, cases 11 and 12): one line naming file and line, exit 2.

A truncated or non-gzip ``variants.vcf.gz``, a non-UTF-8 byte in a VCF, a CSV or the
reference (and in a task's labelled FASTA), and a reference with two records of one name.
Expected line numbers come from the bytes written here (and, for the truncated stream, from
zlib directly), never from geneb.
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from geneb.cli import app
from geneb.errors import TaskError
from geneb.tasks.variants import load_variant_task

SEQ = "ACGTTGCAAC" * 30  # chrT, 300 bases from position 1
HEAD = "##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\n"


def _vcf_text(n: int) -> str:
    lines = []
    for i in range(n):
        pos = 1 + (i % 290)
        ref = SEQ[pos - 1]
        alt = next(b for b in "ACGT" if b != ref)
        lines.append(f"chrT\t{pos}\trs{i}\t{ref}\t{alt}\t.\tPASS\tLABEL={i % 2};SCORE=0.{i}\n")
    return HEAD + "".join(lines)


def _folder(tmp_path: Path, reference: bytes | None = None) -> Path:
    folder = tmp_path / "vt"
    folder.mkdir()
    (folder / "reference.fa").write_bytes(reference or f">chrT\n{SEQ}\n".encode())
    return folder


def _score(folder: Path):
    """`geneb vep score` on ``folder``; the input is read before any model is built."""
    return CliRunner().invoke(
        app, ["vep", "score", "--task", str(folder), "--model", "kmer-3", "--scorer", "cosine"]
    )


def _one_line_error(result, *needles: str) -> str:
    assert result.exit_code == 2, result.output
    out = result.output
    assert "Traceback" not in out and "Aborted" not in out, out
    lines = [line for line in out.splitlines() if line.strip()]
    text = " ".join(out.split())  # rich/typer may wrap a long line
    assert lines[0].startswith("error: "), out
    for needle in needles:
        assert needle in text, (needle, out)
    return text


def test_truncated_vcf_gz_names_the_file_and_line(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    whole = gzip.compress(_vcf_text(3000).encode())
    cut = whole[: len(whole) * 2 // 3]
    (folder / "variants.vcf.gz").write_bytes(cut)
    # reference: what zlib itself can recover from the cut stream
    recovered = zlib.decompressobj(wbits=31).decompress(cut)
    line = recovered.count(b"\n") + 1
    _one_line_error(
        _score(folder), f"variants.vcf.gz line {line}:", "gzip stream ends early", "truncated"
    )


def test_vcf_gz_that_is_not_gzip_is_one_line(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    (folder / "variants.vcf.gz").write_text(_vcf_text(5))
    _one_line_error(_score(folder), "variants.vcf.gz line 1: not gzip data", "drop the .gz")


@pytest.mark.parametrize("gz", [False, True])
def test_non_utf8_byte_in_vcf_names_line_and_byte(tmp_path: Path, gz: bool) -> None:
    folder = _folder(tmp_path)
    lines = _vcf_text(10).encode().split(b"\n")
    lines[6] = lines[6].replace(b"PASS", b"PA\xe9S")  # file line 7 (2 header lines + 5)
    data = b"\n".join(lines)
    col = lines[6].index(b"\xe9") + 1
    name = "variants.vcf.gz" if gz else "variants.vcf"
    (folder / name).write_bytes(gzip.compress(data) if gz else data)
    _one_line_error(_score(folder), f"{name} line 7: not UTF-8", f"0xe9 at column {col}")


def test_non_utf8_byte_in_reference_names_line(tmp_path: Path) -> None:
    wrapped = "\n".join(SEQ[i : i + 60] for i in range(0, len(SEQ), 60))
    ref = f">chrT\n{wrapped}\n".encode()
    body = ref.split(b"\n")
    body[3] = body[3][:10] + b"\xff" + body[3][11:]  # line 4 of the file
    folder = _folder(tmp_path, b"\n".join(body))
    (folder / "variants.vcf").write_text(_vcf_text(3))
    _one_line_error(_score(folder), "reference.fa line 4: not UTF-8", "0xff at column 11")


def test_non_utf8_byte_in_variants_csv_names_line(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    rows = ["chrom,pos,ref,alt,label,note"]
    for i in range(1, 6):
        ref = SEQ[i - 1]
        rows.append(f"chrT,{i},{ref},{next(b for b in 'ACGT' if b != ref)},1,n{i}")
    data = "\n".join(rows).encode().replace(b"n4", b"n\x84")  # row of i=4: file line 5
    (folder / "variants.csv").write_bytes(data + b"\n")
    _one_line_error(_score(folder), "variants.csv line 5: not UTF-8", "0x84")


def test_reference_with_two_records_of_one_name_is_refused_naming_both(tmp_path: Path) -> None:
    ref = f">chrT first copy\n{SEQ[:150]}\n{SEQ[150:]}\n>chrU\nACGT\n>chrT again\n{SEQ}\n"
    folder = _folder(tmp_path, ref.encode())
    (folder / "variants.vcf").write_text(_vcf_text(3))
    with pytest.raises(TaskError, match=r"reference\.fa lines 1 and 6: two records named 'chrT'"):
        load_variant_task(folder)
    _one_line_error(_score(folder), "reference.fa lines 1 and 6", "two records named 'chrT'")


def test_region_records_of_one_chromosome_with_distinct_names_still_load(tmp_path: Path) -> None:
    """Only an identical name is refused: two regions of one chromosome are two records."""
    ref = f">chrT:1-150\n{SEQ[:150]}\n>chrT:151-300\n{SEQ[150:]}\n"
    folder = _folder(tmp_path, ref.encode())
    (folder / "variants.vcf").write_text(_vcf_text(20))
    task = load_variant_task(folder)
    assert len(task.records) == 2 and len(task) == 20


def test_non_utf8_byte_in_a_task_fasta_names_the_line(tmp_path: Path) -> None:
    folder = tmp_path / "task"
    folder.mkdir()
    records = [f">s{i}|{'ab'[i % 2]}\n{SEQ[i:i + 40]}\n" for i in range(6)]
    data = "".join(records).encode()
    lines = data.split(b"\n")
    lines[7] = lines[7][:4] + b"\xc3(" + lines[7][6:]  # an invalid UTF-8 pair on line 8
    (folder / "train.fa").write_bytes(b"\n".join(lines))
    (folder / "test.fa").write_text("".join(records))
    result = CliRunner().invoke(app, ["tasks", "show", str(folder)])
    _one_line_error(result, "train.fa line 8: not UTF-8", "0xc3 at column 5")
