"""``--pooling`` and ``--layers`` against a direct transformers call on real tiny models.

The reference runs ``AutoModel`` with ``output_hidden_states=True`` on ONE sequence at a time
(no padding at all) and pools the hidden states with numpy; geneb embeds batches of mixed
lengths (padded on the model's side, and on both sides through the adapter's forward), long
sequences as windows, and several layers from one forward. Every row must lie within 1e-4
of its row's largest absolute value. The store/probe tests check that each layer is its own
entry, keyed and recorded in provenance, and that probes keep them apart.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
import transformers
from synthetic_tasks import make_task
from typer.testing import CliRunner

import geneb
from geneb.cli import app
from geneb.errors import GenebError, ModelError
from geneb.extract.runner import extract
from geneb.models.registry import get_embedder
from geneb.store import FeatureStore, layer_key
from geneb.vocabulary import POOLINGS

#: folder -> padding sides that leave its rows exact: its own side first (absolute positions
#: make BERT/ESM depend on left padding; the causal, rotary Llama takes either side)
MODELS = {
    "tiny-bert-dnabert2-bpe": ("right",),
    "tiny-llama-hyenadna-char": ("left", "right"),
    "tiny-esm-nt-6mer": ("right",),
}
LAYERS = [-1, 0, 1]  # the tiny models have hidden states 0..2
TINY = "tiny-bert-dnabert2-bpe"
_RNG = np.random.default_rng(7)
SEQS = ["".join(_RNG.choice(list("ACGT"), size=n)) for n in (7, 61, 12, 140, 33, 5, 90, 24)]


def _close(got: np.ndarray, want: np.ndarray, what: str) -> None:
    """Every row within 1e-4 of its row's largest absolute reference value."""
    assert got.shape == want.shape, what
    scale = np.abs(want).max(axis=1, keepdims=True)
    err = np.abs(got - want) / scale
    assert err.max() <= 1e-4, f"{what}: worst row error {err.max():.2e} of the row max"


class Reference:
    """The model through plain transformers, one sequence per forward, pooled by numpy."""

    def __init__(self, folder: Path) -> None:
        self.tok = transformers.AutoTokenizer.from_pretrained(folder)
        self.model = transformers.AutoModel.from_pretrained(folder, dtype=torch.float32).eval()
        self.special = set(self.tok.all_special_ids) - {self.tok.unk_token_id}
        self._cache: dict[tuple[int, ...], list[np.ndarray]] = {}

    def states(self, ids: list[int]) -> list[np.ndarray]:
        """hidden_states (each (T, D)) of one unpadded input (computed once per input)."""
        key = tuple(ids)
        if key not in self._cache:
            with torch.inference_mode():
                out = self.model(input_ids=torch.tensor([ids]), output_hidden_states=True)
            self._cache[key] = [h[0].float().numpy() for h in out.hidden_states]
        return self._cache[key]

    def pool(self, tokens: np.ndarray, ids: list[int], pooling: str) -> np.ndarray:
        if pooling == "mean":
            return tokens.mean(0)
        if pooling == "mean_nonspecial":
            return tokens[[i not in self.special for i in ids]].mean(0)
        if pooling == "cls":
            return tokens[0]
        if pooling == "last":
            return tokens[-1]
        assert pooling == "max"
        return tokens.max(0)

    def embed(self, seqs: list[str], pooling: str, layer: int) -> np.ndarray:
        rows = []
        for s in seqs:
            ids = self.tok(s)["input_ids"]
            rows.append(self.pool(self.states(ids)[layer], ids, pooling))
        return np.stack(rows)

    def embed_windows(self, seq: str, room: int, pooling: str, layer: int) -> np.ndarray:
        """A long sequence as windows of ``room`` content tokens, each framed as BERT frames
        an input ([CLS] .. [SEP]); pooled over the tokens of all windows together (mean,
        max), the first token of the first window (cls) or the last of the last."""
        body = self.tok(seq, add_special_tokens=False)["input_ids"]
        tokens, ids = [], []
        for a in range(0, len(body), room):
            w = [self.tok.cls_token_id, *body[a : a + room], self.tok.sep_token_id]
            tokens.append(self.states(w)[layer])
            ids += w
        return self.pool(np.concatenate(tokens), ids, pooling)


@pytest.fixture(scope="module")
def refs(models_dir: Path) -> dict[str, Reference]:
    return {m: Reference(models_dir / "tiny" / m) for m in MODELS}


