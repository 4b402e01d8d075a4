"""What a task is: frozen metadata (``TaskSpec``) plus its loaded, validated splits."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from geneb.vocabulary import CLASSIFICATION, REGRESSION

#: The 13 GENEB task categories, in the order GENEB lists them.
CATEGORIES: tuple[str, ...] = (
    "tf_binding",
    "enhancers",
    "promoters",
    "splice_sites",
    "chromatin_accessibility",
    "histone_modifications",
    "lncrna",
    "dna_methylation",
    "mouse_enhancers",
    "virus_phage",
    "species_classification",
    "regulatory",
    "coding_noncoding",
)



def split_fingerprint(sequences: Sequence[str], labels: np.ndarray) -> str:
    """sha256 over the (normalised) sequences and integer labels of one split, in row order.

    Exactly: for each row, ``sequence + "\\t" + str(label) + "\\n"`` encoded as ASCII. Any change
    to a sequence, a label or the order changes it, so a stale store entry is detectable.

    Parameters
    ----------
    sequences : sequence of str
        The split's sequences, normalised, in row order.
    labels : numpy.ndarray
        Their labels (class ids or targets).

    Returns
    -------
    str
        ``"sha256:<hex>"``.
    """
    h = hashlib.sha256()
    for seq, lab in zip(sequences, labels.tolist(), strict=True):
        h.update(f"{seq}\t{lab}\n".encode("ascii"))
    return "sha256:" + h.hexdigest()


@dataclass(frozen=True)
class TaskSpec:
    """Metadata of one task (classification or regression); the identity used downstream."""

    name: str
    category: str
    n_classes: int
    label_names: tuple[str, ...]
    source: str = ""
    license: str = ""
    splits: tuple[str, ...] = ("train", "test")
    synthetic: bool = False
    path: str | None = None
    description: str = ""
    #: "classification" (labels are class ids 0..K-1) or "regression" (labels are real-valued
    #: targets; n_classes 0, no label names): see ``geneb.tasks.regression``.
    kind: str = CLASSIFICATION


@dataclass(frozen=True, eq=False)
class SplitData:
    """One validated split. ``rows`` are indices into the split's file (0-based data rows)."""

    name: str
    sequences: tuple[str, ...]
    labels: np.ndarray  # int64 class ids 0..K-1; float64 targets for regression tasks
    rows: np.ndarray  # int64, index of each row in the split file
    fingerprint: str
    source_file: str = ""

    def __len__(self) -> int:
        return len(self.sequences)


