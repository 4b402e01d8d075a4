"""Variant tasks in the task API: zero-shot and supervised variant-effect prediction.

Both wrap a validated variant folder (``geneb.tasks.variants``) and its windows at ``window``
bases (``geneb.tasks.windows``: the reference window and the same window carrying the allele).
They are ``geneb.tasks.Task`` objects whose ``splits`` are empty (a variant task has no
sequence splits) and whose ``evaluate(model)`` uses whichever methods the model has:

``ZeroShotVariantTask`` (nothing is trained; AUROC / AUPRC of label 1, plus Spearman with the
task's ``score`` column when it has one):

- ``embed(seqs)``: ``cosine`` (1 - cosine similarity) and ``l2`` distances of the reference and
  alternate window embeddings (higher = label 1);
- ``log_likelihood(seqs)``: ``llr`` = LL(alternate window) - LL(reference window), negated (an
  allele the model finds less likely is predicted damaging);
- ``masked_log_probs(seqs, positions)``: for each sequence and its one 0-based position, the
  log-probabilities of A, C, G, T there with that position masked (an ``(n, 4)`` array);
  ``masked_llr`` = log p(alt) - log p(ref) at the variant's base of the reference window,
  negated; SNVs only (other variants are left out and counted in ``masked_llr_n_scored``);
- ``predict``: skipped (a trained predictor is the supervised task's business).

``SupervisedVariantTask``: ``embed`` -> the genomic-block cross-validated logistic probe of
``geneb vep probe`` (features ``alt - ref``, C chosen inside each training set); AUROC / AUPRC
of the out-of-fold probabilities. ``train_data()`` gives the (reference, alternate) window
pairs and labels of the variants with a window.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from geneb.errors import GenebError
from geneb.tasks.evaluate import call_embed, methods_of
from geneb.tasks.spec import Task, TaskSpec

DEFAULT_WINDOW = 1024
VARIANT_CATEGORY = "variant_effect"


@dataclass(frozen=True, eq=False)
class _VariantTask(Task):
    """Shared part: the variant table, the window, the windows (made on first use)."""

    variants: Any = None  # geneb.tasks.variants.VariantTask
    window: int = DEFAULT_WINDOW
    kind = "variant"  # the subclasses name theirs
    METRICS: ClassVar[dict[str, list[str]]] = {}

    @classmethod
    def from_folder(cls, folder: str, window: int = DEFAULT_WINDOW) -> _VariantTask:
        from geneb.tasks.variants import load_variant_task
        from geneb.tasks.windows import check_window

        vt = load_variant_task(folder)
        spec = TaskSpec(name=vt.name, category=VARIANT_CATEGORY, n_classes=2,
                        label_names=("0", "1"), splits=(), path=str(vt.folder), kind=cls.kind)
        return cls(spec, {}, {"folder": str(vt.folder), "source": str(vt.source)}, vt,
                   check_window(window))

    @cached_property
    def windows(self) -> Any:
        """The reference / alternate windows of every variant (made once)."""
        from geneb.tasks.windows import make_windows

        return make_windows(self.variants, self.window)

    def _ok(self) -> np.ndarray:
        from geneb.tasks.windows import OK

        return np.flatnonzero(self.windows.status == OK)

    def attributes(self) -> dict[str, Any]:
        t = self.variants.table
        return {"name": self.name, "kind": self.kind, "window": self.window,
                "n_variants": len(t), "n_with_window": len(self._ok()),
                "n_positive": int((t["label"] == 1).sum()),
                "has_score": bool(self.variants.has_score), "metrics": self.METRICS}

    def _labels_scores(self, ok: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        t = self.variants.table
        y = t["label"].to_numpy()[ok]
        ts = t["score"].to_numpy(np.float64)[ok] if self.variants.has_score else None
        return y, ts


def _rank_metrics(name: str, y: np.ndarray, s: np.ndarray, ts: np.ndarray | None
                  ) -> dict[str, float]:
    """AUROC / AUPRC of oriented scores (and Spearman with the task score)."""
    from geneb.vep.evaluate import _spearman, auprc, auroc

    out = {f"{name}_auroc": auroc(y, s), f"{name}_auprc": auprc(y, s)}
    if ts is not None:
        out[f"{name}_spearman"] = _spearman(s, ts)
    return out


@dataclass(frozen=True, eq=False)
class ZeroShotVariantTask(_VariantTask):
    """Zero-shot variant scoring from a model's embeddings or likelihoods (module doc)."""

    kind = "zero_shot_variant"
    METRICS = {"embed": ["cosine_auroc", "cosine_auprc", "l2_auroc", "l2_auprc"],
               "log_likelihood": ["llr_auroc", "llr_auprc"],
               "masked_log_probs": ["masked_llr_auroc", "masked_llr_auprc"]}  # noqa: RUF012

    def train_data(self) -> tuple[list[str], np.ndarray]:
        raise GenebError(f"task {self.name!r} is zero-shot: it has no training data (use "
                         "load_task(..., supervised=True) for a probe's finetune set)")

    def evaluate(self, model: Any, **options: Any) -> dict[str, Any]:
        from geneb.vep.scorers import distances

        win, ok = self.windows, self._ok()
        y, ts = self._labels_scores(ok)
        refs = [win.ref_windows[j] for j in win.ref_id[ok]]
        alts = [win.alt_windows[i] for i in ok]
        have, out, skipped = methods_of(model), {}, {}
        if "embed" in have:
            e_ref = call_embed(model, win.ref_windows)[win.ref_id[ok]]
            e_alt = call_embed(model, alts)
            for s in ("cosine", "l2"):
                out.update(_rank_metrics(s, y, distances(e_ref, e_alt, s), ts))
        else:
            skipped["embed"] = "the model has no embed(seqs): no embedding distances"
        if "log_likelihood" in have:
            ll_ref = np.asarray(model.log_likelihood(win.ref_windows), np.float64)[win.ref_id[ok]]
            ll_alt = np.asarray(model.log_likelihood(alts), np.float64)
            out.update(_rank_metrics("llr", y, -(ll_alt - ll_ref), ts))
        else:
            skipped["log_likelihood"] = "the model has no log_likelihood(seqs): no LLR"
        if "masked_log_probs" in have:
            out.update(self._masked(model, ok, refs, y, ts))
        else:
            skipped["masked_log_probs"] = ("the model has no masked_log_probs(seqs, positions): "
                                           "no masked-marginal LLR")
        skipped["predict"] = ("a zero-shot task trains nothing and scores alleles, not a "
                              "trained predictor (SupervisedVariantTask)" if "predict" in have
                              else "the model has no predict")
        out["skipped"] = skipped
        return out

    def _masked(self, model: Any, ok: np.ndarray, refs: list[str], y: np.ndarray,
                ts: np.ndarray | None) -> dict[str, float]:
        t = self.variants.table
        ra, aa = t["ref"].to_numpy()[ok], t["alt"].to_numpy()[ok]
        snv = np.array([len(r) == 1 and len(a) == 1 and r != "N" and a != "N"
                        for r, a in zip(ra, aa, strict=True)], dtype=bool)
        idx = np.flatnonzero(snv)
        lp = np.asarray(model.masked_log_probs([refs[i] for i in idx],
                                               [self.window // 2] * len(idx)), np.float64)
        if lp.shape != (len(idx), 4):
            raise GenebError(f"model.masked_log_probs returned shape {lp.shape}; expected "
                             f"({len(idx)}, 4): log-probabilities of A, C, G, T")
        code = {b: k for k, b in enumerate("ACGT")}
        rows = np.arange(len(idx))
        llr = (lp[rows, [code[a] for a in aa[idx]]] - lp[rows, [code[r] for r in ra[idx]]])
        m = _rank_metrics("masked_llr", y[idx], -llr, None if ts is None else ts[idx])
        m["masked_llr_n_scored"] = float(len(idx))
        return m


@dataclass(frozen=True, eq=False)
class SupervisedVariantTask(_VariantTask):
    """A logistic probe on (reference, alternate) embeddings, genomic-block CV (module doc)."""

    kind = "supervised_variant"
    METRICS = {"embed": ["auroc", "auprc"]}  # noqa: RUF012

    def train_data(self) -> tuple[list[tuple[str, str]], np.ndarray]:
        """(reference window, alternate window) of every variant with a window, and labels."""
        win, ok = self.windows, self._ok()
        pairs = [(win.ref_windows[win.ref_id[i]], win.alt_windows[i]) for i in ok]
        return pairs, self.variants.table["label"].to_numpy()[ok].copy()

    def evaluate(self, model: Any, *, folds: int | None = None, **options: Any
                 ) -> dict[str, Any]:
        from geneb.probe.solvers import get_backend
        from geneb.protocol import DEFAULT_C_SWEEP
        from geneb.vep.folds import genomic_folds
        from geneb.vep.supervised import logistic_learner, out_of_fold, variant_features

        have, out, skipped = methods_of(model), {}, {}
        if "embed" in have:
            win, ok = self.windows, self._ok()
            y, _ = self._labels_scores(ok)
            fold = genomic_folds(self.variants, win, folds)[0][ok]
            e_ref = call_embed(model, win.ref_windows)[win.ref_id[ok]]
            e_alt = call_embed(model, [win.alt_windows[i] for i in ok])
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
