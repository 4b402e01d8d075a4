"""The one model registry: every spec kind resolves, metadata comes without loading weights,
options that do not apply are refused, catalogue settings (trust, packages) are enforced."""

from __future__ import annotations

import builtins
import io
import itertools
import json
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from geneb.errors import GenebError, ModelError, PlanError, UnknownNameError
from geneb.models import registry
from geneb.models.registry import check_options, get_embedder, get_model_meta

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".h5", ".msgpack")


@pytest.fixture
def tiny(models_dir: Path) -> Path:
    return models_dir / "tiny" / "tiny-bert-dnabert2-bpe"


@pytest.fixture
def no_loading(monkeypatch):
    """Record every file opened; make constructing any torch module an error."""
    opened: list[str] = []
    real_open, real_io_open = builtins.open, io.open

    def spy(real):
        def _open(file, *a, **k):
            opened.append(str(file))
            return real(file, *a, **k)

        return _open

    monkeypatch.setattr(builtins, "open", spy(real_open))
    monkeypatch.setattr(io, "open", spy(real_io_open))
    import torch

    def refuse(self, *a, **k):
        raise AssertionError("a torch module was constructed while reading metadata")

    monkeypatch.setattr(torch.nn.Module, "__init__", refuse)
    return opened


def _no_weights(opened: list[str]) -> None:
    assert not [p for p in opened if p.endswith(WEIGHT_SUFFIXES)], opened


# ----------------------------------------------------------------------------- spec kinds
def test_kmer_resolves_and_matches_a_direct_count() -> None:
    meta = get_model_meta("kmer-2")
    assert (meta.kind, meta.key, meta.n_params) == ("kmer", "kmer-2", None)
    seqs = ["ACGTAC", "AANAA"]
    got = get_embedder("kmer-2").embed(seqs)
    kmers = ["".join(p) for p in itertools.product("ACGT", repeat=2)]
    for row, s in zip(got, seqs, strict=True):
        counts = [sum(s[i : i + 2] == k for i in range(len(s) - 1)) for k in kmers]
        np.testing.assert_allclose(row, np.array(counts) / sum(counts), rtol=0, atol=1e-7)
    with pytest.raises(UnknownNameError, match="kmer-9"):
        get_model_meta("kmer-9")


def test_random_needs_a_neural_model() -> None:
    with pytest.raises(ModelError, match="random: needs a neural model"):
        get_model_meta("random:kmer-5")
    meta = get_model_meta("random:DNABERT-2")
    assert meta.kind == "random" and meta.key == "random:DNABERT-2"
    assert meta.n_params is None  # random weights: no published size
    assert "seed" in meta.options and meta.base.hub_id == "zhihan1996/DNABERT-2-117M"


def test_folder_and_hf_prefix_without_loading(tiny: Path, no_loading) -> None:
    for spec in (str(tiny), f"hf:{tiny}"):
        meta = get_model_meta(spec)
        assert (meta.kind, meta.key, meta.path) == ("folder", tiny.name, str(tiny.resolve()))
        assert meta.trust_remote_code is False and meta.family == "bert"
    assert any(p.endswith("config.json") for p in no_loading)
    _no_weights(no_loading)
    random = get_model_meta(f"random:{tiny}")
    assert random.key == f"random:{tiny.name}"


def test_folder_with_code_is_marked(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"auto_map": {"AutoModel": "m.M"}}))
    assert get_model_meta(str(tmp_path)).trust_remote_code is True
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ModelError, match="no config.json"):
        get_model_meta(str(empty))


def test_catalogue_name_alias_and_hub_id(no_loading) -> None:
    meta = get_model_meta("dnabert-2")  # case-insensitive
    assert (meta.kind, meta.key, meta.hub_id) == (
        "catalogue",
        "DNABERT-2",
        "zhihan1996/DNABERT-2-117M",
    )
    assert meta.n_params == 117_000_000 and meta.trust_remote_code is True
    assert get_model_meta("Caduceus-Ps").name == "Caduceus-Ps-131K"  # alias (GFMBench name)
    hub = get_model_meta("zhihan1996/DNABERT-2-117M")  # a catalogued hub id keeps its key
    assert (hub.kind, hub.key, hub.catalogue.name) == (
        "hub",
        "zhihan1996/DNABERT-2-117M",
        "DNABERT-2",
    )
    plain = get_model_meta("someone/unknown-model")
    assert (plain.kind, plain.key, plain.catalogue) == ("hub", "someone/unknown-model", None)
    _no_weights(no_loading)
    # only the catalogue and installed packages' metadata (entry points) were read; the
    # kernel's pseudo-files (/proc, /sys, /dev) hold no model data: a library imported on
    # first use may read them (/proc/self/maps), which says nothing about metadata reads
    meta_files = ("model_catalogue.json", ".zip", "entry_points.txt", "METADATA")
    kernel = ("/proc/", "/sys/", "/dev/")
    assert [p for p in no_loading if not p.endswith(meta_files) and not p.startswith(kernel)] == []


