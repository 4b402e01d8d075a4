"""GENEB's leaderboard submission file: written from a user's results, read as a source.

The format (darlednik/GENEB ``submissions/splicebert-1024nt.json`` at e14bb82):
``{"schema_version": "1.0", "model_id", "harness_version", "meta": {"display", "params",
"url", "zero_shot", "training_data", "provenance", "submitted_by"}, "results": {"full" |
"10shot" | "1shot": {GENEB task id: {"MCC", "Acc", "F1"}}}}``, each value the mean over
GENEB's five seeds. :func:`submission_from_results` makes one from the paper-protocol rows of
one model (linear probe, C = 1, features as stored), refusing missing tasks or seeds unless
``partial`` (then ``meta.partial`` lists what is missing); :func:`parse_submission` reads one
back as a :class:`~geneb.results.leaderboard_file.Leaderboard`, so
``read_results("published:M.json")`` gives the exported means back (the round trip).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from geneb.errors import LeaderboardError
from geneb.protocol import macro_micro
from geneb.results.geneb_tasks import catalogue_to_geneb_id, geneb_task_ids
from geneb.results.leaderboard_file import (
    GENEB_REGIMES,
    Leaderboard,
    Record,
    check_regimes,
    mcc_value,
    param_count,
)
from geneb.vocabulary import DEFAULT_SEEDS

if TYPE_CHECKING:
    import pandas as pd

SCHEMA_VERSION = "1.0"
META_KEYS: tuple[str, ...] = ("display", "params", "url", "zero_shot", "training_data",
                              "provenance", "submitted_by")
#: geneb's regime name -> GENEB's regime key
REGIME_KEYS: dict[str, str] = {v: k for k, v in GENEB_REGIMES.items()}


def _score(v: Any, where: str) -> float | None:
    """An accuracy or F1: a finite number in [0, 1], or null."""
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or (
            not 0.0 <= v <= 1.0):
        raise LeaderboardError(f"{where}: expected a finite score in [0, 1] or null, got {v!r}")
    return float(v)


def parse_submission(doc: Any, where: str, reference: Leaderboard) -> Leaderboard:
    """Check a submission document against ``reference`` (GENEB's tasks and categories) and
    return it as a one-model leaderboard (official false: a submission is self-reported)."""
    if doc.get("schema_version") != SCHEMA_VERSION:
        raise LeaderboardError(f"{where}: schema_version: expected {SCHEMA_VERSION!r}, got "
                               f"{doc.get('schema_version')!r}")
    model = doc.get("model_id")
    meta = doc.get("meta")
    results = doc.get("results")
    if not isinstance(model, str) or not model:
        raise LeaderboardError(f"{where}: model_id: expected a model id, got {model!r}")
    if not isinstance(meta, Mapping) or not isinstance(results, Mapping) or not results:
        raise LeaderboardError(f"{where}: expected objects 'meta' and 'results' (per regime)")
    params = param_count(meta.get("params"), f"{where}: meta.params")
    check_regimes(results, f"{where}: results")
    order = reference.task_ids
    cat_of = dict(reference.tasks)
    partial = isinstance(meta.get("partial"), Mapping)
    facts = {"official": False, "zero_shot": meta.get("zero_shot"),
             "submitted": meta.get("provenance")}
    records: dict[str, tuple[Record, ...]] = {}
    for regime, per_task in results.items():
        at = f"{where}: results.{regime}"
        if not isinstance(per_task, Mapping) or not per_task:
            raise LeaderboardError(f"{at}: expected an object task id -> {{MCC, Acc, F1}}")
        extra = [t for t in per_task if t not in cat_of]
        if extra:
            raise LeaderboardError(f"{at}: task {extra[0]!r} is not one of GENEB's tasks")
        ids = [t for t in order if t in per_task]
        if len(ids) < len(order) and not partial:
            missing = next(t for t in order if t not in per_task)
            raise LeaderboardError(f"{at}: missing task {missing!r} ({len(order) - len(ids)} "
                                   "missing; a partial submission says so in meta.partial)")
        cells = [_cell(per_task[t], f"{at} {t!r}") for t in ids]
        mcc = tuple(c[0] for c in cells)
        macro, micro = macro_micro(mcc, [cat_of[t] for t in ids])
        acc = tuple(c[1] for c in cells)
        f1 = tuple(c[2] for c in cells)
        records[regime] = (Record(
            model=model, display=str(meta.get("display") or model), params=params,
            micro=micro, macro=macro, task_mcc=mcc, facts=facts, task_ids=tuple(ids),
            task_acc=_complete(acc), task_f1=_complete(f1)),)
    present = {t for recs in records.values() for t in (recs[0].task_ids or ())}
    source = {"file": where, "model_id": model, "harness_version": doc.get("harness_version")}
    return Leaderboard(tasks=tuple(t for t in reference.tasks if t[0] in present),
                       records=records, source=source)


def _complete(scores: tuple[float | None, ...]) -> tuple[float, ...] | None:
    """``scores`` where every task has one, else None (a partial column is not kept)."""
    if any(v is None for v in scores):
        return None
    return tuple(v for v in scores if v is not None)


def _cell(raw: Any, where: str) -> tuple[float, float | None, float | None]:
    if not isinstance(raw, Mapping):
        raise LeaderboardError(f"{where}: expected an object {{MCC, Acc, F1}}, got {raw!r:.60}")
    return (mcc_value(raw.get("MCC"), f"{where}: MCC"), _score(raw.get("Acc"), f"{where}: Acc"),
            _score(raw.get("F1"), f"{where}: F1"))


def _mean(values: Sequence[float | None]) -> float | None:
    """Left-to-right mean (as GENEB averages its seeds); None when a value is missing."""
    present = [v for v in values if v is not None]
    if len(present) < len(values) or any(isinstance(v, float) and math.isnan(v)
                                         for v in present):
        return None
    total = 0.0
    for v in present:
        total += float(v)
    return total / len(values)


def _float(v: Any) -> float | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def _already_mean(g: pd.DataFrame) -> bool:
    """Rows that are already GENEB's mean over its seeds (``seed`` null, ``n_seeds`` 5)."""
    return "n_seeds" in g.columns and bool(g["seed"].isna().all()) and bool(
        (g["n_seeds"] == len(DEFAULT_SEEDS)).all())


def paper_rows(df: pd.DataFrame, model: str) -> pd.DataFrame:
    """The rows of ``model`` that GENEB's protocol made: paper protocol, linear probe, C = 1,
    features as stored. Refused in one line when the model has none (naming what it has)."""
    mine = df[df["model"].astype(str) == model]
    if mine.empty:
        models = sorted(df["model"].astype(str).unique())
        raise LeaderboardError(f"model {model!r} is not in the results (it has "
                               f"{', '.join(models[:8])}{' ...' if len(models) > 8 else ''})",
                               param="model")
    protocol = mine["protocol"].fillna("converged").astype(str)
    keep = mine[(protocol == "paper") & (mine["probe"].astype(str) == "linear")
                & (mine["C"].astype(float).sub(1.0).abs() < 1e-12)
                & ~mine["standardize"].fillna(False).astype(bool)]
    if keep.empty:
        have = sorted({f"{p}/{pr}/C={c:g}/standardize={bool(s)}" for p, pr, c, s in zip(
            protocol, mine["probe"], mine["C"].astype(float), mine["standardize"].fillna(False),
            strict=True)})
        raise LeaderboardError(
            f"model {model!r}: no rows of GENEB's protocol (paper/linear/C=1/standardize=False); "
            f"it has {', '.join(have[:6])} (probe with protocol=paper, C=1)")
    return keep


def submission_from_results(df: pd.DataFrame, model: str, *, partial: bool = False,
                            meta: Mapping[str, Any] | None = None,
                            harness_version: str = "") -> tuple[dict[str, Any], list[str]]:
    """The submission document of ``model`` from results rows ``df``, and the tasks left out
    because GENEB does not have them.

    Means over GENEB's five seeds (13, 17, 42, 123, 997) of MCC, accuracy and macro-F1 per
    (regime, GENEB task); tasks named by catalogue name or GENEB id. Without ``partial`` a
    missing regime, task or seed is refused in one line; with it, what is there is written and
    ``meta.partial`` lists what is missing (and how many seeds each mean has)."""
    rows = paper_rows(df, model)
    to_id = catalogue_to_geneb_id()
    order = geneb_task_ids()
    geneb_ids = rows["task"].astype(str).map(lambda t: to_id.get(t, t if t in order else None))
    foreign = sorted(set(rows.loc[geneb_ids.isna(), "task"].astype(str)))
    rows = rows.assign(_id=geneb_ids).dropna(subset=["_id"])
    results: dict[str, dict[str, dict[str, float | None]]] = {}
    missing: dict[str, Any] = {"tasks": {}, "seeds": {}}
    for regime, key in REGIME_KEYS.items():
        reg = rows[rows["regime"].astype(str) == regime]
        by_task = {t: g for t, g in reg.groupby("_id", sort=False)}
        results[key] = {}
        lacking = [t for t in order if t not in by_task]
        if lacking:
            missing["tasks"][key] = lacking
        for tid in (t for t in order if t in by_task):
            if _already_mean(by_task[tid]):  # a published row: the mean over GENEB's seeds
                r = by_task[tid].iloc[-1]
                results[key][tid] = {"MCC": float(r["mcc"]), "Acc": _float(r["accuracy"]),
                                     "F1": _float(r["macro_f1"])}
                continue
            g = by_task[tid].drop_duplicates("seed", keep="last").set_index("seed")
            seeds = [s for s in DEFAULT_SEEDS if s in g.index]
            if len(seeds) < len(DEFAULT_SEEDS):
                missing["seeds"].setdefault(key, {})[tid] = [
                    s for s in DEFAULT_SEEDS if s not in g.index]
            if not seeds:
                continue
            results[key][tid] = {
                name: _mean([g.at[s, col] for s in seeds])
                for name, col in (("MCC", "mcc"), ("Acc", "accuracy"), ("F1", "macro_f1"))}
        if not results[key]:
            del results[key]
    _refuse_incomplete(model, missing, partial)
    doc_meta = _meta(rows, model, meta or {})
    if partial and (missing["tasks"] or missing["seeds"]):
        doc_meta["partial"] = {k: v for k, v in missing.items() if v}
    doc = {"schema_version": SCHEMA_VERSION, "model_id": str((meta or {}).get("model_id")
                                                             or model),
           "harness_version": harness_version, "meta": doc_meta, "results": results}
    return doc, foreign


def _refuse_incomplete(model: str, missing: Mapping[str, Any], partial: bool) -> None:
    if partial:
        return
    for key, tasks in missing["tasks"].items():
        raise LeaderboardError(
            f"model {model!r}: regime {key}: {len(tasks)} of GENEB's tasks missing (first: "
            f"{tasks[0]!r}); a GENEB submission needs every task (or pass partial)")
    for key, per_task in missing["seeds"].items():
        tid, seeds = next(iter(per_task.items()))
        raise LeaderboardError(
            f"model {model!r}: regime {key}: task {tid!r} lacks seed(s) "
            f"{', '.join(map(str, seeds))} of GENEB's {', '.join(map(str, DEFAULT_SEEDS))} "
            f"({len(per_task)} task(s) short of seeds; or pass partial)")


def _first(rows: pd.DataFrame, col: str) -> Any:
    """The first non-null value of ``col`` (None without one)."""
    if col not in rows.columns:
        return None
    values = rows[col].dropna()
    return values.iloc[0] if len(values) else None


def _meta(rows: pd.DataFrame, model: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """GENEB's ``meta``: what the user gave, the parameter count from the rows otherwise."""
    params = rows["n_params"].dropna()
    out: dict[str, Any] = {
        "display": given.get("display") or _first(rows, "model_display") or model,
        "params": int(params.iloc[0]) if len(params) else None,
        "url": given.get("url"),
        "zero_shot": False,  # a frozen-embedding probe
        "training_data": given.get("training_data"),
        "provenance": "self-reported",
        "submitted_by": given.get("submitted_by"),
    }
    if given.get("params") is not None:
        out["params"] = int(given["params"])
    return {k: out[k] for k in META_KEYS}
