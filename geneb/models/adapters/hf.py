"""``hf``: any transformers encoder from a local folder or a cached hub id, frozen and pooled.

Loading (``geneb.models.adapters.hf_load``): explicit dtype, no pooler, eval mode, never the
network, never custom code unless ``trust_remote_code=True`` was given for this model. Pooling
(``geneb.models.pooling``): mask-weighted mean over non-padding tokens of the last hidden
state (default), over non-special tokens, the first or last real token, or the max; of one
layer, or of several layers from one forward (``layers``). Long sequences: ``truncate`` (counted) or
``window``. Batching: what the load-time self-test (``geneb.models.selftest``) measured to
leave every row equal to the sequence embedded alone (padding side, equal-length-only
batches, or one sequence per forward).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from geneb.errors import ModelError, unknown_name
from geneb.models.adapters.families import FamilyRules, accepts, detect_rules
from geneb.models.adapters.hf_load import load_hf
from geneb.models.device import resolve_device, resolve_dtype, tf32, torch_dtype
from geneb.models.embedder import ModelInfo
from geneb.models.hub import resolve_source
from geneb.models.model_code import model_code_errors
from geneb.models.outputs import hidden_states, last_hidden_state
from geneb.models.pooling import (
    WINDOW_RULES,
    check_layers,
    check_pooling,
    combine_windows,
    pool_states,
    resolve_layers,
)
from geneb.models.selftest import (
    HALF_PRECISION_NOTE,
    BatchPolicy,
    choose_policy,
    probe_sequences,
    selftest_precision,
    tolerance_for,
)
from geneb.models.trust import check_trust_flag, enforce_trust
from geneb.vocabulary import (
    DEFAULT_DEVICE,
    DEFAULT_LAYER,
    DEFAULT_POOLING,
    DEFAULT_TRUNCATION,
    TRUNCATIONS,
)


@dataclass(frozen=True)
class Prepared:
    """One sequence ready for the model: one or more windows of token ids."""

    windows: tuple[np.ndarray, ...]
    dropped: int = 0  # content tokens cut off by truncation (never embedded)

    @property
    def n_tokens(self) -> int:
        return sum(len(w) for w in self.windows)


class HFEmbedder:
    """A frozen transformers model as an embedder (also the base of ``random:`` and MiniLM)."""

    adapter = "hf"

    def __init__(
        self,
        model: str,
        *,
        device: str = DEFAULT_DEVICE,
        dtype: str | None = None,
        max_length: int | None = None,
        pooling: str = DEFAULT_POOLING,
        layer: int = DEFAULT_LAYER,
        layers: Sequence[int] | None = None,
        truncation: str = DEFAULT_TRUNCATION,
        trust_remote_code: bool = False,
        random_init_seed: int | None = None,
        name: str | None = None,
        rules_factory: Any = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        check_pooling(pooling)
        self.layers = check_layers(layers, int(layer))  # None: one layer, the bare model key
        if truncation not in TRUNCATIONS:
            raise unknown_name("truncation policy", truncation, TRUNCATIONS)
        if max_length is not None and max_length < 4:
            raise ModelError(f"max_length: expected at least 4 tokens, got {max_length}",
                             param="max_length")
        self.source = str(model)
        self.pooling = pooling
        self.layer = int(layer) if self.layers is None else self.layers[0]
        self._layers = self.layers or (self.layer,)  # hidden states one forward pools
        self._n_states: int | None = None  # hidden states the model returns (once measured)
        self.truncation = truncation
        self.trust_remote_code = check_trust_flag(trust_remote_code)
        self.random_init_seed = random_init_seed
        # where the files are and whether their code may run: known before torch is imported,
        # so an uncached hub id or a refused folder fails at once
        self._source = resolve_source(self.source)
        self._remote_code = enforce_trust(self._source.folder, self.source, self.trust_remote_code)
        self.device = resolve_device(device)
        self.dtype_name = resolve_dtype(dtype, self.device)
        self._extra = dict(extra or {})
        self._load(rules_factory)
        if max_length is not None:
            cap = _position_limit(self.config)
            if cap is not None and max_length > cap:
                raise ModelError(
                    f"max_length: {max_length} exceeds what {self.source!r} can embed "
                    f"({cap} positions); use truncation='window' for longer sequences",
                    param="max_length",
                )
            self.max_length, self._max_source = int(max_length), "--max-length"
        else:
            self.max_length, self._max_source = self.rules.max_length, self.rules.max_length_source
        self._prefix, self._suffix = self._special_frame()
        room = self.max_length - len(self._prefix) - len(self._suffix)
        if room < 1:
            raise ModelError(
                f"max length {self.max_length} leaves no room for sequence tokens "
                f"({len(self._prefix) + len(self._suffix)} special tokens per input)"
            )
        self._room = room
        base = name or self._default_name()
        self._name = f"random:{base}" if random_init_seed is not None and not name else base
        self._side = self.rules.padding_side
        self._grouping = "any"
        self.batch_policy = self._self_test()

    # ------------------------------------------------------------------ loading
    def _default_name(self) -> str:
        p = Path(self.source)
        return p.resolve().name if p.is_dir() else self.source

    def _load(self, rules_factory: Any) -> None:
        import transformers

        source = self._source
        loaded = load_hf(
            source,
            trust_remote_code=self.trust_remote_code,
            torch_dtype=torch_dtype(self.dtype_name),
            random_init_seed=self.random_init_seed,
            device=self.device,
        )
        config, tok, model = loaded.config, loaded.tokenizer, loaded.model
        model.to(self.device)  # load_hf placed it already; a no-op kept for custom loaders
        # provenance and the self-test follow the weights, not the request
        self.dtype_name = loaded.dtype or self.dtype_name
        self.config, self.tokenizer, self.model = config, tok, model
        self.rules: FamilyRules = (rules_factory or detect_rules)(config, tok, model)
        self._accepts_mask = accepts(model.forward, "attention_mask")
        special = set(tok.all_special_ids) - {tok.unk_token_id}
        self._special_ids = np.array(sorted(i for i in special if i is not None), dtype=np.int64)
        self._n_params = int(sum(p.numel() for p in model.parameters()))
        hidden = getattr(config, "hidden_size", None) or getattr(config, "d_model", None)
        self._dim = int(hidden) if hidden else int(self._probe_dim())
        self._revision = loaded.revision
        self._hub = {"hub_id": source.hub_id, "hub_commit": source.commit} if source.is_hub else {}
        self._tf_version = transformers.__version__
        self._absent_weights = list(loaded.absent_weights)

    def _probe_dim(self) -> int:
        import torch

        ids = torch.tensor([[self.tokenizer.pad_token_id]], device=self.device)
        with torch.inference_mode(), model_code_errors(self.source, "running its forward"):
            return int(last_hidden_state(self.model(input_ids=ids), self.source).shape[-1])

    def _special_frame(self) -> tuple[np.ndarray, np.ndarray]:
        """Special tokens the tokenizer puts before and after the content (e.g. [CLS] .. [SEP])."""
        probe = self.rules.transform("ACGTACGTAC" * 3)
        full = list(self.tokenizer(probe, add_special_tokens=True)["input_ids"])
        body = list(self.tokenizer(probe, add_special_tokens=False)["input_ids"])
        n = len(body)
        for i in range(len(full) - n + 1):
            if full[i : i + n] == body:
                return np.array(full[:i], dtype=np.int64), np.array(full[i + n :], dtype=np.int64)
        raise ModelError(
            f"tokenizer of {self.source!r}: special tokens are not a plain prefix/suffix of the "
            "content tokens; cannot truncate or window safely"
        )

    # ------------------------------------------------------------------ protocol
    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def info(self) -> ModelInfo:
        extra: dict[str, Any] = {
            "model_source": self.source,
            "model_class": type(self.model).__name__,
            "input_rules": self.rules.describe(),
            "max_length_source": self._max_source,
            "padding_side": self.rules.padding_side,
            "transformers": self._tf_version,
            "batch_invariance": self.batch_policy.describe(),
            "trust_remote_code": self.trust_remote_code,
        }
        if self.layers is not None:
            extra["layers"] = list(self.layers)
        if self._n_states is not None:
            extra["hidden_states"] = self._n_states
        if self.truncation == "window":
            extra["window_pooling"] = WINDOW_RULES[self.pooling]
        if self._remote_code:
            extra["remote_code"] = list(self._remote_code)
        if self._absent_weights:
            extra["absent_weights"] = {
                "names": list(self._absent_weights),
                "why_accepted": "missing from the checkpoint; measured not to reach the "
                "embedding (no gradient from the last hidden state)",
            }
        extra.update(self._hub)
        if self.random_init_seed is not None:
            extra["random_init_seed"] = int(self.random_init_seed)
            extra["control"] = "same architecture, seeded random weights (no pretraining)"
        extra.update(self._extra)
        return ModelInfo(
            name=self.name,
            revision=self._revision,
            adapter=self.adapter if self.random_init_seed is None else "random",
            n_params=self._n_params,
            model_type=str(getattr(self.config, "model_type", "")),
            tokenizer=type(self.tokenizer).__name__,
            pooling=self.pooling,
            layer=self.layer,
            max_length=self.max_length,
            truncation=self.truncation,
            dtype=self.dtype_name,
            device=self.device,
            extra=extra,
        )

    # ------------------------------------------------------------------ batch invariance
    def _self_test(self) -> BatchPolicy:
        """Measure how this model may be batched (see ``geneb.models.selftest``)."""
        mixed_seqs, equal_seqs = probe_sequences()
        mixed: list[Prepared] = []
        seen: set[int] = set()
        for p in self.prepare(mixed_seqs):
            if p.n_tokens not in seen:  # distinct token counts only
                seen.add(p.n_tokens)
                mixed.append(p)
        groups: dict[int, list[Prepared]] = {}
        for p in self.prepare(equal_seqs):
            groups.setdefault(p.n_tokens, []).append(p)
        equal = max(groups.values(), key=len)
        own = self.rules.padding_side
        other = "right" if own == "left" else "left"

        def embed(items: Sequence[Prepared], side: str | None) -> np.ndarray:
            pooled, _ = self._forward([w for p in items for w in p.windows], side or own)
            return np.concatenate(list(pooled), axis=1)  # every layer must be invariant

        with selftest_precision(self.model, self.dtype_name) as test_dtype:
            policy = choose_policy(mixed, equal, embed, [own, other], tolerance_for(test_dtype))
        if test_dtype != "float32":
            note = HALF_PRECISION_NOTE.format(dtype=test_dtype, tol=policy.tolerance)
            policy = dataclasses.replace(policy, note="; ".join(filter(None, [policy.note, note])))
        self._grouping = {"padded": "any", "equal_length": "equal", "single": "single"}[policy.mode]
        self._side = policy.padding_side or own
        return policy

    # ------------------------------------------------------------------ embedding
    def prepare(self, sequences: Sequence[str]) -> list[Prepared]:
        """Tokenise once: content ids, then the [prefix] content [suffix] frame per window."""
        texts = [self.rules.transform(s) for s in sequences]
        if not texts:
            return []
        if self.rules.tokenize_each:
            bodies = [self.tokenizer(t, add_special_tokens=False)["input_ids"] for t in texts]
        else:
            bodies = self.tokenizer(texts, add_special_tokens=False)["input_ids"]
        room, pre, suf = self._room, self._prefix, self._suffix
        out: list[Prepared] = []
        for body in bodies:
            b = np.asarray(body, dtype=np.int64)
            if len(b) <= room:
                out.append(Prepared((np.concatenate([pre, b, suf]),)))
            elif self.truncation == "truncate":
                out.append(Prepared((np.concatenate([pre, b[:room], suf]),), len(b) - room))
            else:
                wins = tuple(
                    np.concatenate([pre, b[i : i + room], suf]) for i in range(0, len(b), room)
                )
                out.append(Prepared(wins))
        return out

    def cost(self, items: Sequence[Prepared]) -> np.ndarray:
        return np.fromiter(
            (len(p.windows) * max(len(w) for w in p.windows) for p in items),
            dtype=np.int64,
            count=len(items),
        )

    def embed(self, sequences: Sequence[str]) -> np.ndarray:
        return self.embed_prepared(self.prepare(sequences))

    def embed_prepared(self, items: Sequence[Prepared]) -> np.ndarray:
        """Embed ``items`` (any mix of lengths); with ``layers``, the first listed layer."""
        first: np.ndarray = self.embed_prepared_layers(items)[0]
        return first

    def embed_prepared_layers(self, items: Sequence[Prepared]) -> np.ndarray:
        """``(n_layers, len(items), dim)``: every layer of ``layers`` (or the one ``layer``)
        from the same forward passes, grouped as the batch policy allows."""
        if not items:
            return np.zeros((len(self._layers), 0, self.dim), dtype=np.float32)
        wins = [w for p in items for w in p.windows]
        lens = np.fromiter((len(w) for w in wins), dtype=np.int64, count=len(wins))
        if self._grouping == "single":
            groups = [np.array([i]) for i in range(len(wins))]
        elif self._grouping == "equal":
            groups = [np.flatnonzero(lens == n) for n in np.unique(lens)]
        else:
            groups = [np.arange(len(wins))]
        pooled = np.empty((len(self._layers), len(wins), self.dim), dtype=np.float32)
        counts = np.empty(len(wins), dtype=np.float64)
        for g in groups:
            pooled[:, g], counts[g] = self._forward([wins[i] for i in g], self._side)
        n_windows = np.fromiter((len(p.windows) for p in items), np.int64, count=len(items))
        return combine_windows(pooled, counts, n_windows, self.pooling)

    def _forward(self, wins: Sequence[np.ndarray], side: str, *, width: int | None = None,
                 pass_mask: bool = True, pool_every_position: bool = False,
                 ) -> tuple[np.ndarray, np.ndarray]:
        """ONE forward pass of ``wins`` padded on ``side``: ((n_layers, n, dim) pooled vectors,
        pooled token counts), by ``geneb.models.pooling``.

        GENEB's recipes (``geneb.extract.geneb_recipe``) also pad to a fixed ``width``, may
        withhold the attention mask (``pass_mask``) and pool over every position, padding
        included (``pool_every_position``: the mean over all of them, or position 0)."""
        import torch

        width = max(width or 0, max(len(w) for w in wins))
        ids = np.full((len(wins), width), self.tokenizer.pad_token_id, dtype=np.int64)
        mask = np.zeros((len(wins), width), dtype=np.int64)
        for r, w in enumerate(wins):
            sl = slice(width - len(w), width) if side == "left" else slice(0, len(w))
            ids[r, sl] = w
            mask[r, sl] = 1
        t_ids = torch.from_numpy(ids).to(self.device)
        kwargs: dict[str, Any] = {"input_ids": t_ids}
        if self._accepts_mask and pass_mask:
            kwargs["attention_mask"] = torch.from_numpy(mask).to(self.device)
        if self.rules.token_type_ids:
            kwargs["token_type_ids"] = torch.zeros_like(t_ids)
        with torch.inference_mode(), tf32(False):  # float32 means IEEE float32 on CUDA too
            try:
                with model_code_errors(self.name, "running its forward"):
                    if self._layers == (-1,):
                        hidden = last_hidden_state(self.model(**kwargs), self.name)
                    else:
                        out = self.model(**kwargs, output_hidden_states=True)
                        states = hidden_states(out, self.name)
            except torch.OutOfMemoryError as e:
                raise ModelError(
                    f"{self.name}: out of memory on {self.device} for a batch of "
                    f"{ids.shape[0]} x {ids.shape[1]} tokens; lower the token budget per "
                    "batch (batch_tokens)"
                ) from e
            if self._layers != (-1,):
                self._n_states = len(states)
                picked = [states[i] for i in resolve_layers(self._layers, len(states), self.name)]
            else:
                picked = [hidden]
            pooled_tokens = np.ones_like(mask) if pool_every_position else mask
            return pool_states(picked, ids, pooled_tokens, self.pooling, self._special_ids)


def _position_limit(config: Any) -> int | None:
    """Most tokens a model with absolute position embeddings accepts (None: no such limit)."""
    mpe = getattr(config, "max_position_embeddings", None)
    if not isinstance(mpe, int) or mpe <= 0:
        return None
    kind = getattr(config, "position_embedding_type", None)
    rotary = any(hasattr(config, a) for a in ("rope_theta", "rope_scaling", "rope_parameters"))
    if (kind is not None and kind != "absolute") or (kind is None and rotary):
        return None  # relative positions: no table to run off the end of
    if getattr(config, "model_type", "") in ("esm", "roberta", "xlm-roberta", "camembert"):
        return mpe - 2
    return mpe
