"""Models whose code needs packages that run only on an NVIDIA CUDA GPU: refused before any work.

Caduceus / PlantCaduceus import ``mamba_ssm`` (its selective-scan kernel is a CUDA extension:
no CPU path), Evo 1 needs ``flash_attn``, Evo 2 its own kernels (``evo2``, built on
``vortex``). On a machine without CUDA these fail deep inside the model's code, after the
weights were read and a store was opened. The catalogue declares which models need which
CUDA-only package (``cuda_packages``), and the registry calls :func:`check_cuda_only` from
``check_spec``, the path ``geneb extract``, ``geneb run`` and ``geneb vep score`` all go
through, so the refusal is one line naming the package and the device, before anything else.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence

from geneb.errors import ModelError
from geneb.vocabulary import DEFAULT_DEVICE

DEVICE = "an NVIDIA GPU with CUDA"


def module_of(package: str) -> str:
    """Import name of a pip package (``mamba-ssm`` -> ``mamba_ssm``)."""
    return package.split("[")[0].strip().replace("-", "_")


def cuda_available() -> bool:
    """Whether torch sees a CUDA device (imported only for models that need one)."""
    import torch

    return bool(torch.cuda.is_available())


def check_cuda_only(
    label: str, packages: Sequence[str], device: str | None = DEFAULT_DEVICE
) -> None:
    """Refuse ``label`` unless it can run where asked: a CUDA device, the packages importable.

    ``device`` is the device option as given ("auto" lets CUDA be chosen); any other device
    kind is refused even on a GPU machine, since the kernels have no CPU or MPS path.
    """
    if not packages:
        return
    pkgs = ", ".join(packages)
    needs = f"model {label!r} needs {pkgs}, which runs only on {DEVICE}"
    kind = (device or "auto").split(":")[0].strip().lower()
    if kind not in ("auto", "cuda"):
        raise ModelError(f"{needs}; device {device!r} was asked for (use auto or cuda)")
    if not cuda_available():
        raise ModelError(
            f"{needs}, and this machine has none (torch.cuda.is_available() is False): "
            "run it on a CUDA machine"
        )
    missing = [p for p in packages if importlib.util.find_spec(module_of(p)) is None]
    if missing:
        raise ModelError(
            f"model {label!r} needs {', '.join(missing)} (CUDA kernels), not installed: "
            f"pip install {' '.join(missing)}"
        )
