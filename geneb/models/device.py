"""Device and dtype choice: auto = cuda, then mps, then cpu; fp32 on CPU/MPS, bf16 on CUDA."""

from __future__ import annotations

from geneb.errors import ModelError, unknown_name

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


def resolve_device(device: str = "auto", kinds: tuple[str, ...] = DEVICE_KINDS) -> str:
    """Concrete torch device string for ``device`` (auto picks the best available), the one
    resolver of geneb: ``kinds`` narrows the device kinds a caller supports (the probe
    solvers: cpu and cuda, no MPS), and ``auto`` picks among those only."""
    import torch

    d = (device or "auto").lower()
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
        return "bfloat16" if device.startswith("cuda") else "float32"
    key = dtype.lower()
    if key not in DTYPES:
        raise unknown_name("dtype", dtype, sorted(DTYPES))
    return DTYPES[key]


def torch_dtype(name: str):
    import torch

    return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[name]
