"""How GENEB's own code embedded each model of its leaderboard (``geneb_recipes.json``).

One JSON file shipped with the package, read from darlednik/GENEB's
``embedding_pipeline/extractors/*.py`` and ``main.py`` (file and commit per extractor): per
extractor the class loaded, which hidden states, the pooling (``mask_mean``: mask-weighted
mean over real tokens, special tokens included; ``all_positions_mean``: plain mean over every
position of the padded batch, padding included; ``cls``), padding and its side, truncation
and max length, dtype on CUDA, whether the model gets the attention mask, whether a row's
embedding depends on the other rows of its batch (and why), and whether geneb can apply it
(``geneb extract --recipe geneb``; else why not). Per GENEB model id (the 41 of the
leaderboard): its extractor, the hub id its name is, and a note where the mapping is inferred.
``main.py``'s default batch size (4) and row order hold for every extractor.

Reading it loads no model; a malformed file fails with a line naming the entry and field.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

from geneb import constraints as c
from geneb.errors import GenebError

RECIPES_FILE = "geneb_recipes.json"
POOLINGS = ("mask_mean", "all_positions_mean", "cls", "library", "other")
PADDINGS = ("longest", "max_length", "manual_right", "none", "fixed_length_one_hot")
PADDING_SIDES = ("tokenizer", "left", "right", "center_N", "none")
BATCH_DEPENDENT = ("yes", "no", "unknown")
#: geneb's pooling for each pooling of GENEB's that a transformers forward gives
GENEB_POOLING = {"mask_mean": "mean", "cls": "cls", "all_positions_mean": "mean"}


@dataclass(frozen=True)
class GenebRecipe:
    """How GENEB embedded one model (an extractor's facts, plus ``main.py``'s batch size)."""

    model: str  # GENEB's model id, or the extractor name when resolved by family
    extractor: str  # GENEB's extractor class
    file: str
    commit: str
    model_class: str
    hidden_states: str
    pooling: str
    padding: str
    padding_side: str
    truncation: bool
    max_length: int | str | None  # an int, or where GENEB read it ("tokenizer.model_max_length")
    dtype_cuda: str
    mask_to_model: bool
    trust_remote_code: bool | None
    batch_dependent: str
    batch_dependence: str
    applicable: bool
    refusal: str
    notes: str
    batch_size: int
    hub_id: str | None = None
    mapping_note: str = ""

    def to_json(self) -> dict[str, Any]:
        """The recipe as plain data (provenance ``extra["geneb_recipe"]``, ``models info``)."""
        from dataclasses import asdict

        return asdict(self)


#: where GENEB's code read a max length it did not write as a number
LENGTH_SOURCES = ("tokenizer.model_max_length", "config.max_position_embeddings")


@dataclass(frozen=True)
class _MaxLength(c.Constraint):
    description: str = (f"null, a positive int or one of {', '.join(LENGTH_SOURCES)}")

    def is_satisfied_by(self, value: Any) -> bool:
        if isinstance(value, bool):
            return False
        return value is None or (isinstance(value, int) and value > 0) or value in LENGTH_SOURCES


_MAYBE_TEXT = c.Nullable(c.TEXT, null="null")
_EXTRACTOR: dict[str, c.Constraint] = {
    "extractor": c.TEXT, "file": c.Pattern(r"embedding_pipeline/extractors/[\w.-]+\.py",
                                           "a file under embedding_pipeline/extractors/"),
    "commit": c.Pattern(r"[0-9a-f]{40}", "a full 40-hex commit"), "model_class": c.TEXT,
    "hidden_states": c.TEXT, "pooling": c.StrOptions(POOLINGS),
    "padding": c.StrOptions(PADDINGS), "padding_side": c.StrOptions(PADDING_SIDES),
    "truncation": c.BOOL, "max_length": _MaxLength(),
    "dtype_cuda": c.StrOptions(("float32", "bfloat16", "float16")), "mask_to_model": c.BOOL,
    "trust_remote_code": c.Nullable(c.BOOL, null="null"),
    "batch_dependent": c.StrOptions(BATCH_DEPENDENT), "batch_dependence": c.TEXT,
    "applicable": c.BOOL, "refusal": c.TEXT, "notes": c.TEXT,
}  # fmt: skip
_MODEL: dict[str, c.Constraint] = {"extractor": _MAYBE_TEXT, "hub_id": _MAYBE_TEXT,
                                   "note": c.TEXT}


def _checked(raw: Any, schema: dict[str, c.Constraint], where: str,
             optional: tuple[str, ...] = ()) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise GenebError(f"{where}: expected an object, got {type(raw).__name__}")
    unknown = sorted(set(raw) - set(schema))
    missing = sorted(set(schema) - set(raw) - set(optional))
    if unknown or missing:
        raise GenebError(f"{where}: unknown keys {unknown}, missing keys {missing}")
    for key, constraint in schema.items():
        if key in raw:
            c.check_as(constraint, raw[key], f"{where}: {key}", GenebError)
    return raw


def parse_recipes(data: Any, where: str = RECIPES_FILE) -> dict[str, GenebRecipe]:
    """Check a decoded recipes file; GENEB model id -> recipe (ids GENEB's code did not
    embed, with a null extractor, left out)."""
    if not isinstance(data, dict) or data.get("schema_version") != 1:
        raise GenebError(f"{where}: expected an object with schema_version 1")
    main = data["source"]["main"]
    batch = c.check_as(c.POSITIVE_INT, main.get("default_batch_size"),
                       f"{where}: source.main.default_batch_size", GenebError)
    extractors = {k: _checked(v, _EXTRACTOR, f"{where}: extractors.{k}")
                  for k, v in data["extractors"].items()}
    for k, e in extractors.items():
        if e["applicable"] == bool(e["refusal"]):
            raise GenebError(f"{where}: extractors.{k}: expected a refusal exactly when "
                             f"applicable is false, got applicable={e['applicable']}")
    out = {}
    for mid, m in data["models"].items():
        m = _checked(m, _MODEL, f"{where}: models.{mid}", optional=("note",))
        ext = m["extractor"]
        if ext is None:
            continue
        if ext not in extractors:
            raise GenebError(f"{where}: models.{mid}: extractor {ext!r} is not in extractors "
                             f"({', '.join(sorted(extractors))})")
        out[mid] = GenebRecipe(model=mid, batch_size=int(batch), hub_id=m["hub_id"],
                               mapping_note=m.get("note", ""), **extractors[ext])
    return out


@functools.lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    text = resources.files("geneb.models").joinpath(RECIPES_FILE).read_text("utf-8")
    return dict(json.loads(text))


@functools.lru_cache(maxsize=1)
def load_recipes() -> dict[str, GenebRecipe]:
    """The shipped recipes by GENEB model id, read and checked once per process."""
    return parse_recipes(_data())


def find_recipe(name: str, model_type: str = "") -> GenebRecipe | None:
    """GENEB's recipe for a model: by GENEB id, by the hub id (or a folder whose name is
    the id's last part), else by the checkpoint's ``model_type`` where one GENEB extractor
    serves that family (e.g. ``hyenadna``); None when nothing matches."""
    recipes = load_recipes()
    key = name.strip().rstrip("/").casefold()
    last = key.rsplit("/", 1)[-1]
    for r in recipes.values():
        hub = (r.hub_id or "").casefold()
        if key in (r.model.casefold(), hub) or last in (r.model.casefold(), hub.rsplit("/")[-1]):
            return r
    family = {r.extractor for r in recipes.values()
              if model_type and r.file.rsplit("/", 1)[-1].removesuffix(".py") == model_type}
    if len(family) == 1:
        first = next(r for r in recipes.values() if r.extractor in family)
        return _by_family(first)
    return None


def _by_family(r: GenebRecipe) -> GenebRecipe:
    from dataclasses import replace

    return replace(r, model=r.extractor, hub_id=None,
                   mapping_note=f"matched by model_type to GENEB's {r.extractor} ({r.file})")
