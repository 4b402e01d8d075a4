"""Audits are computed once per task content: cached under ``$GENEB_CACHE/audit/``.

The key is a sha256 of the audit version and every split's fingerprint (sequences, labels and
order), so an edited task is audited again and a renamed copy is not. The report reads the
same files (by task name and train fingerprint, the one the results table records), so the
data flow stays one way: tasks -> audit files -> report.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from geneb.audit.record import read_record, seal
from geneb.audit.run import AUDIT_VERSION, audit_task
from geneb.errors import GenebError
from geneb.store.keys import safe_name
from geneb.tasks.cache import CACHE_ENV, cache_root
from geneb.tasks.spec import Task

AUDIT_DIR = "audit"


def audit_key(task: Task) -> str:
    """sha256 of the audit version and the task's split fingerprints."""
    fps = "|".join(f"{s}={fp}" for s, fp in sorted(task.fingerprints().items()))
    return hashlib.sha256(f"geneb-audit-v{AUDIT_VERSION}|{fps}".encode()).hexdigest()


def audit_dir(cache: str | os.PathLike[str] | None = None) -> Path:
    """``<cache root>/audit`` (``$GENEB_CACHE`` or ``~/.cache/geneb`` unless given)."""
    return cache_root(None if cache is None else str(cache)) / AUDIT_DIR


def audit_file_name(task: Task) -> str:
    """``<safe task key>.json``: the name of a task's audit file in ``--out`` folders, made
    from geneb's own safe key of the loaded task's name, never from a file's content."""
    return f"{safe_name(task.name)}.json"


def _path(task: Task, cache: str | os.PathLike[str] | None) -> Path:
    return audit_dir(cache) / f"{safe_name(task.name)}-{audit_key(task)[:24]}.json"


def _cached(task: Task, path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """(the cached record, None) when ``path`` holds a usable audit of ``task`` (digest,
    shape, verdict, and bound to the task's content and name); else (None, why not)."""
    if not path.is_file():
        return None, None if not path.exists() else "not a file"
    rec, why = read_record(path)
    if rec is None:
        return None, why
    if rec["audit_key"] != audit_key(task) or rec["fingerprints"] != task.fingerprints():
        return None, "it was computed from other task content"
    if rec["task"] != task.name:
        return None, f"it names task {rec['task']!r:.60}, not {task.name!r}"
    copies = _copy_counts(task)  # cheap (hashing): a resealed record hiding copies is caught
    if any(rec[k] != v for k, v in copies.items()):
        return None, "its copy counts are not this task's"
    return rec, None


def _copy_counts(task: Task) -> dict[str, int]:
    """The record's exact and reverse-complement copy counts, recomputed from the task."""
    from geneb.audit.duplicates import across_splits

    train, test = task.split("train"), task.split("test")
    d = across_splits(train.sequences, train.labels, test.sequences, test.labels)
    return {"exact_duplicates_across_splits": d["exact"],
            "label_conflicts_across_splits": d["label_conflicts"],
            "revcomp_duplicates_across_splits": d["revcomp"],
            "revcomp_label_conflicts_across_splits": d["revcomp_label_conflicts"]}


def _check_cache_dir(folder: Path, given: bool) -> None:
    """A clear error when the audit cache folder cannot be one (a file on its path)."""
    for p in (folder, *folder.parents):
        if p.exists():
            if not p.is_dir():
                where = "the cache given" if given else f"${CACHE_ENV}"
                raise GenebError(f"audit cache {str(folder)!r}: {str(p)!r} is a file, expected "
                                 f"a folder (check {where})")
            return


def cached_audit(
    task: Task, *, cache: str | os.PathLike[str] | None = None, refresh: bool = False,
    say: Callable[[str], Any] | None = None,
) -> dict[str, Any]:
    """The task's audit from the cache, computed and stored when absent (or ``refresh``).

    A cached file that is not a usable record of this task (edited, damaged, of another
    shape or content: ``geneb.audit.record``) is recomputed and replaced, and ``say`` (when
    given) gets one line saying so."""
    from geneb.store._files import write_json

    path = _path(task, cache)
    _check_cache_dir(path.parent, cache is not None and str(cache) != "")
    if not refresh:
        cached, why = _cached(task, path)
        if cached is not None:
            cached["cached"] = True
            return cached
        if why is not None and say is not None:
            say(f"audit cache {path}: {why}; recomputed")
    record = audit_task(task)
    record["audit_key"] = audit_key(task)
    record = seal(record)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_dir():
        raise GenebError(f"audit cache {str(path)!r} is a folder, expected a file "
                         "(remove it)")
    write_json(path, record)
    record["cached"] = False
    return record


def find_audits(
    tasks: Iterable[tuple[str, str]], folder: str | os.PathLike[str] | None = None
) -> dict[str, dict[str, Any]]:
    """Audit records for (task name, train fingerprint) pairs, by task name; a task without a
    matching record (never audited, or audited on other data) is left out. ``folder``: a
    folder of audit JSON files (``geneb tasks audit --out``); default the cache's."""
    base = Path(folder) if folder is not None else audit_dir()
    wanted = dict(tasks)
    out: dict[str, dict[str, Any]] = {}
    if not base.is_dir():
        return out
    for p in sorted(base.glob("*.json")):
        rec, _ = read_record(p)  # edited, damaged or of another shape: never used
        if rec is None:
            continue
        name = rec["task"]
        fp = rec["fingerprints"].get("train")
        if name in wanted and (not wanted[name] or wanted[name] == fp):
            out[name] = rec
    return out
