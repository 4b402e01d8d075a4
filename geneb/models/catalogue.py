"""The model catalogue: published facts about the models of the GENEB and GFMBench studies.

One JSON file shipped with the package (``model_catalogue.json``) holds one object per model:
short name, hub id, family, architecture, tokenization, published parameter count, context
length, whether the checkpoint needs its own code, extra packages, packages that run only on
an NVIDIA CUDA GPU (``cuda_packages``), quirks, capabilities, and the source of every fact
(``sources``: fact -> model card or paper URL). A fact nobody could
check is ``null``, never a guess; the facts that have a source are the ones that were checked.
Two bookkeeping fields are geneb's own, not published facts: ``revision`` (a pinned hub commit
that ``geneb models fetch`` downloads and extraction resolves; null = the ``main`` ref) and
``test_fixture`` (the folder under the shared test models whose code path covers this model's
family, or null when no test runs its code).

Reading it is cheap (no model is loaded): the registry uses it to resolve ``--model <short
name>`` to a hub id with the catalogue's settings, and the scaling analysis uses its
published parameter counts.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from geneb.errors import GenebError

CATALOGUE_FILE = "model_catalogue.json"

ARCHITECTURES = ("encoder", "decoder", "state-space", "hybrid", "CNN")
TOKENIZATIONS = ("BPE", "k-mer", "single base", "other")
#: The comparison classes of GENEB's controlled analyses (issue 23). ``architecture_class``
#: refines ``architecture`` (which state-space kind, which transformer stack) and must agree
#: with it; ``tokenization_class`` is ``tokenization`` under the analysis' names (not stored).
ARCHITECTURE_CLASSES = (
    "transformer encoder",
    "transformer decoder",
    "transformer encoder-decoder",
    "Mamba/SSM",
    "Hyena",
    "CNN",
    "hybrid",
)
TOKENIZATION_CLASSES = ("BPE", "k-mer", "single-nucleotide", "other")
PRETRAINING_DATA_CLASSES = (
    "human",
    "eukaryotic",
    "multi-species",
    "prokaryotic/microbial",
    "plant",
    "other",
)
#: architecture_class -> the coarse ``architecture`` it refines
_ARCH_OF_CLASS = {
    "transformer encoder": "encoder",
    "transformer decoder": "decoder",
    "transformer encoder-decoder": "hybrid",
    "Mamba/SSM": "state-space",
    "Hyena": "state-space",
    "CNN": "CNN",
    "hybrid": "hybrid",
}
_TOKENIZATION_CLASS = {"BPE": "BPE", "k-mer": "k-mer", "single base": "single-nucleotide",
                       "other": "other"}  # fmt: skip
CAPABILITIES = ("embeddings", "masked_lm", "causal_lm")
CONTEXT_UNITS = ("tokens", "bp")
LOADERS = ("transformers", "external")
STUDIES = ("GENEB", "GFMBench-API")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_FIXTURE = re.compile(r"^(families|real)/[A-Za-z0-9][\w.-]*$")

#: Facts that need a source when not null (the rest are names, lists or bookkeeping).
FACTS = (
    "hub_id",
    "family",
    "architecture",
    "architecture_class",
    "tokenization",
    "pretraining_data_class",
    "organisms",
    "n_params",
    "context_length",
    "trust_remote_code",
    "extra_packages",
    "cuda_packages",
    "quirks",
    "capabilities",
    "loader",
)


@dataclass(frozen=True)
class CatalogueEntry:
    """Published facts about one model; ``None`` = not checked (never a guess)."""

    name: str
    hub_id: str | None
    family: str | None
    architecture: str | None
    architecture_class: str | None  # one of ARCHITECTURE_CLASSES, agrees with architecture
    tokenization: str | None
    pretraining_data_class: str | None  # one of PRETRAINING_DATA_CLASSES
    organisms: tuple[str, ...] | None  # what the pretraining corpus holds, as published
    n_params: int | None
    n_params_basis: str | None  # "model card", "paper", "checkpoint name" (publisher's label)
    context_length: int | None
    context_unit: str | None
    trust_remote_code: bool | None  # the checkpoint ships its own Python code
    extra_packages: tuple[str, ...] | None
    quirks: str | None
    capabilities: tuple[str, ...] | None
    loader: str | None  # transformers: geneb's hf adapter can load it; external: needs a plugin
    revision: str | None = None  # pinned hub commit (40 hex); None: the hub's main ref
    cuda_packages: tuple[str, ...] | None = None  # pip packages whose kernels need CUDA
    test_fixture: str | None = None  # shared/models folder covering this family's code path
    studies: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    source: str | None = None  # the main reference (model card, else paper)
    sources: Mapping[str, str] = field(default_factory=dict)

    @property
    def checked(self) -> tuple[str, ...]:
        """The facts that were checked against a source (those with an entry in ``sources``)."""
        return tuple(f for f in FACTS if f in self.sources)

    @property
    def tokenization_class(self) -> str | None:
        """``tokenization`` under the names of the controlled comparisons (same fact, same
        source)."""
        return None if self.tokenization is None else _TOKENIZATION_CLASS[self.tokenization]

    @property
    def unchecked(self) -> tuple[str, ...]:
        """The facts left null because no source could confirm them."""
        return tuple(f for f in FACTS if getattr(self, f) is None)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON object (the schema of ``geneb models list --json``)."""
        return {
            "name": self.name,
            "aliases": list(self.aliases),
            "studies": list(self.studies),
            "hub_id": self.hub_id,
            "family": self.family,
            "architecture": self.architecture,
            "tokenization": self.tokenization,
            "architecture_class": self.architecture_class,
            "tokenization_class": self.tokenization_class,
            "pretraining_data_class": self.pretraining_data_class,
            "organisms": None if self.organisms is None else list(self.organisms),
            "n_params": self.n_params,
            "n_params_basis": self.n_params_basis,
            "context_length": self.context_length,
            "context_unit": self.context_unit,
            "trust_remote_code": self.trust_remote_code,
            "extra_packages": None if self.extra_packages is None else list(self.extra_packages),
            "quirks": self.quirks,
            "capabilities": None if self.capabilities is None else list(self.capabilities),
            "loader": self.loader,
            "revision": self.revision,
            "cuda_packages": None if self.cuda_packages is None else list(self.cuda_packages),
            "test_fixture": self.test_fixture,
            "source": self.source,
            "sources": self._json_sources(),
            "checked": list(self.checked),
        }

    def _json_sources(self) -> dict[str, str]:
        """``sources`` plus ``tokenization_class`` (the source of ``tokenization``)."""
        out = dict(self.sources)
        if "tokenization" in out:
            out["tokenization_class"] = out["tokenization"]
        return out


