"""Provenance of a store entry: everything needed to tell whether embeddings are still valid."""

from __future__ import annotations

import datetime as _dt
import platform
import socket
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from geneb.vocabulary import (
    CPU_COMPUTE_DTYPE,
    DEFAULT_LAYER,
    DEFAULT_POOLING,
    DEFAULT_STORAGE_DTYPE,
    DEFAULT_STRANDS,
    DEFAULT_TRUNCATION,
)

#: Fields that define *what* was computed: everything the stored numbers depend on. Two
#: entries with equal identity are interchangeable; a difference in any of these makes a
#: stored entry stale for a new request (and gives it another ``entry_fingerprint``). The
#: storage dtype is one of them: float16 rounding changes every number downstream.
IDENTITY_FIELDS: tuple[str, ...] = (
    "model_id",
    "revision",
    "pooling",
    "layer",
    "max_length",
    "truncation",
    "dtype",
    "storage_dtype",
    "task_fingerprint",
)

#: ``Provenance.extra`` keys of a classification entry: the label value (as the task file
#: holds it: int or str) of each class id, and how many rows the split has in its source
#: (more than the entry holds when task loading capped the train split). The paper
#: protocol's k-shot draw is GENEB's, over these values in file order
#: (``geneb.protocol.paper_kshot_rows``); entries made before they were recorded lack them
#: (written by ``geneb.extract.provenance``).
LABEL_VALUES = "label_values"
SOURCE_ROWS = "source_rows"


def _versions() -> dict[str, str]:
    import importlib.metadata as md

    out = {"python": platform.python_version()}
    for pkg in ("geneb", "numpy", "zarr", "torch", "transformers"):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            pass
    return out


@dataclass(frozen=True)
class Provenance:
    """How an entry was made. Stored as the ``provenance`` attribute of the entry's group."""

    model_id: str
    revision: str  # hub commit hash, or "sha256:..." of local weight files, or "builtin:..."
    task_id: str
    task_fingerprint: str
    n_params: int | None = None
    model_type: str = ""
    tokenizer: str = ""
    pooling: str = DEFAULT_POOLING
    layer: int = DEFAULT_LAYER
    max_length: int | None = None
    truncation: str = DEFAULT_TRUNCATION
    #: "both": the mean of the forward and reverse-complement embeddings (``--strands both``)
    strands: str = DEFAULT_STRANDS
    dtype: str = CPU_COMPUTE_DTYPE  # compute dtype of the model
    storage_dtype: str = DEFAULT_STORAGE_DTYPE
    device: str = "cpu"
    adapter: str = ""
    #: "geneb": embedded as GENEB's extractor embedded the model (``geneb extract --recipe
    #: geneb``; what it did is ``extra["geneb_recipe"]``); "": geneb's own embedding
    recipe: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=_versions)
    created: str = field(
        default_factory=lambda: _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    )
    host: str = field(default_factory=socket.gethostname)

    def to_dict(self) -> dict[str, Any]:
        """The provenance as stored (the entry's ``provenance`` attribute).

        Returns
        -------
        dict
            Every field, JSON-ready.
        """
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Provenance:
        """The provenance read back from an entry's attribute.

        Parameters
        ----------
        d : dict
            As :meth:`to_dict` wrote it; keys of no field (a later geneb's) are ignored, and
            fields it lacks (an earlier geneb's) take their defaults.

        Returns
        -------
        Provenance
            The record.
        """
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})

    def identity(self) -> dict[str, Any]:
        """What the stored numbers depend on: two entries with equal identity are
        interchangeable.

        Returns
        -------
        dict
            The :data:`IDENTITY_FIELDS`, and ``strands`` and ``recipe`` when they are set.
        """
        out = {k: getattr(self, k) for k in IDENTITY_FIELDS}
        if self.strands != DEFAULT_STRANDS:
            # only when set: entries made before the option keep their fingerprints
            out["strands"] = self.strands
        if self.recipe:  # likewise: GENEB's recipe makes other numbers than geneb's embedding
            out["recipe"] = self.recipe
        return out

    def differences(self, other: Provenance) -> dict[str, tuple[Any, Any]]:
        """The identity fields that differ from another provenance's.

        Parameters
        ----------
        other : Provenance
            The other record (a requested extraction, against a stored entry).

        Returns
        -------
        dict
            ``{field: (self value, other value)}``; empty when the two are interchangeable.
        """
        a, b = self.identity(), other.identity()
        keys = [*IDENTITY_FIELDS, "strands", "recipe"]
        return {k: (a.get(k), b.get(k)) for k in keys if a.get(k) != b.get(k)}
