"""GENEB's task list as the results layer uses it: GENEB id <-> catalogue name, and GENEB's
leaderboard order (the order GENEB sums in), from ``geneb/tasks/geneb_list.json``."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from geneb.tasks.geneb_list import catalogue_names, geneb_tasks

__all__ = ["catalogue_names", "catalogue_to_geneb_id", "geneb_task_ids", "geneb_task_order"]


def geneb_task_ids() -> list[str]:
    """GENEB's 100 task ids in leaderboard order."""
    return [t.id for t in geneb_tasks()]


@lru_cache(maxsize=1)
def _positions() -> dict[str, int]:
    """GENEB id or catalogue name -> leaderboard position."""
    position: dict[str, int] = {}
    for i, t in enumerate(geneb_tasks()):
        position[t.id] = i
        if t.catalogue_name:
            position.setdefault(t.catalogue_name, i)
    return position


def catalogue_to_geneb_id() -> dict[str, str]:
    """Task name -> GENEB task id: each catalogue name of GENEB's tasks, and each GENEB id
    itself (a user's rows may name a task either way)."""
    names = catalogue_names()
    out = {name: tid for tid, name in names.items()}
    out.update({t.id: t.id for t in geneb_tasks()})
    return out


def geneb_task_order(tasks: Sequence[str]) -> list[int]:
    """Positions that put ``tasks`` (GENEB ids or catalogue names) in GENEB's leaderboard
    order, the order GENEB sums in; tasks GENEB does not have follow, by name."""
    position = _positions()
    far = len(position) + 1
    return sorted(range(len(tasks)), key=lambda i: (position.get(tasks[i], far), tasks[i]))
