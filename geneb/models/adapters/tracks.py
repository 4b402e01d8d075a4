"""Fixed-length one-hot sequence-to-track models (Enformer, Borzoi) as embedders.

These models take one-hot DNA of one fixed length (Enformer 196,608 bp, Borzoi 524,288 bp),
run a convolution + transformer trunk, and return one vector per bin (128 bp, 32 bp) of a
central target window (Enformer 896 bins = 114,688 bp, Borzoi 6,144 bins = 196,608 bp); the
heads on top predict assay tracks, not bases. What this module does with a task sequence:

- **shorter than the input**: centred in the input window, the rest N (all-zero one-hot: the
  packages' own encoding of N, ``enformer_pytorch.str_to_one_hot``), left flank
  ``(input - n) // 2`` bases (GENEB's Enformer extractor centres the same way);
- **longer than the input**: the central ``input`` bases (start ``(n - input) // 2``), counted
  as truncated in provenance (``--truncation window`` is refused);
- **embedding**: the trunk output of the target bins that overlap the real sequence, averaged
  (bins of N padding only are never pooled; a sequence longer than the target window is
  pooled over the whole target window, its flanks act as context only).

Every window has the same length, so no row depends on its batch-mates beyond floating-point
rounding: the generic self-test (``geneb.models.selftest.generic_policy``) measures it through
:meth:`TrackEmbedder.embed` at load time. A family module (``enformer``, ``borzoi``) supplies
a :class:`TrackFamily`: how to load the package's model class and run its trunk.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np

from geneb.errors import ModelError
from geneb.models.embedder import ModelInfo
from geneb.models.selftest import BatchPolicy, generic_policy, selftest_precision, tolerance_for
from geneb.vocabulary import DEFAULT_DEVICE, DEFAULT_LAYER, DEFAULT_POOLING, DEFAULT_TRUNCATION

#: one-hot channel of each byte (A, C, G, T = 0..3, either case; U reads as T); any other
#: byte (N, IUPAC codes) has no channel: an all-zero row, as the packages encode N
_CHANNEL = np.full(256, -1, dtype=np.int64)
for _i, _b in enumerate("ACGT"):
    _CHANNEL[ord(_b)] = _CHANNEL[ord(_b.lower())] = _i
_CHANNEL[ord("U")] = _CHANNEL[ord("u")] = 3
#: bases of one-hot input per forward pass in :meth:`TrackEmbedder.embed` (the runner batches
#: prepared windows under its own token budget); at least one window per forward
EMBED_BASES_PER_FORWARD = 1 << 16


@dataclass(frozen=True)
class Geometry:
    """Where a model's output bins lie in its input window."""

    input_bp: int  # the fixed input length
    bin_bp: int  # bases per output bin
    target_bins: int  # bins the model returns (the central target window)
    dim: int  # features per bin

    @property
    def offset_bins(self) -> int:
        """Input bins left of the first returned bin."""
        return (self.input_bp // self.bin_bp - self.target_bins) // 2


@dataclass(frozen=True)
class TrackFamily:
    """What one family's module provides to :class:`TrackEmbedder`."""

    name: str  # "enformer": provenance adapter name and model_type
    title: str  # "Enformer": in messages
    model_type: str  # config.json model_type of its checkpoints
    package: str  # the pip package whose classes build it ("enformer-pytorch")
    #: (model) -> the fixed input length its checkpoints were trained with
    default_input_bp: Callable[[Any], int]
    default_input_source: str  # where the fixed input length is documented
    recipe: str  # what the per-bin vector is (provenance)
    #: half precision as the family's own scripts run it: float32 weights under
    #: ``torch.autocast`` (Borzoi caches float32 relative positions: bf16 weights fail)
    autocast: bool
    #: (folder, hub_id, random_init_seed, torch dtype, device) -> model in eval mode
    load: Callable[[Path, str | None, int | None, Any, str], Any]
    #: (model, input_bp, hub_id) -> Geometry; a ModelError for an input it cannot take
    geometry: Callable[[Any, int, str | None], Geometry]
    #: (model, one-hot float tensor (batch, input_bp, 4)) -> tensor (batch, target_bins, dim)
    trunk: Callable[[Any, Any], Any]


@dataclass(frozen=True)
class Window:
    """One sequence in the fixed input window (a prepared item of the runner). Only the real
    bases are held; the N padding exists as zero rows of the one-hot batch alone (a split's
    windows as strings would take ``rows x input`` bytes: 0.5 GB per 1,024 Borzoi rows)."""

    bases: str  # the real bases in the window (a longer sequence's central ones)
    start: int  # where they start in the window
    width: int  # the window: the model's fixed input length
    dropped: int = 0  # bases cropped off a sequence longer than the window

    @property
    def length(self) -> int:
        """Bases of real sequence in the window."""
        return len(self.bases)

    @property
    def n_tokens(self) -> int:
        return self.width


def centre(seq: str, width: int) -> Window:
    """``seq`` centred in ``width`` bases: padded with N, or its central ``width`` bases.

    Parameters
    ----------
    seq : str
        One DNA sequence.
    width : int
        The model's fixed input length in bases.

    Returns
    -------
    Window
        The real bases, where they start in the window (left flank ``(width - n) // 2``), and
        how many bases a longer sequence lost (start ``(n - width) // 2``).
    """
    n = len(seq)
    if n >= width:
        cut = (n - width) // 2
        return Window(seq[cut : cut + width], 0, width, n - width)
    return Window(seq, (width - n) // 2, width)


def one_hot(windows: Sequence[Window]) -> np.ndarray:
    """(batch, width, 4) float32 one-hot of windows of one width (N, padding and any letter
    but A, C, G, T/U: all-zero rows)."""
    width = windows[0].width if windows else 0
    out = np.zeros((len(windows), width, 4), dtype=np.float32)
    for i, w in enumerate(windows):
        channel = _CHANNEL[np.frombuffer(w.bases.encode("ascii", "replace"), dtype=np.uint8)]
        pos = np.flatnonzero(channel >= 0)
        out[i, w.start + pos, channel[pos]] = 1.0
    return out


def pooled_bins(w: Window, g: Geometry) -> tuple[int, int]:
    """The returned bins that overlap the real sequence of ``w``.

    Parameters
    ----------
    w : Window
        A prepared window (:func:`centre`).
    g : Geometry
        The model's bins in its input window.

    Returns
    -------
    tuple of int
        ``(lo, hi)``: bins ``lo .. hi - 1`` of the model's output are averaged.
    """
    lo = w.start // g.bin_bp - g.offset_bins
    hi = -(-(w.start + w.length) // g.bin_bp) - g.offset_bins
    return max(lo, 0), min(hi, g.target_bins)


def model_type_of(folder: Path) -> str | None:
    """The ``model_type`` of a model folder's config.json (None: none readable)."""
    try:
        cfg = json.loads((folder / "config.json").read_text("utf-8"))
    except (OSError, ValueError):
        return None
    mt = cfg.get("model_type") if isinstance(cfg, dict) else None
    return mt if isinstance(mt, str) else None


def check_track_options(title: str, pooling: str, layer: int, layers: Any, truncation: str) -> None:
    """Refuse, in one line each, the options that do not apply to a track model."""
    if pooling != "mean":
        raise ModelError(
            f"pooling: {title} embeddings are the mean of its trunk output over the bins that "
            f"overlap the sequence; got {pooling!r}, only 'mean' applies", param="pooling")
    if layer != -1 or layers is not None:
        raise ModelError(
            f"layer: {title} embeddings are its trunk output (no per-layer hidden states); "
            f"got layer={layer}, layers={layers}", param="layer")
    if truncation != "truncate":
        raise ModelError(
            f"truncation: {title} takes one fixed-length window; a longer sequence is "
            f"centre-cropped to it ('truncate'); got {truncation!r}", param="truncation")


class TrackEmbedder:
    """A frozen fixed-length track model as an embedder (see the module doc).

    Parameters
    ----------
    source : str
        A model folder or a hub id in the local Hugging Face cache.
    family : TrackFamily
        The family module's declaration (``geneb.models.adapters.enformer.FAMILY``, ...).
    device, dtype : str
        As for every adapter (``auto``: CUDA with bfloat16 where available, else CPU float32).
    max_length : int, optional
        The fixed input length in bases (default: the family's published length).
    pooling, layer, layers, truncation
        Accepted at their defaults only (``mean``, -1, None, ``truncate``); anything else is
        refused in one line: the embedding is the mean of the trunk output.
    trust_remote_code : bool
        Checked, never needed: the package's classes build the model, no folder code runs.
    random_init_seed : int, optional
        The same architecture with seeded random weights (``random:``).
    name : str, optional
        The store key (default: the folder name or hub id).
    extra : dict, optional
        More provenance fields (the catalogue's).
    """

    def __init__(
        self,
        source: str,
        family: TrackFamily,
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
        extra: dict[str, Any] | None = None,
    ) -> None:
        from geneb.models.device import resolve_device, resolve_dtype, torch_dtype
        from geneb.models.hub import resolve_source
        from geneb.models.packages import register_package_model_type
        from geneb.models.trust import check_trust_flag, enforce_trust

        check_track_options(family.title, pooling, int(layer), layers, truncation)
        self.family, self.source = family, str(source)
        self.random_init_seed = random_init_seed
        check_trust_flag(trust_remote_code)  # a permission: never needed, the package is code
        self._source = resolve_source(self.source)
        enforce_trust(self._source.folder, self.source, False)  # no folder code, ever
        register_package_model_type(family.model_type, self.source)  # one line if missing
        self.device = resolve_device(device)
        self.dtype_name = resolve_dtype(dtype, self.device)
        # autocast families keep float32 weights; their half dtype applies in the forward
        self._autocast = family.autocast and self.dtype_name != "float32"
        weights = "float32" if family.autocast else self.dtype_name
        self.model = family.load(self._source.folder, self._source.hub_id, random_init_seed,
                                 torch_dtype(weights), self.device)
        input_bp = family.default_input_bp(self.model) if max_length is None else int(max_length)
        self._input_source = family.default_input_source if max_length is None else "max_length"
        self.geometry = family.geometry(self.model, input_bp, self._source.hub_id)
        self._revision = self._revision_of(random_init_seed)
        base = name or (Path(self.source).resolve().name if self._source.hub_id is None
                        else self.source)
        self._name = f"random:{base}" if random_init_seed is not None and not name else base
        self._extra = dict(extra or {})
        self.batch_policy: BatchPolicy = self._self_test()

    def _revision_of(self, seed: int | None) -> str:
        from geneb.models.adapters.hf_load import weights_sha256

        base = self._source.commit or weights_sha256(self._source.folder)
        return base if seed is None else f"random-init:seed={int(seed)}:config-of:{base}"

    def _self_test(self) -> BatchPolicy:
        """The generic self-test in float32 (autocast off: a padding leak is the code's, half
        precision rounding would hide it; ``geneb.models.selftest``)."""
        autocast, self._autocast = self._autocast, False
        try:
            weights = "float32" if self.family.autocast else self.dtype_name
            with selftest_precision(self.model, weights) as test_dtype:
                return generic_policy(self, tolerance_for(test_dtype))
        finally:
            self._autocast = autocast

    # ------------------------------------------------------------------ protocol
    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return self.geometry.dim

    @property
    def info(self) -> ModelInfo:
        import transformers

        g = self.geometry
        extra: dict[str, Any] = {
            "model_source": self.source,
            "model_class": type(self.model).__name__,
            "package": f"{self.family.package}=={version(self.family.package)}",
            "embedding": self.family.recipe,
            "fixed_input": {
                "input_bp": g.input_bp, "input_bp_source": self._input_source,
                "bin_bp": g.bin_bp, "target_bins": g.target_bins,
                "target_bp": g.target_bins * g.bin_bp,
                "shorter": "centred, left flank (input - n) // 2, padded with N (zero one-hot)",
                "longer": "centre-cropped to input_bp (start (n - input) // 2), counted",
                "pooling": "mean over the target bins that overlap the sequence",
            },
            "transformers": transformers.__version__,
            "batch_invariance": self.batch_policy.describe(),
            "trust_remote_code": False,
        }
        if self.family.autocast and self.dtype_name != "float32":
            extra["autocast"] = f"float32 weights, forward under torch.autocast({self.dtype_name})"
        if self._source.hub_id is not None:
            extra.update(hub_id=self._source.hub_id, hub_commit=self._source.commit)
        if self.random_init_seed is not None:
            extra["random_init_seed"] = int(self.random_init_seed)
            extra["control"] = "same architecture, seeded random weights (no pretraining)"
        extra.update(self._extra)
        return ModelInfo(
            name=self.name, revision=self._revision,
            adapter=self.family.name if self.random_init_seed is None else "random",
            n_params=int(sum(p.numel() for p in self.model.parameters())),
            model_type=self.family.model_type, tokenizer="one-hot", pooling="mean",
            max_length=g.input_bp, truncation="truncate", dtype=self.dtype_name,
            device=self.device, extra=extra,
        )  # fmt: skip

    # ------------------------------------------------------------------ embedding
    def prepare(self, sequences: Sequence[str]) -> list[Window]:
        """Each sequence centred in (or cropped to) the fixed input window."""
        return [centre(s, self.geometry.input_bp) for s in sequences]

    def cost(self, items: Sequence[Window]) -> np.ndarray:
        """Every window costs the whole input length (the runner's token budget is in bases)."""
        return np.full(len(items), self.geometry.input_bp, dtype=np.int64)

    def embed_prepared(self, items: Sequence[Window]) -> np.ndarray:
        """One forward pass over ``items``: (len(items), dim) float32."""
        import torch

        from geneb.models.device import torch_dtype
        from geneb.models.model_code import model_code_errors

        x = torch.from_numpy(one_hot(items)).to(self.device)
        x = x.to(next(self.model.parameters()).dtype)
        with torch.inference_mode(), model_code_errors(self.source, "running its trunk"), \
                torch.autocast(self.device.split(":")[0], dtype=torch_dtype(self.dtype_name),
                               enabled=self._autocast):
            bins = self.family.trunk(self.model, x).float().cpu().numpy()
        expected = (len(items), self.geometry.target_bins, self.geometry.dim)
        if bins.shape != expected:
            raise ModelError(f"{self.family.title} {self.source!r}: its trunk returned shape "
                             f"{bins.shape}, expected {expected}")
        out = np.empty((len(items), self.geometry.dim), dtype=np.float32)
        for i, w in enumerate(items):
            lo, hi = pooled_bins(w, self.geometry)
            out[i] = bins[i, lo:hi].astype(np.float64).mean(axis=0)
        return out

    def embed(self, sequences: Sequence[str]) -> np.ndarray:
        """``(len(sequences), dim)`` float32, a few windows per forward pass."""
        items = self.prepare(list(sequences))
        rows = max(1, EMBED_BASES_PER_FORWARD // self.geometry.input_bp)
        parts = [self.embed_prepared(items[a : a + rows]) for a in range(0, len(items), rows)]
        return np.vstack(parts) if parts else np.zeros((0, self.dim), dtype=np.float32)
