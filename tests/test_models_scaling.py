"""Scaling uses the catalogue's published parameter counts where it has them (checked against a
Spearman correlation computed by hand), keeps the measured ones otherwise, and says which."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from example_results import example_results

from geneb.analysis.scaling import scaling_correlation, smaller_beats_larger, use_published_params
from geneb.analysis.table import CONTEXT
from geneb.models.catalogue import published_facts

# model -> (measured count in the store, macro-MCC); published: DNABERT-2 117M, AgroNT 1B,
# NT-2.5B-MS 2.5B, GROVER 87,101,793 (its paper: measured 87M in the store); my-tiny is not
# catalogued
MODELS = {
    "DNABERT-2": (3_000_000_000, 0.70),  # measured count deliberately wrong: published wins
    "InstaDeepAI/agro-nucleotide-transformer-1b": (985_000_000, 0.40),  # by hub id
    "NT-2.5B-MS": (2_400_000_000, 0.60),
    "GROVER": (87_000_000, 0.50),
    "my-tiny": (1_000_000, 0.20),
    "kmer-5": (np.nan, 0.45),
}
PUBLISHED = {
    "DNABERT-2": 117e6,
    "InstaDeepAI/agro-nucleotide-transformer-1b": 1e9,
    "NT-2.5B-MS": 2.5e9,
    "GROVER": 87_101_793,
    "my-tiny": 1e6,
}


def _tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    ctx = {"probe": "linear", "standardize": False, "C": 1.0, "regime": "full"}
    assert set(ctx) == set(CONTEXT)
    rows = [
        {**ctx, "scope": "overall", "model": m, "macro_mcc": mcc, "n_params": n}
        for m, (n, mcc) in MODELS.items()
    ]
    agg = pd.DataFrame(rows)
    meta = pd.DataFrame({"model": list(MODELS), "n_params": [n for n, _ in MODELS.values()]})
    return agg, meta


def _spearman_by_hand(x: list[float], y: list[float]) -> float:
    """1 - 6 sum d^2 / (n (n^2 - 1)) on ranks (no ties here)."""
    rx = {v: i for i, v in enumerate(sorted(x))}
    ry = {v: i for i, v in enumerate(sorted(y))}
    d2 = sum((rx[a] - ry[b]) ** 2 for a, b in zip(x, y, strict=True))
    n = len(x)
    return 1 - 6 * d2 / (n * (n * n - 1))


def test_published_counts_replace_measured_ones() -> None:
    agg, meta = _tables()
    agg2, meta2, note = use_published_params(agg, meta, catalogue=published_facts)
    used = dict(zip(meta2["model"], meta2["n_params"], strict=True))
    for m, n in PUBLISHED.items():
        assert used[m] == n, m
    assert math.isnan(used["kmer-5"])
    src = dict(zip(meta2["model"], meta2["n_params_source"], strict=True))
    assert src["DNABERT-2"].startswith("published (checkpoint name: https://huggingface.co/")
    assert src["GROVER"].startswith("published")
    assert src["my-tiny"] == "measured (loaded backbone)"
    assert pd.isna(src["kmer-5"])
    assert meta2.set_index("model").loc["DNABERT-2", "n_params_measured"] == 3e9
    assert "published (model card or paper, geneb model catalogue) for" in note
    assert "DNABERT-2, GROVER, InstaDeepAI/agro-nucleotide-transformer-1b, NT-2.5B-MS" in note
    assert "measured on the loaded backbone (store provenance) for my-tiny" in note

    sc = scaling_correlation(agg2)
    row = sc[sc["scope"] == "overall"].iloc[0]
    sized = [m for m in MODELS if m != "kmer-5"]
    expect = _spearman_by_hand(
        [math.log10(PUBLISHED[m]) for m in sized], [MODELS[m][1] for m in sized]
    )
    assert row["n_models"] == 5 and math.isclose(row["spearman_rho"], expect, abs_tol=1e-12)
    # with the measured counts the answer would differ: the published ones were used
    measured = _spearman_by_hand(
        [math.log10(MODELS[m][0]) for m in sized], [MODELS[m][1] for m in sized]
    )
    assert not math.isclose(measured, expect)
    # pairs at >= 5x size where the smaller one scores higher, by hand on published sizes
    pairs = smaller_beats_larger(agg2)
    by_hand = {
        (a, b)
        for a in sized
        for b in sized
        if PUBLISHED[b] >= 5 * PUBLISHED[a] and MODELS[a][1] > MODELS[b][1]
    }
    assert set(zip(pairs["smaller_model"], pairs["larger_model"], strict=True)) == by_hand


def test_report_says_which_count_it_used(tmp_path) -> None:
    from geneb.analysis.report import build_report

    models = {"DNABERT-2": (3_000_000_000, 0.6), "mini-2m": (2_000_000, 0.5),
              "GROVER": (87_000_000, 0.55), "kmer-4": (None, 0.4)}  # fmt: skip
    out = build_report(example_results(models=models), tmp_path / "rep", n_boot=100,
                       catalogue=published_facts)  # what `geneb report` passes
    html = (out if out.suffix == ".html" else out / "index.html").read_text()
    assert "Parameter counts used for scaling: published" in html and "DNABERT-2" in html
    assert "measured on the loaded backbone (store provenance) for mini-2m" in html
    csv = next((tmp_path / "rep").rglob("model_metadata.csv"))
    meta = pd.read_csv(csv).set_index("model")
    assert meta.loc["DNABERT-2", "n_params"] == 117_000_000
    assert meta.loc["DNABERT-2", "n_params_measured"] == 3_000_000_000
    assert meta.loc["mini-2m", "n_params_source"] == "measured (loaded backbone)"
