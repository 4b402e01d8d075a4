"""Opt-in standardisation, fit on a probe's own train rows only (never on test rows).

Same semantics as scikit-learn's ``StandardScaler``: mean and population standard deviation
(ddof=0) accumulated in float64; a feature whose scale is ~0 (below 10 * eps) is left unscaled
(scale 1), so constant features do not explode. Backends share this one implementation so the
same cell is standardised identically whichever backend solves it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class Standardizer:
    """Per-feature centre and scale learnt from one set of train rows."""

    mean: np.ndarray  # (d,) float64
    scale: np.ndarray  # (d,) float64, never 0

    @classmethod
    def fit(cls, X: np.ndarray) -> Standardizer:
        """Learn mean and std of ``X`` (rows = samples), as ``StandardScaler().fit(X)`` does."""
        X = np.asarray(X)
        if X.ndim != 2 or X.shape[0] == 0:
            raise ValueError(f"expected a non-empty 2-D matrix, got shape {X.shape}")
        mean = X.mean(axis=0, dtype=np.float64)
        var = np.square(X - mean, dtype=np.float64).mean(axis=0)
        scale = np.sqrt(var)
        scale[scale < 10 * np.finfo(np.float64).eps] = 1.0
        return cls(mean=mean, scale=scale)

    def transform(self, X: np.ndarray, dtype: np.dtype | type | None = None) -> np.ndarray:
        """``(X - mean) / scale`` in ``dtype`` (default: X's float dtype, float64 for ints)."""
        X = np.asarray(X)
        out_dtype = np.dtype(dtype) if dtype is not None else (
            X.dtype if np.issubdtype(X.dtype, np.floating) else np.dtype(np.float64)
        )
        return ((X - self.mean) / self.scale).astype(out_dtype, copy=False)


def standardize_pair(
    X_train: np.ndarray, X_test: np.ndarray, dtype: np.dtype | type | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Fit on ``X_train`` only and apply to both matrices."""
    s = Standardizer.fit(X_train)
    return s.transform(X_train, dtype), s.transform(X_test, dtype)
