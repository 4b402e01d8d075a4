"""GENEB's published task list, and how the task catalogue compares with it.

``geneb_list.json`` (next to this module) holds the 100 classification tasks of GENEB's
leaderboard with GENEB's category (as a geneb category slug) and, where the task catalogue has
the same dataset, the catalogue entry's name (matched by source: NT, NT revised, GUE, GUE+,
Genomic Benchmarks). :func:`compare_categories` counts per category what GENEB has, what the
catalogue has, how many of GENEB's tasks the catalogue holds, and where the two disagree on a
shared task's category (``geneb tasks catalogue --compare-geneb``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from geneb.errors import TaskError
from geneb.tasks.spec import CATEGORIES
from geneb.vocabulary import CLASSIFICATION

GENEB_LIST_FILE = Path(__file__).with_name("geneb_list.json")


@dataclass(frozen=True)
class GenebTask:
    """One task of GENEB's published list."""

    id: str
    label: str
    category: str
    catalogue_name: str | None


@lru_cache(maxsize=1)
def geneb_tasks() -> tuple[GenebTask, ...]:
    """GENEB's 100 tasks, checked: known categories, unique ids."""
    data = json.loads(GENEB_LIST_FILE.read_text(encoding="utf-8"))
    out = []
    for i, raw in enumerate(data["tasks"]):
        if raw.get("category") not in CATEGORIES:
            raise TaskError(
                f"{GENEB_LIST_FILE.name} task {i + 1}: category must be one of "
                f"{list(CATEGORIES)}, got {raw.get('category')!r}"
            )
        out.append(GenebTask(raw["id"], raw["label"], raw["category"], raw["catalogue_name"]))
    if len({t.id for t in out}) != len(out):
        raise TaskError(f"{GENEB_LIST_FILE.name}: a task id appears twice")
    return tuple(out)


@lru_cache(maxsize=1)
def catalogue_names() -> dict[str, str]:
    """GENEB task id -> the catalogue name of that task (where the catalogue has it)."""
    return {t.id: t.catalogue_name for t in geneb_tasks() if t.catalogue_name}


def geneb_source() -> str:
    """Where the list comes from (a pinned URL)."""
    return str(json.loads(GENEB_LIST_FILE.read_text(encoding="utf-8"))["source"])


def compare_categories(entries: Sequence[Any]) -> dict[str, Any]:
    """Category counts of GENEB's list against the catalogue's classification ``entries``.

    Returns ``{"source", "n_geneb", "n_catalogue", "n_shared", "categories": [{category,
    geneb, catalogue, shared}], "disagreements": [{task, catalogue_category,
    geneb_category}], "missing": [GENEB task ids the catalogue lacks]}``.
    """
    cls = [e for e in entries if e.kind == CLASSIFICATION]
    by_name = {e.name: e for e in cls}
    tasks = geneb_tasks()
    shared = [t for t in tasks if t.catalogue_name in by_name]
    rows = []
    for c in CATEGORIES:
        rows.append(
            {
                "category": c,
                "geneb": sum(t.category == c for t in tasks),
                "catalogue": sum(e.category == c for e in cls),
                "shared": sum(t.category == c for t in shared),
            }
        )
    disagreements = [
        {
            "task": t.catalogue_name,
            "catalogue_category": by_name[t.catalogue_name].category,
            "geneb_category": t.category,
        }
        for t in shared
        if by_name[t.catalogue_name].category != t.category
    ]
    return {
        "source": geneb_source(),
        "n_geneb": len(tasks),
        "n_catalogue": len(cls),
        "n_shared": len(shared),
        "categories": rows,
        "disagreements": disagreements,
        "missing": [t.id for t in tasks if t.catalogue_name not in by_name],
    }
