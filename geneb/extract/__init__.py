"""Extraction: model adapters, batching and pooling into the feature store.

Public entry points: ``geneb.extract.registry.get_embedder`` / ``list_embedders`` and
``geneb.extract.runner.extract``. Heavy dependencies (torch, transformers) load lazily.
"""


import sys as _sys
import types as _types
from typing import Any as _Any


class _ExtractPackage(_types.ModuleType):
    """``geneb.extract`` is both this package and the public ``extract`` function.

    Importing any submodule sets the attribute ``geneb.extract`` to this package (the import
    system does that), so the top-level export cannot be a plain function; the package is
    made callable instead and forwards to ``geneb.extract.runner.extract``.
    """

    def __call__(self, *args: _Any, **kwargs: _Any) -> _Any:
        from geneb.extract.runner import extract

        return extract(*args, **kwargs)


_sys.modules[__name__].__class__ = _ExtractPackage