# field -> (accepted JSON types, allowed values or None)
_SCHEMA: dict[str, tuple[tuple[type, ...], tuple[Any, ...] | None]] = {
    "name": ((str,), None),
    "hub_id": ((str, type(None)), None),
    "family": ((str, type(None)), None),
    "architecture": ((str, type(None)), ARCHITECTURES),
    "architecture_class": ((str, type(None)), ARCHITECTURE_CLASSES),
    "tokenization": ((str, type(None)), TOKENIZATIONS),
    "pretraining_data_class": ((str, type(None)), PRETRAINING_DATA_CLASSES),
    "organisms": ((list, type(None)), None),
    "n_params": ((int, type(None)), None),
    "n_params_basis": ((str, type(None)), ("model card", "paper", "checkpoint name")),
    "context_length": ((int, type(None)), None),
    "context_unit": ((str, type(None)), CONTEXT_UNITS),
    "trust_remote_code": ((bool, type(None)), None),
    "extra_packages": ((list, type(None)), None),
    "quirks": ((str, type(None)), None),
    "capabilities": ((list, type(None)), None),
    "loader": ((str, type(None)), LOADERS),
    "revision": ((str, type(None)), None),
    "cuda_packages": ((list, type(None)), None),
    "test_fixture": ((str, type(None)), None),
    "studies": ((list,), None),
    "aliases": ((list,), None),
    "source": ((str, type(None)), None),
    "sources": ((dict,), None),
}
_LIST_VALUES = {"capabilities": CAPABILITIES, "studies": STUDIES}


