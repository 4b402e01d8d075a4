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
    collections = ["../shared/data"] # folders of task folders (every subfolder is a task)

    [probe]
    shots = ["1", "10", "full"]
    seeds = [13, 17, 42, 123, 997]
    C = [0.01, 0.1, 1, 10, 100]
    probes = ["linear", "mlp"]
    backend = "auto"
    workers = 2                      # or scheduler = "tcp://host:8786"
    standardize = false

    [report]
    enabled = true
    model_info = "model_info.csv"
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from geneb.errors import PlanError, did_you_mean
from geneb.probe.schema import DEFAULT_C_SWEEP, DEFAULT_SEEDS, REGIMES
from geneb.vep.pipeline import VepPlan, parse_vep

TOP_KEYS = {"store", "out", "data_dir", "models", "tasks", "probe", "report", "extract", "vep"}
MODEL_KEYS = {
    "model",
    "name",
    "max_length",
    "pooling",
    "layer",
    "dtype",
    "device",
    "truncation",
    "batch_tokens",
    "trust_remote_code",
    "storage_dtype",
}
TASK_KEYS = {"names", "folders", "collections"}
PROBE_KEYS = {
    "shots",
    "seeds",
    "C",
    "probes",
    "backend",
    "workers",
    "scheduler",
    "standardize",
    "take_all",
}
REPORT_KEYS = {"enabled", "model_info", "regimes", "C"}
EXTRACT_KEYS = {"splits", "batch_tokens", "device", "overwrite"}


@dataclass(frozen=True)
class ModelPlan:
    model: str
    name: str | None = None
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ProbePlan:
    shots: tuple[str, ...] = REGIMES
    seeds: tuple[int, ...] = DEFAULT_SEEDS
    Cs: tuple[float, ...] = DEFAULT_C_SWEEP
    probes: tuple[str, ...] = ("linear",)
    backend: str = "auto"
    workers: int | None = None
    scheduler: str | None = None
    standardize: bool = False
    take_all: bool = False


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
    model_info: Path | None = None
    report_regimes: tuple[str, ...] | None = None
    report_Cs: tuple[float, ...] | None = None
    splits: tuple[str, ...] = ("train", "test")
    batch_tokens: int | None = None
    device: str = "auto"
    overwrite: bool = False
    vep: VepPlan | None = None  # variant-effect scoring ([vep], see geneb.vep.pipeline)

    @property
    def results_path(self) -> Path:
        return self.out / "results.parquet"

    @property
    def report_dir(self) -> Path:
        return self.out / "report"


def _check_keys(where: str, table: dict[str, Any], allowed: set[str], src: str) -> None:
    for key in table:
        if key not in allowed:
            close = did_you_mean(key, allowed)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise PlanError(
                f"{src}: unknown key {key!r} in {where}.{hint} "
                f"Allowed keys: {', '.join(sorted(allowed))}"
            )


def _expect(value: Any, typ: type | tuple[type, ...], what: str, src: str) -> Any:
    if not isinstance(value, typ) or (isinstance(value, bool) and typ in (int, float)):
        names = typ.__name__ if isinstance(typ, type) else " or ".join(t.__name__ for t in typ)
        raise PlanError(f"{src}: {what} must be {names}, got {value!r}")
    return value


def _list_of(value: Any, typ: type | tuple[type, ...], what: str, src: str) -> list[Any]:
    if not isinstance(value, list):
        value = [value]
    return [_expect(v, typ, f"each entry of {what}", src) for v in value]


