"""GENEB's extraction recipes (``geneb_recipes.json``) and ``extract(recipe="geneb")``.

The recipe is checked against GENEB's HyenaDNA extractor re-written here with plain
transformers from its facts (darlednik/GENEB ``embedding_pipeline/extractors/hyenadna.py``:
``AutoModelForSequenceClassification``, ``hidden_states[-1].mean(dim=1)`` over left-padded
batches of ``main.py``'s default 4 rows in file order), on the real HyenaDNA checkpoint of
../shared/models/real with its own code (trust_remote_code given here explicitly)."""

from __future__ import annotations

import csv
import json

import numpy as np
import pandas as pd
import pytest
from conftest import DATA_DIR, MODELS_DIR, SHARED, require_shared
from typer.testing import CliRunner

from geneb.cli import app
from geneb.errors import GenebError, ModelError
from geneb.extract.geneb_recipe import resolve_recipe
from geneb.extract.runner import extract
from geneb.models.geneb_recipes import _data, find_recipe, load_recipes, parse_recipes
from geneb.store import FeatureStore

HYENA = MODELS_DIR / "real" / "hyenadna-tiny-1k-anticapt"


def test_every_leaderboard_model_has_a_record():
    board = require_shared(SHARED / "published" / "geneb-9642d48" / "task_mcc_full.csv",
                           "GENEB's published leaderboard")
    with open(board) as f:
        ids = [row[0] for row in csv.reader(f)][1:]
    assert len(ids) == 41
    data = _data()
    assert sorted(data["models"]) == sorted(ids)
    recipes = load_recipes()
    assert set(recipes) == set(ids) - {"splicebert-1024nt"}  # self-reported: GENEB never ran it
    assert data["source"]["main"]["default_batch_size"] == 4
    hy = recipes["hyenadna-medium-160k-seqlen-hf"]
    assert (hy.pooling, hy.batch_dependent, hy.dtype_cuda, hy.max_length) == (
        "all_positions_mean", "yes", "bfloat16", 160000)
    assert recipes["nucleotide-transformer-v2-50m-multi-species"].padding == "max_length"
    assert recipes["DNABERT-S"].pooling == "cls"
    assert not recipes["enformer-official-rough"].applicable


def test_a_malformed_recipe_names_entry_and_field():
    data = json.loads(json.dumps(_data()))
    data["extractors"]["hyenadna"]["pooling"] = "median"
    with pytest.raises(GenebError, match=r"extractors\.hyenadna: pooling: expected"):
        parse_recipes(data)
    data = json.loads(json.dumps(_data()))
    data["models"]["GROVER"]["extractor"] = "nope"
    with pytest.raises(GenebError, match=r"models\.GROVER: extractor 'nope' is not in"):
        parse_recipes(data)


def test_recipes_that_geneb_cannot_apply_are_refused_in_one_line():
    with pytest.raises(ModelError) as e:
        resolve_recipe("m42-health/BioFM-265M")
    assert "BioFMExtractor" in str(e.value) and "cannot apply" in str(e.value)
    assert "\n" not in str(e.value)
    with pytest.raises(ModelError, match="no recipe"):
        resolve_recipe("kmer-3")
    assert find_recipe("x/unknown", "hyenadna").extractor == "HyenadnaExtractor"


def _task(tmp_path, n: int = 7):
    """A small task of real, variable-length sequences (dhs_idhs_fflg: 50-300 bp)."""
    src = require_shared(DATA_DIR / "dhs_idhs_fflg", "real task data")
    folder = tmp_path / "dhs"
    folder.mkdir()
    for split, k in (("train", n), ("test", 4)):
        d = pd.read_csv(src / f"{split}.csv")
        d = pd.concat([d[d.label == 0].head(k), d[d.label == 1].head(k)])
        d.sample(frac=1.0, random_state=3).to_csv(folder / f"{split}.csv", index=False)
    return folder


def _geneb_hyenadna(path, sequences, batch_size=4):
    """GENEB's HyenadnaExtractor.extract_embeddings, re-written (CPU: float32)."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path, trust_remote_code=True)
    model = AutoModelForSequenceClassification.from_pretrained(
        path, dtype=torch.float32, trust_remote_code=True, output_hidden_states=True).eval()
    out = []
    for i in range(0, len(sequences), batch_size):
        inputs = tok(sequences[i:i + batch_size], padding=True, truncation=True,
                     max_length=160_000, return_tensors="pt")
        with torch.no_grad():
            hidden = model(**inputs).hidden_states[-1]
        out.append(hidden.mean(dim=1).to(torch.float32).numpy())
    return np.vstack(out)


def test_hyenadna_recipe_equals_genebs_extractor(tmp_path):
    path = require_shared(HYENA, "the real HyenaDNA checkpoint")
    folder = _task(tmp_path)
    store = tmp_path / "store"
    extract(str(store), str(path), str(folder), recipe="geneb", trust_remote_code=True,
            name="hy-geneb", block_rows=6)  # 6 -> 4: every block starts a GENEB batch
    extract(str(store), str(path), str(folder), trust_remote_code=True, name="hy")
    fs = FeatureStore(store, "r")
    for split in ("train", "test"):
        seqs = pd.read_csv(folder / f"{split}.csv").sequence.str.upper().tolist()
        ref = _geneb_hyenadna(str(path), seqs)
        got = fs.get("hy-geneb", "dhs", split).embeddings
        assert np.allclose(got, ref, rtol=1e-4, atol=1e-5), np.abs(got - ref).max()
    prov = fs.provenance(fs.get("hy-geneb", "dhs", "train").key)
    assert prov.recipe == "geneb"
    assert prov.extra["geneb_recipe"]["extractor"] == "HyenadnaExtractor"
    assert prov.extra["geneb_recipe"]["padding_side_used"] == "left"
    # geneb's own embedding is batch-invariant: it differs where a row was padded
    own = fs.get("hy", "dhs", "train").embeddings
    diff = np.abs(fs.get("hy-geneb", "dhs", "train").embeddings - own).max(axis=1)
    assert (diff > 1e-3).sum() >= 4 and (diff < 1e-5).any()  # the longest row of a batch


def test_recipe_refuses_options_it_sets(tmp_path):
    path = require_shared(HYENA, "the real HyenaDNA checkpoint")
    with pytest.raises(ModelError, match="pooling: GENEB's recipe sets it"):
        extract(str(tmp_path / "s"), str(path), str(_task(tmp_path)), recipe="geneb",
                trust_remote_code=True, pooling="cls")
    assert not (tmp_path / "s").exists()
    with pytest.raises(ModelError, match="no recipe"):
        extract(str(tmp_path / "s"), "kmer-3", str(tmp_path / "dhs"), recipe="geneb")


def test_models_info_shows_batch_dependence():
    path = require_shared(HYENA, "the real HyenaDNA checkpoint")
    r = CliRunner().invoke(app, ["models", "info", str(path)])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["geneb_recipe"]["batch_dependent"] == "yes"
    assert out["geneb_recipe"]["extractor"] == "HyenadnaExtractor"
