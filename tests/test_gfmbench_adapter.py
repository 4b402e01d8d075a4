"""geneb.as_gfmbench_model (issue 34.2, 34.4): kmer-3, a tiny masked LM, a tiny causal LM and
the real HyenaDNA (its own code, trust_remote_code=True given here) behind GFMBench-API's five
methods, each called with shape checks; the numbers equal geneb's embedder and scorers and
plain transformers computed here."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import geneb

pytest.importorskip("transformers")
SEQS = ["ACGTACGTAAGGCCTTGATC" * 2, "TTGCAACGTAGCTAGCCATG" * 2, "GGGTTTAAACCCGTGTACAT" * 2]
POS = 17


def _shape_contract(m, seqs, *, probs, emb):
    """Every GFMBench method called; shapes as base_gfm_model.py says (None where said)."""
    p, e, r = m.infer_sequence_to_sequence(seqs, None)
    assert r.ndim == 2 and r.shape[0] == len(seqs)
    assert (p is None) != probs and (e is None) != emb
    if p is not None:
        assert p.shape[0] == len(seqs) and ((p >= 0) & (p <= 1)).all()
    if e is not None:
        assert e.ndim == 3 and e.shape[0] == len(seqs)
    pos = m.sequence_pos_to_prob_pos(seqs, POS)
    assert pos.shape == (len(seqs),) and pos.dtype.kind == "i"
    assert m.infer_sequence_to_labels_probs(seqs, None) is None
    assert m.infer_variant_ref_sequences_to_labels_probs(seqs, seqs, None) is None
    return p, e, r, pos


def test_kmer3(tmp_path):
    m = geneb.as_gfmbench_model("kmer-3")
    p, e, r, pos = _shape_contract(m, SEQS, probs=False, emb=False)
    np.testing.assert_array_equal(r, geneb.get_embedder("kmer-3").embed(SEQS))
    assert (pos == -1).all()
    assert m.infer_masked_sequence_to_token_probs(SEQS, POS, ["A"] * 3, ["C"] * 3) == (None,
                                                                                       None)
    assert "no language-model head" in m.notes["sequence_probs"]


def test_kmer3_through_task_evaluate_equals_the_embedder():
    task = geneb.load_task("syn_promoter_tata")
    via = task.evaluate(geneb.as_gfmbench_model("kmer-3"))
    own = task.evaluate(geneb.get_embedder("kmer-3"))
    for k in ("mcc", "accuracy", "auroc"):
        assert via[k] == pytest.approx(own[k], abs=1e-12)


@pytest.fixture(scope="module")
def tiny_mlm(models_dir: Path) -> str:
    p = models_dir / "tiny-lm" / "tiny-bert-char-mlm"
    if not p.is_dir():
        pytest.skip(f"{p} not found")
    return str(p)


def test_tiny_masked_lm(tiny_mlm):
    import torch
    from transformers import AutoModel, AutoModelForMaskedLM, AutoTokenizer

    m = geneb.as_gfmbench_model(tiny_mlm, device="cpu")
    p, e, r, pos = _shape_contract(m, SEQS, probs=False, emb=True)
    np.testing.assert_allclose(r, geneb.get_embedder(tiny_mlm, device="cpu").embed(SEQS),
                               atol=1e-6)
    tok = AutoTokenizer.from_pretrained(tiny_mlm)
    base = AutoModel.from_pretrained(tiny_mlm).eval()
    mlm = AutoModelForMaskedLM.from_pretrained(tiny_mlm).eval()
    assert e.shape == (3, len(SEQS[0]), base.config.hidden_size)
    assert (pos == POS).all()  # one character token per base, [CLS] removed
    for i, s in enumerate(SEQS):  # one unpadded sequence at a time: [CLS] s [SEP]
        ids = torch.tensor([tok(s)["input_ids"]])
        with torch.no_grad():
            h = base(input_ids=ids).last_hidden_state[0, 1:-1].numpy()
        np.testing.assert_allclose(e[i], h, atol=1e-5)
    alt = ["G", "T", "A"]
    ref = [s[POS] for s in SEQS]
    pv, pr = m.infer_masked_sequence_to_token_probs(SEQS, POS, alt, ref)
    assert pv.shape == pr.shape == (3,)
    for i, s in enumerate(SEQS):
        ids = torch.tensor([tok(s)["input_ids"]])
        ids[0, POS + 1] = tok.mask_token_id
        with torch.no_grad():
            sm = torch.softmax(mlm(input_ids=ids).logits[0, POS + 1].double(), -1)
        want = [sm[tok.convert_tokens_to_ids(x)].item() for x in (alt[i], ref[i])]
        np.testing.assert_allclose([pv[i], pr[i]], want, rtol=1e-5)


def test_tiny_masked_lm_equals_genebs_llr_scores(tiny_mlm, brca1_folder):
    """log p_variant - log p_reference on the alternate windows = geneb's masked-marginal LLR
    (geneb.vep.score_variants, scorer llr) of the same variants."""
    from geneb.tasks.variants import load_variant_task
    from geneb.tasks.windows import make_windows
    from geneb.vep.runner import score_variants

    folder = brca1_folder
    w, n = 32, 24
    scores = score_variants(str(folder), tiny_mlm, ["llr"], window=w, limit=n, device="cpu")
    vt = load_variant_task(str(folder))
    win = make_windows(vt, w)
    t = vt.table.iloc[:n]
    alts = [win.alt_windows[i] for i in range(n)]
    m = geneb.as_gfmbench_model(tiny_mlm, device="cpu")
    pv, pr = m.infer_masked_sequence_to_token_probs(alts, w // 2, list(t["alt"]),
                                                    list(t["ref"]))
    want = scores["score"].to_numpy()[:n]
    assert np.isfinite(want).all() and (scores["status"] == "ok").all()
    np.testing.assert_allclose(np.log(pv) - np.log(pr), want, atol=1e-5)


def test_tiny_causal_lm_sequence_probs(models_dir):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = models_dir / "tiny-lm" / "tiny-llama-char-clm"
    if not path.is_dir():
        pytest.skip(f"{path} not found")
    m = geneb.as_gfmbench_model(str(path), device="cpu")
    p, e, r, pos = _shape_contract(m, SEQS, probs=True, emb=True)
    tok = AutoTokenizer.from_pretrained(str(path))
    lm = AutoModelForCausalLM.from_pretrained(str(path)).eval()
    for i, s in enumerate(SEQS):  # s then [SEP]: content tokens are 0..len(s)-1
        ids = tok(s)["input_ids"]
        with torch.no_grad():
            lp = torch.log_softmax(lm(input_ids=torch.tensor([ids])).logits[0].double(), -1)
        want = [1.0] + [lp[t - 1, ids[t]].exp().item() for t in range(1, len(s))]
        np.testing.assert_allclose(p[i], want, rtol=1e-5)
    assert m.infer_masked_sequence_to_token_probs(SEQS, POS, ["A"] * 3, ["C"] * 3) == (None,
                                                                                       None)


def test_real_hyenadna(models_dir):
    import torch
    from transformers import AutoModel, AutoTokenizer

    path = models_dir / "real" / "hyenadna-tiny-1k-anticapt"
    if not path.is_dir():
        pytest.skip(f"{path} not found")
    m = geneb.as_gfmbench_model(str(path), device="cpu", trust_remote_code=True)
    p, e, r, pos = _shape_contract(m, SEQS, probs=False, emb=True)
    emb = geneb.get_embedder(str(path), device="cpu", trust_remote_code=True)
    np.testing.assert_allclose(r, emb.embed(SEQS), atol=1e-6)
    tok = AutoTokenizer.from_pretrained(str(path), trust_remote_code=True)
    model = AutoModel.from_pretrained(str(path), trust_remote_code=True).eval()
    assert e.shape == (3, len(SEQS[0]), 128) and (pos == POS).all()
    for i, s in enumerate(SEQS):  # unpadded, one at a time (the Hyena operator sees padding)
        ids = tok(s)["input_ids"]
        with torch.no_grad():
            out = model(input_ids=torch.tensor([ids]))
        h = (out.last_hidden_state if hasattr(out, "last_hidden_state") else out[0])[0]
        np.testing.assert_allclose(e[i], h[: len(s)].numpy(), atol=1e-5)
    assert "head weights not in the checkpoint" in m.notes["sequence_probs"]
    assert m.infer_masked_sequence_to_token_probs(SEQS, POS, ["A"] * 3, ["C"] * 3) == (None,
                                                                                       None)


def test_kmer3_through_a_zero_shot_task_equals_the_embedder(brca1_folder):
    task = geneb.load_task(str(brca1_folder), window=64)
    via = task.evaluate(geneb.as_gfmbench_model("kmer-3"))
    own = task.evaluate(geneb.get_embedder("kmer-3"))
    for k in ("cosine_auroc", "l2_auprc", "cosine_spearman"):
        assert via[k] == pytest.approx(own[k], abs=1e-12)
    # GFMBench's name by GFMBench's formula (-cos, eps 1e-10 on the norms), as its metric
    # class computes it: k-mer spectra tie often, and the two formulas round ties apart
    from sklearn.metrics import roc_auc_score

    win, ok = task.windows, task.ok_rows()
    e = geneb.get_embedder("kmer-3")
    r = e.embed([win.ref_windows[j] for j in win.ref_id[ok]]).astype(np.float64)
    a = e.embed([win.alt_windows[i] for i in ok]).astype(np.float64)
    r /= np.linalg.norm(r, axis=1, keepdims=True) + 1e-10
    a /= np.linalg.norm(a, axis=1, keepdims=True) + 1e-10
    y = task.variants.table["label"].to_numpy()[ok]
    assert via["sequence_embeddings_cosinesim_auroc"] == pytest.approx(
        roc_auc_score(y, -(a * r).sum(1)), abs=1e-12)
    assert via["sequence_embeddings_l2_auroc"] == via["l2_auroc"]
    assert "returned None" in via["skipped"]["infer_sequence_to_sequence.sequence_probs"]
    assert "returned (None, None)" in via["skipped"]["infer_masked_sequence_to_token_probs"]


def test_spaced_kmer_input_has_no_per_position_outputs(models_dir):
    """DNABERT-1 is given spaced overlapping 6-mers: its tokens are not spans of the sequence,
    so no per-position output is made up (None and -1, said in notes)."""
    path = models_dir / "tiny" / "tiny-bert-dnabert1-6mer"
    if not path.is_dir():
        pytest.skip(f"{path} not found")
    m = geneb.as_gfmbench_model(str(path), device="cpu")
    p, e, r, pos = _shape_contract(m, SEQS, probs=False, emb=False)
    assert (pos == -1).all() and "kmer_overlap" in m.notes["sequence_embeddings"]
    np.testing.assert_allclose(r, geneb.get_embedder(str(path), device="cpu").embed(SEQS),
                               atol=1e-6)
