"""The batch-invariance self-test of a bf16 model sees a 1% padding leak in one dimension
(issue 31 item 6): it computes in float32 (bf16 rounding between layouts is the size of such
a leak), on CPU with bf16 weights; the weights are bf16 again afterwards."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from custom_bert import custom_bert

from geneb.models import selftest
from geneb.models.registry import get_embedder

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

def _model(models_dir: Path, tmp_path: Path, leak: bool) -> Path:
    """Masks padding properly, except that a padded row's dimension 3 grows by 1%."""
    body = f"""
        h = super().forward(input_ids=input_ids, attention_mask=attention_mask,
                            **kw).last_hidden_state
        if attention_mask is not None and {leak}:
            scale = torch.ones_like(h)
            scale[(attention_mask == 0).any(dim=1), :, 3] = 1.01
            h = h * scale
    """
    return custom_bert(models_dir, tmp_path / f"leak-{leak}", body, "leak-bert")


@pytest.mark.parametrize("leak", [False, True])
def test_a_one_percent_leak_is_found_under_bf16(models_dir, tmp_path, leak):
    d = _model(models_dir, tmp_path, leak)
    emb = get_embedder(str(d), device="cpu", dtype="bfloat16", trust_remote_code=True)
    pol = emb.batch_policy
    assert pol.tolerance == selftest.TOLERANCE["float32"] and not pol.note
    # with the leak no padded layout passes; without it, padding is safe
    assert pol.mode == ("equal_length" if leak else "padded")
    assert {p.dtype for p in emb.model.parameters()} == {torch.bfloat16}
    assert emb.info.dtype == "bfloat16"


def test_the_old_bf16_rule_would_have_accepted_it(models_dir, tmp_path):
    """Measured in bf16 against 3% of the row's largest value (the rule this replaces), the
    1% leak passes: what the float32 test is for."""
    d = _model(models_dir, tmp_path, True)
    emb = get_embedder(str(d), device="cpu", dtype="bfloat16", trust_remote_code=True)
    mixed, _ = selftest.probe_sequences()
    items = []
    for p in emb.prepare(mixed):
        items.append(p)
    alone = np.vstack([emb._forward(list(p.windows), "right")[0][0] for p in items])
    batched = emb._forward([w for p in items for w in p.windows], "right")[0][0]
    a, b = alone.astype(np.float64), batched.astype(np.float64)
    old = (np.abs(b - a).max(1) / np.abs(a).max(1)).max()
    assert old <= 8 * 2.0**-8


def test_no_float32_copy_falls_back_to_the_dtype_and_says_so(models_dir, tmp_path,
                                                            monkeypatch):
    d = _model(models_dir, tmp_path, False)

    @__import__("contextlib").contextmanager
    def no_room(model, dtype):
        yield dtype

    monkeypatch.setattr("geneb.models.adapters.hf.selftest_precision", no_room)
    emb = get_embedder(str(d), device="cpu", dtype="bfloat16", trust_remote_code=True)
    pol = emb.batch_policy
    assert pol.tolerance == selftest.TOLERANCE["bfloat16"]
    assert "not detectable" in pol.note and "bfloat16" in pol.note
    assert emb.info.extra["batch_invariance"]["note"] == pol.note
