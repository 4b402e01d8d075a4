"""The GENEB protocol, defined once: regimes, seeds, C sweep, the train-row cap, which train
rows each probe sees, and how per-task MCCs are averaged (macro and micro).

pandas-free (numpy only), so the probe path (``geneb probe``), task loading and the analyses all
import the one definition: ``geneb.tasks`` caps a split with :func:`stratified_positions`, the
probe engine draws its cells with :func:`draw`, the analyses average with :func:`macro_mcc`.

Which rows a k-shot probe gets depends only on (task train fingerprint, k, seed): one RNG per
(task, seed, k), seeded from a hash of exactly those three values, never chained and never
touched by the model. So every model is probed on the same rows, and a rerun draws them again.
The full regime takes every train row (a deterministic, stratified, seed-independent subsample
when the split is larger than ``TRAIN_ROW_CAP``). The test split is always used whole.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from geneb.errors import ProbeError
from geneb.vocabulary import (  # defined there (no imports: the CLI's help reads them too)
    DEFAULT_ALPHA_SWEEP,
    DEFAULT_C,
    DEFAULT_C_SWEEP,
    DEFAULT_PROTOCOL,
    DEFAULT_SEEDS,
    N_BOOT_METRIC,
    N_BOOT_REPORT,
    PROTOCOLS,
    REGIMES,
)

MAX_ITER = 1000


#: GENEB caps the train split of the full-data regime at this many rows.
TRAIN_ROW_CAP = 100_000

#: Category of a task whose task.json names none (not a GENEB category; shown as such).
UNCATEGORIZED = "uncategorized"

#: Bootstrap confidence intervals: the RNG seed and level everywhere (the default resamples,
#: ``N_BOOT_REPORT`` and ``N_BOOT_METRIC``, are in :mod:`geneb.vocabulary`: the CLI shows them).
BOOT_SEED = 0
CI_LEVEL = 0.95

__all__ = [
    "BOOT_SEED",
    "CI_LEVEL",
    "N_BOOT_METRIC",
    "N_BOOT_REPORT",
    "DEFAULT_ALPHA_SWEEP",
    "DEFAULT_C",
    "DEFAULT_C_SWEEP",
    "DEFAULT_PROTOCOL",
    "DEFAULT_SEEDS",
    "MAX_ITER",
    "PROTOCOLS",
    "REGIMES",
    "TRAIN_ROW_CAP",
    "UNCATEGORIZED",
    "Sample",
    "class_quotas",
    "draw",
    "full_rows",
    "kshot_rows",
    "paper_kshot_rows",
    "macro_mcc",
    "macro_micro",
    "micro_mcc",
    "n_classes_of",
    "regime_k",
    "sample_rng",
    "stratified_positions",
]


@dataclass(frozen=True, eq=False)
class Sample:
    """The train rows of one probe: positions into the entry arrays and their file rows."""

    #: int64 positions into the stored train arrays: ascending file row (geneb's draws), or in
    #: the order GENEB's own draw picks them (``paper_kshot_rows``: class by class)
    positions: np.ndarray
    file_rows: np.ndarray  # int64 row index in the task's train file, same order
    took_all: bool = False  # some class had < k rows and all of them were taken


def regime_k(regime: str) -> int | None:
    """Shots per class of a regime name.

    Parameters
    ----------
    regime : str
        ``"1"``, ``"10"``, ... or ``"full"``.

    Returns
    -------
    int or None
        k; None for ``full``.
    """
    return None if regime == "full" else int(regime)


def sample_rng(task_fingerprint: str, k: int | str, seed: int) -> np.random.Generator:
    """The one RNG of (task, k, seed), seeded from the sha256 of the three.

    Parameters
    ----------
    task_fingerprint : str
        The task's train-split fingerprint.
    k : int or str
        Shots per class (or a name such as ``"full"``).
    seed : int
        The cell's seed.

    Returns
    -------
    numpy.random.Generator
        The same generator for the same three values, whatever else was drawn before.
    """
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

    Parameters
    ----------
    labels, rows : numpy.ndarray
        The train rows' class ids 0..K-1 and their indices in the task's train file, in
        entry order.
    k : int
        Shots per class (at least 1).
    seed : int
        The cell's seed.
    task_fingerprint : str
        The task's train-split fingerprint (seeds the RNG with ``k`` and ``seed``).
    n_classes : int
        The number of classes.
    take_all : bool
        Take every row of a class smaller than k instead of refusing (default False).
    task : str
        The task's name, for the error message.

    Returns
    -------
    Sample
        Positions into the entry arrays, their file rows, and whether a class was taken whole.
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
                    f"k={k}; pass take_all=True to use all of them (recorded)"
                )
            took_all = True
            chosen.append(members)
            continue
        pick = rng.choice(len(members), size=k, replace=False)
        chosen.append(members[np.sort(pick)])
    pos = np.concatenate(chosen) if chosen else np.zeros(0, dtype=np.int64)
    pos = pos[np.argsort(rows[pos], kind="stable")].astype(np.int64)
    return Sample(positions=pos, file_rows=rows[pos].copy(), took_all=took_all)


def paper_kshot_rows(
    labels: np.ndarray, rows: np.ndarray, *, k: int, seed: int, label_values: Sequence[object]
) -> Sample:
    """GENEB's own k-shot draw (the paper protocol), as its code draws it.

    From ``embedding_pipeline/pipeline/classification.py`` of darlednik/GENEB @ 17be5b07: a
    fresh ``np.random.RandomState(seed)`` per (k, seed); for each class in
    ``np.unique(train_labels)`` order, where ``train_labels`` are the label VALUES of the train
    rows as the task file holds them (``label_values[class id]``: ints sort as numbers,
    strings as text, whatever geneb's class ids are), ``rng.choice(positions of that class in
    train-file order, size=min(k, n_class), replace=False)``; the picks concatenated in that
    order. A class with fewer than k rows gives all of them (``took_all``, recorded). The
    positions keep GENEB's pick order (the order its fit sees the rows in).

    Parameters
    ----------
    labels, rows : numpy.ndarray
        The train rows' class ids 0..K-1 and their indices in the task's train file, in
        entry order.
    k : int
        Shots per class (at least 1).
    seed : int
        The seed of GENEB's ``RandomState``.
    label_values : sequence
        The task file's label value of each class id.

    Returns
    -------
    Sample
        Positions into the entry arrays, their file rows, and whether a class was taken whole.
    """
    labels = np.asarray(labels, dtype=np.int64)
    rows = np.asarray(rows, dtype=np.int64)
    if k < 1:
        raise ProbeError(f"k must be >= 1, got {k}")
    order = np.argsort(rows, kind="stable")  # entry positions in train-file order
    train_values = np.asarray(list(label_values))[labels[order]]
    rng = np.random.RandomState(int(seed))
    chosen: list[np.ndarray] = []
    took_all = False
    for value in np.unique(train_values):
        locs = np.flatnonzero(train_values == value)  # GENEB's positions in the train file
        took_all |= len(locs) < k
        chosen.append(order[rng.choice(locs, size=min(k, len(locs)), replace=False)])
    pos = np.concatenate(chosen).astype(np.int64)
    return Sample(positions=pos, file_rows=rows[pos].copy(), took_all=took_all)


def class_quotas(counts: np.ndarray, cap: int) -> np.ndarray:
    """Rows per class summing to ``cap`` (< ``counts.sum()``), proportional to ``counts``.

    Largest-remainder allocation with at least one row per present class (when ``cap`` allows).
    The one allocation of geneb: the full regime's cap, the subsampling study and task loading
    all use it, so stored results and stores depend on exactly this arithmetic.

    Parameters
    ----------
    counts : numpy.ndarray
        Rows of each class.
    cap : int
        The rows to keep, fewer than ``counts.sum()``.

    Returns
    -------
    numpy.ndarray
        int64 rows to take of each class, summing to ``cap``.
    """
    counts = np.asarray(counts, dtype=np.int64)
    n = int(counts.sum())
    quota = counts * cap / n
    take = np.floor(quota).astype(np.int64)
    take = np.where((counts > 0) & (take == 0), 1, take)
    short = cap - int(take.sum())
    if short > 0:  # hand the remaining rows to the largest remainders
        rem = np.where(take < counts, quota - take, -np.inf)
        for c in np.argsort(-rem, kind="stable")[:short]:
            take[c] += 1
    elif short < 0:  # only possible via the one-row minimum: take from the largest classes
        _give_back(take, -short)
    return take


def _give_back(take: np.ndarray, excess: int) -> None:
    """Remove ``excess`` rows, one from each of the largest classes in turn, never taking a
    class below one row while another has more (below one only when the cap is smaller than
    the number of classes): an emptied class would drop out of the training set. Where no
    class is emptied this is one row from each of the ``excess`` largest classes
    (tests/test_protocol.py)."""
    while excess > 0:
        order = np.argsort(-take, kind="stable")
        givers = [c for c in order if take[c] > 1] or [c for c in order if take[c] > 0]
        for c in givers[:excess]:
            take[c] -= 1
        excess -= min(excess, len(givers))


def stratified_positions(
    labels: np.ndarray, rows: np.ndarray, *, cap: int, n_classes: int, rng: np.random.Generator
) -> np.ndarray:
    """Positions (ascending file row) of exactly ``cap`` rows keeping the class proportions
    (:func:`class_quotas`), drawn without replacement by ``rng``, class by class in label
    order; every position when there are at most ``cap`` rows.

    The caller chooses the RNG: the probe engine seeds it from the task fingerprint
    (:func:`sample_rng`), task loading from the task name (the split's fingerprint is computed
    after the cap), so each keeps drawing the rows it always drew.

    Parameters
    ----------
    labels, rows : numpy.ndarray
        The train rows' class ids 0..K-1 and their indices in the task's train file, in
        entry order.
    cap : int
        The rows to keep.
    n_classes : int
        The number of classes.
    rng : numpy.random.Generator
        Draws the rows.

    Returns
    -------
    numpy.ndarray
        int64 positions into ``labels``, in ascending file row.
    """
    labels = np.asarray(labels, dtype=np.int64)
    rows = np.asarray(rows, dtype=np.int64)
    if len(labels) <= cap:
        return np.argsort(rows, kind="stable").astype(np.int64)
    groups = _by_class(labels, rows, n_classes)
    take = class_quotas(np.array([len(g) for g in groups], dtype=np.int64), cap)
    chosen = [
        g[np.sort(rng.choice(len(g), size=int(t), replace=False))]
        for g, t in zip(groups, take, strict=True)
        if t > 0
    ]
    pos = np.concatenate(chosen)
    return pos[np.argsort(rows[pos], kind="stable")].astype(np.int64)


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

    The subsample keeps class proportions (:func:`class_quotas`) and is drawn by an RNG of
    (task, "full") only, so it is the same for every seed and every model. The
    subsampling-stability study (:mod:`geneb.probe.subsample`) draws its subsamples here too,
    with its own ``rng_name`` and ``seed``.

    Parameters
    ----------
    labels, rows : numpy.ndarray
        The train rows' class ids 0..K-1 and their indices in the task's train file, in
        entry order.
    task_fingerprint : str
        The task's train-split fingerprint (seeds the RNG).
    n_classes : int
        The number of classes.
    cap : int
        At most this many rows (default ``TRAIN_ROW_CAP``, GENEB's 100,000).
    rng_name : str
        The RNG's name in place of k (default ``"full"``).
    seed : int
        The RNG's seed (default 0: the same for every cell's seed).

    Returns
    -------
    Sample
        Positions into the entry arrays, their file rows, and whether a class was taken whole.
    """
    rows = np.asarray(rows, dtype=np.int64)
    pos = stratified_positions(labels, rows, cap=cap, n_classes=n_classes,
                               rng=sample_rng(task_fingerprint, rng_name, seed))
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
    label_values: Sequence[object] | None = None,
) -> Sample:
    """The train rows of one (regime, seed) cell.

    ``label_values`` (the task file's label value of each class id) selects GENEB's own
    draw, the paper protocol's: k-shot rows by :func:`paper_kshot_rows`, the full regime on
    every train row in file order (GENEB's code fits them all: no cap). Without it, geneb's
    draws: :func:`kshot_rows` and :func:`full_rows`.

    Parameters
    ----------
    regime : str
        ``"1"``, ``"10"``, ... or ``"full"``.
    labels, rows : numpy.ndarray
        The train rows' class ids 0..K-1 and their indices in the task's train file, in
        entry order.
    seed : int
        The cell's seed.
    task_fingerprint : str
        The task's train-split fingerprint.
    n_classes : int
        The number of classes.
    take_all : bool
        Take every row of a class smaller than k instead of refusing (default False).
    task : str
        The task's name, for error messages.
    cap : int
        The full regime's row cap (default ``TRAIN_ROW_CAP``).
    label_values : sequence or None
        The task file's label value of each class id: GENEB's own draw (the paper protocol).

    Returns
    -------
    Sample
        Positions into the entry arrays, their file rows, and whether a class was taken whole.
    """
    k = regime_k(regime)
    if label_values is not None:
        if k is None:
            return full_rows(labels, rows, task_fingerprint=task_fingerprint,
                             n_classes=n_classes, cap=max(len(labels), 1))
        return paper_kshot_rows(labels, rows, k=k, seed=seed, label_values=label_values)
    if k is None:
        return full_rows(labels, rows, task_fingerprint=task_fingerprint, n_classes=n_classes,
                         cap=cap)
    return kshot_rows(labels, rows, k=k, seed=seed, task_fingerprint=task_fingerprint,
                      n_classes=n_classes, take_all=take_all, task=task)


