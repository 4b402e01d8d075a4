"""Parameter constraints, declared as data and checked once, for plans and CLI options alike.

Every user-facing value (a plan key, a CLI option, a library argument) is checked against a
:class:`Constraint` *before* any work starts, and a failure names where the value came from:
``plan.toml: [probe] seeds[0]: expected a non-negative int, got -3`` or
``--seeds: expected a non-negative int, got -3``. Types are strict, as a user of a typed file
expects: an int is not a bool, a TOML string ``"512"`` is not an int, ``"false"`` is not a bool.

The constraint classes live in :mod:`geneb.constraints`. The plan's sections are
:data:`PLAN_SECTIONS` (section -> key -> constraint). Adding a plan key is one line there;
:mod:`geneb.pipeline.plan` derives its allowed keys from it. CLI commands check their options
with :func:`check_option` / :func:`parse_option_list` against the same named constraints
(:data:`SEED`, :data:`C_VALUE`, :data:`BATCH_TOKENS`, ...).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from geneb.constraints import (  # the named parameters: declared once, in constraints
    ALPHA,
    BACKEND,
    BATCH_TOKENS,
    BOOL,
    C_VALUE,
    COMPUTE_DTYPE,
    DEVICE,
    LAYER,
    LAYERS,
    MAX_LENGTH,
    N_BOOT,
    POOLING,
    POSITIVE_INT,
    PROBE,
    PROTOCOL,
    RIDGE_ALPHA,
    SCHEDULER,
    SEED,
    SHOT,
    SPLIT,
    STORAGE_DTYPE,
    STRANDS,
    TIER_EDGE,
    TRUNCATION,
    WORKERS,
    Boolean,
    Constraint,
    Interval,
    ListOf,
    ParamError,
    PathParam,
    Pattern,
    Regime,
    String,
    StrOptions,
)
from geneb.errors import did_you_mean
from geneb.vep.capabilities import SCORERS as VEP_SCORERS

__all__ = [
    "ALPHA", "BACKEND", "BATCH_TOKENS", "BOOL", "C_VALUE", "COMPUTE_DTYPE", "DEVICE", "LAYER",
    "LAYERS", "MAX_LENGTH", "N_BOOT", "POOLING", "POSITIVE_INT", "PROBE", "PROTOCOL",
    "RIDGE_ALPHA", "SCHEDULER", "SEED", "SHOT", "SPLIT", "STORAGE_DTYPE", "STRANDS", "TIER_EDGE",
    "TRUNCATION", "WORKERS", "Boolean", "Constraint", "Interval", "ListOf",
    "ParamError", "PathParam", "Pattern", "Regime", "StrOptions", "String", "check_option",
    "check_table", "parse_option_list", "section_label",
]  # fmt: skip


#: The run plan: section -> key -> constraint. "" is the top level, "models" each [[models]]
#: table. ONE line here adds a key (and its check) to plans.
PLAN_SECTIONS: dict[str, dict[str, Constraint]] = {
    "": {
        "store": PathParam("not_file"),
        "out": PathParam("not_file"),
        "data_dir": PathParam("dir"),
    },
    "models": {
        "model": String(),
        "name": String(),
        "max_length": MAX_LENGTH,
        "pooling": POOLING,
        "layer": LAYER,
        "layers": LAYERS,
        "dtype": COMPUTE_DTYPE,
        "device": DEVICE,
        "truncation": TRUNCATION,
        "strands": STRANDS,
        "batch_tokens": BATCH_TOKENS,
        "trust_remote_code": BOOL,
        "storage_dtype": STORAGE_DTYPE,
        "seed": SEED,
        "block_rows": POSITIVE_INT,
    },
    "tasks": {
        "names": ListOf(String(), min_len=0),
        "folders": ListOf(PathParam("dir"), min_len=0),
        "collections": ListOf(PathParam("dir"), min_len=0),
    },
    "probe": {
        "shots": ListOf(SHOT),
        "seeds": ListOf(SEED),
        "C": ListOf(C_VALUE),
        "alpha": ListOf(RIDGE_ALPHA),
        "probes": ListOf(PROBE),
        "backend": BACKEND,
        "workers": WORKERS,
        "scheduler": SCHEDULER,
        "standardize": BOOL,
        "take_all": BOOL,
        "protocol": PROTOCOL,
    },
    "report": {
        "enabled": BOOL,
        "model_info": PathParam("file"),
        "model_properties": PathParam("file"),  # CSV/TOML, geneb.analysis.properties
        "task_organisms": PathParam("file"),  # CSV task,organism, geneb.analysis.domain
        "shots": ListOf(SHOT),  # as [probe] shots and `--shots`
        "regimes": ListOf(SHOT),  # the old name of shots, still accepted
        "C": ListOf(C_VALUE),
    },
    "extract": {
        "splits": ListOf(SPLIT),
        "batch_tokens": BATCH_TOKENS,
        "device": DEVICE,
        "overwrite": BOOL,
        "workers": WORKERS,
        "scheduler": SCHEDULER,
    },
    "vep": {  # variant-effect scoring in a plan (geneb.vep.pipeline checks the folders)
        "tasks": ListOf(PathParam("dir")),
        "scorers": ListOf(StrOptions(VEP_SCORERS)),
        "window": Interval(int, 2, None),
        "limit": POSITIVE_INT,
    },
}


def section_label(section: str, index: int | None = None) -> str:
    """How a plan section is named in messages: ``[probe]``, ``[[models]] #2``, or ``""``."""
    if section == "":
        return ""
    if index is not None:
        return f"[[{section}]] #{index + 1}"
    return f"[{section}]"


def check_table(
    table: Mapping[str, Any],
    spec: Mapping[str, Constraint],
    label: str,
) -> dict[str, Any]:
    """Check every key of one plan table: unknown keys (with a did-you-mean), then values.

    Returns the checked values (lists for :class:`ListOf`). ``label`` names the table in
    messages (``"[probe]"``); an error reads ``"[probe] seeds[0]: expected ..., got ..."``.
    """
    prefix = f"{label} " if label else ""
    out: dict[str, Any] = {}
    for key, value in table.items():
        if key not in spec:
            close = did_you_mean(str(key), spec)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            where = label or "the plan's top level"
            raise ParamError(
                f"unknown key {key!r} in {where}.{hint} Allowed keys: {', '.join(sorted(spec))}"
            )
        out[key] = spec[key].check(value, f"{prefix}{key}")
    return out


def check_option(option: str, value: Any, constraint: Constraint) -> Any:
    """Check one CLI option value (None = not given) and name the option on failure."""
    if value is None:
        return None
    return constraint.check(value, option)


def parse_option_list(
    option: str,
    values: str | Iterable[str] | None,
    constraint: Constraint,
    *,
    convert: Callable[[str], Any] | None = None,
) -> list[Any]:
    """Split comma lists (and repeated options), convert each item from text, check it.

    ``--seeds 1,-3`` fails as ``--seeds: expected a non-negative int, got -3``.
    """
    if values is None:
        return []
    items: Sequence[str] = [values] if isinstance(values, str) else list(values)
    conv = convert or constraint.from_text
    out = []
    for v in items:
        for part in str(v).split(","):
            text = part.strip()
            if not text:
                continue
            value = conv(text)
            if not constraint.is_satisfied_by(value):
                raise ParamError(
                    f"{option}: expected {constraint.description}, got {text}"
                    f"{constraint.hint(value)}"
                )
            out.append(value)
    return out
