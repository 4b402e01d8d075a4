"""Execute a plan: extract -> probe -> report, each step skipping what is already done.

Everything that can be checked without computing is checked first (plan keys, model specs,
task names and files), so a typo fails in a second rather than after an hour of extraction.
Each step is itself resumable (store entries resume, the results table keeps finished cells),
so rerunning an interrupted plan continues where it stopped.
"""

from __future__ import annotations

import contextlib
import itertools
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from geneb.errors import GenebError, PlanError
from geneb.pipeline.plan import ModelPlan, Plan
from geneb.tasks.spec import Task

if TYPE_CHECKING:
    from distributed import Client


def model_key(mp: ModelPlan) -> str:
    """The store key a model entry will be written under, without loading the model.

    ``name`` when given, else what the registry says (``geneb.models.registry``).
    """
    if mp.name:
        return mp.name
    from geneb.models.registry import get_model_meta

    return get_model_meta(mp.model).key


def model_keys(mp: ModelPlan) -> list[str]:
    """Every store key a model entry writes: one, or one per hidden layer of ``layers``
    (``geneb.store.keys.layer_key``)."""
    from geneb.store.keys import layer_key

    base = model_key(mp)
    layers = mp.options.get("layers")
    return [base] if layers is None else [layer_key(base, layer) for layer in layers]


def check_model(mp: ModelPlan, src: str) -> None:
    """Reject a model spec or option that cannot work, before any model is loaded."""
    from geneb.extract.geneb_recipe import check_recipe
    from geneb.models.options import OPTION_DEFAULTS
    from geneb.models.registry import check_spec

    # adapter options only: batch_tokens and storage_dtype are run settings; the plan's
    # weight_seed is the random: models' option seed (as extract hands it on)
    named = {"seed" if k == "weight_seed" else k: v for k, v in mp.options.items()}
    opts = {k: v for k, v in named.items() if k in OPTION_DEFAULTS}
    try:
        check_spec(mp.model, **opts)
        check_recipe([mp.model], opts, mp.options.get("recipe"))  # GENEB's recipe applies
    except GenebError as e:
        raise PlanError(f"{src}: models entry {mp.model!r}: {e}") from e


def resolve_plan_tasks(plan: Plan) -> list[Task]:
    from geneb.tasks.folders import resolve_task

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
    for task in tasks:
        for s in plan.splits:
            if s not in task.splits:
                raise PlanError(f"{src}: task {task.spec.name!r} has no {s!r} split")
    return tasks


def validate(plan: Plan) -> list[Task]:
    """All checks that need no computation; returns the loaded tasks.

    Types and ranges of every plan value were checked when the plan was parsed
    (:data:`geneb.params.PLAN_SECTIONS`); here come the checks that read files: model specs,
    tasks and their splits, the model-properties file, and the report folder (it must be one the
    report may write into), so that nothing fails after extraction has started.
    """
    src = str(plan.path or "plan")
    for mp in plan.models:
        check_model(mp, src)
    keys = [k for mp in plan.models for k in model_keys(mp)]
    dup = sorted({k for k in keys if keys.count(k) > 1})
    if dup:
        raise PlanError(f"{src}: two models would share the store key(s) {dup}: set 'name'")
    from geneb.probe.each import check_probes
    from geneb.results.parts import check_writable_table

    try:
        check_probes(plan.probe.probes, plan.probe.backend, plan.probe.protocol)
    except GenebError as e:
        raise PlanError(f"{src}: [probe] {e}") from e
    try:
        check_writable_table(plan.results_path)
    except GenebError as e:
        raise PlanError(f"{src}: out: {e}") from e
    if plan.report:
        from geneb.analysis.domain import read_task_organisms
        from geneb.analysis.properties import read_model_properties
        from geneb.analysis.report.output import check_output

        try:
            check_output(plan.report_dir)
            if plan.model_properties is not None:
                read_model_properties(plan.model_properties)
            if plan.task_organisms is not None:
                read_task_organisms(plan.task_organisms)
        except GenebError as e:
            raise PlanError(f"{src}: [report] {e}") from e
    return resolve_plan_tasks(plan)


