"""The model spec grammar (``--model``), in one place: the patterns every module matches.

The registry (:mod:`geneb.models.registry`) resolves a spec in the order its docstring gives;
the hub resolver, ``geneb models fetch`` and the variant-scoring capability check match hub ids
with the same pattern. This module imports nothing of geneb, so the lowest layers
(:mod:`geneb.models.hub`) can use the grammar without importing the registry.
"""

from __future__ import annotations

import re

#: entry point group of plugin embedders (``factory(**options) -> Embedder``)
ENTRY_POINT_GROUP = "geneb.embedders"
#: ``kmer-K``: the built-in k-mer spectrum (K checked against the adapter's range)
KMER_RE = re.compile(r"^kmer-(\d+)$")
#: ``org/name``: a Hugging Face hub id
HUB_ID_RE = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
#: ``random:<spec>``: the architecture of ``<spec>`` with seeded random weights
RANDOM_PREFIX = "random:"
#: ``hf:<folder or hub id>``: explicitly the transformers adapter
HF_PREFIX = "hf:"
#: seed of ``random:`` controls when ``seed`` is not given
DEFAULT_RANDOM_SEED = 0
