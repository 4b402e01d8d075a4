"""Loading a transformers model, tokenizer and config from a local folder, behind the trust rule.

The order matters: (1) find the files (a folder, or the local HF cache for a hub id; never the
network), (2) read its JSON files and refuse custom code the user did not allow
(``geneb.extract.trust``), (3) only then call transformers, always with an explicit
``trust_remote_code`` and ``local_files_only=True``. There is no fallback that loads with
``trust_remote_code=True`` when a built-in class is missing: that would run code nobody
asked for.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from geneb.errors import ModelError
from geneb.extract.families import is_dnabert1, lowercases
from geneb.extract.hub import ModelSource
from geneb.extract.trust import enforce_trust

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".h5", ".msgpack", ".index.json")


@dataclass
class Loaded:
    """What ``load_hf`` returns: the three transformers objects and their identity."""

    config: Any
    tokenizer: Any
    model: Any
    revision: str
    remote_code: list[str]  # why the model needed its own code (empty: it did not)


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


@contextlib.contextmanager
def quiet_transformers() -> Iterator[None]:
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


def _init_params(cls: type) -> set[str]:
    try:
        return set(inspect.signature(cls.__init__).parameters)
    except (TypeError, ValueError):  # pragma: no cover
        return set()


def _load_tokenizer(folder: str, src: str, trc: bool) -> Any:
    from transformers import AutoTokenizer

    try:
        tok = AutoTokenizer.from_pretrained(folder, trust_remote_code=trc, local_files_only=True)
        if is_dnabert1(tok) and lowercases(tok):
            # DNABERT-1 repositories say do_lower_case=True: every k-mer would become [UNK]
            tok = AutoTokenizer.from_pretrained(
                folder, trust_remote_code=trc, local_files_only=True, do_lower_case=False
            )
    except (OSError, ValueError) as e:
        raise ModelError(f"cannot load the tokenizer of model {src!r}: {e}") from e
    # we tokenise without truncation on purpose (then truncate or window ourselves)
    getattr(tok, "deprecation_warnings", {})[
        "sequence-length-is-longer-than-the-specified-maximum"
    ] = True
    if tok.pad_token_id is None:
        raise ModelError(f"tokenizer of {src!r} has no padding token; cannot batch")
    return tok


def _model_class(config: Any, src: str, trc: bool) -> Any:
    """The built-in class for ``config``, or None when the (trusted) auto_map provides one."""
    from transformers.models.auto.modeling_auto import MODEL_MAPPING

    auto_map = getattr(config, "auto_map", None) or {}
    if trc and "AutoModel" in auto_map:
        return None
    if type(config) in MODEL_MAPPING:
        return MODEL_MAPPING[type(config)]
    raise ModelError(
        f"model {src!r}: transformers has no base model class for config "
        f"{type(config).__name__} and the folder maps no AutoModel; cannot embed with it"
    )


def load_hf(
    source: ModelSource,
    *,
    trust_remote_code: bool,
    torch_dtype: Any,
    random_init_seed: int | None = None,
) -> Loaded:
    """Config, tokenizer and model of ``source`` (weights in eval mode, on the CPU)."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    src, folder, trc = source.spec, str(source.folder), trust_remote_code
    remote = enforce_trust(source.folder, src, trc)  # before transformers sees the folder
    import torch
    from transformers import AutoConfig, AutoModel

    try:
        config = AutoConfig.from_pretrained(folder, trust_remote_code=trc, local_files_only=True)
    except (OSError, ValueError) as e:
        raise ModelError(f"cannot read the config of model {src!r}: {e}") from e
    tok = _load_tokenizer(folder, src, trc)
    cls = _model_class(config, src, trc)
    kwargs: dict[str, Any] = {}
    if cls is not None and "add_pooling_layer" in _init_params(cls):
        kwargs["add_pooling_layer"] = False
    try:
        if random_init_seed is not None:
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(int(random_init_seed))
                if cls is not None:
                    model = cls(config, **kwargs)
                else:
                    model = AutoModel.from_config(config, trust_remote_code=True)
            model = model.to(torch_dtype)
        else:
            common = {"dtype": torch_dtype, "output_loading_info": True, "local_files_only": True}
            with quiet_transformers():
                if cls is not None:
                    model, info = cls.from_pretrained(folder, config=config, **common, **kwargs)
                else:
                    model, info = AutoModel.from_pretrained(
                        folder, config=config, trust_remote_code=True, **common
                    )
            missing = sorted(info.get("missing_keys", []) or [])
            if missing:
                # weights left at random init would silently corrupt every embedding
                raise ModelError(
                    f"model {src!r}: {len(missing)} weights missing from the checkpoint "
                    f"(e.g. {', '.join(missing[:3])}); refusing to embed with random ones"
                )
    except (OSError, ValueError, RuntimeError, TypeError) as e:
        if isinstance(e, ModelError):
            raise
        raise ModelError(f"cannot load the weights of model {src!r}: {e}") from e
    model.eval()
    if source.commit:
        base_rev = source.commit
    else:
        base_rev = weights_sha256(source.folder)
    if random_init_seed is not None:
        revision = f"random-init:seed={int(random_init_seed)}:config-of:{base_rev}"
    else:
        revision = base_rev
    return Loaded(config, tok, model, revision, remote)
