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
from typing import Any

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
    top: int | None = None,
) -> dict[str, pd.DataFrame]:
    """``{'all': pairs on every task, 'in_domain': pairs on shared in-domain tasks,
    'excluded': pairs left out of the in-domain count with the reason, 'counts': per regime
    n_pairs and n_smaller_better of 'all' and 'in_domain' and n_excluded}``.

    ``perf_main``: per (regime, model, task) ``mcc_mean`` and ``category`` of one probe
    configuration (the headline probe). Pair rows: :data:`PAIR_COLUMNS`. ``top``: per regime
    only the ``top`` pairs of 'all' and 'in_domain' with the largest margin (smaller minus
    larger) and the first ``top`` excluded pairs; None: every pair. The counts are always
    over every pair.
    """
    size = {m: n for m, n in zip(props["model"], props["n_params"], strict=True) if n == n}
    pdc = dict(zip(props["model"], props["pretraining_data_class"], strict=True))
    rows: dict[str, list[tuple[Any, ...]]] = {"all": [], "in_domain": [], "excluded": []}
    counts = []
    for reg, g in perf_main.groupby("regime", sort=True):
        got = _regime_pairs(reg, g, size, pdc, task_organisms, factor)
        n_all, n_in = len(got["all"]), len(got["in_domain"])
        wins_all = sum(r[-1] for r in got["all"])
        wins_in = sum(r[-1] for r in got["in_domain"])
        counts.append((reg, n_all, wins_all, n_in, wins_in, len(got["excluded"])))
        for key, found in got.items():
            if top is not None:
                found = found[:top] if key == "excluded" else _top(found, top)
            rows[key] += found
    count_cols = ["regime", "n_pairs_all", "n_smaller_better_all", "n_pairs_in_domain",
                  "n_smaller_better_in_domain", "n_excluded"]  # fmt: skip
    return {
        "all": pd.DataFrame(rows["all"], columns=PAIR_COLUMNS),
        "in_domain": pd.DataFrame(rows["in_domain"], columns=PAIR_COLUMNS),
        "excluded": pd.DataFrame(rows["excluded"], columns=[*PAIR_COLUMNS[:5], "reason"]),
        "counts": pd.DataFrame(counts, columns=count_cols),
    }


def _top(found: list[tuple[Any, ...]], top: int) -> list[tuple[Any, ...]]:
    """The ``top`` pair rows with the largest margin (macro_mcc_smaller - _larger), in their
    original order."""
    keep = sorted(range(len(found)), key=lambda i: -(found[i][6] - found[i][7]))[:top]
    return [found[i] for i in sorted(keep)]


def _regime_pairs(reg: Any, g: pd.DataFrame, size: Mapping[str, float],
                  pdc: Mapping[str, Any], task_organisms: Mapping[str, str],
                  factor: float) -> dict[str, list[tuple[Any, ...]]]:  # fmt: skip
    """Every pair of one regime. A model's macro-MCC over a task set is computed once per
    set (pairs share their sets: the common tasks, and those in both domains), so the cost
    grows with the pairs, not with pairs x tasks."""
    models = sorted(m for m in g["model"].unique() if m in size)
    by_model = {m: gm for m, gm in g.groupby("model", sort=False)}
    tasks_of = {m: frozenset(by_model[m]["task"]) for m in models}
    memo: dict[tuple[str, frozenset[str]], float] = {}

    def macro(model: str, tasks: frozenset[str]) -> float:
        if (model, tasks) not in memo:
            gm = by_model[model]
            memo[model, tasks] = _macro(gm[gm["task"].isin(tasks)])
        return memo[model, tasks]

    out: dict[str, list[tuple[Any, ...]]] = {"all": [], "in_domain": [], "excluded": []}
    for small in models:
        for large in models:
            if size[large] < factor * size[small]:
                continue
            head = (reg, small, large, int(size[small]), int(size[large]))
            common = tasks_of[small] & tasks_of[large]
            ms, ml = macro(small, common), macro(large, common)
            out["all"].append((*head, len(common), ms, ml, ms > ml))
            why = _excluded(pdc.get(small), pdc.get(large), small, large)
            shared = frozenset() if why else COVERS[pdc[small]] & COVERS[pdc[large]]
            inside = frozenset(t for t in common if task_organisms.get(t) in shared)
            if not why and not inside:
                why = "no task is in the domain of both models"
            if why:
                out["excluded"].append((*head, why))
                continue
            ms, ml = macro(small, inside), macro(large, inside)
            out["in_domain"].append((*head, len(inside), ms, ml, ms > ml))
    return out



