"""Where a model's files are: a local folder, or a hub id resolved in the local HF cache only.

Extraction never downloads (only ``geneb models fetch`` does, see :mod:`geneb.models.fetch`).
A hub id is looked up with huggingface_hub's own cache functions
(``snapshot_download(local_files_only=True)``, ``scan_cache_dir``), so it loads without a
network whatever ``HF_HUB_OFFLINE`` says, and an id that is not cached fails at once (no
retries, no store created) with the command that fetches it on a machine with a network.
The revision looked up is the catalogue's pinned commit when the catalogue pins one for the
hub id, else the ``main`` ref. The snapshot's commit hash becomes the model revision in
provenance.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from geneb.errors import ModelError
from geneb.models.spec import HUB_ID_RE as HUB_ID  # the one spec grammar


@dataclass(frozen=True)
class ModelSource:
    """A model's files on this machine."""

    spec: str  # what the user wrote (folder path or hub id)
    folder: Path  # the folder transformers loads from (a hub snapshot for hub ids)
    hub_id: str | None = None
    commit: str | None = None  # hub snapshot commit (None for a plain folder)

    @property
    def is_hub(self) -> bool:
        return self.hub_id is not None


def _cache_dir() -> str:
    from huggingface_hub import constants

    return str(constants.HF_HUB_CACHE)


def _snapshot_commit(hub_id: str, snapshot: Path) -> str | None:
    """The commit hash of the cached snapshot folder, as huggingface_hub's cache scan sees it."""
    from huggingface_hub import scan_cache_dir

    try:
        info = scan_cache_dir(_cache_dir())
    except Exception:  # an unreadable cache: the revision stays unknown rather than guessed
        return None
    target = snapshot.resolve()
    for repo in info.repos:
        if repo.repo_id != hub_id or repo.repo_type != "model":
            continue
        for rev in repo.revisions:
            if Path(rev.snapshot_path).resolve() == target:
                return str(rev.commit_hash)
    return None


def pinned_revision(hub_id: str) -> str | None:
    """The commit the catalogue pins for ``hub_id`` (None: not catalogued or not pinned)."""
    from geneb.models.catalogue import lookup_hub_id

    entry = lookup_hub_id(hub_id)
    return None if entry is None else entry.revision


def resolve_hub_id(hub_id: str) -> ModelSource:
    """The cached snapshot of ``hub_id`` (the catalogue's pinned commit, else the ``main``
    ref), or an error saying how to get it."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    rev = pinned_revision(hub_id)
    try:
        path = snapshot_download(hub_id, repo_type="model", revision=rev, local_files_only=True)
    except (LocalEntryNotFoundError, FileNotFoundError, OSError) as e:
        at = "" if rev is None else f" at the catalogue's pinned revision {rev}"
        flag = "" if rev is None else f" --revision {rev}"
        raise ModelError(
            f"model {hub_id!r}: no such folder, and as a hub id it is not in the local Hugging "
            f"Face cache{at} ({_cache_dir()}); extraction never downloads. Where the hub is "
            f"reachable run `geneb models fetch {hub_id}` (or `hf download {hub_id}{flag}`) "
            "with the same HF_HOME / HF_HUB_CACHE (copy that cache here otherwise), or pass a "
            "local folder"
        ) from e
    folder = Path(path)
    return ModelSource(hub_id, folder, hub_id, _snapshot_commit(hub_id, folder))


def resolve_source(spec: str) -> ModelSource:
    """A local folder as is, a hub id from the local cache; anything else is refused."""
    p = Path(spec).expanduser()
    if p.is_dir():
        return ModelSource(spec, p)
    if HUB_ID.match(spec):
        return resolve_hub_id(spec)
    raise ModelError(f"model {spec!r}: no such folder, and not a hub id of the form 'org/name'")
