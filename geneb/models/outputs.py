"""What a model's forward returned, in ONE place: the last hidden state and all hidden states.

Model code published with checkpoints does not agree on an output type: transformers classes
return a ``ModelOutput`` with ``.last_hidden_state`` (and ``.hidden_states`` when asked),
DNABERT-2's own ``BertModel`` returns a plain tuple ``(hidden_states, pooled)``, other code a
dict or a bare tensor. Every caller that needs hidden states (the embedder, the self-test, the
missing-weights check, variant scoring) goes through these two functions, so a new output
shape is handled here once instead of failing with ``'tuple' object has no attribute``.
"""

from __future__ import annotations

from typing import Any

from geneb.errors import ModelError


def _is_tensor(x: Any) -> bool:
    return hasattr(x, "shape") and hasattr(x, "dtype") and getattr(x, "ndim", 0) == 3


def last_hidden_state(output: Any, model_name: str) -> Any:
    """The (batch, tokens, dim) last hidden state in ``output``, whatever its container."""
    if _is_tensor(output):
        return output
    value = getattr(output, "last_hidden_state", None)
    if value is None and isinstance(output, dict):
        value = output.get("last_hidden_state")
    if value is None and isinstance(output, (tuple, list)) and output:
        first = output[0]
        # DNABERT-2 with output_all_encoded_layers: a list of per-layer states comes first
        value = first[-1] if isinstance(first, (tuple, list)) and first else first
    if value is None or not _is_tensor(value):
        raise ModelError(
            f"model {model_name!r}: its forward returned {type(output).__name__}, in which no "
            "(batch, tokens, dim) last hidden state was found; cannot embed with it"
        )
    return value


def hidden_states(output: Any, model_name: str) -> tuple[Any, ...]:
    """Every hidden state (embeddings first, last layer last) when the model returned them."""
    states = getattr(output, "hidden_states", None)
    if states is None and isinstance(output, dict):
        states = output.get("hidden_states")
    if not states or not all(_is_tensor(s) for s in states):
        raise ModelError(
            f"model {model_name!r} does not return per-layer hidden states (its forward "
            "ignores output_hidden_states); only the last layer (-1) can be embedded"
        )
    return tuple(states)


def logits_of(output: Any, model_name: str) -> Any:
    """The (batch, tokens, vocab) logits of a language-model head's output."""
    value = getattr(output, "logits", None)
    if value is None and isinstance(output, dict):
        value = output.get("logits")
    if value is None and isinstance(output, (tuple, list)) and output:
        value = output[0]
    if value is None or not _is_tensor(value):
        raise ModelError(
            f"model {model_name!r}: its language-model head returned {type(output).__name__}, "
            "in which no (batch, tokens, vocab) logits were found"
        )
    return value