def _entry(raw: Any, where: str) -> CatalogueEntry:
    if not isinstance(raw, dict):
        raise GenebError(f"{where}: expected an object, got {type(raw).__name__}")
    name = raw.get("name", "?")
    where = f"{where} ({name!r})"
    unknown = sorted(set(raw) - set(_SCHEMA))
    missing = sorted(set(_SCHEMA) - set(raw))
    if unknown or missing:
        raise GenebError(f"{where}: unknown keys {unknown}, missing keys {missing}")
    for key, (types, allowed) in _SCHEMA.items():
        v = raw[key]
        if not isinstance(v, types) or (isinstance(v, bool) and bool not in types):
            names = " or ".join("null" if t is type(None) else t.__name__ for t in types)
            raise GenebError(f"{where}: {key} must be {names}, got {v!r}")
        if allowed is not None and v is not None and v not in allowed:
            raise GenebError(f"{where}: {key} must be one of {list(allowed)}, got {v!r}")
        if isinstance(v, list) and not all(isinstance(x, str) for x in v):
            raise GenebError(f"{where}: {key} must be a list of strings, got {v!r}")
        if key in _LIST_VALUES and isinstance(v, list):
            bad = [x for x in v if x not in _LIST_VALUES[key]]
            if bad:
                raise GenebError(f"{where}: {key} {bad} not in {list(_LIST_VALUES[key])}")
    for key in ("n_params", "context_length"):
        if raw[key] is not None and raw[key] <= 0:
            raise GenebError(f"{where}: {key} must be positive, got {raw[key]!r}")
    srcs = raw["sources"]
    for fact, url in srcs.items():
        if fact not in FACTS or not isinstance(url, str) or not url.startswith("https://"):
            raise GenebError(f"{where}: sources[{fact!r}] must name a fact with an https URL")
    for fact in FACTS:
        if raw[fact] is not None and fact not in srcs:
            raise GenebError(f"{where}: {fact} = {raw[fact]!r} has no source (set it to null)")
    if (raw["n_params"] is None) != (raw["n_params_basis"] is None):
        raise GenebError(f"{where}: n_params and n_params_basis go together")
    if (raw["context_length"] is None) != (raw["context_unit"] is None):
        raise GenebError(f"{where}: context_length and context_unit go together")
    _check_bookkeeping(raw, where)
    ac, arch = raw["architecture_class"], raw["architecture"]
    if ac is not None and arch is not None and _ARCH_OF_CLASS[ac] != arch:
        raise GenebError(
            f"{where}: architecture_class {ac!r} needs architecture "
            f"{_ARCH_OF_CLASS[ac]!r}, got {arch!r}"
        )
    if raw["organisms"] is not None and not raw["organisms"]:
        raise GenebError(f"{where}: organisms must be null or a non-empty list, got []")
    return CatalogueEntry(
        **{
            **raw,
            "extra_packages": None
            if raw["extra_packages"] is None
            else tuple(raw["extra_packages"]),
            "capabilities": None if raw["capabilities"] is None else tuple(raw["capabilities"]),
            "cuda_packages": None if raw["cuda_packages"] is None else tuple(raw["cuda_packages"]),
            "organisms": None if raw["organisms"] is None else tuple(raw["organisms"]),
            "studies": tuple(raw["studies"]),
            "aliases": tuple(raw["aliases"]),
            "sources": dict(srcs),
        }
    )


def _check_bookkeeping(raw: dict[str, Any], where: str) -> None:
    """``revision`` is a full commit (a branch name would move under a pinned study);
    ``test_fixture`` a folder name under ``families/`` or ``real/`` of the shared models."""
    rev = raw["revision"]
    if rev is not None and not _COMMIT.match(rev):
        raise GenebError(f"{where}: revision must be a full 40-hex commit, got {rev!r}")
    fixture = raw["test_fixture"]
    if fixture is not None and not _FIXTURE.match(fixture):
        raise GenebError(
            f"{where}: test_fixture must be 'families/NAME' or 'real/NAME', got {fixture!r}"
        )


def parse_catalogue(data: Any, where: str = CATALOGUE_FILE) -> tuple[CatalogueEntry, ...]:
    """Check a decoded catalogue (a JSON list) field by field; names must be unique."""
    if not isinstance(data, list):
        raise GenebError(f"{where}: expected a JSON list of models, got {type(data).__name__}")
    entries = tuple(_entry(raw, f"{where}: entry {i}") for i, raw in enumerate(data))
    seen: dict[str, str] = {}
    for e in entries:
        for n in (e.name, *e.aliases):
            k = n.casefold()
            if k in seen:
                raise GenebError(f"{where}: name {n!r} of {e.name!r} is already {seen[k]!r}")
            seen[k] = e.name
    return entries


@functools.lru_cache(maxsize=1)
def load_catalogue() -> tuple[CatalogueEntry, ...]:
    """The shipped catalogue, read and checked once per process."""
    text = resources.files("geneb.models").joinpath(CATALOGUE_FILE).read_text("utf-8")
    return parse_catalogue(json.loads(text))


def lookup(name: str) -> CatalogueEntry | None:
    """The entry whose short name or alias is ``name`` (case-insensitive), else None."""
    key = name.strip().casefold()
    for e in load_catalogue():
        if key == e.name.casefold() or key in (a.casefold() for a in e.aliases):
            return e
    return None


def lookup_hub_id(hub_id: str) -> CatalogueEntry | None:
    """The entry for a hub id (hub ids are case-insensitive on the hub), else None."""
    key = hub_id.strip().casefold()
    for e in load_catalogue():
        if e.hub_id is not None and e.hub_id.casefold() == key:
            return e
    return None


def published_facts(model: str) -> dict[str, Any] | None:
    """The installed catalogue's facts about store key ``model`` as plain data, else None.

    Matched by short name, alias or hub id: ``to_json()`` of the entry. The
    report commands (``geneb report``, ``geneb run``) pass this function to ``build_report``
    (``catalogue=``), so the analyses read catalogue facts they are handed and never import
    the installed catalogue: a library caller decides whether they apply."""
    entry = lookup(model) or lookup_hub_id(model)
    return None if entry is None else entry.to_json()


def names() -> list[str]:
    """Short names of all entries, in catalogue order."""
    return [e.name for e in load_catalogue()]
