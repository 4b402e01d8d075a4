"""The real-size shapes of ``real_size.py`` in ``gpu_check.py``: the torch backend (and cuML
when usable) against the CPU ``fast`` backend's full-regime fits, same equality checks.

The embeddings are regenerated on each machine from their seeds (``realistic_embeddings``;
100,000 x 1,024 float32 is 400 MB, more than a run may carry), and a float64 checksum of each
matrix is stored with the reference, so the check says whether both machines drew the same
numbers (a different BLAS may round the generator's rotation differently in the last bits;
probabilities are then still compared within ``PROBA_TOL``, but the checksum shows it).
Reference: every C of GENEB's sweep on all train rows (the full regime, the C path this
issue times), probabilities of the test quarter, converged flags.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

#: (train rows, width, classes) per size: the dry run's small ones, the GPU run's are
#: ``real_size.MEASURED`` (the benchmark's default shapes)
REAL_SHAPES = {"small": ((600, 64, 2), (400, 96, 3)), "gpu": None}


def _shapes(size: str) -> tuple[tuple[int, int, int], ...]:
    from real_size import MEASURED

    return REAL_SHAPES[size] or MEASURED


def _pair(shape: tuple[int, int, int]) -> tuple[Any, list[Any], float]:
    """The problem, its full-regime fits and the train matrix's checksum."""
    from realistic_embeddings import generate

    from geneb.probe.solvers.base import ProbeFit, ProbeProblem
    from geneb.vocabulary import DEFAULT_C_SWEEP

    n, d, K = shape
    X, y = generate(n + n // 4, d, K, seed=n * 7 + d * 3 + K)  # real_size.py's seeds
    prob = ProbeProblem(X[:n], y[:n], X[n:], K, standardize=False)
    fits = [ProbeFit("full", None, 13, float(C), np.arange(n)) for C in DEFAULT_C_SWEEP]
    return prob, fits, float(X.astype(np.float64).sum())


def reference_real_size(refs: Path, size: str) -> dict[str, Any]:
    """The CPU ``fast`` fits of every shape, written to ``refs/real_size_*.npz``."""
    from geneb.probe.solvers import get_backend

    out = {}
    for shape in _shapes(size):
        prob, fits, checksum = _pair(shape)
        t0 = time.perf_counter()
        res = get_backend("fast").solve(prob, fits)
        tag = "x".join(map(str, shape))
        np.savez(refs / f"real_size_{tag}.npz", proba=np.stack([r.proba for r in res]),
                 converged=np.array([r.converged for r in res]), checksum=checksum)
        out[tag] = round(time.perf_counter() - t0, 2)
    return {"real_size_seconds": out}


def check_real_size(refs: Path, device: str, inject: bool) -> list[dict[str, Any]]:
    """Every shape of the reference through the torch backend (and cuML on CUDA when it
    imports): probabilities within ``PROBA_TOL``, no argmax flip on a decided row, converged
    wherever the reference converged."""
    from gpu_check_steps import PROBA_TOL

    from geneb.probe.solvers import get_backend
    from geneb.probe.solvers.cuml_backend import cuml_available

    cfg = json.loads((refs / "config.json").read_text())
    names = ["torch"] + (["cuml"] if device.startswith("cuda") and cuml_available() else [])
    out = []
    for tag in cfg.get("real_size_seconds", {}):
        ref = np.load(refs / f"real_size_{tag}.npz")
        shape = tuple(int(v) for v in tag.split("x"))
        prob, fits, checksum = _pair(shape)  # type: ignore[arg-type]
        ref_p = ref["proba"] + (1e-3 if inject else 0.0)
        top2 = np.sort(ref_p, axis=-1)[..., -2:]
        decided = (top2[..., 1] - top2[..., 0]) > 2 * PROBA_TOL
        for name in names:
            backend = get_backend(name, device=device) if name == "torch" else get_backend(name)
            t0 = time.perf_counter()
            res = backend.solve(prob, fits)
            got = np.stack([r.proba for r in res])
            dp = float(np.abs(got - ref_p).max())
            flips = int(((got.argmax(-1) != ref_p.argmax(-1)) & decided).sum())
            missed = int(sum(c and not r.converged for c, r in zip(ref["converged"], res,
                                                                   strict=True)))
            out.append({"check": f"real_size {tag} {name}",
                        "ok": dp <= PROBA_TOL and not flips and not missed,
                        "seconds": round(time.perf_counter() - t0, 2),
                        "reference_seconds": cfg["real_size_seconds"][tag],
                        "max_abs_dproba": dp, "decided_argmax_flips": flips,
                        "not_converged_where_reference_did": missed,
                        "same_embeddings": bool(checksum == float(ref["checksum"]))})
    return out
