"""Hub datasets for ``geneb tasks fetch``: which commit, which files, and the download.

A catalogue entry names a hub dataset at a pinned revision, or at none (a *floating* source:
no revision is published). For a floating source the fetch asks the hub for its current
commit (:func:`resolve_commit`) and downloads every file at that commit, never at a branch
that could move mid-fetch; the commit and each file's sha256 go into ``fetch.json``. Files
named by a ``match`` pattern (a layout whose file names carry a hash) are found in that
commit's file list; several matches are the shards of one split, read in path order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from geneb.errors import TaskError
from geneb.tasks.sources import FileSource, Source


class FetchError(TaskError):
    """A catalogue task could not be downloaded, verified or converted (nothing was kept)."""


@dataclass(frozen=True)
class HubSnapshot:
    """One commit of a hub dataset and the paths of its files."""

    hub: str
    commit: str
    files: tuple[str, ...]


def _first_line(e: Exception) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else ""


def resolve_commit(hub: str, revision: str | None) -> HubSnapshot:
    """The commit ``revision`` (default: the hub's current ``main``) names, and its files."""
    from huggingface_hub import HfApi, constants

    try:
        info = HfApi(endpoint=constants.ENDPOINT).dataset_info(hub, revision=revision or "main")
    except Exception as e:  # offline, unknown repo or revision: one line naming both
        raise FetchError(
            f"hub dataset {hub}@{revision or 'main'}: cannot read its commit and file list "
            f"({type(e).__name__}: {_first_line(e)}); nothing was downloaded"
        ) from None
    if not info.sha:
        raise FetchError(f"hub dataset {hub}@{revision or 'main'}: the hub named no commit")
    files = tuple(sorted(s.rfilename for s in (info.siblings or [])))
    return HubSnapshot(hub, str(info.sha), files)


def needs_listing(source: Source) -> bool:
    """Whether fetching ``source`` needs the hub's answer first (its commit or its file list)."""
    return source.floating or any(f.match for f in source.files if not f.url)


def hub_paths(f: FileSource, snap: HubSnapshot | None) -> list[str]:
    """The hub paths of one catalogue file at ``snap`` (a ``match`` may name several shards)."""
    if f.match is None:
        assert f.path is not None  # Source.unpinned refused a hub file with neither
        if snap is not None and f.path not in snap.files:
            raise FetchError(
                f"hub dataset {snap.hub}@{snap.commit[:12]} has no file {f.path!r} ({f.role} "
                f"file); nothing was cached"
            )
        return [f.path]
    assert snap is not None  # needs_listing: a match is resolved against the file list
    pattern = re.compile(f.match)
    found = [p for p in snap.files if pattern.fullmatch(p)]
    if not found:
        shown = ", ".join(snap.files[:8]) + (" ..." if len(snap.files) > 8 else "")
        raise FetchError(
            f"hub dataset {snap.hub}@{snap.commit[:12]}: no file matches {f.match!r} ({f.role} "
            f"file); its files: {shown or '(none)'}; nothing was cached"
        )
    return found


def download_hub(hub: str, commit: str, paths: Sequence[str], root: Path) -> list[Path]:
    """Each of ``paths`` of ``hub`` at ``commit``, through the hub cache under ``root/hf``."""
    from huggingface_hub import hf_hub_download

    out = []
    for path in paths:
        try:
            out.append(Path(hf_hub_download(repo_id=hub, filename=path, repo_type="dataset",
                                            revision=commit, cache_dir=root / "hf")))  # fmt: skip
        except Exception as e:  # offline, missing file, bad revision: one line naming all three
            raise FetchError(
                f"hub dataset {hub}@{commit}: cannot get {path!r} "
                f"({type(e).__name__}: {_first_line(e)})"
            ) from None
    return out


def join_shards(shards: Sequence[Path], out: Path) -> Path:
    """One file holding the rows of every shard in order (parquet or csv shards)."""
    import pandas as pd

    if len(shards) == 1:
        return shards[0]
    try:
        if shards[0].suffix == ".parquet":
            pd.concat([pd.read_parquet(p) for p in shards], ignore_index=True).to_parquet(out)
        else:
            frames = [pd.read_csv(p, dtype=str, keep_default_na=False) for p in shards]
            pd.concat(frames, ignore_index=True).to_csv(out, index=False)
    except Exception as e:  # pandas/pyarrow raise many unrelated types for a bad file
        raise FetchError(
            f"{shards[0]}: shards cannot be joined ({type(e).__name__}: {e})"
        ) from None
    return out


#: seconds to wait for the hub to answer before calling the machine offline
HUB_PROBE_TIMEOUT_S = 1.5


def hub_files_missing(sources: Sequence[tuple[Source, str | None]], root: Path) -> list[str]:
    """``repo@revision:path`` of each hub file that the hub cache lacks, for each (source,
    revision to fetch; None: the hub's current commit). A file whose commit or name only the
    hub can say is always missing."""
    wanted = [(src, rev, f) for src, rev in sources for f in src.files if not f.url]
    if not wanted:
        return []
    from huggingface_hub import try_to_load_from_cache

    out = []
    for src, rev, f in wanted:
        if rev is None or f.match or f.path is None:
            out.append(f"{src.hub}@(current commit):{f.path or f.match}")
        elif not isinstance(
            try_to_load_from_cache(str(src.hub), f.path, cache_dir=root / "hf", revision=rev,
                                   repo_type="dataset"),  # fmt: skip
            str,
        ):
            out.append(f"{src.hub}@{rev[:12]}:{f.path}")
    return out


def check_hub_reachable(sources: Sequence[tuple[Source, str | None]], root: Path) -> None:
    """Refuse in one line, before anything is created, when hub files are needed offline.

    Offline is ``HF_HUB_OFFLINE`` set, or the hub endpoint not answering within
    ``HUB_PROBE_TIMEOUT_S`` (``huggingface_hub`` would otherwise retry for half a minute).
    """
    missing = hub_files_missing(sources, root)
    if not missing:
        return
    import os
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
