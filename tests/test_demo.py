"""`geneb demo`: the README's first command, at a reduced size, through the real CLI."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from PIL import Image

from geneb.protocol import DEFAULT_SEEDS


@pytest.mark.slow
def test_geneb_demo_produces_report_tables_and_figures(tmp_path):
    out = tmp_path / "demo"
    exe = shutil.which("geneb") or str(Path(sys.executable).with_name("geneb"))
    cmd = [exe, "demo", "--out", str(out), "--n-train", "80", "--n-test", "60", "--no-minilm"]
    env = {**os.environ, "CI": "true"}
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "demo finished in" in proc.stdout
    index = out / "report" / "index.html"
    assert f"report: {index}" in proc.stdout.splitlines()
    html = index.read_text()
    assert "synthetic" in html.lower()
    assert "http://" not in html and "https://" not in html
    tables = list((out / "report" / "tables").glob("*.csv"))
    assert len(tables) >= 10
    figures = sorted((out / "report" / "figures").glob("*.png"))
    assert {f.stem for f in figures} >= {"heatmap_model_category", "fewshot", "mcc_vs_c"}
    for f in figures:
        with Image.open(f) as im:
            im.verify()
    res = pd.read_parquet(out / "results.parquet")
    # the full GENEB grid: 3 regimes x 5 seeds, short C sweep, plus the MLP check
    assert set(res["regime"]) == {"1", "10", "full"}
    assert set(res["seed"]) == set(DEFAULT_SEEDS)
    assert set(res["probe"]) == {"linear", "mlp"}
    assert res[res["probe"] == "linear"]["C"].nunique() == 3
    assert {"kmer-2", "kmer-3", "kmer-4"} <= set(res["model"])
    assert any(m.startswith("random:") for m in res["model"])
