"""Kept for users of ``geneb.extract.registry`` (the docs before issue 20): see geneb.models."""

from geneb.models.registry import (  # noqa: F401  kept for users of geneb.extract.registry
    check_spec,
    get_embedder,
    get_model_meta,
    list_embedders,
)
