"""Other benchmarks' names for catalogue tasks: the one place a task alias is looked up.

A study names its tasks its own way: GENEB's task ids (``leannmlindsey_GUE_mouse_0``, the
stems of its task files) and, later, other suites' names. Each such set of names is an
*alias table* (alias -> catalogue task name), registered in :data:`ALIAS_TABLES` by study;
:func:`catalogue_name_for` maps any known alias to its catalogue name, and everything that
resolves a task name (``resolve_task``, ``geneb tasks fetch --study``) asks it, so a new set
of names is one more table here and nothing else.

A table is a function returning ``{alias: catalogue name}``; tables may not disagree (one
alias, two catalogue names), which :func:`alias_map` refuses in one line.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache

from geneb.errors import TaskError, UnknownNameError, did_you_mean


def _geneb_table() -> dict[str, str]:
    from geneb.tasks.geneb_list import catalogue_names

    return catalogue_names()


#: study -> its alias table (alias -> catalogue task name), in lookup order. GENEB: the 100
#: task ids of GENEB's leaderboard (``geneb_list.json``).
ALIAS_TABLES: dict[str, Callable[[], Mapping[str, str]]] = {
    "GENEB": _geneb_table,
}


@lru_cache(maxsize=1)
def alias_map() -> dict[str, tuple[str, str]]:
    """Every known alias -> (catalogue name, study that names it so)."""
    out: dict[str, tuple[str, str]] = {}
    for study, table in ALIAS_TABLES.items():
        for alias, name in table().items():
            if alias in out and out[alias][0] != name:
                raise TaskError(
                    f"task alias {alias!r} names {out[alias][0]!r} in {out[alias][1]} and "
                    f"{name!r} in {study}; an alias must name one catalogue task"
                )
            out.setdefault(alias, (name, study))
    return out


def catalogue_name_for(name: str) -> str | None:
    """The catalogue task name that ``name`` is an alias of (None: not an alias)."""
    hit = alias_map().get(name)
    return hit[0] if hit else None


def study_names(study: str) -> list[str]:
    """The catalogue names of every task a study names, in the study's order."""
    if study not in ALIAS_TABLES:
        close = did_you_mean(study, ALIAS_TABLES)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise UnknownNameError(
            f"unknown study {study!r}.{hint} Known studies: {', '.join(ALIAS_TABLES)}"
        )
    return list(dict.fromkeys(ALIAS_TABLES[study]().values()))
