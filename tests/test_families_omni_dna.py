"""Omni-DNA on its own package (``ai2-olmo``'s ``hf_olmo``), through ``geneb.get_embedder``,
``geneb.extract``, ``geneb run`` and ``geneb vep score``.

The model is a tiny random-weight configuration built here with the package's own classes
(``OLMoConfig``, ``OLMoForCausalLM``, ``OLMoTokenizerFast`` on a small BPE vocabulary trained on
real sequences), as the GPN fixture is. References are computed one sequence at a time with
the package itself, following GENEB's Omni-DNA extractor (``AutoModelForCausalLM``,
``hidden_states[-1]``, mean over the real tokens); every row within 1e-4 of its row maximum.
"""

from __future__ import annotations

import csv
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
from test_families import TF_MAJOR, assert_rows_close, real_sequences
from test_families_packages import run_plan_cli, vep_score_cli
from test_run_real_model import capped_task

import geneb

pytestmark = pytest.mark.families
torch = pytest.importorskip("torch")

OLMO_MISSING = (
    "hf_olmo is not importable: pip install -e '.[test]' brings what it imports, then "
    "pip install --no-deps ai2-olmo==0.6.0 (as .ci/run does)"
)


def build_tiny_omni_dna(out: Path, data_dir: Path) -> Path:
    """A tiny Omni-DNA/OLMo (d_model 32, 2 layers, 4 heads, RoPE, SwiGLU), random weights,
    saved with the package's ``save_pretrained``; its BPE vocabulary (64 tokens) is trained on
    200 real sequences (also used by benchmarks/families.py)."""
    import hf_olmo
    from tokenizers import Tokenizer, models, trainers

    with open(data_dir / "dhs_idhs_fflg" / "train.csv", newline="") as f:
        corpus = [r["sequence"] for _, r in zip(range(200), csv.DictReader(f), strict=False)]
    bpe = Tokenizer(models.BPE(unk_token="<|unk|>"))
    specials = ["<|padding|>", "<|endoftext|>", "<|unk|>"]
    bpe.train_from_iterator(corpus, trainers.BpeTrainer(
        vocab_size=64, special_tokens=specials, initial_alphabet=list("ACGTN")))
    tok = hf_olmo.OLMoTokenizerFast(
        tokenizer_object=bpe, pad_token="<|padding|>", eos_token="<|endoftext|>",
        unk_token="<|unk|>", model_max_length=250,  # the family card's context (catalogue)
    )
    cfg = hf_olmo.OLMoConfig(
        d_model=32, n_heads=4, n_layers=2, mlp_ratio=2, vocab_size=len(tok),
        embedding_size=len(tok), max_sequence_length=512, rope=True, weight_tying=False,
        include_bias=False, pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id,
        init_device="cpu",
    )
    torch.manual_seed(0)
    model = hf_olmo.OLMoForCausalLM(cfg, init_params=True)
    with torch.no_grad():  # no layer an identity (LayerNorm ones)
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.05)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


@pytest.fixture(scope="session")
def omni_dna_model(tmp_path_factory: pytest.TempPathFactory, data_dir: Path) -> Path:
    if importlib.util.find_spec("hf_olmo") is None:
        pytest.fail(OLMO_MISSING)
    return build_tiny_omni_dna(tmp_path_factory.mktemp("omni") / "omni-dna-tiny", data_dir)


def package_model(path: Path) -> tuple[object, object]:
    """The package's own tokenizer and causal LM, loaded without geneb."""
    import hf_olmo

    tok = hf_olmo.OLMoTokenizerFast.from_pretrained(path)
    return tok, hf_olmo.OLMoForCausalLM.from_pretrained(path).eval()


def omni_dna_reference(path: Path, seqs: list[str]) -> np.ndarray:
    """GENEB's Omni-DNA recipe, one sequence at a time: ``hidden_states[-1]`` of the causal LM,
    mean over the sequence's tokens (one sequence: every token is real)."""
    tok, model = package_model(path)
    rows = []
    with torch.no_grad():
        for s in seqs:
            enc = tok(s, return_tensors="pt")
            out = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                        output_hidden_states=True)
            rows.append(out.hidden_states[-1][0].float().mean(dim=0).numpy())
    return np.stack(rows)


def test_omni_dna_embeddings_equal_the_recipe(omni_dna_model: Path, data_dir: Path) -> None:
    seqs = real_sequences(data_dir)
    if TF_MAJOR >= 5:  # measured (5.24): the package's classes fail to load, so geneb refuses
        from geneb.errors import ModelError
        from geneb.models.model_code import MEASURED_TRANSFORMERS

        with pytest.raises(ModelError) as e:
            geneb.get_embedder(str(omni_dna_model), device="cpu")
        msg = str(e.value)
        assert "\n" not in msg and MEASURED_TRANSFORMERS in msg and "transformers 5." in msg
        return
    emb = geneb.get_embedder(str(omni_dna_model), device="cpu")
    got = emb.embed(seqs)  # one call: mixed lengths share batches as the self-test allows
    assert_rows_close(got, omni_dna_reference(omni_dna_model, seqs))
    assert emb.batch_policy.mode == "padded", emb.batch_policy  # measured: it honours the mask
    assert emb.info.model_type == "hf_olmo" and emb.info.pooling == "mean"


