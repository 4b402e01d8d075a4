"""In-domain scale comparison: does a model at least ``factor`` x smaller beat a larger one?

The domain rule (also in docs/analysis.md). Every task carries an organism class
(:data:`TASK_ORGANISMS`; from the results table's ``organism`` column or the
``--task-organisms`` file). A model is **in domain** for a task when its pretraining-data class
covers the task's organism class (:data:`COVERS`): human data covers human tasks; eukaryotic
data covers human, mammal, other eukaryote and plant tasks; multi-species data covers every
class; prokaryotic/microbial data covers prokaryote and virus tasks; plant data covers plant
tasks; ``other`` covers none.

A pair (smaller, larger) with ``n_larger >= factor * n_smaller`` is compared on the tasks
where **both** are in domain: each model's macro-MCC over those tasks (mean of category
means, :func:`geneb.protocol.macro_micro`), at the headline probe per regime. The
pair is excluded, with the reason, when either pretraining-data class is unknown or no task
is in the domain of both. The unrestricted count compares the same pairs on every task.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from geneb.analysis.user_csv import read_user_csv
from geneb.errors import GenebError
from geneb.protocol import macro_micro

TASK_ORGANISMS: tuple[str, ...] = ("human", "mammal", "eukaryote", "plant", "prokaryote", "virus")
COVERS: dict[str, frozenset[str]] = {
    "human": frozenset({"human"}),
    "eukaryotic": frozenset({"human", "mammal", "eukaryote", "plant"}),
    "multi-species": frozenset(TASK_ORGANISMS),
    "prokaryotic/microbial": frozenset({"prokaryote", "virus"}),
    "plant": frozenset({"plant"}),
    "other": frozenset(),
}
PAIR_COLUMNS = [
    "regime",
    "smaller_model",
    "larger_model",
    "n_params_smaller",
    "n_params_larger",
    "n_tasks",
    "macro_mcc_smaller",
    "macro_mcc_larger",
    "smaller_better",
]


def read_task_organisms(path: str | os.PathLike[str]) -> dict[str, str]:
    """A CSV with columns ``task`` and ``organism`` (one of :data:`TASK_ORGANISMS`)."""
    p = Path(path)
    df = read_user_csv(p, what="task-organisms", required=("task", "organism"),
                       header="task,organism")
    out: dict[str, str] = {}
    for line, task, org in zip(df.index, df["task"], df["organism"], strict=True):
        where = f"{p}: line {line}"
        if org.strip() not in TASK_ORGANISMS:
            raise GenebError(
                f"{where}: organism must be one of {list(TASK_ORGANISMS)}, got {org!r}"
            )
        if task.strip() in out:
            raise GenebError(f"{where}: task {task.strip()!r} listed twice")
        out[task.strip()] = org.strip()
    return out


def _macro(g: pd.DataFrame) -> float:
    return macro_micro(g["mcc_mean"].to_numpy(), g["category"].to_numpy())[0]


def _compare(perf: pd.DataFrame, small: str, large: str, tasks: set[str]) -> tuple[float, float]:
    g = perf[perf["task"].isin(tasks)]
    return _macro(g[g["model"] == small]), _macro(g[g["model"] == large])


def smaller_beats_larger_in_domain(
    perf_main: pd.DataFrame,
    props: pd.DataFrame,
    task_organisms: Mapping[str, str],
    *,
    factor: float = 5.0,
) -> dict[str, pd.DataFrame]:
    """``{'all': pairs on every task, 'in_domain': pairs on shared in-domain tasks,
    'excluded': pairs left out of the in-domain count with the reason}``.

    ``perf_main``: per (regime, model, task) ``mcc_mean`` and ``category`` of one probe
    configuration (the headline probe). Pair rows: :data:`PAIR_COLUMNS`.
    """
    size = {m: n for m, n in zip(props["model"], props["n_params"], strict=True) if n == n}
    pdc = dict(zip(props["model"], props["pretraining_data_class"], strict=True))
    rows_all, rows_in, rows_ex = [], [], []
    for reg, g in perf_main.groupby("regime", sort=True):
        models = sorted(m for m in g["model"].unique() if m in size)
        tasks_of = {m: set(g.loc[g["model"] == m, "task"]) for m in models}
        for small in models:
            for large in models:
                if size[large] < factor * size[small]:
                    continue
                head = (reg, small, large, int(size[small]), int(size[large]))
                common = tasks_of[small] & tasks_of[large]
                ms, ml = _compare(g, small, large, common)
                rows_all.append((*head, len(common), ms, ml, ms > ml))
                why = _excluded(pdc.get(small), pdc.get(large), small, large)
                inside = {
                    t
                    for t in common
                    if not why and task_organisms.get(t) in COVERS[pdc[small]] & COVERS[pdc[large]]
                }
                if not why and not inside:
                    why = "no task is in the domain of both models"
                if why:
                    rows_ex.append((*head, why))
                    continue
                ms, ml = _compare(g, small, large, inside)
                rows_in.append((*head, len(inside), ms, ml, ms > ml))
    ex_cols = [*PAIR_COLUMNS[:5], "reason"]
    return {
        "all": pd.DataFrame(rows_all, columns=PAIR_COLUMNS),
        "in_domain": pd.DataFrame(rows_in, columns=PAIR_COLUMNS),
        "excluded": pd.DataFrame(rows_ex, columns=ex_cols),
    }


def _excluded(pa: str | None, pb: str | None, a: str, b: str) -> str:
    unknown = [m for m, c in ((a, pa), (b, pb)) if not isinstance(c, str)]
    return f"pretraining-data class unknown for {', '.join(unknown)}" if unknown else ""