def _excluded(pa: str | None, pb: str | None, a: str, b: str) -> str:
    unknown = [m for m, c in ((a, pa), (b, pb)) if not isinstance(c, str)]
    return f"pretraining-data class unknown for {', '.join(unknown)}" if unknown else ""


#: The pretraining-data classes whose models count as in domain for a benchmark of mostly
#: human tasks when no explicit set is given: those covering human tasks (:data:`COVERS`).
IN_DOMAIN_CLASSES: tuple[str, ...] = tuple(c for c, cov in COVERS.items() if "human" in cov)


def in_domain_set(props: pd.DataFrame, models: list[str] | None = None) -> tuple[list[str], str]:
    """The explicit set of in-domain models and the rule that made it.

    ``models`` given: that set (every name must be a model of ``props``: checked by the
    caller before any work). Else the models whose pretraining-data class is one of
    :data:`IN_DOMAIN_CLASSES` (unknown class: out). Returns (sorted models, rule sentence).
    """
    if models is not None:
        return sorted(models), "given (in_domain_models)"
    pdc = dict(zip(props["model"], props["pretraining_data_class"], strict=True))
    chosen = sorted(m for m, c in pdc.items() if c in IN_DOMAIN_CLASSES)
    return chosen, ("pretraining-data class covers human tasks ("
                    + ", ".join(IN_DOMAIN_CLASSES) + "; model catalogue or model_properties)")


def smaller_beats_larger_within(
    overall: pd.DataFrame, sizes: Mapping[str, float], models: list[str], *, factor: float = 5.0
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Within one set of models: per regime, how many pairs have a size ratio of at least
    ``factor`` and in how many the smaller model has the higher overall macro-MCC; and those
    pairs (at most ``len(models)**2``: the set is explicit, never the whole results).

    ``overall``: aggregate rows of one probe configuration, scope ``overall`` (regime, model,
    macro_mcc). Models without a size are left out (counted in ``n_unsized``).
    """
    sized = [m for m in models if m in sizes and sizes[m] == sizes[m]]
    counts, pairs = [], []
    for reg, g in overall[overall["model"].isin(sized)].groupby("regime", sort=True):
        score = dict(zip(g["model"], g["macro_mcc"], strict=True))
        n_pairs = 0
        for small in sorted(score):
            for large in sorted(score):
                if sizes[large] < factor * sizes[small]:
                    continue
                n_pairs += 1
                if score[small] > score[large]:
                    pairs.append((reg, small, large, int(sizes[small]), int(sizes[large]),
                                  float(sizes[large] / sizes[small]), float(score[small]),
                                  float(score[large])))
        n_better = sum(1 for p in pairs if p[0] == reg)
        counts.append((reg, len(score), len(models) - len(sized), n_pairs, n_better))
    return (
        pd.DataFrame(counts, columns=["regime", "n_models", "n_unsized", "n_pairs_size_ratio",
                                      "n_smaller_better"]),
        pd.DataFrame(pairs, columns=["regime", "smaller_model", "larger_model",
                                     "n_params_smaller", "n_params_larger", "size_ratio",
                                     "macro_mcc_smaller", "macro_mcc_larger"]),
    )
