"""``EntryIO`` through zarr itself: fsspec URLs (``memory://``, ``s3://``, ...), and local
layouts the direct path does not handle (read-only fallback).

Same checks as the direct path: array metadata against the entry's attributes, position
digests (computed here from the decoded rows of each chunk file), one-line errors.
"""

from __future__ import annotations

import contextlib
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from geneb.errors import CorruptEntryError, StoreError
from geneb.store._layout import Digest
from geneb.store.entry_io import (
    ARRAY_ATTRS,
    DIMENSIONS,
    STORE_FORMAT_VERSION,
    ArraySpec,
    digest_of_rows,
)
from geneb.store.keys import StoreKey
from geneb.store.locking import entry_lock

if TYPE_CHECKING:
    import zarr
    from zarr.core.chunk_key_encodings import ChunkKeyEncodingParams
    from zarr.core.common import JSON


def _zarr_read(arr: zarr.Array[Any], what: str, sel: Any = Ellipsis) -> np.ndarray:
    try:
        return np.asarray(arr[sel])
    except Exception as e:  # zarr raises ValueError for a crc mismatch, others for I/O
        raise CorruptEntryError(f"{what} cannot be read: {type(e).__name__}: {e}") from e


def _array(spec: ArraySpec) -> zarr.Array[Any]:
    """The zarr array behind a spec made by :meth:`ZarrIO.spec`."""
    import zarr

    if not isinstance(spec.impl, zarr.Array):
        raise TypeError(f"expected an ArraySpec made by ZarrIO.spec, got impl {spec.impl!r}")
    return spec.impl


def _json(attrs: Mapping[str, str]) -> dict[str, JSON]:
    """Array attributes as zarr's JSON mapping (a copy)."""
    return dict(attrs)


