"""GENEB's leaderboard file (``leaderboard/leaderboard_tasks.json``), read and checked.

The shape (darlednik/GENEB at 9642d48): ``{"tasks": [{"id", "label", "cat"}], "data":
{"full" | "10shot" | "1shot": [{"model", "disp", "params", "micro_MCC", "macro_MCC",
"task_MCC": {task id: MCC}, ...}]}}``; every ``task_MCC`` value is GENEB's mean over its five
seeds. geneb's packaged copy (``published_geneb.json``, made by
``tools/make_published_geneb.py``) has the same shape with ``task_MCC`` as a list in task
order, plus ``source`` and ``leaderboard`` (the per-model facts of GENEB's
``leaderboard.json``: official, zero_shot, submitted, accuracy, F1, ``cat_MCC``).

:func:`parse_leaderboard` refuses a malformed or inconsistent file in one line naming the
record: an unknown regime or category, a missing or unknown task, a value that is not a finite
MCC (NaN included), a duplicate model, or a ``micro_MCC``/``macro_MCC``/``cat_MCC`` that is not
the mean of the record's task values (summed as GENEB sums: ``geneb.protocol``).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from geneb.errors import LeaderboardError
from geneb.protocol import category_means, macro_micro

#: GENEB's regime keys and geneb's name of each (the ``regime`` column: k shots, or full).
GENEB_REGIMES: dict[str, str] = {"full": "full", "10shot": "10", "1shot": "1"}

#: GENEB's category names (the ``cat`` of its tasks) and the geneb category slug of each.
GENEB_CATEGORY_SLUGS: dict[str, str] = {
    "Histone Mod.": "histone_modifications",
    "Promoters": "promoters",
    "Enhancers": "enhancers",
    "DNA Methyl.": "dna_methylation",
    "Splice Sites": "splice_sites",
    "lncRNA": "lncrna",
    "Mouse Enh.": "mouse_enhancers",
    "TF Binding": "tf_binding",
    "Species Clf.": "species_classification",
    "Regulatory": "regulatory",
    "Virus/Phage": "virus_phage",
    "Coding/NC": "coding_noncoding",
    "Chromatin Acc.": "chromatin_accessibility",
}

#: GENEB's seeds per published value (each value is the mean over them; the rows say so).
GENEB_N_SEEDS = 5

#: How far a stated micro/macro/category mean may be from the mean of the task values: the
#: published ones agree exactly; a file off by more than rounding noise is inconsistent.
TOLERANCE = 1e-12


@dataclass(frozen=True)
class Record:
    """One model in one regime: its per-task MCC in task order and what the file states."""

    model: str
    display: str
    params: int | None
    micro: float
    macro: float
    task_mcc: tuple[float, ...]
    facts: Mapping[str, Any] = field(default_factory=dict)  # official, zero_shot, ...


@dataclass(frozen=True)
class Leaderboard:
    """A checked leaderboard: tasks (id, GENEB category name) in file order, and the records
    of each regime (GENEB's regime keys)."""

    tasks: tuple[tuple[str, str], ...]
    records: Mapping[str, tuple[Record, ...]]
    source: Mapping[str, Any]

    @property
    def task_ids(self) -> list[str]:
        return [t for t, _ in self.tasks]

    @property
    def categories(self) -> list[str]:
        return [c for _, c in self.tasks]


def read_leaderboard(path: str | os.PathLike[str]) -> Leaderboard:
    """The leaderboard file at ``path``, checked (:func:`parse_leaderboard`)."""
    p = Path(path)
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise LeaderboardError(f"{str(p)!r}: no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise LeaderboardError(f"{str(p)!r}: not a JSON file ({e})") from None
    return parse_leaderboard(doc, str(p))


def parse_leaderboard(doc: Any, where: str) -> Leaderboard:
    """Check a parsed leaderboard document; return it as a :class:`Leaderboard`."""
    if not isinstance(doc, Mapping) or not isinstance(doc.get("tasks"), list) or not (
            isinstance(doc.get("data"), Mapping)):
        raise LeaderboardError(f"{where}: expected a JSON object with 'tasks' (a list) and "
                               f"'data' (an object per regime), got {_kind(doc)}")
    tasks = _tasks(doc["tasks"], where)
    unknown = [r for r in doc["data"] if r not in GENEB_REGIMES]
    if unknown:
        raise LeaderboardError(f"{where}: data: unknown regime {unknown[0]!r}; expected "
                               f"{', '.join(GENEB_REGIMES)}")
    if not doc["data"]:
        raise LeaderboardError(f"{where}: data: no regime; expected {', '.join(GENEB_REGIMES)}")
    facts = _facts(doc.get("leaderboard") or {}, where)
    records = {}
    for regime, raw in doc["data"].items():
        if not isinstance(raw, list) or not raw:
            raise LeaderboardError(f"{where}: data.{regime}: expected a non-empty list of "
                                   f"records, got {_kind(raw)}")
        records[regime] = _records(raw, tasks, facts.get(regime, {}), f"{where}: data.{regime}")
    source = doc.get("source") if isinstance(doc.get("source"), Mapping) else {}
    return Leaderboard(tasks=tasks, records=records, source=dict(source or {}))


def _kind(v: Any) -> str:
    return type(v).__name__ if not isinstance(v, Mapping) else "an object without them"


def _tasks(raw: list[Any], where: str) -> tuple[tuple[str, str], ...]:
    out: list[tuple[str, str]] = []
    for i, t in enumerate(raw):
        if not isinstance(t, Mapping) or not isinstance(t.get("id"), str) or not t["id"]:
            raise LeaderboardError(f"{where}: tasks[{i}]: expected an object with a task 'id', "
                                   f"got {t!r:.80}")
        if t.get("cat") not in GENEB_CATEGORY_SLUGS:
            raise LeaderboardError(f"{where}: tasks[{i}] {t['id']!r}: category {t.get('cat')!r} "
                                   f"is not one of GENEB's ({', '.join(GENEB_CATEGORY_SLUGS)})")
        out.append((t["id"], t["cat"]))
    if not out:
        raise LeaderboardError(f"{where}: tasks: expected GENEB's tasks, got an empty list")
    seen: set[str] = set()
    for tid, _ in out:
        if tid in seen:
            raise LeaderboardError(f"{where}: tasks: task {tid!r} is listed twice")
        seen.add(tid)
    return tuple(out)


def _facts(raw: Any, where: str) -> dict[str, dict[str, Mapping[str, Any]]]:
    """The optional ``leaderboard`` part: per regime, model -> its facts."""
    if not isinstance(raw, Mapping):
        raise LeaderboardError(f"{where}: leaderboard: expected an object per regime")
    out: dict[str, dict[str, Mapping[str, Any]]] = {}
    for regime, recs in raw.items():
        if regime not in GENEB_REGIMES or not isinstance(recs, list):
            raise LeaderboardError(f"{where}: leaderboard.{regime}: expected a list under one "
                                   f"of {', '.join(GENEB_REGIMES)}")
        out[regime] = {str(r.get("model")): r for r in recs if isinstance(r, Mapping)}
    return out


def mcc_value(v: Any, where: str) -> float:
    """``v`` as an MCC: a finite number in [-1, 1] (NaN, text and booleans refused)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or (
            not -1.0 <= v <= 1.0):
        raise LeaderboardError(f"{where}: expected a finite MCC in [-1, 1], got {v!r}")
    return float(v)


def _task_values(raw: Any, ids: Sequence[str], where: str) -> tuple[float, ...]:
    if isinstance(raw, list):  # the packaged copy: a list in task order
        if len(raw) != len(ids):
            raise LeaderboardError(f"{where}: task_MCC: expected {len(ids)} values (one per "
                                   f"task), got {len(raw)}")
        return tuple(mcc_value(v, f"{where}: task {t!r}") for t, v in zip(ids, raw, strict=True))
    if not isinstance(raw, Mapping):
        raise LeaderboardError(f"{where}: task_MCC: expected an object task id -> MCC, got "
                               f"{_kind(raw)}")
    missing = [t for t in ids if t not in raw]
    if missing:
        raise LeaderboardError(f"{where}: task_MCC: missing task {missing[0]!r} ({len(missing)} "
                               f"of the {len(ids)} tasks missing)")
    extra = [t for t in raw if t not in set(ids)]
    if extra:
        raise LeaderboardError(f"{where}: task_MCC: task {extra[0]!r} is not in the file's tasks")
    return tuple(mcc_value(raw[t], f"{where}: task {t!r}") for t in ids)


def _records(raw: list[Any], tasks: tuple[tuple[str, str], ...],
             facts: Mapping[str, Mapping[str, Any]], where: str) -> tuple[Record, ...]:
    ids = [t for t, _ in tasks]
    cats = [c for _, c in tasks]
    out: list[Record] = []
    seen: set[str] = set()
    for i, r in enumerate(raw):
        if not isinstance(r, Mapping) or not isinstance(r.get("model"), str) or not r["model"]:
            raise LeaderboardError(f"{where}[{i}]: expected a record with a 'model', "
                                   f"got {_kind(r)}")
        model = r["model"]
        at = f"{where} {model!r}"
        if model in seen:
            raise LeaderboardError(f"{at}: duplicate model (a second record in this regime)")
        seen.add(model)
        params = r.get("params")
        if params is not None and (isinstance(params, bool) or not isinstance(params, int)
                                   or params <= 0):
            raise LeaderboardError(f"{at}: params: expected a positive integer, got {params!r}")
        values = _task_values(r.get("task_MCC"), ids, at)
        micro = mcc_value(r.get("micro_MCC"), f"{at}: micro_MCC")
        macro = mcc_value(r.get("macro_MCC"), f"{at}: macro_MCC")
        _check_means(values, cats, micro, macro, facts.get(model, {}), at)
        out.append(Record(model=model, display=str(r.get("disp") or model), params=params,
                          micro=micro, macro=macro, task_mcc=values,
                          facts=dict(facts.get(model, {}))))
    return tuple(out)


def _check_means(values: tuple[float, ...], cats: list[str], micro: float, macro: float,
                 facts: Mapping[str, Any], at: str) -> None:
    """The stated means are the means of the task values (GENEB's summation order)."""
    got_macro, got_micro = macro_micro(values, cats)
    for name, stated, got in (("micro_MCC", micro, got_micro), ("macro_MCC", macro, got_macro)):
        if abs(stated - got) > TOLERANCE:
            raise LeaderboardError(f"{at}: {name} {stated!r} is not the mean of its "
                                   f"{len(values)} task values ({got!r})")
    stated_cats = facts.get("cat_MCC")
    if isinstance(stated_cats, Mapping):
        names, means = category_means(values, cats)
        for c, m in zip(names, means.tolist(), strict=True):
            s = stated_cats.get(c)
            if not isinstance(s, (int, float)) or abs(float(s) - m) > TOLERANCE:
                raise LeaderboardError(f"{at}: cat_MCC {c!r} {s!r} is not the mean of the "
                                       f"category's task values ({m!r})")
