"""geneb: one protocol to compare genomic (DNA) foundation models.

Extract once into a Zarr feature store, probe many times, analyse with uncertainty.

The public API is exported lazily (PEP 562): ``import geneb`` stays cheap (no torch, zarr or
pandas) and each name imports its module on first use::

    import geneb
    store = geneb.open_store("work/store.zarr")              # read-only FeatureStore
    entry = store.get("kmer-5", "gue_mouse_0", "train")      # numpy arrays + provenance
    ds = entry.to_xarray()                                   # the same as an xarray Dataset
    task = geneb.load_task("../shared/data/gue_mouse_0")     # a task folder, name or syn_*
    geneb.extract("S.zarr", ["kmer-5"], [task])              # embed into a store
    geneb.run_probes("S.zarr", "results.parquet", Cs=[0.1, 1, 10])
    rows = geneb.probe_arrays(X_train, y_train, X_test, y_test, Cs=[0.1, 1, 10])  # no store
    df = geneb.read_results("results.parquet")
    geneb.build_report(df, "report/")

Errors raised to Python callers are ``geneb.GenebError`` subclasses (a ``ValueError``) whose
messages name the function's parameters; the ``geneb`` command translates them to options.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from geneb._lazy import GenebModule as _GenebModule
from geneb._version import __version__

# public name -> (module, attribute): the single list of what ``geneb`` exports
_EXPORTS: dict[str, tuple[str, str]] = {
    "GenebError": ("geneb.errors", "GenebError"),
    "FeatureStore": ("geneb.store", "FeatureStore"),
    "StoreEntry": ("geneb.store", "StoreEntry"),
    "open_store": ("geneb.api", "open_store"),
    "read_entry": ("geneb.api", "read_entry"),
    "load_task": ("geneb.api", "load_task"),
    "as_gfmbench_model": ("geneb.api", "as_gfmbench_model"),
    "extract": ("geneb.extract.runner", "extract"),  # also a subpackage: see geneb/_lazy.py
    "get_embedder": ("geneb.models.registry", "get_embedder"),
    "get_model_meta": ("geneb.models.registry", "get_model_meta"),
    "run_probes": ("geneb.probe.engine", "run_probes"),
    "probe_arrays": ("geneb.probe.arrays", "probe_arrays"),
    "read_results": ("geneb.results", "read_results"),
    "build_report": ("geneb.analysis.report", "build_report"),
}

# a literal list (linters read it); a test checks it equals the keys of _EXPORTS
__all__ = [
    "FeatureStore",
    "GenebError",
    "StoreEntry",
    "__version__",
    "as_gfmbench_model",
    "build_report",
    "extract",
    "get_embedder",
    "get_model_meta",
    "load_task",
    "open_store",
    "probe_arrays",
    "read_entry",
    "read_results",
    "run_probes",
]

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from geneb.analysis.report import build_report
    from geneb.api import as_gfmbench_model, load_task, open_store, read_entry
    from geneb.errors import GenebError
    from geneb.extract.runner import extract
    from geneb.models.registry import get_embedder, get_model_meta
    from geneb.probe.arrays import probe_arrays
    from geneb.probe.engine import run_probes
    from geneb.results.table import read_results
    from geneb.store import FeatureStore, StoreEntry


def __getattr__(name: str) -> Any:
    try:
        module, attr = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'geneb' has no attribute {name!r}") from None
    from geneb._lazy import resolve

    value = resolve(__name__, name, module, attr)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    """The public API only (``__all__``), not this module's machinery."""
    return sorted(__all__)


sys.modules[__name__].__class__ = _GenebModule
