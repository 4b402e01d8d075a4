"""Borzoi on its own pip package, ``borzoi-pytorch`` (``pip install 'geneb[borzoi]'``).

``borzoi-pytorch==0.5.1`` requires ``transformers>=4.57.6,<5``, inside geneb's range, so the
extra declares the package itself. Facts from the package (0.5.1) and its own scripts:

- input: one-hot (N, 4, L), channels A, C, G, T, N = all zero (its variant scripts encode with
  ``enformer_pytorch.data.str_to_one_hot``); length 524,288 bp (``context_length = 524288`` in
  ``variant_effect/scripts/BorzoiVariantCentred.py`` of johahi/borzoi-pytorch);
- output: ``config.bins_to_return`` central 32-bp bins (6,144 = 196,608 bp in the published
  configs; ``16384 - 32`` when ``return_center_bins_only`` is false), read from the model's
  own crop module;
- embedding: ``forward(x, return_embeddings=True)`` returns ``(tracks, x)`` with ``x`` the
  output of ``final_joined_convs`` (1,920 features per bin); geneb computes the same tensor,
  ``final_joined_convs(get_embs_after_crop(x))``, without the 7,611-track head, and pools it as
  :mod:`geneb.models.adapters.tracks` says;
- Flashzoi checkpoints (``config.flashed``) build flash-attn attention: CUDA only, refused on
  another device before the package is asked to build them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from geneb.errors import ModelError
from geneb.models.adapters.tracks import Geometry, TrackFamily

#: bases per output bin (the architecture's pooling: max-pool 2, then four more in res_tower)
BIN_BP = 32
#: the transformer runs at 128-bp resolution: an input must be a multiple of it
INPUT_MULTIPLE = 128
#: the input length of the published checkpoints (16,384 bins of 32 bp)
INPUT_BP = 524_288
_DEFAULT_INPUT_SOURCE = (
    "borzoi-pytorch variant_effect/scripts/BorzoiVariantCentred.py: context_length = 524288"
)


def register_classes() -> None:
    """Register the package's config class with AutoConfig (model_type "borzoi")."""
    import borzoi_pytorch.config_borzoi as cb
    from transformers import AutoConfig

    AutoConfig.register("borzoi", cb.BorzoiConfig, exist_ok=True)


def load(folder: Path, hub_id: str | None, seed: int | None, dtype: Any, device: str) -> Any:
    """The package's ``Borzoi`` from ``folder`` (or, with ``seed``, its config with seeded
    random weights), in eval mode on ``device``."""
    import torch
    from borzoi_pytorch import Borzoi
    from borzoi_pytorch.config_borzoi import BorzoiConfig

    from geneb.models.model_code import model_code_errors

    src = hub_id or str(folder)
    with model_code_errors(src, "reading its config"):
        config = BorzoiConfig.from_pretrained(str(folder), local_files_only=True)
    if getattr(config, "flashed", False) and not device.startswith("cuda"):
        raise ModelError(
            f"model {src!r} is a Flashzoi checkpoint (config flashed): its attention runs in "
            f"the flash-attn package's CUDA kernels; device {device!r} cannot run it "
            "(pip install flash-attn on a CUDA machine, device cuda)")
    with model_code_errors(src, "loading its model code and weights"):
        if seed is None:
            model = Borzoi.from_pretrained(str(folder), dtype=dtype, local_files_only=True)
        else:
            torch.manual_seed(int(seed))
            model = Borzoi(config).to(dtype)
    return model.eval().to(device)


def geometry(model: Any, input_bp: int, hub_id: str | None) -> Geometry:
    """Bins of ``model`` for an ``input_bp`` window, or one line why it cannot take it."""
    if input_bp < INPUT_MULTIPLE or input_bp % INPUT_MULTIPLE:
        raise ModelError(f"max_length: Borzoi input must be a positive multiple of "
                         f"{INPUT_MULTIPLE} bp, got {input_bp}", param="max_length")
    n_bins = input_bp // BIN_BP
    target = int(model.crop.target_length)
    target = n_bins if target == -1 else target
    if target > n_bins or (n_bins - target) % 2:
        raise ModelError(
            f"max_length: {hub_id or 'this Borzoi'} returns the central {target} bins of "
            f"{BIN_BP} bp; a {input_bp}-bp input has {n_bins}: it needs at least {target} and "
            "an even number more", param="max_length")
    dim = int(model.final_joined_convs[0].conv_layer.out_channels)
    return Geometry(input_bp, BIN_BP, target, dim)


def trunk(model: Any, x: Any) -> Any:
    """``final_joined_convs(get_embs_after_crop(x))`` (what ``forward(x,
    return_embeddings=True)`` returns second), as (b, bins, features)."""
    return model.final_joined_convs(model.get_embs_after_crop(x.transpose(1, 2))).transpose(1, 2)


def default_input_bp(model: Any) -> int:
    """524,288 bp for every Borzoi (its architecture is fixed; only dim and depth vary)."""
    return INPUT_BP


FAMILY = TrackFamily(
    name="borzoi", title="Borzoi", model_type="borzoi", package="borzoi-pytorch",
    default_input_bp=default_input_bp, default_input_source=_DEFAULT_INPUT_SOURCE,
    recipe="final_joined_convs output (forward(return_embeddings=True)[1]), 1920 per bin",
    autocast=True, load=load, geometry=geometry, trunk=trunk,
)  # fmt: skip
