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
from pathlib import Path

import numpy as np
import pandas as pd

from geneb.errors import GenebError
from geneb.probe.schema import DEFAULT_C_SWEEP
from geneb.vep.folds import genomic_folds
from geneb.vep.runner import ScoreRun, check_limits, score_table, window_embeddings
from geneb.vep.supervised import FEATURES, PROBE_SCORERS, out_of_fold, variant_features
from geneb.vep.variants import VariantTask, load_variant_task
from geneb.vep.windows import OK, make_windows

#: Status of a variant with a window whose fold could not be scored (never happens when the
#: checks pass; kept so that no row is ever silently dropped).
NOT_IN_FOLD = "not_in_any_fold"


def probe_variants(
    task: str | Path | VariantTask,
    model: str,
    *,
    features: Sequence[str] = tuple(FEATURES),
    Cs: Sequence[float] = DEFAULT_C_SWEEP,  # noqa: N803 - C is the conventional name
    window: int = 1024,
    folds: int | None = None,
    store: str | Path | None = None,
    limit: int | None = None,
    name: str | None = None,
    device: str = "cpu",
    batch_tokens: int | None = None,
    trust_remote_code: bool = False,
    backend: str = "auto",
    standardize: bool = False,
    run: ScoreRun | None = None,
) -> pd.DataFrame:
    """One row per (variant, feature set): out-of-fold P(label 1), fold, C, status."""
    from geneb.probe.plan import resolve_backend
    from geneb.probe.protocol import parse_Cs
    from geneb.probe.solvers import get_backend

    vt = task if isinstance(task, VariantTask) else load_variant_task(task)
    feats = list(dict.fromkeys(features))
    if not feats:
        raise GenebError("no feature set given (--features diff or concat)")
    for f in feats:
        if f not in FEATURES:
            raise GenebError(f"--features {f!r}: expected one of {', '.join(FEATURES)}")
    cs = parse_Cs(Cs)
    solver = get_backend(resolve_backend(backend, "linear"))
    cut, _ = check_limits(vt, limit, batch_tokens)
    win = make_windows(cut, window)
    fold, scheme = genomic_folds(cut, win, folds)
    n_folds = len(np.unique(fold[fold >= 0]))
    if len(cs) > 1 and n_folds < 3:
        raise GenebError(f"choosing C from the sweep needs at least 3 folds (the training "
                         f"folds of each split serve as inner folds), got {n_folds}; give more "
                         "--folds or a single --C")
    _check_classes(cut, fold, len(cs) > 1)
    emb = window_embeddings(vt, model, window=window, store=store, limit=limit, name=name,
                            device=device, batch_tokens=batch_tokens,
                            trust_remote_code=trust_remote_code, run=run)
    ok = emb.ok
    y = cut.table["label"].to_numpy()[ok].astype(np.int64)
    ref = emb.ref[emb.windows.ref_id[ok]]
    parts = []
    for f in feats:
        X = variant_features(ref, emb.alt, f)
        oof = out_of_fold(solver, X, y, fold[ok], cs, standardize=standardize)
        score = np.full(len(cut), np.nan)
        c = np.full(len(cut), np.nan)
        score[ok], c[ok] = oof.score, oof.C
        status = win.status.copy()
        status[(status == OK) & ~np.isfinite(score)] = NOT_IN_FOLD
        df = score_table(cut, win, emb.model, PROBE_SCORERS[f], score, status, "")
        df.insert(df.columns.get_loc("score") + 1, "fold", fold)
        df.insert(df.columns.get_loc("fold") + 1, "C", c)
        df.insert(df.columns.get_loc("C") + 1, "folds", scheme)
        parts.append(df)
    return pd.concat(parts, ignore_index=True)


def _check_classes(vt: VariantTask, fold: np.ndarray, inner: bool) -> None:
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
                raise GenebError(
                    f"task {vt.name!r}: the training variants of fold(s) "
                    f"{', '.join(map(str, s))} have label {int(labels[0])} only "
                    "(a probe needs both classes); use fewer --folds, more variants or one --C")
