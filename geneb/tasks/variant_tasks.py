"""Variant tasks in the task API: zero-shot and supervised variant-effect prediction.

Both wrap a validated variant folder (``geneb.tasks.variants``) and its windows at ``window``
bases (``geneb.tasks.windows``: the reference window and the same window carrying the allele).
They are ``geneb.tasks.Task`` objects whose ``splits`` are empty (a variant task has no
sequence splits) and whose ``evaluate(model)`` uses whichever methods the model has. This
module holds their data (variants, windows, labels, attributes, the finetune set); the
evaluation itself scores with geneb.vep and fits probes, so it lives above those layers, in
``geneb.evaluation.variants`` (registered for the kinds ``zero_shot_variant`` and
``supervised_variant``; see ``Task.evaluate``):

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
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from geneb.errors import GenebError
from geneb.tasks.spec import Task, TaskSpec
from geneb.vocabulary import DEFAULT_VEP_WINDOW, SUPERVISED_VARIANT, ZERO_SHOT_VARIANT

if TYPE_CHECKING:
    from geneb.tasks.windows import Windows

VARIANT_CATEGORY = "variant_effect"


@dataclass(frozen=True, eq=False)
class _VariantTask(Task):
    """Shared part: the variant table, the window, the windows (made on first use)."""

    variants: Any = None  # geneb.tasks.variants.VariantTask
    window: int = DEFAULT_VEP_WINDOW
    kind = "variant"  # the subclasses name theirs
    METRICS: ClassVar[dict[str, list[str]]] = {}

    @classmethod
    def from_folder(cls, folder: str, window: int = DEFAULT_VEP_WINDOW) -> _VariantTask:
        from geneb.tasks.variants import load_variant_task
        from geneb.tasks.windows import check_window

        vt = load_variant_task(folder)
        spec = TaskSpec(name=vt.name, category=VARIANT_CATEGORY, n_classes=2,
                        label_names=("0", "1"), splits=(), path=str(vt.folder), kind=cls.kind)
        return cls(spec, {}, {"folder": str(vt.folder), "source": str(vt.source)}, vt,
                   check_window(window))

    @cached_property
    def windows(self) -> Windows:
        """The reference / alternate windows of every variant (made once)."""
        from geneb.tasks.windows import make_windows

        return make_windows(self.variants, self.window)

    def ok_rows(self) -> np.ndarray:
        """Row numbers of the variants whose windows could be made (status ``ok``)."""
        from geneb.tasks.windows import OK

        return np.flatnonzero(self.windows.status == OK)

    def attributes(self) -> dict[str, Any]:
        t = self.variants.table
        return {"name": self.name, "kind": self.kind, "window": self.window,
                "n_variants": len(t), "n_with_window": len(self.ok_rows()),
                "n_positive": int((t["label"] == 1).sum()),
                "has_score": bool(self.variants.has_score), "metrics": self.METRICS}

    def labels_scores(self, ok: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """Labels of rows ``ok``, and their ``score`` column values (None without one)."""
        t = self.variants.table
        y = t["label"].to_numpy()[ok]
        ts = t["score"].to_numpy(np.float64)[ok] if self.variants.has_score else None
        return y, ts


@dataclass(frozen=True, eq=False)
class ZeroShotVariantTask(_VariantTask):
    """Zero-shot variant scoring from a model's embeddings or likelihoods (module doc)."""

    kind = ZERO_SHOT_VARIANT
    METRICS = {"embed": ["cosine_auroc", "cosine_auprc", "l2_auroc", "l2_auprc"],
               "log_likelihood": ["llr_auroc", "llr_auprc"],
               "masked_log_probs": ["masked_llr_auroc", "masked_llr_auprc"]}  # noqa: RUF012

    def train_data(self) -> tuple[list[str], np.ndarray]:
        """A zero-shot task has no finetune set: always raises.

        Raises
        ------
        GenebError
            Saying to load the task with ``supervised=True`` for a probe's finetune set.
        """
        raise GenebError(f"task {self.name!r} is zero-shot: it has no training data (use "
                         "load_task(..., supervised=True) for a probe's finetune set)")


@dataclass(frozen=True, eq=False)
class SupervisedVariantTask(_VariantTask):
    """A logistic probe on (reference, alternate) embeddings, genomic-block CV (module doc)."""

    kind = SUPERVISED_VARIANT
    METRICS = {"embed": ["auroc", "auprc"]}  # noqa: RUF012

    def train_data(self) -> tuple[list[tuple[str, str]], np.ndarray]:
        """The finetune set of the probe.

        Returns
        -------
        tuple of (list of (str, str), numpy.ndarray)
            (reference window, alternate window) of every variant with a window, and their
            labels.
        """
        win, ok = self.windows, self.ok_rows()
        pairs = [(win.ref_windows[win.ref_id[i]], win.alt_windows[i]) for i in ok]
        return pairs, self.variants.table["label"].to_numpy()[ok].copy()
