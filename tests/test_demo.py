"""`geneb demo`: the README's first command, at a reduced size, through the real CLI (the
installed ``geneb`` script) on a pseudo-terminal, as a user's shell runs it: its progress (issue
28, case 26) and its outputs, checked on the same one run (the demo is the suite's costliest
command; test_progress_tty.py checks that nothing is drawn when not a terminal or in CI)."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pandas as pd
import pytest
from PIL import Image
from terminal import environment, run_on_terminal

from geneb.protocol import DEFAULT_SEEDS


@pytest.mark.slow  # the demo at its smallest: ~60 s
def test_geneb_demo_shows_progress_and_produces_report_tables_and_figures(tmp_path):
    out = tmp_path / "demo"
    exe = shutil.which("geneb") or str(Path(sys.executable).with_name("geneb"))
    args = ["demo", "--out", str(out), "--n-train", "80", "--n-test", "60", "--no-minilm"]
    code, printed = run_on_terminal(args, environment(), timeout=600, command=[exe])
    assert code == 0, printed[-2000:]
    # progress on the terminal: extraction speed and both probes' bars
    assert "seq/s" in printed and "probing (linear)" in printed, printed[-2000:]
    assert "probing (mlp)" in printed, printed[-2000:]
    text = " ".join(printed.split())
    if "did not converge" in text:  # the demo's few-row MLP fits: said in one line, explained
        assert "Common for MLP fits on few rows" in text
    # the closing lines, each a line of its own (the terminal ends lines with \r\n)
    assert re.search(r"(^|\n)demo finished in [0-9.]+ s\r?\n", printed), printed[-2000:]
    index = out / "report" / "index.html"
    assert re.search(rf"(^|\n)report: {re.escape(str(index))}\r?\n", printed), printed[-2000:]
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
