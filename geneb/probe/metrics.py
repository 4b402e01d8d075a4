"""Metrics of one probe on the whole test split, computed centrally from class probabilities.

MCC is the primary score (scikit-learn's ``matthews_corrcoef`` definition, multi-class
included); accuracy, macro-F1 and AUROC (binary: on p(class 1); multi-class: one-vs-rest macro)
come with it. AUROC is null when a class is absent from the test labels (it is undefined there).

Computed with numpy from the confusion matrix and ranks (tested equal to scikit-learn): the
scikit-learn functions spend ~8 ms per call on input validation, which was a third of the
whole probe grid's time on a 75-cell task.
"""

from __future__ import annotations

from typing import TypedDict

import numpy as np

#: Probabilities this close to the top one count as a tie, broken towards the lower class.
#: Exact ties are real: a 1-shot probe on standardised k-mer spectra puts ~5% of test rows at
#: decision value 0 (measured on gue_mouse_0), and float rounding (~1e-15) would otherwise
#: decide them differently for every solver. scikit-learn's ``predict`` also sends decision 0
#: to the lower class; the tolerance only makes that rule immune to rounding.
TIE_TOL = 1e-9


class ClassMetrics(TypedDict):
    """The metrics of one classification probe (``auroc`` None: a class absent from the test
    labels leaves it undefined)."""

    mcc: float
    accuracy: float
    macro_f1: float
    auroc: float | None


def predict_from_proba(proba: np.ndarray) -> np.ndarray:
    """Class with the highest probability; ties (within ``TIE_TOL``) go to the lower class."""
    proba = np.asarray(proba, dtype=np.float64)
    top = proba.max(axis=1, keepdims=True)
    return np.asarray(np.argmax(proba >= top - TIE_TOL, axis=1), dtype=np.int64)


def _mcc(cm: np.ndarray) -> float:
    """Gorodkin's multi-class MCC from a confusion matrix (scikit-learn's definition)."""
    t = cm.sum(axis=1, dtype=np.float64)  # true counts per class
    p = cm.sum(axis=0, dtype=np.float64)  # predicted counts per class
    c = float(np.trace(cm))
    s = float(cm.sum())
    cov_ytyp = c * s - float(t @ p)
    cov_ypyp = s * s - float(p @ p)
    cov_ytyt = s * s - float(t @ t)
    if cov_ypyp * cov_ytyt == 0:
        return 0.0
    return float(cov_ytyp / np.sqrt(cov_ytyt * cov_ypyp))


def _average_ranks(x: np.ndarray) -> np.ndarray:
    """1-based ranks with ties sharing their average rank (scipy's ``rankdata`` default)."""
    order = np.argsort(x, kind="mergesort")
    xs = x[order]
    bounds = np.flatnonzero(np.concatenate(([True], xs[1:] != xs[:-1], [True])))
    avg = (bounds[:-1] + bounds[1:] + 1) / 2.0
    ranks = np.empty(len(x), dtype=np.float64)
    ranks[order] = np.repeat(avg, np.diff(bounds))
    return ranks


def _binary_auroc(is_pos: np.ndarray, score: np.ndarray) -> float:
    """Mann-Whitney AUROC with average ranks for ties (equals roc_auc_score)."""
    n_pos = int(is_pos.sum())
    n_neg = len(is_pos) - n_pos
    ranks = _average_ranks(np.asarray(score, dtype=np.float64))
    return float((ranks[is_pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def compute_metrics(
    y_true: np.ndarray, proba: np.ndarray, n_classes: int, y_pred: np.ndarray | None = None
) -> ClassMetrics:
    """MCC, accuracy, macro-F1 and AUROC (or None) of probabilities ``proba`` (n, K).

    ``y_pred`` overrides the predicted classes (the paper protocol scores scikit-learn's own
    ``predict``, whose argmax of decision values may split near-ties differently)."""
    y_true = np.asarray(y_true, dtype=np.int64)
    proba = np.asarray(proba, dtype=np.float64)
    if proba.shape != (len(y_true), n_classes):
        raise ValueError(f"proba has shape {proba.shape}, expected ({len(y_true)}, {n_classes})")
    y_pred = predict_from_proba(proba) if y_pred is None else np.asarray(y_pred, np.int64)
    k = n_classes
    cm = np.bincount(y_true * k + y_pred, minlength=k * k).reshape(k, k)
    tp = np.diag(cm).astype(np.float64)
    denom = cm.sum(axis=0) + cm.sum(axis=1)  # 2TP + FP + FN
    f1 = np.divide(2 * tp, denom, out=np.zeros(k), where=denom > 0)
    acc = float(tp.sum() / max(1, len(y_true)))
    auroc: float | None = None
    if len(np.unique(y_true)) == n_classes:
        if n_classes == 2:
            auroc = _binary_auroc(y_true == 1, proba[:, 1])
        else:
            p = np.clip(proba, 0.0, None)
            p = p / p.sum(axis=1, keepdims=True)
            auroc = float(np.mean([_binary_auroc(y_true == c, p[:, c]) for c in range(k)]))
    return {"mcc": float(_mcc(cm)), "accuracy": acc, "macro_f1": float(f1.mean()), "auroc": auroc}
