"""``hf``: any transformers encoder from a local folder or a hub id, frozen and mean-pooled.

Loading: explicit dtype, no pooler (``add_pooling_layer=False`` where the class accepts it),
eval mode, ``torch.inference_mode``. Custom model code is never run without
``trust_remote_code=True`` and never prompts: a model that declares custom code is refused
with a clear error (even when transformers would silently fall back to a built-in class).
Pooling: mask-weighted mean over non-padding tokens of the last hidden state (default), or
over non-special tokens, or of another layer. Long sequences: ``truncate`` or ``window``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from geneb.errors import ModelError, unknown_name
from geneb.extract.device import resolve_device, resolve_dtype, torch_dtype
from geneb.extract.families import FamilyRules, accepts, detect_rules, is_dnabert1, lowercases
from geneb.extract.registry import HUB_ID_RE as _HUB_ID  # the one spec grammar

POOLINGS = ("mean", "mean_nonspecial")
TRUNCATIONS = ("truncate", "window")
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".h5", ".msgpack", ".index.json")


@dataclass(frozen=True)
class Prepared:
    """One sequence ready for the model: one or more windows of token ids."""

    windows: tuple[np.ndarray, ...]

    @property
    def n_tokens(self) -> int:
        return sum(len(w) for w in self.windows)


def weights_sha256(folder: Path) -> str:
    """sha256 over the names and bytes of the weight files in ``folder`` (sorted by name)."""
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.name.endswith(WEIGHT_SUFFIXES))
    if not files:
        raise ModelError(f"no weight files ({', '.join(WEIGHT_SUFFIXES)}) in {folder}")
    h = hashlib.sha256()
    for p in files:
        h.update(p.name.encode() + b"\0")
        with open(p, "rb") as f:
            for block in iter(lambda: f.read(1 << 22), b""):
                h.update(block)
    return "sha256:" + h.hexdigest()


def _remote_code_refusal(source: str, what: str) -> ModelError:
    return ModelError(
        f"model {source!r} declares custom code ({what}). geneb does not run downloaded code "
        "unless asked, and loading it with a built-in class instead would give wrong "
        "embeddings: inspect the code, then pass --trust-remote-code (trust_remote_code=True)"
    )


class HFEmbedder:
    """A frozen transformers model as an embedder (also the base of ``random:`` and MiniLM)."""

    adapter = "hf"

    def __init__(
        self,
        model: str,
        *,
        device: str = "auto",
        dtype: str | None = None,
        max_length: int | None = None,
        pooling: str = "mean",
        layer: int = -1,
        truncation: str = "truncate",
        trust_remote_code: bool = False,
        random_init_seed: int | None = None,
        name: str | None = None,
        rules_factory: Any = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        if pooling not in POOLINGS:
            raise unknown_name("pooling", pooling, POOLINGS)
        if truncation not in TRUNCATIONS:
            raise unknown_name("truncation policy", truncation, TRUNCATIONS)
        if max_length is not None and max_length < 4:
            raise ModelError(f"--max-length must be at least 4 tokens, got {max_length}")
        self.source = str(model)
        self.pooling = pooling
        self.layer = int(layer)
        self.truncation = truncation
        self.trust_remote_code = bool(trust_remote_code)
        self.random_init_seed = random_init_seed
        self.device = resolve_device(device)
        self.dtype_name = resolve_dtype(dtype, self.device)
        self._extra = dict(extra or {})
        self._load(rules_factory)
        if max_length is not None:
            cap = _position_limit(self.config)
            if cap is not None and max_length > cap:
                raise ModelError(
                    f"--max-length {max_length} exceeds what {self.source!r} can embed "
                    f"({cap} positions); use --truncation window for longer sequences"
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

    # ------------------------------------------------------------------ loading
    def _default_name(self) -> str:
        p = Path(self.source)
        return p.resolve().name if p.is_dir() else self.source

    def _load(self, rules_factory: Any) -> None:
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        import torch
        import transformers
        from transformers import AutoConfig, AutoModel, AutoTokenizer
        from transformers.models.auto.modeling_auto import MODEL_MAPPING

        src = self.source
        local = Path(src).is_dir()
        if not local and not _HUB_ID.match(src):
            raise ModelError(
                f"model {src!r}: no such folder, and not a hub id of the form 'org/name'"
            )
        trc = self.trust_remote_code
        try:
            config = AutoConfig.from_pretrained(src, trust_remote_code=trc)
        except ValueError as e:
            if "trust_remote_code" in str(e) or "custom code" in str(e):
                raise _remote_code_refusal(src, "a custom configuration class") from None
            raise ModelError(f"cannot read the config of model {src!r}: {e}") from e
        except OSError as e:
            where = "folder" if local else "hub id (offline? set HF_HUB_OFFLINE=0 to download)"
            raise ModelError(f"cannot load model {src!r} as a {where}: {e}") from e
        auto_map = getattr(config, "auto_map", None) or {}
        if not trc and "AutoModel" in auto_map:
            raise _remote_code_refusal(src, f"auto_map AutoModel -> {auto_map['AutoModel']}")
        try:
            tok = AutoTokenizer.from_pretrained(src, trust_remote_code=trc)
        except ValueError as e:
            if "trust_remote_code" in str(e) or "custom code" in str(e):
                raise _remote_code_refusal(src, "a custom tokenizer class") from None
            raise ModelError(f"cannot load the tokenizer of model {src!r}: {e}") from e
        except OSError as e:
            raise ModelError(f"cannot load the tokenizer of model {src!r}: {e}") from e
        if is_dnabert1(tok) and lowercases(tok):
            # DNABERT-1 repositories say do_lower_case=True: every k-mer would become [UNK]
            tok = AutoTokenizer.from_pretrained(src, trust_remote_code=trc, do_lower_case=False)
        # we tokenise without truncation on purpose (then truncate or window ourselves)
        getattr(tok, "deprecation_warnings", {})[
            "sequence-length-is-longer-than-the-specified-maximum"
        ] = True
        if tok.pad_token_id is None:
            raise ModelError(f"tokenizer of {src!r} has no padding token; cannot batch")

        tdt = torch_dtype(self.dtype_name)
        builtin = type(config) in MODEL_MAPPING and "AutoModel" not in auto_map
        cls = MODEL_MAPPING[type(config)] if builtin else None
        kwargs: dict[str, Any] = {}
        if cls is not None and "add_pooling_layer" in _init_params(cls):
            kwargs["add_pooling_layer"] = False
        try:
            if self.random_init_seed is not None:
                with torch.random.fork_rng(devices=[]):
                    torch.manual_seed(int(self.random_init_seed))
                    if cls is not None:
                        model = cls(config, **kwargs)
                    else:
                        model = AutoModel.from_config(config, trust_remote_code=trc)
                model = model.to(tdt)
            else:
                with _quiet_transformers():
                    if cls is not None:
                        model, load_info = cls.from_pretrained(
                            src, config=config, dtype=tdt, output_loading_info=True, **kwargs
                        )
                    else:
                        try:
                            model, load_info = AutoModel.from_pretrained(
                                src,
                                trust_remote_code=True,
                                dtype=tdt,
                                add_pooling_layer=False,
                                output_loading_info=True,
                            )
                        except TypeError:
                            model, load_info = AutoModel.from_pretrained(
                                src, trust_remote_code=True, dtype=tdt, output_loading_info=True
                            )
                missing = sorted(load_info.get("missing_keys", []) or [])
                if missing:
                    # weights left at random init would silently corrupt every embedding
                    raise ModelError(
                        f"model {src!r}: {len(missing)} weights missing from the checkpoint "
                        f"(e.g. {', '.join(missing[:3])}); refusing to embed with random ones"
                    )
        except (OSError, ValueError, RuntimeError) as e:
            if isinstance(e, ModelError):
                raise
            raise ModelError(f"cannot load the weights of model {src!r}: {e}") from e
        model.eval()
        model.to(self.device)
        self.config, self.tokenizer, self.model = config, tok, model
        self.rules: FamilyRules = (rules_factory or detect_rules)(config, tok, model)
        self._accepts_mask = accepts(model.forward, "attention_mask")
        special = set(tok.all_special_ids) - {tok.unk_token_id}
        self._special_ids = np.array(sorted(i for i in special if i is not None), dtype=np.int64)
        self._n_params = int(sum(p.numel() for p in model.parameters()))
        hidden = getattr(config, "hidden_size", None) or getattr(config, "d_model", None)
        self._dim = int(hidden) if hidden else int(self._probe_dim())
        commit = getattr(config, "_commit_hash", None)
        base_rev = (
            commit
            if (commit and not local)
            else (weights_sha256(Path(src)) if local else f"hub:{src}")
        )
        if self.random_init_seed is not None:
            self._revision = f"random-init:seed={int(self.random_init_seed)}:config-of:{base_rev}"
        else:
            self._revision = base_rev
        self._tf_version = transformers.__version__

    def _probe_dim(self) -> int:
        import torch

        ids = torch.tensor([[self.tokenizer.pad_token_id]], device=self.device)
        with torch.inference_mode():
            return int(self.model(input_ids=ids).last_hidden_state.shape[-1])

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
    def info(self):
        from geneb.extract.protocol import ModelInfo

        extra = {
            "model_source": self.source,
            "model_class": type(self.model).__name__,
            "input_rules": self.rules.describe(),
            "max_length_source": self._max_source,
            "padding_side": self.rules.padding_side,
            "transformers": self._tf_version,
        }
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

    def prepare(self, sequences: Sequence[str]) -> list[Prepared]:
        """Tokenise once: content ids, then the [prefix] content [suffix] frame per window."""
        texts = [self.rules.transform(s) for s in sequences]
        if not texts:
            return []
        bodies = self.tokenizer(texts, add_special_tokens=False)["input_ids"]
        room, pre, suf = self._room, self._prefix, self._suffix
        out: list[Prepared] = []
        for body in bodies:
            b = np.asarray(body, dtype=np.int64)
            if len(b) <= room or self.truncation == "truncate":
                wins = (np.concatenate([pre, b[:room], suf]),)
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
        """Forward all windows of ``items`` as one padded batch; pool; combine windows."""
        import torch

        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        wins = [w for p in items for w in p.windows]
        owner = np.repeat(np.arange(len(items)), [len(p.windows) for p in items])
        lens = np.fromiter((len(w) for w in wins), dtype=np.int64, count=len(wins))
        width = int(lens.max())
        ids = np.full((len(wins), width), self.tokenizer.pad_token_id, dtype=np.int64)
        mask = np.zeros((len(wins), width), dtype=np.int64)
        left = self.rules.padding_side == "left"
        for r, w in enumerate(wins):
            if left:
                ids[r, width - len(w) :] = w
                mask[r, width - len(w) :] = 1
            else:
                ids[r, : len(w)] = w
                mask[r, : len(w)] = 1
        pool_mask = mask
        if self.pooling == "mean_nonspecial":
            pool_mask = mask * ~np.isin(ids, self._special_ids)
        t_ids = torch.from_numpy(ids).to(self.device)
        t_mask = torch.from_numpy(mask).to(self.device)
        kwargs: dict[str, Any] = {"input_ids": t_ids}
        if self._accepts_mask:
            kwargs["attention_mask"] = t_mask
        if self.rules.token_type_ids:
            kwargs["token_type_ids"] = torch.zeros_like(t_ids)
        with torch.inference_mode():
            try:
                if self.layer == -1:
                    hidden = self.model(**kwargs).last_hidden_state
                else:
                    states = self.model(**kwargs, output_hidden_states=True).hidden_states
            except torch.OutOfMemoryError as e:
                raise ModelError(
                    f"{self.name}: out of memory on {self.device} for a batch of "
                    f"{ids.shape[0]} x {ids.shape[1]} tokens; lower --batch-tokens"
                ) from e
            if self.layer != -1:
                if not -len(states) <= self.layer < len(states):
                    raise ModelError(
                        f"--layer {self.layer} out of range: {self.name} has hidden states "
                        f"0..{len(states) - 1} (0 = embeddings, -1 = last)"
                    )
                hidden = states[self.layer]
            m = torch.from_numpy(pool_mask).to(self.device, dtype=torch.float32).unsqueeze(-1)
            sums = (hidden.float() * m).sum(dim=1)
            counts = m.sum(dim=1)
            means = (sums / counts.clamp(min=1)).cpu().numpy()
            counts_np = counts.squeeze(-1).cpu().numpy()
        if len(wins) == len(items):
            return means.astype(np.float32, copy=False)
        # windows -> sequences: mean of window means weighted by pooled token count
        out = np.zeros((len(items), self.dim), dtype=np.float64)
        np.add.at(out, owner, means.astype(np.float64) * counts_np[:, None])
        tot = np.bincount(owner, weights=counts_np, minlength=len(items))
        return (out / np.maximum(tot, 1)[:, None]).astype(np.float32)


@contextlib.contextmanager
def _quiet_transformers() -> Iterator[None]:
    """Silence transformers' load report and progress bar while loading (then restore)."""
    from transformers.utils import logging as tlog

    level, bar = tlog.get_verbosity(), tlog.is_progress_bar_enabled()
    tlog.set_verbosity_error()
    tlog.disable_progress_bar()
    try:
        yield
    finally:
        tlog.set_verbosity(level)
        if bar:
            tlog.enable_progress_bar()


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


def _init_params(cls: type) -> set[str]:
    import inspect

    try:
        return set(inspect.signature(cls.__init__).parameters)
    except (TypeError, ValueError):  # pragma: no cover
        return set()
