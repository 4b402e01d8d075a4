"""Plugin embedders: installed packages' entry points in group ``geneb.embedders``.

A plugin is installed code the user chose; importing its entry point (to learn the options
its factory accepts, or to build it) is the only code the registry runs for it.
"""

from __future__ import annotations

import functools
import importlib.metadata as md
import inspect
import sys
from typing import Any

from geneb.errors import ModelError
from geneb.models.options import ANY_OPTION, OPTION_DEFAULTS
from geneb.models.spec import ENTRY_POINT_GROUP


def entry_points() -> dict[str, md.EntryPoint]:
    """Installed ``geneb.embedders`` entry points (scanning every dist-info costs ~10 ms, so
    the answer is kept per ``sys.path``: a package added to the path is seen)."""
    return _entry_points_on(tuple(sys.path))


@functools.lru_cache(maxsize=8)
def _entry_points_on(path: tuple[str, ...]) -> dict[str, md.EntryPoint]:
    return {ep.name: ep for ep in md.entry_points(group=ENTRY_POINT_GROUP)}


def load_plugin(name: str, ep: md.EntryPoint) -> Any:
    """The plugin's factory; an import failure is one line naming the plugin."""
    try:
        return ep.load()
    except Exception as e:
        raise ModelError(f"plugin embedder {name!r} ({ep.value}) failed to load: {e}") from e


def plugin_options(factory: Any) -> tuple[str, ...]:
    """Options a plugin factory takes: its declaration, else its keyword parameters."""
    declared = getattr(factory, "geneb_options", None)
    if declared is not None:
        return tuple(declared)
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
        return tuple(OPTION_DEFAULTS)
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return (ANY_OPTION,)  # **kwargs: the plugin takes (and answers for) any option
    kinds = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return tuple(p.name for p in params if p.kind in kinds)
