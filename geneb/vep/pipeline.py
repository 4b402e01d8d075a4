"""Variant-effect scoring inside ``geneb run``: the ``[vep]`` table of a plan.

::

    [vep]
    tasks = ["../shared/variants/brca1_findlay2018"]   # variant task folders
    scorers = ["cosine", "l2", "llr"]                  # zero-shot scorers (default: all three)
    probe = ["diff", "concat"]                         # supervised probes (default: none)
    folds = 5                                          # their genomic-block folds (optional)
    window = 1024                                      # the default
    limit = 200                                        # optional: first N variants only

Every plan model scores every variant task with every zero-shot scorer it supports (``llr``
only where the model has a language-model head; the others are skipped with a line in the run
summary, as GFMBench computes only the metrics a model supports). With ``probe``, each model
also gets the supervised probe of ``geneb vep probe`` (logistic regression on the window
embeddings' ``alt - ref`` / ``[ref, alt, alt - ref]`` features, out-of-fold by contiguous
genomic blocks, GENEB's C sweep) on the same windows, which are embedded once. Embeddings go
to the plan's store (reused on reruns); tables go to
``<out>/vep/<task>__<model>__w<W>.parquet`` (zero-shot) and ``...__w<W>__probe.parquet``
(supervised), and the report's variant-effect section shows both side by side
(``geneb.analysis.report.vep_section.add_to_report``).

The table's keys and value types are declared once, in ``geneb.params.PLAN_SECTIONS["vep"]``,
and checked by the plan reader before this module sees them; here only what needs the plan's
folder or the library's own rules (folders exist, the window is even).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from geneb.errors import GenebError, PlanError
from geneb.vep.capabilities import SCORERS
from geneb.vocabulary import DEFAULT_VEP_WINDOW


@dataclass(frozen=True)
class VepPlan:
    tasks: tuple[Path, ...]
    scorers: tuple[str, ...] = SCORERS
    window: int = DEFAULT_VEP_WINDOW
    limit: int | None = None
    probe: tuple[str, ...] = ()  # supervised feature sets (geneb.vep.capabilities.FEATURES)
    folds: int | None = None  # None: geneb.vep.folds' default


def parse_vep(raw: dict[str, Any], path: Callable[[Any, str], Path], src: str) -> VepPlan:
    """The ``[vep]`` plan from its checked table (paths resolved by the plan's ``path``)."""
    from geneb.tasks.windows import check_window

    folders = tuple(path(t, "vep.tasks") for t in raw.get("tasks", []))
    if not folders:
        raise PlanError(f"{src}: [vep] needs tasks = [<variant task folder>, ...]")
    seen: dict[Path, int] = {}
    for k, f in enumerate(folders):
        if not f.is_dir():
            raise PlanError(f"{src}: variant task folder {str(f)!r} does not exist")
        if f.resolve() in seen:  # its variants would count twice in every metric
            raise PlanError(f"{src}: vep.tasks items {seen[f.resolve()] + 1} and {k + 1} are the "
                            f"same folder {str(f)!r}; expected each variant task once")
        seen[f.resolve()] = k
    window = raw.get("window", DEFAULT_VEP_WINDOW)
    try:
        check_window(window)
    except GenebError:
        raise PlanError(f"{src}: vep.window must be an even integer >= 2, got {window!r}") from None
    scorers = tuple(dict.fromkeys(raw.get("scorers", SCORERS)))
    probe = tuple(dict.fromkeys(raw.get("probe", ())))
    return VepPlan(folders, scorers, window, raw.get("limit"), probe, raw.get("folds"))


def validate_vep(vp: VepPlan) -> list[tuple[Any, Any]]:
    """Load (and so validate) every variant task before any work starts; with ``probe``, also
    plan each task's supervised probe (windows, folds, both classes in every training set).
    Returns (task, probe plan or None) per task: ``run_vep`` runs exactly these plans."""
    from geneb.tasks.variants import load_variant_task
    from geneb.vep.context import check_reference_room
    from geneb.vep.probe_run import plan_variant_probe

    tasks = [load_variant_task(f) for f in vp.tasks]
    names: dict[str, Path] = {}
    for f, vt in zip(vp.tasks, tasks, strict=True):
        if vt.name in names:  # one output name, one report row: the second would replace it
            raise PlanError(f"vep.tasks: {str(names[vt.name])!r} and {str(f)!r} are both "
                            f"variant task {vt.name!r}; expected each task once")
        names[vt.name] = f
    for vt in tasks:
        try:
            check_reference_room(vt, vp.window)
        except GenebError as e:
            raise PlanError(f"vep.{e}") from None
    plans = []
    for vt in tasks:
        try:
            plans.append((vt, plan_variant_probe(vt, features=vp.probe, window=vp.window,
                                                 folds=vp.folds, limit=vp.limit)
                          if vp.probe else None))
        except GenebError as e:
            raise PlanError(f"[vep] probe of {vt.name!r}: {plan_words(str(e))}") from None
    return plans


def plan_words(msg: str) -> str:
    """A probe planning message in a plan's vocabulary: ``folds=3`` -> ``[vep] folds = 3``;
    advice to give a single C is dropped ([vep] has no C key: its probes sweep C)."""
    import re

    from geneb.vep.folds import single_value_advice

    one = single_value_advice("C")
    msg = msg.replace(" or" + one, "").replace(" or " + one.strip(), "")
    msg = msg.replace(": give" + one, ", and [vep] probes choose C from a sweep: add "
                      "variants on a third chromosome")
    msg = msg.replace("do not give a fold count (folds)", "remove folds from [vep]")
    return re.sub(r"\b(folds|window)=(\d+)", r"[vep] \1 = \2", msg)


def run_vep(
    plan: Any, tasks: list[tuple[Any, Any]], log: Callable[[str], Any] = lambda s: None
) -> tuple[pd.DataFrame, list[str]]:
    """Score every (model, variant task), zero-shot and supervised (``tasks``: what
    :func:`validate_vep` returned); (all scores, summary lines)."""
    from geneb.vep.context import WindowTooLong
    from geneb.vep.probe_run import run_variant_probe

    vp: VepPlan = plan.vep
    out = plan.out / "vep"
    out.mkdir(parents=True, exist_ok=True)
    parts: list[pd.DataFrame] = []
    lines: list[str] = []

    def say(msg: str) -> None:
        lines.append(msg)
        log(msg)

    for mp in plan.models:
        run = {"store": plan.store, "name": mp.name,
               "device": mp.options.get("device", plan.device),
               "trust_remote_code": bool(mp.options.get("trust_remote_code", False))}
        scorers = list(vp.scorers)
        for vt, probe_plan in tasks:
            scorers, df = _zero_shot(vt, mp.model, scorers, vp.window, vp.limit, run, say)
            if df is not None:
                parts.append(_save(df, vt, out, vp.window, "", say))
            if probe_plan is not None:
                try:
                    df = run_variant_probe(probe_plan, mp.model, **run)
                except WindowTooLong as e:
                    say(f"vep {run['name'] or mp.model} on {vt.name}: probe skipped ({e})")
                    continue
                parts.append(_save(df, vt, out, vp.window, "__probe", say))
    return (pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()), lines


def _zero_shot(vt: Any, model: str, scorers: list[str], window: int, limit: int | None,
               run: dict[str, Any], say: Callable[[str], None]
               ) -> tuple[list[str], pd.DataFrame | None]:
    """The zero-shot scores of one model on one task, and the scorers it can run: a scorer
    the model cannot run (``llr`` without a language-model head) is dropped with a line."""
    from geneb.vep.capabilities import ScorerUnsupported
    from geneb.vep.context import WindowTooLong
    from geneb.vep.runner import score_variants

    while scorers:
        try:
            return scorers, score_variants(vt, model, scorers, window=window, limit=limit,
                                           **run)
        except WindowTooLong as e:
            say(f"vep {run['name'] or model} on {vt.name}: {', '.join(scorers)} skipped ({e})")
            return scorers, None
        except ScorerUnsupported as e:
            scorers = [s for s in scorers if s != e.scorer]
            say(f"vep {run['name'] or model}: {e.scorer} skipped (the model supports "
                f"{', '.join(e.supported) or 'no scorer'})")
    return scorers, None


def _save(df: pd.DataFrame, vt: Any, out: Path, window: int, suffix: str,
          say: Callable[[str], None]) -> pd.DataFrame:
    """Write one score table to ``<out>/<task>__<model>__w<W><suffix>.parquet`` (all or
    nothing, as ``geneb vep score`` writes its table) and say so."""
    from geneb.store.keys import safe_name
    from geneb.vep.io import write_scores

    model = str(df["model"].iloc[0])
    path = write_scores(
        df, out / f"{safe_name(vt.name)}__{safe_name(model)}__w{window}{suffix}.parquet")
    say(f"vep {model} on {vt.name}: {', '.join(map(str, df['scorer'].unique()))} "
        f"({int((df['status'] == 'ok').sum())}/{len(df)} scored) -> {path}")
    return df


def describe_vep(plan: Any, tasks: list[tuple[Any, Any]], model_key: Callable[[Any], str]
                 ) -> list[str]:
    """What ``run_vep`` would do (``geneb run --dry-run``), one line per (model, task), from
    what :func:`validate_vep` returned; the store is only read."""
    from geneb.store import FeatureStore, StoreKey
    from geneb.vep.runner import cut_to_limit, store_task_key

    vp: VepPlan = plan.vep
    fs = FeatureStore(plan.store, "r") if Path(plan.store).exists() else None
    lines = []
    for mp in plan.models:
        key = model_key(mp)
        for vt, probe_plan in tasks:
            cut, limit = cut_to_limit(vt, vp.limit)
            task_key = store_task_key(cut, vp.window, limit)
            states = [fs.status(StoreKey(key, task_key, s)) if fs else "missing"
                      for s in ("ref", "alt")]
            emb = ("reuse (complete)" if states == ["complete", "complete"] else "embed")
            probe = ""
            if probe_plan is not None:
                n_folds = len(set(probe_plan.fold[probe_plan.fold >= 0].tolist()))
                probe = f"; probe {', '.join(vp.probe)} ({n_folds} folds by {probe_plan.scheme})"
            lines.append(f"vep {key} / {vt.name}: {len(cut)} variants at window {vp.window}, "
                         f"windows {emb}; score {', '.join(vp.scorers)} (those the model "
                         f"supports){probe} -> {plan.out / 'vep'}")
    return lines

