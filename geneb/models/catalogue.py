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
family, or null when no test runs its code), and ``runs`` with ``runs_via`` (how geneb runs
the model here, measured by tests/test_models_coverage.py for GENEB's 41: :data:`RUNS`).

Reading it is cheap (no model is loaded): the registry uses it to resolve ``--model <short
name>`` to a hub id with the catalogue's settings, and the scaling analysis uses its
published parameter counts.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from geneb import constraints as c
from geneb.errors import GenebError

CATALOGUE_FILE = "model_catalogue.json"

ARCHITECTURES = ("encoder", "decoder", "state-space", "hybrid", "CNN")
TOKENIZATIONS = ("BPE", "k-mer", "single base", "other")
#: The comparison classes of GENEB's controlled analyses. ``architecture_class``
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
LOADERS = ("transformers", "package", "external")
STUDIES = ("GENEB", "GFMBench-API")
#: How geneb runs a model here (``runs``), set by tests/test_models_coverage.py, never assumed:
#: ``native``: its transformers class (``runs_via``), run on a tiny config of that class;
#: ``family``: an adapter tested on the family's own code or package (``runs_via``: the
#: fixture folder or the test's builder); ``cuda``: its code needs CUDA kernels (refused on a
#: CPU, naming package and device); ``no code``: no code here runs it (``runs_via``: where it
#: was looked for).
RUNS = ("native", "family", "cuda", "no code")

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
    loader: str | None  # transformers: geneb's hf adapter; package: geneb's adapter on the
    # family's pip package (Enformer, Borzoi: geneb.models.adapters.tracks); external: a plugin
    revision: str | None = None  # pinned hub commit (40 hex); None: the hub's main ref
    cuda_packages: tuple[str, ...] | None = None  # pip packages whose kernels need CUDA
    test_fixture: str | None = None  # shared/models folder covering this family's code path
    runs: str | None = None  # one of RUNS (measured for GENEB's 41)
    runs_via: str | None = None  # the class, fixture, builder or where code was looked for
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
            "runs": self.runs,
            "runs_via": self.runs_via,
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


def _maybe(constraint: c.Constraint) -> c.Nullable:
    return c.Nullable(constraint)  # null: a fact nobody could check


def _strings(item: c.Constraint = c.TEXT, min_len: int = 0) -> c.ListOf:
    return c.ListOf(item, min_len=min_len, scalar_ok=False)


#: What each field of an entry must be (every field is required; null where nullable).
_SCHEMA: dict[str, c.Constraint] = {
    "name": c.String(),
    "hub_id": _maybe(c.TEXT),
    "family": _maybe(c.TEXT),
    "architecture": _maybe(c.StrOptions(ARCHITECTURES)),
    "architecture_class": _maybe(c.StrOptions(ARCHITECTURE_CLASSES)),
    "tokenization": _maybe(c.StrOptions(TOKENIZATIONS)),
    "pretraining_data_class": _maybe(c.StrOptions(PRETRAINING_DATA_CLASSES)),
    "organisms": _maybe(_strings(min_len=1)),
    "n_params": _maybe(c.POSITIVE_INT),
    "n_params_basis": _maybe(c.StrOptions(("model card", "paper", "checkpoint name"))),
    "context_length": _maybe(c.POSITIVE_INT),
    "context_unit": _maybe(c.StrOptions(CONTEXT_UNITS)),
    "trust_remote_code": _maybe(c.BOOL),
    "extra_packages": _maybe(_strings()),
    "quirks": _maybe(c.TEXT),
    "capabilities": _maybe(_strings(c.StrOptions(CAPABILITIES))),
    "loader": _maybe(c.StrOptions(LOADERS)),
    # a full commit: a branch name would move under a pinned study
    "revision": _maybe(c.Pattern(r"[0-9a-f]{40}", "a full 40-hex commit")),
    "cuda_packages": _maybe(_strings()),
    # a folder under the shared test models whose code path covers this family
    "test_fixture": _maybe(c.Pattern(r"(families|real)/[A-Za-z0-9][\w.-]*",
                                     "'families/NAME' or 'real/NAME'")),
    "runs": _maybe(c.StrOptions(RUNS)),
    "runs_via": _maybe(c.TEXT),
    "studies": _strings(c.StrOptions(STUDIES)),
    "aliases": _strings(),
    "source": _maybe(c.TEXT),
    "sources": c.MappingOf(c.StrOptions(FACTS), c.Pattern(r"https://\S+", "an https URL")),
}


def _entry(raw: Any, where: str) -> CatalogueEntry:
    """One checked entry; an error names the file, the entry and the field: ``model_catalogue
    .json: entry 3 ('GROVER'): n_params: expected null or a positive int, got '86M'``."""
    if not isinstance(raw, dict):
        raise GenebError(f"{where}: expected an object, got {type(raw).__name__}")
    name = raw.get("name", "?")
    where = f"{where} ({name!r})"
    unknown = sorted(set(raw) - set(_SCHEMA))
    missing = sorted(set(_SCHEMA) - set(raw))
    if unknown or missing:
        raise GenebError(f"{where}: unknown keys {unknown}, missing keys {missing}")
    for key, constraint in _SCHEMA.items():
        c.check_as(constraint, raw[key], f"{where}: {key}", GenebError)
    srcs = raw["sources"]
    for fact in FACTS:
        if raw[fact] is not None and fact not in srcs:
            raise GenebError(f"{where}: {fact} = {raw[fact]!r} has no source (set it to null)")
    if (raw["n_params"] is None) != (raw["n_params_basis"] is None):
        raise GenebError(f"{where}: n_params and n_params_basis go together")
    if (raw["runs"] is None) != (raw["runs_via"] is None):
        raise GenebError(f"{where}: runs and runs_via go together")
    if (raw["context_length"] is None) != (raw["context_unit"] is None):
        raise GenebError(f"{where}: context_length and context_unit go together")
    ac, arch = raw["architecture_class"], raw["architecture"]
    if ac is not None and arch is not None and _ARCH_OF_CLASS[ac] != arch:
        raise GenebError(
            f"{where}: architecture_class {ac!r} needs architecture "
            f"{_ARCH_OF_CLASS[ac]!r}, got {arch!r}"
        )
    return CatalogueEntry(
        **{
            **raw,
            **{k: None if raw[k] is None else tuple(raw[k])
               for k in ("extra_packages", "capabilities", "cuda_packages", "organisms")},
            "studies": tuple(raw["studies"]),
            "aliases": tuple(raw["aliases"]),
            "sources": dict(srcs),
        }
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
