"""``task.evaluate(model)`` of a model with GFMBench-API's methods, per task kind.

What each method gives is ``geneb.evaluation.gfmbench`` (its docstring is the method x metric
table). Each evaluator here calls the model's GFMBench methods, hands the representative and
log-likelihoods to geneb's own evaluator of the kind (through ``GenebView``, so the probes and
scores are exactly those a geneb model gets), adds what only GFMBench's methods allow, and
names every metric twice where GFMBench-API has a name for it. ``skipped`` says, per method
(and per output of ``infer_sequence_to_sequence``), why nothing came from it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from geneb.errors import GenebError
from geneb.evaluation.gfmbench import (
    DEFAULT_BATCH,
    EPS,
    GFM_METHODS,
    SEQ2SEQ,
    GenebView,
    SequenceOutputs,
    call_labels_probs,
    classification_metrics,
    gfm_methods_of,
    neg_cosine,
    seq2seq_skipped,
    with_gfmbench_names,
)
from geneb.evaluation.outputs import check_probabilities, model_array
from geneb.vocabulary import CLASSIFICATION

LABELS = "infer_sequence_to_labels_probs"
PAIRS = "infer_variant_ref_sequences_to_labels_probs"
MASKED = "infer_masked_sequence_to_token_probs"
POSITIONS = "sequence_pos_to_prob_pos"

Evaluator = Callable[..., dict[str, Any]]


def gfmbench_dispatch(native: Evaluator) -> Evaluator:
    """``native`` for geneb-style models; the GFMBench evaluation for models with any of
    GFMBench-API's methods (``batch_size`` then sets the batch of each call)."""

    def evaluate(task: Any, model: Any, **options: Any) -> dict[str, Any]:
        if not gfm_methods_of(model):
            return native(task, model, **options)
        bs = options.pop("batch_size", DEFAULT_BATCH)
        if isinstance(bs, bool) or not isinstance(bs, int) or bs < 1:
            raise GenebError(f"evaluate: batch_size must be a positive int, got {bs!r}")
        kind = task.spec.kind
        run = {"zero_shot_variant": _zero_shot, "supervised_variant": _supervised}.get(
            kind, _sequence)
        res, skipped = run(task, model, native, bs, options)
        for m in GFM_METHODS:
            if m not in gfm_methods_of(model):
                skipped.setdefault(m, f"the model has no {m}")
        return {**with_gfmbench_names(res), "skipped": skipped}

    evaluate.__doc__ = native.__doc__
    return evaluate


def _native(native: Evaluator, task: Any, view: GenebView, options: dict[str, Any],
            ) -> dict[str, Any]:
    """geneb's own evaluator on the view, without its skipped (named after geneb methods)."""
    res = native(task, view, **options)
    res.pop("skipped", None)
    return res


def _unused(model: Any, methods: tuple[str, ...], why: str) -> dict[str, str]:
    return {m: why for m in methods if m in gfm_methods_of(model)}


def _sequence(task: Any, model: Any, native: Evaluator, bs: int, options: dict[str, Any],
              ) -> tuple[dict[str, Any], dict[str, str]]:
    kind, k = task.spec.kind, task.spec.n_classes
    tr, te = task.split("train"), task.split("test")
    have = gfm_methods_of(model)
    res: dict[str, Any] = {}
    skipped = _unused(model, (POSITIONS, MASKED, PAIRS),
                      f"a {kind} task scores sequences, not variants")
    if LABELS in have and kind == CLASSIFICATION:
        proba = call_labels_probs(model, LABELS, [te.sequences], k, bs)
        if proba is None:
            skipped[LABELS] = "returned None: no predict_* / classification_* metrics"
        else:
            res.update(classification_metrics(te.labels, proba, k))
    elif LABELS in have:
        skipped[LABELS] = "a regression task has no classes"
    out = None
    if SEQ2SEQ in have:
        out = SequenceOutputs(model, [*tr.sequences, *te.sequences], bs)
        res.update(_native(native, task, GenebView(out, model), options))
    skipped.update(seq2seq_skipped(out, {"sequence_representative": "probe metrics"}))
    return res, skipped


