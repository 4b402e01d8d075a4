"""Log-likelihood-ratio scores from a language-model head (causal or masked).

Causal LM: ``LL(window) = sum_{t >= 1} log p(token_t | tokens_<t)`` over the window's tokens as
the model's tokenizer makes them, special tokens included (token 0 is never scored: it has no
context). ``llr = LL(alt window) - LL(ref window)``. One forward per distinct window: the
reference window of a position serves every alternate allele there.

Masked LM (masked marginal): in the reference window, mask every token whose bases overlap the
variant's reference bases; one forward of that masked window gives, at each masked position,
``log p(token)``. ``llr = sum log p(alt tokens) - sum log p(ref tokens)`` over the masked
positions, where the alternate tokens are those of the alternate window at the same positions.
Single-base tokenizers mask one token; non-overlapping 6-mers (Nucleotide Transformer) mask the
6-mer that holds the base. The alternate window must tokenise into the same number of tokens,
identical outside the masked ones (true for SNVs with character and fixed k-mer tokenizers);
otherwise the variant gets status ``token_boundaries_changed`` (BPE merges that move, indels).
One forward per distinct (reference window, masked tokens) serves all alleles there.

Batches hold windows of one token length only: no padding, so a score never depends on what
shares its batch (and models that ignore the attention mask, like HyenaDNA, stay exact).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from geneb.errors import ModelError
from geneb.models.adapters.lucaone import TOKEN_SPELLING, TOKENIZE_ONE_AT_A_TIME

TOKENS_CHANGED = "token_boundaries_changed"
NOT_ALIGNABLE = "tokens_not_alignable_to_bases"
TOO_LONG = "window_longer_than_model_context"


def equal_length_batches(lengths: np.ndarray, batch_tokens: int) -> list[np.ndarray]:
    """Indices grouped by exact length, each group cut so ``rows * length <= batch_tokens``
    (at least one row). Deterministic: groups by ascending length, rows in index order."""
    lengths = np.asarray(lengths, dtype=np.int64)
    out: list[np.ndarray] = []
    for length in np.unique(lengths):
        idx = np.flatnonzero(lengths == length)
        per = max(1, int(batch_tokens) // max(1, int(length)))
        out.extend(idx[i : i + per] for i in range(0, len(idx), per))
    return out


@dataclass(frozen=True)
class Tokenised:
    """A window's full token ids and, per content token, its base span [start, end)."""

    ids: np.ndarray
    starts: np.ndarray | None  # per token of ids; -1 for special tokens; None: not alignable
    ends: np.ndarray | None


class LMScorer:
    """A loaded language model with a causal or masked head, scoring windows exactly."""

    def __init__(
        self, model: Any, tokenizer: Any, kind: str, device: str, batch_tokens: int
    ) -> None:
        if kind not in ("causal_lm", "masked_lm"):
            raise ModelError(f"unknown language-model kind {kind!r}")
        self.model, self.tokenizer, self.kind = model, tokenizer, kind
        self.name = str(getattr(model, "name_or_path", "") or type(model).__name__)
        self.device, self.batch_tokens = device, int(batch_tokens)
        self.forwards = 0  # forward passes run (for benchmarks)
        self.sequences = 0  # sequences through the model
        from geneb.models.adapters.hf import _position_limit

        self.max_tokens = _position_limit(model.config)
        if kind == "masked_lm" and tokenizer.mask_token_id is None:
            raise ModelError("masked-LM scoring needs a tokenizer with a mask token")
        self._special = {i for i in tokenizer.all_special_ids if i is not None}
        self._model_type = str(getattr(model.config, "model_type", ""))

    # ------------------------------------------------------------ tokenising
    def tokenise(self, windows: Sequence[str]) -> list[Tokenised]:
        """Full ids (specials as the tokenizer adds them) and base spans of content tokens."""
        return tokenise_aligned(self.tokenizer, self._special, self._model_type, windows)

    # ------------------------------------------------------------ forwards
    def _logprobs(self, batch: np.ndarray) -> Any:
        """log-softmax of the logits (float32) of one equal-length batch, on the CPU."""
        import torch

        from geneb.models.model_code import model_code_errors
        from geneb.models.outputs import logits_of

        ids = torch.from_numpy(batch).to(self.device)
        with torch.inference_mode(), model_code_errors(self.name, "running its LM head"):
            logits = logits_of(self.model(input_ids=ids), self.name)
        self.forwards += 1
        self.sequences += int(batch.shape[0])
        return torch.log_softmax(logits.float(), dim=-1).cpu()

    def log_likelihoods(self, toks: Sequence[Tokenised]) -> np.ndarray:
        """Causal LL of each tokenised window (float64 sums of float32 log-probs)."""
        return np.array([lp.sum() for lp in self.token_logprobs(toks)], dtype=np.float64)

    def token_logprobs(self, toks: Sequence[Tokenised]) -> list[np.ndarray]:
        """Causal: per window, ``log p(token_t | tokens_<t)`` for t = 1.. (float64, one fewer
        than its tokens); the sums are :meth:`log_likelihoods`."""
        import torch

        out: list[np.ndarray] = [np.empty(0)] * len(toks)
        lens = np.fromiter((len(t.ids) for t in toks), dtype=np.int64, count=len(toks))
        for idx in equal_length_batches(lens, self.batch_tokens):
            batch = np.stack([toks[i].ids for i in idx])
            lp = self._logprobs(batch)
            tgt = torch.from_numpy(batch[:, 1:])
            got = lp[:, :-1, :].gather(-1, tgt.unsqueeze(-1)).squeeze(-1).double().numpy()
            for r, i in enumerate(idx):
                out[i] = got[r]
        return out

    def masked_logprobs(
        self, toks: Sequence[Tokenised], masks: Sequence[tuple[int, ...]]
    ) -> list[np.ndarray]:
        """For each (window, masked token positions): the full log-prob rows at those positions
        after masking them, shape (len(mask), vocab), float32."""
        out: list[np.ndarray] = [np.empty(0)] * len(toks)
        lens = np.fromiter((len(t.ids) for t in toks), dtype=np.int64, count=len(toks))
        mask_id = int(self.tokenizer.mask_token_id)
        for idx in equal_length_batches(lens, self.batch_tokens):
            batch = np.stack([toks[i].ids for i in idx]).copy()
            for r, i in enumerate(idx):
                batch[r, list(masks[i])] = mask_id
            lp = self._logprobs(batch)
            for r, i in enumerate(idx):
                out[i] = lp[r, list(masks[i]), :].numpy()
        return out


