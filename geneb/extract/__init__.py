"""Extraction: model adapters, batching and pooling into the feature store.

Public entry points: ``geneb.extract.registry.get_embedder`` / ``list_embedders`` and
``geneb.extract.runner.extract``. Heavy dependencies (torch, transformers) load lazily.
"""