def parse_plan(data: dict[str, Any], *, base: Path, src: str = "plan") -> Plan:
    """Validate a plan mapping (from TOML) and resolve relative paths against ``base``."""
    _check_keys("the plan", data, TOP_KEYS, src)
    for req in ("store", "out", "models", "tasks"):
        if req not in data:
            raise PlanError(f"{src}: missing required key {req!r}")

    def path(p: Any, what: str) -> Path:
        p = Path(_expect(p, str, what, src)).expanduser()
        return p if p.is_absolute() else (base / p).resolve()

    models_raw = data["models"]
    if not isinstance(models_raw, list) or not models_raw:
        raise PlanError(f"{src}: 'models' must be a non-empty array of tables ([[models]])")
    models = []
    for i, m in enumerate(models_raw):
        where = f"models[{i}]"
        if isinstance(m, str):
            m = {"model": m}
        _expect(m, dict, where, src)
        _check_keys(where, m, MODEL_KEYS, src)
        if "model" not in m:
            raise PlanError(f"{src}: {where} needs a 'model' (adapter spec, folder or hub id)")
        spec = _expect(m["model"], str, f"{where}.model", src)
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

    tasks_raw = _expect(data["tasks"], dict, "tasks", src)
    _check_keys("[tasks]", tasks_raw, TASK_KEYS, src)
    tasks: list[str] = list(_list_of(tasks_raw.get("names", []), str, "tasks.names", src))
    for f in _list_of(tasks_raw.get("folders", []), str, "tasks.folders", src):
        p = path(f, "tasks.folders")
        if not p.is_dir():
            raise PlanError(f"{src}: task folder {str(p)!r} does not exist")
        tasks.append(str(p))
    for c in _list_of(tasks_raw.get("collections", []), str, "tasks.collections", src):
        p = path(c, "tasks.collections")
        if not p.is_dir():
            raise PlanError(f"{src}: task collection {str(p)!r} does not exist")
        subs = sorted(d for d in p.iterdir() if d.is_dir() and not d.name.startswith("."))
        if not subs:
            raise PlanError(f"{src}: task collection {str(p)!r} holds no task folders")
        tasks.extend(str(d) for d in subs)
    if not tasks:
        raise PlanError(f"{src}: [tasks] names no task (use names, folders or collections)")

    pr = _expect(data.get("probe", {}), dict, "probe", src)
    _check_keys("[probe]", pr, PROBE_KEYS, src)
    raw_shots = _list_of(pr.get("shots", list(REGIMES)), (str, int), "probe.shots", src)
    shots = tuple(str(s) for s in raw_shots)
    for s in shots:
        if s != "full" and not (s.isdigit() and int(s) > 0):
            raise PlanError(f"{src}: probe.shots entry {s!r}: expected a positive k or 'full'")
    probes = tuple(_list_of(pr.get("probes", ["linear"]), str, "probe.probes", src))
    for p in probes:
        if p not in ("linear", "mlp"):
            raise PlanError(f"{src}: probe.probes entry {p!r}: expected 'linear' or 'mlp'")
    workers = pr.get("workers")
    probe = ProbePlan(
        shots=shots,
        seeds=tuple(_list_of(pr.get("seeds", list(DEFAULT_SEEDS)), int, "probe.seeds", src)),
        Cs=tuple(
            float(c) for c in _list_of(pr.get("C", list(DEFAULT_C_SWEEP)), (int, float), "C", src)
        ),
        probes=probes,
        backend=_expect(pr.get("backend", "auto"), str, "probe.backend", src),
        workers=None if workers is None else _expect(workers, int, "probe.workers", src),
        scheduler=pr.get("scheduler") or None,
        standardize=_expect(pr.get("standardize", False), bool, "probe.standardize", src),
        take_all=_expect(pr.get("take_all", False), bool, "probe.take_all", src),
    )

    rep = _expect(data.get("report", {}), dict, "report", src)
    _check_keys("[report]", rep, REPORT_KEYS, src)
    ex = _expect(data.get("extract", {}), dict, "extract", src)
    _check_keys("[extract]", ex, EXTRACT_KEYS, src)
    model_info = path(rep["model_info"], "report.model_info") if "model_info" in rep else None
    if model_info is not None and not model_info.is_file():
        raise PlanError(f"{src}: report.model_info file {str(model_info)!r} does not exist")
    return Plan(
        path=None,
        store=path(data["store"], "store"),
        out=path(data["out"], "out"),
        data_dir=path(data["data_dir"], "data_dir") if "data_dir" in data else None,
        models=tuple(models),
        tasks=tuple(tasks),
        probe=probe,
        report=_expect(rep.get("enabled", True), bool, "report.enabled", src),
        model_info=model_info,
        report_regimes=tuple(str(r) for r in rep["regimes"]) if "regimes" in rep else None,
        report_Cs=tuple(float(c) for c in rep["C"]) if "C" in rep else None,
        splits=tuple(_list_of(ex.get("splits", ["train", "test"]), str, "extract.splits", src)),
        batch_tokens=ex.get("batch_tokens"),
        device=_expect(ex.get("device", "auto"), str, "extract.device", src),
        overwrite=_expect(ex.get("overwrite", False), bool, "extract.overwrite", src),
        vep=parse_vep(data["vep"], path, src) if "vep" in data else None,
    )


def load_plan(path: str | Path) -> Plan:
    """Read and validate ``PLAN.toml``; nothing is computed here."""
    p = Path(path)
    if not p.is_file():
        raise PlanError(f"plan file {str(p)!r} does not exist")
    try:
        data = tomllib.loads(p.read_text())
    except tomllib.TOMLDecodeError as e:
        raise PlanError(f"{p}: not valid TOML: {e}") from e
    plan = parse_plan(data, base=p.resolve().parent, src=str(p))
    return Plan(**{**plan.__dict__, "path": p.resolve()})
