"""Issue 28 case 12: a user reference with two records of one chromosome is refused, naming both.

Held out from the issue's replay (two ``>chr1``; both ``1`` and ``chr1``): the duplicate
after or before the wanted one, ``chrX``/``X`` and ``MT``/``chrM`` aliases, gzipped; a second
record of a chromosome no variant needs (two ``>chr7`` names one sequence twice) too. Through
``geneb tasks fetch`` nothing is cached.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from test_tasks_fetch_variants import FLANK, TG, _fasta, _genome, hub  # noqa: F401 - fixture

from geneb.errors import TaskError
from geneb.tasks.catalogue import select
from geneb.tasks.fetch import FetchError, plan_fetch, run_fetch
from geneb.tasks.reference import UserReference, extract_windows

NEEDS = {"X": [(10, 60)], "2": [(5, 40)], "MT": [(1, 20)]}
SEQ = "ACGT" * 30


def _write(path: Path, names: list[str]) -> Path:
    text = "".join(f">{n} desc\n{SEQ}\n" for n in names).encode()
    path.write_bytes(gzip.compress(text) if path.suffix == ".gz" else text)
    return path


@pytest.mark.parametrize(("names", "first", "second", "about"), [
    (["chr2", "chrX", "chrMT", "X"], "chrX", "X", "are both chromosome 'X'"),
    (["X", "2", "chrX", "MT"], "X", "chrX", "are both chromosome 'X'"),
    (["chrX", "2", "chrM", "MT"], "chrM", "MT", "are both chromosome 'MT'"),
    (["2", "2", "X", "MT"], "2", "2", "two records named '2'"),
    (["chr7", "X", "2", "MT", "chr7"], "chr7", "chr7", "two records named 'chr7'"),
])
@pytest.mark.parametrize("suffix", [".fa", ".fa.gz"])
def test_two_records_of_one_chromosome_refused_naming_both(tmp_path, names, first, second,
                                                           about, suffix):
    ref = _write(tmp_path / f"g{suffix}", names)
    out = tmp_path / "out.fa"
    with pytest.raises(TaskError) as e:
        extract_windows(UserReference(ref, 10), NEEDS, out)
    msg = str(e.value)
    i, j = names.index(first) + 1, len(names) - names[::-1].index(second)
    assert f"(records {i} and {j})" in msg, msg
    assert about in msg and "expected one record per chromosome" in msg, msg
    if first != second:
        assert f"records {first!r} and {second!r}" in msg, msg


def test_one_record_each_is_fine(tmp_path):
    ref = _write(tmp_path / "g.fa", ["chrX", "chr2", "chrM", "chr1", "1_random"])
    info = extract_windows(UserReference(ref, 10), NEEDS, tmp_path / "out.fa")
    assert info["chromosomes"] == {"X": "chrX", "2": "chr2", "MT": "chrM"}


def test_fetch_refuses_a_doubled_chromosome_and_caches_nothing(hub):  # noqa: F811
    genome = _genome()
    ref = _fasta(genome, "ucsc", hub["tmp"] / "doubled.fa.gz")
    extra = gzip.compress(f">2 again\n{genome['2']}\n".encode())
    ref.write_bytes(ref.read_bytes() + extra)  # a second gzip member: both read as one file
    plan = plan_fetch(select([TG], tuple(hub["entries"].values())), None,
                      UserReference(ref, FLANK))
    with pytest.raises(FetchError, match=r"records 'chr2' and '2' \(records 2 and 5\) are both "
                                         r"chromosome '2'"):
        run_fetch(plan)
    assert not (hub["cache"] / "variants" / TG).exists()
