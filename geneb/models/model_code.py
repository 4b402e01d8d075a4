"""Running a model's own code (hub ``auto_map`` files or a family's package) behind two guards.

1. **Failures are one line.** A checkpoint's code was written for one transformers major and
   one set of packages; under another it raises whatever it raises (ImportError for a removed
   helper, AttributeError for a config default that went away, a refused pickle, a bare
   AssertionError from a GPU kernel). :func:`model_code_errors` turns any such exception,
   while importing, constructing or running the code, into a :class:`ModelError` that names the
   model, the cause, the versions it ran under and the transformers range geneb measured the
   families under, so the CLI prints one line and exits 2 before anything is written.
2. **No GPU kernels on a CPU run.** Some model code takes an optional GPU-kernel path when a
   package imports (DNABERT-2 with ``triton`` importable: its Triton attention asserts
   ``q.is_cuda`` and dies). :func:`hide_gpu_kernels` makes those packages unimportable to the
   code while it is imported for a CPU run, so the code takes its documented PyTorch fallback.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

from geneb.errors import ModelError

#: Optional GPU-kernel packages that model code imports when it can (never needed on a CPU).
GPU_KERNEL_PACKAGES: tuple[str, ...] = ("triton", "flash_attn", "xformers")

#: The transformers range geneb's family fixtures were measured under (docs/models.md table):
#: DNABERT-2 and GENA-LM code fails under 5.x, GPN and HyenaDNA run under both majors. It is
#: the dependency pin of pyproject.toml (tests/test_families.py checks they agree); 4.56 is
#: the first with from_pretrained(dtype=...) (geneb.models.adapters.hf_load).
MEASURED_TRANSFORMERS = ">=4.56,<5"


@contextlib.contextmanager
def hide_gpu_kernels(device: str) -> Iterator[None]:
    """On a CPU ``device``, GPU-kernel packages look uninstalled inside the block (restored)."""
    if not device.startswith("cpu"):
        yield
        return
    saved = {
        k: sys.modules.pop(k)
        for k in list(sys.modules)
        if k.split(".", 1)[0] in GPU_KERNEL_PACKAGES
    }
    # None in sys.modules: ``import triton`` raises ModuleNotFoundError and
    # ``importlib.util.find_spec("triton")`` answers None, exactly as when it is not installed
    for name in GPU_KERNEL_PACKAGES:
        # typeshed types sys.modules as dict[str, ModuleType]; the import system documents None
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        for k in [k for k in sys.modules if k.split(".", 1)[0] in GPU_KERNEL_PACKAGES]:
            del sys.modules[k]
        sys.modules.update(saved)


def _versions() -> dict[str, str]:
    import importlib.metadata as md

    out = {}
    for pkg in ("transformers", "torch"):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:  # pragma: no cover
            pass
    return out


def describe_failure(model: str, stage: str, e: BaseException) -> str:
    """One line: the model, the stage ("reading its config", ...), the exception's type and
    first line, the versions, and the measured transformers range when the code is 4.x code."""
    text = str(e).strip().splitlines()[0] if str(e).strip() else ""
    if len(text) > 300:
        text = text[:297] + "..."
    cause = f"{type(e).__name__}: {text}" if text else type(e).__name__
    versions = _versions()
    major = versions.get("transformers", "0").split(".")[0]
    hint = ""
    if major.isdigit() and int(major) >= 5 and isinstance(e, (ImportError, AttributeError)):
        hint = (
            f"; model code written for transformers 4.x needs transformers{MEASURED_TRANSFORMERS}"
            " (geneb's default pin: pip install 'transformers<5')"
        )
    under = ", ".join(f"{k} {v}" for k, v in versions.items())
    return f"model {model!r}: {stage} failed ({cause}) under {under}{hint}"


@contextlib.contextmanager
def model_code_errors(model: str, stage: str) -> Iterator[None]:
    """Any exception from model code inside the block becomes one ``ModelError`` line.

    geneb's own errors pass unchanged; ``KeyboardInterrupt``/``SystemExit`` are never caught;
    out-of-memory keeps its own message (the caller names the batch size).
    """
    try:
        yield
    except ModelError:
        raise
    except Exception as e:
        if type(e).__name__ == "OutOfMemoryError":
            raise
        raise ModelError(describe_failure(model, stage, e)) from e
