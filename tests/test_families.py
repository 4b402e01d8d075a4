"""Real model families through geneb on their OWN code (../shared/models/families + HyenaDNA).

Each family's embedding is compared with an independent reference that follows the family's
documented recipe (shared/models/families/README.md) with plain transformers (or the family's
package), one sequence at a time: every row within 1e-4 of its row maximum, for a batch of
real sequences of mixed lengths. These tests also run under transformers 5.x in CI (a second
venv, ``-m families``): there DNABERT-2 and GENA-LM code cannot run and must give one line.
"""

from __future__ import annotations

import csv
import importlib.util
from pathlib import Path

import numpy as np
import pytest

import geneb
from geneb.errors import ModelError
from geneb.models.model_code import MEASURED_TRANSFORMERS

pytestmark = pytest.mark.families
transformers = pytest.importorskip("transformers")
torch = pytest.importorskip("torch")

TF_MAJOR = int(transformers.__version__.split(".")[0])
FAMILIES = {
    "dnabert2": "families/dnabert2-117m-tiny",
    "gena": "families/gena-lm-bert-t2t-tiny",
    "gpn": "families/gpn-convnet-tiny",
    "hyena": "real/hyenadna-tiny-1k-anticapt",
}
#: families whose own code fails under transformers 5.x (measured; docs/models.md)
NEEDS_TF4 = {"dnabert2", "gena"}
TOL = 1e-4


def real_sequences(data_dir: Path, n: int = 12) -> list[str]:
    """``n`` real test sequences of distinct lengths (dhs_idhs_fflg: 50-300 bp)."""
    with open(data_dir / "dhs_idhs_fflg" / "test.csv", newline="") as f:
        rows = [r["sequence"] for r in csv.DictReader(f)]
    by_len = {len(s): s for s in rows}
    lens = sorted(by_len)
    pick = [lens[int(i)] for i in np.linspace(0, len(lens) - 1, n)]
    return [by_len[k] for k in pick]


def folder(models_dir: Path, family: str) -> Path:
    path = models_dir / FAMILIES[family]
    if not path.is_dir():
        pytest.skip(f"{path} missing")
    if family == "gpn" and importlib.util.find_spec("gpn") is None:
        pytest.fail("the gpn package is not installed (pip install -e '.[test]' brings it)")
    return path


def reference(path: Path, family: str, seqs: list[str]) -> np.ndarray:
    """The family's documented embedding, one sequence at a time, plain transformers."""
    from transformers import AutoModel, AutoTokenizer

    if family == "gpn":
        import gpn._registration

        gpn._registration.register_auto_classes("gpn")
    trc = family != "gpn"
    tok = AutoTokenizer.from_pretrained(path, trust_remote_code=trc)
    model = AutoModel.from_pretrained(path, trust_remote_code=trc).eval()
    rows = []
    with torch.no_grad():
        for s in seqs:
            enc = tok(s.upper() if family != "gpn" else s, return_tensors="pt")
            if family == "dnabert2":  # model card: hidden_states = model(input_ids)[0]
                hidden = model(enc["input_ids"])[0]
            elif family == "gpn":  # gpn get_embeddings.py: last hidden state (no mask)
                hidden = model(input_ids=enc["input_ids"]).last_hidden_state
            else:
                hidden = model(**enc).last_hidden_state
            rows.append(hidden[0].float().mean(dim=0).numpy())
    return np.stack(rows)


def assert_rows_close(got: np.ndarray, ref: np.ndarray) -> None:
    assert got.shape == ref.shape
    scale = np.abs(ref).max(axis=1)
    err = np.abs(got - ref).max(axis=1) / scale
    assert (err <= TOL).all(), f"rows off: {np.flatnonzero(err > TOL)}, worst {err.max():.2e}"


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_family_embeddings_equal_the_documented_recipe(
    family: str, models_dir: Path, data_dir: Path
) -> None:
    path = folder(models_dir, family)
    seqs = real_sequences(data_dir)
    if TF_MAJOR >= 5 and family in NEEDS_TF4:
        with pytest.raises(ModelError) as e:
            geneb.get_embedder(str(path), trust_remote_code=True, device="cpu")
        msg = str(e.value)
        assert "\n" not in msg and path.name in msg and MEASURED_TRANSFORMERS in msg
        return
    emb = geneb.get_embedder(str(path), trust_remote_code=family != "gpn", device="cpu")
    got = emb.embed(seqs)  # one call: mixed lengths share batches as the self-test allows
    assert_rows_close(got, reference(path, family, seqs))
    mode = emb.batch_policy.mode
    if family == "gpn":  # ignores the attention mask: no padded batches
        assert mode in ("equal_length", "single")
    if family == "gena":  # absolute positions ignore the mask: never padded on the left
        assert not (mode == "padded" and emb.batch_policy.padding_side == "left")


