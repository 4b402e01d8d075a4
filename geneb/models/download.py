"""The files of one hub snapshot, for ``geneb models fetch``: listed, bounded, verified, staged,
then laid into the Hugging Face cache the way huggingface_hub lays them.

Why not ``snapshot_download``: it names each blob after the ETag the server sends without
checking the bytes, has no size cap or overall deadline, and downloads in threads that ignore
Ctrl-C until a file ends (a SIGTERM then leaves an ``.incomplete`` blob, a moved ref and half a
snapshot). Here every file goes through :func:`geneb.tasks.download.download` (the fetch size
cap ``GENEB_FETCH_MAX_BYTES``, the per-file deadline ``GENEB_FETCH_DEADLINE`` and a silence
timeout, enforced while the bytes arrive, in the main thread so a signal interrupts a read at
once) into a staging folder named after this process; each file is checked against the hub's
own checksum (the LFS sha256 of large files, the git blob sha1 of the others) before it is
kept. Only when every file is staged and verified are the blobs renamed into the cache, the
snapshot links made and the ref written (last). A fetch killed outright leaves only its staging
folder, which the next fetch removes (:func:`geneb.tasks.cache.sweep_partials`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from geneb.errors import GenebError, ModelError
from geneb.tasks.limits import ENV_MAX_BYTES, FetchLimits, format_bytes

#: the start of a staging folder's name in the HF cache (then ``.partial-<host>-<pid>-<rand>``)
STAGING_NAME = "geneb-fetch"


@dataclass(frozen=True)
class HubFile:
    """One file of a snapshot as the hub's metadata lists it."""

    path: str  # relative to the repo root, '/'-separated
    size: int
    sha256: str | None  # LFS files: the sha256 of the content
    blob_id: str  # the git blob sha1 (of the LFS pointer for LFS files)

    @property
    def blob_name(self) -> str:
        """The cache's blob name, as huggingface_hub names it (its ETag): sha256 for LFS."""
        return self.sha256 or self.blob_id


def _safe_path(name: str, where: str) -> str:
    parts = PurePosixPath(name).parts
    if not name or name.startswith("/") or "\\" in name or any(p in ("..", ".") for p in parts):
        raise ModelError(f"cannot fetch {where}: the hub lists an unsafe file name {name!r}")
    return name


def hub_files(info: Any, where: str) -> list[HubFile]:
    """The files of ``model_info(..., files_metadata=True)``; a file the hub gives no size or
    checksum for is refused (nothing could verify it)."""
    out = []
    for s in info.siblings or ():
        path = _safe_path(str(s.rfilename), where)
        lfs = s.lfs
        sha = None if lfs is None else _get(lfs, "sha256")
        size = s.size if s.size is not None else (None if lfs is None else _get(lfs, "size"))
        if size is None or not (sha or s.blob_id):
            raise ModelError(
                f"cannot fetch {where}: the hub gives no size and checksum for {path!r}; "
                "nothing could verify it, nothing was downloaded"
            )
        out.append(HubFile(path, int(size), sha, str(s.blob_id or "")))
    return out


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def check_sizes(files: list[HubFile], limits: FetchLimits, where: str) -> None:
    """Refuse before any byte when a file the hub lists is over the fetch size cap."""
    for f in files:
        if f.size > limits.max_bytes:
            raise ModelError(
                f"cannot fetch {where}: {f.path} is {format_bytes(f.size)} on the hub, over the "
                f"fetch size cap {format_bytes(limits.max_bytes)} ({ENV_MAX_BYTES} raises it); "
                "nothing was downloaded"
            )


def git_blob_sha1(path: Path) -> str:
    """The git object id of a file's content (``sha1(b"blob <size>\\0" + content)``)."""
    h = hashlib.sha1(f"blob {path.stat().st_size}\0".encode())  # noqa: S324 - git's id
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _verified(f: HubFile, path: Path) -> bool:
    from geneb.tasks.download import sha256_file

    if path.stat().st_size != f.size:
        return False
    return sha256_file(path) == f.sha256 if f.sha256 else git_blob_sha1(path) == f.blob_id


def _fetch_one(f: HubFile, url: str, dest: Path, limits: FetchLimits, where: str) -> None:
    # documented public API, re-exported by huggingface_hub.utils without __all__ or "as"
    from huggingface_hub.utils import build_hf_headers  # type: ignore[attr-defined]

    from geneb.tasks.download import download

    try:
        download(url, f.sha256, dest, limits, headers=build_hf_headers(),
                 checksum_of="the hub's LFS")  # fmt: skip
    except GenebError as e:
        raise ModelError(f"cannot fetch {where}: {e}") from None
    if not _verified(f, dest):  # LFS: checked while streaming; git blobs: here
        dest.unlink(missing_ok=True)
        raise ModelError(
            f"cannot fetch {where}: {f.path} does not match the hub's checksum "
            f"{f.blob_name} ({dest.stat().st_size if dest.exists() else 0} bytes came); "
            "nothing was kept"
        )


def stage_snapshot(hub_id: str, commit: str, files: list[HubFile], repo: Path,
                   staging: Path, limits: FetchLimits, where: str) -> dict[str, Path]:  # fmt: skip
    """Each file's verified bytes: a blob already in the cache (checked again), else a
    download into ``staging``. Returns blob name -> file."""
    from huggingface_hub import hf_hub_url

    ready: dict[str, Path] = {}
    for f in files:
        if f.blob_name in ready:
            continue
        cached = repo / "blobs" / f.blob_name
        if cached.is_file() and not cached.is_symlink() and _verified(f, cached):
            ready[f.blob_name] = cached
            continue
        dest = staging / f.blob_name
        _fetch_one(f, hf_hub_url(hub_id, f.path, revision=commit), dest, limits, where)
        ready[f.blob_name] = dest
    return ready


def install_snapshot(repo: Path, commit: str, revision: str, files: list[HubFile],
                     ready: dict[str, Path]) -> Path:  # fmt: skip
    """Move the staged blobs into ``repo/blobs``, link ``snapshots/<commit>/<path>`` to them
    (relative links, as huggingface_hub makes) and write ``refs/<revision>`` last."""
    from geneb._fs import write_bytes

    blobs = repo / "blobs"
    blobs.mkdir(parents=True, exist_ok=True)
    for name, src in ready.items():
        if src.parent != blobs:
            os.replace(src, blobs / name)
    snap = repo / "snapshots" / commit
    for f in files:
        link = snap / f.path
        link.parent.mkdir(parents=True, exist_ok=True)
        target = os.path.relpath(blobs / f.blob_name, link.parent)
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(target)
    if revision != commit:
        ref = repo / "refs" / revision
        ref.parent.mkdir(parents=True, exist_ok=True)
        write_bytes(ref, commit.encode())
    return snap


def staging_folder(cache: Path) -> Path:
    """A fresh staging folder in the HF cache (same file system: the blobs are renamed)."""
    from geneb.tasks.cache import partial_prefix

    cache.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=partial_prefix(STAGING_NAME), dir=cache))


def remove_staging(staging: Path) -> None:
    shutil.rmtree(staging, ignore_errors=True)
