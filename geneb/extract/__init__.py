"""Extraction: embedding a task's splits into the feature store (runner, batching, layer
entries, long-sequence counts, Dask workers).

Public entry point: ``geneb.extract.runner.extract``. Models themselves (registry, adapters,
pooling, trust) are :mod:`geneb.models`; extraction imports them, never the reverse. Heavy
dependencies (torch, transformers) load lazily.

The top-level name ``geneb.extract`` is the function ``geneb.extract.runner.extract`` (its
attributes are this package's); ``geneb/_lazy.py`` explains how.
"""
