"""Per-family input rules for DNA models, in ONE place (see shared/models/README.md).

Each rule exists because a family silently gives wrong embeddings without it:
- BPE vocabularies (DNABERT-2, GENA-LM) have no normaliser: lower-case bases become [UNK], so
  DNA is upper-cased first (task files are upper-case already; this guards user folders).
- DNABERT-1 expects space-separated overlapping k-mers and must not lower-case them.
- ``token_type_ids`` only go to models whose forward accepts them.
- Left padding (HyenaDNA, Caduceus layouts) is kept: masked mean pooling is padding-invariant.
- A tokenizer without a real maximum length (GENA-LM) falls back to the config, then to 512.
- A tokenizer that cannot take a list of texts (LucaOne) is called one sequence at a time.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from typing import Any

from geneb.models.adapters.lucaone import TOKENIZE_ONE_AT_A_TIME

#: transformers' sentinel for "no maximum length"
_NO_MAX = 10**9
DEFAULT_MAX_LENGTH = 512
_KMER_TOKEN = re.compile(r"^[ACGTN]+$")


@dataclass(frozen=True)
class FamilyRules:
    """How to turn a DNA string into model input for one tokenizer/model pair."""

    family: str
    uppercase: bool = True
    #: "raw": the sequence itself; "kmer_overlap": spaced overlapping k-mers (DNABERT-1);
    #: "kmer_spaced": spaced non-overlapping k-mers (text models such as MiniLM)
    input_format: str = "raw"
    k: int = 0
    token_type_ids: bool = False
    padding_side: str = "right"
    max_length: int = DEFAULT_MAX_LENGTH
    max_length_source: str = "default"
    #: call the tokenizer once per sequence (its list call is broken: LucaOne)
    tokenize_each: bool = False

    def transform(self, seq: str) -> str:
        """The string given to the tokenizer for one DNA sequence."""
        s = seq.upper() if self.uppercase else seq
        if self.input_format == "kmer_overlap":
            k = self.k
            return " ".join(s[i : i + k] for i in range(len(s) - k + 1)) if len(s) >= k else s
        if self.input_format == "kmer_spaced":
            k = self.k
            return " ".join(s[i : i + k] for i in range(0, len(s), k))
        return s

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "family": self.family,
            "uppercase": self.uppercase,
            "input_format": self.input_format,
            "k": self.k,
            "token_type_ids": self.token_type_ids,
            "padding_side": self.padding_side,
            "max_length_source": self.max_length_source,
        }
        if self.tokenize_each:  # only where set: the other families' records stay as they were
            out["tokenize_each"] = True
        return out


def kmer_vocab_k(tokenizer: Any) -> int:
    """k if the tokenizer's non-special vocabulary is exactly the k-mers over ACGT(N), else 0."""
    try:
        vocab = tokenizer.get_vocab()
    except Exception:  # pragma: no cover - exotic tokenizers
        return 0
    specials = set(getattr(tokenizer, "all_special_tokens", []))
    words = [w for w in vocab if w not in specials]
    if len(words) < 4:
        return 0
    lengths = {len(w) for w in words}
    if len(lengths) != 1 or not all(_KMER_TOKEN.match(w) for w in words):
        return 0
    k = lengths.pop()
    return k if 3 <= k <= 8 and len(words) >= 4**k else 0


def is_dnabert1(tokenizer: Any) -> int:
    """k of a DNABERT-1 style tokenizer (BERT WordPiece on a pure k-mer vocab), else 0."""
    cls_name = type(tokenizer).__name__
    if not cls_name.startswith("BertTokenizer"):
        return 0
    return kmer_vocab_k(tokenizer)


def lowercases(tokenizer: Any) -> bool:
    """Whether a BERT tokenizer would lower-case its input (which breaks k-mer vocabularies)."""
    if getattr(tokenizer, "do_lower_case", False):
        return True
    basic = getattr(tokenizer, "basic_tokenizer", None)
    return bool(getattr(basic, "do_lower_case", False))


def resolve_max_length(config: Any, tokenizer: Any) -> tuple[int, str]:
    """The model's context in tokens: tokenizer, then config positions, then 512."""
    tml = getattr(tokenizer, "model_max_length", None)
    if isinstance(tml, int) and 0 < tml < _NO_MAX:
        return tml, "tokenizer.model_max_length"
    mpe = getattr(config, "max_position_embeddings", None)
    if isinstance(mpe, int) and mpe > 0:
        # ESM/RoBERTa-style absolute positions start after the padding index
        if getattr(config, "model_type", "") in ("esm", "roberta", "xlm-roberta", "camembert"):
            return mpe - 2, "config.max_position_embeddings-2"
        return mpe, "config.max_position_embeddings"
    return DEFAULT_MAX_LENGTH, "default 512"


def accepts(fn: Any, name: str) -> bool:
    """Whether callable ``fn`` takes a parameter called ``name`` (or **kwargs)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # pragma: no cover
        return False
    return name in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def detect_rules(config: Any, tokenizer: Any, model: Any) -> FamilyRules:
    """The rules for this tokenizer/model pair (the only place family quirks are decided)."""
    max_len, source = resolve_max_length(config, tokenizer)
    forward = getattr(model, "forward", None)
    tti = (
        forward is not None
        and "token_type_ids" in inspect.signature(forward).parameters
        and "token_type_ids" in getattr(tokenizer, "model_input_names", [])
    )
    side = getattr(tokenizer, "padding_side", "right") or "right"
    k = is_dnabert1(tokenizer)
    if k:
        return FamilyRules("dnabert1-kmer", True, "kmer_overlap", k, tti, side, max_len, source)
    upper = not lowercase_dna_vocab(tokenizer)
    family = str(getattr(config, "model_type", "unknown"))
    each = family in TOKENIZE_ONE_AT_A_TIME
    return FamilyRules(family, upper, "raw", 0, tti, side, max_len, source, each)


def lowercase_dna_vocab(tokenizer: Any) -> bool:
    """True for a vocabulary spelled in lower-case bases only (then we must not upper-case)."""
    try:
        vocab = tokenizer.get_vocab()
    except Exception:  # pragma: no cover
        return False
    has_lower = any(w in vocab for w in ("a", "c", "g", "t"))
    has_upper = any(w in vocab for w in ("A", "C", "G", "T"))
    if has_lower or has_upper:
        return has_lower and not has_upper
    lower = sum(1 for w in vocab if w and set(w) <= set("acgtn"))
    upper = sum(1 for w in vocab if w and set(w) <= set("ACGTN"))
    return lower > upper


def text_control_rules(config: Any, tokenizer: Any, model: Any, k: int = 6) -> FamilyRules:
    """Rules for an off-domain text model: DNA as space-separated non-overlapping k-mers."""
    base = detect_rules(config, tokenizer, model)
    return FamilyRules(
        "text-control",
        uppercase=True,
        input_format="kmer_spaced",
        k=k,
        token_type_ids=base.token_type_ids,
        padding_side=base.padding_side,
        max_length=base.max_length,
        max_length_source=base.max_length_source,
    )
