"""Model properties for the controlled comparisons: one schema, a user file, one resolution.

GENEB's findings compare models that differ in one property (architecture, tokenization,
pretraining data) or in size. The properties an analysis uses are :data:`PROPERTIES`; their
allowed values are the vocabularies of the model catalogue (:mod:`geneb.models.catalogue`),
declared there once and checked here by :func:`check_value`, the one validator for both the
catalogue's values and a user's file.

Where a model's properties come from (:func:`resolve_properties`), per property, first hit:

1. the user's properties file (``--model-properties``, CSV or TOML), matched by store key;
2. the model catalogue entry whose short name, alias or hub id is the store key, as plain data
   handed in by the caller (``catalogue``: ``geneb.models.catalogue.published_facts``, which
   the report commands pass); this module never reads the installed catalogue itself;
3. for ``n_params`` only: the count measured on the loaded backbone (results table).

Sources read ``user file <path>`` (or the file's ``source`` column), ``published (<url>)``
(catalogue; ``published (<basis>: <url>)`` for parameter counts) or ``measured (loaded
backbone)``.

The resolved table carries a ``<property>_source`` column saying which, so the report records
what was used rather than what the installed catalogue happens to say.
"""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from geneb.analysis.metadata import COMPARE_COLUMNS, GROUP_COLUMNS
from geneb.analysis.user_csv import read_user_csv
from geneb.errors import GenebError, did_you_mean
from geneb.models import catalogue as cat

#: The properties of the controlled comparisons, in column order.
PROPERTIES: tuple[str, ...] = (
    "n_params",
    "architecture_class",
    "tokenization_class",
    "pretraining_data_class",
    "organisms",
)
#: The categorical properties a matched pair may differ in.
MATCH_PROPERTIES: tuple[str, ...] = (
    "architecture_class",
    "tokenization_class",
    "pretraining_data_class",
)
ALLOWED: dict[str, tuple[str, ...]] = {
    "architecture_class": cat.ARCHITECTURE_CLASSES,
    "tokenization_class": cat.TOKENIZATION_CLASSES,
    "pretraining_data_class": cat.PRETRAINING_DATA_CLASSES,
}
#: The largest parameter count accepted (10 trillion; the largest DNA models have ~4e10):
#: a count beyond it is a typo or an overflow, never a model (and would not fit an int64).
MAX_N_PARAMS = 10**13
#: Columns a user file may have besides the properties.
EXTRA_COLUMNS: tuple[str, ...] = ("model", "source")


def check_value(key: str, value: Any, where: str) -> Any:
    """The value of property ``key`` in canonical form (None = not given), or a clear error.

    ``n_params``: a positive whole number (``86000000`` or ``8.6e7``); ``organisms``: a list of
    strings, or one string with ``;`` between organisms; the rest: one of :data:`ALLOWED`.
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if key == "n_params":
        n = _whole_number(value)
        if n is None or not 0 < n <= MAX_N_PARAMS:
            raise GenebError(
                f"{where}: n_params must be a positive whole number at most "
                f"{MAX_N_PARAMS:.0e}, got {value!r}"
            )
        return n
    if key == "organisms":
        items = value.split(";") if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(x, str) for x in items):
            raise GenebError(f"{where}: organisms must be a list of strings, got {value!r}")
        items = [x.strip() for x in items if x.strip()]
        return tuple(items) or None
    if key in ALLOWED:
        if not isinstance(value, str) or value.strip() not in ALLOWED[key]:
            raise GenebError(f"{where}: {key} must be one of {list(ALLOWED[key])}, got {value!r}")
        return value.strip()
    raise GenebError(f"{where}: unknown property {key!r}; expected one of {list(PROPERTIES)}")


def _whole_number(value: Any) -> int | None:
    """``86000000``, ``"86000000"``, ``8.6e7`` or ``"8.6e7"`` as an int (exact for digit
    strings, which a float would round); None when it is not a finite whole number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    text = str(value).strip()
    if text.isdigit():
        return int(text)
    try:
        n = float(text)
    except (TypeError, ValueError):
        return None
    return int(n) if math.isfinite(n) and n == int(n) else None


#: Columns of the user's own the report reads (matched comparisons, the comparison with
#: GENEB), beside the properties.
OWN_COLUMNS: tuple[str, ...] = (*GROUP_COLUMNS, *COMPARE_COLUMNS)


