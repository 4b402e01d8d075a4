"""The task catalogue: published benchmark tasks, where they come from, and what was checked.

The catalogue is data (``catalogue.json`` next to this module, one object per task); this
module reads and validates it. Why a data file: each entry records facts about somebody
else's dataset (hub id and pinned revision, or URL and sha256, licence, class count, sizes),
which of those facts were checked against the source, where each count was read (``sources``),
and the reason a source task maps to one of GENEB's 13 categories. Facts that could not be
checked are ``null``; an entry whose source is not pinned (no revision, no sha256) is listed
but cannot be fetched.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from geneb import constraints as c
from geneb.errors import TaskError, UnknownNameError, did_you_mean
from geneb.tasks.gfmbench_list import expand_gfmbench_names
from geneb.tasks.loader import check_task_name
from geneb.tasks.sources import Source, parse_source
from geneb.tasks.spec import CATEGORIES
from geneb.vocabulary import CATALOGUE_KINDS, CLASSIFICATION

CATALOGUE_FILE = Path(__file__).with_name("catalogue.json")
SPLITS = ("train", "valid", "test")
#: converters geneb has (see ``geneb.tasks.convert``); ``null`` = none (not fetchable)
FORMATS = ("csv", "tsv", "parquet", "fasta_label_in_id", "variants_table")
#: facts that carry where their number was read (``sources``: fact -> URL or file path[s]);
#: a split size without a source is refused, so every stated size can be traced
SOURCED_FACTS = ("n_classes", "n_train", "n_valid", "n_test")
SIZE_FACTS = ("n_train", "n_valid", "n_test")


@dataclass(frozen=True)
class TaskCatalogueEntry:
    """One catalogued task (see the module docstring); ``checked`` lists the verified facts."""

    name: str
    suite: str
    kind: str
    category: str | None
    category_reason: str
    source: Source
    format: str | None
    columns: Mapping[str, str] | None
    license: str | None
    n_classes: int | None
    sizes: Mapping[str, int | None]
    seq_len: int | None
    checked: tuple[str, ...]
    evidence: str
    notes: str
    description: str
    sources: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def fetchable(self, reference_given: bool = False) -> str | None:
        """Why ``geneb tasks fetch`` refuses this entry, or None when it can run
        (``reference_given``: the user supplies the reference genome, ``--reference``)."""
        if self.source.missing:
            return self.source.missing
        if self.format is None:
            return "geneb has no converter for this source's format"
        return self.source.unpinned(reference_given)

    def all_checked(self) -> bool:
        """Every fact the entry states (non-null) is in ``checked``, and nothing is null."""
        return not self.unchecked_facts()

    def unchecked_facts(self) -> list[str]:
        """Facts that are null or stated without a check, by name."""
        out = []
        facts: dict[str, Any] = {"license": self.license}
        if self.kind == CLASSIFICATION:
            facts["n_classes"] = self.n_classes
        if self.source.hub:
            facts["source.revision"] = self.source.revision
            facts["source.files"] = self.source.files or None
            if any(f.url and not f.sha256 for f in self.source.files):  # e.g. a reference genome
                facts["source.sha256"] = None
        else:
            pinned = bool(self.source.files) and all(f.sha256 for f in self.source.files)
            facts["source.sha256"] = True if pinned else None
        for key, value in facts.items():
            if value is None or key not in self.checked:
                out.append(key)
        return out

    def as_json(self) -> dict[str, Any]:
        """The object ``geneb tasks catalogue --json`` prints."""
        return {
            "name": self.name,
            "suite": self.suite,
            "kind": self.kind,
            "category": self.category,
            "category_reason": self.category_reason,
            "source": self.source.describe(),
            "source_detail": dict(self.source.raw),
            "format": self.format,
            "license": self.license,
            "n_classes": self.n_classes,
            **{f"n_{s}": self.sizes.get(s) for s in SPLITS},
            "seq_len": self.seq_len,
            "checked": list(self.checked),
            "all_checked": self.all_checked(),
            "fetchable": self.fetchable() is None,
            "not_fetchable_because": self.fetchable(),
            "fetchable_with_reference": self.fetchable(reference_given=True) is None,
            "evidence": self.evidence,
            "notes": self.notes,
            "description": self.description,
            "sources": {k: list(v) for k, v in self.sources.items()},
        }


_COUNT = c.Nullable(c.Interval(int, 0, None))  # a size or class count; null: not checked
_FREE_TEXT = c.Nullable(c.TEXT)
#: What each key of an entry must be (absent = null); ``source`` and the rules between keys
#: are checked in :func:`parse_entry`.
_ENTRY: dict[str, c.Constraint] = {
    "suite": c.String(),
    "kind": c.StrOptions(CATALOGUE_KINDS),
    "category": c.Nullable(c.StrOptions(CATEGORIES)),
    "category_reason": c.String(),
    "format": c.Nullable(c.StrOptions(FORMATS)),
    "columns": c.Nullable(c.MappingOf(c.TEXT, c.TEXT)),  # geneb column -> source column
    "license": _FREE_TEXT,
    "n_classes": _COUNT,
    **{f"n_{s}": _COUNT for s in SPLITS},
    "seq_len": _COUNT,
    "checked": c.Nullable(c.ListOf(c.TEXT, min_len=0, scalar_ok=False)),  # fact names
    "evidence": _FREE_TEXT,
    "notes": _FREE_TEXT,
    "description": _FREE_TEXT,
    # fact -> where its number was read: one URL/path, or a non-empty list of them
    "sources": c.Nullable(c.MappingOf(c.StrOptions(SOURCED_FACTS), c.ListOf(c.String()))),
}


def _check(obj: Mapping[str, Any], key: str, where: str) -> Any:
    """``obj[key]`` (None when absent) checked against :data:`_ENTRY`; a failure is a
    ``TaskError`` (what callers catch) naming file, entry and key."""
    return c.check_as(_ENTRY[key], obj.get(key), f"{where}: {key}", TaskError)


def _parse_sources(obj: Mapping[str, Any], where: str) -> dict[str, tuple[str, ...]]:
    """``sources``: fact -> one or more URLs/paths; each stated size must have one.

    A source for a null fact is refused too (it would document nothing).
    """
    out = {fact: tuple(urls) for fact, urls in (_check(obj, "sources", where) or {}).items()}
    for fact in out:
        if obj.get(fact) is None:
            raise TaskError(f"{where}: sources[{fact!r}] given but {fact!r} is null")
    for fact in SIZE_FACTS:
        if obj.get(fact) is not None and fact not in out:
            raise TaskError(
                f"{where}: {fact!r} is {obj[fact]!r} but has no source; expected "
                f"sources[{fact!r}] (the URL or file it was read from) or {fact!r}: null"
            )
    return out


def parse_entry(obj: Any, where: str) -> TaskCatalogueEntry:
    """Validate one catalogue object; errors name the file, the entry and the key
    (``task catalogue F entry 3 (nt_h3): n_classes: expected null or a non-negative int,
    got '2'``)."""
    if not isinstance(obj, dict):
        raise TaskError(f"{where}: expected an object, got {obj!r}")
    name = c.check_as(c.TEXT, obj.get("name"), f"{where}: name", TaskError)
    check_task_name(name, where)
    where = f"{where} ({name})"
    v = {key: _check(obj, key, where) for key in _ENTRY if key != "sources"}
    if v["category"] is None and v["kind"] == CLASSIFICATION:
        raise TaskError(f"{where}: a classification task needs a 'category' (one of the 13)")
    return TaskCatalogueEntry(
        name=name,
        suite=v["suite"],
        kind=v["kind"],
        category=v["category"],
        category_reason=v["category_reason"],
        source=parse_source(obj.get("source"), where),
        format=v["format"],
        columns=v["columns"],
        license=v["license"],
        n_classes=v["n_classes"],
        sizes={s: v[f"n_{s}"] for s in SPLITS},
        seq_len=v["seq_len"],
        checked=tuple(v["checked"] or ()),
        evidence=v["evidence"] or "",
        notes=v["notes"] or "",
        description=v["description"] or "",
        sources=_parse_sources(obj, where),
    )


@lru_cache(maxsize=8)
def _load(path: str, mtime_ns: int) -> tuple[TaskCatalogueEntry, ...]:
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as e:
        raise TaskError(f"task catalogue {path}: not readable JSON: {e}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("tasks"), list):
        raise TaskError(f"task catalogue {path}: expected an object with a 'tasks' list")
    entries = tuple(
        parse_entry(obj, f"task catalogue {path} entry {i + 1}")
        for i, obj in enumerate(doc["tasks"])
    )
    seen: set[str] = set()
    for entry in entries:
        if entry.name in seen:
            raise TaskError(f"task catalogue {path}: task name {entry.name!r} appears twice")
        seen.add(entry.name)
    if seen & {entry.suite for entry in entries}:
        clash = sorted(seen & {entry.suite for entry in entries})[0]
        raise TaskError(f"task catalogue {path}: {clash!r} is both a task and a suite name")
    return entries


def load_task_catalogue(
    path: str | os.PathLike[str] | None = None,
) -> tuple[TaskCatalogueEntry, ...]:
    """Every entry of the catalogue at ``path`` (default: the built-in ``catalogue.json``)."""
    p = Path(path).expanduser() if path is not None else CATALOGUE_FILE
    if not p.is_file():
        raise TaskError(f"task catalogue {p} not found")
    return _load(str(p.resolve()), p.stat().st_mtime_ns)


def suites(entries: Iterable[TaskCatalogueEntry]) -> dict[str, list[TaskCatalogueEntry]]:
    """Entries grouped by suite, in catalogue order."""
    out: dict[str, list[TaskCatalogueEntry]] = {}
    for e in entries:
        out.setdefault(e.suite, []).append(e)
    return out


def select(
    names: Iterable[str], entries: tuple[TaskCatalogueEntry, ...]
) -> list[TaskCatalogueEntry]:
    """Entries named by task name, suite name or task alias (a GENEB task id,
    :mod:`geneb.tasks.aliases`), in the order asked, each once (a GFMBench-API class name,
    ``BRCA1Task``, names its entries: ``geneb.tasks.gfmbench_list``)."""
    from geneb.tasks.aliases import catalogue_name_for

    names = expand_gfmbench_names(names)
    by_name = {e.name: e for e in entries}
    by_suite = suites(entries)
    out: list[TaskCatalogueEntry] = []
    for n in names:
        if n not in by_name and n not in by_suite:
            n = catalogue_name_for(n) or n
        if n in by_name:
            picked = [by_name[n]]
        elif n in by_suite:
            picked = by_suite[n]
        else:
            close = did_you_mean(n, [*by_suite, *by_name])
            hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            raise UnknownNameError(
                f"unknown catalogue task or suite {n!r}.{hint} Suites: {', '.join(by_suite)}; "
                f"task names: geneb tasks catalogue"
            )
        out.extend(e for e in picked if e not in out)
    return out
