"""``geneb.as_gfmbench_model``: any geneb model with GFMBench-API's five model methods.

The object it returns can be handed to GFMBench-API's task classes (``eval_test_set(model)``)
or to ``task.evaluate(model)``. Every method follows ``base_gfm_model.py`` (NVIDIA/GFMBench-api
@ bab164e) and answers None where the model cannot (``notes`` says why, per output):

- ``infer_sequence_to_sequence(sequences, conditional_input=None)`` ->
  ``(sequence_probs, sequence_embeddings, sequence_representative)``:
  the representative is geneb's pooled embedding (``get_embedder(spec, **options).embed``,
  ``(B, dim)``: the float32 vector ``geneb extract`` stores, given as float64 so that
  GFMBench's metrics, which compute in the dtype they get, do not lose the small
  reference-to-variant differences to float32 cancellation); ``sequence_embeddings`` the last
  (or ``layer``) hidden state of each content token, special tokens removed, ``(B, T, H)``
  zero-padded to the longest row (transformers models given the sequence itself; None
  for k-mer and plugin models and for spaced k-mer text input, DNABERT-1);
  ``sequence_probs[b, t]`` = p(content token t | the tokens before it) from a causal
  language-model head with trained weights (1.0 for a first token, which has no context;
  rows padded with 1.0, which adds nothing to a sum of logs); None without a causal head
  (masked LMs: an unmasked forward gives no proper base probability, as GFMBench-API's own
  DNABERT model says).
- ``sequence_pos_to_prob_pos(sequences, pos)`` -> ``(B,)`` int64: the index t of the content
  token that holds base ``pos`` in both arrays above (t, not t - 1: ``sequence_probs[t]`` is
  already the probability of token t); -1 where no token holds it, the tokens do not spell the
  sequence, or the model has no per-position output.
- ``infer_masked_sequence_to_token_probs(sequences, variant_pos, variant_letters,
  reference_letters, conditional_input=None)`` -> ``(p_variant (B,), p_reference (B,))``: with
  a masked-LM head, the tokens overlapping ``variant_pos`` masked, one forward, the probability
  of the tokens the sequence has there with each letter (geneb's masked-marginal LLR is
  ``log p_variant - log p_reference``); a letter that changes token boundaries is refused.
  ``(None, None)`` without a masked head.
- ``infer_sequence_to_labels_probs`` / ``infer_variant_ref_sequences_to_labels_probs``: None
  (a frozen geneb model has no classifier; GFMBench-API fine-tunes one).

Forwards run one exact length per batch (no padding: a score or embedding never depends on
what shares its batch, as for geneb's scorers). ``conditional_input`` is accepted and unused.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from geneb.errors import GenebError
from geneb.vocabulary import DEFAULT_DEVICE


class GenebGFMModel:
    """A geneb embedder (and its language-model head, if any) behind GFMBench's methods."""

    def __init__(self, spec: str, embedder: Any, lm: Any, notes: dict[str, str],
                 batch_tokens: int) -> None:
        self.spec, self.embedder, self.lm = spec, embedder, lm
        self.notes = dict(notes)  # output -> why it is None
        self.batch_tokens = int(batch_tokens)
        # per-position outputs need tokens that are spans of the sequence itself: not the
        # spaced k-mer text DNABERT-1 or a text model is given (geneb.models.adapters.families)
        self._hf = per_position_ok(embedder) is None

    def __repr__(self) -> str:
        return f"GenebGFMModel({self.spec!r})"

    # ------------------------------------------------------------ GFMBench's methods
    def infer_sequence_to_labels_probs(self, sequences: list[str],
                                       conditional_input: Any = None) -> None:
        """None: a frozen geneb model has no classifier."""
        return None

    def infer_variant_ref_sequences_to_labels_probs(
            self, variant_sequences: list[str], ref_sequences: list[str],
            conditional_input: Any = None) -> None:
        """None: a frozen geneb model has no variant classifier."""
        return None

    def infer_sequence_to_sequence(self, sequences: list[str], conditional_input: Any = None,
                                   ) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray]:
        """(sequence_probs, sequence_embeddings, sequence_representative): module docstring."""
        seqs = _sequences(sequences)
        rep = np.asarray(self.embedder.embed(seqs), dtype=np.float64)
        emb = self._per_token_states(seqs) if self._hf else None
        probs = self._token_probs(seqs) if self._head("causal_lm") else None
        return probs, emb, rep

    def sequence_pos_to_prob_pos(self, sequences: list[str], pos: int) -> np.ndarray:
        """Index of the content token holding base ``pos`` (-1 where none): module docstring."""
        seqs = _sequences(sequences)
        if not self._hf:
            return np.full(len(seqs), -1, dtype=np.int64)
        out = np.full(len(seqs), -1, dtype=np.int64)
        for b, t in enumerate(self._tokenise(seqs)):
            if t.starts is None or t.ends is None:
                continue
            content = t.starts >= 0
            hit = np.flatnonzero((t.starts[content] <= pos) & (t.ends[content] > pos))
            if len(hit):
                out[b] = int(hit[0])
        return out

    def infer_masked_sequence_to_token_probs(
            self, sequences: list[str], variant_pos: int, variant_letters: list[str],
            reference_letters: list[str], conditional_input: Any = None,
    ) -> tuple[np.ndarray | None, np.ndarray | None]:
        """(p_variant, p_reference) at the masked ``variant_pos``: module docstring."""
        if not self._head("masked_lm"):
            return None, None
        from geneb.vep.likelihood import masked_positions

        seqs = _sequences(sequences)
        if len(variant_letters) != len(seqs) or len(reference_letters) != len(seqs):
            raise GenebError(f"infer_masked_sequence_to_token_probs: {len(seqs)} sequences but "
                             f"{len(variant_letters)} variant and {len(reference_letters)} "
                             "reference letters; expected one of each per sequence")
        toks = self.lm.tokenise(seqs)
        masks = [masked_positions(t, variant_pos, variant_pos + 1) for t in toks]
        for s, m in zip(seqs, masks, strict=True):
            if not m:
                raise GenebError(f"infer_masked_sequence_to_token_probs: no token of a "
                                 f"{len(s)}-base sequence holds position {variant_pos}")
        lps = self.lm.masked_logprobs(toks, masks)
        p = [self._letter_probs(seqs, variant_pos, letters, toks, masks, lps)
             for letters in (variant_letters, reference_letters)]
        return p[0], p[1]

    # ------------------------------------------------------------ helpers
    def _head(self, kind: str) -> bool:
        return self.lm is not None and self.lm.kind == kind

    def _tokenise(self, seqs: list[str]) -> list[Any]:
        from geneb.vep.likelihood import tokenise_aligned

        tok = self.embedder.tokenizer
        special = {i for i in tok.all_special_ids if i is not None}
        return tokenise_aligned(tok, special, self.embedder.info.model_type, seqs)

    def _content(self, t: Any) -> np.ndarray:
        """Positions of ``t``'s content tokens (aligned ones, else the non-special ones)."""
        if t.starts is not None:
            return np.flatnonzero(t.starts >= 0)
        special = set(self.embedder.tokenizer.all_special_ids)
        return np.array([k for k, i in enumerate(t.ids.tolist()) if i not in special], np.int64)

    def _per_token_states(self, seqs: list[str]) -> np.ndarray:
        """(B, T, H) hidden states of the content tokens, exact-length batches, zero-padded."""
        import torch

        from geneb.models.model_code import model_code_errors
        from geneb.models.outputs import hidden_states, last_hidden_state
        from geneb.models.pooling import resolve_layers
        from geneb.vep.likelihood import equal_length_batches

        e = self.embedder
        toks = self._tokenise(seqs)
        lens = np.array([len(t.ids) for t in toks], dtype=np.int64)
        if e.max_length is not None and len(lens) and lens.max() > e.max_length:
            raise GenebError(f"infer_sequence_to_sequence: a sequence of {lens.max()} tokens "
                             f"exceeds {e.name!r}'s {e.max_length}; give shorter sequences")
        rows: list[np.ndarray] = [np.empty((0, e.dim), np.float32)] * len(toks)
        for idx in equal_length_batches(lens, self.batch_tokens):
            ids = torch.from_numpy(np.stack([toks[i].ids for i in idx])).to(e.device)
            with torch.inference_mode(), model_code_errors(e.name, "running its forward"):
                if e.layer == -1:
                    h = last_hidden_state(e.model(input_ids=ids), e.name)
                else:
                    states = hidden_states(e.model(input_ids=ids, output_hidden_states=True),
                                           e.name)
                    h = states[resolve_layers((e.layer,), len(states), e.name)[0]]
            h = h.float().cpu().numpy()
            for r, i in enumerate(idx):
                rows[i] = h[r, self._content(toks[i])]
        width = max((len(r) for r in rows), default=0)
        out = np.zeros((len(rows), width, e.dim), dtype=np.float64)  # float64: see above
        for b, row in enumerate(rows):
            out[b, : len(row)] = row
        return out

    def _token_probs(self, seqs: list[str]) -> np.ndarray:
        """(B, T) p(content token t | tokens before it) from the causal head (module doc)."""
        toks = self.lm.tokenise(seqs)
        lps = self.lm.token_logprobs(toks)  # entry k: token k + 1
        rows = []
        for t, lp in zip(toks, lps, strict=True):
            full = np.concatenate([[0.0], lp])  # token 0 has no context: log p = 0
            rows.append(np.exp(full[self._content(t)]))
        width = max((len(r) for r in rows), default=0)
        out = np.ones((len(rows), width), dtype=np.float64)
        for b, row in enumerate(rows):
            out[b, : len(row)] = row
        return out

    def _letter_probs(self, seqs: list[str], pos: int, letters: Sequence[str], toks: list[Any],
                      masks: list[tuple[int, ...]], lps: list[np.ndarray]) -> np.ndarray:
        """p of the tokens at ``masks`` when base ``pos`` of each sequence is its letter."""
        subs = [s[:pos] + str(a) + s[pos + 1:] for s, a in zip(seqs, letters, strict=True)]
        sub_toks = self.lm.tokenise(subs)
        out = np.empty(len(seqs))
        for b, (t, st, m, lp) in enumerate(zip(toks, sub_toks, masks, lps, strict=True)):
            outside = np.ones(len(t.ids), dtype=bool)
            outside[list(m)] = False
            if len(st.ids) != len(t.ids) or not np.array_equal(st.ids[outside], t.ids[outside]):
                raise GenebError(f"infer_masked_sequence_to_token_probs: letter {letters[b]!r} "
                                 f"at position {pos} changes the token boundaries of sequence "
                                 f"{b}; expected a letter the tokenizer keeps in its token")
            out[b] = float(np.exp(lp[np.arange(len(m)), st.ids[list(m)]].astype(np.float64)
                                  .sum()))
        return out


