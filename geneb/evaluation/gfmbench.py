"""A model written against GFMBench-API's interface, evaluated by ``task.evaluate(model)``.

GFMBench-API (NVIDIA/GFMBench-api, ``gfmbench_api/tasks/base/base_gfm_model.py`` @ bab164e)
asks a model for some of five methods, each of which may return None ("not supported": the
metrics that need it are skipped). geneb recognises such a model by these method names (duck
typing; ``gfmbench_api`` is never imported) and computes every metric the methods allow, each
under geneb's name and, where GFMBench-API has one, under GFMBench's too (:data:`GFMBENCH_NAME`;
the GFMBench name by GFMBench's own rule: the same number, except that its cosine score
(:func:`neg_cosine`) and argmax can order exact ties apart from geneb's). Calls go in
batches of ``batch_size`` (default 32, GFMBench's), with
``conditional_input=None`` where the method takes it (geneb's tasks carry no metadata); an
exception a method raises propagates (GFMBench's "safe" mode would turn it into None: geneb
does not hide a failing model); every answer is checked as
geneb's own methods' are (``geneb.evaluation.outputs``: one ``GenebError`` naming the method).

- ``infer_sequence_to_labels_probs(seqs)`` -> ``(B, K)`` probabilities: on a classification
  task's test split ``predict_*`` (geneb) = ``classification_*`` (GFMBench; MCC and accuracy of
  the most probable class, AUROC and AUPRC one-vs-rest macro on several classes);
- ``infer_sequence_to_sequence(seqs)`` -> ``(sequence_probs (B, L), sequence_embeddings
  (B, L, H), sequence_representative (B, H))``:
  the representative is the model's embedding: the probe of a sequence task (``mcc``, ... or
  ``spearman``, ...), the supervised variant probe, and on a zero-shot task ``cosine_*`` /
  ``l2_*`` = ``sequence_embeddings_{cosinesim,l2}_*``; ``sequence_probs`` give the window's
  log-likelihood ``sum log(p + 1e-10)`` (GFMBench's epsilon): ``llr_*`` = ``sum_probs_llr_*``;
  ``sequence_embeddings`` at the variant's output position (``sequence_pos_to_prob_pos``):
  ``position_cosine_*`` = ``snv_variant_effect_cosinesim_*`` (SNVs whose position is not -1);
- ``infer_masked_sequence_to_token_probs(alt_windows, pos, alt_letters, ref_letters)`` ->
  ``(p_alt (B,), p_ref (B,))`` (called as GFMBench's SNV tasks call it): ``masked_llr_*`` =
  ``snv_variant_effect_prediction_masked_llr_*`` (score ``-(log p_alt - log p_ref)``, SNVs);
- ``infer_variant_ref_sequences_to_labels_probs(alt_windows, ref_windows)`` -> ``(B, 2)``: on a
  supervised variant task, ``predict_*`` = ``classification_*`` on every variant with a window
  (the model is already trained; geneb's own probe is cross-validated instead).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from geneb.errors import GenebError
from geneb.evaluation.outputs import check_probabilities, model_array

#: GFMBench-API's model methods (base_gfm_model.py).
GFM_METHODS: tuple[str, ...] = (
    "infer_sequence_to_labels_probs", "infer_sequence_to_sequence", "sequence_pos_to_prob_pos",
    "infer_masked_sequence_to_token_probs", "infer_variant_ref_sequences_to_labels_probs")
SEQ2SEQ = "infer_sequence_to_sequence"
SEQ2SEQ_OUTPUTS = ("sequence_probs", "sequence_embeddings", "sequence_representative")
EPS = 1e-10  # GFMBench's epsilon inside log(p + eps)
DEFAULT_BATCH = 32

#: geneb metric name -> GFMBench-API's metric name (gfmbench_api/metrics/*.py ``name``).
GFMBENCH_NAME: dict[str, str] = {
    **{f"predict_{m}": f"classification_{m}" for m in ("mcc", "accuracy", "auroc", "auprc")},
    **{f"{g}_{a}": f"sequence_embeddings_{m}_{a}" for g, m in (("cosine", "cosinesim"),
                                                              ("l2", "l2"))
       for a in ("auroc", "auprc")},
    **{f"llr_{a}": f"sum_probs_llr_{a}" for a in ("auroc", "auprc")},
    **{f"position_cosine_{a}": f"snv_variant_effect_cosinesim_{a}" for a in ("auroc", "auprc")},
    **{f"masked_llr_{a}": f"snv_variant_effect_prediction_masked_llr_{a}"
       for a in ("auroc", "auprc")},
}


def gfm_methods_of(model: Any) -> list[str]:
    """Which of GFMBench-API's methods the object has (callable attributes)."""
    return [m for m in GFM_METHODS if callable(getattr(model, m, None))]