@pytest.mark.parametrize("family", ["dnabert2", "gena"])
def test_absent_pooler_is_recorded_not_refused(family: str, models_dir: Path) -> None:
    if TF_MAJOR >= 5:
        pytest.skip("family code needs transformers 4.x (checked by the recipe test)")
    emb = geneb.get_embedder(str(folder(models_dir, family)), trust_remote_code=True)
    absent = emb.info.extra["absent_weights"]["names"]
    assert absent == ["pooler.dense.bias", "pooler.dense.weight"]


def test_missing_weight_on_the_path_is_refused(models_dir: Path, tmp_path: Path) -> None:
    """A weight the last hidden state passes through, removed from the checkpoint: refused."""
    from safetensors.torch import load_file, save_file

    src = folder(models_dir, "gpn")
    dst = tmp_path / "gpn-missing"
    dst.mkdir()
    for p in src.iterdir():
        if p.name != "model.safetensors":
            (dst / p.name).write_bytes(p.read_bytes())
    weights = load_file(str(src / "model.safetensors"))
    dropped = sorted(k for k in weights if "encoder" in k or "layers" in k)[0]
    del weights[dropped]
    save_file(weights, str(dst / "model.safetensors"), metadata={"format": "pt"})
    with pytest.raises(ModelError, match="weights the embedding passes through are missing"):
        geneb.get_embedder(str(dst))


def test_strands_both_equals_mean_of_forward_and_reverse_complement(
    models_dir: Path, data_dir: Path
) -> None:
    """GPN's recipe: the mean of the forward and reverse-complement embeddings."""
    path = folder(models_dir, "gpn")
    seqs = real_sequences(data_dir, 6)
    comp = str.maketrans("ACGTNacgtn", "TGCANtgcan")
    rc = [s.translate(comp)[::-1] for s in seqs]
    emb = geneb.get_embedder(str(path), strands="both")
    assert emb.info.strands == "both"
    ref = (reference(path, "gpn", seqs) + reference(path, "gpn", rc)) / 2
    assert_rows_close(emb.embed(seqs), ref)
    with pytest.raises(ModelError, match="strands"):
        geneb.get_embedder("kmer-3", strands="reverse")


@pytest.mark.parametrize("family", ["dnabert2", "gena", "gpn"])
def test_masked_lm_heads_are_detected(family: str, models_dir: Path) -> None:
    """The checkpoints hold their masked-LM heads: capability detection finds them."""
    from geneb.vep.capabilities import detect

    if TF_MAJOR >= 5 and family in NEEDS_TF4:
        pytest.skip("family code needs transformers 4.x")
    caps = detect(str(folder(models_dir, family)), trust_remote_code=family != "gpn")
    assert "masked_lm" in caps.heads, caps.describe()
    assert "llr" in caps.scorers


def test_gpn_without_its_package_is_one_line(models_dir: Path, monkeypatch) -> None:
    """Without the gpn package, a ConvNet checkpoint names the package and the extra."""
    import sys

    path = folder(models_dir, "gpn")
    for name in [m for m in sys.modules if m == "gpn" or m.startswith("gpn.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "gpn", None)  # what an environment without it answers
    with pytest.raises(ModelError) as e:
        geneb.get_embedder(str(path))
    msg = str(e.value)
    assert "\n" not in msg and "'gpn' package" in msg and "geneb[gpn]" in msg


def test_measured_range_is_the_dependency_pin() -> None:
    """The range model-code errors name is the one pyproject.toml installs."""
    import tomllib

    from packaging.requirements import Requirement

    deps = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    pins = [Requirement(d) for d in deps["project"]["dependencies"]]
    tf = next(r for r in pins if r.name == "transformers")
    assert tf.specifier == Requirement("transformers" + MEASURED_TRANSFORMERS).specifier
