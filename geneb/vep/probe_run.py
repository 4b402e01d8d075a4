"""``geneb vep probe``: embed a variant task's windows, then probe them by genomic-block CV.

Everything is checked first (task, window, features, C sweep, backend, folds with both classes
in every training set), then the windows are embedded (kept in / reused from the store exactly
as ``geneb vep score`` keeps them), then one probe per feature set is cross-validated
(``geneb.vep.supervised``). The result is a score table like ``geneb vep score``'s (one row per
variant and feature set; scorer ``probe-diff`` / ``probe-concat``) with the columns ``fold``
and ``C`` added, so ``geneb vep evaluate`` puts the supervised probes beside the zero-shot
scorers of the same model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from geneb.constraints import (
    BACKEND,
    BOOL,
    C_VALUE,
    RIDGE_ALPHA,
    Interval,
    ListOf,
    StrOptions,
    validate_params,
    validated_list,
)
from geneb.errors import GenebError
from geneb.protocol import DEFAULT_ALPHA_SWEEP, DEFAULT_C_SWEEP
from geneb.tasks.variants import VariantTask, load_variant_task
from geneb.tasks.windows import OK, Windows, check_window, make_windows
from geneb.vep.capabilities import FEATURES, PROBE_SCORERS, RIDGE_SCORERS
from geneb.vep.context import check_reference_room
from geneb.vep.folds import genomic_folds, single_value_advice
from geneb.vep.runner import LIMITS, ScoreRun, cut_to_limit, score_table, window_embeddings
from geneb.vep.scorers import ZERO_EMBEDDING
from geneb.vep.supervised import (
    logistic_learner,
    out_of_fold,
    ridge_learner,
    variant_features,
)
from geneb.vocabulary import DEFAULT_DEVICE, DEFAULT_VEP_WINDOW

#: Status of a variant with a window whose fold could not be scored (never happens when the
#: checks pass; kept so that no row is ever silently dropped).
NOT_IN_FOLD = "not_in_any_fold"


#: ``probe_variants``' parameters, checked before any work.
VEP_PROBE_PARAMS = {
    "features": ListOf(StrOptions(tuple(FEATURES)), unique=True),
    "Cs": ListOf(C_VALUE, unique=True),
    "alphas": ListOf(RIDGE_ALPHA, unique=True),
    "folds": Interval(int, 2, None),
    "backend": BACKEND,
    "standardize": BOOL,
    "target": StrOptions(("label", "score")),
    **LIMITS,
}


@dataclass(frozen=True)
class VariantProbePlan:
    """Everything ``probe_variants`` decides before embedding: the variants kept, their
    windows, folds, the penalty sweep and the learner (``plan_variant_probe`` makes it)."""

    source: VariantTask  # the task as given (its windows are embedded, cut to ``limit``)
    window: int
    limit: int | None
    task: VariantTask  # the variants kept (the first ``limit``)
    windows: Windows
    fold: np.ndarray
    scheme: str
    sweep: tuple[float, ...]
    learner: Any
    features: tuple[str, ...]
    regression: bool


@validate_params(VEP_PROBE_PARAMS)
def plan_variant_probe(
    task: str | Path | VariantTask,
    *,
    features: Sequence[str] = tuple(FEATURES),
    Cs: Sequence[float] = DEFAULT_C_SWEEP,  # noqa: N803 - C is the conventional name
    window: int = DEFAULT_VEP_WINDOW,
    folds: int | None = None,
    limit: int | None = None,
    batch_tokens: int | None = None,
    backend: str = "sklearn",
    standardize: bool = False,
    target: str = "label",
    alphas: Sequence[float] | str = DEFAULT_ALPHA_SWEEP,
) -> VariantProbePlan:
    """Check a supervised probe of a variant task before any work (nothing is embedded):
    target, sweep, backend, windows, folds and the classes of every training set. ``geneb
    run`` calls it for every [vep] task before extracting anything."""
    from geneb.probe.solvers import get_backend, resolve_backend

    vt = task if isinstance(task, VariantTask) else load_variant_task(task)
    if target == "score" and not vt.has_score:
        raise GenebError(f"target: 'score' asked for, but task {vt.name!r} has no score column",
                         param="target")
    regression = target == "score"
    cs = validated_list(alphas, float) if regression else validated_list(Cs, float)
    learner = (ridge_learner(standardize) if regression else
               logistic_learner(get_backend(resolve_backend(backend, "linear")), standardize))
    cut, _ = cut_to_limit(vt, limit)
    check_reference_room(cut, check_window(window))
    win = make_windows(cut, window)
    fold, scheme = genomic_folds(cut, win, folds, sweep=learner.param if len(cs) > 1 else None)
    n_folds = len(np.unique(fold[fold >= 0]))
    one = single_value_advice(learner.param)
    if len(cs) > 1 and n_folds < 3:
        more = (f"the folds are one per chromosome ({n_folds}): give{one}"
                if scheme == "chromosome" else _three_folds(cut, window, learner.param))
        raise GenebError(f"choosing {learner.param} from the sweep needs at least 3 folds (the "
                         f"training folds of each split serve as inner folds), got {n_folds}; "
                         f"{more}")
    if not regression:
        _check_classes(cut, fold, len(cs) > 1, scheme)
    return VariantProbePlan(vt, window, limit, cut, win, fold, scheme, cs, learner,
                            tuple(features), regression)


@validate_params(VEP_PROBE_PARAMS)
def probe_variants(
    task: str | Path | VariantTask,
    model: str,
    *,
    features: Sequence[str] = tuple(FEATURES),
    Cs: Sequence[float] = DEFAULT_C_SWEEP,  # noqa: N803 - C is the conventional name
    window: int = DEFAULT_VEP_WINDOW,
    folds: int | None = None,
    store: str | Path | None = None,
    limit: int | None = None,
    name: str | None = None,
    device: str = DEFAULT_DEVICE,
    batch_tokens: int | None = None,
    trust_remote_code: bool = False,
    backend: str = "sklearn",
    standardize: bool = False,
    target: str = "label",
    alphas: Sequence[float] | str = DEFAULT_ALPHA_SWEEP,
    run: ScoreRun | None = None,
) -> pd.DataFrame:
    """One row per (variant, feature set): out-of-fold P(label 1), fold, C, status.

    ``target="score"``: ridge regression of the task's ``score`` column over ``alphas``
    instead (scorer ``ridge-*``, column ``alpha``; ``score`` = the out-of-fold prediction)."""
    pp = plan_variant_probe(task, features=features, Cs=Cs, window=window, folds=folds,
                            limit=limit, batch_tokens=batch_tokens, backend=backend,
                            standardize=standardize, target=target, alphas=alphas)
    return run_variant_probe(pp, model, store=store, name=name, device=device,
                             batch_tokens=batch_tokens, trust_remote_code=trust_remote_code,
                             run=run)


def run_variant_probe(
    pp: VariantProbePlan,
    model: str,
    *,
    store: str | Path | None = None,
    name: str | None = None,
    device: str = DEFAULT_DEVICE,
    batch_tokens: int | None = None,
    trust_remote_code: bool = False,
    run: ScoreRun | None = None,
) -> pd.DataFrame:
    """Embed the planned task's windows with ``model`` (kept in / reused from ``store``) and
    cross-validate the planned probes: ``probe_variants``' work after its checks (``geneb run``
    plans every task before any work, then calls this per model)."""
    emb = window_embeddings(pp.source, model, window=pp.window, store=store, limit=pp.limit,
                            name=name, device=device, batch_tokens=batch_tokens,
                            trust_remote_code=trust_remote_code, run=run)
    return _probe_tables(pp, emb)


def _probe_tables(pp: VariantProbePlan, emb: Any) -> pd.DataFrame:
    """Cross-validate one probe per feature set on the embedded windows; one table."""
    cut, win, learner = pp.task, emb.windows, pp.learner
    ok = emb.ok
    y = (cut.table["score"].to_numpy(np.float64)[ok] if pp.regression
         else cut.table["label"].to_numpy()[ok].astype(np.int64))
    ref = emb.ref[emb.windows.ref_id[ok]]
    # an all-zero window embedding (k-mers longer than the window) carries nothing: such a
    # variant is neither trained on nor scored, and says why (as `geneb vep score` does)
    zero = ~(ref.any(axis=1) & emb.alt.any(axis=1))
    fold = pp.fold.copy()  # the planned folds stay in the table; zero rows are left out
    fold[ok[zero]] = -1
    parts = []
    for f in pp.features:
        X = variant_features(ref, emb.alt, f)
        oof = out_of_fold(learner, X, y, fold[ok], pp.sweep)
        score = np.full(len(cut), np.nan)
        c = np.full(len(cut), np.nan)
        score[ok], c[ok] = oof.score, oof.C
        status = win.status.copy()
        status[ok[zero]] = ZERO_EMBEDDING
        status[(status == OK) & ~np.isfinite(score)] = NOT_IN_FOLD
        name = (RIDGE_SCORERS if pp.regression else PROBE_SCORERS)[f]
        df = score_table(cut, win, emb.model, name, score, status, "")
        df.insert(df.columns.get_loc("score") + 1, "fold", pp.fold)
        df.insert(df.columns.get_loc("fold") + 1, learner.param, c)
        df.insert(df.columns.get_loc(learner.param) + 1, "folds", pp.scheme)
        parts.append(df)
    return pd.concat(parts, ignore_index=True)


def _three_folds(vt: VariantTask, window: int, param: str) -> str:
    """Advice for a sweep over too few block folds (every way checked to work)."""
    from geneb.vep.folds import block_advice, count_blocks

    n = count_blocks(vt, window)
    if n >= 3:
        return f"use folds=3 or{single_value_advice(param)}"
    return block_advice(vt, window, n, 3, param)


def _check_classes(vt: VariantTask, fold: np.ndarray, inner: bool, scheme: str) -> None:
    """Every training set (and, with a C sweep, every inner one) holds both labels."""
    y = vt.table["label"].to_numpy()
    ids = np.unique(fold[fold >= 0])
    for f in ids:
        sets = [ids[ids != f]]
        if inner:
            sets += [ids[(ids != f) & (ids != g)] for g in ids if g != f]
        for s in sets:
            labels = np.unique(y[np.isin(fold, s)])
            if len(labels) < 2:
                ways = ([f"fewer folds (folds={len(ids) - 1})"]
                        if scheme == "blocks" and len(ids) > 2 else [])
                ways += ["more variants of both labels"] + (
                    [single_value_advice("C").strip()] if inner else [])
                raise GenebError(
                    f"task {vt.name!r}: the training variants of fold(s) "
                    f"{', '.join(map(str, s))} have label {int(labels[0])} only "
                    f"(a probe needs both classes); try {' or '.join(ways)}")