def _zero_shot(task: Any, model: Any, native: Evaluator, bs: int, options: dict[str, Any],
               ) -> tuple[dict[str, Any], dict[str, str]]:
    from geneb.evaluation.variants import _rank_metrics
    from geneb.vep.scorers import distances

    win, ok = task.windows, task.ok_rows()
    half = task.window // 2
    y, ts = task.labels_scores(ok)
    refs = [win.ref_windows[j] for j in win.ref_id[ok]]
    alts = win.alts_of(ok)
    snv = _snv_rows(task, ok)
    have = gfm_methods_of(model)
    res: dict[str, Any] = {}
    skipped = _unused(model, (LABELS, PAIRS), "a zero-shot task trains nothing and scores "
                                              "alleles, not class probabilities")
    out = None
    if SEQ2SEQ in have:
        out = SequenceOutputs(model, [*win.ref_windows, *alts], bs, pos=half)
        res.update(_native(native, task, GenebView(out, model), options))
        if out.representative is not None:  # GFMBench's own cosine score, under its name
            res.update(_rank_metrics("sequence_embeddings_cosinesim", y, neg_cosine(
                out.take("representative", alts), out.take("representative", refs)), None))
        if out.at_position is not None:
            e_ref, e_alt = out.take("at_position", refs), out.take("at_position", alts)
            keep = snv & np.isfinite(e_ref).all(1) & np.isfinite(e_alt).all(1)
            if keep.any():
                d = distances(e_ref[keep], e_alt[keep], "cosine")
                res.update(_rank_metrics("position_cosine", y[keep], d,
                                         None if ts is None else ts[keep]))
                res["position_cosine_n_scored"] = float(keep.sum())
                res.update(_rank_metrics("snv_variant_effect_cosinesim", y[keep],
                                         neg_cosine(e_alt[keep], e_ref[keep]), None))
            elif POSITIONS in have:
                skipped[POSITIONS] = (f"no SNV had an output position (-1 for all {len(ok)} "
                                      "variants): no position_cosine metrics")
            else:
                skipped[POSITIONS] = ("the model has no sequence_pos_to_prob_pos: its "
                                      "sequence_embeddings give no position_cosine metrics")
    skipped.update(seq2seq_skipped(out, {
        "sequence_probs": "llr / sum_probs_llr", "sequence_representative":
        "embedding distances (cosine, l2)", "sequence_embeddings":
        "position_cosine / snv_variant_effect_cosinesim"}))
    if MASKED in have:
        t, rows = task.variants.table, ok[snv]
        m = _masked(model, [alts[i] for i in np.flatnonzero(snv)], half,
                    (list(t["alt"].to_numpy()[rows]), list(t["ref"].to_numpy()[rows])),
                    y[snv], None if ts is None else ts[snv], bs)
        if m is None:
            skipped[MASKED] = "returned (None, None): no masked_llr metrics"
        res.update(m or {})
    return res, skipped


def _snv_rows(task: Any, ok: np.ndarray) -> np.ndarray:
    """Which of the rows ``ok`` are SNVs of two of A, C, G, T (GFMBench's SNV metrics)."""
    t = task.variants.table
    ra, aa = t["ref"].to_numpy()[ok], t["alt"].to_numpy()[ok]
    return np.array([len(r) == 1 and len(a) == 1 and r in "ACGT" and a in "ACGT"
                     for r, a in zip(ra, aa, strict=True)], dtype=bool)


def _masked(model: Any, alts: list[str], pos: int, letters: tuple[list[str], list[str]],
            y: np.ndarray, ts: np.ndarray | None, bs: int) -> dict[str, float] | None:
    """``masked_llr`` from ``(p_alt, p_ref)`` at ``pos`` of the alternate windows (SNVs);
    ``letters``: (alternate, reference) base of each."""
    from geneb.evaluation.variants import _rank_metrics

    parts: list[np.ndarray] = []
    for i in range(0, len(alts), bs):
        batch = alts[i:i + bs]
        got = model.infer_masked_sequence_to_token_probs(
            batch, pos, letters[0][i:i + bs], letters[1][i:i + bs])
        if got is None or (isinstance(got, (tuple, list)) and all(g is None for g in got)):
            if parts:
                raise GenebError(f"model.{MASKED} returned None for some batches and arrays "
                                 "for others; expected the same answer for every batch")
            return None
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            raise GenebError(f"model.{MASKED} returned a {type(got).__name__}; expected a "
                             "tuple (variant_token_probs, reference_token_probs)")
        pair = [model_array(g, MASKED, (len(batch),), "probabilities") for g in got]
        for p in pair:
            check_probabilities(p, MASKED, rows_sum_to_one=False)
        parts.append(np.log(pair[0] + EPS) - np.log(pair[1] + EPS))
    if not parts:
        return {"masked_llr_n_scored": 0.0}
    llr = np.concatenate(parts)
    m = _rank_metrics("masked_llr", y, -llr, ts)
    m["masked_llr_n_scored"] = float(len(llr))
    return m


def _supervised(task: Any, model: Any, native: Evaluator, bs: int, options: dict[str, Any],
                ) -> tuple[dict[str, Any], dict[str, str]]:
    win, ok = task.windows, task.ok_rows()
    y, _ = task.labels_scores(ok)
    refs = [win.ref_windows[j] for j in win.ref_id[ok]]
    alts = win.alts_of(ok)
    have = gfm_methods_of(model)
    res: dict[str, Any] = {}
    skipped = _unused(model, (LABELS, POSITIONS, MASKED),
                      "a supervised variant task scores (alternate, reference) pairs")
    if PAIRS in have:
        proba = call_labels_probs(model, PAIRS, [alts, refs], 2, bs)
        if proba is None:
            skipped[PAIRS] = "returned None: no predict_* / classification_* metrics"
        else:
            res.update(classification_metrics(y, proba, 2))
    out = None
    if SEQ2SEQ in have:
        out = SequenceOutputs(model, [*win.ref_windows, *alts], bs)
        res.update(_native(native, task, GenebView(out, model), options))
    skipped.update(seq2seq_skipped(out, {"sequence_representative": "the supervised probe"}))
    return res, skipped
