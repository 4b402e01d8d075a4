"""Held-out real-size pairs: geneb's full-data probe against scikit-learn's optimum at tol 1e-10.

Realistic embeddings (``tests/realistic_embeddings.py``, the statistics of ``real_size.py``)
drawn with other seeds than ``real_size.py``'s, so the solver's constants were never tuned on
them. Per shape and C:

* ``geneb probe`` (the CLI, on a store written first, full regime only, one C) and
  scikit-learn ``LogisticRegression(solver="newton-cholesky", tol=1e-10)`` on the same rows:
  their test MCCs;
* the coefficients of geneb's C path solver (the one the CLI runs: ``fast_full.solve_path``,
  or ``fast_rowspace.solve_path_row_space`` where ``use_row_space``) against scikit-learn's: the objective ``C sum(loss) + |w|^2 / 2`` of each in float64 (their
  difference, relative to scikit-learn's) and the largest coefficient difference relative to
  the largest coefficient.

Prints one JSON object per line.

    .venv/bin/python benchmarks/real_size_heldout.py --shapes 20000x4096x2,30000x1024x3 --C 1,100
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from real_size import cli_probe  # noqa: E402 (this folder: the script's own path)
from realistic_embeddings import GENEB_MCC_QUANTILES, SEPARABLE, generate  # noqa: E402


def draw(n: int, d: int, K: int, level: str) -> tuple[np.ndarray, ...]:
    """(X, y, X_test, y_test): train n rows, test a quarter, seeds apart from real_size.py's."""
    stats = SEPARABLE if level == "separable" else {"mcc": GENEB_MCC_QUANTILES[level]}
    X_all, y_all = generate(n + n // 4, d, K, seed=n * 11 + d * 5 + K + 1, stats=stats)
    return np.ascontiguousarray(X_all[:n]), y_all[:n], X_all[n:], y_all[n:]


def objective(X: np.ndarray, y: np.ndarray, K: int, C: float, W: np.ndarray,
              b: np.ndarray) -> float:
    """``C sum(log-loss) + |W|^2 / 2`` in float64 (scikit-learn's objective)."""
    Z = X.astype(np.float64) @ W.T + b
    if K == 2:
        z = Z[:, 0]
        loss = np.logaddexp(0.0, z) - y * z
    else:
        top = Z.max(1, keepdims=True)
        lse = (top + np.log(np.exp(Z - top).sum(1, keepdims=True)))[:, 0]
        loss = lse - Z[np.arange(len(y)), y]
    return float(C * loss.sum() + 0.5 * (W * W).sum())


def cli_mcc(data: tuple[np.ndarray, ...], C: float, workdir: Path) -> float:
    """Test MCC of ``geneb probe`` on the pair, full regime, the one C."""
    _, table = cli_probe(data, workdir, ["--C", f"{C:g}", "--shots", "full", "--seeds", "13"],
                         "heldout")
    if len(table) != 1 or not table.converged.all():
        sys.exit(f"geneb probe wrote {len(table)} rows; expected one converged cell")
    return float(table.mcc.iloc[0])


def check(shape: tuple[int, int, int], C: float, level: str) -> dict:
    """Everything compared on one pair at one C (module docstring)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import matthews_corrcoef
    from threadpoolctl import threadpool_limits

    from geneb.probe.solvers.fast_full import solve_path
    from geneb.probe.solvers.fast_passes import use_kernels
    from geneb.probe.solvers.fast_rowspace import solve_path_row_space, use_row_space

    n, d, K = shape
    data = draw(n, d, K, level)
    X, y, Xte, yte = data
    implicit = use_kernels(n, d + 1)  # as the fast backend decides (``FastBackend``)
    rows_space = use_row_space(n, d, K - 1 if K > 2 else 1)
    with threadpool_limits(1):
        t0 = time.perf_counter()
        if rows_space:
            path = solve_path_row_space(X.astype(np.float64), y, K, [C], tol=1e-8,
                                        max_iter=100, threads=2)
            if path is None:
                sys.exit(f"{shape}: the row space's exact check failed")
            fit = path[0]
        else:
            design = X if implicit else np.hstack([X, np.ones((n, 1), np.float32)])
            fit = solve_path(None, design, y, K, [C], tol=1e-8, max_iter=100, threads=2,
                             implicit_ones=implicit)[0]
        ours_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    sk = LogisticRegression(C=C, solver="newton-cholesky", tol=1e-10, max_iter=1000)
    sk.fit(X.astype(np.float64), y)
    sk_s = time.perf_counter() - t0
    W, b = fit.theta[:, :-1], fit.theta[:, -1]
    f_ours = objective(X, y, K, C, W, b)
    f_sk = objective(X, y, K, C, sk.coef_, sk.intercept_)
    with tempfile.TemporaryDirectory(prefix="geneb-heldout-") as tmp:
        mcc_cli = cli_mcc(data, C, Path(tmp))
    return {"n_train": n, "width": d, "classes": K, "C": C, "mcc_level": level,
            "solver": "row space" if rows_space else "primal",
            "converged": bool(fit.converged), "solver_s": ours_s, "sklearn_s": sk_s,
            "sklearn_n_iter": int(np.max(sk.n_iter_)),
            "objective_diff_rel": (f_ours - f_sk) / abs(f_sk),
            "coef_diff_rel": float(np.abs(W - sk.coef_).max() / np.abs(sk.coef_).max()),
            "mcc_cli": mcc_cli, "mcc_sklearn": float(matthews_corrcoef(yte, sk.predict(Xte)))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="10000x768x2,30000x1024x3,20000x4096x2",
                    help="n x d x K list")
    ap.add_argument("--C", default="1,100", help="comma-separated C values")
    ap.add_argument("--mcc", default="median", choices=[*GENEB_MCC_QUANTILES, "separable"])
    args = ap.parse_args()
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")]
    for shape in shapes:
        if len(shape) != 3:
            sys.exit(f"--shapes: expected n x d x K, got {'x'.join(map(str, shape))}")
        for C in (float(c) for c in args.C.split(",")):
            print(json.dumps(check(shape, C, args.mcc)), flush=True)  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
