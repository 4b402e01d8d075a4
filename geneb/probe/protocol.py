"""The GENEB probe protocol: regimes, seeds and which train rows each probe sees.

Which rows a k-shot probe gets depends only on (task train fingerprint, k, seed): one RNG per
(task, seed, k), seeded from a hash of exactly those three values, never chained and never
touched by the model. So every model is probed on the same rows, and a rerun draws them again.
The full regime takes every train row (a deterministic, stratified, seed-independent subsample
when the split is larger than ``TRAIN_ROW_CAP``). The test split is always used whole.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from geneb.errors import ProbeError
from geneb.probe.schema import DEFAULT_C_SWEEP, DEFAULT_SEEDS, REGIMES

#: Same value as ``geneb.tasks.spec.TRAIN_ROW_CAP`` (tests/test_probe_protocol.py checks they
#: agree). Not imported from there: ``geneb.tasks`` pulls in pandas (~0.3 s), which the probe
#: path (``geneb probe``) never needs.
TRAIN_ROW_CAP = 100_000

__all__ = [
    "DEFAULT_C_SWEEP",
    "DEFAULT_SEEDS",
    "REGIMES",
    "TRAIN_ROW_CAP",
    "Sample",
    "full_rows",
    "kshot_rows",
    "parse_Cs",
    "parse_seeds",
    "parse_shots",
    "regime_k",
    "sample_rng",
]


@dataclass(frozen=True, eq=False)
class Sample:
    """The train rows of one probe: positions into the entry arrays and their file rows."""

    positions: np.ndarray  # int64 positions into the stored train arrays, ascending file row
    file_rows: np.ndarray  # int64 row index in the task's train file, same order
    took_all: bool = False  # some class had < k rows and all of them were taken


def parse_shots(shots: str | Iterable[str | int]) -> tuple[str, ...]:
    """``"1,10,full"`` or ``["1", 10, "full"]`` -> ``("1", "10", "full")``; k must be >= 1."""
    items = shots.split(",") if isinstance(shots, str) else list(shots)
    out: list[str] = []
    for raw in items:
        s = str(raw).strip().lower()
        if not s:
            continue
        if s != "full":
            try:
                k = int(s)
            except ValueError:
                raise ProbeError(
                    f"invalid shot regime {raw!r}: expected a positive integer k or 'full' "
                    f"(GENEB uses {','.join(REGIMES)})"
                ) from None
            if k < 1:
                raise ProbeError(f"invalid shot regime {raw!r}: k must be >= 1")
            s = str(k)
        if s not in out:
            out.append(s)
    if not out:
        raise ProbeError(f"no shot regime given (expected e.g. {','.join(REGIMES)})")
    return tuple(out)


def parse_seeds(seeds: str | Iterable[int | str]) -> tuple[int, ...]:
    """Comma list or iterable of non-negative integer seeds, duplicates dropped, order kept."""
    items = seeds.split(",") if isinstance(seeds, str) else list(seeds)
    out: list[int] = []
    for raw in items:
        if isinstance(raw, str) and not raw.strip():
            continue
        try:
            v = int(str(raw).strip())
        except ValueError:
            raise ProbeError(f"invalid seed {raw!r}: expected a non-negative integer") from None
        if v < 0:
            raise ProbeError(f"invalid seed {raw!r}: expected a non-negative integer")
        if v not in out:
            out.append(v)
    if not out:
        raise ProbeError(f"no seed given (GENEB uses {','.join(map(str, DEFAULT_SEEDS))})")
    return tuple(out)


def parse_Cs(Cs: str | Iterable[float | str]) -> tuple[float, ...]:  # noqa: N802 - C is the name
    """Comma list or iterable of positive, finite inverse regularisation strengths."""
    items = Cs.split(",") if isinstance(Cs, str) else list(Cs)
    out: list[float] = []
    for raw in items:
        if isinstance(raw, str) and not raw.strip():
            continue
        try:
            v = float(str(raw).strip())
        except ValueError:
            raise ProbeError(f"invalid C {raw!r}: expected a positive number") from None
        if not np.isfinite(v) or v <= 0:
            raise ProbeError(f"invalid C {raw!r}: expected a positive, finite number")
        if v not in out:
            out.append(v)
    if not out:
        raise ProbeError(f"no C given (the GENEB sweep is {','.join(map(str, DEFAULT_C_SWEEP))})")
    return tuple(out)


def regime_k(regime: str) -> int | None:
    """Shots per class of a regime name; ``None`` for ``full``."""
    return None if regime == "full" else int(regime)


def sample_rng(task_fingerprint: str, k: int | str, seed: int) -> np.random.Generator:
    """The one RNG of (task, k, seed): seeded from sha256 of the three, independent of order."""
    blob = f"geneb-probe-v1|{task_fingerprint}|{k}|{int(seed)}".encode()
    digest = hashlib.sha256(blob).digest()
    return np.random.default_rng(int.from_bytes(digest[:16], "little"))


def _by_class(labels: np.ndarray, rows: np.ndarray, n_classes: int) -> list[np.ndarray]:
    """Positions of each class, in ascending file-row order (so entry order never matters)."""
    order = np.argsort(rows, kind="stable")
    lab = labels[order]
    return [order[lab == c] for c in range(n_classes)]


def kshot_rows(
    labels: np.ndarray,
    rows: np.ndarray,
    *,
    k: int,
    seed: int,
    task_fingerprint: str,
    n_classes: int,
    take_all: bool = False,
    task: str = "?",
) -> Sample:
    """Exactly k train rows per class, drawn without replacement by the (task, k, seed) RNG.

    A class with fewer than k rows is an error naming task, class and count, unless
    ``take_all`` is set: then all its rows are taken and the sample says so.
    """
    labels = np.asarray(labels, dtype=np.int64)
    rows = np.asarray(rows, dtype=np.int64)
    if k < 1:
        raise ProbeError(f"k must be >= 1, got {k}")
    rng = sample_rng(task_fingerprint, k, seed)
    chosen: list[np.ndarray] = []
    took_all = False
    for c, members in enumerate(_by_class(labels, rows, n_classes)):
        if len(members) < k:
            if not take_all:
                raise ProbeError(
                    f"task {task!r}: class {c} has only {len(members)} train row(s), fewer than "
                    f"k={k}; pass take_all=True (--take-all) to use all of them (recorded)"
                )
            took_all = True
            chosen.append(members)
            continue
        pick = rng.choice(len(members), size=k, replace=False)
        chosen.append(members[np.sort(pick)])
    pos = np.concatenate(chosen) if chosen else np.zeros(0, dtype=np.int64)
    pos = pos[np.argsort(rows[pos], kind="stable")].astype(np.int64)
    return Sample(positions=pos, file_rows=rows[pos].copy(), took_all=took_all)


def full_rows(
    labels: np.ndarray,
    rows: np.ndarray,
    *,
    task_fingerprint: str,
    n_classes: int,
    cap: int = TRAIN_ROW_CAP,
    rng_name: str = "full",
    seed: int = 0,
) -> Sample:
    """All train rows; above ``cap`` a stratified subsample of exactly ``cap`` rows.

    The subsample keeps class proportions (largest-remainder allocation, at least one row per
    present class) and is drawn by an RNG of (task, "full") only, so it is the same for every
    seed and every model. The subsampling-stability study (:mod:`geneb.probe.subsample`)
    draws its subsamples here too, with its own ``rng_name`` and ``seed``.
    """
    labels = np.asarray(labels, dtype=np.int64)
    rows = np.asarray(rows, dtype=np.int64)
    n = len(labels)
    if n <= cap:
        pos = np.argsort(rows, kind="stable").astype(np.int64)
        return Sample(positions=pos, file_rows=rows[pos].copy())
    groups = _by_class(labels, rows, n_classes)
    counts = np.array([len(g) for g in groups], dtype=np.int64)
    quota = counts * cap / n
    take = np.floor(quota).astype(np.int64)
    take = np.where((counts > 0) & (take == 0), 1, take)
    short = cap - int(take.sum())
    if short > 0:  # hand the remaining rows to the largest remainders
        rem = np.where(take < counts, quota - take, -np.inf)
        for c in np.argsort(-rem, kind="stable")[:short]:
            take[c] += 1
    elif short < 0:  # only possible via the one-row minimum: take from the largest classes
        for c in np.argsort(-take, kind="stable")[: -short]:
            take[c] -= 1
    rng = sample_rng(task_fingerprint, rng_name, seed)
    chosen = [
        g[np.sort(rng.choice(len(g), size=int(t), replace=False))]
        for g, t in zip(groups, take, strict=True)
        if t > 0
    ]
    pos = np.concatenate(chosen)
    pos = pos[np.argsort(rows[pos], kind="stable")].astype(np.int64)
    return Sample(positions=pos, file_rows=rows[pos].copy())


def draw(
    regime: str,
    labels: np.ndarray,
    rows: np.ndarray,
    *,
    seed: int,
    task_fingerprint: str,
    n_classes: int,
    take_all: bool = False,
    task: str = "?",
    cap: int = TRAIN_ROW_CAP,
) -> Sample:
    """The train rows of one (regime, seed) cell."""
    k = regime_k(regime)
    if k is None:
        return full_rows(labels, rows, task_fingerprint=task_fingerprint, n_classes=n_classes,
                         cap=cap)
    return kshot_rows(labels, rows, k=k, seed=seed, task_fingerprint=task_fingerprint,
                      n_classes=n_classes, take_all=take_all, task=task)


def n_classes_of(*label_arrays: Sequence[int] | np.ndarray) -> int:
    """Number of classes implied by integer labels 0..K-1 (at least 2)."""
    top = max((int(np.max(a)) for a in label_arrays if len(a)), default=1)
    return max(2, top + 1)
