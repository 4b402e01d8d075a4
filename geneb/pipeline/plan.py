"""Run plans (``PLAN.toml``): parsed and validated completely before any work starts.

A plan names the store, the models, the tasks, the probe grid, the backend/scheduler and the
output folder. Every unknown key is an error naming it (with a did-you-mean), so a typo never
silently falls back to a default after an hour of extraction.

Example::

    store = "work/store.zarr"        # relative paths are relative to the plan file
    out = "work/out"                 # results.parquet and report/ go here
    data_dir = "../shared/data"      # where task names are looked up (optional)

    [[models]]
    model = "kmer-5"

    [[models]]
    model = "models/tiny-bert-dnabert2-bpe"   # a transformers folder or hub id
    name = "dnabert2-tiny"                    # store key (optional)
    max_length = 512
    pooling = "mean"

    [tasks]
    names = ["gue_mouse_0"]          # built-in names or names under data_dir
    folders = ["my_tasks/enh"]       # task folders
    collections = ["../shared/data"] # folders of task folders or GENEB task files (<id>.csv)

    [probe]
    shots = ["1", "10", "full"]
    seeds = [13, 17, 42, 123, 997]
    C = [0.01, 0.1, 1, 10, 100]
    probes = ["linear", "mlp"]
    backend = "auto"
    workers = 2                      # or scheduler = "tcp://host:8786"
    standardize = false
    protocol = "converged"           # or "paper": the paper's literal LogisticRegression

    [report]
    enabled = true
    model_properties = "model_properties.csv"   # controlled comparisons (docs/analysis.md)
    task_organisms = "task_organisms.csv"       # in-domain scale comparison
    compare = "geneb"                # your models among GENEB's published 41 (protocol "paper")
"""

from __future__ import annotations

import functools
import math
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from geneb.constraints import Constraint, ListOf, ParamError, PathParam
from geneb.errors import PlanError
from geneb.params import PLAN_SECTIONS, check_table, section_label
from geneb.protocol import DEFAULT_ALPHA_SWEEP, DEFAULT_C, DEFAULT_SEEDS, REGIMES
from geneb.vep.pipeline import VepPlan, parse_vep
from geneb.vocabulary import DEFAULT_DEVICE

#: Allowed top-level keys, derived from the one declaration in :data:`PLAN_SECTIONS`.
TOP_KEYS = {*PLAN_SECTIONS[""], "models", "tasks", "probe", "report", "extract", "vep"}


@dataclass(frozen=True)
class ModelPlan:
    model: str
    name: str | None = None
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ProbePlan:
    shots: tuple[str, ...] = REGIMES
    seeds: tuple[int, ...] = DEFAULT_SEEDS
    Cs: tuple[float, ...] = DEFAULT_C  # as run_probes: C = 1 unless [probe] C is given
    probes: tuple[str, ...] = ("linear",)
    #: ridge sweep of regression tasks (``geneb.probe.ridge_probe``)
    alphas: tuple[float, ...] = DEFAULT_ALPHA_SWEEP
    backend: str = "auto"
    workers: int | None = None
    scheduler: str | None = None
    standardize: bool = False
    take_all: bool = False
    protocol: str = "converged"  # or "paper" (linear probe only; see geneb.results.schema)


@dataclass(frozen=True)
class Plan:
    path: Path | None
    store: Path
    out: Path
    data_dir: Path | None
    models: tuple[ModelPlan, ...]
    tasks: tuple[str, ...]  # names or folder paths, as resolve_task takes them
    probe: ProbePlan
    report: bool = True
    model_properties: Path | None = None
    task_organisms: Path | None = None
    report_shots: tuple[str, ...] | None = None
    report_Cs: tuple[float, ...] | None = None
    report_compare: str | None = None  # [report] compare = "geneb": among GENEB's published
    splits: tuple[str, ...] = ("train", "test")
    batch_tokens: int | None = None
    device: str = DEFAULT_DEVICE
    overwrite: bool = False
    extract_workers: int | None = None  # [extract] workers: a local Dask cluster
    extract_scheduler: str | None = None  # [extract] scheduler: a running one
    vep: VepPlan | None = None  # variant-effect scoring ([vep], see geneb.vep.pipeline)

    @property
    def results_path(self) -> Path:
        return self.out / "results.parquet"

    @property
    def report_dir(self) -> Path:
        return self.out / "report"


