"""The one reverse complement (geneb.dna), used by strands=both and the task audit."""

from __future__ import annotations

from geneb.dna import reverse_complement


def test_reverse_complement_by_hand() -> None:
    assert reverse_complement("AACGTTN") == "NAACGTT"
    assert reverse_complement("acgtn") == "nacgt"  # case kept (lower-case vocabularies)
    assert reverse_complement("ACGU") == "ACGT"  # U read as T
    # IUPAC: R<->Y, K<->M, S and W self-complementary, B<->V, D<->H
    assert reverse_complement("RYKMSWBVDH") == "DHBVWSKMRY"
    s = "ACGTRYKMSWBDHVN" * 3
    assert reverse_complement(reverse_complement(s)) == s
