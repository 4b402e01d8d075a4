"""Which catalogue entry a loaded task is, if any: by fetch record, fingerprint or size.

A task folder named like a catalogue task need not hold that task's data (the staged
``gue_tf_0`` holds 20,000 of GUE ``human_tf_0``'s 32,378 train rows), and a folder of another
name may. :func:`catalogue_match` says which entry a task matches and how it knows:

- ``fetch record``: the folder is that entry as ``geneb tasks fetch`` wrote it;
- ``fingerprint``: its splits equal, row for row, the fetched copy of that entry in the cache;
- ``size``: its split sizes equal every size the catalogue states for that entry (the data
  are not compared: equal sizes are evidence, not proof);

or that it matches none, naming the nearest candidate and the sizes that differ. Candidates:
the entry of the task's name, of the alias its name is (a GENEB id), entries of equal stated
sizes, and entries of a close name (``gue_tf_0`` -> ``gue_human_tf_0``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from geneb.errors import GenebError, did_you_mean
from geneb.tasks.spec import Task
from geneb.vocabulary import CLASSIFICATION

#: what a task's sizes are compared on (a valid split is compared only where both have one)
COMPARED_SPLITS = ("train", "valid", "test")


def task_sizes(task: Task) -> dict[str, int]:
    """Rows per split as in the source (a train split capped at load counts its full size)."""
    sizes = {s: len(d) for s, d in task.splits.items()}
    capped = task.metadata.get("subsampled", {}).get("train")
    if capped:
        sizes["train"] = int(capped["original_rows"])
    return sizes


def _size_differences(sizes: dict[str, int], entry: Any) -> list[str] | None:
    """Splits whose stated size differs (``[]``: all equal), None when none can be compared."""
    shared = [s for s in COMPARED_SPLITS if entry.sizes.get(s) is not None and s in sizes]
    if "train" not in shared or "test" not in shared:
        return None
    return [f"{s} {sizes[s]:,} (catalogue {entry.sizes[s]:,})" for s in shared
            if sizes[s] != entry.sizes[s]]  # fmt: skip


def _fetch_record(task: Task) -> dict[str, Any] | None:
    from geneb.tasks.cache import FETCH_RECORD

    path = Path(str(task.spec.path or "")) / FETCH_RECORD
    try:
        rec = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return rec if isinstance(rec, dict) else None


def _same_as_fetched(task: Task, name: str) -> bool | None:
    """Whether ``task`` equals the fetched copy of ``name`` split by split (None: no copy)."""
    from geneb.tasks.cache import fetched_folders
    from geneb.tasks.loader import load_task_folder

    folder = fetched_folders().get(name)
    if folder is None or str(folder.resolve()) == str(task.spec.path):
        return None
    try:
        other = load_task_folder(folder, train_row_cap=None)
    except GenebError:
        return None
    mine = {s: d.fingerprint for s, d in task.splits.items() if s != "valid"}
    theirs = {s: d.fingerprint for s, d in other.splits.items() if s in mine}
    return not task.metadata.get("subsampled") and mine == theirs


def _candidates(task: Task, by_name: dict[str, Any], sizes: dict[str, int]) -> list[str]:
    from geneb.tasks.aliases import catalogue_name_for

    names = [task.name, catalogue_name_for(task.name), task.metadata.get("catalogue_name")]
    names += [e.name for e in by_name.values() if _size_differences(sizes, e) == []]
    names += did_you_mean(task.name, by_name)  # near names: said when they differ
    return [n for n in dict.fromkeys(names) if n in by_name]


def catalogue_match(task: Task) -> dict[str, Any]:
    """``{"entry": name or None, "by": "fetch record" | "fingerprint" | "size" | None,
    "detail": one line, "differs_from": {entry known to hold other data: how}}`` for a
    classification task (see the module docstring)."""
    from geneb.tasks.catalogue import load_task_catalogue

    by_name = {e.name: e for e in load_task_catalogue() if e.kind == CLASSIFICATION}
    rec = _fetch_record(task)
    if rec is not None and rec.get("name") in by_name:
        how = f"fetched from {rec.get('source', '?')} by geneb tasks fetch"
        return {"entry": rec["name"], "by": "fetch record", "detail": how, "differs_from": []}
    sizes = task_sizes(task)
    near: dict[str, str] = {}
    for name in _candidates(task, by_name, sizes):
        same = _same_as_fetched(task, name)
        if same:
            return {"entry": name, "by": "fingerprint", "differs_from": near,
                    "detail": f"every split equals the fetched copy of {name}"}  # fmt: skip
        diff = _size_differences(sizes, by_name[name])
        if same is None and diff == []:
            stated = ", ".join(f"{s} {sizes[s]:,}" for s in COMPARED_SPLITS
                               if by_name[name].sizes.get(s) is not None and s in sizes)
            return {"entry": name, "by": "size", "differs_from": near,
                    "detail": f"split sizes equal the catalogue's ({stated}); data not compared"}
        if same is False:
            near[name] = "splits differ from its fetched copy"
        elif diff:
            near[name] = ", ".join(diff)
    said = "; ".join(f"{n}: {why}" for n, why in near.items())
    detail = ("matches no catalogue entry" + (f" ({said})" if near else
              " (no entry of this name, alias or split sizes)"))  # fmt: skip
    return {"entry": None, "by": None, "detail": detail, "differs_from": near}
