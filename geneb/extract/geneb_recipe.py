"""``geneb extract --recipe geneb``: embed a model as GENEB's own extractor embedded it.

GENEB's recipe of a model (``geneb.models.geneb_recipes``) is applied where geneb can: a
transformers checkpoint, pooled by a mask-weighted mean, the first position, or a plain mean
over every position of the padded batch (padding included). The rows are then embedded in
GENEB's batches: ``main.py``'s batch size (4) of consecutive rows in file order, padded on
the recipe's side (the tokenizer's own unless GENEB set one) to the longest row, or to the
max length where GENEB padded to it, the attention mask withheld where GENEB withheld it,
at GENEB's dtype on CUDA, truncated at GENEB's max length (at the checkpoint's own context
where GENEB's is longer: ``max_length_used`` is recorded). Such an embedding may depend on
the other rows of its batch (``batch_dependent`` in the recipe): that is the point, and the
provenance records it (``Provenance.recipe`` "geneb", ``extra["geneb_recipe"]``). Where
geneb cannot apply the recipe (the model's own non-transformers code, an input geneb does not
build) the request is refused in one line, before any model loads.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from geneb.errors import ModelError
from geneb.models.embedder import ModelInfo
from geneb.models.geneb_recipes import GENEB_POOLING, GenebRecipe, find_recipe
from geneb.models.options import OPTION_DEFAULTS
from geneb.models.selftest import BatchPolicy
from geneb.vocabulary import DEFAULT_DEVICE

#: ``extract(recipe=...)`` values: None (geneb's own batch-invariant embedding) or "geneb".
RECIPES = ("geneb",)
#: options the recipe sets itself: a user value for one of them is refused, not overridden
RECIPE_OPTIONS = ("pooling", "max_length", "dtype", "truncation", "layers", "strands")


def _config(spec: str) -> dict[str, Any]:
    """The checkpoint's config.json (no model code runs), {} when there is none to read."""
    from geneb.models.hub import resolve_source

    try:
        folder = resolve_source(spec.strip().removeprefix("hf:")).folder
        return dict(json.loads((Path(folder) / "config.json").read_text()))
    except (ModelError, OSError, ValueError):
        return {}


def _model_type(spec: str) -> str:
    return str(_config(spec).get("model_type", ""))


def _context(spec: str) -> int | None:
    """Positions the checkpoint's config says it takes, None when it says none."""
    cfg = _config(spec)
    for key in ("max_seq_len", "max_position_embeddings", "n_positions"):
        if isinstance(cfg.get(key), int) and cfg[key] > 0:
            return int(cfg[key])
    return None


def resolve_recipe(spec: str) -> GenebRecipe:
    """GENEB's recipe for model ``spec`` (a GENEB id, hub id, catalogue name or folder whose
    ``model_type`` one GENEB extractor serves), or a one-line refusal."""
    from geneb.models.catalogue import lookup

    entry = lookup(spec)
    name = entry.hub_id if entry is not None and entry.hub_id else spec
    recipe = find_recipe(name, _model_type(name))
    if recipe is None:
        raise ModelError(f"model {spec!r}: GENEB's code has no recipe for it (no GENEB model "
                         f"id, hub id or model_type matches geneb_recipes.json); run it "
                         f"without recipe='geneb'", param="recipe")
    if not recipe.applicable or recipe.pooling not in GENEB_POOLING:
        raise ModelError(f"model {spec!r}: GENEB embedded it with {recipe.extractor} "
                         f"({recipe.file}); geneb cannot apply that recipe: {recipe.refusal}",
                         param="recipe")
    return recipe


def recipe_info(spec: str) -> dict[str, Any]:
    """What ``geneb models info`` shows of GENEB's recipe for ``spec``: the extractor, how
    it pooled and padded, whether a row depends on its batch, whether geneb can apply it."""
    from geneb.models.catalogue import lookup

    entry = lookup(spec)
    name = entry.hub_id if entry is not None and entry.hub_id else spec
    r = find_recipe(name, _model_type(name))
    if r is None:
        return {"found": False, "note": "no GENEB model id, hub id or model_type matches"}
    keep = ("model", "extractor", "file", "commit", "pooling", "padding", "padding_side",
            "max_length", "dtype_cuda", "mask_to_model", "batch_size", "batch_dependent",
            "batch_dependence", "applicable", "refusal", "mapping_note")
    return {"found": True, **{k: v for k, v in r.to_json().items() if k in keep}}


