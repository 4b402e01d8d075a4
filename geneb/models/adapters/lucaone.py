"""LucaOne (LucaGPLM) on its own pip package, ``lucaone`` (``pip install 'geneb[lucaone]'``).

Importing ``lucaone`` registers its config and model classes with the transformers Auto
classes (``model_type`` "lucaone"); it does not register its tokenizer, so a saved LucaOne
folder (``tokenizer_class`` "LucaGPLMTokenizer") would not load with ``AutoTokenizer``: this
module registers it. Measured quirks of ``lucaone`` 1.1.1 (docs/models.md):

- its tokenizer raises ``KeyError: 'text'`` when called with a list (``batch_encode_plus``
  reads ``kwargs["text"]``), so geneb tokenises a LucaOne sequence one at a time
  (:data:`TOKENIZE_ONE_AT_A_TIME`);
- DNA is mapped A->1, T/U->2, C->3, G->4, other->5 by the tokenizer itself (``seq_type``
  "gene", token type 0: the default, which geneb's zero ``token_type_ids`` give);
- the documented embedding: ``tokenizer(seq, seq_type="gene", add_special_tokens=True)``,
  ``model(**inputs).last_hidden_state``, mean over the tokens between ``[CLS]`` and ``[SEP]``
  (geneb's ``mean_nonspecial`` pooling, the family default).
"""

from __future__ import annotations

#: model_type values whose tokenizer cannot take a list of texts (tokenise one at a time)
TOKENIZE_ONE_AT_A_TIME: frozenset[str] = frozenset({"lucaone"})
#: model_type -> how its tokens spell bases, where a token is not the bases themselves
#: (LucaOne's tokenizer writes A, T/U, C, G, other as "1".."5")
TOKEN_SPELLING: dict[str, dict[str, str]] = {
    "lucaone": {"1": "A", "2": "T", "3": "C", "4": "G", "5": "N"},
}


def register_classes() -> None:
    """Import ``lucaone`` (registers config and models) and register its tokenizer class."""
    import lucaone
    from transformers import AutoTokenizer

    AutoTokenizer.register(  # type: ignore[no-untyped-call]  # transformers: unannotated
        lucaone.LucaGPLMConfig, slow_tokenizer_class=lucaone.LucaGPLMTokenizer, exist_ok=True
    )