def _table(data: dict[str, Any], section: str, src: str) -> dict[str, Any]:
    """The checked keys of ``[section]`` (absent: empty)."""
    raw = data.get(section, {})
    if not isinstance(raw, dict):
        raise PlanError(f"{src}: {section!r} must be a table ([{section}]), got {raw!r}")
    try:
        return check_table(raw, PLAN_SECTIONS[section], section_label(section))
    except ParamError as e:
        raise PlanError(f"{src}: {e}") from None


def _regime(v: Any) -> str:
    return str(v)


def parse_plan(data: dict[str, Any], *, base: Path, src: str = "plan") -> Plan:
    """Validate a plan mapping (from TOML) and resolve relative paths against ``base``.

    Every key is checked against :data:`geneb.params.PLAN_SECTIONS` (type and range, the
    section and key named), and values that depend on each other are checked together
    (report C and regimes among the probed ones), so nothing runs on a bad plan.
    """
    top_spec = PLAN_SECTIONS[""]
    top = _top(data, src)
    path = functools.partial(_path, base, src)
    store = path(top["store"], "store", spec=_path_param(top_spec["store"]))
    out = path(top["out"], "out", spec=_path_param(top_spec["out"]))
    data_dir = (
        path(top["data_dir"], "data_dir", spec=_path_param(top_spec["data_dir"]))
        if "data_dir" in top
        else None
    )
    models = _models(data["models"], base, src)
    tasks = _tasks(data, path, src)
    probe = _probe(_table(data, "probe", src))
    rep = _table(data, "report", src)
    ex = _table(data, "extract", src)
    return Plan(
        path=None,
        store=store,
        out=out,
        data_dir=data_dir,
        models=models,
        tasks=tasks,
        probe=probe,
        report=rep.get("enabled", True),
        **_report_fields(rep, path, src, probe),
        splits=tuple(ex.get("splits", ["train", "test"])),
        batch_tokens=ex.get("batch_tokens"),
        device=ex.get("device", DEFAULT_DEVICE),
        overwrite=ex.get("overwrite", False),
        extract_workers=_extract_workers(ex, src),
        extract_scheduler=ex.get("scheduler"),
        vep=parse_vep(_table(data, "vep", src), path, src) if "vep" in data else None,
    )


def _top(data: dict[str, Any], src: str) -> dict[str, Any]:
    """The checked top-level keys; an unknown key or a missing required one is an error."""
    top_spec = PLAN_SECTIONS[""]
    unknown = {k: v for k, v in data.items() if k not in TOP_KEYS}
    try:
        check_table(unknown, top_spec, "")  # raises for the first unknown key
        top = check_table({k: v for k, v in data.items() if k in top_spec}, top_spec, "")
    except ParamError as e:
        raise PlanError(f"{src}: {e}") from None
    for req in ("store", "out", "models", "tasks"):
        if req not in data:
            raise PlanError(f"{src}: missing required key {req!r}")
    return top


def _path_param(declared: Constraint) -> PathParam:
    """The declaration of a plan path key (a PathParam, or a ListOf PathParam items)."""
    item = declared.item if isinstance(declared, ListOf) else declared
    if not isinstance(item, PathParam):
        raise TypeError(f"expected a path declaration in PLAN_SECTIONS, got {declared!r}")
    return item