def recipe_options(spec: str, options: dict[str, Any]) -> tuple[GenebRecipe, dict[str, Any]]:
    """The recipe of ``spec`` and the model options that load the model its way (pooling,
    max length, truncation, dtype on CUDA); an option the recipe sets given too is refused."""
    recipe = resolve_recipe(spec)
    for opt in RECIPE_OPTIONS:
        if options.get(opt, OPTION_DEFAULTS[opt]) != OPTION_DEFAULTS[opt]:
            raise ModelError(f"{opt}: GENEB's recipe sets it for model {spec!r} "
                             f"({recipe.extractor}); leave it unset with recipe='geneb'",
                             param=opt)
    from geneb.models.device import resolve_device

    cuda = resolve_device(options.get("device", DEFAULT_DEVICE)).startswith("cuda")
    out = dict(options, pooling=GENEB_POOLING[recipe.pooling],
               dtype=recipe.dtype_cuda if cuda else "float32", truncation="truncate")
    context = _context(spec)
    if isinstance(recipe.max_length, int) and (context is None or recipe.max_length <= context):
        out["max_length"] = recipe.max_length  # else the checkpoint's own (recorded as used)
    return recipe, out


class GenebRecipeEmbedder:
    """A loaded transformers embedder run GENEB's way: one forward per GENEB batch.

    The runner hands it consecutive rows in file order, ``fixed_batch_rows`` at a time
    (``geneb.extract.batching.embed_batches``); each call to ``embed_prepared`` is one of
    GENEB's forwards."""

    def __init__(self, inner: Any, recipe: GenebRecipe) -> None:
        if not hasattr(inner, "_forward") or not hasattr(inner, "prepare"):
            raise ModelError(f"model {inner.name!r}: GENEB's recipe ({recipe.extractor}) applies "
                             f"to transformers checkpoints; this one is {type(inner).__name__}",
                             param="recipe")
        self.inner, self.recipe = inner, recipe
        self.fixed_batch_rows = recipe.batch_size
        side = recipe.padding_side
        self.side = inner.tokenizer.padding_side if side == "tokenizer" else side
        self.width = inner.max_length if recipe.padding == "max_length" else None
        self.batch_policy = BatchPolicy(
            mode="padded", padding_side=self.side, tolerance=0.0,
            note=f"GENEB's recipe: batches of {recipe.batch_size} rows in file order, padded "
                 f"on the {self.side}; batch-dependent: {recipe.batch_dependent}")
        self.layers = None

    @property
    def name(self) -> str:
        return str(self.inner.name)

    @property
    def dim(self) -> int:
        return int(self.inner.dim)

    @property
    def info(self) -> ModelInfo:
        base: ModelInfo = self.inner.info
        used = {"padding_side_used": self.side, "max_length_used": self.inner.max_length}
        extra = dict(base.extra, geneb_recipe={**self.recipe.to_json(), **used})
        return dataclasses.replace(base, recipe="geneb", extra=extra)

    def prepare(self, sequences: Sequence[str]) -> list[Any]:
        return list(self.inner.prepare(sequences))

    def cost(self, items: Sequence[Any]) -> np.ndarray:
        return np.asarray(self.inner.cost(items))

    def embed_prepared(self, items: Sequence[Any]) -> np.ndarray:
        """ONE forward of ``items`` (one GENEB batch), pooled as GENEB pooled it."""
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        wins = [p.windows[0] for p in items]  # truncation: one window per row
        every = self.recipe.pooling in ("all_positions_mean", "cls")  # cls: position 0
        pooled, _ = self.inner._forward(wins, self.side, width=self.width,
                                        pass_mask=self.recipe.mask_to_model,
                                        pool_every_position=every)
        return np.asarray(pooled[0], dtype=np.float32)

    def embed(self, sequences: Sequence[str]) -> np.ndarray:
        """GENEB's loop over ``sequences``: batches of ``fixed_batch_rows`` in this order."""
        items = self.prepare(sequences)
        size = self.fixed_batch_rows
        parts = [self.embed_prepared(items[i:i + size]) for i in range(0, len(items), size)]
        return np.concatenate(parts) if parts else np.zeros((0, self.dim), dtype=np.float32)


def check_recipe(models: Sequence[Any], options: dict[str, Any], recipe: str | None) -> None:
    """Refuse, before any model loads, a recipe that cannot apply to one of ``models``."""
    if recipe is None:
        return
    for spec in models:
        if not isinstance(spec, str):
            raise ModelError(f"recipe: {recipe!r} applies to model specs (a hub id, folder or "
                             f"GENEB id), not to a built embedder ({type(spec).__name__})",
                             param="recipe")
        recipe_options(spec, options)


def load_model(spec: str, options: dict[str, Any], recipe: str | None,
               get_embedder: Callable[..., Any]) -> Any:
    """The embedder of ``spec`` built by ``get_embedder`` (the registry's): geneb's own
    (``recipe`` None), or GENEB's recipe of it."""
    if recipe is None:
        return get_embedder(spec, **options)
    found, opts = recipe_options(spec, options)
    return GenebRecipeEmbedder(get_embedder(spec, **opts), found)
