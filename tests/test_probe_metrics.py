"""Metrics and standardisation against slow, obvious implementations and scikit-learn."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from sklearn.preprocessing import StandardScaler

from geneb.probe.metrics import compute_metrics, predict_from_proba
from geneb.probe.preprocess import Standardizer, standardize_pair


def _mcc_by_hand(y, p, k):
    """Gorodkin's R_K from the confusion matrix, written out term by term."""
    C = np.zeros((k, k))
    for a, b in zip(y, p, strict=True):
        C[a, b] += 1
    s = C.sum()
    c = np.trace(C)
    t = C.sum(axis=1)  # true counts
    q = C.sum(axis=0)  # predicted counts
    num = c * s - sum(t[i] * q[i] for i in range(k))
    den = np.sqrt(s**2 - sum(q**2)) * np.sqrt(s**2 - sum(t**2))
    return 0.0 if den == 0 else num / den


def _auc_by_hand(pos_scores, neg_scores):
    wins = 0.0
    for a, b in itertools.product(pos_scores, neg_scores):
        wins += 1.0 if a > b else (0.5 if a == b else 0.0)
    return wins / (len(pos_scores) * len(neg_scores))


def _f1_by_hand(y, p, k):
    f = []
    for c in range(k):
        tp = np.sum((y == c) & (p == c))
        fp = np.sum((y != c) & (p == c))
        fn = np.sum((y == c) & (p != c))
        f.append(0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn))
    return float(np.mean(f))


@pytest.mark.parametrize("k", [2, 3, 4])
def test_metrics_match_hand_written_definitions(k):
    rng = np.random.default_rng(k)
    y = rng.integers(0, k, 80)
    logits = rng.standard_normal((80, k)) + 1.5 * np.eye(k)[y]
    proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    m = compute_metrics(y, proba, k)
    pred = proba.argmax(axis=1)
    assert m["mcc"] == pytest.approx(_mcc_by_hand(y, pred, k), abs=1e-12)
    assert m["accuracy"] == pytest.approx(np.mean(pred == y))
    assert m["macro_f1"] == pytest.approx(_f1_by_hand(y, pred, k))
    aucs = [_auc_by_hand(proba[y == c, c], proba[y != c, c]) for c in range(k)]
    expect = aucs[1] if k == 2 else float(np.mean(aucs))
    assert m["auroc"] == pytest.approx(expect, abs=1e-12)


def test_auroc_null_when_a_class_is_absent_from_test():
    y = np.array([0, 0, 2, 2])
    proba = np.full((4, 3), 1 / 3)
    m = compute_metrics(y, proba, 3)
    assert m["auroc"] is None
    assert m["mcc"] == 0.0  # constant prediction


def test_standardizer_matches_sklearn_standard_scaler():
    rng = np.random.default_rng(0)
    X = (rng.standard_normal((40, 7)) * [1, 10, 1e-3, 5, 1, 1, 1] + 3).astype(np.float32)
    X[:, 4] = 2.5  # constant feature: left unscaled, as StandardScaler does
    T = rng.standard_normal((9, 7)).astype(np.float32)
    ref = StandardScaler().fit(X.astype(np.float64))
    st = Standardizer.fit(X)
    np.testing.assert_allclose(st.mean, ref.mean_, rtol=1e-12)
    np.testing.assert_allclose(st.scale, ref.scale_, rtol=1e-12)
    a, b = standardize_pair(X, T, dtype=np.float64)
    np.testing.assert_allclose(a, ref.transform(X.astype(np.float64)), atol=1e-10)
    np.testing.assert_allclose(b, ref.transform(T.astype(np.float64)), atol=1e-10)
    assert standardize_pair(X, T)[0].dtype == np.float32


def test_ties_within_rounding_go_to_the_lower_class():
    from geneb.probe.metrics import predict_from_proba

    p1 = np.array([0.5 + 1e-15, 0.5 - 1e-15, 0.5, 0.7, 0.3])
    proba = np.stack([1 - p1, p1], axis=1)
    assert predict_from_proba(proba).tolist() == [0, 0, 0, 1, 0]
    tri = np.array([[0.2, 0.4 + 1e-14, 0.4], [0.1, 0.3, 0.6], [0.34, 0.33, 0.33]])
    assert predict_from_proba(tri).tolist() == [1, 2, 0]


@pytest.mark.parametrize("k", [2, 3, 5])
def test_metrics_equal_scikit_learn(k):
    from sklearn.metrics import accuracy_score, f1_score, matthews_corrcoef, roc_auc_score

    rng = np.random.default_rng(k)
    for trial in range(20):
        n = int(rng.integers(k, 200))
        y = np.concatenate([np.arange(k), rng.integers(0, k, n - k)])
        logits = rng.normal(size=(n, k)) + (trial % 3) * np.eye(k)[y]
        logits[rng.random(n) < 0.1] = 0.0  # exact ties
        proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        m = compute_metrics(y, proba, k)
        pred = predict_from_proba(proba)
        assert m["mcc"] == pytest.approx(matthews_corrcoef(y, pred), abs=1e-12)
        assert m["accuracy"] == pytest.approx(accuracy_score(y, pred), abs=1e-12)
        f1 = f1_score(y, pred, labels=list(range(k)), average="macro", zero_division=0)
        assert m["macro_f1"] == pytest.approx(f1, abs=1e-12)
        ref = (
            roc_auc_score(y, proba[:, 1])
            if k == 2
            else roc_auc_score(y, proba, multi_class="ovr", average="macro", labels=list(range(k)))
        )
        assert m["auroc"] == pytest.approx(ref, abs=1e-12)


def test_constant_prediction_mcc_is_zero():
    y = np.array([0, 1, 1, 0])
    proba = np.tile([0.9, 0.1], (4, 1))
    assert compute_metrics(y, proba, 2)["mcc"] == 0.0
