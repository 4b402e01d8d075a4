"""Variant-effect scoring inside ``geneb run``: the ``[vep]`` table of a plan.

::

    [vep]
    tasks = ["../shared/variants/brca1_findlay2018"]   # variant task folders
    scorers = ["cosine", "l2", "llr"]                  # default: all three
    window = 1024                                      # default 1024
    limit = 200                                        # optional: first N variants only

Every plan model scores every variant task with every scorer it supports (``llr`` only where
the model has a language-model head; the others are skipped with a line in the run summary,
as GFMBench computes only the metrics a model supports). Embeddings go to the plan's store
(reused on reruns); tables go to ``<out>/vep/<task>__<model>__w<W>.parquet``, and the report
gets a variant-effect section (``geneb.analysis.report.vep_section.add_to_report``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from geneb.errors import PlanError
from geneb.vep.capabilities import SCORERS

VEP_KEYS = {"tasks", "scorers", "window", "limit"}


@dataclass(frozen=True)
class VepPlan:
    tasks: tuple[Path, ...]
    scorers: tuple[str, ...] = SCORERS
    window: int = 1024
    limit: int | None = None


def parse_vep(raw: Any, path: Callable[[Any, str], Path], src: str) -> VepPlan:
    """Validate the ``[vep]`` table (paths resolved by the plan's ``path`` helper)."""
    from geneb.errors import did_you_mean

    if not isinstance(raw, dict):
        raise PlanError(f"{src}: vep must be a table ([vep]), got {raw!r}")
    for key in raw:
        if key not in VEP_KEYS:
            close = did_you_mean(key, VEP_KEYS)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise PlanError(f"{src}: unknown key {key!r} in [vep].{hint} Allowed keys: "
                            f"{', '.join(sorted(VEP_KEYS))}")
    tasks = raw.get("tasks", [])
    tasks = tasks if isinstance(tasks, list) else [tasks]
    if not tasks:
        raise PlanError(f"{src}: [vep] needs tasks = [<variant task folder>, ...]")
    folders = tuple(path(t, "vep.tasks") for t in tasks)
    for f in folders:
        if not f.is_dir():
            raise PlanError(f"{src}: variant task folder {str(f)!r} does not exist")
    scorers = raw.get("scorers", list(SCORERS))
    scorers = scorers if isinstance(scorers, list) else [scorers]
    for s in scorers:
        if s not in SCORERS:
            raise PlanError(f"{src}: vep.scorers entry {s!r}: expected one of "
                            f"{', '.join(SCORERS)}")
    window = raw.get("window", 1024)
    if not isinstance(window, int) or isinstance(window, bool) or window < 2 or window % 2:
        raise PlanError(f"{src}: vep.window must be an even integer >= 2, got {window!r}")
    limit = raw.get("limit")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool)
                              or limit < 1):
        raise PlanError(f"{src}: vep.limit must be a positive integer, got {limit!r}")
    return VepPlan(folders, tuple(dict.fromkeys(scorers)), window, limit)


def validate_vep(vp: VepPlan) -> list[Any]:
    """Load (and so validate) every variant task before any work starts."""
    from geneb.tasks.variants import load_variant_task

    return [load_variant_task(f) for f in vp.tasks]


def run_vep(
    plan: Any, tasks: list[Any], log: Callable[[str], Any] = lambda s: None
) -> tuple[pd.DataFrame, list[str]]:
    """Score every (model, variant task); returns (all scores, summary lines)."""
    import time

    from geneb.store.keys import safe_name
    from geneb.vep.capabilities import EMBEDDING_SCORERS
    from geneb.vep.runner import score_variants

    vp: VepPlan = plan.vep
    out = plan.out / "vep"
    out.mkdir(parents=True, exist_ok=True)
    parts, lines = [], []
    for mp in plan.models:
        trc = bool(mp.options.get("trust_remote_code", False))
        device = mp.options.get("device", plan.device)
        scorers = list(vp.scorers)
        for vt in tasks:
            t1 = time.perf_counter()
            try:
                df = score_variants(vt, mp.model, scorers, window=vp.window, store=plan.store,
                                    limit=vp.limit, name=mp.name, device=device,
                                    trust_remote_code=trc)
            except Exception as e:
                from geneb.errors import ModelError

                if not (isinstance(e, ModelError) and "cannot run scorer='llr'" in str(e)):
                    raise
                emb = [s for s in scorers if s in EMBEDDING_SCORERS]
                skip = f"vep {mp.name or mp.model}: llr skipped ({str(e).split(': ')[-1]})"
                lines.append(skip)
                log(skip)
                scorers = emb
                if not emb:
                    continue
                df = score_variants(vt, mp.model, emb, window=vp.window, store=plan.store,
                                    limit=vp.limit, name=mp.name, device=device,
                                    trust_remote_code=trc)
            model = str(df["model"].iloc[0])
            path = out / f"{safe_name(vt.name)}__{safe_name(model)}__w{vp.window}.parquet"
            df.to_parquet(path, index=False)
            parts.append(df)
            msg = (f"vep {model} on {vt.name}: {', '.join(df['scorer'].unique())} "
                   f"({int((df['status'] == 'ok').sum())}/{len(df)} scored, "
                   f"{time.perf_counter() - t1:.1f} s) -> {path}")
            lines.append(msg)
            log(msg)
    return (pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()), lines
