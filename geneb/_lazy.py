"""The machinery behind ``geneb``'s lazy public names (kept out of ``geneb/__init__.py``).

Each public name resolves, on first use, to the object its module defines, so
``inspect.signature`` and ``help`` show the real signature and docstring. One name needs
more: ``geneb.extract`` is a function *and* the name of the subpackage ``geneb/extract``.
Importing any ``geneb.extract.*`` module makes the import system bind the package over the
public name (``setattr(geneb, "extract", <package>)``). :class:`GenebModule` refuses that
rebinding, and the name resolves to a :class:`PackageFunction`: the function for callers,
``inspect`` and ``help``, and the package for attribute access, so ``geneb.extract.batching``
and ``import geneb.extract.runner as runner`` keep working.
"""

from __future__ import annotations

import importlib
import importlib.util
import types
from typing import Any


class PackageFunction:
    """The public function ``function`` ("module.attr") shown under the subpackage's name.

    Calls go to the function; ``__signature__``, ``__doc__`` and ``__wrapped__`` are the
    function's; any other attribute is the package's. ``__get__`` makes ``inspect`` (and so
    ``pydoc``/``help``) treat it as a routine and print its signature and docstring.
    """

    _package: str  # set through object.__setattr__ (our __setattr__ writes to the package)
    _function: str

    def __init__(self, package: str, function: str) -> None:
        object.__setattr__(self, "_package", package)
        object.__setattr__(self, "_function", function)

    def _target(self) -> Any:
        module, attr = self._function.rsplit(".", 1)
        return getattr(importlib.import_module(module), attr)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._target()(*args, **kwargs)

    def __get__(self, obj: Any, cls: Any = None) -> PackageFunction:
        return self

    @property
    def __wrapped__(self) -> Any:  # inspect.signature/unwrap follow it
        return self._target()

    @property
    def __doc__(self) -> str | None:  # type: ignore[override]
        doc: str | None = self._target().__doc__
        return doc

    @property
    def __name__(self) -> str:
        return self._package

    def __getattr__(self, name: str) -> Any:
        return getattr(importlib.import_module(self._package), name)

    def __setattr__(self, name: str, value: Any) -> None:  # e.g. monkeypatch on a submodule
        setattr(importlib.import_module(self._package), name, value)

    def __dir__(self) -> list[str]:
        return dir(importlib.import_module(self._package))

    def __repr__(self) -> str:
        return f"<function {self._package} (= {self._function}; also the package)>"


class GenebModule(types.ModuleType):
    """``geneb``'s module type: the import system may not bind a subpackage over a public
    name (see the module docstring); every other attribute is set as usual."""

    def __setattr__(self, name: str, value: Any) -> None:
        exports = self.__dict__.get("_EXPORTS", {})
        if (name in exports and isinstance(value, types.ModuleType)
                and value.__name__ == f"{self.__name__}.{name}"):
            return  # ``import geneb.<name>.x`` binding the package: keep the public name
        super().__setattr__(name, value)


def resolve(package: str, name: str, module: str, attr: str) -> Any:
    """The public object ``package.name``, defined as ``module.attr``."""
    value = getattr(importlib.import_module(module), attr)
    if importlib.util.find_spec(f"{package}.{name}") is not None:  # a subpackage's name
        return PackageFunction(f"{package}.{name}", f"{module}.{attr}")
    return value
