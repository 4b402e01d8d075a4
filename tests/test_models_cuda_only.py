"""CUDA-only families (Caduceus / PlantCaduceus: mamba_ssm; Evo 1: flash_attn; Evo 2: its
kernels) are refused on a machine without CUDA before any work: one line naming the package
and the device, no weights read, no store, through extract, run and vep score alike.

The machine is made CUDA-less (or CUDA-capable) by patching ``torch.cuda.is_available``, so
the tests mean the same on the CPU runners and on a GPU machine. The expected packages are
the ones measured in ``../shared/models/families/README.md`` ("Not here, and why"), written
out here rather than read from the catalogue under test.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from geneb.cli import app
from geneb.errors import ModelError
from geneb.models import catalogue as cat
from geneb.models.registry import check_spec, get_embedder

#: family -> the package its code imports that has no CPU path (families README)
EXPECTED = {"Caduceus": "mamba-ssm", "Evo": "flash-attn", "Evo 2": "evo2"}
DEVICE = "NVIDIA GPU with CUDA"
TASK = "syn_cpg_island"


def _one_line(res) -> str:
    out = res.output.strip()
    assert res.exit_code == 2, res.output
    assert "Traceback" not in out and len(out.splitlines()) == 1, out
    return out


@pytest.fixture
def no_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)


@pytest.fixture
def with_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)


@pytest.fixture
def nothing_loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Any attempt to find files or build the transformers adapter is recorded (and fails)."""
    import geneb.models.adapters.hf as hf
    import geneb.models.hub as hub

    touched: list[str] = []

    def refuse(what: str):
        def f(*a, **k):
            touched.append(what)
            raise AssertionError(f"{what} called for a refused model")

        return f

    monkeypatch.setattr(hub, "resolve_source", refuse("resolve_source"))
    monkeypatch.setattr(hub, "resolve_hub_id", refuse("resolve_hub_id"))
    monkeypatch.setattr(hf.HFEmbedder, "__init__", refuse("HFEmbedder"))
    return touched


def test_catalogue_declares_the_cuda_only_families() -> None:
    cuda = [e for e in cat.load_catalogue() if e.cuda_packages]
    assert {e.family for e in cuda} == set(EXPECTED)
    for e in cat.load_catalogue():
        if e.family in EXPECTED:
            assert e.cuda_packages == (EXPECTED[e.family],), e.name
            assert e.sources["cuda_packages"].startswith("https://github.com/"), e.name
    names = {e.name for e in cuda}
    assert {"Caduceus-Ps-131K", "PlantCaduceus-l32", "Evo-1-131K", "Evo-2-7B"} <= names


@pytest.mark.parametrize(
    "model",
    [
        "Caduceus-Ps-131K",
        "PlantCaduceus-l20",
        "Evo-1-131K",
        "Evo-2-7B",
        "random:Caduceus-Ph-1K",
        "kuleshov-group/caduceus-ps_seqlen-131k_d_model-256_n_layer-16",
    ],
)
def test_extract_refuses_without_cuda_before_any_work(
    model: str, no_cuda: None, nothing_loads: list[str], tmp_path: Path
) -> None:
    store = tmp_path / "store.zarr"
    args = ["extract", "--store", str(store), "--model", model, "--task", TASK]
    out = _one_line(CliRunner().invoke(app, args))
    family = cat.lookup(model.removeprefix("random:")) or cat.lookup_hub_id(model)
    assert family is not None
    assert f"needs {EXPECTED[family.family]}" in out and DEVICE in out, out
    assert "torch.cuda.is_available() is False" in out
    assert "--trust-remote-code" not in out  # the decisive reason, not the next one
    assert not store.exists() and nothing_loads == []


def test_run_plan_refuses_before_the_store(
    no_cuda: None, nothing_loads: list[str], tmp_path: Path
) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(
        'store = "work/store.zarr"\nout = "work/out"\n\n[[models]]\nmodel = "kmer-3"\n\n'
        '[[models]]\nmodel = "Caduceus-Ps-1K"\n\n[tasks]\nnames = ["syn_cpg_island"]\n'
    )
    out = _one_line(CliRunner().invoke(app, ["run", str(plan)]))
    assert "Caduceus-Ps-1K" in out and "needs mamba-ssm" in out and DEVICE in out
    assert not (tmp_path / "work").exists() and nothing_loads == []


@pytest.mark.parametrize("scorer", ["cosine", "llr"])
def test_vep_score_refuses_before_any_work(
    scorer: str, no_cuda: None, nothing_loads: list[str], models_dir: Path, tmp_path: Path
) -> None:
    variants = models_dir.parent / "variants" / "brca1_findlay2018"
    if not variants.is_dir():
        pytest.skip(f"BRCA1 task not found at {variants}")
    store, out_file = tmp_path / "vep.zarr", tmp_path / "scores.parquet"
    hub_id = cat.lookup("Caduceus-Ps-131K").hub_id
    for model in ("Caduceus-Ps-131K", hub_id):
        args = ["vep", "score", "--task", str(variants), "--model", model, "--scorer", scorer,
                "--store", str(store), "--out", str(out_file), "--device", "auto"]  # fmt: skip
        out = _one_line(CliRunner().invoke(app, args))
        assert "needs mamba-ssm" in out and DEVICE in out, out
    assert not store.exists() and not out_file.exists() and nothing_loads == []


def test_gpu_machine_without_the_package_names_the_install(
    with_cuda: None, nothing_loads: list[str], tmp_path: Path
) -> None:
    if importlib.util.find_spec("mamba_ssm") is not None:  # pragma: no cover - a GPU box
        pytest.skip("mamba_ssm is installed here")
    args = ["extract", "--store", str(tmp_path / "s.zarr"), "--model", "Caduceus-Ph-1K",
            "--task", TASK]  # fmt: skip
    out = _one_line(CliRunner().invoke(app, args))
    assert "mamba-ssm (CUDA kernels), not installed: pip install mamba-ssm" in out
    assert not (tmp_path / "s.zarr").exists() and nothing_loads == []


def test_cpu_device_refused_even_on_a_gpu_machine(with_cuda: None) -> None:
    with pytest.raises(
        ModelError,
        match=r"needs evo2, which runs only on an NVIDIA GPU with "
        r"CUDA; device 'cpu' was asked for",
    ):
        get_embedder("Evo-2-1B-base", device="cpu")


def test_with_cuda_and_the_package_the_next_checks_apply(
    with_cuda: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not a blanket refusal: with a device and the package importable, the catalogue's other
    rules decide (Caduceus still needs --trust-remote-code; with it the spec is ready)."""
    (tmp_path / "mamba_ssm").mkdir()
    (tmp_path / "mamba_ssm" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModelError, match="trust_remote_code=True") as ei:
        check_spec("Caduceus-Ps-131K", device="cuda")
    assert "CUDA" not in str(ei.value)
    meta, opts = check_spec("Caduceus-Ps-131K", device="auto", trust_remote_code=True)
    assert meta.name == "Caduceus-Ps-131K" and opts == {"trust_remote_code": True}


def test_other_models_are_not_affected(no_cuda: None, tmp_path: Path) -> None:
    """A model without CUDA-only packages is judged as before (HyenaDNA: its code, not CUDA)."""
    with pytest.raises(ModelError) as ei:
        check_spec("HyenaDNA-tiny-1K")
    assert "trust_remote_code=True" in str(ei.value) and "CUDA" not in str(ei.value)
    store = tmp_path / "k.zarr"
    args = ["extract", "--store", str(store), "--model", "kmer-2", "--task", TASK]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert store.exists()
