"""Cross-validation folds for supervised variant-effect probes: contiguous genomic blocks.

A probe trained on one variant and tested on a neighbour whose window overlaps it has seen the
test sequence: the two windows share bases, so the fold split would leak. The folds here never
share a window:

- every scored variant covers the interval of its windows on its chromosome (reference window
  ``[p - W//2, p + W//2)``; an indel's alternate window may reach further right, see
  ``geneb.tasks.windows``), in chromosome coordinates, so two reference records of one chromosome
  count as one axis;
- variants are sorted along each chromosome and cut into **blocks**: a new block starts only
  where the next window begins at or after the end of every window before it, so variants whose
  windows overlap are always in one block;
- with several chromosomes the folds are **leave-one-chromosome-out** (fold ``i`` = the i-th
  chromosome in file order);
- with one chromosome the blocks are grouped, in genomic order, into ``n_folds`` contiguous
  folds of about equal variant counts (cuts at the block ends closest to ``i * n / n_folds``).

Variants without a window (see ``geneb.tasks.windows``) get fold -1 and are never used.
"""

from __future__ import annotations

import numpy as np

from geneb.errors import GenebError
from geneb.tasks.variants import VariantTask
from geneb.tasks.windows import OK, Windows

DEFAULT_FOLDS = 5


def window_extents(task: VariantTask, win: Windows) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(chrom, start, end) of every variant's windows in 0-based chromosome coordinates
    (half-open; -1 for variants without a window): the bases a probe of it reads."""
    t = task.table
    n = len(t)
    half = win.window // 2
    chrom = t["chrom"].astype(str).to_numpy()
    start = np.full(n, -1, dtype=np.int64)
    end = np.full(n, -1, dtype=np.int64)
    recs, offs = t["record"].to_numpy(), t["offset"].to_numpy()
    for i in np.flatnonzero(win.status == OK):
        rec = task.records[int(recs[i])]
        p, r, a = int(offs[i]), len(t["ref"].iat[i]), len(t["alt"].iat[i])
        base = rec.start - 1  # record offset -> chromosome coordinate
        right = p + r + max(0, half - a)  # end of an indel's alternate right flank
        start[i] = base + p - half
        end[i] = base + max(p + half, right)
    return chrom, start, end


def genomic_blocks(chrom: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Block id per variant (-1 without a window): blocks never split overlapping windows.

    Ids increase along each chromosome; chromosomes follow their first appearance."""
    ok = np.flatnonzero(start >= 0)
    order_chrom = {c: k for k, c in enumerate(dict.fromkeys(chrom[ok].tolist()))}
    ck = np.array([order_chrom[c] for c in chrom[ok]], dtype=np.int64)
    idx = ok[np.lexsort((start[ok], ck))]
    block = np.full(len(chrom), -1, dtype=np.int64)
    b, reach, cur = -1, -1, None
    for i in idx:
        if chrom[i] != cur or start[i] >= reach:
            b += 1
            cur, reach = chrom[i], end[i]
        reach = max(reach, int(end[i]))
        block[i] = b
    return block


def genomic_folds(
    task: VariantTask, win: Windows, n_folds: int | None = None, *, sweep: str | None = None
) -> tuple[np.ndarray, str]:
    """(fold per variant, scheme): ``"chromosome"`` (several chromosomes: one fold each) or
    ``"blocks"`` (one chromosome: ``n_folds`` contiguous groups of blocks). -1: no window.
    ``sweep``: the parameter a caller chooses by inner folds (it then needs 3 folds), so
    that advice on too few blocks names fold counts that work."""
    chrom, start, end = window_extents(task, win)
    block = genomic_blocks(chrom, start, end)
    ok = block >= 0
    chroms = list(dict.fromkeys(chrom[ok].tolist()))
    if len(chroms) >= 2:
        if n_folds is not None:
            raise GenebError(f"folds: {n_folds} given, but the task has {len(chroms)} "
                             "chromosomes, so the folds are leave-one-chromosome-out, one per "
                             "chromosome: do not give a fold count (folds)", param="folds")
        fold = np.full(len(chrom), -1, dtype=np.int64)
        for k, c in enumerate(chroms):
            fold[ok & (chrom == c)] = k
        return fold, "chromosome"
    k = DEFAULT_FOLDS if n_folds is None else int(n_folds)
    if k < 2:
        raise GenebError(f"folds: expected an int >= 2, got {n_folds!r}", param="folds")
    n_blocks = int(block.max()) + 1 if ok.any() else 0
    if n_blocks < k:
        raise GenebError(
            f"task {task.name!r}: only {n_blocks} block(s) of variants whose windows do not "
            f"overlap at window {win.window}, fewer than the {k} folds asked for; "
            + block_advice(task, win.window, n_blocks, k, sweep), param="folds")
    sizes = np.bincount(block[ok], minlength=n_blocks)
    ends = np.cumsum(sizes)  # variants up to and including each block
    cuts, prev = [], -1
    for i in range(1, k):
        lo, hi = prev + 1, n_blocks - (k - i) - 1  # leave a block for every later fold
        j = lo + int(np.argmin(np.abs(ends[lo : hi + 1] - i * ends[-1] / k)))
        cuts.append(j)
        prev = j
    fold_of_block = np.searchsorted(np.asarray(cuts), np.arange(n_blocks), side="left")
    fold = np.full(len(chrom), -1, dtype=np.int64)
    fold[ok] = fold_of_block[block[ok]]
    return fold, "blocks"


def count_blocks(task: VariantTask, window: int) -> int:
    """How many blocks the variants of ``task`` form at ``window``."""
    from geneb.tasks.windows import make_windows

    block = genomic_blocks(*window_extents(task, make_windows(task, window)))
    return int(block.max()) + 1 if (block >= 0).any() else 0


def block_advice(task: VariantTask, window: int, n_blocks: int, k: int,
                 sweep: str | None = None) -> str:
    """What gives ``k`` folds, each part checked to work: fewer folds (as many as there are
    blocks, when that is at least 2, or 3 with a ``sweep``: then also with a single value),
    the largest smaller window that makes ``k`` blocks (halving), or more variants."""
    ways = []
    if n_blocks >= (3 if sweep else 2):
        ways.append(f"use folds={n_blocks}")
    elif sweep and n_blocks == 2:
        ways.append(f"use folds=2 with{single_value_advice(sweep)}")
    w = window // 2 // 2 * 2
    while w >= 2:
        if count_blocks(task, w) >= k:
            ways.append(f"a smaller window (window={w} makes {k} or more blocks)")
            break
        w = w // 2 // 2 * 2
    if not ways:
        return (f"no window makes {k} blocks (the variants are too close together): add "
                "variants at positions further apart")
    return " or ".join(ways) + ", or more variants at positions further apart"


def single_value_advice(param: str) -> str:
    """The advice clause "a single C" in the library's vocabulary (``geneb run``'s [vep]
    table has no C key and removes it: ``geneb.vep.pipeline``)."""
    return f" a single {param} ({'Cs' if param == 'C' else 'alphas'}=1.0)"