def read_model_properties(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read and check a user properties file (``.csv`` or ``.toml``) before any analysis.

    CSV: a ``model`` column (the store key), any of :data:`PROPERTIES`, optionally ``source``
    (where the row's facts come from) and any of :data:`OWN_COLUMNS`, free text of the
    user's own (``architecture``, ``tokenization``, ``pretraining_data``: matched
    comparisons; ``pooling``, ``recipe``, ``layer``: the comparison with GENEB); an empty
    cell = not given. TOML: one table per model, ``[models."<store key>"]`` with the same
    keys. Any other key is refused, with the nearest allowed one.

    Returns one row per model: ``model``, the properties in canonical form, ``source``
    (default: the file's path), then the own columns the file has, as given.
    """
    p = Path(path)
    if not p.is_file():
        raise GenebError(f"no model-properties file at {str(p)!r}")
    if p.suffix.lower() == ".toml":
        rows = _toml_rows(p)
    elif p.suffix.lower() == ".csv":
        rows = _csv_rows(p)
    else:
        raise GenebError(f"{p}: expected a .csv or .toml model-properties file, got {p.suffix!r}")
    seen: set[str] = set()
    out = []
    allowed = (*EXTRA_COLUMNS, *PROPERTIES, *OWN_COLUMNS)
    others = {c: None for c in OWN_COLUMNS if any(c in raw for _, raw in rows)}
    for where, raw in rows:
        unknown = sorted(set(raw) - set(allowed))
        if unknown:
            close = did_you_mean(unknown[0], allowed)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise GenebError(f"{where}: unknown key(s) {unknown}{hint}; expected model, source, "
                             f"any of {', '.join(PROPERTIES)} or columns of your own: "
                             f"{', '.join(OWN_COLUMNS)}")
        model = str(raw.get("model") or "").strip()
        if not model:
            raise GenebError(f"{where}: empty model (expected the model's store key)")
        if model in seen:
            raise GenebError(f"{where}: model {model!r} listed twice")
        seen.add(model)
        rec: dict[str, Any] = {"model": model}
        for key in PROPERTIES:
            rec[key] = check_value(key, raw.get(key), f"{where} ({model!r})")
        rec["source"] = str(raw.get("source") or "").strip() or f"user file {p}"
        rec.update({k: raw.get(k) for k in others})
        out.append(rec)
    return pd.DataFrame(out, columns=["model", *PROPERTIES, "source", *others])


def own_columns(properties: pd.DataFrame) -> pd.DataFrame | None:
    """The user's own columns of a properties table (:func:`read_model_properties`), with
    ``model``; None when it has none."""
    own = [c for c in properties.columns if c not in PROPERTIES and c not in EXTRA_COLUMNS]
    return properties[["model", *own]].copy() if own else None


def _csv_rows(p: Path) -> list[tuple[str, dict[str, Any]]]:
    df = read_user_csv(p, what="model-properties", required=("model",),
                       header=f"model,{','.join(PROPERTIES)}")
    return [(f"{p}: line {line}", dict(r)) for line, r in zip(df.index, df.to_dict("records"),
                                                              strict=True)]  # fmt: skip


def _toml_rows(p: Path) -> list[tuple[str, dict[str, Any]]]:
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise GenebError(f"{p}: not a readable TOML file: {e}") from e
    models = data.get("models")
    if set(data) - {"models"} or not isinstance(models, dict):
        raise GenebError(f'{p}: expected only [models."<store key>"] tables, got {sorted(data)}')
    rows = []
    for name, table in models.items():
        if not isinstance(table, dict):
            raise GenebError(f"{p}: models.{name}: expected a table, got {table!r}")
        rows.append((f"{p}: [models.{name!r}]", {**table, "model": name}))
    return rows


#: A lookup handed in by the caller: store key -> the catalogue's facts (``to_json()`` of
#: the entry), or None when the catalogue has no such model.
Catalogue = Callable[[str], Mapping[str, Any] | None]


def _catalogue_facts(model: str, catalogue: Catalogue | None) -> dict[str, tuple[Any, str]]:
    """The catalogue's properties of store key ``model``: key -> (value, source)."""
    facts = None if catalogue is None else catalogue(model)
    if facts is None:
        return {}
    out = {}
    for key in PROPERTIES:
        value = check_value(key, facts[key], f"model catalogue ({facts['name']!r})")
        if value is None:
            continue
        url = facts["sources"][key]
        basis = f"{facts['n_params_basis']}: {url}" if key == "n_params" else url
        out[key] = (value, f"published ({basis})")
    return out


def resolve_properties(
    models: list[str],
    user: pd.DataFrame | None = None,
    measured_n_params: Mapping[str, float] | None = None,
    catalogue: Catalogue | None = None,
) -> pd.DataFrame:
    """One row per model: each property and ``<property>_source`` (see the module docstring).

    ``catalogue`` None: no published facts (the user file, then measured counts only).

    A property nobody states stays missing (NaN / None) with source ``None``; the analyses
    leave such a model out of the comparisons that need the property, and say so.
    """
    by_user = {} if user is None else {r["model"]: r for r in user.to_dict("records")}
    rows = []
    for model in models:
        facts = _catalogue_facts(model, catalogue)
        u = by_user.get(model)
        rec: dict[str, Any] = {"model": model}
        for key in PROPERTIES:
            value, src = facts.get(key, (None, None))
            if u is not None and _given(u[key]):
                value, src = u[key], u["source"]
            measured = (measured_n_params or {}).get(model)
            if key == "n_params" and value is None and measured is not None and _given(measured):
                value, src = int(measured), "measured (loaded backbone)"
            rec[key] = value
            rec[f"{key}_source"] = src
        rows.append(rec)
    cols = ["model", *(c for k in PROPERTIES for c in (k, f"{k}_source"))]
    out = pd.DataFrame(rows, columns=cols)
    out["n_params"] = out["n_params"].astype(float)
    return out


def _given(v: Any) -> bool:
    """A user cell that states something (not None / NaN)."""
    return v is not None and not (isinstance(v, float) and np.isnan(v))


def unused_user_models(user: pd.DataFrame | None, models: list[str]) -> list[str]:
    """Models the user's file names that are not in the results (listed in the report)."""
    return [] if user is None else sorted(set(user["model"]) - set(models))
