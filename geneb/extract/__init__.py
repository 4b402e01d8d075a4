"""Extraction: model adapters, batching and pooling into the feature store.

Public entry points: ``geneb.extract.registry.get_embedder`` / ``list_embedders`` and
``geneb.extract.runner.extract``. Heavy dependencies (torch, transformers) load lazily.

The top-level name ``geneb.extract`` is the function ``geneb.extract.runner.extract`` (its
attributes are this package's); ``geneb/_lazy.py`` explains how.
"""
