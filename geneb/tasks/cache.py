"""Where fetched tasks live: ``$GENEB_CACHE`` or ``~/.cache/geneb``.

Layout: ``tasks/<name>/`` (task folders), ``variants/<name>/`` (variant folders),
``downloads/`` (verified URL downloads, by pooch) and ``hf/`` (the Hugging Face hub cache
used for hub datasets). Only complete folders are ever visible under ``tasks/`` and
``variants/``: a fetch builds in a hidden temporary folder and renames it at the end.
"""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "GENEB_CACHE"
#: written last into every fetched folder; its presence marks the folder complete
FETCH_RECORD = "fetch.json"


def cache_root(cache: str | os.PathLike[str] | None = None) -> Path:
    """``cache`` if given, else ``$GENEB_CACHE``, else ``~/.cache/geneb``."""
    if cache is not None and str(cache) != "":
        return Path(cache).expanduser()
    env = os.environ.get(CACHE_ENV)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "geneb"


def kind_dir(root: Path, kind: str) -> Path:
    """``tasks/`` for classification tasks, ``variants/`` for variant sets."""
    return root / ("variants" if kind == "variants" else "tasks")


def fetched_folders(kind: str = "classification", cache: str | None = None) -> dict[str, Path]:
    """Complete fetched folders of one kind, by name (sorted); {} when nothing was fetched."""
    base = kind_dir(cache_root(cache), kind)
    if not base.is_dir():
        return {}
    return {
        p.name: p
        for p in sorted(base.iterdir())
        if p.is_dir() and not p.name.startswith(".") and (p / FETCH_RECORD).is_file()
    }
