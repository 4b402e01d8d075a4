"""Built-in adapters: ``kmer-K``, the transformers adapter (``hf``, also behind ``random:``
controls) and the ``minilm-text-control``. They import only lower modules of
:mod:`geneb.models` (embedder protocol, hub, trust, pooling, ...), never the registry, which
imports them lazily when it builds one.
"""
