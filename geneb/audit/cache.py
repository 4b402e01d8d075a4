"""Audits are computed once per task content: cached under ``$GENEB_CACHE/audit/``.

The key is a sha256 of the audit version and every split's fingerprint (sequences, labels and
order), so an edited task is audited again and a renamed copy is not. The report reads the
same files (by task name and train fingerprint, the one the results table records), so the
data flow stays one way: tasks -> audit files -> report.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from geneb.audit.run import AUDIT_VERSION, audit_task
from geneb.tasks.cache import cache_root
from geneb.tasks.spec import Task

AUDIT_DIR = "audit"


def audit_key(task: Task) -> str:
    """sha256 of the audit version and the task's split fingerprints."""
    fps = "|".join(f"{s}={fp}" for s, fp in sorted(task.fingerprints().items()))
    return hashlib.sha256(f"geneb-audit-v{AUDIT_VERSION}|{fps}".encode()).hexdigest()


def audit_dir(cache: str | os.PathLike[str] | None = None) -> Path:
    """``<cache root>/audit`` (``$GENEB_CACHE`` or ``~/.cache/geneb`` unless given)."""
    return cache_root(None if cache is None else str(cache)) / AUDIT_DIR


def _path(task: Task, cache: str | os.PathLike[str] | None) -> Path:
    return audit_dir(cache) / f"{task.name}-{audit_key(task)[:24]}.json"


def cached_audit(
    task: Task, *, cache: str | os.PathLike[str] | None = None, refresh: bool = False
) -> dict[str, Any]:
    """The task's audit from the cache, computed and stored when absent (or ``refresh``)."""
    from geneb.store._files import write_json

    path = _path(task, cache)
    if path.is_file() and not refresh:
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            if record.get("audit_key") == audit_key(task):
                record["cached"] = True
                return record
        except (OSError, json.JSONDecodeError):
            pass  # unreadable cache file: recompute and replace it
    record = audit_task(task)
    record["audit_key"] = audit_key(task)
    path.parent.mkdir(parents=True, exist_ok=True)
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
        try:
            rec = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError, UnicodeDecodeError):
            continue
        if not isinstance(rec, dict):
            continue
        name = rec.get("task")
        fp = (rec.get("fingerprints") or {}).get("train")
        if name in wanted and (not wanted[name] or wanted[name] == fp):
            out[name] = rec
    return out
