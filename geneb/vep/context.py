"""Whether a window can be scored at all: it must lie in the reference and fit the model whole.

A window the model cannot see in one pass is never scored: an embedder would cut it (the
variant at its centre may be cut away: cosine ~1e-16, l2 exactly 0 for every variant) or split
it into pieces pooled together; a language model would run off its position table. Two checks,
both before any forward pass:

- ``check_reference_room``: a window longer than every reference record of the task gives no
  variant a window; refused before the model loads or any window is built.
- ``check_window_fits``: a window of ``W`` bases of the task's own reference is tokenised as
  the model tokenises (at most ``PROBE_BASES_PER_TOKEN`` times the model's token limit, so a
  10,000,000-base window costs a few thousand bases of tokenising, never gigabytes); when it
  does not fit, ``WindowTooLong`` names the largest window that does.

Windows near the limit whose token count varies with their bases (BPE) are then checked one
by one (``mark_unseeable``): those that do not fit get status ``window_longer_than_model_context``
(``geneb.vep.likelihood.TOO_LONG``), as the ``llr`` scorer already did, and are never embedded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from geneb.errors import GenebError
from geneb.tasks.variants import VariantTask
from geneb.tasks.windows import OK, Windows
from geneb.vep.likelihood import TOO_LONG

#: How many bases per token the up-front probe allows for (no DNA tokenizer's tokens are
#: longer: characters 1, Nucleotide Transformer 6, DNABERT-2's BPE ~4.5 on average).
PROBE_BASES_PER_TOKEN = 64


class WindowTooLong(GenebError):
    """A window does not fit in one pass of the model (``geneb run`` skips that model's VEP
    with a line; ``geneb vep score`` / ``probe`` refuse)."""


@dataclass(frozen=True)
class Context:
    """What one pass of a model sees: ``fits(windows)`` -> bool per window."""

    model: str
    limit: int  # tokens per pass
    source: str  # where the limit comes from
    fits: Callable[[Sequence[str]], np.ndarray]


def check_reference_room(vt: VariantTask, window: int) -> None:
    """Refuse a window longer than every reference record of ``vt`` (no variant could get
    one)."""
    longest = max((len(r.seq) for r in vt.records), default=0)
    if window > longest:
        raise GenebError(
            f"window: expected at most {longest:,} bases (the longest reference record of task "
            f"{vt.name!r}), got {window:,}: no variant could get a window", param="window")


def embedder_context(embedder: Any, model: str) -> Context | None:
    """The context of an embedder that tokenises (None: no limit, as for k-mer spectra)."""
    limit = getattr(embedder, "max_length", None)
    prepare = getattr(embedder, "prepare", None)
    if not isinstance(limit, int) or prepare is None:
        return None

    def fits(seqs: Sequence[str]) -> np.ndarray:
        items = prepare(list(seqs))
        return np.array([len(getattr(p, "windows", (p,))) == 1 and not getattr(p, "dropped", 0)
                         for p in items], dtype=bool)

    source = str(dict(embedder.info.extra).get("max_length_source", "the model"))
    return Context(model, limit, source, fits)


def lm_context(lm: Any, model: str) -> Context | None:
    """The context of a language-model scorer (``geneb.vep.likelihood.LMScorer``)."""
    if lm.max_tokens is None:
        return None

    from geneb.models.adapters.hf_load import quiet_transformers

    def fits(seqs: Sequence[str]) -> np.ndarray:
        with quiet_transformers():  # not transformers' "longer than the maximum" warning
            # one sequence a call: some families' tokenizers fail on a list (LucaOne)
            ids = [lm.tokenizer(s, add_special_tokens=True)["input_ids"] for s in seqs]
        return np.array([len(i) <= lm.max_tokens for i in ids], dtype=bool)

    return Context(model, int(lm.max_tokens), "config.max_position_embeddings", fits)


def check_window_fits(ctx: Context | None, vt: VariantTask, window: int) -> None:
    """Refuse, before any window is built, a window whose bases (taken from ``vt``'s longest
    reference record) do not fit one pass of the model; the message names the largest even
    window that does."""
    if ctx is None:
        return
    seq = max(vt.records, key=lambda r: len(r.seq)).seq
    n = min(window, PROBE_BASES_PER_TOKEN * ctx.limit, len(seq))
    if ctx.fits([seq[:n]])[0]:
        return
    lo, hi = 0, n // 2  # largest k with fits(seq[:2k]); fits(0) assumed, fits(n) false
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if ctx.fits([seq[: 2 * mid]])[0]:
            lo = mid
        else:
            hi = mid - 1
    advice = (f"the largest window that fits is {2 * lo:,} bases (window={2 * lo})" if lo
              else "not even a 2-base window fits")
    raise WindowTooLong(
        f"window: {window:,} bases do not fit in one pass of model {ctx.model!r} (at most "
        f"{ctx.limit:,} tokens, from {ctx.source}): the model would see a cut window, not the "
        f"variant's; {advice}", param="window")


def mark_unseeable(ctx: Context | None, win: Windows) -> Windows:
    """``win`` with status ``TOO_LONG`` for every variant whose reference or alternate window
    does not fit one pass of the model (such variants are never embedded)."""
    if ctx is None:
        return win
    ok = np.flatnonzero(win.status == OK)
    if not len(ok):
        return win
    ref_fits = ctx.fits(win.ref_windows)
    alt_fits = ctx.fits(win.alts_of(ok))
    bad = ~(alt_fits & ref_fits[win.ref_id[ok]])
    if not bad.any():
        return win
    status = win.status.copy()
    status[ok[bad]] = TOO_LONG
    return replace(win, status=status)
