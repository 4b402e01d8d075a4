"""Supervised VEP (`geneb vep probe`): genomic-block folds never share a window, the probe equals
a direct scikit-learn fit per fold, C is chosen inside the training set, and the CLI runs on
BRCA1 with kmer-3 and a tiny transformer beside the zero-shot scorers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from typer.testing import CliRunner

from geneb.cli import app
from geneb.errors import GenebError

W = 128
LIMIT = 1000  # 4 blocks of non-overlapping windows at W=128 (BRCA1 file order)


@pytest.fixture(scope="module")
def brca1(models_dir: Path) -> str:
    p = models_dir.parent / "variants" / "brca1_findlay2018"
    if not p.is_dir():
        pytest.skip(f"BRCA1 task not found at {p}")
    return str(p)


@pytest.fixture(scope="module")
def kmer_table(brca1: str) -> pd.DataFrame:
    from geneb.vep.probe_run import probe_variants

    return probe_variants(brca1, "kmer-3", window=W, limit=LIMIT, folds=4, backend="sklearn")


def _windows_by_hand(folder: str, t: pd.DataFrame) -> tuple[list[str], list[str]]:
    """Reference / alternate windows of SNVs straight from reference.fa (docs/vep.md rule)."""
    lines = Path(folder, "reference.fa").read_text().split("\n")
    start = int(lines[0].split()[0].split(":")[1].split("-")[0])
    seq = "".join(x.strip() for x in lines[1:])
    refs, alts = [], []
    for pos, a in zip(t["pos"], t["alt"], strict=True):
        o = int(pos) - start
        r = seq[o - W // 2 : o + W // 2]
        refs.append(r)
        alts.append(r[: W // 2] + a + r[W // 2 + 1 :])
    return refs, alts


def test_folds_never_share_a_window(kmer_table):
    t = kmer_table[kmer_table["scorer"] == "probe-diff"]
    assert (t["status"] == "ok").all() and set(t["fold"]) == {0, 1, 2, 3}
    lo = t["pos"].to_numpy() - 1 - W // 2
    hi = lo + W
    f = t["fold"].to_numpy()
    overlap = (lo[:, None] < hi[None, :]) & (lo[None, :] < hi[:, None])
    assert not (overlap & (f[:, None] != f[None, :])).any()
    # folds are contiguous along the genome: sorted by position, the fold changes 3 times
    by_pos = f[np.argsort(t["pos"].to_numpy(), kind="stable")]
    assert (np.diff(by_pos) != 0).sum() == 3


def test_probe_equals_sklearn_per_fold(brca1, kmer_table):
    from geneb.models.registry import get_embedder

    emb = get_embedder("kmer-3")
    t = kmer_table[kmer_table["scorer"] == "probe-diff"].reset_index(drop=True)
    refs, alts = _windows_by_hand(brca1, t)
    X = np.asarray(emb.embed(alts), np.float64) - np.asarray(emb.embed(refs), np.float64)
    y, fold = t["label"].to_numpy(), t["fold"].to_numpy()
    for f in range(4):
        tr, te = fold != f, fold == f
        C = float(t.loc[te, "C"].iloc[0])
        clf = LogisticRegression(C=C, tol=1e-12, max_iter=100_000).fit(X[tr], y[tr])
        np.testing.assert_allclose(t.loc[te, "score"], clf.predict_proba(X[te])[:, 1],
                                   atol=1e-6)
        # C: best pooled AUROC of the inner folds (the other three), ties to the smaller C
        inner = {}
        for c in (0.01, 0.1, 1.0, 10.0, 100.0):
            p = np.full(len(y), np.nan)
            for g in set(range(4)) - {f}:
                itr, ite = tr & (fold != g), fold == g
                p[ite] = LogisticRegression(C=c, tol=1e-12, max_iter=100_000).fit(
                    X[itr], y[itr]).predict_proba(X[ite])[:, 1]
            inner[c] = roc_auc_score(y[tr], p[tr])
        best = max(inner.values())
        assert C == min(c for c, v in inner.items() if v >= best - 1e-9), (f, inner)


def test_ridge_target_score_equals_sklearn_per_fold(brca1):
    from sklearn.linear_model import Ridge

    from geneb.models.registry import get_embedder
    from geneb.vep.probe_run import probe_variants

    t = probe_variants(brca1, "kmer-3", window=W, limit=LIMIT, folds=4, target="score",
                       features=["diff"], alphas=[0.001, 0.1])
    assert set(t["scorer"]) == {"ridge-diff"} and "alpha" in t and "C" not in t
    emb = get_embedder("kmer-3")
    refs, alts = _windows_by_hand(brca1, t)
    X = np.asarray(emb.embed(alts), np.float64) - np.asarray(emb.embed(refs), np.float64)
    y, fold = t["task_score"].to_numpy(), t["fold"].to_numpy()
    for f in range(4):
        tr, te = fold != f, fold == f
        a = float(t.loc[te, "alpha"].iloc[0])
        pred = Ridge(alpha=a).fit(X[tr], y[tr]).predict(X[te])
        np.testing.assert_allclose(t.loc[te, "score"], pred, rtol=1e-7, atol=1e-9)


def test_leave_one_chromosome_out_and_indels(tmp_path):
    from geneb.tasks.variants import load_variant_task
    from geneb.tasks.windows import make_windows
    from geneb.vep.folds import genomic_folds, window_extents

    rng = np.random.default_rng(3)
    seqs = {c: "".join(rng.choice(list("ACGT"), 400)) for c in ("chrA", "chrB", "chrC")}
    (tmp_path / "reference.fa").write_text("".join(f">{c}\n{s}\n" for c, s in seqs.items()))
    rows = []
    for c, s in seqs.items():
        for pos in (50, 60, 200, 330):
            rows.append({"chrom": c, "pos": pos, "ref": s[pos - 1], "alt":
                         next(b for b in "ACGT" if b != s[pos - 1]), "label": pos % 20 == 0})
        rows.append({"chrom": c, "pos": 300, "ref": s[299:305], "alt": s[299], "label": 1})
    df = pd.DataFrame(rows)
    df["label"] = df["label"].astype(int)
    df.to_csv(tmp_path / "variants.csv", index=False)
    vt = load_variant_task(tmp_path)
    win = make_windows(vt, 40)
    fold, scheme = genomic_folds(vt, win)
    assert scheme == "chromosome"
    assert fold.tolist() == [k for k in range(3) for _ in range(5)]
    _, _, end = window_extents(vt, win)
    assert end[4] == 299 + 6 + 20 - 1  # the deletion's alternate window reads 5 more bases
    with pytest.raises(GenebError, match="leave-one-chromosome-out"):
        genomic_folds(vt, win, 3)
    # end to end: one probe per held-out chromosome, every variant scored out of fold
    from sklearn.linear_model import LogisticRegression

    from geneb.models.registry import get_embedder
    from geneb.vep.probe_run import probe_variants

    t = probe_variants(vt, "kmer-2", window=40, Cs=[1.0], features=["diff"])
    assert (t["folds"] == "chromosome").all() and t["fold"].tolist() == fold.tolist()
    emb = get_embedder("kmer-2")
    X = (np.asarray(emb.embed(list(win.alt_windows)), np.float64)
         - np.asarray(emb.embed(win.ref_windows), np.float64)[win.ref_id])
    y = df["label"].to_numpy()
    for f in range(3):
        clf = LogisticRegression(C=1.0, tol=1e-12, max_iter=100_000).fit(X[fold != f],
                                                                        y[fold != f])
        np.testing.assert_allclose(t.loc[fold == f, "score"],
                                   clf.predict_proba(X[fold == f])[:, 1], atol=1e-6)


def _run(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, ["vep", *args])
    return res.exit_code, " ".join(res.output.split())


@pytest.mark.slow  # ~11 s alone, over 20 s on the shared machine under load
def test_cli_tiny_model_beside_zero_shot(brca1, models_dir, tmp_path):
    model = str(models_dir / "tiny-lm" / "tiny-bert-char-mlm")
    store, out = str(tmp_path / "s.zarr"), tmp_path / "p.parquet"
    common = ["--task", brca1, "--model", model, "--window", str(W), "--limit", "800",
              "--store", store]
    code, text = _run("score", *common, "--scorer", "cosine", "--out", str(tmp_path / "z.csv"))
    assert code == 0, text
    code, text = _run("probe", *common, "--folds", "3", "--out", str(out))
    assert code == 0, text
    assert "windows embedded 0" in text  # every window read back from `vep score`
    t = pd.read_parquet(out)
    for col in ("chrom", "pos", "label", "fold", "window", "score", "status", "C"):
        assert col in t
    assert len(t) == 1600 and set(t["scorer"]) == {"probe-diff", "probe-concat"}
    assert t["score"].between(0, 1).all() and set(t["fold"]) == {0, 1, 2}
    code, text = _run("evaluate", str(out), str(tmp_path / "z.csv"), "--n-boot", "100")
    assert code == 0, text
    for s in ("cosine", "probe-diff", "probe-concat"):
        assert s in text


def test_cli_refusals(brca1, tmp_path):
    out = tmp_path / "x.parquet"
    code, text = _run("probe", "--task", brca1, "--model", "kmer-3", "--window", str(W),
                      "--limit", "300", "--out", str(out))
    assert code == 2 and "only 1 block(s)" in text and not out.exists()
    code, text = _run("probe", "--task", brca1, "--model", "kmer-3", "--features", "sum",
                      "--limit", "300", "--out", str(out))
    assert code == 2 and "--features: expected one of 'diff', 'concat', got 'sum'" in text
    code, text = _run("probe", "--task", brca1, "--model", "kmer-3", "--window", str(W),
                      "--limit", "400", "--folds", "2", "--out", str(out))
    assert code == 2 and "needs at least 3 folds" in text and not out.exists()