def per_position_ok(embedder: Any) -> str | None:
    """Why ``embedder`` has no per-position outputs, or None when it has them."""
    if not (hasattr(embedder, "tokenizer") and hasattr(embedder, "model")):
        return "not a transformers model: no per-position states"
    fmt = getattr(getattr(embedder, "rules", None), "input_format", "raw")
    if fmt != "raw":
        return f"its input is {fmt} text, whose tokens are not spans of the sequence"
    return None


def _sequences(sequences: Any) -> list[str]:
    if isinstance(sequences, str) or not all(isinstance(s, str) for s in sequences):
        raise GenebError("sequences: expected a list of DNA strings")
    return list(sequences)


def build_gfmbench_model(spec: str, *, language_model: bool = True,
                         batch_tokens: int | None = None, **options: Any) -> GenebGFMModel:
    """The model behind ``geneb.as_gfmbench_model`` (see its docstring)."""
    from geneb.models.device import resolve_device
    from geneb.models.registry import get_embedder
    from geneb.vep.capabilities import detect
    from geneb.vep.likelihood import LMScorer
    from geneb.vep.runner import vep_batch_tokens

    embedder = get_embedder(spec, **options)  # checks every option first
    device = resolve_device(options.get("device", DEFAULT_DEVICE))
    budget = batch_tokens or vep_batch_tokens(device)
    notes: dict[str, str] = {}
    lm = None
    if language_model:
        caps = detect(spec, trust_remote_code=bool(options.get("trust_remote_code", False)),
                      device=device)
        kind = next((k for k in ("causal_lm", "masked_lm") if k in caps.heads), None)
        if kind is not None:
            model, tok = caps.heads[kind]
            lm = LMScorer(model, tok, kind, device, budget)
        notes.update({n: "; ".join(caps.notes) or "no language-model head"
                      for n in ("sequence_probs", "masked_token_probs")})
    else:
        notes.update({n: "language_model=False" for n in ("sequence_probs",
                                                          "masked_token_probs")})
    if lm is not None:
        notes.pop("sequence_probs" if lm.kind == "causal_lm" else "masked_token_probs")
        notes["masked_token_probs" if lm.kind == "causal_lm" else "sequence_probs"] = (
            f"the head is a {lm.kind}")
    why = per_position_ok(embedder)
    if why is not None:
        notes["sequence_embeddings"] = why
    notes["labels_probs"] = "a frozen model has no classifier"
    return GenebGFMModel(spec, embedder, lm, notes, budget)