def _path(
    base: Path, src: str, p: str, key: str, label: str = "", spec: PathParam | None = None
) -> Path:
    """``p`` resolved against the plan's folder; checked to exist when ``spec`` says so."""
    q = Path(p).expanduser()
    q = q if q.is_absolute() else (base / q).resolve()
    if spec is not None:
        try:
            spec.check_exists(q, f"{label + ' ' if label else ''}{key}")
        except ParamError as e:
            raise PlanError(f"{src}: {e}") from None
    return q


def _models(models_raw: Any, base: Path, src: str) -> tuple[ModelPlan, ...]:
    """``[[models]]``: tables or bare names; local folders are relative to the plan file."""
    if not isinstance(models_raw, list) or not models_raw:
        raise PlanError(f"{src}: 'models' must be a non-empty array of tables ([[models]])")
    models = []
    for i, m in enumerate(models_raw):
        label = section_label("models", i)
        if isinstance(m, str):
            m = {"model": m}
        if not isinstance(m, dict):
            raise PlanError(f"{src}: {label}: expected a table or a model name, got {m!r}")
        try:
            m = check_table(m, PLAN_SECTIONS["models"], label)
        except ParamError as e:
            raise PlanError(f"{src}: {e}") from None
        if "model" not in m:
            raise PlanError(f"{src}: {label} needs a 'model' (adapter spec, folder or hub id)")
        spec = m["model"]
        # local folders are relative to the plan file
        cand = Path(spec.removeprefix("random:")).expanduser()
        if not cand.is_absolute() and (base / cand).exists():
            prefix = "random:" if spec.startswith("random:") else ""
            spec = prefix + str((base / cand).resolve())
        opts = {k: v for k, v in m.items() if k not in ("model", "name")}
        models.append(ModelPlan(spec, m.get("name"), opts))
    names = [mp.name or mp.model for mp in models]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise PlanError(f"{src}: models listed twice: {sorted(dup)} (give each a distinct name)")
    return tuple(models)


def _tasks(data: dict[str, Any], path: Callable[..., Path], src: str) -> tuple[str, ...]:
    """``[tasks]``: names, folders and collections (every subfolder of one is a task, and
    every GENEB task file in it, :mod:`geneb.tasks.geneb_csv`)."""
    from geneb.tasks.geneb_csv import collection_files

    if not isinstance(data["tasks"], dict):
        raise PlanError(f"{src}: 'tasks' must be a table ([tasks]), got {data['tasks']!r}")
    tk = _table(data, "tasks", src)
    tspec = PLAN_SECTIONS["tasks"]
    tasks: list[str] = list(tk.get("names", []))
    for j, f in enumerate(tk.get("folders", [])):
        tasks.append(str(path(f, f"folders[{j}]", "[tasks]", _path_param(tspec["folders"]))))
    for j, c in enumerate(tk.get("collections", [])):
        p = path(c, f"collections[{j}]", "[tasks]", _path_param(tspec["collections"]))
        subs = sorted(d for d in p.iterdir() if d.is_dir() and not d.name.startswith("."))
        subs += list(collection_files(p).values())  # GENEB task files (<id>.csv)
        if not subs:
            raise PlanError(
                f"{src}: [tasks] collections[{j}]: task collection {str(p)!r} holds no task "
                f"folders or GENEB task files"
            )
        tasks.extend(str(d) for d in subs)
    if not tasks:
        raise PlanError(f"{src}: [tasks] names no task (use names, folders or collections)")
    return tuple(tasks)


def _probe(pr: dict[str, Any]) -> ProbePlan:
    """``[probe]`` (keys already checked); repeated values are kept once, in order."""
    return ProbePlan(
        shots=tuple(dict.fromkeys(_regime(s) for s in pr.get("shots", list(REGIMES)))),
        seeds=tuple(dict.fromkeys(pr.get("seeds", list(DEFAULT_SEEDS)))),
        Cs=tuple(dict.fromkeys(float(c) for c in pr.get("C", list(DEFAULT_C)))),
        probes=tuple(dict.fromkeys(pr.get("probes", ["linear"]))),
        alphas=tuple(dict.fromkeys(float(a) for a in pr.get("alpha", list(DEFAULT_ALPHA_SWEEP)))),
        backend=pr.get("backend", "auto"),
        workers=pr.get("workers"),
        scheduler=pr.get("scheduler"),
        standardize=pr.get("standardize", False),
        take_all=pr.get("take_all", False),
        protocol=pr.get("protocol", "converged"),
    )


