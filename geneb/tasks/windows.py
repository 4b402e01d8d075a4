"""Reference and alternate windows around each variant (the Evo 2 convention).

For a variant whose first reference base is at 0-based offset ``p`` of its reference record,
and an even window ``W``:

- reference window = ``record[p - W//2 : p + W//2]``: the variant's first base sits at index
  ``W//2``;
- alternate window, SNVs and same-length substitutions: the reference window with
  ``ref`` replaced by ``alt`` at index ``W//2``;
- alternate window, indels: ``record[p - W//2 : p] + alt + record[p + len(ref) : ...]``, the
  right flank taken (deletions) or cut (insertions) so that the window has exactly ``W``
  bases. Both windows share the left flank and the variant's start; only the right end moves.

Windows that would leave the reference record get status ``window_outside_reference``;
a ``ref`` longer than ``W//2`` gets ``allele_longer_than_half_window``. Such variants keep
their row (score NaN) and are never dropped.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from geneb.errors import GenebError, TaskError
from geneb.tasks.variants import VariantTask

OK = "ok"
OUTSIDE = "window_outside_reference"
TOO_LONG = "allele_longer_than_half_window"


def check_window(window: int) -> int:
    """``window`` as an int, or a clear error: it must be even and at least 2."""
    if isinstance(window, bool) or int(window) != window or window < 2 or window % 2:
        raise GenebError(f"window: expected an even number of bases >= 2, got {window!r}",
                         param="window")
    return int(window)


@dataclass(frozen=True, eq=False)
class Windows:
    """Windows of every variant of a task (row i = variant i), and their distinct ref windows.

    ``ref_id[i]`` indexes ``ref_windows`` (-1 when the variant has no window: see ``status``);
    variants at the same place share one reference window."""

    window: int
    status: np.ndarray  # object: OK or a reason
    ref_id: np.ndarray  # int64
    ref_windows: list[str]
    alt_windows: list[str | None]
    ref_keys: list[tuple[int, int]]  # (record, window start) of each distinct ref window

    def ref_of(self, i: int) -> str | None:
        """The reference window of variant ``i`` (None: the variant has no window)."""
        j = int(self.ref_id[i])
        return self.ref_windows[j] if j >= 0 else None

    def alts_of(self, rows: Iterable[int]) -> list[str]:
        """The alternate windows of ``rows``, variants that have one (status ``OK``).

        Parameters
        ----------
        rows : iterable of int
            Variant rows (e.g. ``np.flatnonzero(status == OK)``).

        Returns
        -------
        list of str
            One window per row; ``TaskError`` naming the first row without one.
        """
        out = []
        for i in rows:
            alt = self.alt_windows[int(i)]
            if alt is None:
                raise TaskError(f"variant {int(i)} has no window ({self.status[int(i)]})")
            out.append(alt)
        return out


def make_windows(task: VariantTask, window: int) -> Windows:
    """Windows of every variant of ``task`` (see module doc)."""
    w = check_window(window)
    half = w // 2
    t = task.table
    n = len(t)
    status = np.full(n, OK, dtype=object)
    ref_id = np.full(n, -1, dtype=np.int64)
    alt: list[str | None] = [None] * n
    refs: list[str] = []
    keys: list[tuple[int, int]] = []
    index: dict[tuple[int, int], int] = {}
    recs, offs = t["record"].to_numpy(), t["offset"].to_numpy()
    ra, aa = t["ref"].tolist(), t["alt"].tolist()
    for i in range(n):
        rec = task.records[int(recs[i])]
        p, r, a = int(offs[i]), ra[i], aa[i]
        start, end = p - half, p + half
        if len(r) > half:
            status[i] = TOO_LONG
            continue
        right_needed = p + len(r) + max(0, half - len(a))  # end of the alt window's right flank
        if start < 0 or end > len(rec.seq) or right_needed > len(rec.seq):
            status[i] = OUTSIDE
            continue
        key = (int(recs[i]), start)
        j = index.get(key)
        if j is None:
            j = index[key] = len(refs)
            refs.append(rec.seq[start:end])
            keys.append(key)
        ref_id[i] = j
        if len(r) == len(a):
            ref_w = refs[j]
            alt[i] = ref_w[:half] + a + ref_w[half + len(r) :]
        else:
            alt[i] = (rec.seq[start:p] + a + rec.seq[p + len(r) : p + len(r) + w])[:w]
    return Windows(w, status, ref_id, refs, alt, keys)
