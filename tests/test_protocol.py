"""geneb.protocol (issue 20): the one stratified sampling draws the rows both former
implementations drew, macro/micro MCC against hand and pandas computations, pandas-free."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from geneb import protocol
from geneb.tasks.loader import cap_train_split
from geneb.tasks.sampling import name_seed

# ------------------------------------------------------------- frozen references (pre issue 20)
# The two implementations geneb had before issue 20, copied verbatim from the last commit that
# had them (a8da67a: geneb/tasks/sampling.py and geneb/probe/protocol.py): stores and stored
# results depend on the rows they drew, so the one implementation must draw the same rows.


def _old_loader_quotas(counts: np.ndarray, cap: int) -> np.ndarray:
    counts = np.asarray(counts, dtype=np.int64)
    total = int(counts.sum())
    if cap >= total:
        return counts.copy()
    present = counts > 0
    exact = counts * (cap / total)
    quota = np.floor(exact).astype(np.int64)
    quota[present] = np.maximum(quota[present], 1)
    left = cap - int(quota.sum())
    if left > 0:
        order = np.argsort(-(exact - np.floor(exact)), kind="stable")
        for k in order:
            if left == 0:
                break
            if quota[k] < counts[k]:
                quota[k] += 1
                left -= 1
    while left < 0:
        k = int(np.argmax(quota))
        quota[k] -= 1
        left += 1
    return quota


def _old_loader_subsample(labels: np.ndarray, cap: int, seed: int) -> np.ndarray:
    labels = np.asarray(labels)
    if labels.size <= cap:
        return np.arange(labels.size, dtype=np.int64)
    classes, inverse, counts = np.unique(labels, return_inverse=True, return_counts=True)
    quota = _old_loader_quotas(counts, cap)
    rng = np.random.default_rng(seed)
    keep = []
    for k in range(classes.size):
        idx = np.flatnonzero(inverse == k)
        keep.append(rng.choice(idx, size=int(quota[k]), replace=False))
    return np.sort(np.concatenate(keep)).astype(np.int64)


def _old_full_rows(labels, rows, *, task_fingerprint, n_classes, cap, rng_name="full", seed=0):
    labels = np.asarray(labels, dtype=np.int64)
    rows = np.asarray(rows, dtype=np.int64)
    n = len(labels)
    if n <= cap:
        return np.argsort(rows, kind="stable").astype(np.int64)
    order = np.argsort(rows, kind="stable")
    lab = labels[order]
    groups = [order[lab == c] for c in range(n_classes)]
    counts = np.array([len(g) for g in groups], dtype=np.int64)
    quota = counts * cap / n
    take = np.floor(quota).astype(np.int64)
    take = np.where((counts > 0) & (take == 0), 1, take)
    short = cap - int(take.sum())
    if short > 0:
        rem = np.where(take < counts, quota - take, -np.inf)
        for c in np.argsort(-rem, kind="stable")[:short]:
            take[c] += 1
    elif short < 0:
        for c in np.argsort(-take, kind="stable")[: -short]:
            take[c] -= 1
    rng = protocol.sample_rng(task_fingerprint, rng_name, seed)
    chosen = [g[np.sort(rng.choice(len(g), size=int(t), replace=False))]
              for g, t in zip(groups, take, strict=True) if t > 0]
    pos = np.concatenate(chosen)
    return pos[np.argsort(rows[pos], kind="stable")].astype(np.int64)


def _random_split(rng: np.random.Generator, *, tiny: bool) -> tuple[np.ndarray, int]:
    """Labels of a random split and a cap below its size; ``tiny``: allow classes of a few
    rows (smaller than size/cap), the only case where the two former allocations differed."""
    k = int(rng.integers(2, 12))
    sizes = rng.integers(40, 3000, size=k)
    if tiny:  # a few classes of 1-3 rows
        sizes[rng.choice(k, size=int(rng.integers(1, k)), replace=False)] = rng.integers(1, 4)
    labels = np.repeat(np.arange(k), sizes)
    rng.shuffle(labels)
    lo = k if tiny else max(k, int(labels.size / 40) + 1)  # no class below size/cap
    cap = int(rng.integers(lo, labels.size))
    return labels.astype(np.int64), cap


def _old_emptied_a_class(labels: np.ndarray, cap: int) -> bool:
    """Whether the former full-regime allocation gave a present class no row (its bug)."""
    rows = np.arange(labels.size)
    old = _old_full_rows(labels, rows, task_fingerprint="x", n_classes=int(labels.max()) + 1,
                         cap=cap)
    return len(np.unique(labels[old])) < len(np.unique(labels))


@pytest.mark.parametrize("case", range(60))
def test_full_regime_draws_the_rows_it_always_drew(case):
    """The probe engine's full regime (and the subsampling study): identical rows on every
    input, tiny classes included, except where the former allocation emptied a class (then
    every class keeps a row); entry order shuffled like a store may hold it."""
    rng = np.random.default_rng(case)
    labels, cap = _random_split(rng, tiny=case % 2 == 0)
    if _old_emptied_a_class(labels, cap):
        new = protocol.full_rows(labels, np.arange(labels.size), task_fingerprint="x",
                                 n_classes=int(labels.max()) + 1, cap=cap)
        assert len(new.positions) == cap
        assert len(np.unique(labels[new.positions])) == len(np.unique(labels))
        return
    rows = rng.permutation(labels.size).astype(np.int64) * 3 + 1
    fp = f"sha256:{case:064x}"
    k = int(labels.max()) + 1
    for name, seed in (("full", 0), (f"subsample-{cap}", 13)):
        new = protocol.full_rows(labels, rows, task_fingerprint=fp, n_classes=k, cap=cap,
                                 rng_name=name, seed=seed)
        old = _old_full_rows(labels, rows, task_fingerprint=fp, n_classes=k, cap=cap,
                             rng_name=name, seed=seed)
        np.testing.assert_array_equal(new.positions, old)
        np.testing.assert_array_equal(new.file_rows, rows[old])


@pytest.mark.parametrize("case", range(60))
def test_task_loading_keeps_the_rows_it_always_kept(case):
    """Task loading (the GENEB row cap) now uses the same implementation with its own seed
    (the task name): the same rows as before whenever every class has at least size/cap
    rows (every GENEB task: the cap is 100,000 and the largest split ~5x that)."""
    rng = np.random.default_rng(1000 + case)
    labels, cap = _random_split(rng, tiny=False)
    name = f"task{case}"
    seqs = tuple(f"s{i}" for i in range(labels.size))
    file_rows = np.arange(labels.size, dtype=np.int64)
    _, kept_labels, kept_rows, record = cap_train_split(name, seqs, labels, file_rows, cap)
    old = _old_loader_subsample(labels, cap, name_seed(name))
    np.testing.assert_array_equal(kept_rows, old)
    np.testing.assert_array_equal(kept_labels, labels[old])
    assert record is not None and record["seed"] == name_seed(name)


@pytest.mark.parametrize("case", range(40))
def test_tiny_classes_keep_the_contract(case):
    """Where a class has fewer than size/cap rows the former loader allocation could differ
    by a row between classes; the contract holds: exactly cap rows, every class between one
    row and all of its rows, each share within one row of its proportional share plus the
    rows handed to classes whose share is below one."""
    rng = np.random.default_rng(2000 + case)
    labels, cap = _random_split(rng, tiny=True)
    counts = np.bincount(labels)
    q = protocol.class_quotas(counts, cap)
    exact = counts * cap / counts.sum()
    assert q.sum() == cap and np.all(q <= counts) and np.all(q >= 1)
    lifted = int((exact < 1).sum())
    assert np.all(np.abs(q - exact) <= 1 + lifted + 1e-9)


# --------------------------------------------------------------------------- macro / micro
def test_macro_micro_by_hand():
    mcc = [0.2, 0.4, 0.9, 0.1, 0.5]
    cats = ["a", "a", "a", "b", "c"]
    macro, micro = protocol.macro_micro(mcc, cats)
    assert macro == pytest.approx(((0.2 + 0.4 + 0.9) / 3 + 0.1 + 0.5) / 3)
    assert micro == pytest.approx(sum(mcc) / 5)
    assert macro != pytest.approx(micro)  # unequal category sizes: the weighting matters


def test_macro_of_a_matrix_matches_pandas_per_model():
    rng = np.random.default_rng(5)
    m = rng.uniform(-0.3, 1, (4, 11))
    cats = np.array(list("aaabbcccccd"))
    got = protocol.macro_mcc(m, cats)
    long = pd.DataFrame({"model": np.repeat(np.arange(4), 11), "cat": np.tile(cats, 4),
                         "mcc": m.ravel()})
    ref = long.groupby(["model", "cat"])["mcc"].mean().groupby(level="model").mean()
    np.testing.assert_allclose(got, ref.to_numpy(), rtol=0, atol=1e-14)
    np.testing.assert_allclose(protocol.micro_mcc(m), m.mean(axis=1), rtol=0, atol=1e-15)
    # leading axes are kept: (models, n_boot, tasks) -> (models, n_boot)
    stacked = np.stack([m, m[::-1]], axis=1)
    np.testing.assert_allclose(protocol.macro_mcc(stacked, cats),
                               np.stack([got, got[::-1]], axis=1), rtol=0, atol=1e-15)


def test_protocol_and_results_need_no_pandas_and_results_never_import_probe():
    code = ("import sys, geneb.protocol, geneb.results; "
            "print(','.join(sorted(m for m in sys.modules if m == 'pandas' "
            "or m.startswith('geneb.probe'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == ""


def test_probe_stability_ranks_models_by_the_one_macro():
    """analysis.stability's per-model macro-MCC (linear vs MLP Spearman) against pandas."""
    from scipy import stats

    from geneb.analysis.stability import probe_stability

    rng = np.random.default_rng(8)
    tasks = {f"t{i}": "abcc"[i % 4] for i in range(9)}
    paired = pd.DataFrame({
        "regime": "full", "model": np.repeat(list("pqrst"), 9), "task": list(tasks) * 5,
        "category": list(tasks.values()) * 5,
        "linear_mcc": rng.uniform(0, 1, 45), "mlp_mcc": rng.uniform(0, 1, 45),
    })
    per_model = paired.groupby(["model", "category"])[["linear_mcc", "mlp_mcc"]].mean() \
        .groupby(level="model").mean()
    rho = stats.spearmanr(per_model["linear_mcc"], per_model["mlp_mcc"])[0]
    got = probe_stability(paired).set_index("statistic").loc["spearman_model_macro"]
    assert got["value"] == pytest.approx(rho) and got["n"] == 5
