"""Small conveniences of the public API (``geneb.open_store`` and friends).

They exist so that a downstream user needs one import and no knowledge of the package layout;
each is a thin, validated call into the module that owns the concept.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Literal

from geneb.constraints import validate_params
from geneb.errors import GenebError
from geneb.vocabulary import CLASSIFICATION, DEFAULT_VEP_WINDOW, SUPERVISED_VARIANT

if TYPE_CHECKING:
    from geneb.evaluation.gfmbench_model import GenebGFMModel
    from geneb.store import FeatureStore, StoreEntry
    from geneb.tasks import Task


@validate_params({})  # a call that does not fit is an ArgumentError
def open_store(path: str | os.PathLike[str], mode: Literal["r", "a"] = "r") -> FeatureStore:
    """Open a feature store.

    Parameters
    ----------
    path : str or os.PathLike
        The store's folder, or an fsspec URL (``memory://...``, ``s3://...``).
    mode : {"r", "a"}
        ``"r"`` (default) only reads and never writes; ``"a"`` may create the store and write
        entries.

    Returns
    -------
    FeatureStore
        The store (``keys()``, ``get(model, task, split)``, ``verify()``, ...).
    """
    if mode not in ("r", "a"):
        raise GenebError(f"open_store: mode must be 'r' or 'a', got {mode!r}")
    from geneb.store import FeatureStore

    return FeatureStore(path, mode)


@validate_params({})  # a call that does not fit is an ArgumentError
def read_entry(
    store: str | os.PathLike[str] | FeatureStore,
    model: str,
    task: str,
    split: str,
    *,
    layer: int | None = None,
) -> StoreEntry:
    """One complete entry of a store, every checksum verified.

    Parameters
    ----------
    store : str, os.PathLike or FeatureStore
        The store, or its path (opened read-only).
    model : str
        The model's store key (as extracted: ``kmer-5``, a hub id, ``name=``).
    task : str
        The task name.
    split : str
        The split (``train``, ``test``, ...).
    layer : int or None
        The entry of that hidden layer from a ``layers=`` extraction of ``model`` (key
        ``geneb.store.layer_key(model, layer)``, e.g. ``model@L-4``); its provenance must say
        that layer. None (default): ``model`` is the store key as written.

    Returns
    -------
    StoreEntry
        Embeddings, labels, rows and provenance; ``.to_xarray()`` for an xarray Dataset.
    """
    from geneb.store import FeatureStore, layer_key

    if layer is not None and (isinstance(layer, bool) or not isinstance(layer, int)):
        raise GenebError(f"read_entry: layer must be an int or None, got {layer!r}")
    fs = store if isinstance(store, FeatureStore) else FeatureStore(store, "r")
    if layer is None:
        return fs.get(model, task, split)
    entry = fs.get(layer_key(model, layer), task, split)
    if entry.provenance.layer != layer:
        raise GenebError(
            f"read_entry: entry {layer_key(model, layer)}/{task}/{split} holds layer "
            f"{entry.provenance.layer}, expected {layer}"
        )
    return entry


@validate_params({})  # a call that does not fit is an ArgumentError
def load_task(
    name_or_path: str | os.PathLike[str],
    data_dir: str | None = None,
    *,
    supervised: bool = False,
    window: int = DEFAULT_VEP_WINDOW,
) -> Task:
    """A task by folder path, name or GFMBench-API class name.

    A GFMBench-API task class name (``BRCA1Task``, ``GuePromoterAllTask``: see
    ``geneb.tasks.gfmbench_list``) loads the one catalogue task or variant set it maps to
    (supervised when GFMBench's task is: ``LRBCausalEqtlTask``); a class that maps to
    several (``GueTranscriptionFactorTask``) or none is refused, saying which or why.

    Parameters
    ----------
    name_or_path : str or os.PathLike
        A task folder, a built-in synthetic name (``syn_*``), a name under ``data_dir``, the
        name of a fetched catalogue task or variant set (``geneb tasks fetch``), or a
        GFMBench-API task class name.
    data_dir : str or None
        The folder task names are looked up in (default: the ``GENEB_DATA_DIR`` environment
        variable); fetched tasks are found in the cache either way.
    supervised : bool
        For a variant folder: the supervised task (a probe on reference/alternate
        embeddings) instead of zero-shot scoring (default False).
    window : int
        For a variant folder: bases around each variant (even; default
        ``geneb.vocabulary.DEFAULT_VEP_WINDOW``).

    Returns
    -------
    geneb.tasks.Task
        A ``ClassificationTask`` or ``RegressionTask`` for sequence tasks; for a variant
        folder (``variants.csv``/``.vcf[.gz]`` + ``reference.fa``) a ``ZeroShotVariantTask``,
        or with ``supervised=True`` a ``SupervisedVariantTask``. Each has ``attributes()``,
        ``train_data()`` and ``evaluate(model)`` (implemented in ``geneb.evaluation``, which
        this call imports so that every task it returns can be evaluated).
    """
    if not isinstance(name_or_path, (str, os.PathLike)):
        raise GenebError(
            f"load_task: name_or_path must be a str or path, got {type(name_or_path).__name__}"
        )
    from pathlib import Path

    import geneb.evaluation  # noqa: F401 - registers the evaluators behind Task.evaluate
    from geneb.tasks import resolve_task
    from geneb.tasks.variants import fetched_variant_folder

    folder = Path(name_or_path).expanduser()
    if not folder.exists():
        name_or_path, supervised = _gfmbench_target(os.fspath(name_or_path), supervised)
        folder = Path(name_or_path)
    if not folder.is_dir():  # a fetched catalogue variant set by name
        folder = fetched_variant_folder(os.fspath(name_or_path)) or folder
    if folder.is_dir() and _is_variant_folder(folder):
        from geneb.tasks.variant_tasks import SupervisedVariantTask, ZeroShotVariantTask

        cls = SupervisedVariantTask if supervised else ZeroShotVariantTask
        return cls.from_folder(str(folder), window)
    if supervised:
        raise GenebError(f"load_task: supervised=True applies to variant folders; "
                         f"{os.fspath(name_or_path)!r} is a sequence task")
    return resolve_task(os.fspath(name_or_path), data_dir)


def _gfmbench_target(name: str, supervised: bool) -> tuple[str, bool]:
    """The catalogue name a GFMBench class name stands for (else ``name`` unchanged)."""
    from geneb.tasks.gfmbench_list import expand_gfmbench_names, gfmbench_task

    t = gfmbench_task(name)
    if t is None:
        return name, supervised
    targets = expand_gfmbench_names([name])  # refuses a class with no catalogue entry
    if len(targets) != 1:
        raise GenebError(f"load_task: GFMBench task {name!r} is {len(targets)} geneb tasks "
                         f"({', '.join(targets)}): load one of them")
    if t.geneb_kind == CLASSIFICATION:
        return targets[0], supervised
    from geneb.tasks.variants import fetched_variant_folder, load_variant_task

    folder = fetched_variant_folder(targets[0])
    if folder is None:
        load_variant_task(targets[0])  # raises: how to fetch it, or why it cannot be
    return str(folder), supervised or t.geneb_kind == SUPERVISED_VARIANT


def _is_variant_folder(folder: os.PathLike[str]) -> bool:
    """A variant task folder: a reference FASTA and a variant table, no train split."""
    from pathlib import Path

    from geneb.tasks.variants import VCF_NAMES

    f = Path(folder)
    return (f / "reference.fa").is_file() and any(
        (f / n).is_file() for n in ("variants.csv", *VCF_NAMES))


@validate_params({})  # a call that does not fit is an ArgumentError
def as_gfmbench_model(
    spec: str,
    *,
    language_model: bool = True,
    batch_tokens: int | None = None,
    **options: Any,
) -> GenebGFMModel:
    """A geneb model with GFMBench-API's model methods, for GFMBench-API's task classes.

    Parameters
    ----------
    spec : str
        A model spec as ``geneb.get_embedder`` takes it (``kmer-3``, a transformers folder or
        cached hub id, a plugin name, ``random:...``).
    language_model : bool
        Load the model's causal or masked language-model head, when it has one with trained
        weights, for ``sequence_probs`` and ``infer_masked_sequence_to_token_probs``
        (default True).
    batch_tokens : int or None
        Token budget of one forward of the per-position outputs (default: geneb's VEP budget).
    **options
        Options of ``geneb.get_embedder`` (``device``, ``trust_remote_code``, ``pooling``,
        ``layer``, ``max_length``, ...); ``trust_remote_code=True`` also lets the head's code
        run.

    Returns
    -------
    GenebGFMModel
        ``infer_sequence_to_sequence``, ``sequence_pos_to_prob_pos``,
        ``infer_masked_sequence_to_token_probs``, ``infer_sequence_to_labels_probs`` and
        ``infer_variant_ref_sequences_to_labels_probs`` as ``base_gfm_model.py`` defines them
        (None where the model cannot; ``.notes`` says why): see
        ``geneb.evaluation.gfmbench_model`` and docs/task-api.md.
    """
    if not isinstance(spec, str) or not spec:
        raise GenebError(f"as_gfmbench_model: spec must be a model name, got {spec!r}")
    if not isinstance(language_model, bool):
        raise GenebError(f"as_gfmbench_model: language_model must be True or False, got "
                         f"{language_model!r}")
    if batch_tokens is not None and (isinstance(batch_tokens, bool)
                                     or not isinstance(batch_tokens, int) or batch_tokens < 1):
        raise GenebError(f"as_gfmbench_model: batch_tokens must be a positive int or None, got "
                         f"{batch_tokens!r}")
    from geneb.evaluation.gfmbench_model import build_gfmbench_model

    return build_gfmbench_model(spec, language_model=language_model,
                                batch_tokens=batch_tokens, **options)
