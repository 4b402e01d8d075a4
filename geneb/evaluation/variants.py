"""``task.evaluate(model)`` for variant tasks: zero-shot scores and the supervised probe.

Registered for the kinds ``zero_shot_variant`` and ``supervised_variant`` by
``geneb.evaluation``; the task objects (variants, windows, labels) are
``geneb.tasks.variant_tasks``, whose docstring lists what each model method gives.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from geneb.errors import GenebError
from geneb.evaluation.outputs import model_array
from geneb.evaluation.sequence import call_embed, methods_of


def call_log_likelihood(model: Any, seqs: list[str]) -> np.ndarray:
    """``model.log_likelihood`` as a checked ``(n,)`` float64 array."""
    return model_array(model.log_likelihood(list(seqs)), "log_likelihood", (len(seqs),),
                       "log-likelihoods, one per sequence")


def _rank_metrics(name: str, y: np.ndarray, s: np.ndarray, ts: np.ndarray | None
                  ) -> dict[str, float]:
    """AUROC / AUPRC of oriented scores (and Spearman with the task score)."""
    from geneb.vep.evaluate import _spearman, auprc, auroc

    out = {f"{name}_auroc": auroc(y, s), f"{name}_auprc": auprc(y, s)}
    if ts is not None:
        out[f"{name}_spearman"] = _spearman(s, ts)
    return out


def evaluate_zero_shot_variant(task: Any, model: Any, **options: Any) -> dict[str, Any]:
    """Embedding distances, LLR and masked-marginal LLR: whichever ``model`` allows."""
    from geneb.vep.scorers import distances

    win, ok = task.windows, task.ok_rows()
    y, ts = task.labels_scores(ok)
    refs = [win.ref_windows[j] for j in win.ref_id[ok]]
    alts = win.alts_of(ok)
    have = methods_of(model)
    out: dict[str, float | dict[str, str]] = {}  # the metrics, and "skipped": method -> why
    skipped: dict[str, str] = {}
    if "embed" in have:
        e_ref = call_embed(model, win.ref_windows)[win.ref_id[ok]]
        e_alt = call_embed(model, alts)
        for s in ("cosine", "l2"):
            out.update(_rank_metrics(s, y, distances(e_ref, e_alt, s), ts))
    else:
        skipped["embed"] = "the model has no embed(seqs): no embedding distances"
    if "log_likelihood" in have:
        ll_ref = call_log_likelihood(model, win.ref_windows)[win.ref_id[ok]]
        ll_alt = call_log_likelihood(model, alts)
        out.update(_rank_metrics("llr", y, -(ll_alt - ll_ref), ts))
    else:
        skipped["log_likelihood"] = "the model has no log_likelihood(seqs): no LLR"
    if "masked_log_probs" in have:
        out.update(_masked(task, model, ok, refs, y, ts))
    else:
        skipped["masked_log_probs"] = ("the model has no masked_log_probs(seqs, positions): "
                                       "no masked-marginal LLR")
    skipped["predict"] = ("a zero-shot task trains nothing and scores alleles, not a "
                          "trained predictor (SupervisedVariantTask)" if "predict" in have
                          else "the model has no predict")
    out["skipped"] = skipped
    return out


def _masked(task: Any, model: Any, ok: np.ndarray, refs: list[str], y: np.ndarray,
            ts: np.ndarray | None) -> dict[str, float]:
    """The masked-marginal LLR of the SNVs (log p(alt) - log p(ref) at the variant, negated)."""
    t = task.variants.table
    ra, aa = t["ref"].to_numpy()[ok], t["alt"].to_numpy()[ok]
    snv = np.array([len(r) == 1 and len(a) == 1 and r != "N" and a != "N"
                    for r, a in zip(ra, aa, strict=True)], dtype=bool)
    idx = np.flatnonzero(snv)
    lp = model_array(model.masked_log_probs([refs[i] for i in idx],
                                            [task.window // 2] * len(idx)),
                     "masked_log_probs", (len(idx), 4), "log-probabilities of A, C, G, T")
    if lp.max() > 1e-6:
        raise GenebError(f"model.masked_log_probs returned values up to {lp.max():.3g}; "
                         "expected log-probabilities (<= 0)")
    code = {b: k for k, b in enumerate("ACGT")}
    rows = np.arange(len(idx))
    llr = (lp[rows, [code[a] for a in aa[idx]]] - lp[rows, [code[r] for r in ra[idx]]])
    m = _rank_metrics("masked_llr", y[idx], -llr, None if ts is None else ts[idx])
    m["masked_llr_n_scored"] = float(len(idx))
    return m


def evaluate_supervised_variant(task: Any, model: Any, *, folds: int | None = None,
                                **options: Any) -> dict[str, Any]:
    """The genomic-block cross-validated logistic probe on (reference, alternate) embeddings."""
    from geneb.probe.solvers import get_backend
    from geneb.protocol import DEFAULT_C_SWEEP
    from geneb.vep.folds import genomic_folds
    from geneb.vep.supervised import logistic_learner, out_of_fold, variant_features

    have = methods_of(model)
    out: dict[str, float | dict[str, str]] = {}  # the metrics, and "skipped": method -> why
    skipped: dict[str, str] = {}
    if "embed" in have:
        win, ok = task.windows, task.ok_rows()
        y, _ = task.labels_scores(ok)
        fold = genomic_folds(task.variants, win, folds)[0][ok]
        e_ref = call_embed(model, win.ref_windows)[win.ref_id[ok]]
        e_alt = call_embed(model, win.alts_of(ok))
        X = variant_features(e_ref, e_alt, options.get("features", "diff"))
        oof = out_of_fold(logistic_learner(get_backend("sklearn")), X, y, fold,
                          options.get("Cs", DEFAULT_C_SWEEP))
        out.update({k.removeprefix("probe_"): v
                    for k, v in _rank_metrics("probe", y, oof.score, None).items()})
    else:
        skipped["embed"] = "the model has no embed(seqs): no probe"
    for m in ("log_likelihood", "masked_log_probs", "predict"):
        skipped[m] = ("a supervised task scores a probe trained on embeddings; likelihoods "
                      "are zero-shot (ZeroShotVariantTask)" if m != "predict" else
                      "predict(seqs) scores single sequences, not variant pairs")
        if m not in have:
            skipped[m] = f"the model has no {m}"
    out["skipped"] = skipped
    return out
