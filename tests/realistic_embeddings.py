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

#: The statistics ``benchmarks/real_size_fit.py`` measured (2026-12-01, 600 train rows of
#: gue_tf_0, gue_mouse_0 and gue_emp_h3 each; docs/probing.md): ``trained``, the medians of the
#: real HyenaDNA checkpoint (the one trained model here; the family fixtures carry random
#: weights, their spectra are flat: alpha 0.27-0.45), ``kmer`` those of the kmer-5 and kmer-6
#: spectra. ``generate`` uses ``trained`` unless given others.
PROFILES = {
    "trained": {"alpha": 1.90, "offset": 2.88, "separation": 0.025, "scale": 0.101},
    "kmer": {"alpha": 0.60, "offset": 0.14, "separation": 0.0075, "scale": 2.7e-6},
}
FITTED = PROFILES["trained"]


def generate(n: int, d: int, n_classes: int, seed: int, stats: dict[str, float] | None = None
             ) -> tuple[np.ndarray, np.ndarray]:
    """(n, d) float32 embeddings with ``stats`` (default ``FITTED``) and balanced labels."""
    s = {**FITTED, **(stats or {})}
    rng = np.random.default_rng(seed)
    y = np.arange(n) % n_classes
    rng.shuffle(y)
    lam = np.arange(1, d + 1, dtype=np.float64) ** -s["alpha"]
    lam *= s["scale"] * d / lam.sum()  # within-class trace = scale * d
    M = rng.standard_normal((n_classes, d)) * np.sqrt(lam)
    M -= M.mean(0)
    tr_b = float((M**2).sum() / n_classes)
    M *= np.sqrt(s["separation"] * lam.sum() / tr_b)
    R = np.linalg.qr(rng.standard_normal((d, d)))[0].astype(np.float32)
    Z = rng.standard_normal((n, d), dtype=np.float32)
    Z *= np.sqrt(lam).astype(np.float32)
    Z += M[y].astype(np.float32)
    X = Z @ R
    mean_dir = rng.standard_normal(d)
    total = lam.sum() * (1 + s["separation"])
    X += (mean_dir * np.sqrt(s["offset"] * total / (mean_dir**2).sum())).astype(np.float32)
    return X, y
