"""Model types that a pip package (not a model folder's own code) provides to transformers.

Some families ship their model classes in a package (GPN: ``pip install gpn``) and register
them with the transformers Auto classes; their checkpoints carry no ``auto_map`` and a
``model_type`` transformers does not know. Installing the package is the user's consent to its
code, so such a type is not "remote code": geneb imports the package and registers its classes
(never anything from the model folder). Without the package, loading fails with one line that
names it and the geneb extra that installs it.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass

from geneb.errors import ModelError


@dataclass(frozen=True)
class PackageModelType:
    """A ``model_type`` provided by ``package``; ``register`` = "module:function", ``args``."""

    package: str
    extra: str
    register: str
    args: tuple[str, ...] = ()
    #: tokenizer_class names the package provides (registered by ``register``)
    tokenizer_classes: tuple[str, ...] = ()
    #: the pip distribution, where its name is not the module's (ai2-olmo: ``hf_olmo``)
    distribution: str = ""
    #: the install line, where ``pip install 'geneb[extra]'`` is not all of it
    install: str = ""

    @property
    def pip_name(self) -> str:
        """The name ``pip install`` knows the package by."""
        return self.distribution or self.package

    @property
    def install_line(self) -> str:
        """What installs it."""
        return self.install or f"pip install 'geneb[{self.extra}]'"


#: config.json ``model_type`` -> the package that provides it (one declaration).
_GPN = PackageModelType("gpn", "gpn", "gpn._registration:register_auto_classes", ("gpn",))
PACKAGE_MODEL_TYPES: dict[str, PackageModelType] = {
    "ConvNet": _GPN,  # legacy GPN (gpn-brassicales, the fixture)
    "GPNRoFormer": _GPN,
    "GPN": _GPN,
    # fixed-length track models (geneb.models.adapters.tracks): config class registered
    "enformer": PackageModelType(
        "enformer_pytorch", "enformer", "geneb.models.adapters.enformer:register_classes",
        distribution="enformer-pytorch",
        install="pip install 'geneb[enformer]' && pip install --no-deps enformer-pytorch==0.8.12",
    ),
    "borzoi": PackageModelType(
        "borzoi_pytorch", "borzoi", "geneb.models.adapters.borzoi:register_classes",
        distribution="borzoi-pytorch",
    ),
    # LucaOne: importing the package registers config and models; geneb adds its tokenizer
    "lucaone": PackageModelType(
        "lucaone", "lucaone", "geneb.models.adapters.lucaone:register_classes",
        tokenizer_classes=("LucaGPLMTokenizer",),
    ),
    # Omni-DNA: ai2-olmo's hf_olmo registers config, causal LM and tokenizer; geneb adds the
    # base model (the same class, its last hidden state named); ai2-olmo pins numpy<2, so it
    # goes in without its pins (geneb.models.adapters.omni_dna)
    "hf_olmo": PackageModelType(
        "hf_olmo", "omni-dna", "geneb.models.adapters.omni_dna:register_classes",
        tokenizer_classes=("OLMoTokenizerFast",), distribution="ai2-olmo",
        install="pip install 'geneb[omni-dna]' && pip install --no-deps ai2-olmo==0.6.0",
    ),
}


def check_extra_packages(label: str, packages: Sequence[str]) -> None:
    """Refuse model ``label`` when a package it needs is not importable, naming each with the
    line that installs it (a package of :data:`PACKAGE_MODEL_TYPES`: its own line)."""
    from geneb.models.cuda_only import module_of

    known = {e.pip_name: e for e in PACKAGE_MODEL_TYPES.values()}
    missing = [p for p in packages if importlib.util.find_spec(
        known[p].package if p in known else module_of(p)) is None]
    if missing:
        lines = sorted({known[p].install_line if p in known else f"pip install {p}"
                        for p in missing})
        raise ModelError(
            f"model {label!r} needs the package(s) {', '.join(missing)}: {'; '.join(lines)}"
        )


def provided_by_package(model_type: str) -> PackageModelType | None:
    """The package entry for ``model_type`` (None: transformers itself or remote code)."""
    return PACKAGE_MODEL_TYPES.get(model_type)


def provided_tokenizer_class(name: str) -> bool:
    """Whether ``name`` is a tokenizer class of a package of :data:`PACKAGE_MODEL_TYPES`."""
    return any(name in e.tokenizer_classes for e in PACKAGE_MODEL_TYPES.values())


def register_package_model_type(model_type: str, model: str) -> None:
    """Import the providing package and register its Auto classes (idempotent).

    Raises a one-line :class:`ModelError` naming the package when it is not installed or its
    registration fails.
    """
    entry = PACKAGE_MODEL_TYPES[model_type]
    mod_name, func_name = entry.register.split(":")
    try:
        importlib.import_module(entry.package)
        module = importlib.import_module(mod_name)
    except ImportError as e:
        raise ModelError(
            f"model {model!r} has model_type {model_type!r}, provided by the "
            f"{entry.pip_name!r} package, which is not installed ({e}); install it: "
            f"{entry.install_line}"
        ) from e
    try:
        getattr(module, func_name)(*entry.args)
    except Exception as e:  # a registration clash or an incompatible package version
        raise ModelError(
            f"model {model!r}: registering the {entry.pip_name!r} model classes failed "
            f"({type(e).__name__}: {e})"
        ) from e
