"""The trust boundary: a model folder's Python code never runs unless asked for that model.

Every folder below carries ``evil.py``, which creates a marker file the moment it is
imported. Each way a folder can ask transformers for its own code (auto_map under any key,
in config.json or tokenizer_config.json; a custom model_type; a custom tokenizer class; the
old fallback for a config without a base model) must be refused with the model named, and
the marker must not appear. With ``trust_remote_code=True`` the same folder does run its code
(so the marker is a working detector).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from geneb.cli import app
from geneb.errors import GenebError, ModelError
from geneb.extract.runner import extract
from geneb.models.registry import get_embedder
from geneb.models.trust import TrustOptionError

pytest.importorskip("transformers")

BASE = "tiny-bert-dnabert2-bpe"
TASK = "methyl_4mc_c_equisetifolia"

EVIL = """
from pathlib import Path
Path({marker!r}).write_text("imported")
from transformers import BertConfig, BertModel, PreTrainedTokenizerFast


class EvilConfig(BertConfig):
    model_type = "evil-bert"


class EvilModel(BertModel):
    config_class = EvilConfig

    def __init__(self, config, add_pooling_layer=False):
        super().__init__(config, add_pooling_layer=add_pooling_layer)


class EvilTokenizer(PreTrainedTokenizerFast):
    pass
"""


def _folder(models_dir: Path, tmp_path: Path, name: str, cfg: dict, tok: dict) -> Path:
    d = tmp_path / name
    shutil.copytree(models_dir / "tiny" / BASE, d)
    marker = tmp_path / f"{name}.marker"
    (d / "evil.py").write_text(EVIL.format(marker=str(marker)))
    for fname, upd in (("config.json", cfg), ("tokenizer_config.json", tok)):
        data = json.loads((d / fname).read_text())
        data.update(upd)
        (d / fname).write_text(json.dumps(data))
    return d


def marker_of(d: Path) -> Path:
    return d.parent / f"{d.name}.marker"


CASES = {
    # the old fallback: unknown model_type, no AutoModel, only auto_map.AutoConfig
    "fallback-autoconfig": (
        {"model_type": "evil-bert", "auto_map": {"AutoConfig": "evil.EvilConfig"}},
        {},
    ),
    "automap-any-key": ({"auto_map": {"AutoModelForMaskedLM": "evil.EvilModel"}}, {}),
    "automap-automodel": (
        {"auto_map": {"AutoConfig": "evil.EvilConfig", "AutoModel": "evil.EvilModel"}},
        {},
    ),
    "tokenizer-automap": ({}, {"auto_map": {"AutoTokenizer": [None, "evil.EvilTokenizer"]}}),
    "tokenizer-class": ({}, {"tokenizer_class": "EvilTokenizer"}),
    "custom-model-type": ({"model_type": "evil-bert"}, {}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_custom_code_refused_without_trust(models_dir: Path, tmp_path: Path, case: str) -> None:
    cfg, tok = CASES[case]
    d = _folder(models_dir, tmp_path, case, cfg, tok)
    for spec in (str(d), f"random:{d}", f"hf:{d}"):
        with pytest.raises(ModelError) as ei:
            get_embedder(spec, device="cpu")
        msg = str(ei.value)
        assert str(d) in msg and "trust_remote_code=True" in msg
        assert not marker_of(d).exists(), f"{case}: {spec} imported the folder's code"
    with pytest.raises(ModelError):
        get_embedder(str(d), device="cpu", trust_remote_code=False)
    assert not marker_of(d).exists()


def test_trusted_folder_does_run_its_code(models_dir: Path, tmp_path: Path) -> None:
    """The marker works: asked for, the same folder's code runs (and is recorded)."""
    cfg, tok = CASES["automap-automodel"]
    d = _folder(models_dir, tmp_path, "trusted", cfg, tok)
    emb = get_embedder(str(d), device="cpu", trust_remote_code=True)
    assert marker_of(d).exists()
    assert type(emb.model).__name__ == "EvilModel"
    extra = emb.info.extra
    assert extra["trust_remote_code"] is True
    assert any("auto_map" in r for r in extra["remote_code"])


@pytest.mark.parametrize("bad", ["false", "False", 0, 1, None, "yes"])
def test_trust_flag_must_be_a_bool(models_dir: Path, tmp_path: Path, bad: object) -> None:
    cfg, tok = CASES["automap-automodel"]
    d = _folder(models_dir, tmp_path, "flag", cfg, tok)
    store = tmp_path / "store"
    for call in (
        lambda: get_embedder(str(d), device="cpu", trust_remote_code=bad),
        lambda: get_embedder("kmer-3", trust_remote_code=bad),
        lambda: extract(store, str(d), TASK, trust_remote_code=bad),
    ):
        with pytest.raises(TrustOptionError) as ei:
            call()
        assert isinstance(ei.value, TypeError) and isinstance(ei.value, GenebError)
        assert "trust_remote_code must be a bool" in str(ei.value) and repr(bad) in str(ei.value)
    assert not marker_of(d).exists() and not store.exists()


def test_cli_refusal_exit_2_nothing_written(
    models_dir: Path, data_dir: Path, tmp_path: Path
) -> None:
    cfg, tok = CASES["fallback-autoconfig"]
    d = _folder(models_dir, tmp_path, "cli-model", cfg, tok)
    store = tmp_path / "store.zarr"
    res = CliRunner().invoke(
        app,
        ["extract", "--store", str(store), "--model", str(d), "--task", str(data_dir / TASK)],
    )
    assert res.exit_code == 2, res.output
    out = " ".join(res.output.split())
    assert "error:" in out and "cli-model" in out and "--trust-remote-code" in out
    assert "Traceback" not in res.output
    assert not marker_of(d).exists()
    assert not store.exists()  # no store created
    # a second, valid model before the refused one does not change that: checks run first
    res = CliRunner().invoke(
        app,
        [
            "extract",
            "--store",
            str(store),
            "--model",
            "kmer-2",
            "--model",
            str(d),
            "--task",
            str(data_dir / TASK),
        ],
    )
    assert res.exit_code == 2 and not store.exists() and not marker_of(d).exists()


@pytest.mark.parametrize("case", sorted(CASES))
def test_variant_scoring_holds_the_same_boundary(models_dir: Path, tmp_path: Path,
                                                 case: str) -> None:
    """``geneb vep`` loads LM heads through its own path: the same refusal, no marker."""
    d = _folder(models_dir, tmp_path, case, *CASES[case])
    out = tmp_path / f"{case}.parquet"
    variants = models_dir.parent / "variants" / "brca1_findlay2018"
    r = CliRunner().invoke(app, ["vep", "score", "--task", str(variants), "--model", str(d),
                                 "--scorer", "llr", "--limit", "3", "--window", "64",
                                 "--out", str(out)])
    assert r.exit_code == 2, r.output
    assert "--trust-remote-code" in r.output
    assert not marker_of(d).exists() and not out.exists()
