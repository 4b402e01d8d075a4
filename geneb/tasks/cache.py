"""Where fetched tasks live: ``$GENEB_CACHE`` or ``~/.cache/geneb``.

Layout: ``tasks/<name>/`` (task folders), ``variants/<name>/`` (variant folders),
``downloads/`` (verified URL downloads, :mod:`geneb.tasks.download`) and ``hf/`` (the
Hugging Face hub cache used for hub datasets). Only complete folders are ever visible under
``tasks/`` and ``variants/``: a fetch builds in a hidden temporary folder and renames it at
the end.

Temporary folders and partial downloads are named ``.<name>.partial-<host>-<pid>-<random>``:
the fetch that owns one removes it on any exit it sees (an error, Ctrl-C, SIGTERM), and a
fetch killed outright (SIGKILL, power loss) leaves one that the next fetch on the same host
removes once that process is gone (:func:`sweep_partials`).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from geneb.vocabulary import CLASSIFICATION, VARIANTS

CACHE_ENV = "GENEB_CACHE"
#: written last into every fetched folder; its presence marks the folder complete
FETCH_RECORD = "fetch.json"
#: marks a temporary folder or partial download (never a complete one)
PARTIAL = ".partial-"
_OWNER = re.compile(r"\.partial-(?P<host>.+)-(?P<pid>\d+)-[^-]+$")


def cache_root(cache: str | os.PathLike[str] | None = None) -> Path:
    """``cache`` if given, else ``$GENEB_CACHE``, else ``~/.cache/geneb``."""
    if cache is not None and str(cache) != "":
        return Path(cache).expanduser()
    env = os.environ.get(CACHE_ENV)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "geneb"


def kind_dir(root: Path, kind: str) -> Path:
    """``tasks/`` for classification tasks, ``variants/`` for variant sets."""
    return root / ("variants" if kind == VARIANTS else "tasks")


def fetched_folders(kind: str = CLASSIFICATION, cache: str | None = None) -> dict[str, Path]:
    """Complete fetched folders of one kind, by name (sorted); {} when nothing was fetched."""
    base = kind_dir(cache_root(cache), kind)
    if not base.is_dir():
        return {}
    return {
        p.name: p
        for p in sorted(base.iterdir())
        if p.is_dir() and not p.name.startswith(".") and (p / FETCH_RECORD).is_file()
    }


def partial_prefix(name: str) -> str:
    """``.<name>.partial-<host>-<pid>-``: the start of a temporary name this process owns."""
    return f".{name}{PARTIAL}{socket.gethostname()}-{os.getpid()}-"


def _owner_gone(name: str) -> bool:
    """True when ``name`` is a partial of a process on this host that no longer runs."""
    m = _OWNER.search(name)
    if m is None or m["host"] != socket.gethostname():
        return False  # another host's, or not ours to judge
    try:
        os.kill(int(m["pid"]), 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError):
        return False
    return False


def sweep_partials(root: Path, subs: Iterable[str] = ("tasks", "variants", "downloads"),
                   prefix: str = "") -> list[Path]:  # fmt: skip
    """Remove partials left by fetches on this host that were killed; return what went.

    ``subs``: the folders of ``root`` to look in (``"."``: ``root`` itself); ``prefix``: only
    names starting with it (a report's staging folders among the user's files). A live
    fetch's partial (its process still runs) is left alone, so concurrent fetches
    into one cache are safe.
    """
    gone: list[Path] = []
    for sub in subs:
        base = root / sub
        if not base.is_dir():
            continue
        for p in base.iterdir():
            if p.name.startswith(prefix) and PARTIAL in p.name and _owner_gone(p.name):
                if p.is_dir() and not p.is_symlink():
                    shutil.rmtree(p, ignore_errors=True)
                else:
                    p.unlink(missing_ok=True)
                gone.append(p)
    return gone


@contextlib.contextmanager
def terminate_cleanly() -> Iterator[None]:
    """While fetching, SIGTERM and SIGHUP unwind like Ctrl-C (``SystemExit(128 + signal)``),
    so every temporary folder and partial download is removed on the way out; the previous
    handlers are restored. Only the main thread can install handlers; elsewhere (and after
    SIGKILL) the next fetch's sweep cleans up."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def _exit(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    previous = {sig: signal.signal(sig, _exit) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def remove_empty(dirs: Iterable[Path]) -> None:
    """Remove the folders of ``dirs`` that are empty, deepest first (a failed first fetch
    leaves no empty cache behind)."""
    for d in sorted(dirs, key=lambda p: len(p.parts), reverse=True):
        with contextlib.suppress(OSError):
            d.rmdir()
