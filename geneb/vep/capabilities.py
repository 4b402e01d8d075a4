"""What a model can do for variant scoring, found from the model itself (not from its name).

- ``embeddings``: every embedder (k-mer, transformers folders, plugins) -> ``cosine``, ``l2``.
- ``causal_lm`` / ``masked_lm``: a transformers checkpoint whose causal / masked language-model
  head loads with every weight present in the checkpoint -> ``llr``. The head class is taken
  from transformers' auto mappings for the folder's config (or, with ``trust_remote_code``,
  from the config's ``auto_map``) and loaded with ``output_loading_info``: a head whose weights
  would be freshly initialised (a headless ``BertModel`` checkpoint loaded as
  ``BertForMaskedLM``) does not count. An encoder config (``is_decoder`` false, a type with a
  masked-LM class) is never taken as causal, even though transformers maps it to a causal
  class (``BertLMHeadModel``) whose weights would load. Custom model code is never run unless
  asked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from geneb.errors import ModelError

EMBEDDING_SCORERS = ("cosine", "l2")
LM_SCORERS = ("llr",)
SCORERS = EMBEDDING_SCORERS + LM_SCORERS
HEADS = ("causal_lm", "masked_lm")  # preference order when a model has both
#: Supervised feature sets (geneb.vep.supervised): name -> description (docs/vep.md).
FEATURES = {"diff": "alt - ref", "concat": "[ref, alt, alt - ref]"}
#: The scorer name a feature set's probe has in score tables (``RIDGE_SCORERS``: the ridge
#: regression of the task's ``score`` column, ``--target score``).
PROBE_SCORERS = {f: f"probe-{f}" for f in FEATURES}
RIDGE_SCORERS = {f: f"ridge-{f}" for f in FEATURES}


@dataclass
class Capabilities:
    """What ``model`` supports; ``notes`` say why a head was not usable."""

    model: str
    embeddings: bool = True
    heads: dict[str, Any] = field(default_factory=dict)  # kind -> loaded (model, tokenizer)
    notes: list[str] = field(default_factory=list)

    @property
    def kinds(self) -> list[str]:
        return (["embeddings"] if self.embeddings else []) + [k for k in HEADS if k in self.heads]

    @property
    def scorers(self) -> list[str]:
        out = list(EMBEDDING_SCORERS) if self.embeddings else []
        return out + (["llr"] if self.heads else [])

    def describe(self) -> str:
        what = ", ".join(self.kinds) or "nothing"
        extra = f" ({'; '.join(self.notes)})" if self.notes else ""
        return f"{what} -> scorers {', '.join(self.scorers) or '(none)'}{extra}"


def hf_source(spec: str) -> str | None:
    """The transformers folder or hub id a model spec names, or None (k-mer, plugins, random
    controls, unknown names: ``get_embedder`` reports those)."""

    from geneb.models.plugins import entry_points

    if spec.startswith("hf:"):
        return spec[3:]
    if spec.startswith(("kmer-", "random:")) or spec in entry_points():
        return None
    from geneb.models.spec import HUB_ID_RE  # the one spec grammar

    if Path(spec).is_dir() or HUB_ID_RE.match(spec):
        return spec
    return None


def detect(
    spec: str,
    *,
    want_heads: bool = True,
    trust_remote_code: bool = False,
    device: str = "cpu",
) -> Capabilities:
    """Capabilities of ``spec``; with ``want_heads`` the usable LM heads are loaded (eval mode,
    float32, on ``device``) and kept in ``heads`` so the scorer does not load them twice."""
    caps = Capabilities(spec)
    src = hf_source(spec)
    if src is None:
        from geneb.models.registry import get_embedder

        if not spec.startswith(("kmer-", "random:")):
            get_embedder(spec)  # an unknown model name is reported as such, not as "no head"
        caps.notes.append("not a transformers checkpoint: no language-model head")
        return caps
    if not want_heads:
        return caps
    from geneb.models.hub import resolve_source
    from geneb.models.model_code import hide_gpu_kernels
    from geneb.models.trust import check_trust_flag, enforce_trust, register_package_classes

    check_trust_flag(trust_remote_code)
    # the same boundary as extraction: a hub id only from the local cache, and no code from
    # the folder unless the user asked for it (checked on the files, before transformers)
    local = resolve_source(src)
    enforce_trust(local.folder, spec, trust_remote_code)
    register_package_classes(local.folder, spec)  # GPN: the installed package's classes
    with hide_gpu_kernels(device):
        _load_heads(caps, str(local.folder), spec, trust_remote_code, device)
    return caps


def _load_heads(caps: Capabilities, src: str, spec: str, trust_remote_code: bool, device: str
                ) -> None:
    """Load every LM head of ``src`` whose weights are all in the checkpoint into ``caps``."""
    import torch
    from transformers import AutoConfig, AutoTokenizer
    from transformers.models.auto import modeling_auto as ma

    from geneb.models.model_code import model_code_errors

    try:
        with model_code_errors(spec, "reading its config"):
            config = AutoConfig.from_pretrained(src, trust_remote_code=trust_remote_code)
    except ValueError as e:
        if "trust_remote_code" in str(e) or "custom code" in str(e):
            caps.notes.append("custom code: pass --trust-remote-code to inspect its heads")
            return
        raise ModelError(f"cannot read the config of model {src!r}: {e}") from e
    except OSError as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ModelError(f"cannot load model {src!r}: {first}") from e
    from geneb.models.adapters.track_models import TRACK_MODEL_TYPES

    if getattr(config, "model_type", None) in TRACK_MODEL_TYPES:  # Enformer, Borzoi
        caps.notes.append("a sequence-to-track model: its heads predict assay tracks, not "
                          "bases, so there is no likelihood to score")
        return
    auto_map = getattr(config, "auto_map", None) or {}
    plans = {
        "causal_lm": ("AutoModelForCausalLM", ma.MODEL_FOR_CAUSAL_LM_MAPPING),
        "masked_lm": ("AutoModelForMaskedLM", ma.MODEL_FOR_MASKED_LM_MAPPING),
    }
    tok = None
    for kind, (auto_name, mapping) in plans.items():
        custom = auto_name in auto_map
        if custom and not trust_remote_code:
            caps.notes.append(f"{kind}: declared as custom code; pass --trust-remote-code")
            continue
        if not custom and type(config) not in mapping:
            continue
        if (kind == "causal_lm" and not custom and not getattr(config, "is_decoder", False)
                and type(config) in ma.MODEL_FOR_MASKED_LM_MAPPING):
            # an encoder (BERT-like) under a causal head would still attend both ways
            continue
        import transformers

        try:
            from geneb.models.adapters.hf_load import quiet_transformers

            with quiet_transformers():
                model, info = getattr(transformers, auto_name).from_pretrained(
                    src,
                    config=config,
                    trust_remote_code=trust_remote_code,
                    dtype=torch.float32,
                    output_loading_info=True,
                )
        except Exception as e:  # a head class that cannot load this checkpoint
            caps.notes.append(f"{kind}: {type(e).__name__}: {str(e).splitlines()[0][:120]}")
            continue
        missing = sorted(info.get("missing_keys", []) or [])
        if missing:
            caps.notes.append(
                f"{kind}: {len(missing)} head weights not in the checkpoint "
                f"(e.g. {missing[0]}); a random head would score noise"
            )
            continue
        if tok is None:
            with model_code_errors(spec, "loading its tokenizer"):
                tok = AutoTokenizer.from_pretrained(  # type: ignore[no-untyped-call]  # unannotated
                    src, trust_remote_code=trust_remote_code)
        model.eval()
        caps.heads[kind] = (model.to(device), tok)


class ScorerUnsupported(ModelError):
    """The model cannot run a scorer (no trained language-model head for ``llr``): callers that
    score several models (``geneb run``) skip that scorer for this model and say why."""

    def __init__(self, message: str, *, scorer: str, supported: list[str]) -> None:
        super().__init__(message)
        self.scorer = scorer
        self.supported = supported


def require_scorer(caps: Capabilities, scorer: str) -> None:
    """Raise ``ScorerUnsupported`` listing what the model supports when it cannot run
    ``scorer``."""
    if scorer in caps.scorers:
        return
    raise ScorerUnsupported(
        f"model {caps.model!r} cannot run scorer={scorer!r}: it has no language-model head "
        f"with trained weights. It supports: {caps.describe()}",
        scorer=scorer, supported=caps.scorers,
    )
