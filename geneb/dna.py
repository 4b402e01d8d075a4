"""DNA sequence text helpers shared by every layer (no imports): one reverse complement.

Why here: the ``both`` strands option of embedders (``geneb.models.strands``) and the task
audit's reverse-complement copies (``geneb.audit.duplicates``) must agree on what the reverse
strand of a sequence is (two tables would drift apart: one might handle upper case only).
"""

from __future__ import annotations

#: IUPAC complement; case is kept (a lower-case vocabulary stays lower-case), N stays N.
_COMPLEMENT = str.maketrans("ACGTUNRYKMSWBDHVacgtunrykmswbdhv", "TGCAANYRMKSWVHDBtgcaanyrmkswvhdb")


def reverse_complement(seq: str) -> str:
    """The reverse complement of ``seq`` (IUPAC codes complemented, U read as T)."""
    return seq.translate(_COMPLEMENT)[::-1]
