"""benchmarks/real_size.py runs as a user would run it (one tiny shape, the CLI grid included),
and its projection reads what it wrote."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_real_size_runs_with_the_cli_grid_and_projects(tmp_path):
    out = tmp_path / "rs.json"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    run = subprocess.run([sys.executable, str(REPO / "benchmarks/real_size.py"), "--shapes",
                          "400x12x2,300x10x3", "--repeats", "1", "--cli", "--mlp", "--json",
                          str(out)],
                         capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    rows = json.loads(out.read_text())
    assert [(r["n_train"], r["width"], r["classes"]) for r in rows] == [(400, 12, 2), (300, 10, 3)]
    for r in rows:
        assert r["full"]["cells"] == 25 and r["full"]["converged"] == 25
        assert r["grid_cli_s"] > 0 and r["limit_s"] > 0 and r["mcc_level"] == "median"
        assert r["mlp"]["cells"] == 15 and r["mlp"]["seconds"] > 0
    proj = subprocess.run([sys.executable, str(REPO / "benchmarks/real_size_projection.py"),
                           str(out)], capture_output=True, text=True, env=env, timeout=300)
    assert proj.returncode == 0, proj.stderr[-2000:]
    figures = json.loads(proj.stdout)
    assert figures["models"] == 41 and figures["tasks"] == 100 and figures["hours_2_cores"] > 0
    assert figures["mlp_pairs"] == 143 and figures["mlp_check_h"] > 0
    assert figures["mlp_all_pairs_h"] >= figures["mlp_check_h"]
