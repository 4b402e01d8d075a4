"""Enformer on its own pip package, ``enformer-pytorch`` (lucidrains' PyTorch port).

Install: ``pip install 'geneb[enformer]'`` then ``pip install --no-deps
enformer-pytorch==0.8.12``: its metadata pins ``transformers[torch]==4.56.2`` (borzoi-pytorch
needs >=4.57.6: the two cannot share one environment as declared), so the extra declares what
``import enformer_pytorch`` needs (polars, pyfaidx, einops) and the package goes in without
its pins (measured to run under transformers 4.57.6; docs/models.md).

The documented embedding (the package README, "fetch the embeddings ... by setting the
``return_embeddings`` flag"): ``model(one_hot, return_embeddings=True)`` on a (1, 196_608)
sequence gives embeddings of shape (1, 896, 3072), the trunk output (after the final pointwise
block) of the 896 central 128-bp bins (114,688 bp). geneb takes that trunk output
(``return_only_embeddings=True``: the same tensor, without the track heads) and pools it as
:mod:`geneb.models.adapters.tracks` says. Input length 196,608 bp (``SEQUENCE_LENGTH`` of the
package); bins of ``2 ** num_downsamples`` bp; returned bins ``config.target_length``.
``EleutherAI/enformer-official-rough`` runs with the TensorFlow gamma positions, as the
package's own ``from_pretrained`` sets for that hub id (they exist for 1,536 bins only).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from geneb.errors import ModelError
from geneb.models.adapters.tracks import Geometry, TrackFamily

#: hub ids the package's ``from_pretrained`` runs with TensorFlow's gamma positions
TF_GAMMA_HUB_IDS = frozenset({"EleutherAI/enformer-official-rough"})
#: the only input length (in bins) the TensorFlow gamma positions exist for
TF_GAMMA_BINS = 1536
#: num_downsamples of the published Enformer (128-bp bins)
PUBLISHED_DOWNSAMPLES = 7
_DEFAULT_INPUT_SOURCE = ("enformer_pytorch.SEQUENCE_LENGTH (README: 196_608 bp = 1,536 bins of "
                         "128 bp); another num_downsamples keeps the 1,536 bins")


def register_classes() -> None:
    """Register the package's config class with transformers' AutoConfig (model_type
    "enformer"), so geneb's config readers (``geneb vep score``'s head check) know it."""
    import enformer_pytorch
    from transformers import AutoConfig

    AutoConfig.register("enformer", enformer_pytorch.EnformerConfig, exist_ok=True)


def load(folder: Path, hub_id: str | None, seed: int | None, dtype: Any, device: str) -> Any:
    """The package's ``Enformer`` from ``folder`` (or, with ``seed``, its config with seeded
    random weights), in eval mode on ``device``."""
    import torch
    from enformer_pytorch import Enformer, EnformerConfig
    from enformer_pytorch.modeling_enformer import Attention

    from geneb.models.model_code import model_code_errors

    with model_code_errors(hub_id or str(folder), "loading its model code and weights"):
        if seed is None:
            model = Enformer.from_pretrained(str(folder), dtype=dtype, local_files_only=True)
        else:
            config = EnformerConfig.from_pretrained(str(folder), local_files_only=True)
            torch.manual_seed(int(seed))
            model = Enformer(config).to(dtype)
    if hub_id in TF_GAMMA_HUB_IDS:  # what enformer_pytorch.from_pretrained does for this id
        model.use_tf_gamma = True
        for module in model.modules():
            if isinstance(module, Attention):
                module.use_tf_gamma = True
    return model.eval().to(device)


def geometry(model: Any, input_bp: int, hub_id: str | None) -> Geometry:
    """Bins of ``model`` for an ``input_bp`` window, or one line why it cannot take it."""
    cfg = model.config
    bin_bp = 1 << int(cfg.num_downsamples)
    if input_bp < bin_bp or input_bp % bin_bp:
        raise ModelError(f"max_length: Enformer input must be a positive multiple of its "
                         f"{bin_bp}-bp bins, got {input_bp}", param="max_length")
    n_bins = input_bp // bin_bp
    target = n_bins if int(cfg.target_length) == -1 else int(cfg.target_length)
    if target > n_bins or (n_bins - target) % 2:
        raise ModelError(
            f"max_length: Enformer returns the central {target} bins (config target_length); "
            f"a {input_bp}-bp input has {n_bins} bins: it needs at least {target} and an even "
            "number more", param="max_length")
    if getattr(model, "use_tf_gamma", False) and n_bins != TF_GAMMA_BINS:
        raise ModelError(
            f"max_length: {hub_id or 'this Enformer'} runs with TensorFlow's gamma positions, "
            f"which exist for {TF_GAMMA_BINS * bin_bp} bp ({TF_GAMMA_BINS} bins) only; got "
            f"{input_bp}", param="max_length")
    return Geometry(input_bp, bin_bp, target, 2 * int(cfg.dim))


def default_input_bp(model: Any) -> int:
    """196,608 bp (the package's ``SEQUENCE_LENGTH``: 1,536 bins of 2**7 bp); a config with
    other ``num_downsamples`` keeps the 1,536 bins (the transformer's published length)."""
    from enformer_pytorch import SEQUENCE_LENGTH

    published_bins = int(SEQUENCE_LENGTH) >> PUBLISHED_DOWNSAMPLES
    return published_bins << int(model.config.num_downsamples)


def trunk(model: Any, x: Any) -> Any:
    """The package's trunk output: ``model(x, return_only_embeddings=True)``, (b, bins, 2 dim)."""
    return model(x, return_only_embeddings=True)


FAMILY = TrackFamily(
    name="enformer", title="Enformer", model_type="enformer", package="enformer-pytorch",
    default_input_bp=default_input_bp, default_input_source=_DEFAULT_INPUT_SOURCE,
    recipe="trunk output (return_embeddings / return_only_embeddings), 2 x dim per bin",
    autocast=False, load=load, geometry=geometry, trunk=trunk,
)  # fmt: skip
