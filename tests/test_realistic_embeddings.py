"""The realistic embeddings keep the fitted statistics and GENEB's published difficulty.

References: scikit-learn's LDA (the Bayes rule's estimate for equal covariances) for the
difficulty, plain numpy for the statistics; GENEB's published MCC quantiles from
``../shared/published``.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import SHARED, require_shared
from realistic_embeddings import FITTED, GENEB_MCC_QUANTILES, SEPARABLE, generate
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.metrics import matthews_corrcoef


def _lda_mcc(X, y):
    half = len(y) // 2
    m = LinearDiscriminantAnalysis().fit(X[:half], y[:half])
    return matthews_corrcoef(y[half:], m.predict(X[half:]))


def _trace_ratio(X, y):
    means = np.stack([X[y == k].mean(0) for k in np.unique(y)])
    within = X - means[y]
    between = means[y] - X.mean(0)
    return float((between**2).sum() / (within**2).sum())


@pytest.mark.parametrize("level", ["median", "p90"])
def test_draw_has_the_target_difficulty_and_the_fitted_separation(level):
    X, y = generate(40000, 256, 2, seed=7, stats={"mcc": GENEB_MCC_QUANTILES[level]})
    assert _lda_mcc(X, y) == pytest.approx(GENEB_MCC_QUANTILES[level], abs=0.04)
    assert _trace_ratio(X, y) == pytest.approx(FITTED["separation"], rel=0.25)


def test_former_draw_is_near_separable_at_genebs_widths():
    X, y = generate(20000, 512, 2, seed=8, stats=SEPARABLE)
    assert _lda_mcc(X, y) > 0.97  # past GENEB's 99th percentile (0.924)


def test_quantiles_are_genebs_published_ones():
    import pandas as pd

    published = require_shared(SHARED / "published" / "geneb-9642d48", "GENEB's leaderboard")
    df = pd.read_csv(published / "task_mcc_full.csv")
    values = df.iloc[:, 5:].to_numpy(dtype=float).ravel()
    values = values[~np.isnan(values)]
    assert len(values) == 41 * 100
    for level, q in (("median", 50), ("p90", 90), ("p99", 99)):
        assert GENEB_MCC_QUANTILES[level] == pytest.approx(np.percentile(values, q), abs=5e-4)