@pytest.mark.parametrize("pooling", POOLINGS)
@pytest.mark.parametrize("model", list(MODELS))
def test_pooling_and_layers_equal_transformers(
    model: str, pooling: str, models_dir: Path, refs: dict[str, Reference]
) -> None:
    ref = refs[model]
    e = get_embedder(str(models_dir / "tiny" / model), device="cpu", pooling=pooling,
                     layers=LAYERS)  # fmt: skip
    assert e.info.pooling == pooling and e.info.extra["layers"] == LAYERS
    assert e.info.extra["padding_side"] == MODELS[model][0]
    items = e.prepare(SEQS)
    got = e.embed_prepared_layers(items)  # one padded batch of mixed lengths
    assert got.shape == (len(LAYERS), len(SEQS), e.dim)
    wins = [w for p in items for w in p.windows]
    for side in MODELS[model]:  # each exact padding side, whatever the self-test chose
        padded, _ = e._forward(wins, side)
        for i, layer in enumerate(LAYERS):
            want = ref.embed(SEQS, pooling, layer)
            _close(got[i], want, f"{model} {pooling} layer {layer}")
            _close(padded[i], want, f"{model} {pooling} layer {layer}, {side} padding")
    # the layers differ from each other (the entries are not copies)
    assert not np.allclose(got[0], got[1]) and not np.allclose(got[0], got[2])
    # a single-layer embedder (no --layers) pools the same way
    single = get_embedder(str(models_dir / "tiny" / model), device="cpu", pooling=pooling)
    _close(single.embed(SEQS), ref.embed(SEQS, pooling, -1), f"{model} {pooling} single")


@pytest.mark.parametrize("pooling", POOLINGS)
def test_windows_combine(pooling: str, models_dir: Path, refs: dict[str, Reference]) -> None:
    ref = refs[TINY]
    e = get_embedder(str(models_dir / "tiny" / TINY), device="cpu", pooling=pooling,
                     layers=[-1, 1], max_length=16, truncation="window")  # fmt: skip
    long_seqs = [SEQS[3] * 3, SEQS[1], SEQS[6] * 2]
    items = e.prepare(long_seqs)
    assert [len(p.windows) > 1 for p in items] == [True, False, True]
    got = e.embed_prepared_layers(items)
    for i, layer in enumerate([-1, 1]):
        want = np.stack([ref.embed_windows(s, 14, pooling, layer) for s in long_seqs])
        _close(got[i], want, f"{pooling} windows layer {layer}")
    assert e.info.extra["window_pooling"]


def test_layer_option_errors(models_dir: Path) -> None:
    folder = str(models_dir / "tiny" / TINY)
    with pytest.raises(ModelError, match="out of range: .*hidden states 0..2"):
        get_embedder(folder, device="cpu", layers=[-1, 5])
    with pytest.raises(ModelError, match="same hidden state twice"):
        get_embedder(folder, device="cpu", layers=[-1, 2])
    with pytest.raises(ModelError, match="lists 0 twice"):
        get_embedder(folder, device="cpu", layers=[0, 0])
    with pytest.raises(ModelError, match="not both"):
        get_embedder(folder, device="cpu", layer=1, layers=[0])
    with pytest.raises(ModelError, match="does not apply to model 'kmer-3'"):
        get_embedder("kmer-3", layers=[0])


