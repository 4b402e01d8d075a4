"""The fast backend's test logits over blocks of test rows (``fast_predict.TestRows``):
the same products as one float64 copy of the test set, and the same probabilities as
scikit-learn's ``predict_proba`` with the solved coefficients, whatever the block size."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from geneb.probe.solvers import fast_predict
from geneb.probe.solvers.fast_predict import TestRows


def _rows(n: int, d: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((n, d)) * rng.uniform(0.1, 5.0, d) + 3.0).astype(np.float32)


@pytest.mark.parametrize("n", [0, 1, 63, 700])
def test_products_equal_one_float64_copy(n: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fast_predict, "TEST_BLOCK_BYTES", 64 * 8 * 24)  # 64-row blocks
    X = _rows(n, 24)
    W = np.random.default_rng(1).standard_normal((24, 7))
    if n:
        assert len(list(TestRows(X, None).blocks())) == -(-n // 64)
    logits, mag = TestRows(X, None).products(W)
    X64 = X.astype(np.float64)
    assert logits.shape == mag.shape == (n, 7)
    np.testing.assert_allclose(logits, X64 @ W, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(mag, np.abs(X64) @ np.abs(W), rtol=1e-12, atol=0)


@pytest.mark.parametrize("shots,classes", [("1", 2), ("10", 3), ("full", 2), ("full", 3)])
def test_blocked_probabilities_equal_sklearn_predict_proba(
        shots: str, classes: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every cell's test MCC and AUROC, with 64-row test blocks, equal those of the sklearn
    backend (scikit-learn's fit and ``predict_proba`` on the same draw of train rows), and the
    full regime's MCC equals scikit-learn's own fit and ``predict_proba``, outside geneb."""
    import geneb

    monkeypatch.setattr(fast_predict, "TEST_BLOCK_BYTES", 64 * 8 * 16)
    rng = np.random.default_rng(classes)
    y = rng.integers(0, classes, 900)
    X = _rows(900, 16, seed=classes) + np.eye(classes, 16)[y].astype(np.float32) * 2.0
    Xtr, ytr, Xte, yte = X[:600], y[:600], X[600:], y[600:]
    df = geneb.probe_arrays(Xtr, ytr, Xte, yte, shots=[shots], seeds=[13], Cs=[1.0],
                            backend="fast")
    ref = geneb.probe_arrays(Xtr, ytr, Xte, yte, shots=[shots], seeds=[13], Cs=[1.0],
                             backend="sklearn")
    assert len(df) == len(ref) == 1
    np.testing.assert_allclose(df.mcc.to_numpy(), ref.mcc.to_numpy(), atol=1e-9)
    np.testing.assert_allclose(df.auroc.to_numpy(), ref.auroc.to_numpy(), atol=1e-6)
    if shots == "full":  # and against predict_proba itself, outside geneb
        from sklearn.metrics import matthews_corrcoef

        sk = LogisticRegression(C=1.0, tol=1e-10, max_iter=10_000).fit(Xtr, ytr)
        pred = sk.predict_proba(Xte).argmax(1)
        assert df.mcc.iloc[0] == pytest.approx(matthews_corrcoef(yte, pred), abs=1e-9)