def tokenise_aligned(tokenizer: Any, special: set[int], model_type: str,
                     texts: Sequence[str]) -> list[Tokenised]:
    """``texts`` tokenised with specials, each token's base span aligned (:func:`align_tokens`),
    by the family's rules: one text a call where the tokenizer's list call fails, and the bases
    of tokens spelled otherwise (LucaOne: :data:`TOKENIZE_ONE_AT_A_TIME`,
    :data:`TOKEN_SPELLING`)."""
    if not texts:  # e.g. every window outside the reference: nothing to tokenise
        return []
    if model_type in TOKENIZE_ONE_AT_A_TIME:
        enc = [tokenizer(t, add_special_tokens=True)["input_ids"] for t in texts]
    else:
        enc = tokenizer(list(texts), add_special_tokens=True)["input_ids"]
    spelling = TOKEN_SPELLING.get(model_type, {})
    return [align_tokens(tokenizer, special, text, ids, spelling)
            for text, ids in zip(texts, enc, strict=True)]


def align_tokens(tokenizer: Any, special: set[int], text: str, ids: Sequence[int],
                 spelling: Mapping[str, str] | None = None) -> Tokenised:
    """``ids`` (the tokenizer's encoding of ``text``) with each content token's base span;
    spans ``None`` when the tokens do not spell ``text`` (not alignable). ``spelling``: bases
    of tokens that spell them otherwise (LucaOne's digits, :data:`TOKEN_SPELLING`)."""
    spelling = spelling or {}
    arr = np.asarray(ids, dtype=np.int64)
    strs = tokenizer.convert_ids_to_tokens(arr.tolist())
    starts = np.full(len(arr), -1, dtype=np.int64)
    ends = np.full(len(arr), -1, dtype=np.int64)
    pos = 0
    for k, (i, s) in enumerate(zip(arr.tolist(), strs, strict=True)):
        if i in special and i != tokenizer.unk_token_id:
            continue
        s = spelling.get(s, s).removeprefix("##").removeprefix("Ġ").removeprefix("▁")
        # case-blind: GPN's tokenizer lower-cases (normaliser) what it is given
        if text[pos : pos + len(s)].upper() != s.upper() or not s:
            return Tokenised(arr, None, None)
        starts[k], ends[k] = pos, pos + len(s)
        pos += len(s)
    if pos != len(text):
        return Tokenised(arr, None, None)
    return Tokenised(arr, starts, ends)


def masked_positions(t: Tokenised, lo: int, hi: int) -> tuple[int, ...]:
    """Token positions whose bases overlap [lo, hi) (empty when not alignable)."""
    if t.starts is None or t.ends is None:
        return ()
    hit = (t.starts >= 0) & (t.starts < hi) & (t.ends > lo)
    return tuple(int(k) for k in np.flatnonzero(hit))
