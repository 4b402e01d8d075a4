"""The first step of ``geneb tasks fetch``: what fetching some catalogue entries means.

:func:`plan_fetch` is pure: it looks only at the catalogue and the cache (never the network)
and decides per entry: fetch it, skip it (already fetched from the same source), or refuse it
(no sha256, no converter, a folder in the way, a cached copy of another commit than the one
asked), with the reason. :mod:`geneb.tasks.fetch` then acts on the plan.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from geneb import constraints as c
from geneb.errors import TaskError
from geneb.tasks.cache import FETCH_RECORD, cache_root, kind_dir
from geneb.tasks.catalogue import TaskCatalogueEntry
from geneb.tasks.hub_files import FetchError
from geneb.tasks.reference import UserReference
from geneb.tasks.sources import REVISION
from geneb.vocabulary import VARIANTS


@dataclass(frozen=True)
class FetchStep:
    """What ``run_fetch`` will do for one entry: ``fetch``, ``skip`` or ``refuse``, and why.

    ``revision``: the commit to fetch (the catalogue's pin, or ``--revision``); None for a
    floating source, whose current commit the fetch resolves. ``cached_commit``: for a skipped
    entry, the commit its cached copy came from (checked against the hub's current one)."""

    entry: TaskCatalogueEntry
    target: Path
    action: str
    reason: str
    revision: str | None = None
    cached_commit: str | None = None

    def source_line(self) -> str:
        """Where the step's data come from, revision included, in one line."""
        src = self.entry.source
        if not src.hub:
            return src.describe()
        if self.revision is None:
            return f"hf:{src.hub} at the hub's current commit (no revision is published)"
        pinned = "asked revision" if self.revision != src.revision else "catalogue pin"
        return f"hf:{src.hub}@{self.revision} ({pinned})"


@dataclass(frozen=True)
class FetchPlan:
    """The decided steps, in the order asked."""

    cache: Path
    steps: tuple[FetchStep, ...]
    #: the user's reference genome (``--reference``), for entries whose reference has no sha256
    reference: UserReference | None = None

    def refused(self) -> list[FetchStep]:
        return [s for s in self.steps if s.action == "refuse"]

    def to_fetch(self) -> list[FetchStep]:
        return [s for s in self.steps if s.action == "fetch"]


def source_fingerprint(entry: TaskCatalogueEntry) -> dict[str, Any]:
    """Everything that decides a fetched folder's content (a changed catalogue = a new fetch)."""
    return {
        "source": entry.source.raw,
        "format": entry.format,
        "columns": dict(entry.columns) if entry.columns else None,
        "kind": entry.kind,
    }


def read_record(folder: Path) -> dict[str, Any] | None:
    """The folder's ``fetch.json`` as a dict, or None when absent or unreadable."""
    try:
        rec = json.loads((folder / FETCH_RECORD).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return None
    return rec if isinstance(rec, dict) else None


@c.validate_params({"revision": c.Nullable(REVISION)})
def plan_fetch(
    entries: Iterable[TaskCatalogueEntry],
    cache: str | os.PathLike[str] | None = None,
    reference: UserReference | None = None,
    revision: str | None = None,
) -> FetchPlan:
    """Decide, without touching anything, what fetching ``entries`` into the cache means.

    ``reference`` (a local genome file) stands in for a reference genome the catalogue names
    without a sha256; entries that need none ignore it. ``revision`` (a full commit hash)
    pins the hub dataset all ``entries`` come from, for a source that publishes no revision
    or to fetch another commit than the catalogue's; a cached copy from another commit is
    refused, never replaced."""
    entries = list(entries)
    root = cache_root(cache)
    if reference is not None:
        _check_reference(reference, entries)
    if revision is not None:
        _check_revision(revision, entries)
    steps = []
    for e in entries:
        target = kind_dir(root, e.kind) / e.name
        rev = revision if revision is not None else e.source.revision
        record = read_record(target) if (target / FETCH_RECORD).is_file() else None
        if record is not None and record.get("fingerprint") == source_fingerprint(e):
            steps.append(_cached_step(e, target, rev, record))
        elif record is not None:
            steps.append(FetchStep(e, target, "refuse",
                                   f"{target} was fetched from another source "
                                   f"({record.get('source', '?')}); delete that folder to "
                                   f"fetch {e.source.describe(rev)}", rev))  # fmt: skip
        elif target.exists():
            steps.append(FetchStep(e, target, "refuse",
                                   f"{target} exists but is not a fetched task folder", rev))
        elif (why := e.fetchable(reference_given=reference is not None)) is not None:
            steps.append(FetchStep(e, target, "refuse", f"unverifiable: {why}", rev))
        else:
            step = FetchStep(e, target, "fetch", "", rev)
            steps.append(FetchStep(e, target, "fetch", f"download from {step.source_line()}", rev))
    return FetchPlan(root, tuple(steps), reference)


def _cached_step(
    e: TaskCatalogueEntry, target: Path, rev: str | None, record: dict[str, Any]
) -> FetchStep:
    """A cached entry: skipped, unless ``rev`` asks for another commit than its copy's."""
    cached = record.get("commit") or e.source.revision
    if rev is not None and cached is not None and cached != rev:
        why = (f"{target} holds {e.name} at commit {cached}; {rev} was asked: delete that "
               f"folder to fetch it (a cached task is never replaced)")
        return FetchStep(e, target, "refuse", why, rev)
    reason = f"already fetched from the same source ({e.source.describe(cached)})"
    return FetchStep(e, target, "skip", reason, rev, cached)


def _check_revision(revision: str, entries: list[TaskCatalogueEntry]) -> None:
    """``revision`` must pin the one hub dataset every asked entry comes from."""
    hubs = sorted({str(e.source.hub) for e in entries if e.source.hub})
    others = [e.name for e in entries if not e.source.hub]
    if len(hubs) != 1 or others:
        names = ", ".join(hubs + others)
        raise TaskError(
            f"revision: pins one hub dataset, but the asked tasks come from {len(hubs)} hub "
            f"dataset(s){' and non-hub sources' if others else ''} ({names}); fetch the "
            f"tasks of one dataset at a time",
            param="revision",
        )


def _check_reference(reference: UserReference, entries: list[TaskCatalogueEntry]) -> None:
    """Refuse ``--reference`` up front when it is not a file or no entry asked needs one."""
    if not reference.path.expanduser().is_file():
        raise FetchError(f"reference {reference.path} is not a file (expected a FASTA, plain or "
                         ".gz); nothing was downloaded")
    if reference.flank < 1:
        raise FetchError(f"flank must be a positive number of bases, got {reference.flank}")
    if not any(e.kind == VARIANTS and e.source.needs_reference() for e in entries):
        raise FetchError(
            "reference given, but none of the asked entries needs one (only variant sets whose "
            "reference genome has no published sha256 do); nothing was downloaded"
        )