@pytest.fixture(scope="module")
def task(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_task(tmp_path_factory.mktemp("data"), "syn_layers", 2, 40, 24, "promoters",
                     length=60)  # fmt: skip


def test_layers_are_entries_and_probe_apart(
    task: Path, models_dir: Path, refs: dict[str, Reference], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from geneb.store import entry_io

    monkeypatch.setattr(entry_io, "layout_for", lambda n, d, i: (8, 8))  # 8-row shards
    folder = str(models_dir / "tiny" / TINY)
    store = tmp_path / "store"

    def stop_after(k: int, calls: list):  # the runner's block callback: kill after k calls
        def hook(key, done, n):  # noqa: ANN001
            calls.append((str(key).split("/")[0], done))
            if len(calls) == k:
                raise KeyboardInterrupt

        return hook

    # a default extraction killed after its first block (16 of 40 train rows) ...
    with pytest.raises(KeyboardInterrupt):
        extract(store, folder, str(task), device="cpu", block_rows=16,
                on_block=stop_after(1, []))  # fmt: skip
    # ... then --layers from row 0 (the bare entry holds 16 verified rows and skips them,
    # @L0 starts empty), killed after the second block
    calls: list = []
    with pytest.raises(KeyboardInterrupt):
        extract(store, folder, str(task), layers=[-1, 0], device="cpu", block_rows=16,
                on_block=stop_after(3, calls))  # fmt: skip
    assert calls == [(TINY, 16), (f"{TINY}@L0", 16), (TINY, 32)]
    res = extract(store, folder, str(task), layers=[-1, 0], device="cpu", block_rows=16)
    keys = {str(r.key): r for r in res}
    assert set(keys) == {f"{m}/syn_layers/{s}" for m in (TINY, f"{TINY}@L0")
                         for s in ("train", "test")}  # fmt: skip
    for m in (TINY, f"{TINY}@L0"):  # both resumed from their own verified rows
        r = keys[f"{m}/syn_layers/train"]
        assert (r.action, r.rows_embedded) == ("resume", 8), r
    fs = FeatureStore(store)
    assert fs.verify() == []
    for s in ("train", "test"):
        seqs = [str(x) for x in geneb.load_task(task).split(s).sequences]
        for layer in (-1, 0):
            entry = geneb.read_entry(store, TINY, "syn_layers", s, layer=layer)
            assert entry.provenance.model_id == layer_key(TINY, layer)
            assert entry.provenance.layer == layer
            if layer != -1:  # (the bare entry was begun by the default extraction above)
                assert entry.provenance.extra["layers"] == [-1, 0]
                assert entry.provenance.extra["layers_of"] == TINY
            _close(np.asarray(entry.embeddings), refs[TINY].embed(seqs, "mean", layer),
                   f"stored {s} layer {layer}")  # fmt: skip
    with pytest.raises(GenebError, match="@L1"):  # never extracted: named, not guessed
        geneb.read_entry(store, TINY, "syn_layers", "train", layer=1)
    # the last layer of --layers IS the default entry: a plain extraction skips it
    again = extract(store, folder, str(task), device="cpu")
    assert [r.action for r in again] == ["skip", "skip"]
    from geneb.probe.engine import run_probes
    from geneb.results.table import ResultsTable

    run_probes(store, tmp_path / "results", shots=("full",), seeds=(13,), Cs=(1.0,), workers=1)
    rows = {r["model"]: r for r in ResultsTable(tmp_path / "results").read().to_pylist()}
    assert set(rows) == {TINY, f"{TINY}@L0"}  # one probe row per layer, told apart by key
    a, b = rows[TINY], rows[f"{TINY}@L0"]
    assert a["store_fingerprint"] != b["store_fingerprint"]
    assert a["auroc"] != b["auroc"]  # probes of different embeddings
    from geneb.analysis.report import build_report

    html = (build_report(tmp_path / "results", tmp_path / "report", n_boot=100)).read_text()
    assert f">{TINY}@L0<" in html and f">{TINY}<" in html  # two models in the report


def test_cli_and_plan_layers(task: Path, models_dir: Path, tmp_path: Path) -> None:
    folder = str(models_dir / "tiny" / TINY)
    store = tmp_path / "store"
    base = ["extract", "--store", str(store), "--model", folder, "--task", str(task),
            "--device", "cpu", "--split", "test"]  # fmt: skip
    cli = CliRunner()
    for bad, msg in ((["--layers", "0,0"], "lists 0 twice"),
                     (["--layer", "1", "--layers", "0"], "not both"),
                     (["--layers", "-1,x"], "--layers: expected an int"),
                     (["--layers", "9"], "out of range"),
                     (["--pooling", "attn"], "--pooling")):  # fmt: skip
        r = cli.invoke(app, base + bad)
        assert r.exit_code == 2, r.output
        assert msg in r.output and "Traceback" not in r.output
        assert not store.exists()  # refused before anything was written
    r = cli.invoke(app, [*base, "--layers=-1,1", "--pooling", "last"])
    assert r.exit_code == 0, r.output
    fs = FeatureStore(store)
    got = sorted((k.model, fs.get(k.model, k.task, k.split).provenance.layer)
                 for k in fs.keys(complete_only=True))  # fmt: skip
    assert got == [(TINY, -1), (f"{TINY}@L1", 1)]
    assert fs.get(f"{TINY}@L1", "syn_layers", "test").provenance.pooling == "last"

    from geneb.pipeline.execute import dry_run
    from geneb.pipeline.plan import load_plan

    plan = tmp_path / "plan.toml"
    plan.write_text(
        f'store = "{store}"\nout = "{tmp_path / "out"}"\n[[models]]\nmodel = "{folder}"\n'
        f'pooling = "last"\nlayers = [-1, 1, 0]\n[tasks]\nfolders = ["{task}"]\n'
    )
    lines = dry_run(load_plan(plan)).lines()
    assert f"extract {TINY}@L1 / syn_layers / test: skip (complete)" in lines
    assert f"extract {TINY}@L0 / syn_layers / test: extract" in lines
    text = plan.read_text()
    plan.write_text(text.replace("[-1, 1, 0]", "[1, 1]"))
    with pytest.raises(GenebError, match="lists 1 twice"):
        dry_run(load_plan(plan))
    plan.write_text(text.replace("[-1, 1, 0]", '[-1, "last"]'))
    with pytest.raises(GenebError, match=r"layers\[1\]: expected an int, got 'last'"):
        load_plan(plan)


def test_wrapper_hiding_layers_is_refused(
    task: Path, models_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An embedder that wraps the model (as --strands both does) and does not pass the layers
    on would store one layer under every key: refused before the store exists."""
    import geneb.extract.runner as runner_mod

    class Wrapper:
        def __init__(self, inner) -> None:  # noqa: ANN001
            self.inner, self.name, self.dim, self.info = inner, inner.name, inner.dim, inner.info

        def embed(self, seqs):  # noqa: ANN001, ANN202
            return self.inner.embed(seqs)

    real = runner_mod.get_embedder
    monkeypatch.setattr(runner_mod, "get_embedder", lambda spec, **o: Wrapper(real(spec, **o)))
    store = tmp_path / "store"
    with pytest.raises(ModelError, match="does not extract several layers"):
        extract(store, str(models_dir / "tiny" / TINY), str(task), layers=[-1, 0], device="cpu")
    assert not store.exists()