def _report_fields(
    rep: dict[str, Any], path: Callable[..., Path], src: str, probe: ProbePlan
) -> dict[str, Any]:
    """``[report]``'s files, regimes and C; the regimes and C must be among the probed ones."""
    shots, probes = probe.shots, probe.probes
    model_properties, task_organisms = (
        path(rep[k], k, "[report]", PLAN_SECTIONS["report"][k]) if k in rep else None
        for k in ("model_properties", "task_organisms")
    )
    report_shots = (tuple(dict.fromkeys(_regime(r) for r in rep["shots"]))
                      if "shots" in rep else None)
    report_Cs = tuple(float(c) for c in rep["C"]) if "C" in rep else None  # noqa: N806
    for j, r in enumerate(report_shots or ()):
        if r not in shots:
            raise PlanError(
                f"{src}: [report] shots[{j}]: expected one of the probed [probe] shots "
                f"({', '.join(shots)}), got {r!r}"
            )
    for j, c in enumerate(report_Cs or ()):
        if "linear" not in probes or not any(math.isclose(c, pc) for pc in probe.Cs):
            raise PlanError(
                f"{src}: [report] C[{j}]: expected one of the probed [probe] C values "
                f"({', '.join(f'{x:g}' for x in probe.Cs)}), got {c:g}"
            )
    if "compare" in rep and probe.protocol != "paper":
        raise PlanError(
            f"{src}: [report] compare: GENEB's published rows are the paper protocol, and only "
            f"paper-protocol rows are compared with them; expected [probe] protocol = \"paper\","
            f" got {probe.protocol!r}"
        )
    return {
        "model_properties": model_properties,
        "task_organisms": task_organisms,
        "report_shots": report_shots,
        "report_Cs": report_Cs,
        "report_compare": rep.get("compare"),
    }


def _extract_workers(ex: dict[str, Any], src: str) -> int | None:
    """``[extract] workers`` (type and range already checked against geneb.params)."""
    if "workers" in ex and "scheduler" in ex:
        raise PlanError(f"{src}: [extract] workers, scheduler: give one of them, not both")
    return ex.get("workers")


def load_plan(path: str | Path, *, workers: int | None = None,
              scheduler: str | None = None) -> Plan:
    """Read and validate ``PLAN.toml``; nothing is computed here.

    Parameters
    ----------
    path : str or Path
        The plan file (TOML).
    workers : int, optional
        Run extraction and probing on this many local Dask workers, whatever the plan's
        ``[extract]`` / ``[probe]`` ``workers`` / ``scheduler`` say.
    scheduler : str, optional
        Run them on the Dask cluster at this address instead (not with ``workers``).

    Returns
    -------
    Plan
        The checked plan, its relative paths resolved against the plan's folder.
    """
    if workers is not None and scheduler is not None:
        raise PlanError(f"give workers or scheduler, not both (got workers={workers} and "
                        f"scheduler={scheduler!r})")
    p = Path(path)
    if not p.is_file():
        raise PlanError(f"plan file {str(p)!r} does not exist")
    try:
        data = tomllib.loads(p.read_text())
    except tomllib.TOMLDecodeError as e:
        raise PlanError(f"{p}: not valid TOML: {e}") from e
    plan = parse_plan(data, base=p.resolve().parent, src=str(p))
    plan = replace(plan, path=p.resolve())
    if workers is not None or scheduler is not None:
        plan = replace(plan, extract_workers=workers, extract_scheduler=scheduler,
                       probe=replace(plan.probe, workers=workers, scheduler=scheduler))
    return plan