class ZarrIO:
    """Entries of a store opened with zarr (``mode`` 'r' or 'a')."""

    missing_reads_as_fill = True

    def __init__(self, url: str, mode: str, *, check_root: bool = True) -> None:
        import zarr

        self.location = url
        self.mode = mode
        last: Exception | None = None
        # local:// (fsspec's local file system) runs the zarr path on a folder: folders are
        # created as needed, as zarr's own LocalStore does
        opts = {"auto_mkdir": True} if url.startswith("local://") else None
        for _ in range(3 if mode == "a" else 1):  # processes racing to create the root
            try:
                self.root = zarr.open_group(url, mode="r" if mode == "r" else "a",
                                            zarr_format=3, storage_options=opts)
                break
            except Exception as e:  # zarr raises several types here
                last = e
                time.sleep(0.05)
        else:
            what = "not a geneb store" if mode == "r" else "cannot open or create a store at"
            raise StoreError(f"{what}: {url!r} cannot be opened as a Zarr v3 group "
                             f"({type(last).__name__}: {last})") from last
        if not check_root:
            return
        attrs = self.root.attrs.asdict()
        if "geneb_store" in attrs:
            return
        if mode == "r":
            raise StoreError(f"not a geneb store: {url!r} (a Zarr group without the "
                             "geneb_store attribute)")
        if list(self.root.keys()):
            raise StoreError(f"not a geneb store: {url!r} already holds other Zarr nodes; "
                             "pick another store path")
        self.root.attrs["geneb_store"] = STORE_FORMAT_VERSION

    # -------------------------------------------------------------- metadata
    def _group(self, key: StoreKey) -> zarr.Group | None:
        import zarr

        try:
            g = self.root[key.path]
        except (KeyError, FileNotFoundError):
            return None
        except Exception as e:
            raise CorruptEntryError(f"metadata of {key.path} in {self.location} is "
                                    f"unreadable: {type(e).__name__}: {e}") from e
        return g if isinstance(g, zarr.Group) else None

    def keys(self, complete_only: bool) -> list[StoreKey]:
        out: list[StoreKey] = []
        try:
            with warnings.catch_warnings():  # half-created folders of killed writers
                warnings.simplefilter("ignore")
                for mname, mg in sorted(self.root.groups()):
                    for tname, tg in sorted(mg.groups()):
                        for split, sg in sorted(tg.groups()):
                            a = sg.attrs
                            if "n_rows" not in a:
                                continue
                            if complete_only and a.get("complete") is not True:
                                continue
                            with contextlib.suppress(StoreError):  # StoreKey checks the ids
                                out.append(StoreKey(cast(str, a.get("model_id", mname)),
                                                    cast(str, a.get("task_id", tname)), split))
        except StoreError:
            raise
        except Exception as e:  # zarr: a member's metadata is not JSON, or unreadable
            raise CorruptEntryError(f"cannot list the entries of {self.location}: "
                                    f"{type(e).__name__}: {e}") from e
        return sorted(out)

    def attrs(self, key: StoreKey) -> dict[str, Any] | None:
        g = self._group(key)
        a = None if g is None else g.attrs.asdict()
        return a if a is not None and "n_rows" in a else None

    def update_attrs(self, key: StoreKey, updates: dict[str, Any], *, replace: bool = False
                     ) -> None:
        g = self._group(key)
        assert g is not None
        g.attrs.put(updates) if replace else g.attrs.update(updates)

    def spec(self, key: StoreKey, name: str) -> ArraySpec | None:
        import zarr

        g = self._group(key)
        if g is None:
            return None
        try:
            if name not in g:
                return None
            arr = g[name]
            if not isinstance(arr, zarr.Array):
                raise CorruptEntryError(f"{key.path}/{name} in {self.location} is a group, "
                                        "expected an array")
            shards = arr.shards
            return ArraySpec(tuple(arr.shape), np.dtype(arr.dtype),
                             int(shards[0] if shards else arr.chunks[0]),
                             int(arr.chunks[0]) if shards else None, arr)
        except CorruptEntryError:
            raise
        except Exception as e:
            raise CorruptEntryError(f"metadata of {key.path}/{name} in {self.location} is "
                                    f"unreadable: {type(e).__name__}: {e}") from e

    # -------------------------------------------------------------- reading
    def verify_file(self, key: StoreKey, name: str, spec: ArraySpec, i: int,
                    scratch: np.ndarray | None, expect: Digest | None
                    ) -> tuple[np.ndarray, Digest]:
        a, b = spec.rows_of(i)
        data = _zarr_read(_array(spec), f"{name} of {key}", slice(a, b))
        got = digest_of_rows(data, spec.inner_rows or spec.chunk_rows)
        if expect is not None and tuple(expect) != got:
            raise CorruptEntryError(
                f"chunk file {i} of {name} of {key} does not belong at this position (rows "
                f"{a}..{b}): its digest differs from the one recorded at completion"
            )
        return data, got

    def read(self, key: StoreKey, name: str, spec: ArraySpec,
             expect: Sequence[Digest] | None) -> np.ndarray:
        if expect is None:
            return _zarr_read(_array(spec), f"{name} of {key}")
        out = np.empty(spec.shape, dtype=spec.dtype)
        for i in range(spec.n_files):
            a, b = spec.rows_of(i)
            out[a:b] = self.verify_file(key, name, spec, i, None, expect[i])[0]
        return out

    def read_rows(self, key: StoreKey, name: str, spec: ArraySpec, pos: np.ndarray,
                  expect: Sequence[Digest] | None) -> np.ndarray:
        arr = _array(spec)
        uniq, inv = np.unique(pos, return_inverse=True)
        sel = (uniq,) + (slice(None),) * (arr.ndim - 1)
        try:
            got = np.asarray(arr.get_orthogonal_selection(sel))
        except Exception as e:
            raise CorruptEntryError(f"{name} of {key} cannot be read: {e}") from e
        if expect is not None:  # tie each file touched to its position (first inner chunk)
            inner = spec.inner_rows or spec.chunk_rows
            for i in np.unique(uniq // spec.chunk_rows):
                a = int(i) * spec.chunk_rows
                first = _zarr_read(arr, f"{name} of {key}", slice(a, min(a + inner,
                                                                          spec.shape[0])))
                if digest_of_rows(first, inner)[1] != int(expect[int(i)][1]):
                    raise CorruptEntryError(
                        f"chunk file {int(i)} of {name} of {key} does not belong at this "
                        "position: its first chunk differs from the one recorded"
                    )
        return got[inv]

    # -------------------------------------------------------------- writing
    def create(self, key: StoreKey, attrs: dict[str, Any], emb: ArraySpec,
               labels: np.ndarray, rows: np.ndarray) -> dict[str, list[Digest]]:
        from zarr.codecs import Crc32cCodec

        model_dir, task_dir, _ = key.path.split("/")
        self._ensure_group(model_dir, {"model_id": key.model})
        self._ensure_group(f"{model_dir}/{task_dir}", {"task_id": key.task})
        g = self._ensure_group(key.path, {})
        g.attrs.put(attrs)
        for name in list(g.array_keys()):
            del g[name]
        cke: ChunkKeyEncodingParams = {"name": "default", "separator": "."}
        assert emb.inner_rows is not None  # the writer always shards embeddings (layout_for)
        g.create_array("embeddings", shape=emb.shape, dtype=str(emb.dtype),
                       chunks=(emb.inner_rows, *emb.shape[1:]),
                       shards=(emb.chunk_rows, *emb.shape[1:]), compressors=[Crc32cCodec()],
                       fill_value=0.0, chunk_key_encoding=cke,
                       dimension_names=DIMENSIONS["embeddings"],
                       attributes=_json(ARRAY_ATTRS["embeddings"]))
        n1 = max(1, len(labels))
        digests: dict[str, list[Digest]] = {}
        for name, data in (("labels", labels), ("row", rows)):
            a = g.create_array(name, shape=data.shape, dtype=str(data.dtype), chunks=(n1,),
                               compressors=[Crc32cCodec()], fill_value=0, chunk_key_encoding=cke,
                               dimension_names=DIMENSIONS[name],
                               attributes=_json(ARRAY_ATTRS[name]))
            a[...] = data
            digests[name] = [digest_of_rows(data, n1)] if len(data) else []
        return digests

    def _ensure_group(self, path: str, attrs: dict[str, Any]) -> zarr.Group:
        """A group with its attributes; safe when processes race to create it."""
        import zarr
        from zarr.errors import ContainsGroupError

        try:
            return self.root.create_group(path, attributes=attrs)
        except (ContainsGroupError, FileExistsError):
            g = self.root[path]
            if not isinstance(g, zarr.Group):
                raise StoreError(f"{path!r} in {self.location} is an array, expected a "
                                 "group") from None
            if any(g.attrs.get(k) != v for k, v in attrs.items()):
                g.attrs.update(attrs)
            return g

    def write_file(self, key: StoreKey, spec: ArraySpec, i: int,
                   pieces: Sequence[np.ndarray]) -> Digest:
        made = spec if spec.impl is not None else self.spec(key, "embeddings")
        if made is None:
            raise CorruptEntryError(f"store entry {key}: array 'embeddings' is missing "
                                    f"({self.location})")
        arr = _array(made)
        data = np.concatenate(pieces) if len(pieces) > 1 else pieces[0]
        a = i * spec.chunk_rows  # whole shards only, so no read-modify-write
        try:
            arr[a : a + len(data)] = data
        except OSError as e:
            from geneb.store._files import write_error

            raise write_error(f"{self.location}/{key.path}/embeddings", e) from e
        return digest_of_rows(data, spec.inner_rows or spec.chunk_rows)

    def check_written(self, key: StoreKey, spec: ArraySpec) -> None:
        for i in range(spec.n_files):
            self.verify_file(key, "embeddings", spec, i, None, None)

    def prepare_resume(self, key: StoreKey) -> None:
        return None

    def delete(self, key: StoreKey) -> None:
        if self._group(key) is not None:
            del self.root[key.path]

    @contextlib.contextmanager
    def lock(self, key: StoreKey) -> Iterator[None]:
        """In-process lock only (remote stores; documented limitation)."""
        with entry_lock(self.location, key.path, f"store entry {key} in {self.location}", None):
            yield

    def scan(self) -> list[tuple[str, str]]:
        return []
