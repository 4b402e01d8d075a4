"""GENEB's own copies of its 100 tasks, as fetchable entries named by GENEB's task ids.

``geneb tasks fetch --study GENEB`` fetches each task from the source its GENEB id names (the
catalogue entry). That is the source's data, not always GENEB's: GENEB built its task files
once (tasks over 100,000 train rows subsampled, dev splits dropped, its own row order), and
its k-shot draws index the train rows of *its* files. To run GENEB's protocol on exactly its
rows, ``--study-data`` fetches GENEB's task dataset instead (``geneb_list.json``
``dataset``: hub, pinned revision, per-task file layout): one entry per GENEB id, named by
that id, so the id then resolves to GENEB's copy (a fetched task of that name is found before
the id is read as an alias of its catalogue task, :mod:`geneb.tasks.folders`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from geneb.errors import UnknownNameError
from geneb.tasks.catalogue import TaskCatalogueEntry, parse_entry
from geneb.tasks.geneb_list import GENEB_LIST_FILE, catalogue_names, geneb_tasks
from geneb.vocabulary import CLASSIFICATION

#: the suite of GENEB's own copies
SUITE = "geneb_copies"


def _dataset() -> dict[str, Any]:
    data = json.loads(GENEB_LIST_FILE.read_text(encoding="utf-8"))
    return dict(data["dataset"])


@lru_cache(maxsize=1)
def geneb_copy_entries() -> tuple[TaskCatalogueEntry, ...]:
    """One entry per GENEB task: its GENEB id, GENEB's category, GENEB's dataset files."""
    ds = _dataset()
    out = []
    for t in geneb_tasks():
        obj = {
            "name": t.id,
            "suite": SUITE,
            "kind": CLASSIFICATION,
            "category": t.category,
            "category_reason": "GENEB's own category for its task",
            "source": {"hub": ds["hub"], "revision": ds["revision"],
                       "files": {role: path.format(id=t.id)
                                 for role, path in ds["files"].items()}},  # fmt: skip
            "format": "csv",
            "columns": ds["columns"],
            "license": ds["license"],
            "checked": ["category", "suite"],
            "evidence": ds["evidence"],
            "description": f"GENEB's copy of {t.label}",
            "notes": f"catalogue task: {t.catalogue_name}" if t.catalogue_name else "",
        }
        out.append(parse_entry(obj, f"{GENEB_LIST_FILE.name} dataset ({t.id})"))
    return tuple(out)


def select_copies(names: Iterable[str]) -> list[TaskCatalogueEntry]:
    """GENEB's copies named by GENEB id or by catalogue name; every copy when ``names`` is
    empty."""
    entries = geneb_copy_entries()
    names = list(names)
    if not names:
        return list(entries)
    by_id = {e.name: e for e in entries}
    by_catalogue = {name: tid for tid, name in catalogue_names().items()}
    out: list[TaskCatalogueEntry] = []
    for n in names:
        gid = n if n in by_id else by_catalogue.get(n)
        if gid is None:
            raise UnknownNameError(
                f"{n!r} is not one of GENEB's tasks (a GENEB id or the catalogue name of one); "
                f"GENEB's own task data hold its 100 tasks only"
            )
        if by_id[gid] not in out:
            out.append(by_id[gid])
    return out