def n_classes_of(*label_arrays: Sequence[int] | np.ndarray) -> int:
    """Number of classes implied by integer labels 0..K-1.

    Parameters
    ----------
    *label_arrays : sequence of int or numpy.ndarray
        The labels of every split.

    Returns
    -------
    int
        The largest label + 1, at least 2.
    """
    top = max((int(np.max(a)) for a in label_arrays if len(a)), default=1)
    return max(2, top + 1)


# --------------------------------------------------------------------------- averaging
# Every mean below is summed left to right in the order given (``np.cumsum``, never numpy's
# pairwise ``sum``) and divided by the count, categories in the order they first appear: how
# GENEB sums (its leaderboard's micro, macro and category means are exactly these sums over its
# tasks in leaderboard order; ``geneb.results.geneb_tasks.geneb_task_order`` gives that order).
def _sum_in_order(m: np.ndarray) -> np.ndarray:
    """The sum along the last axis, left to right (NaN for an empty axis)."""
    if m.shape[-1] == 0:
        return np.full(m.shape[:-1], np.nan)
    return np.cumsum(m, axis=-1)[..., -1]


def category_means(task_mcc: np.ndarray | Sequence[float],
                   category_of_task: np.ndarray | Sequence[str]) -> tuple[list[str], np.ndarray]:
    """The mean MCC of each category along the last axis.

    Parameters
    ----------
    task_mcc : array-like
        ``(..., n_tasks)`` per-task MCCs (a model's tasks, or a models x tasks matrix).
    category_of_task : array-like of str
        ``(n_tasks,)``: each task's category.

    Returns
    -------
    tuple of (list of str, numpy.ndarray)
        The categories in order of first appearance, and their means, shape
        ``task_mcc.shape[:-1] + (n_categories,)``.
    """
    m = np.asarray(task_mcc, dtype=float)
    cats = np.asarray(category_of_task)
    names = list(dict.fromkeys(cats.tolist()))
    means = [_sum_in_order(m[..., cats == c]) / int((cats == c).sum()) for c in names]
    if not means:
        return [], np.full(m.shape[:-1] + (0,), np.nan)
    return [str(c) for c in names], np.stack(means, axis=-1)