def test_omni_dna_needs_no_remote_code(omni_dna_model: Path) -> None:
    from geneb.models.trust import custom_code_reasons

    assert custom_code_reasons(omni_dna_model, "omni-dna-tiny") == []


def test_omni_dna_without_the_package_is_one_line(
    omni_dna_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In process (the CLI's one-line translation of a ModelError is the same for every
    package family: tests/test_families_packages.py runs it through ``geneb extract``)."""
    from geneb.errors import ModelError

    monkeypatch.setitem(sys.modules, "hf_olmo", None)  # as if not installed
    store = tmp_path / "store.zarr"
    with pytest.raises(ModelError) as e:
        geneb.extract(store=store, models=[str(omni_dna_model)], tasks=["syn_cpg_island"])
    line = str(e.value)
    assert "\n" not in line, line
    assert "'ai2-olmo' package" in line and "pip install 'geneb[omni-dna]'" in line, line
    assert "--no-deps ai2-olmo==0.6.0" in line, line
    assert not store.exists()


def test_omni_dna_catalogue_names_need_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--model Omni-DNA-1B`` (catalogue: needs ai2-olmo) is checked by its module, hf_olmo,
    and refused without it with the line that installs it (not ``pip install ai2-olmo``)."""
    from geneb.errors import ModelError
    from geneb.models.registry import check_spec

    check_spec("Omni-DNA-1B")
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(ModelError) as e:
        check_spec("Omni-DNA-1B")
    assert str(e.value).endswith(
        "needs the package(s) ai2-olmo: pip install 'geneb[omni-dna]' && "
        "pip install --no-deps ai2-olmo==0.6.0"), str(e.value)


def test_omni_dna_extract_and_run(omni_dna_model: Path, data_dir: Path, tmp_path: Path) -> None:
    """``geneb.extract`` (the library function ``geneb extract`` calls: token-budget batches
    into a store) equals the package one sequence at a time; then ``geneb run`` (extraction,
    probes, results) on the same 40-row real task."""
    task = capped_task(data_dir, "dhs_idhs_fflg", 10, tmp_path / "tasks")
    store = tmp_path / "x.zarr"
    geneb.extract(str(store), [str(omni_dna_model)], [str(task)], ("test",), batch_tokens=512)
    stored = geneb.read_entry(str(store), "omni-dna-tiny", "dhs_idhs_fflg_capped", "test")
    seqs = list(geneb.load_task(str(task)).split("test").sequences)
    assert_rows_close(np.asarray(stored.embeddings), omni_dna_reference(omni_dna_model, seqs))
    run_plan_cli("omni-dna", omni_dna_model, task, tmp_path)


def test_omni_dna_vep_score(omni_dna_model: Path, models_dir: Path, tmp_path: Path) -> None:
    """Embedding scorers and the causal-LM llr (its head found from the model)."""
    df = vep_score_cli(omni_dna_model, models_dir, tmp_path)
    llr = df[df["scorer"] == "llr"]
    assert sorted(df["scorer"].unique()) == ["cosine", "l2", "llr"]
    assert (df[df["scorer"] != "llr"]["status"] == "ok").all()
    assert (llr["status"] == "ok").any(), llr["status"].value_counts()  # BPE: some may move


def test_omni_dna_llr_equals_the_package_log_likelihood(
    omni_dna_model: Path, data_dir: Path
) -> None:
    """geneb's causal LLR = LL(alt window) - LL(ref window), each the sum over tokens t >= 1 of
    log p(token_t | tokens_<t), computed here with the package's tokenizer and causal LM."""
    from geneb.models.packages import register_package_model_type
    from geneb.tasks.windows import OK, Windows
    from geneb.vep.capabilities import detect
    from geneb.vep.likelihood import LMScorer
    from geneb.vep.scorers import llr_scores

    register_package_model_type("hf_olmo", "omni-dna-tiny")
    caps = detect(str(omni_dna_model), device="cpu")
    assert "causal_lm" in caps.heads, caps.describe()
    model, tok = caps.heads["causal_lm"]
    ref = next(s for s in real_sequences(data_dir) if len(s) >= 64)[:64]
    half = 32
    alts = [b for b in "ACGT" if b != ref[half]]
    win = Windows(
        window=64, status=np.array([OK] * 3, dtype=object), ref_id=np.zeros(3, dtype=np.int64),
        ref_windows=[ref], alt_windows=[ref[:half] + b + ref[half + 1:] for b in alts],
        ref_keys=[(0, 0)],
    )
    alleles = [(ref[half], b) for b in alts]
    score, status = llr_scores(LMScorer(model, tok, "causal_lm", "cpu", 4096), win, alleles)
    assert list(status) == [OK] * 3
    ptok, pmodel = package_model(omni_dna_model)

    def log_likelihood(seq: str) -> float:
        ids = ptok(seq, return_tensors="pt")["input_ids"]
        with torch.no_grad():
            lp = torch.log_softmax(pmodel(input_ids=ids).logits[0].double(), dim=-1)
        return float(lp[:-1].gather(-1, ids[0, 1:, None]).sum())

    hand = [log_likelihood(a) - log_likelihood(ref) for a in win.alt_windows]
    assert np.abs(hand).max() > 1e-4  # the alleles are told apart
    np.testing.assert_allclose(score, hand, rtol=1e-5, atol=1e-5)
