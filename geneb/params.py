"""Parameter constraints, declared as data and checked once, for plans and CLI options alike.

Every user-facing value (a plan key, a CLI option, a library argument) is checked against a
:class:`Constraint` *before* any work starts, and a failure names where the value came from:
``plan.toml: [probe] seeds[0]: expected a non-negative int, got -3`` or
``--seeds: expected a non-negative int, got -3``. Types are strict, as a user of a typed file
expects: an int is not a bool, a TOML string ``"512"`` is not an int, ``"false"`` is not a bool.

The constraint classes and the named parameters live in :mod:`geneb.constraints`; library
functions declare theirs beside themselves (``validate_params``: ``run_probes``,
``build_report``, ``extract``, ...). The plan's sections, :data:`PLAN_SECTIONS` (section ->
key -> constraint), are taken from those declarations; :mod:`geneb.pipeline.plan` derives its
allowed keys from them. ``geneb probe``, ``report`` and ``extract`` hand their options to the
library, which checks them (errors are translated to option names by the CLI); the other
commands validate with the same declarations (``geneb.constraints.validate``). This is the
interface layer: the library never imports it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from geneb.constraints import (
    BOOL,
    SCHEDULER,
    WORKERS,
    Constraint,
    Interval,
    ListOf,
    ParamError,
    PathParam,
    String,
)
from geneb.errors import did_you_mean

__all__ = ["PLAN_SECTIONS", "check_table", "section_label"]


#: (built on first use, see ``__getattr__``)
PLAN_SECTIONS: dict[str, dict[str, Constraint]]


def _plan_sections() -> dict[str, dict[str, Constraint]]:
    """The run plan: section -> key -> constraint ("" is the top level, "models" each
    [[models]] table). The [probe], [report], [extract] and [[models]] entries are the
    declarations of the functions a plan runs (``run_probes``, ``build_report``, ``extract``,
    ``score_variants``), under the plan's key names; only plan-only keys are spelled here."""
    from geneb.analysis.report.build import REPORT_PARAMS
    from geneb.extract.runner import EXTRACT_PARAMS as EXT
    from geneb.probe.engine import PROBE_PARAMS as PRB
    from geneb.vep.probe_run import VEP_PROBE_PARAMS
    from geneb.vep.runner import LIMITS, SCORE_PARAMS

    plan_key = {"Cs": "C", "alphas": "alpha"}  # run_probes parameter -> [probe] key
    model_keys = ("max_length", "pooling", "layer", "layers", "dtype", "device", "truncation",
                  "strands", "batch_tokens", "storage_dtype", "weight_seed", "block_rows", "recipe")
    return {
        "": {
            "store": PathParam("not_file"),
            "out": PathParam("not_file"),
            "data_dir": PathParam("dir"),
        },
        "models": {"model": String(), "name": String(), "trust_remote_code": BOOL,
                   **{k: EXT[k] for k in model_keys}},
        "tasks": {
            "names": ListOf(String(), min_len=0),
            "folders": ListOf(PathParam("dir"), min_len=0),
            "collections": ListOf(PathParam("dir"), min_len=0),
        },
        "probe": {  # probes: several run_probes(probe=...) in turn
            **{plan_key.get(k, k): c for k, c in PRB.items() if k != "probe"},
            "probes": ListOf(PRB["probe"]),
        },
        "report": {
            "enabled": BOOL,
            "model_properties": PathParam("file"),  # CSV/TOML, geneb.analysis.properties
            "task_organisms": PathParam("file"),  # CSV task,organism, geneb.analysis.domain
            "shots": REPORT_PARAMS["shots"],  # as [probe] shots and `--shots`
            "C": REPORT_PARAMS["Cs"],
            "compare": REPORT_PARAMS["compare"],  # "geneb": the user's models among GENEB's
        },
        "extract": {
            **{k: EXT[k] for k in ("splits", "batch_tokens", "device", "overwrite")},
            "workers": WORKERS,  # extract_on_cluster's
            "scheduler": SCHEDULER,
        },
        "vep": {  # variant-effect scoring in a plan (geneb.vep.pipeline checks the folders)
            "tasks": ListOf(PathParam("dir")),
            "scorers": SCORE_PARAMS["scorers"],
            "window": Interval(int, 2, None),
            "limit": LIMITS["limit"],
            "probe": VEP_PROBE_PARAMS["features"],  # supervised feature sets; absent: none
            "folds": VEP_PROBE_PARAMS["folds"],
        },
    }


def __getattr__(name: str) -> Any:
    """:data:`PLAN_SECTIONS`, built on first use: the declarations live beside library
    functions whose modules import numpy and pandas, which ``geneb --help`` must not load."""
    if name == "PLAN_SECTIONS":
        sections = _plan_sections()
        globals()["PLAN_SECTIONS"] = sections
        return sections
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
