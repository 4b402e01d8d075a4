"""Weights in the dtype asked for, and provenance saying the dtype they have (issue 31 item 5).

CI runs this file again under the lowest transformers geneb supports (``.ci/run``: a venv
with transformers 4.56.0, the first whose ``from_pretrained`` takes ``dtype=``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from geneb.models.model_code import MEASURED_TRANSFORMERS
from geneb.models.registry import get_embedder

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

TINY = "tiny/tiny-bert-dnabert1-6mer"


def test_this_transformers_is_a_supported_one():
    assert Version(transformers.__version__) in Requirement(
        "transformers" + MEASURED_TRANSFORMERS).specifier


def test_bf16_weights_and_provenance(models_dir: Path):
    emb = get_embedder(str(models_dir / TINY), device="cpu", dtype="bfloat16")
    dtypes = {p.dtype for p in emb.model.parameters()}
    assert dtypes == {torch.bfloat16}
    assert emb.info.dtype == "bfloat16"
    out = emb.embed(["ACGTACGTAGCTAGCTAGGATC", "TTGACA" * 5])
    assert out.shape[0] == 2


def test_provenance_follows_the_weights_not_the_request(models_dir: Path, monkeypatch):
    """A model class that swallows ``dtype`` (what a ``**kwargs`` class did before 4.56)
    leaves float32 weights: provenance says float32, not the bfloat16 asked for."""
    from transformers import BertModel

    real = BertModel.from_pretrained.__func__

    def swallow(cls, *args, dtype=None, **kw):
        return real(cls, *args, **kw)

    monkeypatch.setattr(BertModel, "from_pretrained", classmethod(swallow))
    emb = get_embedder(str(models_dir / TINY), device="cpu", dtype="bfloat16")
    assert {p.dtype for p in emb.model.parameters()} == {torch.float32}
    assert emb.info.dtype == "float32"


def test_missing_weights_check_runs_after_the_move_to_the_device(models_dir: Path,
                                                                   monkeypatch):
    from geneb.models.adapters import hf_load

    seen = []
    real = hf_load._check_missing

    def record(model, tok, missing, src, device="cpu"):
        seen.append((next(model.parameters()).device.type, device))
        return real(model, tok, missing, src, device)

    monkeypatch.setattr(hf_load, "_check_missing", record)
    get_embedder(str(models_dir / TINY), device="cpu")
    assert seen == [("cpu", "cpu")]
