"""``geneb tasks fetch``: download, verify, convert and cache catalogue tasks.

Two steps, pooch-style. ``plan_fetch`` is pure (it only looks at the catalogue and the cache)
and decides per entry: fetch it, skip it (already fetched from the same pinned source), or
refuse it (no pinned revision / sha256, no converter, or a folder in the way), with the
reason. ``run_fetch`` then acts on the fetch steps only.

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
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from geneb.errors import GenebError, TaskError
from geneb.tasks.cache import (
    FETCH_RECORD,
    cache_root,
    kind_dir,
    partial_prefix,
    remove_empty,
    sweep_partials,
    terminate_cleanly,
)
from geneb.tasks.catalogue import TaskCatalogueEntry
from geneb.tasks.convert import convert_classification, convert_variants, extract_member
from geneb.tasks.download import download, honour_umask, sha256_file
from geneb.tasks.limits import FetchLimits
from geneb.tasks.loader import TASK_JSON, load_task_folder
from geneb.tasks.reference import UserReference
from geneb.tasks.sources import FileSource
from geneb.tasks.variants import load_variant_task

#: seconds to wait for the hub to answer before calling the machine offline
HUB_PROBE_TIMEOUT_S = 1.5


class FetchError(TaskError):
    """A catalogue task could not be downloaded, verified or converted (nothing was kept)."""


@dataclass(frozen=True)
class FetchStep:
    """What ``run_fetch`` will do for one entry: ``fetch``, ``skip`` or ``refuse``, and why."""

    entry: TaskCatalogueEntry
    target: Path
    action: str
    reason: str


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


def _read_record(folder: Path) -> dict[str, Any] | None:
    try:
        rec = json.loads((folder / FETCH_RECORD).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return None
    return rec if isinstance(rec, dict) else None


def plan_fetch(
    entries: Iterable[TaskCatalogueEntry],
    cache: str | os.PathLike[str] | None = None,
    reference: UserReference | None = None,
) -> FetchPlan:
    """Decide, without touching anything, what fetching ``entries`` into the cache means.

    ``reference`` (a local genome file) stands in for a reference genome the catalogue names
    without a sha256; entries that need none ignore it."""
    entries = list(entries)
    root = cache_root(cache)
    if reference is not None:
        _check_reference(reference, entries)
    steps = []
    for e in entries:
        target = kind_dir(root, e.kind) / e.name
        record = _read_record(target) if (target / FETCH_RECORD).is_file() else None
        if record is not None and record.get("fingerprint") == source_fingerprint(e):
            steps.append(FetchStep(e, target, "skip", "already fetched from the same source"))
        elif record is not None:
            steps.append(
                FetchStep(
                    e,
                    target,
                    "refuse",
                    f"{target} was fetched from another source ({record.get('source', '?')}); "
                    f"delete that folder to fetch {e.source.describe()}",
                )
            )
        elif target.exists():
            steps.append(
                FetchStep(e, target, "refuse", f"{target} exists but is not a fetched task folder")
            )
        elif (why := e.fetchable(reference_given=reference is not None)) is not None:
            steps.append(FetchStep(e, target, "refuse", f"unverifiable: {why}"))
        else:
            steps.append(FetchStep(e, target, "fetch", f"download from {e.source.describe()}"))
    return FetchPlan(root, tuple(steps), reference)


def _check_reference(reference: UserReference, entries: list[TaskCatalogueEntry]) -> None:
    """Refuse ``--reference`` up front when it is not a file or no entry asked needs one."""
    if not reference.path.expanduser().is_file():
        raise FetchError(f"reference {reference.path} is not a file (expected a FASTA, plain or "
                         ".gz); nothing was downloaded")
    if reference.flank < 1:
        raise FetchError(f"flank must be a positive number of bases, got {reference.flank}")
    if not any(e.kind == "variants" and e.source.needs_reference() for e in entries):
        raise FetchError(
            "reference given, but none of the asked entries needs one (only variant sets whose "
            "reference genome has no published sha256 do); nothing was downloaded"
        )


# --------------------------------------------------------------------------- acting


def _download_url(f: FileSource, root: Path, limits: FetchLimits) -> Path:
    assert f.url is not None and f.sha256 is not None  # plan_fetch refused otherwise
    name = f"{f.sha256[:16]}-{Path(f.url.split('?')[0]).name or 'download'}"
    try:
        return download(f.url, f.sha256, root / "downloads" / name, limits)
    except TaskError as e:
        raise FetchError(str(e)) from None


def _download_hub(entry: TaskCatalogueEntry, f: FileSource, root: Path) -> Path:
    from huggingface_hub import hf_hub_download

    src = entry.source
    assert src.hub and src.revision and f.path
    try:
        return Path(
            hf_hub_download(
                repo_id=src.hub,
                filename=f.path,
                repo_type="dataset",
                revision=src.revision,
                cache_dir=root / "hf",
            )
        )
    except Exception as e:  # offline, missing file, bad revision: one message naming all three
        raise FetchError(
            f"hub dataset {src.hub}@{src.revision}: cannot get {f.path!r} "
            f"({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})"
        ) from None


def _hub_files_missing(steps: Iterable[FetchStep], root: Path) -> list[str]:
    """``repo@revision:path`` of each hub file the steps need that the hub cache lacks."""
    hub = [(s.entry.source, f) for s in steps for f in s.entry.source.files if not f.url]
    if not hub:
        return []
    from huggingface_hub import try_to_load_from_cache

    return [
        f"{src.hub}@{str(src.revision)[:12]}:{f.path}"
        for src, f in hub
        if not isinstance(
            try_to_load_from_cache(
                str(src.hub),
                str(f.path),
                cache_dir=root / "hf",
                revision=src.revision,
                repo_type="dataset",
            ),
            str,
        )
    ]


def check_hub_reachable(steps: Iterable[FetchStep], root: Path) -> None:
    """Refuse in one line, before anything is created, when hub files are needed offline.

    Offline is ``HF_HUB_OFFLINE`` set, or the hub endpoint not answering within
    ``HUB_PROBE_TIMEOUT_S`` (``huggingface_hub`` would otherwise retry for half a minute).
    """
    missing = _hub_files_missing(steps, root)
    if not missing:
        return
    import urllib.error
    import urllib.request

    from huggingface_hub import constants

    shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
    if constants.HF_HUB_OFFLINE:
        # huggingface_hub reads either variable; name the one the user set
        var = next(
            (v for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE") if os.environ.get(v)),
            "HF_HUB_OFFLINE",
        )
        raise FetchError(
            f"offline ({var} is set) and {shown} not in the cache {root / 'hf'}; "
            f"nothing was downloaded (unset {var} to fetch)"
        )
    endpoint = constants.ENDPOINT
    try:
        req = urllib.request.Request(endpoint, method="HEAD")
        urllib.request.urlopen(req, timeout=HUB_PROBE_TIMEOUT_S).close()
    except urllib.error.HTTPError:
        return  # it answered
    except (urllib.error.URLError, OSError, ValueError) as e:
        reason = getattr(e, "reason", None) or e
        raise FetchError(
            f"offline: no answer from the Hugging Face hub at {endpoint} within "
            f"{HUB_PROBE_TIMEOUT_S:g} s ({reason}); {shown} not fetched, nothing was "
            f"downloaded (no network? HF_ENDPOINT sets another hub)"
        ) from None


def _get_files(
    e: TaskCatalogueEntry, root: Path, scratch: Path, limits: FetchLimits, user_ref: bool
) -> dict[str, Path]:
    """Every file of the entry, by role; the reference is left out when the user gives it."""
    return {
        f.role: _get_file(e, f, root, scratch, limits)
        for f in e.source.files
        if not (user_ref and f.role == "reference")
    }


def _get_file(
    entry: TaskCatalogueEntry, f: FileSource, root: Path, scratch: Path, limits: FetchLimits
) -> Path:
    path = _download_url(f, root, limits) if f.url else _download_hub(entry, f, root)
    if f.member:
        suffix = "".join(Path(f.member).suffixes[-2:])
        return extract_member(path, f.member, scratch / f".{f.role}{suffix}", limits)
    return path


def _convert(
    e: TaskCatalogueEntry,
    files: dict[str, Path],
    tmp: Path,
    limits: FetchLimits,
    reference: UserReference | None = None,
) -> tuple[dict[str, int], dict[str, Any], dict[str, Any] | None]:
    """Convert into ``tmp`` and load the result as any folder is loaded (one validation);
    return the row counts, what the load subsampled and (variant sets fetched with the
    user's genome) that reference's provenance."""
    assert e.format is not None
    if e.kind == "variants":
        counts, provenance = convert_variants(files, e.columns, tmp, limits, reference)
        try:
            load_variant_task(tmp)  # reference.fa parsed, every ref allele checked against it
        except TaskError as exc:
            raise TaskError(str(exc).replace(f"{tmp}{os.sep}", "converted ")) from None
        return counts, {}, provenance
    counts = convert_classification(files, e.format, e.columns, tmp, limits)
    meta: dict[str, Any] = {"name": e.name, "category": e.category}
    meta.update(
        source=e.source.describe(),
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


def _fetch_one(
    step: FetchStep, root: Path, limits: FetchLimits, reference: UserReference | None = None
) -> dict[str, Any]:
    e = step.entry
    if not (e.kind == "variants" and e.source.needs_reference()):
        reference = None  # only a reference genome without a published sha256 is replaced
    step.target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=partial_prefix(e.name), dir=step.target.parent))
    honour_umask(tmp)  # mkdtemp makes 0700; a shared cache must be readable as the umask says
    try:
        scratch = tmp / ".scratch"  # archive members; removed before the folder is published
        scratch.mkdir()
        files = _get_files(e, root, scratch, limits, reference is not None)
        digests = {role: sha256_file(p) for role, p in files.items()}
        counts, subsampled, user_ref = _convert(e, files, tmp, limits, reference)
        shutil.rmtree(scratch)
        record = {
            "name": e.name,
            "suite": e.suite,
            "kind": e.kind,
            "source": e.source.describe(),
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
            if _read_record(step.target) is None:  # not a concurrent fetch that won the race
                raise
            shutil.rmtree(tmp, ignore_errors=True)
        return record
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, GenebError) and not isinstance(exc, FetchError):
            raise FetchError(f"{e.name}: {exc}; nothing was cached") from None
        raise


def run_fetch(
    plan: FetchPlan,
    *,
    on_done: Callable[[FetchStep, dict[str, Any]], None] | None = None,
    limits: FetchLimits | None = None,
) -> list[dict[str, Any]]:
    """Carry out the plan's ``fetch`` steps in order; stop at the first failure (it is raised).

    Entries fetched before a failure stay cached (each is complete on its own). ``limits``
    default to :meth:`FetchLimits.from_env`. Partials of killed fetches are swept first.
    """
    limits = limits or FetchLimits.from_env()
    sweep_partials(plan.cache)  # even when nothing is to fetch: any later fetch cleans up
    steps = plan.to_fetch()
    if not steps:
        return []
    check_hub_reachable(steps, plan.cache)
    layout = [plan.cache, *(plan.cache / d for d in ("tasks", "variants", "downloads", "hf"))]
    fresh = [d for d in layout if not d.exists()]
    done = []
    try:
        with terminate_cleanly():
            for step in steps:
                record = _fetch_one(step, plan.cache, limits, plan.reference)
                done.append(record)
                if on_done is not None:
                    on_done(step, record)
    except BaseException:
        remove_empty(fresh)
        raise
    return done
