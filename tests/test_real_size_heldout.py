"""benchmarks/real_size_heldout.py as a user runs it, on small shapes: geneb's probe equals
scikit-learn's newton-cholesky optimum at tol 1e-10 (objective, coefficients, test MCC of
``geneb probe``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_heldout_pairs_equal_scikit_learns_optimum():
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    run = subprocess.run([sys.executable, str(REPO / "benchmarks/real_size_heldout.py"),
                          "--shapes", "1500x40x2,2000x64x3", "--C", "0.01,100"],
                         capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    rows = [json.loads(line) for line in run.stdout.splitlines()]
    assert [(r["n_train"], r["classes"], r["C"]) for r in rows] == [
        (1500, 2, 0.01), (1500, 2, 100.0), (2000, 3, 0.01), (2000, 3, 100.0)]
    for r in rows:
        assert r["converged"]
        assert abs(r["objective_diff_rel"]) < 1e-9, r
        assert r["coef_diff_rel"] < 1e-4, r
        assert r["mcc_cli"] == r["mcc_sklearn"], r


def test_heldout_refuses_a_malformed_shape():
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    run = subprocess.run([sys.executable, str(REPO / "benchmarks/real_size_heldout.py"),
                          "--shapes", "1500x40"], capture_output=True, text=True, env=env,
                         timeout=120)
    assert run.returncode != 0 and "expected n x d x K, got 1500x40" in run.stderr
