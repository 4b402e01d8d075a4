"""GFMBench-API's 20 tasks by class name, and the task-catalogue entries each one is.

``gfmbench_list.json`` (next to this module) records, per GFMBench task class
(``GuePromoterAllTask``, ``BRCA1Task``, ...; NVIDIA/GFMBench-api @ bab164e): its task name,
module and base class, the geneb task kind it is, its default window, what GFMBench's code
downloads, and ``catalogue``: the geneb catalogue entries holding the same data, with
``match`` (``same``; ``differs``: how, in ``notes``; ``none``: ``missing`` says why geneb cannot
fetch it). Where a class name is taken: :func:`expand_gfmbench_names` (the one hook in the
catalogue's name lookup, ``geneb.tasks.catalogue.select``: ``geneb tasks fetch BRCA1Task``) and
``geneb.load_task("BRCA1Task")``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from geneb import constraints as c
from geneb.errors import TaskError
from geneb.vocabulary import GFMBENCH_KINDS

GFMBENCH_LIST_FILE = Path(__file__).with_name("gfmbench_list.json")
MATCHES = ("same", "differs", "none")
BASES = ("BaseGFMSupervisedSingleSeqTask", "BaseGFMSupervisedVariantEffectTask",
         "BaseGFMZeroShotSNVTask", "BaseGFMZeroShotGeneralIndelTask")
_NAME = c.Pattern(r"[A-Za-z][A-Za-z0-9_]*", "a Python identifier")

#: What each key of an entry must be; the rules between keys are in :func:`_parse`.
_ENTRY: dict[str, c.Constraint] = {
    "class": _NAME,
    "gfmbench_name": _NAME,
    "module": c.String(),
    "base": c.StrOptions(BASES),
    "geneb_kind": c.StrOptions(GFMBENCH_KINDS),
    "default_max_seq_len": c.Interval(int, 1, None),
    "n_labels": c.Nullable(c.Interval(int, 2, None)),
    "source": c.String(),
    "license": c.Nullable(c.TEXT),
    "catalogue": c.ListOf(c.String(), min_len=0, scalar_ok=False, unique=True),
    "match": c.StrOptions(MATCHES),
    "notes": c.TEXT,
    "missing": c.Nullable(c.String()),
}


@dataclass(frozen=True)
class GfmbenchTask:
    """One GFMBench-API task class and the geneb catalogue entries it maps to."""

    cls: str
    gfmbench_name: str
    module: str
    base: str
    geneb_kind: str
    default_max_seq_len: int
    n_labels: int | None
    source: str
    license: str | None
    catalogue: tuple[str, ...]
    match: str
    notes: str
    missing: str | None


def _parse(raw: object, where: str) -> GfmbenchTask:
    if not isinstance(raw, dict):
        raise TaskError(f"{where}: expected an object, got {raw!r}")
    unknown = sorted(set(raw) - set(_ENTRY))
    if unknown:
        raise TaskError(f"{where}: unknown key {unknown[0]!r}; expected keys {sorted(_ENTRY)}")
    v = {k: c.check_as(con, raw.get(k), f"{where}: {k}", TaskError) for k, con in _ENTRY.items()}
    where = f"{where} ({v['class']})"
    if (v["match"] == "none") != (not v["catalogue"]):
        raise TaskError(f"{where}: match {v['match']!r} with catalogue {v['catalogue']!r}; "
                        "expected 'none' exactly when no catalogue entry is named")
    if (v["match"] == "none") != (v["missing"] is not None):
        raise TaskError(f"{where}: 'missing' (why geneb cannot fetch it) is given exactly for "
                        "match 'none'")
    if v["base"].startswith("BaseGFMSupervised") != (v["n_labels"] is not None):
        raise TaskError(f"{where}: 'n_labels' is given exactly for GFMBench's supervised "
                        "(classification) tasks")
    return GfmbenchTask(
        cls=v["class"], gfmbench_name=v["gfmbench_name"], module=v["module"], base=v["base"],
        geneb_kind=v["geneb_kind"], default_max_seq_len=v["default_max_seq_len"],
        n_labels=v["n_labels"], source=v["source"], license=v["license"],
        catalogue=tuple(v["catalogue"]), match=v["match"], notes=v["notes"],
        missing=v["missing"])


@lru_cache(maxsize=1)
def gfmbench_tasks() -> tuple[GfmbenchTask, ...]:
    """The 20 entries of ``gfmbench_list.json``, checked (schema, unique class names)."""
    where = GFMBENCH_LIST_FILE.name
    try:
        doc = json.loads(GFMBENCH_LIST_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise TaskError(f"{where}: not readable JSON: {e}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("tasks"), list):
        raise TaskError(f"{where}: expected an object with a 'tasks' list")
    out = tuple(_parse(raw, f"{where} task {i + 1}") for i, raw in enumerate(doc["tasks"]))
    names = [t.cls for t in out]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise TaskError(f"{where}: class {dup!r} appears twice")
    return out


def gfmbench_task(name: str) -> GfmbenchTask | None:
    """The entry of GFMBench class ``name`` (None when it is not one)."""
    return next((t for t in gfmbench_tasks() if t.cls == name), None)


def expand_gfmbench_names(names: Iterable[str]) -> list[str]:
    """``names`` with each GFMBench class name replaced by its catalogue entries' names.

    A class that maps to no entry raises ``TaskError`` saying why (its ``missing`` fact).
    """
    out: list[str] = []
    for n in names:
        t = gfmbench_task(n)
        if t is None:
            out.append(n)
        elif not t.catalogue:
            raise TaskError(f"GFMBench task {n!r} ({t.gfmbench_name}) has no geneb catalogue "
                            f"entry: {t.missing}")
        else:
            out.extend(t.catalogue)
    return out
