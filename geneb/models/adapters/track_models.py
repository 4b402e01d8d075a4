"""Which models are fixed-length track models (Enformer, Borzoi), and building them.

The registry asks :func:`track_model_type` before it builds the transformers adapter: a
folder whose config.json ``model_type`` is one of :data:`TRACK_MODEL_TYPES`, a catalogue
entry of such a family, or a cached hub id whose config says so, is built by
:class:`geneb.models.adapters.tracks.TrackEmbedder` with its family's package.
"""

from __future__ import annotations

import json
from typing import Any

from geneb.models.adapters.tracks import TrackEmbedder, TrackFamily

#: config.json model_type of the families this module builds
TRACK_MODEL_TYPES: tuple[str, ...] = ("enformer", "borzoi")


def family(model_type: str) -> TrackFamily:
    """The family module's :class:`TrackFamily` for ``model_type``."""
    if model_type == "enformer":
        from geneb.models.adapters.enformer import FAMILY as ENFORMER

        return ENFORMER
    from geneb.models.adapters.borzoi import FAMILY as BORZOI

    return BORZOI


def _cached_model_type(hub_id: str) -> str | None:
    """The model_type in the locally cached config.json of ``hub_id`` (None: not cached)."""
    from huggingface_hub import try_to_load_from_cache

    from geneb.models.hub import pinned_revision

    path = try_to_load_from_cache(hub_id, "config.json", revision=pinned_revision(hub_id))
    if not isinstance(path, str):
        return None
    try:
        mt = json.loads(open(path, encoding="utf-8").read()).get("model_type")
    except (OSError, ValueError, AttributeError):
        return None
    return mt if isinstance(mt, str) else None


def track_model_type(kind: str, family_name: str | None, hub_id: str | None) -> str | None:
    """The track model_type a model spec names (None: not a track model).

    Parameters
    ----------
    kind : str
        ``ModelMeta.kind`` (folder, catalogue, hub, ...).
    family_name : str or None
        ``ModelMeta.family``: a folder's config model_type, or a catalogue family ("Enformer").
    hub_id : str or None
        ``ModelMeta.hub_id``; for an uncatalogued hub id its cached config.json is read.

    Returns
    -------
    str or None
        ``"enformer"``, ``"borzoi"``, or None.
    """
    fam = (family_name or "").lower()
    if fam in TRACK_MODEL_TYPES:
        return fam
    if kind == "hub" and family_name is None and hub_id is not None:
        mt = _cached_model_type(hub_id)
        return mt if mt in TRACK_MODEL_TYPES else None
    return None


def build_track_embedder(model_type: str, source: str, **options: Any) -> TrackEmbedder:
    """A :class:`TrackEmbedder` of ``source`` with ``options``.

    Parameters
    ----------
    model_type : str
        One of :data:`TRACK_MODEL_TYPES`.
    source : str
        A model folder or a cached hub id.
    **options
        :class:`TrackEmbedder`'s keyword parameters.

    Returns
    -------
    TrackEmbedder
        Loaded, self-tested, ready to embed.
    """
    return TrackEmbedder(source, family(model_type), **options)