def call_gfm(model: Any, method: str, *args: Any) -> Any:
    """``model.<method>(*args, None)``: ``conditional_input=None`` where the method takes it
    (GFMBench always passes it; some models, such as its own Evo 2 example, omit the
    parameter, and GFMBench's safe mode then silently reads None: geneb calls without it)."""
    import inspect

    fn = getattr(model, method)
    try:
        inspect.signature(fn).bind(*args, None)
    except TypeError:
        return fn(*args)
    except ValueError:  # no signature to read (a builtin): GFMBench's call
        pass
    return fn(*args, None)


def _batches(n: int, size: int) -> list[slice]:
    return [slice(i, min(n, i + size)) for i in range(0, n, size)]


def _stack(parts: list[np.ndarray | None], method: str) -> np.ndarray | None:
    """Batches joined; None when every batch said None, refused when only some did."""
    if all(p is None for p in parts):
        return None
    if any(p is None for p in parts):
        raise GenebError(f"model.{method} returned None for some batches and arrays for others"
                         "; expected the same answer for every batch")
    widths = {p.shape[1:] for p in parts if p is not None}
    if len(widths) > 1:
        raise GenebError(f"model.{method} returned batches of different widths {sorted(widths)}"
                         "; expected one width")
    return np.concatenate([p for p in parts if p is not None])


def call_labels_probs(model: Any, method: str, args: Sequence[Sequence[str]], n_classes: int,
                      batch_size: int) -> np.ndarray | None:
    """``model.<method>(*batch, None)`` over all rows: checked ``(n, K)`` probabilities."""
    n = len(args[0])
    parts: list[np.ndarray | None] = []
    for sl in _batches(n, batch_size):
        out = call_gfm(model, method, *[list(a[sl]) for a in args])
        if out is not None:
            out = model_array(out, method, (sl.stop - sl.start, n_classes), "class probabilities")
            check_probabilities(out, method, rows_sum_to_one=True)
        parts.append(out)
    return _stack(parts, method)


class SequenceOutputs:
    """``infer_sequence_to_sequence`` of a set of sequences, batched, checked and reduced to
    what metrics use: per sequence its log-likelihood, representative and (with ``pos``) the
    per-position embedding at ``sequence_pos_to_prob_pos(batch, pos)`` (NaN row at -1)."""

    def __init__(self, model: Any, seqs: Sequence[str], batch_size: int,
                 pos: int | None = None) -> None:
        self.seqs = list(seqs)
        parts: dict[str, list[np.ndarray | None]] = {k: [] for k in ("ll", "rep", "at")}
        for sl in _batches(len(self.seqs), batch_size):
            batch = self.seqs[sl]
            probs, emb, rep = self._call(model, batch)
            parts["ll"].append(None if probs is None else
                               np.log(probs + EPS).sum(axis=1))
            parts["rep"].append(rep)
            parts["at"].append(None if emb is None or pos is None else
                               self._at(model, batch, emb, pos))
        self.log_likelihood = _stack(parts["ll"], f"{SEQ2SEQ} (sequence_probs)")
        self.representative = _stack(parts["rep"], f"{SEQ2SEQ} (sequence_representative)")
        self.at_position = _stack(parts["at"], f"{SEQ2SEQ} (sequence_embeddings)")
        self.index = {s: i for i, s in enumerate(self.seqs)}

    @staticmethod
    def _call(model: Any, batch: list[str]) -> tuple[Any, Any, Any]:
        out = call_gfm(model, SEQ2SEQ, batch)
        if out is None:
            return None, None, None
        if not isinstance(out, (tuple, list)) or len(out) != 3:
            raise GenebError(f"model.{SEQ2SEQ} returned a {type(out).__name__}; expected a "
                             "tuple (sequence_probs, sequence_embeddings, "
                             "sequence_representative), each an array or None")
        b = len(batch)
        probs, emb, rep = out
        if probs is not None:
            probs = model_array(probs, f"{SEQ2SEQ} (sequence_probs)", (b, None),
                                "per-position probabilities")
            check_probabilities(probs, f"{SEQ2SEQ} (sequence_probs)", rows_sum_to_one=False)
        if emb is not None:
            emb = model_array(emb, f"{SEQ2SEQ} (sequence_embeddings)", (b, None, None),
                              "per-position embeddings")
        if rep is not None:
            rep = model_array(rep, f"{SEQ2SEQ} (sequence_representative)", (b, None),
                              "one embedding per sequence")
        return probs, emb, rep

    @staticmethod
    def _at(model: Any, batch: list[str], emb: np.ndarray, pos: int) -> np.ndarray:
        method = "sequence_pos_to_prob_pos"
        if not callable(getattr(model, method, None)):  # no position: no row is scored
            return np.full((len(batch), emb.shape[2]), np.nan)
        idx = model_array(getattr(model, method)(batch, pos), method, (len(batch),),
                          "output positions (-1: none)")
        if not np.all(idx == np.round(idx)):
            raise GenebError(f"model.{method} returned non-integer positions; expected ints")
        idx = idx.astype(np.int64)
        out = np.full((len(batch), emb.shape[2]), np.nan)
        good = (idx >= 0) & (idx < emb.shape[1])
        out[good] = emb[np.flatnonzero(good), idx[good]]
        return out

    def take(self, what: str, seqs: Sequence[str]) -> np.ndarray:
        arr: np.ndarray = getattr(self, what)
        picked: np.ndarray = arr[[self.index[s] for s in seqs]]
        return picked