@dataclass
class DryRun:
    """What a run would do: per store entry and per probe grid."""

    entries: list[tuple[str, str, str, str]] = field(default_factory=list)  # model,task,split,st
    cells_total: int = 0
    cells_present: int = 0
    report: str = ""
    vep: list[str] = field(default_factory=list)  # one line per (model, variant task)

    def lines(self) -> list[str]:
        out = []
        for model, task, split, status in self.entries:
            todo = {"complete": "skip (complete)", "incomplete": "resume", "missing": "extract"}
            out.append(f"extract {model} / {task} / {split}: {todo.get(status, status)}")
        out.append(
            f"probe: {self.cells_total} cells requested, {self.cells_present} already in the "
            f"results table, {self.cells_total - self.cells_present} to compute"
        )
        out.extend(self.vep)
        out.append(self.report)
        return out


def dry_run(plan: Plan) -> DryRun:
    """Validate and describe the work without computing or writing anything."""
    tasks = validate(plan)
    from geneb.store import FeatureStore, StoreKey

    d = DryRun()
    fs = FeatureStore(plan.store, "r") if Path(plan.store).exists() else None
    for mp in plan.models:
        for key_m in model_keys(mp):
            for t in tasks:
                for s in plan.splits:
                    st = fs.status(StoreKey(key_m, t.spec.name, s)) if fs else "missing"
                    d.entries.append((key_m, t.spec.name, s, st))
    all_keys = [k for m in plan.models for k in model_keys(m)]
    planned = _planned_cells(plan, all_keys, tasks)
    d.cells_total = len(planned)
    if plan.results_path.exists():  # a results folder (or a single-file table of geneb <= 0.1)
        d.cells_present = _cells_present(plan, planned)
    d.report = f"report: {plan.report_dir / 'index.html'}" if plan.report else "report: disabled"
    if plan.vep is not None:  # validated as a run validates them, nothing loaded or written
        from geneb.vep.pipeline import describe_vep, validate_vep

        d.vep = describe_vep(plan, validate_vep(plan.vep), model_key)
    return d


def _planned_cells(plan: Plan, models: list[str], tasks: list[Task]) -> set[tuple[Any, ...]]:
    """The analysis keys (``geneb.results.schema``: identity without the store version, which
    a dry run may not have yet) of every cell the plan asks for; the probe served on each task
    kind is the registry's (``serving``: ridge for regression tasks, full regime only)."""
    from geneb.probe.solvers import serving
    from geneb.results.schema import analysis_key, cell_id

    pp = plan.probe
    out: set[tuple[Any, ...]] = set()
    for t in tasks:
        for probe in pp.probes:
            key = serving(t.spec.kind, probe, pp.protocol, pp.backend)
            if key is None:
                continue
            name, protocol_name, backend = key
            ridge = name == "ridge"
            regimes = [r for r in pp.shots if r == "full"] if ridge else pp.shots
            values = pp.alphas if ridge else pp.Cs if name == "linear" else (None,)
            for model, regime, seed, v in itertools.product(models, regimes, pp.seeds, values):
                row = {"model": model, "task": t.spec.name, "regime": regime, "seed": seed,
                       "probe": name, "protocol": protocol_name, "backend": backend,
                       "standardize": pp.standardize, "C": None if ridge else v,
                       "alpha": v if ridge else None}
                out.add(analysis_key(cell_id(row)))
    return out


def _cells_present(plan: Plan, planned: set[tuple[Any, ...]]) -> int:
    """How many of the ``planned`` cells the results table already holds (what a rerun
    skips), by the one cell identity of ``geneb.results.schema``."""
    from geneb.results import ResultsTable
    from geneb.results.schema import analysis_key
    from geneb.results.table import cell_ids

    have = {analysis_key(c) for c in cell_ids(ResultsTable(plan.results_path).read())}
    return len(planned & have)


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
    t0 = time.perf_counter()
    tasks = validate(plan)
    if plan.vep is not None:  # variant tasks are validated before any work, too
        from geneb.vep.pipeline import run_vep, validate_vep

        vep_tasks = validate_vep(plan.vep)
    summary = RunSummary()
    plan.out.mkdir(parents=True, exist_ok=True)
    with _extract_cluster(plan) as client:
        keys = _extract_all(plan, tasks, client, summary, progress, log)
    _probe_all(plan, keys, [t.spec.name for t in tasks], summary, progress, log)
    vep_scores = None
    if plan.vep is not None:
        vep_scores, vep_lines = run_vep(plan, vep_tasks, log)
        summary.steps.extend(vep_lines)
    if plan.report:
        from geneb.analysis.report import build_report
        from geneb.models.catalogue import published_facts

        t1 = time.perf_counter()
        summary.report = build_report(
            plan.results_path,
            plan.report_dir,
            model_properties=plan.model_properties,
            task_organisms=plan.task_organisms,
            shots=plan.report_shots,
            Cs=plan.report_Cs,
            catalogue=published_facts,
            compare=plan.report_compare,
        )
        if vep_scores is not None and not vep_scores.empty:
            from geneb.analysis.report.vep_section import add_to_report
            from geneb.vep.summary import summarise

            add_to_report(summary.report, summarise(vep_scores))
        msg = f"report: {summary.report} ({time.perf_counter() - t1:.1f} s)"
        summary.steps.append(msg)
        log(msg)
    summary.seconds = time.perf_counter() - t0
    return summary