def test_unknown_spec_lists_choices() -> None:
    with pytest.raises(UnknownNameError, match="Did you mean 'DNABERT-2'"):
        get_model_meta("DNABERT-22")
    with pytest.raises(ModelError, match="non-empty string"):
        get_model_meta("  ")


def test_hf_uses_the_registry_grammar() -> None:
    from geneb.models import hub, spec

    assert hub.HUB_ID is registry.HUB_ID_RE is spec.HUB_ID_RE


# ----------------------------------------------------------------------------- plugins
@pytest.fixture
def plugin(tmp_path: Path, monkeypatch) -> str:
    """A real installed distribution (dist-info on sys.path) with a geneb.embedders entry point."""
    site = tmp_path / "site"
    dist = site / "geneb_test_plugin-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: geneb-test-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[geneb.embedders]\ntest-const = geneb_test_plugin_mod:factory\n"
        "test-open = geneb_test_plugin_mod:open_factory\n"
    )
    (site / "geneb_test_plugin_mod.py").write_text(
        textwrap.dedent(
            """
            import numpy as np

            class Const:
                def __init__(self, dim):
                    self.name, self.dim = "test-const", dim

                def embed(self, seqs):
                    return np.ones((len(seqs), self.dim), dtype=np.float32)

            def factory(*, device="auto", dim=3):
                return Const(dim)

            def open_factory(**options):
                return Const(options.get("width", 2))
            """
        )
    )
    monkeypatch.syspath_prepend(str(site))
    yield "test-const"
    sys.modules.pop("geneb_test_plugin_mod", None)


def test_plugin_entry_point(plugin: str) -> None:
    meta = get_model_meta(plugin)
    assert (meta.kind, meta.key, meta.options) == ("plugin", plugin, ("device", "dim"))
    assert plugin in registry.list_embedders()
    emb = get_embedder(plugin, device="cpu", pooling="mean")  # pooling at its default: not set
    assert emb.embed(["ACGT"]).shape == (1, 3)
    assert get_embedder(plugin, dim=5).dim == 5
    with pytest.raises(ModelError, match=r"option 'pooling' does not apply to model 'test-const'"):
        get_embedder(plugin, pooling="mean_nonspecial")
    with pytest.raises(ModelError, match="random: needs a neural model"):
        get_model_meta(f"random:{plugin}")
    # a factory taking **options answers for any option itself
    assert get_model_meta("test-open").options == (registry.ANY_OPTION,)
    assert get_embedder("test-open", width=7, pooling="mean_nonspecial").dim == 7


# ----------------------------------------------------------------------------- options
def test_option_that_does_not_apply_is_refused() -> None:
    meta = get_model_meta("kmer-5")
    with pytest.raises(ModelError) as e:
        get_embedder("kmer-5", pooling="mean_nonspecial")
    assert "option 'pooling' does not apply to model 'kmer-5' (it accepts: device, " in str(e.value)
    for opt, val in (("max_length", 128), ("layer", 3), ("dtype", "float16"), ("seed", 1)):
        with pytest.raises(ModelError, match=f"option '{opt}' does not apply"):
            check_options(meta, {opt: val})
    # defaults mean "not set": the CLI and plans pass every option
    assert check_options(meta, {"pooling": "mean", "layer": -1, "max_length": None}) == {}
    assert check_options(meta, {"device": "cpu"}) == {"device": "cpu"}
    # seed applies only to random: controls
    with pytest.raises(ModelError, match="option 'seed' does not apply to model 'DNABERT-2'"):
        check_options(get_model_meta("DNABERT-2"), {"seed": 3})
    assert check_options(get_model_meta("random:DNABERT-2"), {"seed": 3}) == {"seed": 3}


def test_option_types_are_checked() -> None:
    meta = get_model_meta("GROVER")
    with pytest.raises(ModelError, match="'trust_remote_code' of model 'GROVER': expected a bool"):
        check_options(meta, {"trust_remote_code": "false"})
    with pytest.raises(ModelError, match="'max_length' of model 'GROVER': expected None or a"):
        check_options(meta, {"max_length": "512"})
    with pytest.raises(ModelError, match="'layer' of model 'GROVER': expected an int, got True"):
        check_options(meta, {"layer": True})


# ----------------------------------------------------------------------------- catalogue rules
def test_trust_is_reported_not_granted() -> None:
    with pytest.raises(ModelError) as e:
        get_embedder("DNABERT-2")
    msg = str(e.value)
    assert "DNABERT-2 (zhihan1996/DNABERT-2-117M)" in msg and "trust_remote_code=True" in msg
    assert "not granted automatically" in msg


