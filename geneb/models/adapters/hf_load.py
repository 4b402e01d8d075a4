"""Loading a transformers model, tokenizer and config from a local folder, behind the trust rule.

The order matters: (1) find the files (a folder, or the local HF cache for a hub id; never the
network), (2) read its JSON files and refuse custom code the user did not allow
(``geneb.models.trust``), (3) only then call transformers, always with an explicit
``trust_remote_code`` and ``local_files_only=True``. There is no fallback that loads with
``trust_remote_code=True`` when a built-in class is missing: that would run code nobody
asked for.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import os
import pickle
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from geneb.errors import ModelError
from geneb.models.adapters.families import is_dnabert1, lowercases
from geneb.models.hub import ModelSource
from geneb.models.model_code import hide_gpu_kernels, model_code_errors
from geneb.models.trust import enforce_trust, register_package_classes

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".h5", ".msgpack", ".index.json")


@dataclass
class Loaded:
    """What ``load_hf`` returns: the three transformers objects and their identity."""

    config: Any
    tokenizer: Any
    model: Any
    revision: str
    remote_code: list[str]  # why the model needed its own code (empty: it did not)
    #: weights missing from the checkpoint that the embedding never reaches (measured)
    absent_weights: list[str]
    #: the dtype most of the weights actually have ("bfloat16", ...; ``weights_dtype``)
    dtype: str = ""


def weights_dtype(model: Any) -> str:
    """The floating dtype holding most of the model's parameters, by element count (what the
    model computes in; a few modules a class keeps in float32 do not change it)."""
    counts: dict[str, int] = {}
    for p in model.parameters():
        if p.is_floating_point():
            name = str(p.dtype).removeprefix("torch.")
            counts[name] = counts.get(name, 0) + p.numel()
    return max(counts, key=counts.__getitem__) if counts else ""


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
    tlog.set_verbosity_error()  # type: ignore[no-untyped-call]  # transformers: unannotated
    tlog.disable_progress_bar()  # type: ignore[no-untyped-call]
    try:
        yield
    finally:
        tlog.set_verbosity(level)
        if bar:
            tlog.enable_progress_bar()  # type: ignore[no-untyped-call]


def _init_params(cls: type[Any]) -> set[str]:
    try:
        return set(inspect.signature(cls.__init__).parameters)
    except (TypeError, ValueError):  # pragma: no cover
        return set()


def _load_tokenizer(folder: str, src: str, trc: bool) -> Any:
    from transformers import AutoTokenizer

    try:
        # AutoTokenizer.from_pretrained is unannotated (transformers)
        tok = AutoTokenizer.from_pretrained(  # type: ignore[no-untyped-call]
            folder, trust_remote_code=trc, local_files_only=True)
        if is_dnabert1(tok) and lowercases(tok):
            # DNABERT-1 repositories say do_lower_case=True: every k-mer would become [UNK]
            tok = AutoTokenizer.from_pretrained(  # type: ignore[no-untyped-call]
                folder, trust_remote_code=trc, local_files_only=True, do_lower_case=False
            )
    except (OSError, ValueError) as e:
        raise ModelError(f"cannot load the tokenizer of model {src!r}: {_first_line(e)}") from e
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
    device: str = "cpu",
) -> Loaded:
    """Config, tokenizer and model of ``source`` (weights in eval mode, on ``device``).

    Everything that runs the model's own code (import, construction, weight loading) is inside
    :func:`model_code_errors` (one line on failure) and, for a CPU ``device``,
    :func:`hide_gpu_kernels` (optional GPU-kernel imports fall back to PyTorch). The weights
    are asked for in ``torch_dtype`` through ``from_pretrained(dtype=...)`` (transformers >=
    4.56, the lowest version geneb supports; before it the keyword was ``torch_dtype`` and a
    class taking ``**kwargs`` swallowed ``dtype``); ``Loaded.dtype`` is what they have. The
    missing-weights check runs on ``device``, after the move (a model needing CUDA kernels
    never runs on the CPU; a large one is not run twice as slowly there).
    """
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    src, folder, trc = source.spec, str(source.folder), trust_remote_code
    remote = enforce_trust(source.folder, src, trc)  # before transformers sees the folder
    register_package_classes(source.folder, src)  # GPN: the installed package's classes
    with hide_gpu_kernels(device):
        with model_code_errors(src, "reading its config"):
            config = _load_config(folder, src, trc)
        with model_code_errors(src, "loading its tokenizer"):
            tok = _load_tokenizer(folder, src, trc)
        with model_code_errors(src, "loading its model code and weights"):
            model, missing = _load_model(config, folder, src, trc, torch_dtype, random_init_seed)
            model.eval()
            model.to(device)
            absent = _check_missing(model, tok, missing, src, device)
    if source.commit:
        base_rev = source.commit
    else:
        base_rev = weights_sha256(source.folder)
    if random_init_seed is not None:
        revision = f"random-init:seed={int(random_init_seed)}:config-of:{base_rev}"
    else:
        revision = base_rev
    return Loaded(config, tok, model, revision, remote, absent, weights_dtype(model))


def _load_config(folder: str, src: str, trc: bool) -> Any:
    from transformers import AutoConfig

    try:
        return AutoConfig.from_pretrained(folder, trust_remote_code=trc, local_files_only=True)
    except (OSError, ValueError) as e:
        raise ModelError(f"cannot read the config of model {src!r}: {_first_line(e)}") from e


def _root_cause(e: BaseException) -> BaseException:
    """The innermost exception (transformers wraps a refused pickle in a misleading OSError)."""
    while True:
        inner = e.__cause__ or (None if e.__suppress_context__ else e.__context__)
        if inner is None:
            return e
        e = inner


def _first_line(e: BaseException) -> str:
    lines = str(e).strip().splitlines()
    return lines[0] if lines else type(e).__name__


def _load_model(
    config: Any, folder: str, src: str, trc: bool, torch_dtype: Any, seed: int | None
) -> tuple[Any, list[str]]:
    """The model (random init with ``seed``) and the checkpoint's missing weight names."""
    import torch
    from transformers import AutoModel

    cls = _model_class(config, src, trc)
    kwargs: dict[str, Any] = {}
    if cls is not None and "add_pooling_layer" in _init_params(cls):
        kwargs["add_pooling_layer"] = False
    if seed is not None:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(seed))
            if cls is not None:
                model = cls(config, **kwargs)
            else:
                model = AutoModel.from_config(  # type: ignore[no-untyped-call]  # unannotated
                    config, trust_remote_code=True)
        return model.to(torch_dtype), []
    common = {"dtype": torch_dtype, "output_loading_info": True, "local_files_only": True}
    try:
        with quiet_transformers():
            if cls is not None:
                model, info = cls.from_pretrained(folder, config=config, **common, **kwargs)
            else:
                model, info = AutoModel.from_pretrained(
                    folder, config=config, trust_remote_code=True, **common
                )
    except (OSError, pickle.UnpicklingError) as e:  # 4.x wraps a refused pickle in OSError
        root = _root_cause(e)
        why = f"{type(root).__name__}: {_first_line(root)}"
        raise ModelError(f"cannot load the weights of model {src!r}: {why}") from e
    return model, sorted(info.get("missing_keys", []) or [])


