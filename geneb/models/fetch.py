"""`geneb models fetch`: the one place geneb downloads a model, into the Hugging Face cache.

Extraction resolves hub ids from the local cache only (:mod:`geneb.models.hub`); this module
fills that cache (laid out as huggingface_hub lays it out), at the catalogue's pinned
commit when the catalogue pins one (else ``main``, or the revision asked for), so that
``geneb extract --model ID`` then runs offline.

Failures are one line and leave the cache as it was: ``HF_HUB_OFFLINE`` is refused before any
request; the hub's metadata (files, sizes, checksums) is asked first with a short connect
timeout, so an unreachable endpoint fails in well under 2 s (huggingface_hub itself would fall
back to a cached copy silently, which is not what "fetch" means); a file over the fetch size cap
is refused before any byte; the bytes are downloaded, bounded and verified against the hub's
checksums by :mod:`geneb.models.download`; and a download that breaks half way (an error,
Ctrl-C, SIGTERM, SIGHUP) has the files it added removed and the refs it moved restored.
"""

from __future__ import annotations

import importlib
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from geneb.errors import GenebError, ModelError
from geneb.models import download as dl
from geneb.tasks.limits import FetchLimits

#: Connect timeout of the first metadata request (seconds); the read timeout is the hub's own.
CONNECT_TIMEOUT_S = 1.5
READ_TIMEOUT_S = 10.0  # huggingface_hub's default request timeout


@dataclass(frozen=True)
class FetchResult:
    """What ``fetch_model`` put into the cache."""

    hub_id: str
    revision: str  # as asked (a branch, tag or commit)
    commit: str  # the snapshot's commit
    folder: Path  # the snapshot folder
    n_files: int
    n_bytes: int
    extraction_revision: str  # what `geneb extract --model hub_id` resolves (pin, else main)
    used_by_extraction: bool  # extraction resolves this very snapshot


def hub_id_of(spec: str) -> str:
    """The hub id a ``models fetch`` argument names: a catalogue name/alias or ``org/name``."""
    from geneb.models import catalogue as cat
    from geneb.models.spec import HF_PREFIX, HUB_ID_RE

    bare = spec.strip().removeprefix(HF_PREFIX)
    entry = cat.lookup(bare)
    if entry is not None:
        if entry.hub_id is None:
            raise ModelError(f"model {entry.name!r}: the catalogue has no checked hub id for it")
        return entry.hub_id
    if HUB_ID_RE.match(bare):
        return bare
    raise ModelError(
        f"model {spec!r}: expected a catalogue name (geneb models list) or a hub id 'org/name'"
    )


def fetch_model(spec: str, revision: str | None = None,
                limits: FetchLimits | None = None) -> FetchResult:  # fmt: skip
    """Download ``spec`` (see :func:`hub_id_of`) into the HF cache; one-line errors.

    Parameters
    ----------
    spec : str
        A catalogue name or alias, or a hub id ``org/name`` (``hf:`` prefix allowed).
    revision : str, optional
        A branch, tag or commit; default the catalogue's pin, else ``main``.
    limits : FetchLimits, optional
        Size cap and per-file deadline; default :meth:`FetchLimits.from_env`
        (``GENEB_FETCH_MAX_BYTES``, ``GENEB_FETCH_DEADLINE``).

    Returns
    -------
    FetchResult
        What was put into the cache, and whether extraction resolves it.
    """
    from huggingface_hub import constants

    from geneb.models.hub import pinned_revision, resolve_hub_id

    hub_id = hub_id_of(spec)
    if revision is not None and not revision.strip():
        raise ModelError("revision must be a branch, tag or commit, got an empty string")
    limits = FetchLimits.from_env() if limits is None else limits
    pin = pinned_revision(hub_id)
    rev = revision or pin or "main"
    where = f"model {hub_id!r} at revision {rev!r}"
    if constants.HF_HUB_OFFLINE:
        raise ModelError(
            f"cannot fetch {where}: HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE) is set; "
            "unset it where the hub is reachable"
        )
    info = _check_on_hub(hub_id, rev, where, constants.ENDPOINT)
    files = dl.hub_files(info, where)
    dl.check_sizes(files, limits, where)
    path = _download(hub_id, rev, str(info.sha), files, limits, where)
    try:  # asked of the resolver extraction uses, not re-derived here
        used = resolve_hub_id(hub_id).folder.resolve() == path.resolve()
    except ModelError:
        used = False
    return FetchResult(
        hub_id=hub_id,
        revision=rev,
        commit=path.name,
        folder=path,
        n_files=len(files),
        n_bytes=sum(f.size for f in files),
        extraction_revision=pin or "main",
        used_by_extraction=used,
    )