def macro_mcc(task_mcc: np.ndarray | Sequence[float],
              category_of_task: np.ndarray | Sequence[str]) -> np.ndarray:
    """Macro-MCC along the last axis: the mean over categories of the category means, so every
    category weighs the same however many tasks it has (GENEB's headline number).

    The one definition used by the tables, the bootstrap and every analysis.

    Parameters
    ----------
    task_mcc, category_of_task : array-like
        As for :func:`category_means`: ``(..., n_tasks)`` MCCs, ``(n_tasks,)`` categories.

    Returns
    -------
    numpy.ndarray
        Shape ``task_mcc.shape[:-1]`` (a 0-d array for one model).
    """
    names, means = category_means(task_mcc, category_of_task)
    if not names:
        return np.full(means.shape[:-1], np.nan)
    return _sum_in_order(means) / len(names)


def micro_mcc(task_mcc: np.ndarray | Sequence[float]) -> np.ndarray:
    """Micro-MCC along the last axis: the plain mean over tasks (large categories dominate).

    Parameters
    ----------
    task_mcc : array-like
        ``(..., n_tasks)`` per-task MCCs.

    Returns
    -------
    numpy.ndarray
        Shape ``task_mcc.shape[:-1]``.
    """
    m = np.asarray(task_mcc, dtype=float)
    return _sum_in_order(m) / m.shape[-1] if m.shape[-1] else _sum_in_order(m)


def macro_micro(task_mcc: np.ndarray | Sequence[float],
                category_of_task: np.ndarray | Sequence[str]) -> tuple[float, float]:
    """Macro- and micro-MCC of one model's per-task MCCs.

    Parameters
    ----------
    task_mcc : array-like
        ``(n_tasks,)`` per-task MCCs.
    category_of_task : array-like of str
        ``(n_tasks,)``: each task's category.

    Returns
    -------
    tuple of (float, float)
        (macro, micro).
    """
    return float(macro_mcc(task_mcc, category_of_task)), float(micro_mcc(task_mcc))