@dataclass(frozen=True, eq=False)
class Task:
    """A loaded task: spec, splits, and what loading did to the input (recorded, never silent)."""

    spec: TaskSpec
    splits: Mapping[str, SplitData]
    #: e.g. {"label_mapping": {...}, "uppercased": {"train": 12}, "subsampled": {...}}
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The task's name (``spec.name``)."""
        return self.spec.name

    def split(self, name: str) -> SplitData:
        """One split of the task.

        Parameters
        ----------
        name : str
            ``train``, ``test``, ... (an unknown name raises, listing the task's splits).

        Returns
        -------
        SplitData
            Its sequences, labels, file rows and fingerprint.
        """
        from geneb.errors import unknown_name

        if name not in self.splits:
            raise unknown_name(f"split of task {self.name!r}", name, self.splits)
        return self.splits[name]

    def fingerprints(self) -> dict[str, str]:
        """The fingerprint of every split.

        Returns
        -------
        dict
            Split name -> ``split_fingerprint`` of it.
        """
        return {name: s.fingerprint for name, s in self.splits.items()}

    # ------------------------------------------------ the task API (GFMBench's interface)
    def attributes(self) -> dict[str, Any]:
        """What the task is.

        Returns
        -------
        dict
            Name, kind, category, split sizes, source and license; the classes (or nothing,
            for targets); and the metrics ``evaluate`` gives per model method.
        """
        spec = self.spec
        attrs: dict[str, Any] = {
            "name": spec.name, "kind": spec.kind, "category": spec.category,
            "n_train": len(self.split("train")), "n_test": len(self.split("test")),
            "splits": list(self.splits), "source": spec.source, "license": spec.license,
        }
        if spec.kind == REGRESSION:
            attrs["metrics"] = {"embed": ["spearman", "pearson", "r2"],
                                "predict": ["predict_spearman", "predict_pearson",
                                            "predict_r2"]}
        else:
            attrs.update(n_classes=spec.n_classes, label_names=list(spec.label_names))
            attrs["metrics"] = {"embed": ["mcc", "accuracy", "macro_f1", "auroc"],
                                "predict": ["predict_mcc", "predict_accuracy",
                                            "predict_macro_f1",
                                            "predict_auroc (probabilities only)"]}
        return attrs

    def train_data(self) -> tuple[list[str] | list[tuple[str, str]], np.ndarray]:
        """The finetune set.

        Returns
        -------
        tuple of (list of str, numpy.ndarray)
            The train sequences and their labels (class ids or float targets); a
            supervised variant task gives (reference, alternate) window pairs instead.
        """
        tr = self.split("train")
        return list(tr.sequences), tr.labels.copy()

    def evaluate(self, model: Any, **options: Any) -> dict[str, Any]:
        """Every metric ``model``'s methods allow (``embed``, ``predict``, ...), plus
        ``skipped`` (method -> why nothing came from it).

        The evaluation fits probes and scores variants, which live above this layer, so it is
        the evaluator registered for ``spec.kind`` (:func:`register_evaluator`; geneb's are
        in ``geneb.evaluation``, registered whenever ``geneb.load_task`` is used).

        Parameters
        ----------
        model : object
            A model with any of the task API's methods (``embed``, ``predict``, ...) or
            GFMBench-API's.
        **options
            Of sequence tasks: ``C`` (logistic probe, default 1), ``alpha`` (ridge, default 1),
            ``standardize``; of a supervised variant task: ``folds``, ``Cs``, ``features``.

        Returns
        -------
        dict
            Metric name -> value, and ``skipped`` (method -> why nothing came from it).
        """
        evaluator = _EVALUATORS.get(self.spec.kind)
        if evaluator is None:
            from geneb.errors import GenebError

            raise GenebError(
                f"task {self.name!r}: no evaluator registered for kind {self.spec.kind!r}; "
                "load tasks with geneb.load_task (or import geneb.evaluation first)")
        return evaluator(self, model, **options)


#: task kind -> the function behind ``Task.evaluate`` (task, model, **options) -> metrics.
#: Filled from above the probe and vep layers (``geneb.evaluation``), so that geneb.tasks
#: never imports what it feeds (the import graph test, tests/test_import_graph.py).
_EVALUATORS: dict[str, Callable[..., dict[str, Any]]] = {}


def register_evaluator(kind: str, evaluator: Callable[..., dict[str, Any]]) -> None:
    """Make ``evaluator(task, model, **options)`` the ``evaluate`` of tasks of ``kind``.

    Parameters
    ----------
    kind : str
        A task kind (``geneb.vocabulary``: ``classification``, ``zero_shot_variant``, ...).
    evaluator : callable
        Called as ``evaluator(task, model, **options)``; returns the metrics dict.
    """
    _EVALUATORS[kind] = evaluator


@dataclass(frozen=True, eq=False)
class ClassificationTask(Task):
    """A task whose labels are class ids 0..K-1 (logistic probes, MCC)."""


@dataclass(frozen=True, eq=False)
class RegressionTask(Task):
    """A task whose labels are real-valued targets (ridge probes, Spearman / Pearson / R^2)."""


def typed_task(task: Task) -> Task:
    """The task as its kind's subclass.

    Parameters
    ----------
    task : Task
        A task of any class.

    Returns
    -------
    Task
        A ``ClassificationTask`` or ``RegressionTask`` with the same spec, splits and metadata
        (``task`` itself when it already is one).
    """
    cls = RegressionTask if task.spec.kind == REGRESSION else ClassificationTask
    return task if isinstance(task, cls) else cls(task.spec, task.splits, task.metadata)
