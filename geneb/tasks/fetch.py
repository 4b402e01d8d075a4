"""``geneb tasks fetch``: download, verify, convert and cache catalogue tasks.

Two steps, pooch-style. ``plan_fetch`` (:mod:`geneb.tasks.fetch_plan`) is pure (it only
looks at the catalogue and the cache) and decides per entry: fetch it, skip it (already
fetched from the same source), or refuse it, with the reason. ``run_fetch`` then acts on the
fetch steps only.

Revisions: a hub file is always downloaded at a full commit: the catalogue's pin, the one
``revision`` names, or, for a source that publishes none (*floating*), the hub's current
commit, resolved once per entry, recorded in ``fetch.json`` with each file's sha256 and said
in one line (``on_note``). A later fetch never replaces a cached copy: it warns in one line
when the hub has moved past the cached commit.

Verification: hub files come through ``huggingface_hub`` at a full commit hash, URL files
through :mod:`geneb.tasks.download` with the catalogue's sha256 (a mismatch is refused,
nothing is kept). Bounds: sizes, unpacking and per-file deadlines come from
:class:`geneb.tasks.limits.FetchLimits`. Offline (``HF_HUB_OFFLINE`` or no route to the hub)
is found before anything is created, and said in one line.
Atomicity: each entry is built in a hidden temporary folder next to its final place and
renamed into place only after it converted and loaded cleanly, with ``fetch.json`` written
last; any failure, Ctrl-C or SIGTERM removes the temporary folder, and a fetch killed outright
leaves one that the next fetch removes (:func:`geneb.tasks.cache.sweep_partials`).
Afterwards everything resolves from the cache, offline.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from geneb.errors import GenebError, TaskError
from geneb.tasks.cache import (
    FETCH_RECORD,
    partial_prefix,
    remove_empty,
    sweep_partials,
    terminate_cleanly,
)
from geneb.tasks.catalogue import TaskCatalogueEntry
from geneb.tasks.convert import convert_classification, convert_variants, extract_member
from geneb.tasks.download import download, honour_umask, sha256_file
from geneb.tasks.fetch_plan import FetchPlan, FetchStep, plan_fetch, read_record, source_fingerprint
from geneb.tasks.hub_files import (
    FetchError,
    HubSnapshot,
    check_hub_reachable,
    download_hub,
    hub_paths,
    join_shards,
    needs_listing,
    resolve_commit,
)
from geneb.tasks.limits import FetchLimits
from geneb.tasks.loader import TASK_JSON, load_task_folder
from geneb.tasks.reference import UserReference
from geneb.tasks.sources import FileSource
from geneb.tasks.variants import load_variant_task
from geneb.vocabulary import VARIANTS

__all__ = ["FetchError", "FetchPlan", "FetchStep", "plan_fetch", "run_fetch"]


# --------------------------------------------------------------------------- acting


def _download_url(f: FileSource, root: Path, limits: FetchLimits) -> Path:
    assert f.url is not None and f.sha256 is not None  # plan_fetch refused otherwise
    name = f"{f.sha256[:16]}-{Path(f.url.split('?')[0]).name or 'download'}"
    try:
        return download(f.url, f.sha256, root / "downloads" / name, limits)
    except TaskError as e:
        raise FetchError(str(e)) from None


def _get_files(
    step: FetchStep, snap: HubSnapshot | None, root: Path, scratch: Path, limits: FetchLimits,
    user_ref: bool,
) -> tuple[dict[str, Path], dict[str, str]]:
    """Every file of the entry by role (the reference is left out when the user gives it),
    and the sha256 of each hub file downloaded, by hub path."""
    src = step.entry.source
    commit = snap.commit if snap is not None else step.revision
    files: dict[str, Path] = {}
    hub_digests: dict[str, str] = {}
    for f in src.files:
        if user_ref and f.role == "reference":
            continue
        if f.url:
            path = _download_url(f, root, limits)
        else:
            assert src.hub and commit  # plan_fetch refused otherwise; floating: resolved
            names = hub_paths(f, snap)
            got = download_hub(src.hub, commit, names, root)
            hub_digests.update({n: sha256_file(g) for n, g in zip(names, got, strict=True)})
            path = join_shards(got, scratch / f".{f.role}.joined{Path(names[0]).suffix}")
        if f.member:
            suffix = "".join(Path(f.member).suffixes[-2:])
            path = extract_member(path, f.member, scratch / f".{f.role}{suffix}", limits)
        files[f.role] = path
    return files, hub_digests


def _convert(
    e: TaskCatalogueEntry,
    files: dict[str, Path],
    tmp: Path,
    limits: FetchLimits,
    reference: UserReference | None = None,
    commit: str | None = None,
) -> tuple[dict[str, int], dict[str, Any], dict[str, Any] | None]:
    """Convert into ``tmp`` and load the result as any folder is loaded (one validation);
    return the row counts, what the load subsampled and (variant sets fetched with the
    user's genome) that reference's provenance."""
    assert e.format is not None
    if e.kind == VARIANTS:
        counts, provenance = convert_variants(files, e.columns, tmp, limits, reference)
        try:
            load_variant_task(tmp)  # reference.fa parsed, every ref allele checked against it
        except TaskError as exc:
            raise TaskError(str(exc).replace(f"{tmp}{os.sep}", "converted ")) from None
        return counts, {}, provenance
    counts = convert_classification(files, e.format, e.columns, tmp, limits)
    # the source's labels as they are: integers other than 0..K-1 get ids in ascending order
    meta: dict[str, Any] = {"name": e.name, "category": e.category, "integer_labels": "any"}
    meta.update(
        source=e.source.describe(commit),
        license=e.license or "",
        description=e.description or e.name,
        **{f"n_{split}": n for split, n in counts.items()},
    )
    (tmp / TASK_JSON).write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    task = load_task_folder(tmp)  # validates; applies and records the train-row cap
    if e.n_classes is not None and task.spec.n_classes != e.n_classes:
        raise FetchError(
            f"{e.name}: the data hold {task.spec.n_classes} classes, the catalogue "
            f"says n_classes={e.n_classes}; not cached"
        )
    # the class facts the load found, so `geneb tasks list` need not load the folder
    meta.update(n_classes=task.spec.n_classes, label_names=list(task.spec.label_names))
    (tmp / TASK_JSON).write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    return counts, dict(task.metadata.get("subsampled", {})), None


#: how a fetched hub commit was chosen, as ``fetch.json`` records it
FLOATING = "the hub's current commit (no revision is published)"


def _revision_from(step: FetchStep) -> str | None:
    src = step.entry.source
    if not src.hub:
        return None
    if step.revision is None:
        return FLOATING
    return "asked" if step.revision != src.revision else "catalogue"


def _fetch_one(
    step: FetchStep, root: Path, limits: FetchLimits, reference: UserReference | None = None
) -> dict[str, Any]:
    e = step.entry
    if not (e.kind == VARIANTS and e.source.needs_reference()):
        reference = None  # only a reference genome without a published sha256 is replaced
    step.target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=partial_prefix(e.name), dir=step.target.parent))
    honour_umask(tmp)  # mkdtemp makes 0700; a shared cache must be readable as the umask says
    try:
        snap = (resolve_commit(str(e.source.hub), step.revision)
                if e.source.hub and needs_listing(e.source) else None)  # fmt: skip
        commit = snap.commit if snap is not None else step.revision
        scratch = tmp / ".scratch"  # archive members; removed before the folder is published
        scratch.mkdir()
        files, hub_digests = _get_files(step, snap, root, scratch, limits, reference is not None)
        digests = {role: sha256_file(p) for role, p in files.items()}
        counts, subsampled, user_ref = _convert(e, files, tmp, limits, reference, commit)
        shutil.rmtree(scratch)
        record = {
            "name": e.name,
            "suite": e.suite,
            "kind": e.kind,
            "source": e.source.describe(commit),
            **({"commit": commit, "revision_from": _revision_from(step),
                "hub_files": hub_digests} if e.source.hub else {}),  # fmt: skip
            "fingerprint": source_fingerprint(e),
            "sha256": digests,
            "rows": counts,
            "subsampled_at_load": subsampled,
            **({"user_reference": user_ref} if user_ref else {}),
            "fetched_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        (tmp / FETCH_RECORD).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        try:
            tmp.rename(step.target)
        except OSError:
            if read_record(step.target) is None:  # not a concurrent fetch that won the race
                raise
            shutil.rmtree(tmp, ignore_errors=True)
        return record
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, GenebError) and not isinstance(exc, FetchError):
            raise FetchError(f"{e.name}: {exc}; nothing was cached") from None
        raise


def _drift_notes(steps: Iterable[FetchStep], root: Path) -> list[tuple[FetchStep, str]]:
    """For each cached floating entry: a warning when the hub has moved past its commit
    (offline: one note that it could not be checked; the cached copies serve either way)."""
    from huggingface_hub import constants

    floating = [s for s in steps if s.action == "skip" and s.revision is None and s.cached_commit]
    if not floating or constants.HF_HUB_OFFLINE:
        return []
    try:
        check_hub_reachable([(s.entry.source, None) for s in floating], root)
    except FetchError as e:
        return [(floating[0], f"note: could not check whether the hub moved past "
                              f"{len(floating)} cached task(s): {e}")]  # fmt: skip
    notes = []
    for s in floating:
        hub = str(s.entry.source.hub)
        try:
            now = resolve_commit(hub, None).commit
        except FetchError as e:
            notes.append((s, f"note: {s.entry.name}: could not check whether {hub} moved ({e})"))
            continue
        if now != s.cached_commit:
            notes.append((s, f"warning: {s.entry.name}: the hub's current commit of {hub} is "
                             f"{now}, the cached copy is from {s.cached_commit} and is kept "
                             f"(never replaced silently): delete {s.target} to fetch {now[:12]}, "
                             f"or pin one with revision={now}"))  # fmt: skip
    return notes


def _floating_note(step: FetchStep, record: dict[str, Any]) -> str:
    return (f"note: {step.entry.name}: no revision is published for {step.entry.source.hub}; "
            f"fetched its current commit {record['commit']}, recorded with each file's sha256 "
            f"in {step.target / FETCH_RECORD} (revision= pins one)")  # fmt: skip


def run_fetch(
    plan: FetchPlan,
    *,
    on_done: Callable[[FetchStep, dict[str, Any]], None] | None = None,
    limits: FetchLimits | None = None,
    on_note: Callable[[FetchStep, str], None] | None = None,
) -> list[dict[str, Any]]:
    """Carry out the plan's ``fetch`` steps in order; stop at the first failure (it is raised).

    Entries fetched before a failure stay cached (each is complete on its own). ``limits``
    default to :meth:`FetchLimits.from_env`. Partials of killed fetches are swept first.
    ``on_note`` gets one line per floating source: the commit a fetch resolved, or a cached
    copy whose commit is no longer the hub's current one (the copy is kept).
    """
    limits = limits or FetchLimits.from_env()
    sweep_partials(plan.cache)  # even when nothing is to fetch: any later fetch cleans up
    note = on_note or (lambda step, text: None)
    for step, text in _drift_notes(plan.steps, plan.cache):
        note(step, text)
    steps = plan.to_fetch()
    if not steps:
        return []
    check_hub_reachable([(s.entry.source, s.revision) for s in steps], plan.cache)
    layout = [plan.cache, *(plan.cache / d for d in ("tasks", "variants", "downloads", "hf"))]
    fresh = [d for d in layout if not d.exists()]
    done = []
    try:
        with terminate_cleanly():
            for step in steps:
                record = _fetch_one(step, plan.cache, limits, plan.reference)
                done.append(record)
                if record.get("revision_from") == FLOATING:
                    note(step, _floating_note(step, record))
                if on_done is not None:
                    on_done(step, record)
    except BaseException:
        remove_empty(fresh)
        raise
    return done
