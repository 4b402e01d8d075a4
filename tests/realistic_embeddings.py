"""Embeddings with the statistics of real ones, at any shape (benchmarks/real_size.py, tests).

``generate`` draws ``X = (Z sqrt(lambda) + M[y]) R + offset``: Z standard normal, a power-law
within-class spectrum ``lambda_i ~ i^-alpha``, class means M drawn in the same eigenbasis (the
class signal lies where the variance is, as in real embeddings), R a random rotation (so that
standardisation does not undo the spectrum), a shared mean offset. ``FITTED`` holds the
statistics ``benchmarks/real_size_fit.py`` measured on real embeddings (its docstring defines
them; docs/probing.md has the table).
"""

from __future__ import annotations

import numpy as np

#: Quantiles of GENEB's published full-regime MCCs (see ``PROFILES``): the difficulty levels
#: ``benchmarks/real_size.py --mcc`` names.
GENEB_MCC_QUANTILES = {"median": 0.472, "p90": 0.803, "p99": 0.924}
#: The statistics ``benchmarks/real_size_fit.py`` measured (2026-12-01, 600 train rows of
#: gue_tf_0, gue_mouse_0 and gue_emp_h3 each; docs/probing.md): ``trained``, the medians of the
#: real HyenaDNA checkpoint (the one trained model here; the family fixtures carry random
#: weights, their spectra are flat: alpha 0.27-0.45), ``kmer`` those of the kmer-5 and kmer-6
#: spectra. ``generate`` uses ``trained`` unless given others.
#: ``mcc``: how separable the classes are, as the Bayes MCC of the drawn distribution (the
#: class means' Mahalanobis distance, see ``generate``), set to a quantile of GENEB's published
#: full-regime MCCs (``../shared/published/geneb-9642d48/task_mcc_full.csv``, 41 models x 100
#: tasks, 4,100 values: 5% 0.135, 25% 0.329, median 0.472, 75% 0.648, 90% 0.803, 99% 0.924):
#: ``trained`` and ``kmer`` at the median. None: the class means drawn with the within-class
#: spectrum's shape and scaled to ``separation`` alone, as before 2026-12-02; at GENEB's widths
#: that is a Mahalanobis distance growing as sqrt(width) (Bayes MCC 0.99 and more at width
#: 1,024, past GENEB's 99th percentile), so ``SEPARABLE`` is that stress case, not a typical
#: pair.
PROFILES = {
    "trained": {"alpha": 1.90, "offset": 2.88, "separation": 0.025, "scale": 0.101,
                "mcc": GENEB_MCC_QUANTILES["median"]},
    "kmer": {"alpha": 0.60, "offset": 0.14, "separation": 0.0075, "scale": 2.7e-6,
             "mcc": GENEB_MCC_QUANTILES["median"]},
}
FITTED = PROFILES["trained"]
#: The former draw (``mcc`` None): near-separable at GENEB's widths.
SEPARABLE = {"mcc": None}


def mahalanobis_for_mcc(mcc: float) -> float:
    """Distance between two classes' means (in the within-class metric) whose Bayes rule has
    MCC ``mcc``: equal covariances and priors give accuracy ``Phi(delta / 2)`` and
    MCC ``2 Phi(delta / 2) - 1``."""
    from scipy.stats import norm

    return float(2.0 * norm.ppf((1.0 + mcc) / 2.0))


def _class_means(Zm: np.ndarray, lam: np.ndarray, separation: float, mcc: float | None
                 ) -> np.ndarray:
    """(K, d) class means in the eigenbasis: ``s * lam**gamma * Zm``, centred.

    ``mcc`` None: gamma 1/2 and s from ``separation`` alone. Otherwise the mean pairwise
    Mahalanobis distance is ``mahalanobis_for_mcc(mcc)`` and gamma (>= 1/2: the class signal
    lies where the variance is, more so as gamma grows) is found by bisection so that
    ``tr S_B / tr S_W`` is still ``separation``; where even gamma 1/2 gives a larger ratio
    (narrow embeddings), gamma stays 1/2 and the ratio is smaller."""
    def means(gamma: float) -> np.ndarray:
        M = Zm * lam**gamma
        return M - M.mean(0)

    def pairwise_d2(M: np.ndarray) -> float:
        K = len(M)
        return float(np.mean([((M[a] - M[b]) ** 2 / lam).sum()
                              for a in range(K) for b in range(a + 1, K)]))

    def trace_ratio(M: np.ndarray, d2: float) -> float:  # M scaled to the target distance
        return float((M**2).sum() / len(M)) * d2 / pairwise_d2(M) / lam.sum()

    if mcc is None:
        M = means(0.5)
        return M * np.sqrt(separation * lam.sum() / float((M**2).sum() / len(M)))
    d2 = mahalanobis_for_mcc(mcc) ** 2
    lo, hi = 0.5, 4.0
    if trace_ratio(means(lo), d2) < separation:
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if trace_ratio(means(mid), d2) < separation else (lo, mid)
    M = means(lo)
    return M * np.sqrt(d2 / pairwise_d2(M))


def generate(n: int, d: int, n_classes: int, seed: int, stats: dict[str, float | None] | None = None
             ) -> tuple[np.ndarray, np.ndarray]:
    """(n, d) float32 embeddings with ``stats`` (default ``FITTED``) and balanced labels."""
    s = {**FITTED, **(stats or {})}
    rng = np.random.default_rng(seed)
    y = np.arange(n) % n_classes
    rng.shuffle(y)
    lam = np.arange(1, d + 1, dtype=np.float64) ** -float(s["alpha"])
    lam *= float(s["scale"]) * d / lam.sum()  # trace = scale * d
    M = _class_means(rng.standard_normal((n_classes, d)), lam, float(s["separation"]),
                     None if s.get("mcc") is None else float(s["mcc"]))
    R = np.linalg.qr(rng.standard_normal((d, d)))[0].astype(np.float32)
    Z = rng.standard_normal((n, d), dtype=np.float32)
    Z *= np.sqrt(lam).astype(np.float32)
    Z += M[y].astype(np.float32)
    X = Z @ R
    mean_dir = rng.standard_normal(d)
    total = lam.sum() * (1 + float(s["separation"]))
    X += (mean_dir * np.sqrt(float(s["offset"]) * total / (mean_dir**2).sum())).astype(np.float32)
    return X, y
