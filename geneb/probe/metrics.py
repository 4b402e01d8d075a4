"""Metrics of one probe on the whole test split, computed centrally from class probabilities.

MCC is the primary score (scikit-learn's ``matthews_corrcoef``, multi-class included);
accuracy, macro-F1 and AUROC (binary: on p(class 1); multi-class: one-vs-rest macro) come with
it. AUROC is null when a class is absent from the test labels (it is undefined there).
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.metrics import accuracy_score, f1_score, matthews_corrcoef, roc_auc_score

METRIC_NAMES: tuple[str, ...] = ("mcc", "accuracy", "macro_f1", "auroc")

#: Probabilities this close to the top one count as a tie, broken towards the lower class.
#: Exact ties are real: a 1-shot probe on standardised k-mer spectra puts ~5% of test rows at
#: decision value 0 (measured on gue_mouse_0), and float rounding (~1e-15) would otherwise
#: decide them differently for every solver. scikit-learn's ``predict`` also sends decision 0
#: to the lower class; the tolerance only makes that rule immune to rounding.
TIE_TOL = 1e-9


def predict_from_proba(proba: np.ndarray) -> np.ndarray:
    """Class with the highest probability; ties (within ``TIE_TOL``) go to the lower class."""
    proba = np.asarray(proba, dtype=np.float64)
    top = proba.max(axis=1, keepdims=True)
    return np.asarray(np.argmax(proba >= top - TIE_TOL, axis=1), dtype=np.int64)


def compute_metrics(y_true: np.ndarray, proba: np.ndarray, n_classes: int) -> dict[str, float]:
    """MCC, accuracy, macro-F1 and AUROC (or None) of probabilities ``proba`` (n, K)."""
    y_true = np.asarray(y_true, dtype=np.int64)
    proba = np.asarray(proba, dtype=np.float64)
    if proba.shape != (len(y_true), n_classes):
        raise ValueError(f"proba has shape {proba.shape}, expected ({len(y_true)}, {n_classes})")
    y_pred = predict_from_proba(proba)
    labels = list(range(n_classes))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant predictions: MCC 0 is the defined answer
        mcc = float(matthews_corrcoef(y_true, y_pred))
        f1 = float(f1_score(y_true, y_pred, labels=labels, average="macro", zero_division=0))
    acc = float(accuracy_score(y_true, y_pred))
    auroc: float | None = None
    if len(np.unique(y_true)) == n_classes:
        if n_classes == 2:
            auroc = float(roc_auc_score(y_true, proba[:, 1]))
        else:
            p = np.clip(proba, 0.0, None)
            p = p / p.sum(axis=1, keepdims=True)
            auroc = float(roc_auc_score(y_true, p, multi_class="ovr", average="macro",
                                        labels=labels))
    return {"mcc": mcc, "accuracy": acc, "macro_f1": f1, "auroc": auroc}
