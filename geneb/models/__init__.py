"""Models: what a model IS and how it loads and runs (spec grammar, registry, catalogue,
adapters, hub cache, trust boundary).

Public entry points: ``geneb.get_model_meta`` / ``geneb.get_embedder`` (defined in
:mod:`geneb.models.registry`, with ``check_spec`` and ``list_embedders``). Extraction
(:mod:`geneb.extract`) imports this package, never the reverse; adapters
(:mod:`geneb.models.adapters`) never import the registry. docs/models.md states the rule that
decides what lives here and what in ``geneb.extract``. This file imports nothing, so importing
one module of the package loads only what that module needs.
"""
