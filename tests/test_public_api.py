"""The public API (``geneb.*``): lazy, complete, and usable end to end without ../shared."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import geneb


def _heavy_after(statement: str, modules: tuple[str, ...]) -> list[str]:
    """Which of ``modules`` a fresh interpreter has loaded after running ``statement``."""
    code = f"import sys; {statement}; print(','.join(m for m in {modules!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return [m for m in out.stdout.strip().split(",") if m]


def test_import_is_lazy() -> None:
    # importing geneb must not pull torch, zarr, pandas or transformers
    heavy = ("torch", "zarr", "pandas", "transformers", "sklearn")
    assert _heavy_after("import geneb", heavy) == []


def test_every_export_resolves() -> None:
    assert set(geneb.__all__) == set(geneb._EXPORTS) | {"__version__"}
    for name in geneb.__all__:
        assert getattr(geneb, name) is not None, name
    assert set(geneb.__all__) <= set(dir(geneb))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        geneb.nope  # noqa: B018


def test_end_to_end_on_a_synthetic_task(tmp_path: Path) -> None:
    """Task -> extract -> read (numpy, xarray) -> probe -> results -> report, public names only."""
    task = geneb.load_task("syn_cpg_island")
    store_path = tmp_path / "S.zarr"
    geneb.extract(str(store_path), ["kmer-2"], [task], device="cpu")
    entry = geneb.read_entry(store_path, "kmer-2", task.spec.name, "train")
    # independent reference: the 2-mer spectrum of the first train sequence, computed here
    seq = task.splits["train"].sequences[0]
    counts = np.zeros(16)
    idx = {b: i for i, b in enumerate("ACGT")}
    for a, b in zip(seq, seq[1:], strict=False):
        if a in idx and b in idx:
            counts[idx[a] * 4 + idx[b]] += 1
    np.testing.assert_allclose(entry.embeddings[0], counts / counts.sum(), rtol=1e-6)
    pytest.importorskip("xarray")
    ds = entry.to_xarray()
    np.testing.assert_array_equal(np.asarray(ds["embeddings"]), entry.embeddings)

    store = geneb.open_store(store_path)
    assert isinstance(store, geneb.FeatureStore)
    out = tmp_path / "results.parquet"
    geneb.run_probes(store, out, shots=("10",), seeds=(13, 17), Cs=(1.0,), workers=1)
    df = geneb.read_results(out)
    assert len(df) == 2 and set(df["seed"]) == {13, 17}
    report = geneb.build_report(df, tmp_path / "report")
    assert (Path(report) / "index.html").is_file() or Path(report).is_file()


def test_extract_export_survives_submodule_imports() -> None:
    # importing a submodule rebinds geneb.extract to the package; it must stay callable
    import geneb.extract.batching  # noqa: F401
    from geneb import extract

    assert callable(geneb.extract) and callable(extract)


def test_errors_speak_to_python_callers() -> None:
    with pytest.raises(geneb.GenebError, match="mode must be 'r' or 'a'"):
        geneb.open_store("x.zarr", mode="w")  # type: ignore[arg-type]
    with pytest.raises(geneb.GenebError, match="name_or_path"):
        geneb.load_task(3)  # type: ignore[arg-type]


def test_cli_start_loads_no_heavy_module() -> None:
    # every command starts by importing geneb.cli: pandas/torch there cost ~0.3 s per call
    # (the probe grid's CLI target counts start-up); a plan-check import once pulled pandas in
    heavy = ("torch", "pandas", "pyarrow", "zarr", "transformers", "sklearn", "rich")
    assert _heavy_after("import geneb.cli", heavy) == []


def _defined(name: str) -> object:
    """The object that ``geneb.<name>`` stands for, taken from the module that defines it."""
    import importlib

    module, attr = geneb._EXPORTS[name]
    return getattr(importlib.import_module(module), attr)


@pytest.mark.parametrize("name", sorted(geneb._EXPORTS))
def test_every_public_name_shows_its_real_signature_and_doc(name: str) -> None:
    # issue 19 #16: geneb.extract showed (*args, **kwargs) and the package docstring
    import inspect
    import pydoc

    public, real = getattr(geneb, name), _defined(name)
    assert inspect.getdoc(public) == inspect.getdoc(real) and inspect.getdoc(real)
    page = pydoc.render_doc(public, renderer=pydoc.plaintext)
    assert inspect.getdoc(real).splitlines()[0] in page
    assert geneb.__doc__.splitlines()[0] not in page  # not the package docstring
    if callable(real) and not inspect.isclass(real):
        assert inspect.signature(public) == inspect.signature(real)
        assert str(inspect.signature(real)) in page


def test_dir_lists_only_the_api() -> None:
    assert dir(geneb) == sorted(geneb.__all__)


def test_extract_after_a_submodule_import_in_a_fresh_interpreter() -> None:
    # the import system binds the subpackage over the public name; the name must survive it
    code = (
        "import inspect, geneb.extract.runner as runner, geneb.extract.batching, geneb;"
        "from geneb.extract.runner import extract as real;"
        "assert inspect.signature(geneb.extract) == inspect.signature(real);"
        "assert geneb.extract.__doc__ == real.__doc__;"
        "assert geneb.extract.batching.__name__ == 'geneb.extract.batching' and runner.__name__;"
        "print('ok')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr


def test_help_and_dir_stay_lazy() -> None:
    heavy = ("torch", "zarr", "pandas", "transformers", "sklearn")
    assert _heavy_after("import geneb; dir(geneb); geneb.__doc__", heavy) == []
