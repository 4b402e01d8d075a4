"""Shortcut baselines: geneb's own probe on features that need no model.

Five feature sets per row: ``length`` (bases), ``gc`` (G+C share of the A/C/G/T bases),
``kmer1`` / ``kmer2`` / ``kmer3`` (frequencies of the 4 / 16 / 64 k-mers of A/C/G/T only).
Each is probed exactly as a model's embeddings are (``geneb probe`` defaults): the linear
probe at C = 1 solved to its optimum by the ``fast`` backend, the train rows of every
(regime, seed) cell drawn by :func:`geneb.protocol.draw` from the train split's
fingerprint (so a shortcut sees the very rows every model saw), regimes 1, 10 and full, seeds
13, 17, 42, 123, 997, MCC on the whole test split. One difference: the features are
standardised on each fit's own train rows (``--standardize``), because length in bases and a
frequency in [0, 1] are not on one scale. A class with fewer than k rows gives all of its rows
(``take_all``). The full regime is seed-independent (one fit, as the probe engine reuses it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from geneb.audit.seqcodes import kmer_counts
from geneb.tasks.spec import SplitData

SHORTCUTS: tuple[str, ...] = ("length", "gc", "kmer1", "kmer2", "kmer3")
SHORTCUT_C = 1.0
#: Largest shortcut probe solved by Newton steps (coefficients, intercepts included): its
#: Hessian is then at most 2,048^2 float64 (32 MiB). Above, the fast backend's L-BFGS path
#: (``fast_lbfgs``, the probe engine's many-class route), whose memory is linear: with
#: 1,000 classes even the 2-coefficient length probe has 1,998 coefficients, and the k-mer
#: probes' Hessians would take 0.2-34 GB (one audit measured 3.6 GB, not done at 300 s).
AUDIT_NEWTON_MAX_COEFS = 2048
#: ... and only with at most this many classes: its data Hessian is built from K^2 / 2 class
#: pairs (200 classes: 20,000 pairs, 104 of 143 s). Every catalogue task has at most 9.
AUDIT_NEWTON_MAX_CLASSES = 16
#: Gradient tolerance of those L-BFGS fits (scikit-learn's default ``tol``; the Newton fits
#: keep the probe engine's 1e-8): a shortcut's MCC needs the argmax, and L-BFGS needs
#: hundreds of passes over n x K probabilities to reach 1e-8 (200 classes: 53 s of CPU).
AUDIT_LBFGS_TOL = 1e-4


def _frequencies(counts: np.ndarray) -> np.ndarray:
    total = counts.sum(axis=1, keepdims=True)
    freq: np.ndarray = np.divide(counts, total, out=np.zeros(counts.shape), where=total > 0)
    return freq


def shortcut_features(seqs: Sequence[str]) -> dict[str, np.ndarray]:
    """The five feature matrices (float32, one row per sequence)."""
    c1 = kmer_counts(seqs, 1)
    acgt = c1.sum(axis=1)
    gc = np.divide(c1[:, 1] + c1[:, 2], acgt, out=np.zeros(len(seqs)), where=acgt > 0)
    lengths = np.fromiter((len(s) for s in seqs), dtype=np.float64, count=len(seqs))
    feats = {
        "length": lengths[:, None],
        "gc": gc[:, None],
        "kmer1": _frequencies(c1),
        "kmer2": _frequencies(kmer_counts(seqs, 2)),
        "kmer3": _frequencies(kmer_counts(seqs, 3)),
    }
    return {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in feats.items()}


def _fits(train: SplitData, n_classes: int, task: str) -> list[Any]:
    """One ProbeFit per (regime, seed) of the GENEB protocol; full once."""
    from geneb import protocol
    from geneb.probe.solvers.base import ProbeFit
    from geneb.protocol import DEFAULT_SEEDS, REGIMES

    fits = []
    for regime in REGIMES:
        for seed in DEFAULT_SEEDS if regime != "full" else DEFAULT_SEEDS[:1]:
            sample = protocol.draw(
                regime, train.labels, train.rows, seed=seed, task_fingerprint=train.fingerprint,
                n_classes=n_classes, take_all=True, task=task,
            )
            fits.append(ProbeFit(regime=regime, k=protocol.regime_k(regime), seed=seed,
                                  C=SHORTCUT_C, train_idx=sample.positions))
    return fits


def shortcut_mccs(
    train: SplitData, test: SplitData, n_classes: int, task: str = "?"
) -> dict[str, dict[str, float]]:
    """{regime: {shortcut: MCC on test, mean over seeds}} for regimes 1, 10 and full."""
    # scipy's own OpenBLAS (L-BFGS-B) is only thread-limited if loaded before the limit is
    # set: loaded inside it, it spun 2 threads on a busy machine (5.8 s instead of 2.3 s of
    # CPU for one 1,000-class fit)
    import scipy.optimize  # noqa: F401

    from geneb._threads import thread_limit
    from geneb.probe.metrics import compute_metrics
    from geneb.probe.solvers import get_backend
    from geneb.probe.solvers.base import ProbeProblem
    from geneb.protocol import MAX_ITER

    f_train, f_test = shortcut_features(train.sequences), shortcut_features(test.sequences)
    fits = _fits(train, n_classes, task)
    solver = get_backend("fast")
    out: dict[str, dict[str, list[float]]] = {}
    with thread_limit(1):
        for name in SHORTCUTS:
            problem = ProbeProblem(
                X_train=f_train[name], y_train=np.asarray(train.labels, dtype=np.int64),
                X_test=f_test[name], n_classes=n_classes, standardize=True, max_iter=MAX_ITER,
            )
            for fit, res in zip(fits, _solve(solver, problem, fits), strict=True):
                mcc = compute_metrics(test.labels, res.proba, n_classes)["mcc"]
                out.setdefault(fit.regime, {}).setdefault(name, []).append(mcc)
    return {r: {n: round(float(np.mean(v)), 6) for n, v in d.items()} for r, d in out.items()}


def _solve(solver: Any, problem: Any, fits: list[Any]) -> list[Any]:
    """The fast backend's results for ``fits``; a problem with more than
    ``AUDIT_NEWTON_MAX_CLASSES`` classes or ``AUDIT_NEWTON_MAX_COEFS`` coefficients goes to
    its first-order (L-BFGS) path, fit by fit, at ``AUDIT_LBFGS_TOL``, so that memory stays
    linear in the coefficients (1,000 classes x 65 k-mer features: 65,000)."""
    d, k = problem.X_train.shape[1], problem.n_classes
    if k <= AUDIT_NEWTON_MAX_CLASSES and (d + 1) * max(1, k - 1) <= AUDIT_NEWTON_MAX_COEFS:
        return list(solver.solve(problem, fits))
    from dataclasses import replace

    problem = replace(problem, tol=max(problem.tol, AUDIT_LBFGS_TOL))
    done: dict[bytes, Any] = {}
    out = []
    for fit in fits:  # identical draws (10-shot of a 3-row class takes every row) once
        key = np.ascontiguousarray(fit.train_idx).tobytes()
        if key not in done:
            done[key] = solver._solve_large(problem, fit.train_idx, [fit.C])[0]
        out.append(done[key])
    return out
