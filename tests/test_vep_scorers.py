"""VEP scorers against independent computations on real BRCA1 windows (numpy, direct transformers
calls), capability detection and the headless-model refusal, batch invariance."""

from __future__ import annotations

from itertools import product
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from geneb.errors import ModelError
from geneb.tasks.variants import load_variant_task
from geneb.vep.runner import ScoreRun, score_variants

W = 256
N = 24  # variants: the first rows of the task (9 distinct positions)
FIRST = 41176312  # the reference record's first coordinate (README of the task)


@pytest.fixture(scope="module")
def brca1(models_dir: Path) -> Path:
    p = models_dir.parent / "variants" / "brca1_findlay2018"
    if not p.is_dir():
        pytest.skip(f"BRCA1 task not found at {p}")
    return p


@pytest.fixture(scope="module")
def raw(brca1: Path) -> tuple[pd.DataFrame, str]:
    seq = "".join(
        line.strip() for line in open(brca1 / "reference.fa") if not line.startswith(">")
    )
    return pd.read_csv(brca1 / "variants.csv").iloc[:N], seq


def _windows(raw: tuple[pd.DataFrame, str], w: int = W) -> list[tuple[str, str]]:
    """The Evo 2 windows, built directly from the README's coordinates."""
    df, seq = raw
    out = []
    for pos, ref, alt in zip(df["pos"], df["ref"], df["alt"], strict=True):
        p = pos - FIRST
        r = seq[p - w // 2 : p + w // 2]
        assert r[w // 2] == ref
        out.append((r, r[: w // 2] + alt + r[w // 2 + 1 :]))
    return out


def _spectrum(s: str, k: int) -> np.ndarray:
    idx = {"".join(t): i for i, t in enumerate(product("ACGT", repeat=k))}
    v = np.zeros(4**k)
    for i in range(len(s) - k + 1):
        if s[i : i + k] in idx:
            v[idx[s[i : i + k]]] += 1
    return v / max(1, v.sum())


def test_kmer_distances_match_numpy_spectra(brca1, raw):
    df = score_variants(brca1, "kmer-3", ["cosine", "l2"], window=W, limit=N)
    assert len(df) == 2 * N and (df["status"] == "ok").all()
    exp_cos, exp_l2 = [], []
    for r, a in _windows(raw):
        er, ea = _spectrum(r, 3), _spectrum(a, 3)
        exp_cos.append(1 - er @ ea / np.linalg.norm(er) / np.linalg.norm(ea))
        exp_l2.append(np.linalg.norm(er - ea))
    got = df.set_index("scorer")
    np.testing.assert_allclose(got.loc["cosine", "score"], exp_cos, rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(got.loc["l2", "score"], exp_l2, rtol=1e-5, atol=1e-8)
    assert (got.loc["l2", "score"] > 0).all()
    assert list(df["orientation"].unique()) == ["higher=label1"]


def _direct_causal_ll(model, tok, text: str) -> float:
    import torch

    ids = tok(text, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        lp = torch.log_softmax(model(input_ids=ids).logits.double(), -1)[0]
    return float(lp[:-1].gather(-1, ids[0, 1:, None]).sum())


def test_causal_llr_matches_direct_transformers(brca1, raw, models_dir):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = models_dir / "tiny-lm" / "tiny-llama-char-clm"
    run = ScoreRun()
    df = score_variants(brca1, str(path), ["llr"], window=W, limit=N, run=run)
    assert (df["status"] == "ok").all() and (df["head"] == "causal_lm").all()
    # one forward per distinct reference window plus one per allele
    assert run.sequences == raw[0]["pos"].nunique() + N
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path).eval()
    exp = [_direct_causal_ll(model, tok, a) - _direct_causal_ll(model, tok, r)
           for r, a in _windows(raw)]
    np.testing.assert_allclose(df["score"], exp, rtol=0, atol=1e-5)
    assert df["score"].abs().max() > 1e-3  # not trivially zero
    assert (df["orientation"] == "lower=label1").all()


def _direct_masked(model, tok, ref_win: str, alt_win: str, k: int) -> float:
    """log p(alt token) - log p(ref token) at token k of the masked reference window."""
    import torch

    ids = tok(ref_win, return_tensors="pt")["input_ids"]
    alt_ids = tok(alt_win, return_tensors="pt")["input_ids"]
    masked = ids.clone()
    masked[0, k] = tok.mask_token_id
    with torch.no_grad():
        lp = torch.log_softmax(model(input_ids=masked).logits.double(), -1)[0, k]
    return float(lp[alt_ids[0, k]] - lp[ids[0, k]])


@pytest.mark.parametrize(
    ("folder", "token_of_variant"),
    [
        ("tiny-bert-char-mlm", lambda half: 1 + half),  # [CLS] then one token per base
        ("tiny-esm-nt-6mer-mlm", lambda half: 1 + half // 6),  # <cls> then 6-mers from base 0
    ],
)
def test_masked_marginal_matches_direct_transformers(brca1, raw, models_dir, folder,
                                                     token_of_variant):
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    path = models_dir / "tiny-lm" / folder
    run = ScoreRun()
    df = score_variants(brca1, str(path), ["llr"], window=W, limit=N, run=run)
    assert (df["status"] == "ok").all() and (df["head"] == "masked_lm").all()
    # one forward per distinct position serves all its alleles
    assert run.sequences == raw[0]["pos"].nunique()
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForMaskedLM.from_pretrained(path).eval()
    k = token_of_variant(W // 2)
    wins = _windows(raw)
    if folder.startswith("tiny-esm"):  # the 6-mer holding the variant really is token k
        ids = tok(wins[0][0])["input_ids"]
        assert tok.convert_ids_to_tokens(ids[k]) == wins[0][0][(k - 1) * 6 : k * 6]
    exp = [_direct_masked(model, tok, r, a, k) for r, a in wins]
    np.testing.assert_allclose(df["score"], exp, rtol=0, atol=1e-5)
    assert df["score"].abs().max() > 1e-3


def test_scores_do_not_depend_on_batch(brca1, models_dir):
    path = str(models_dir / "tiny-lm" / "tiny-llama-char-clm")
    batched = score_variants(brca1, path, ["llr"], window=W, limit=12, batch_tokens=1 << 20)
    alone = score_variants(brca1, path, ["llr"], window=W, limit=12, batch_tokens=1)
    np.testing.assert_allclose(batched["score"], alone["score"], rtol=0, atol=1e-6)
    mlm = str(models_dir / "tiny-lm" / "tiny-bert-char-mlm")
    b = score_variants(brca1, mlm, ["llr", "cosine"], window=W, limit=12, batch_tokens=1 << 20)
    a = score_variants(brca1, mlm, ["llr", "cosine"], window=W, limit=12, batch_tokens=1)
    np.testing.assert_allclose(b["score"], a["score"], rtol=1e-6, atol=1e-9)


def test_headless_model_refused_listing_what_it_supports(brca1, models_dir, tmp_path):
    path = models_dir / "tiny" / "tiny-bert-dnabert2-bpe"
    with pytest.raises(ModelError, match=r"cannot run scorer='llr'.*supports: embeddings"):
        score_variants(brca1, str(path), ["llr", "cosine"], window=W, limit=3,
                       store=tmp_path / "s.zarr")
    assert not (tmp_path / "s.zarr").exists()  # refused before anything was written


def test_capabilities_from_the_model(models_dir):
    from geneb.vep.capabilities import detect

    lm = models_dir / "tiny-lm"
    assert detect(str(lm / "tiny-llama-char-clm")).kinds == ["embeddings", "causal_lm"]
    # BERT maps to a causal class too (BertLMHeadModel) whose weights load: not a causal LM
    assert detect(str(lm / "tiny-bert-char-mlm")).kinds == ["embeddings", "masked_lm"]
    caps = detect(str(models_dir / "tiny" / "tiny-esm-nt-6mer"))
    assert caps.kinds == ["embeddings"] and "not in the checkpoint" in caps.describe()
    assert detect("kmer-4").scorers == ["cosine", "l2"]


def test_load_variant_task_windows_match_readme(brca1, raw):
    from geneb.tasks.windows import make_windows

    vt = load_variant_task(brca1)
    assert len(vt) == 3893 and vt.has_score
    win = make_windows(vt, W)
    sub = _windows(raw)
    for i in range(N):
        assert (win.ref_of(i), win.alt_windows[i]) == sub[i]
    assert len({win.ref_id[i] for i in range(N)}) == raw[0]["pos"].nunique() == 9
