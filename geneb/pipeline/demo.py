"""``geneb demo``: the whole pipeline, offline, on built-in defaults, in a few minutes.

It writes everything a user would write by hand (task folders of the synthetic starter suite,
a small transformer, a plan file) into the output folder and runs that plan, so the demo is
the real pipeline, not a special path, and ``geneb run OUT/plan.toml`` reruns it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from geneb.constraints import POSITIVE_INT, validate_params
from geneb.pipeline.execute import RunSummary, run_plan
from geneb.pipeline.plan import load_plan

#: Demo sizes: small enough for < 3 min on 2 CPU cores, large enough for stable rankings.
DEMO_TRAIN = 500
DEMO_TEST = 300
DEMO_C = (0.1, 1.0, 10.0)
DEMO_KMERS = ("kmer-2", "kmer-3", "kmer-4")


@dataclass(frozen=True)
class DemoResult:
    out: Path
    plan: Path
    report: Path | None
    summary: RunSummary
    seconds: float


@validate_params({"n_train": POSITIVE_INT, "n_test": POSITIVE_INT})
def write_demo_inputs(
    out: Path,
    *,
    n_train: int = DEMO_TRAIN,
    n_test: int = DEMO_TEST,
    tasks: tuple[str, ...] | None = None,
    kmers: tuple[str, ...] = DEMO_KMERS,
    with_transformer: bool = True,
    with_minilm: bool | None = None,
    seeds: tuple[int, ...] | None = None,
    Cs: tuple[float, ...] = DEMO_C,
    mlp: bool = True,
) -> Path:
    """Write task folders, the tiny model and ``plan.toml`` into ``out``; return the plan."""
    from geneb.models.adapters import minilm
    from geneb.pipeline.tiny_model import build_char_bert
    from geneb.protocol import DEFAULT_SEEDS, REGIMES
    from geneb.tasks.save import save_task_folder
    from geneb.tasks.synthetic import SYNTHETIC_TASK_NAMES, build_synthetic_task

    out.mkdir(parents=True, exist_ok=True)
    task_dir = out / "tasks"
    for name in tasks or SYNTHETIC_TASK_NAMES:
        folder = task_dir / name
        if not (folder / "task.json").is_file():
            save_task_folder(build_synthetic_task(name, n_train, n_test), folder, overwrite=True)
    models: list[dict[str, Any]] = [{"model": k} for k in kmers]
    if with_transformer:
        folder = build_char_bert(out / "models" / "char-bert-tiny")
        models.append({"model": f"random:{folder}", "max_length": 512})
    if with_minilm is None:
        with_minilm = minilm.available()
    if with_minilm:
        models.append({"model": minilm.NAME})
    lines = [
        "# Written by `geneb demo`: the built-in synthetic starter suite (not real data).",
        "# Rerun with: geneb run " + str(out / "plan.toml"),
        'store = "store.zarr"',
        'out = "."',
        "",
    ]
    for m in models:
        lines.append("[[models]]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in m.items()]
        lines.append("")
    lines += ["[tasks]", 'collections = ["tasks"]', "", "[probe]"]
    lines.append(f"shots = {json.dumps(list(REGIMES))}")
    lines.append(f"seeds = {json.dumps(list(seeds or DEFAULT_SEEDS))}")
    lines.append(f"C = {json.dumps(list(Cs))}")
    lines.append(f"probes = {json.dumps(['linear', 'mlp'] if mlp else ['linear'])}")
    lines.append("standardize = true  # k-mer spectra are ~1e-3 in scale; see README")
    lines.append('backend = "auto"')
    plan = out / "plan.toml"
    plan.write_text("\n".join(lines) + "\n")
    return plan


def run_demo(
    out: str | Path = "geneb-demo",
    *,
    progress: bool = False,
    log: Callable[[str], Any] = lambda s: None,
    **sizes: Any,
) -> DemoResult:
    """Build the demo inputs in ``out`` and run them end to end (store, results, report)."""
    t0 = time.perf_counter()
    out = Path(out).resolve()
    plan_path = write_demo_inputs(out, **sizes)
    log(f"demo inputs written to {out} (plan: {plan_path})")
    summary = run_plan(load_plan(plan_path), progress=progress, log=log)
    return DemoResult(out, plan_path, summary.report, summary, time.perf_counter() - t0)
