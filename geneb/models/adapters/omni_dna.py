"""Omni-DNA (OLMo) on its own pip package, ``ai2-olmo`` (module ``hf_olmo``).

Install: ``pip install 'geneb[omni-dna]'`` then ``pip install --no-deps ai2-olmo==0.6.0``
(``ai2-olmo`` 0.6.0 declares ``numpy<2`` and geneb needs ``numpy>=2``, so the extra declares
the packages ``hf_olmo`` imports and the package itself goes in without its declared pins;
measured to run under numpy 2, docs/models.md).

Importing ``hf_olmo`` registers its config (``model_type`` "hf_olmo"), its causal LM with
``AutoModelForCausalLM`` and its fast tokenizer with ``AutoTokenizer``; it registers no base
model with ``AutoModel``, which geneb's embedder loads. This module registers one: the
package's ``OLMoForCausalLM`` itself (same weights, same forward), whose output also carries
``last_hidden_state`` = ``hidden_states[-1]``, the output GENEB's Omni-DNA extractor pools
(``embedding_pipeline/extractors/omnidna.py``: ``AutoModelForCausalLM``, ``output_hidden_states``,
``hidden_states[-1]``, mask-weighted mean over the real tokens: geneb's default ``mean``
pooling). No code from a model folder is run (the package is the user's installed code).
"""

from __future__ import annotations

import functools
from typing import Any

#: the pip distribution that provides ``hf_olmo``, and the version geneb was measured with
PACKAGE = "ai2-olmo"
MEASURED_VERSION = "0.6.0"
#: the config ``model_type`` of checkpoints saved by ``hf_olmo``
MODEL_TYPE = "hf_olmo"
#: the pooling that is the family's recipe (GENEB's omnidna.py: mean over the real tokens)
OMNI_DNA_POOLING = "mean"


@functools.cache
def backbone_class() -> type[Any]:
    """``hf_olmo.OLMoForCausalLM`` with ``last_hidden_state`` in its output (built once).

    The subclass adds no weight and changes no computation: its forward is the package's
    forward with ``output_hidden_states=True``; ``last_hidden_state`` is the package's
    ``hidden_states[-1]`` (after the final layer norm), ``logits`` are kept.
    """
    from dataclasses import dataclass

    import hf_olmo
    from transformers.utils.generic import ModelOutput

    @dataclass
    class OmniDNAOutput(ModelOutput):
        last_hidden_state: Any = None
        logits: Any = None
        hidden_states: Any = None

    class OLMoWithHiddenState(hf_olmo.OLMoForCausalLM):  # type: ignore[misc]
        """The package's causal LM; the output adds ``last_hidden_state``."""

        def forward(
            self,
            input_ids: Any = None,
            attention_mask: Any = None,
            output_hidden_states: bool | None = None,
            return_dict: bool | None = None,
        ) -> Any:
            out = super().forward(
                input_ids=input_ids, attention_mask=attention_mask, use_cache=False,
                output_hidden_states=True, return_dict=True,
            )  # fmt: skip
            states = tuple(out.hidden_states)
            return OmniDNAOutput(
                last_hidden_state=states[-1],
                logits=out.logits,
                hidden_states=states if output_hidden_states else None,
            )

    return OLMoWithHiddenState


def register_classes() -> None:
    """Import ``hf_olmo`` (registers config, causal LM, tokenizer); register the base model."""
    import hf_olmo
    from transformers import AutoModel

    AutoModel.register(hf_olmo.OLMoConfig, backbone_class(), exist_ok=True)
