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

from geneb.errors import TaskError, UnknownNameError, did_you_mean
from geneb.tasks.loader import check_task_name
from geneb.tasks.sources import Source, opt_str, parse_source
from geneb.tasks.spec import CATEGORIES

CATALOGUE_FILE = Path(__file__).with_name("catalogue.json")
KINDS = ("classification", "variants")
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
        if self.kind == "classification":
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


def _opt_int(obj: Mapping[str, Any], key: str, where: str) -> int | None:
    v = obj.get(key)
    if v is None:
        return None
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise TaskError(f"{where}: {key!r} must be a non-negative integer or null, got {v!r}")
    return v


def _parse_sources(obj: Mapping[str, Any], where: str) -> dict[str, tuple[str, ...]]:
    """``sources``: fact -> one or more URLs/paths; each stated size must have one.

    A source for a null fact is refused too (it would document nothing).
    """
    raw = obj.get("sources")
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise TaskError(f"{where}: 'sources' must be an object of fact -> URL(s), got {raw!r}")
    out: dict[str, tuple[str, ...]] = {}
    for fact, value in raw.items():
        if fact not in SOURCED_FACTS:
            raise _bad_choice(where, "sources key", fact, SOURCED_FACTS)
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not items or not all(
            isinstance(v, str) and v.strip() for v in items
        ):
            raise TaskError(
                f"{where}: sources[{fact!r}] must be a URL or a non-empty list of them, "
                f"got {value!r}"
            )
        if obj.get(fact) is None:
            raise TaskError(f"{where}: sources[{fact!r}] given but {fact!r} is null")
        out[fact] = tuple(items)
    for fact in SIZE_FACTS:
        if obj.get(fact) is not None and fact not in out:
            raise TaskError(
                f"{where}: {fact!r} is {obj[fact]!r} but has no source; expected "
                f"sources[{fact!r}] (the URL or file it was read from) or {fact!r}: null"
            )
    return out


def _bad_choice(where: str, key: str, value: object, valid: Iterable[str]) -> TaskError:
    close = did_you_mean(str(value), valid)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return TaskError(f"{where}: {key!r} is {value!r}{hint}; expected one of {', '.join(valid)}")


def parse_entry(obj: Any, where: str) -> TaskCatalogueEntry:
    """Validate one catalogue object; errors name the file, the entry and the key."""
    if not isinstance(obj, dict):
        raise TaskError(f"{where}: expected an object, got {obj!r}")
    name = obj.get("name")
    if not isinstance(name, str):
        raise TaskError(f"{where}: 'name' must be a string, got {name!r}")
    check_task_name(name, where)
    where = f"{where} ({name})"
    for key in ("suite", "kind", "category_reason"):
        if not isinstance(obj.get(key), str) or not obj[key]:
            raise TaskError(f"{where}: {key!r} must be a non-empty string, got {obj.get(key)!r}")
    if obj["kind"] not in KINDS:
        raise _bad_choice(where, "kind", obj["kind"], KINDS)
    category = obj.get("category")
    if category is not None and category not in CATEGORIES:
        raise _bad_choice(where, "category", category, CATEGORIES)
    if category is None and obj["kind"] == "classification":
        raise TaskError(f"{where}: a classification task needs a 'category' (one of the 13)")
    fmt = obj.get("format")
    if fmt is not None and fmt not in FORMATS:
        raise _bad_choice(where, "format", fmt, FORMATS)
    columns = obj.get("columns")
    if columns is not None and not (
        isinstance(columns, dict) and all(isinstance(v, str) for v in columns.values())
    ):
        raise TaskError(f"{where}: 'columns' must map geneb column -> source column")
    checked = obj.get("checked", [])
    if not isinstance(checked, list) or not all(isinstance(c, str) for c in checked):
        raise TaskError(f"{where}: 'checked' must be a list of fact names")
    return TaskCatalogueEntry(
        name=name,
        suite=obj["suite"],
        kind=obj["kind"],
        category=category,
        category_reason=obj["category_reason"],
        source=parse_source(obj.get("source"), where),
        format=fmt,
        columns=columns,
        license=opt_str(obj, "license", where),
        n_classes=_opt_int(obj, "n_classes", where),
        sizes={s: _opt_int(obj, f"n_{s}", where) for s in SPLITS},
        seq_len=_opt_int(obj, "seq_len", where),
        checked=tuple(checked),
        evidence=opt_str(obj, "evidence", where) or "",
        notes=opt_str(obj, "notes", where) or "",
        description=opt_str(obj, "description", where) or "",
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
    for e in entries:
        if e.name in seen:
            raise TaskError(f"task catalogue {path}: task name {e.name!r} appears twice")
        seen.add(e.name)
    if seen & {e.suite for e in entries}:
        clash = sorted(seen & {e.suite for e in entries})[0]
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
    """Entries named by task or suite name, in the order asked, each once."""
    by_name = {e.name: e for e in entries}
    by_suite = suites(entries)
    out: list[TaskCatalogueEntry] = []
    for n in names:
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