def _download(hub_id: str, rev: str, commit: str, files: list[dl.HubFile],
              limits: FetchLimits, where: str) -> Path:  # fmt: skip
    """Stage and verify every file, then lay them into the cache; any failure, Ctrl-C,
    SIGTERM or SIGHUP leaves the cache as it was (a kill -9 only a staging folder, which the
    next fetch removes)."""
    from huggingface_hub import constants

    from geneb.tasks.cache import sweep_partials, terminate_cleanly

    cache = Path(constants.HF_HUB_CACHE)
    repo = cache / ("models--" + hub_id.replace("/", "--"))
    with terminate_cleanly(), _restored_on_failure(cache, hub_id):
        if cache.is_dir():
            sweep_partials(cache, subs=(".",))
        staging = dl.staging_folder(cache)  # creates the cache (removed again if left empty)
        try:
            ready = dl.stage_snapshot(hub_id, commit, files, repo, staging, limits, where)
            return dl.install_snapshot(repo, commit, rev, files, ready)
        except GenebError:
            raise
        except OSError as e:
            raise ModelError(f"cannot fetch {where}: {_cause(e)}; nothing was kept") from e
        finally:
            dl.remove_staging(staging)


def _check_on_hub(hub_id: str, rev: str, where: str, endpoint: str) -> Any:
    """Ask the hub for the revision and its files' sizes and checksums first: unreachable,
    unknown or gated is one line, fast."""
    from huggingface_hub import HfApi
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    try:
        return HfApi().model_info(hub_id, revision=rev, timeout=_timeout(), files_metadata=True)
    except _network_errors() as e:
        raise ModelError(
            f"cannot fetch {where}: the hub at {endpoint} cannot be reached "
            f"({type(e).__name__}); nothing was downloaded"
        ) from e
    except GatedRepoError as e:
        raise ModelError(
            f"cannot fetch {where}: the repository is gated on {endpoint}: accept its terms "
            "there and set HF_TOKEN"
        ) from e
    except RevisionNotFoundError as e:
        raise ModelError(f"cannot fetch {where}: {endpoint} has no such revision") from e
    except RepositoryNotFoundError as e:
        raise ModelError(
            f"cannot fetch {where}: no such model on {endpoint} (or it is private: set HF_TOKEN)"
        ) from e
    except HfHubHTTPError as e:
        raise ModelError(f"cannot fetch {where}: {_cause(e)}") from e


#: Modules of the HTTP clients huggingface_hub has used: requests (< 1.0), then httpx.
_CLIENTS = ("requests", "httpx", "httpx2")


def _client(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _timeout() -> Any:
    """A short connect timeout in the form the hub's HTTP client takes: a (connect, read) pair
    for requests (huggingface_hub < 1), an httpx ``Timeout`` after; else one number."""
    import huggingface_hub

    if int(huggingface_hub.__version__.split(".")[0]) < 1:
        return (CONNECT_TIMEOUT_S, READ_TIMEOUT_S)
    for name in _CLIENTS[1:]:
        mod = _client(name)
        if mod is not None and hasattr(mod, "Timeout"):
            return mod.Timeout(READ_TIMEOUT_S, connect=CONNECT_TIMEOUT_S)
    return CONNECT_TIMEOUT_S


def _network_errors() -> tuple[type[BaseException], ...]:
    """Connection and timeout errors of whichever HTTP client huggingface_hub uses."""
    names = {"requests": ("ConnectionError", "Timeout"), "httpx": ("TransportError",)}
    errors: list[type[BaseException]] = [ConnectionError, TimeoutError]
    for name in _CLIENTS:
        mod = _client(name)
        wanted = names.get(name, names["httpx"])
        errors += [getattr(mod, n) for n in wanted if mod is not None and hasattr(mod, n)]
    return tuple(errors)


def _cause(e: BaseException) -> str:
    """The first line of an exception, with its type (huggingface_hub messages run long)."""
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0]}" if text else type(e).__name__


def _tree(root: Path) -> set[Path]:
    """Every path under ``root`` and ``root`` itself (empty when it does not exist)."""
    return ({root} | set(root.rglob("*"))) if root.exists() else set()


@contextmanager
def _restored_on_failure(cache: Path, hub_id: str) -> Iterator[None]:
    """On an exception, remove what the download added under the repo's cache folder (and its
    lock folder) and put back the refs it moved: a failed fetch leaves the cache as it was."""
    from geneb.tasks.cache import remove_empty

    name = "models--" + hub_id.replace("/", "--")
    roots = (cache / name, cache / ".locks" / name)
    made = [p for p in (cache.parent, cache) if not p.exists()]
    before = set().union(*(_tree(r) for r in roots))
    refs = {p: p.read_bytes() for p in (cache / name / "refs").rglob("*") if p.is_file()}
    try:
        yield
    except BaseException:
        _undo(roots, before, refs)
        remove_empty(made)
        raise


def _undo(roots: tuple[Path, ...], before: set[Path], refs: dict[Path, bytes]) -> None:
    added = set().union(*(_tree(r) for r in roots)) - before
    for p in sorted(added, key=lambda q: len(q.parts), reverse=True):  # files before folders
        if p.is_symlink() or p.is_file():
            p.unlink(missing_ok=True)
        elif p.is_dir():
            shutil.rmtree(p, ignore_errors=True)
    from geneb._fs import write_bytes

    for p, data in refs.items():
        p.parent.mkdir(parents=True, exist_ok=True)
        write_bytes(p, data)
