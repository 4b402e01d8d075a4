"""``geneb tasks fetch``: download, verify, convert and cache catalogue tasks.

Two steps, pooch-style. ``plan_fetch`` is pure (it only looks at the catalogue and the cache)
and decides per entry: fetch it, skip it (already fetched from the same pinned source), or
refuse it (no pinned revision / sha256, no converter, or a folder in the way), with the
reason. ``run_fetch`` then acts on the fetch steps only.

Verification: hub files come through ``huggingface_hub`` at a full commit hash, URL files
through ``pooch`` with the catalogue's sha256 (a mismatch is refused, pooch keeps nothing).
Atomicity: each entry is built in a hidden temporary folder next to its final place and
renamed into place only after it converted and loaded cleanly, with ``fetch.json`` written
last; any failure removes the temporary folder, so an interrupted or failed fetch leaves no
partial task behind. Afterwards everything resolves from the cache, offline.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from geneb.errors import GenebError, TaskError
from geneb.tasks.cache import FETCH_RECORD, cache_root, kind_dir
from geneb.tasks.convert import convert_classification, convert_variants, extract_member
from geneb.tasks.loader import TASK_JSON, load_task_folder
from geneb.tasks.suites import CatalogueEntry, FileSource


class FetchError(TaskError):
    """A catalogue task could not be downloaded, verified or converted (nothing was kept)."""


@dataclass(frozen=True)
class FetchStep:
    """What ``run_fetch`` will do for one entry: ``fetch``, ``skip`` or ``refuse``, and why."""

    entry: CatalogueEntry
    target: Path
    action: str
    reason: str


@dataclass(frozen=True)
class FetchPlan:
    """The decided steps, in the order asked."""

    cache: Path
    steps: tuple[FetchStep, ...]

    def refused(self) -> list[FetchStep]:
        return [s for s in self.steps if s.action == "refuse"]

    def to_fetch(self) -> list[FetchStep]:
        return [s for s in self.steps if s.action == "fetch"]


def source_fingerprint(entry: CatalogueEntry) -> dict[str, Any]:
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
    entries: Iterable[CatalogueEntry], cache: str | os.PathLike[str] | None = None
) -> FetchPlan:
    """Decide, without touching anything, what fetching ``entries`` into the cache means."""
    root = cache_root(cache)
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
        elif (why := e.fetchable()) is not None:
            steps.append(FetchStep(e, target, "refuse", f"unverifiable: {why}"))
        else:
            steps.append(FetchStep(e, target, "fetch", f"download from {e.source.describe()}"))
    return FetchPlan(root, tuple(steps))


# --------------------------------------------------------------------------- acting


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _honour_umask(path: Path) -> None:
    umask = os.umask(0)
    os.umask(umask)
    path.chmod((0o777 if path.is_dir() else 0o666) & ~umask)


def _download_url(f: FileSource, root: Path) -> Path:
    import pooch

    assert f.url is not None and f.sha256 is not None  # plan_fetch refused otherwise
    # pooch's logger is not registered with logging; its INFO lines ("Downloading data
    # from ...") would go to whatever stderr existed at import
    pooch.get_logger().setLevel(logging.WARNING)
    name = f"{f.sha256[:16]}-{Path(f.url.split('?')[0]).name or 'download'}"
    try:
        path = Path(
            pooch.retrieve(
                f.url,
                known_hash=f"sha256:{f.sha256}",
                fname=name,
                path=root / "downloads",
                progressbar=False,
            )
        )
        _honour_umask(path)  # pooch's temporary file is 0600
        return path
    except ValueError as e:
        if "hash" in str(e).lower():
            raise FetchError(
                f"{f.url}: the downloaded file does not match the catalogue's sha256 "
                f"{f.sha256}; it was discarded ({e})"
            ) from None
        raise FetchError(f"{f.url}: download failed: {e}") from None
    except Exception as e:  # requests/urllib3 errors: refused, timed out, cut mid-body
        raise FetchError(
            f"{f.url}: download failed ({type(e).__name__}: {e}); nothing was kept"
        ) from None


def _download_hub(entry: CatalogueEntry, f: FileSource, root: Path) -> Path:
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


def _get_file(entry: CatalogueEntry, f: FileSource, root: Path, scratch: Path) -> Path:
    path = _download_url(f, root) if f.url else _download_hub(entry, f, root)
    if f.member:
        suffix = "".join(Path(f.member).suffixes[-2:])
        return extract_member(path, f.member, scratch / f".{f.role}{suffix}")
    return path


def _fetch_one(step: FetchStep, root: Path) -> dict[str, Any]:
    e = step.entry
    step.target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{e.name}.partial-", dir=step.target.parent))
    _honour_umask(tmp)  # mkdtemp makes 0700; a shared cache must be readable as the umask says
    try:
        scratch = tmp / ".scratch"  # archive members; removed before the folder is published
        scratch.mkdir()
        files = {f.role: _get_file(e, f, root, scratch) for f in e.source.files}
        digests = {role: _sha256(p) for role, p in files.items()}
        assert e.format is not None
        if e.kind == "variants":
            counts = convert_variants(files, e.columns, tmp)
            subsampled: dict[str, Any] = {}
        else:
            counts = convert_classification(files, e.format, e.columns, tmp)
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
            subsampled = dict(task.metadata.get("subsampled", {}))
            # the class facts the load found, so `geneb tasks list` need not load the folder
            meta.update(n_classes=task.spec.n_classes, label_names=list(task.spec.label_names))
            (tmp / TASK_JSON).write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
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
    plan: FetchPlan, *, on_done: Callable[[FetchStep, dict[str, Any]], None] | None = None
) -> list[dict[str, Any]]:
    """Carry out the plan's ``fetch`` steps in order; stop at the first failure (it is raised).

    Entries fetched before a failure stay cached (each is complete on its own).
    """
    done = []
    for step in plan.to_fetch():
        record = _fetch_one(step, plan.cache)
        done.append(record)
        if on_done is not None:
            on_done(step, record)
    return done