class GenebView:
    """geneb's methods (``embed``, ``log_likelihood``) over a ``SequenceOutputs``: only those
    whose output the model gave exist, so geneb's evaluators skip the rest. A model that also
    has geneb's own methods keeps them: they give the geneb-named metrics."""

    def __init__(self, outputs: SequenceOutputs, model: Any = None) -> None:
        from geneb.evaluation.sequence import methods_of

        if outputs.representative is not None:
            self.embed: Callable[..., Any] = lambda seqs: outputs.take("representative", seqs)
        if outputs.log_likelihood is not None:
            self.log_likelihood: Callable[..., Any] = (
                lambda seqs: outputs.take("log_likelihood", seqs))
        for m in methods_of(model) if model is not None else ():
            setattr(self, m, getattr(model, m))


def seq2seq_skipped(outputs: SequenceOutputs | None, uses: dict[str, str]) -> dict[str, str]:
    """Why no metric came from each output of ``infer_sequence_to_sequence`` (or the method)."""
    if outputs is None:
        return {SEQ2SEQ: "the model has no infer_sequence_to_sequence"}
    got = {"sequence_probs": outputs.log_likelihood, "sequence_representative":
           outputs.representative, "sequence_embeddings": outputs.at_position}
    out = {}
    for name in SEQ2SEQ_OUTPUTS:
        if name not in uses:
            out[f"{SEQ2SEQ}.{name}"] = "this task has no metric of it"
        elif got[name] is None:
            out[f"{SEQ2SEQ}.{name}"] = f"returned None: no {uses[name]}"
    return out


def classification_metrics(y: np.ndarray, proba: np.ndarray, n_classes: int,
                           ) -> dict[str, float | None]:
    """geneb's ``predict_*`` of class probabilities, plus ``predict_auprc`` (GFMBench's rule:
    binary AP of class 1, else the macro mean of one-vs-rest AP)."""
    from geneb.evaluation.sequence import predict_metrics
    from geneb.vep.evaluate import auprc

    m: dict[str, float | None] = {f"predict_{k}": v for k, v in
                                  predict_metrics("classification", y, proba, n_classes).items()}
    if n_classes == 2:
        m["predict_auprc"] = auprc(y, proba[:, 1])
    else:
        m["predict_auprc"] = float(np.mean([auprc((y == c).astype(int), proba[:, c])
                                            for c in range(n_classes)]))
    # GFMBench's MCC and accuracy take numpy's argmax (geneb's breaks near-ties within 1e-9
    # towards the lower class): computed its way, so the two names differ only on such ties
    from geneb.probe.metrics import compute_metrics

    arg = compute_metrics(y, proba, n_classes, y_pred=np.argmax(proba, axis=1))
    m["classification_mcc"], m["classification_accuracy"] = arg["mcc"], arg["accuracy"]
    return m


def neg_cosine(variant: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """GFMBench's cosine score: ``-cos`` of the rows, each normalised with 1e-10 added to its
    norm (``SequenceEmbeddingsCosineSimAUROC``): the same ranking as geneb's ``1 - cos`` up to
    rounding, which can order exactly tied pairs (k-mer spectra tie often) differently."""
    v = variant / (np.linalg.norm(variant, axis=1, keepdims=True) + EPS)
    r = reference / (np.linalg.norm(reference, axis=1, keepdims=True) + EPS)
    return np.asarray(-(v * r).sum(axis=1), dtype=np.float64)


def with_gfmbench_names(metrics: dict[str, Any]) -> dict[str, Any]:
    """``metrics`` plus each one GFMBench-API names, under that name too (same value), unless
    the GFMBench name was computed its own way already (``neg_cosine``, argmax)."""
    out = dict(metrics)
    for g, name in GFMBENCH_NAME.items():
        if g in metrics:
            out.setdefault(name, metrics[g])
    return out
