"""Audit several tasks: by name (``geneb tasks audit``) or fetched folders (``tasks fetch``)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from geneb.audit.cache import audit_file_name, cached_audit
from geneb.constraints import validate_params
from geneb.errors import GenebError


def _out_folder(out: str | os.PathLike[str] | None) -> Path | None:
    """The folder for the audit files, created; an error when it cannot be one."""
    if out is None:
        return None
    path = Path(out).expanduser()
    if path.exists() and not path.is_dir():
        raise GenebError(f"out: {os.fspath(out)!r} exists and is not a folder (expected a "
                         "folder for the audit JSON files)", param="out")
    path.mkdir(parents=True, exist_ok=True)
    return path


@validate_params({})
def audit_tasks(
    names: Sequence[str],
    *,
    data_dir: str | None = None,
    refresh: bool = False,
    cache: str | None = None,
    out: str | os.PathLike[str] | None = None,
    say: Callable[[str], None] = lambda line: None,
) -> list[dict[str, Any]]:
    """Audit every task named (cached under ``$GENEB_CACHE/audit``, or ``cache``).

    Parameters
    ----------
    names : sequence of str
        Task names or folders; every task is loaded before the first audit, so a bad name
        fails before any work.
    data_dir : str, optional
        Where task names are looked up.
    refresh : bool
        Recompute even when a cached audit exists.
    cache : str, optional
        The cache folder (default ``$GENEB_CACHE``).
    out : str or os.PathLike, optional
        A folder that also receives each audit as ``<task>.json`` (created when missing).
    say : callable
        Receives one line when a cached audit cannot be used and is recomputed.

    Returns
    -------
    list of dict
        One audit record per task, in the order named.
    """
    from geneb.audit.record import seal
    from geneb.store._files import write_json
    from geneb.tasks.folders import resolve_task

    folder = _out_folder(out)
    tasks = [resolve_task(n, data_dir) for n in names]
    records = []
    for t in tasks:
        r = cached_audit(t, refresh=refresh, cache=cache, say=say)
        if folder is not None:  # the name is geneb's safe key of the loaded task's name
            write_json(folder / audit_file_name(t), seal(r))
        records.append(r)
    return records


@validate_params({})
def audit_folders(
    folders: Sequence[str | os.PathLike[str]],
    *,
    cache: str | None = None,
    say: Callable[[str], None] = lambda line: None,
) -> list[dict[str, Any]]:
    """Audit task folders (those a fetch wrote), cached under ``cache``.

    Parameters
    ----------
    folders : sequence of path
        Task folders.
    cache : str, optional
        The cache folder (the fetch's; default ``$GENEB_CACHE``).
    say : callable
        Receives one line when a cached audit cannot be used and is recomputed.

    Returns
    -------
    list of dict
        One audit record per folder.
    """
    from geneb.tasks.loader import load_task_folder

    return [cached_audit(load_task_folder(f), cache=cache, say=say) for f in folders]
