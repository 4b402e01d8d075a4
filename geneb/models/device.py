"""Device and dtype choice: auto = cuda, then mps, then cpu; fp32 on CPU/MPS, bf16 on CUDA."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

from geneb.errors import ModelError, unknown_name
from geneb.vocabulary import CPU_COMPUTE_DTYPE, DEFAULT_DEVICE

if TYPE_CHECKING:
    import torch

DTYPES = {
    "float32": "float32",
    "fp32": "float32",
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "float16": "float16",
    "fp16": "float16",
    "half": "float16",
}

#: The device kinds torch code of geneb can run on (``resolve_device`` narrows per caller).
DEVICE_KINDS: tuple[str, ...] = ("cpu", "cuda", "mps")


def resolve_device(device: str = DEFAULT_DEVICE, kinds: tuple[str, ...] = DEVICE_KINDS) -> str:
    """Concrete torch device string for ``device`` (auto picks the best available), the one
    resolver of geneb: ``kinds`` narrows the device kinds a caller supports (the probe
    solvers: cpu and cuda, no MPS), and ``auto`` picks among those only."""
    import torch

    d = (device or DEFAULT_DEVICE).lower()
    if d == "auto":
        if "cuda" in kinds and torch.cuda.is_available():
            return "cuda"
        mps = getattr(torch.backends, "mps", None)
        if "mps" in kinds and mps is not None and mps.is_available():
            return "mps"
        return "cpu"
    kind = d.split(":")[0]
    if kind not in kinds:
        raise unknown_name("device", device,
                           ["auto", *kinds, *(["cuda:N"] if "cuda" in kinds else [])])
    if kind == "cuda" and not torch.cuda.is_available():
        raise ModelError(f"device: {device!r} asked for, but torch sees no CUDA device",
                         param="device")
    if kind == "mps":
        mps = getattr(torch.backends, "mps", None)
        if mps is None or not mps.is_available():
            raise ModelError(f"device: {device!r} asked for, but MPS is not available",
                             param="device")
    return d


def resolve_dtype(dtype: str | None, device: str) -> str:
    """Canonical dtype name; default float32 on CPU/MPS and bfloat16 on CUDA."""
    if dtype is None or dtype == "auto":
        return "bfloat16" if device.startswith("cuda") else CPU_COMPUTE_DTYPE
    key = dtype.lower()
    if key not in DTYPES:
        raise unknown_name("dtype", dtype, sorted(DTYPES))
    return DTYPES[key]


def torch_dtype(name: str) -> torch.dtype:
    import torch

    return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[name]


@contextlib.contextmanager
def tf32(enabled: bool) -> Iterator[None]:
    """TF32 for CUDA float32 work (cuBLAS matmuls, cuDNN convolutions and RNNs) on or off for
    the block, restored afterwards; the one place geneb sets it.

    geneb turns it off wherever a float32 result is recorded as float32 (the MLP probe,
    float32 extraction: cuDNN's own default, ``allow_tf32=True``, would run convolution
    models in TF32 otherwise) and never on. Two flag APIs exist: torch >= 2.9 has
    ``fp32_precision`` ("ieee" / "tf32") per backend and operator, and reading the legacy
    ``allow_tf32`` raises RuntimeError once anything set the new one (reproduced on torch
    2.13); older torch has only ``allow_tf32``. The new API is used where it exists, and the
    legacy flags are then never read. Harmless on a CPU-only torch (flags only).
    """
    import torch

    b = torch.backends
    if hasattr(b.cuda.matmul, "fp32_precision"):
        # torch.backends.cudnn sets conv and rnn at import time: its stubs lack them
        targets = [b.cuda.matmul, b.cudnn.conv, b.cudnn.rnn]  # type: ignore[attr-defined]
        old = [t.fp32_precision for t in targets]
        for t in targets:
            t.fp32_precision = "tf32" if enabled else "ieee"
        try:
            yield
        finally:
            for t, v in zip(targets, old, strict=True):
                t.fp32_precision = v
        return
    legacy = (b.cuda.matmul.allow_tf32, b.cudnn.allow_tf32)
    b.cuda.matmul.allow_tf32 = b.cudnn.allow_tf32 = enabled
    try:
        yield
    finally:
        b.cuda.matmul.allow_tf32, b.cudnn.allow_tf32 = legacy