def test_short_name_resolves_to_hub_id_and_fails_cleanly_offline() -> None:
    t0 = time.perf_counter()
    with pytest.raises(ModelError) as e:
        get_embedder("NT-2.5B-MS", device="cpu")  # needs no code; not in the offline cache
    assert "InstaDeepAI/nucleotide-transformer-2.5b-multi-species" in str(e.value)
    with pytest.raises(ModelError, match="zhihan1996/DNABERT-2-117M"):
        get_embedder("DNABERT-2", trust_remote_code=True, device="cpu")
    assert time.perf_counter() - t0 < 60  # offline: no 30 s network retry per call


def test_external_and_missing_packages_refused(monkeypatch) -> None:
    import importlib.util

    with pytest.raises(ModelError, match=r"'Evo-2-7B \(arcinstitute/evo2_7b\)'.*evo2"):
        get_embedder("Evo-2-7B")
    # Omni-DNA's package as if not installed (the test extra installs it): its install line
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(ModelError, match=r"pip install 'geneb\[omni-dna\]' && pip install "
                       r"--no-deps ai2-olmo==0\.6\.0"):
        get_embedder("Omni-DNA-1B")
    monkeypatch.undo()
    with pytest.raises(ModelError, match="no checked hub id"):
        get_embedder("DeepGene")


def test_catalogue_settings_reach_the_hf_adapter(monkeypatch) -> None:
    seen = {}

    class FakeHF:
        def __init__(self, model, **kw):
            seen.update(kw, model=model)

    import geneb.models.adapters.hf as hf

    monkeypatch.setattr(hf, "HFEmbedder", FakeHF)
    get_embedder("GROVER", device="cpu", pooling="mean_nonspecial")
    assert seen["model"] == "PoetschLab/GROVER" and seen["name"] == "GROVER"
    assert seen["pooling"] == "mean_nonspecial" and seen["extra"]["catalogue"] == "GROVER"
    get_embedder("random:AgroNT", seed=4)
    assert seen["name"] == "random:AgroNT" and seen["random_init_seed"] == 4
    assert seen["extra"]["n_params_published"] == 1_000_000_000


# ----------------------------------------------------------------------------- plans
def _plan(tmp_path: Path, models: str) -> Path:
    p = tmp_path / "plan.toml"
    p.write_text(f'store = "store.zarr"\nout = "out"\n{models}\n[tasks]\nnames = ["gue_mouse_0"]\n')
    return p


def test_plan_refuses_before_any_work(tmp_path: Path) -> None:
    from geneb.pipeline.execute import run_plan
    from geneb.pipeline.plan import load_plan

    # refused when the plan is read (type/range of a key) or when it is validated (what the
    # model accepts): either way before any work, with the models entry named
    cases = {
        '[[models]]\nmodel = "kmer-5"\npooling = "min"': ("expected one of 'mean'", "[[models]]"),
        '[[models]]\nmodel = "kmer-5"\npooling = "mean_nonspecial"': (
            "option 'pooling' does not apply", "models entry"),
        '[[models]]\nmodel = "DNABERT-2"': ("trust_remote_code=True", "models entry"),
        '[[models]]\nmodel = "DNABERT-2"\ntrust_remote_code = "true"': (
            "expected a bool", "[[models]]"),
        '[[models]]\nmodel = "Evo-2-7B"\ntrust_remote_code = true': ("evo2", "models entry"),
        '[[models]]\nmodel = "no-such-model"': ("unknown model", "models entry"),
    }
    for models, (expected, where) in cases.items():
        with pytest.raises(PlanError) as e:
            run_plan(load_plan(_plan(tmp_path, models)))
        assert expected in str(e.value) and where in str(e.value), str(e.value)
        assert not (tmp_path / "store.zarr").exists() and not (tmp_path / "out").exists()


def test_plan_keys_come_from_the_registry(tmp_path: Path, tiny: Path) -> None:
    from geneb.pipeline.execute import model_key
    from geneb.pipeline.plan import ModelPlan

    assert model_key(ModelPlan("grover")) == "GROVER"
    assert model_key(ModelPlan("PoetschLab/GROVER")) == "PoetschLab/GROVER"
    assert model_key(ModelPlan(str(tiny))) == tiny.name
    assert model_key(ModelPlan(f"random:{tiny}")) == f"random:{tiny.name}"
    assert model_key(ModelPlan("kmer-3", name="k3")) == "k3"


def test_cli_refuses_option_and_names_model(tmp_path: Path, data_dir: Path) -> None:
    from typer.testing import CliRunner

    from geneb.cli import app

    store = tmp_path / "s"
    res = CliRunner().invoke(
        app,
        ["extract", "--store", str(store), "--model", "kmer-4", "--task",
         str(data_dir / "gue_mouse_0"), "--layer", "2"],
    )  # fmt: skip
    assert res.exit_code == 2, res.output
    assert "option 'layer' does not apply to model 'kmer-4'" in res.output
    assert "Traceback" not in res.output
    assert not store.exists()  # refused before the store is created


def test_errors_are_geneb_errors() -> None:
    assert issubclass(ModelError, GenebError) and issubclass(UnknownNameError, GenebError)