def _probe_all(plan: Plan, models: list[str], tasks: list[str], summary: RunSummary,
               progress: bool, log: Callable[[str], Any]) -> None:
    """The plan's probes in turn (``run_each_probe``, as ``geneb probe``), one line each."""
    from geneb.probe.each import run_each_probe
    from geneb.probe.engine import ProbeRunSummary

    pp = plan.probe
    t1 = time.perf_counter()

    def say(probe: str, s: ProbeRunSummary, n_probes: int) -> None:
        nonlocal t1
        summary.probe_computed += s.n_computed
        summary.probe_skipped += s.n_skipped
        msg = (f"probe {probe} ({s.backend}): {s.n_computed} cells computed from {s.n_fits} "
               f"fits, {s.n_skipped} already present ({time.perf_counter() - t1:.1f} s)")
        for line in (msg, *([f"note: {s.convergence_note()}"] if s.not_converged else [])):
            summary.steps.append(line)
            log(line)
        t1 = time.perf_counter()

    run_each_probe(plan.store, plan.results_path, probes=pp.probes, backend=pp.backend,
                   protocol=pp.protocol, models=models, tasks=tasks, shots=pp.shots,
                   seeds=pp.seeds, Cs=pp.Cs, alphas=pp.alphas, workers=pp.workers,
                   scheduler=pp.scheduler, standardize=pp.standardize, take_all=pp.take_all,
                   progress=progress, on_probe_done=say)


@contextlib.contextmanager
def _extract_cluster(plan: Plan) -> Iterator[Client | None]:
    """The Dask client extraction runs on ([extract] workers / scheduler), or None."""
    if plan.extract_workers is None and not plan.extract_scheduler:
        yield None
        return
    from geneb.cluster import dask_client

    with dask_client(scheduler=plan.extract_scheduler, workers=plan.extract_workers,
                     device=plan.device) as client:
        yield client


def _extract_all(plan: Plan, tasks: list[Task], client: Client | None, summary: RunSummary,
                 progress: bool, log: Callable[[str], Any]) -> list[str]:
    """Extract every model of the plan (in this process, or on ``client``'s cluster)."""
    from geneb.extract.runner import extract

    keys = []
    for mp in plan.models:
        opts = dict(mp.options)
        batch_tokens = opts.pop("batch_tokens", None) or plan.batch_tokens
        kwargs: dict[str, Any] = {"device": opts.pop("device", plan.device)}
        if batch_tokens:
            kwargs["batch_tokens"] = int(batch_tokens)
        t1 = time.perf_counter()
        if client is not None:  # (model, task-chunk) jobs on the Dask cluster
            from geneb.extract.distributed import extract_on_cluster

            results = extract_on_cluster(
                plan.store, [mp.model], list(plan.tasks),
                plan.splits, client=client, name=mp.name, overwrite=plan.overwrite,
                data_dir=str(plan.data_dir) if plan.data_dir else None, **kwargs, **opts)
        else:
            results = extract(
                str(plan.store),
                [mp.model],
                tasks,
                plan.splits,
                name=mp.name,
                overwrite=plan.overwrite,
                progress=progress,
                **kwargs,
                **opts,
            )
        mkeys = list(dict.fromkeys(r.key.model for r in results)) or model_keys(mp)
        keys.extend(mkeys)
        key = ", ".join(mkeys)
        done = [r for r in results if r.action != "skip"]
        summary.extracted += len(done)
        summary.skipped_entries += len(results) - len(done)
        msg = (
            f"extract {key}: {len(done)} entries written, {len(results) - len(done)} skipped "
            f"({time.perf_counter() - t1:.1f} s)"
        )
        summary.steps.append(msg)
        log(msg)
    return keys
