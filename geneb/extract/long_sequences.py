"""Sequences longer than a model's context: counted before writing, announced once.

Counted from the adapter's own tokenisation (``prepare`` items that say how many tokens
truncation ``dropped``), over the whole split, so provenance holds exact numbers even for a
resumed entry; ``truncation_warning`` turns the results of one extraction into one line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from geneb.models.embedder import Embedder


def long_sequence_counts(embedder: Embedder, sequences: Sequence[str]) -> dict[str, int] | None:
    """Rows longer than the model's context and tokens truncation drops (None: not known).

    Counted from the adapter's own tokenisation (``prepare`` items with ``dropped``) before
    the entry is written, so provenance holds the numbers for the whole split.
    """
    prepare = getattr(embedder, "prepare", None)
    if prepare is None:
        return None
    truncated = dropped = windowed = 0
    for b0 in range(0, len(sequences), 1024):
        for item in prepare(sequences[b0 : b0 + 1024]):
            if not hasattr(item, "dropped"):
                return None
            d = int(item.dropped)
            truncated += d > 0
            dropped += d
            windowed += len(getattr(item, "windows", ())) > 1
    return {
        "rows": len(sequences),
        "truncated_rows": truncated,
        "dropped_tokens": dropped,
        "windowed_rows": windowed,
    }


def truncation_warning(results: Sequence[Any]) -> str | None:
    """ONE line for a whole extraction when any row embedded in it was truncated (else None)."""
    hit = [r for r in results if r.truncated_rows]
    if not hit:
        return None
    rows = sum(r.truncated_rows for r in hit)
    toks = sum(r.dropped_tokens for r in hit)
    total = sum(r.n_rows for r in hit)
    where = ", ".join(f"{r.key} ({r.truncated_rows})" for r in hit)
    ctxs = {r.provenance.max_length for r in hit if r.provenance is not None}
    ctx = f" ({ctxs.pop()} tokens)" if len(ctxs) == 1 else ""
    from geneb.models.adapters.track_models import TRACK_MODEL_TYPES

    types = {r.provenance.model_type for r in hit if r.provenance is not None}
    fixed = bool(types) and types <= set(TRACK_MODEL_TYPES)  # Enformer, Borzoi: no windowing
    hint = ("their central bases were embedded (the model's fixed input window)" if fixed
            else "truncation='window' embeds them whole")
    return (
        f"warning: {rows:,} of {total:,} rows were longer than the model context{ctx} "
        f"and were truncated, {toks:,} tokens dropped: {where}; {hint}"
    )