def _check_missing(model: Any, tok: Any, missing: list[str], src: str, device: str = "cpu"
                   ) -> list[str]:
    """Refuse weights missing from the checkpoint that the embedding passes through.

    Measured, not guessed from names: one forward of a short DNA probe, the sum of the last
    hidden state back-propagated; a missing parameter that receives a gradient shapes every
    embedding and would be left at random init, so it is refused. The others (a pooler or a
    head the last hidden state never reaches) are returned, to be recorded in provenance.
    """
    if not missing:
        return []
    import torch

    from geneb.models.adapters.families import accepts
    from geneb.models.outputs import last_hidden_state

    params = dict(model.named_parameters())
    names = [n for n in missing if n in params]
    flags = {n: params[n].requires_grad for n in names}
    for n in names:
        params[n].requires_grad_(True)
        params[n].grad = None
    ids = tok("ACGTTGCAAGCT" * 4, return_tensors="pt")["input_ids"].to(device)
    kwargs: dict[str, Any] = {"input_ids": ids}
    if accepts(model.forward, "attention_mask"):
        kwargs["attention_mask"] = torch.ones_like(ids)
    try:
        with torch.enable_grad():
            last_hidden_state(model(**kwargs), src).float().sum().backward()
        used = [n for n in names if params[n].grad is not None]
    finally:
        for n in names:
            params[n].grad = None
            params[n].requires_grad_(flags[n])
    unknown = [n for n in missing if n not in params]  # buffers: cannot be measured
    if used or unknown:
        bad = used + unknown
        raise ModelError(
            f"model {src!r}: {len(bad)} weights the embedding passes through are missing from "
            f"the checkpoint (e.g. {', '.join(bad[:3])}); refusing to embed with random ones"
        )
    return names
