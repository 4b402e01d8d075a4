"""Batch invariance: every stored row equals the same sequence embedded alone.

The real HyenaDNA checkpoint ignores ``attention_mask`` and pads on the left, so a padded
batch changes most rows; geneb must measure that at load time and batch it so that no row
depends on its batch-mates. References are independent: a direct
``AutoModel.from_pretrained(..., trust_remote_code=True)`` forward of one unpadded sequence
at a time, mean over its tokens. Models built here cover the other two policies
(equal-length-only batches, one sequence per forward).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from custom_bert import custom_bert
from typer.testing import CliRunner

from geneb.cli import app
from geneb.extract.batching import token_budget_batches
from geneb.extract.runner import extract
from geneb.models.registry import get_embedder
from geneb.models.selftest import generic_policy, row_errors
from geneb.store import FeatureStore
from geneb.tasks.folders import resolve_task
from geneb.tasks.spec import SplitData, Task, TaskSpec, split_fingerprint
from tests.runner_batches import embed_bucketed

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

HYENA = "real/hyenadna-tiny-1k-anticapt"
TOL = 1e-4  # per row: max |geneb - reference| <= TOL x max |reference|


def subset(task: Task, split: str, n: int) -> Task:
    """The first ``n`` rows of ``split`` of a real task, as a one-split Task."""
    s = task.split(split)
    seqs, labels = tuple(s.sequences[:n]), s.labels[:n]
    sd = SplitData(split, seqs, labels, s.rows[:n], split_fingerprint(seqs, labels))
    return Task(task.spec, {split: sd})


def hyena_reference(folder: Path, seqs: list[str]) -> np.ndarray:
    """Independent: plain transformers, one unpadded sequence per forward, mean of its tokens."""
    tok = transformers.AutoTokenizer.from_pretrained(folder, trust_remote_code=True)
    model = transformers.AutoModel.from_pretrained(folder, trust_remote_code=True).eval()
    out = []
    with torch.inference_mode():
        for s in seqs:
            ids = tok(s, truncation=True, max_length=tok.model_max_length, return_tensors="pt")
            out.append(model(input_ids=ids["input_ids"]).last_hidden_state.mean(1)[0].numpy())
    return np.stack(out)


def assert_rows_match(got: np.ndarray, ref: np.ndarray) -> None:
    err = row_errors(got, ref)
    bad = np.flatnonzero(err > TOL)
    assert not len(bad), f"{len(bad)} of {len(ref)} rows differ; worst {err.max():.3g}"


def test_real_hyenadna_every_row_equals_alone(
    models_dir: Path, data_dir: Path, tmp_path: Path
) -> None:
    folder = models_dir / HYENA
    emb = get_embedder(str(folder), device="cpu", trust_remote_code=True)
    pol = emb.batch_policy
    # measured, not configured: the tokenizer's left padding leaks, right padding is exact
    assert emb.rules.padding_side == "left"
    assert pol.mode == "padded" and pol.padding_side == "right"
    assert pol.errors["padded_left"] > 0.05 and pol.errors["padded_right"] <= TOL
    # every row of a real test split (105 rows, 50-300 bp), and rows of a long-sequence task
    # (each reference row is its own forward pass: CI time)
    dhs = resolve_task(str(data_dir / "dhs_idhs_fflg"))
    lnc = subset(resolve_task(str(data_dir / "lncrna_ath_prelnc")), "test", 12)  # 201-16593 bp
    store = tmp_path / "store.zarr"
    extract(store, emb, [dhs, lnc], ("test",), batch_tokens=8192)
    fs = FeatureStore(store)
    for task in (dhs, lnc):
        seqs = list(task.split("test").sequences)
        assert len({len(s) for s in seqs}) > 8  # really mixed lengths
        e = fs.get(emb.name, task.spec.name, "test")
        assert_rows_match(e.embeddings, hyena_reference(folder, seqs))
        bi = e.provenance.extra["batch_invariance"]
        assert bi["mode"] == "padded" and bi["padding_side"] == "right"
    # the decision shows in `geneb store info`
    res = CliRunner().invoke(
        app, ["store", "info", "--store", str(store), "-m", emb.name, "-t", "dhs_idhs_fflg", "-s", "test"]
    )
    assert res.exit_code == 0, res.output
    info = json.loads(res.output)
    assert info["provenance"]["extra"]["batch_invariance"]["max_rel_error"]["padded_left"] > 0.05


def _custom_model(models_dir: Path, tmp_path: Path, name: str, batch_leak: bool) -> Path:
    """Bidirectional and blind to attention_mask, like Caduceus: padding leaks both ways."""
    body = f"""
        h = super().forward(input_ids=input_ids, **kw).last_hidden_state
        if {batch_leak}:
            h = h + 0.5 * h.mean(dim=(0, 1), keepdim=True)
    """
    return custom_bert(models_dir, tmp_path / name, body, "nomask-bert")


SEQS = ["ACGTAGCATCGGATCTATCTATCGACACTTGG", "TTGACA" * 9, "GATTACA", "ACGTACGTAC" * 4, "CCA"]


@pytest.mark.parametrize(("leak", "mode"), [(False, "equal_length"), (True, "single")])
def test_models_that_padding_changes_are_batched_safely(
    models_dir: Path, tmp_path: Path, leak: bool, mode: str
) -> None:
    d = _custom_model(models_dir, tmp_path, f"nomask-{leak}", leak)
    emb = get_embedder(str(d), device="cpu", trust_remote_code=True)
    assert emb.batch_policy.mode == mode
    assert all(v > TOL for k, v in emb.batch_policy.errors.items() if k.startswith("padded"))
    seqs = SEQS + [s[::-1] for s in SEQS]  # pairs of identical length, different content
    alone = np.vstack([emb.embed([s]) for s in seqs])
    assert_rows_match(emb.embed(seqs), alone)
    bucketed = embed_bucketed(emb, seqs, batch_tokens=10_000)
    assert_rows_match(bucketed, alone)
    # and through the runner into the store, with a large token budget
    seqs_t = tuple(seqs)
    labels = np.arange(len(seqs)) % 2
    sd = SplitData("test", seqs_t, labels, np.arange(len(seqs)), split_fingerprint(seqs_t, labels))
    spec = TaskSpec("t", "synthetic", 2, ("a", "b"), splits=("test",), synthetic=True)
    task = Task(spec, {"test": sd})
    extract(tmp_path / "s", emb, task, ("test",), batch_tokens=100_000)
    e = FeatureStore(tmp_path / "s").get(emb.name, "t", "test")
    assert_rows_match(e.embeddings, alone)
    assert e.provenance.extra["batch_invariance"]["mode"] == mode


class LeakyPlugin:
    """A third-party embedder whose rows depend on the longest sequence in the batch."""

    name, dim = "leaky", 2

    def embed(self, seqs):
        longest = max(len(s) for s in seqs)
        return np.array([[len(s), s.count("A") + 0.01 * longest] for s in seqs], np.float32)


def test_generic_self_test_and_batching_for_plugins(tmp_path: Path) -> None:
    plugin = LeakyPlugin()
    pol = generic_policy(plugin)
    assert pol.mode == "equal_length" and pol.errors["padded"] > TOL
    seqs = ["ACGT", "AAAAAAAAAA", "CCA", "GGGAAT", "TTTT", "A" * 30]
    out = embed_bucketed(plugin, seqs, batch_tokens=10_000)
    np.testing.assert_array_equal(out, np.vstack([plugin.embed([s]) for s in seqs]))


def test_same_cost_batches() -> None:
    costs = np.array([3, 5, 3, 5, 5, 9, 3])
    batches = token_budget_batches(costs, 100, same_cost=True)
    assert sorted(np.concatenate(batches).tolist()) == list(range(len(costs)))
    assert all(len(set(costs[b].tolist())) == 1 for b in batches)
    assert len(batches) == 3
    assert len(token_budget_batches(costs, 100)) == 1
