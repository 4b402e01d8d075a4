"""``task.evaluate(model)`` for sequence tasks (classification, regression): any model object.

Registered for the kinds ``classification`` and ``regression`` by ``geneb.evaluation``.

A model is any object with some of these methods (GFMBench's inference interface); nothing has
to be registered or subclassed, and a task computes every metric the present methods allow:

- ``embed(seqs) -> (n, d)`` array: a probe on the train split, scored on the test split.
  Classification: geneb's L2 logistic regression at ``C`` (scikit-learn's objective, solved to
  convergence; ``mcc``, ``accuracy``, ``macro_f1``, ``auroc``). Regression: ridge at ``alpha``
  (``spearman``, ``pearson``, ``r2``).
- ``predict(seqs)``: the model's own predictions on the test split, no training. Classification:
  class probabilities ``(n, K)``, class ids ``(n,)``, or on a binary task ``(n,)``
  probabilities of class 1; regression: values ``(n,)`` (the contract:
  ``geneb.evaluation.outputs``). The same metrics, prefixed ``predict_``.
- ``log_likelihood(seqs)`` / ``masked_log_probs(seqs, positions)``: likelihoods score variants
  (``ZeroShotVariantTask``), not a sequence task's labels: reported as skipped.

Every returned value is checked (``geneb.evaluation.outputs``: shape, numbers, finiteness) and
refused in one ``GenebError`` naming the method. A model with GFMBench-API's methods instead
(``infer_sequence_to_labels_probs``, ``infer_sequence_to_sequence``, ...) is evaluated through
``geneb.evaluation.gfmbench``.

The result maps metric name -> value, plus ``skipped``: method -> why no metric came from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from geneb.errors import GenebError
from geneb.evaluation.outputs import class_probabilities, model_array
from geneb.vocabulary import REGRESSION

#: The inference methods a model may implement (any subset).
METHODS: tuple[str, ...] = ("embed", "log_likelihood", "masked_log_probs", "predict")


def methods_of(model: Any) -> list[str]:
    """Which of ``METHODS`` the object has (callable attributes)."""
    return [m for m in METHODS if callable(getattr(model, m, None))]


def call_embed(model: Any, seqs: Sequence[str]) -> np.ndarray:
    """``model.embed`` as a checked (n, d) float64 array (a clear error otherwise)."""
    return model_array(model.embed(list(seqs)), "embed", (len(seqs), None), "embeddings")


def predict_metrics(kind: str, y: np.ndarray, out: Any, n_classes: int,
                    method: str = "predict") -> dict[str, float | None]:
    """Metrics of what ``model.<method>`` predicted for the test split (checked first)."""
    if kind == REGRESSION:
        return _metrics(kind, y, model_array(out, method, (len(y),), "predicted values"), 0)
    proba, ids = class_probabilities(out, method, len(y), n_classes)
    return _metrics(kind, y, proba, n_classes, ids)


def _metrics(kind: str, y: np.ndarray, out: np.ndarray, n_classes: int,
             ids: np.ndarray | None = None) -> dict[str, float | None]:
    """Metrics of values or probabilities ``out`` (hard class ids ``ids``) against ``y``."""
    if kind == REGRESSION:
        from geneb.probe.regression_metrics import regression_metrics

        if out.shape != y.shape:
            raise GenebError(f"predictions have shape {out.shape}; expected {y.shape}")
        return {**regression_metrics(y, out)}
    from geneb.probe.metrics import compute_metrics

    m = compute_metrics(y, out, n_classes) if ids is None else compute_metrics(
        y, out, n_classes, y_pred=ids)
    got: dict[str, float | None] = {"mcc": m["mcc"], "accuracy": m["accuracy"],
                                    "macro_f1": m["macro_f1"]}
    if ids is None:  # hard class ids rank nothing: AUROC needs scores
        got["auroc"] = m["auroc"]
    return got


def evaluate_sequence_task(
    task: Any, model: Any, *, C: float = 1.0, alpha: float = 1.0,  # noqa: N803
    standardize: bool = False,
) -> dict[str, Any]:
    """Every metric ``model``'s methods allow on a classification or regression task."""
    kind = task.spec.kind
    tr, te = task.split("train"), task.split("test")
    have = methods_of(model)
    out: dict[str, Any] = {}
    skipped: dict[str, str] = {}
    if "embed" in have:
        Xtr, Xte = call_embed(model, tr.sequences), call_embed(model, te.sequences)
        out.update(_probe_metrics(task, Xtr, Xte, C=C, alpha=alpha, standardize=standardize))
    else:
        skipped["embed"] = "the model has no embed(seqs): no probe metrics"
    if "predict" in have:
        m = predict_metrics(kind, te.labels, model.predict(list(te.sequences)),
                            task.spec.n_classes)
        out.update({f"predict_{k}": v for k, v in m.items()})
    else:
        skipped["predict"] = "the model has no predict(seqs): no metrics of its own predictions"
    for method in ("log_likelihood", "masked_log_probs"):
        skipped[method] = (f"a {kind} task has no likelihood metric (likelihoods score "
                           "variants: ZeroShotVariantTask)" if method in have
                           else f"the model has no {method}")
    out["skipped"] = skipped
    return out


def _probe_metrics(
    task: Any, Xtr: np.ndarray, Xte: np.ndarray, *, C: float, alpha: float,  # noqa: N803
    standardize: bool,
) -> dict[str, float | None]:
    """The probe on the train embeddings, scored on the test split (one BLAS thread)."""
    from geneb._threads import thread_limit

    kind = task.spec.kind
    tr, te = task.split("train"), task.split("test")
    out: dict[str, float | None] = {}
    with thread_limit(1):
        if kind == REGRESSION:
            from geneb.probe.solvers.ridge import RidgeFit, solve_ridge

            ridge = solve_ridge(Xtr, tr.labels, Xte, [RidgeFit(alpha, np.arange(len(Xtr)))],
                                standardize=standardize)[0]
            out.update(_metrics(kind, te.labels, ridge.pred, 0))
        else:
            from geneb.probe.preprocess import standardize_pair
            from geneb.probe.solvers.sklearn_backend import fit_logreg

            if standardize:
                Xtr, Xte = standardize_pair(Xtr, Xte, dtype=np.float64)
            k = task.spec.n_classes
            fit = fit_logreg(Xtr, tr.labels, Xte, C=C, n_classes=k)
            out.update(_metrics(kind, te.labels, fit.class_proba(), k))
    return out
