"""The extraction runner: (models x tasks x splits) -> complete, verified store entries.

For each key it first asks the store for a plan (skip an identical complete entry, resume a
partial one, refuse a stale one unless ``overwrite``). Rows are processed in blocks of the
task's original order, so memory stays flat and a killed run resumes where the store's
verified rows end; inside a block rows are sorted by token count and batched under a token
budget, then written back in original order. Each model is loaded once per run.

Nothing is written before every model spec passed the cheap checks (hub cache, trust rule)
and the first model loaded: the store is created only then. How rows may share a batch is
the model's measured batch policy (``geneb.models.selftest``); how many rows were longer
than the model's context (and how many tokens truncation dropped) is counted before the
entry is written, recorded in provenance, and announced in one warning line.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from geneb import constraints as c
from geneb.errors import ModelError, StaleEntryError, StoreError
from geneb.extract.batching import block_rows_of, default_batch_tokens, embed_batches, prepared_api
from geneb.extract.geneb_recipe import RECIPES, check_recipe, load_model
from geneb.extract.layer_entries import block_embedder, entry_targets
from geneb.extract.long_sequences import long_sequence_counts, truncation_warning
from geneb.extract.provenance import build_provenance
from geneb.models.embedder import Embedder, model_info
from geneb.models.options import MODEL_OPTION_PARAMS, check_layers
from geneb.models.registry import check_spec, get_embedder
from geneb.models.selftest import BatchPolicy, policy_of
from geneb.models.trust import trusted_models
from geneb.store import FeatureStore, Provenance, StoreKey
from geneb.tasks.spec import SplitData, Task
from geneb.vocabulary import (
    DEFAULT_DEVICE,
    DEFAULT_LAYER,
    DEFAULT_POOLING,
    DEFAULT_STORAGE_DTYPE,
    DEFAULT_STRANDS,
    DEFAULT_TRUNCATION,
)

if TYPE_CHECKING:
    from geneb._progress import ProgressBar

#: Upper bound on one block's embeddings in memory (rows x dim x 4 bytes).


@dataclass(frozen=True)
class ExtractResult:
    """What happened to one (model, task, split)."""

    key: StoreKey
    action: str  # write | resume | overwrite | skip
    reason: str
    n_rows: int
    dim: int
    rows_embedded: int = 0
    tokens: int = 0
    seconds: float = 0.0
    truncated_rows: int = 0  # rows longer than the model's context, cut (--truncation truncate)
    dropped_tokens: int = 0  # tokens those rows lost
    provenance: Provenance | None = field(default=None, compare=False, repr=False)

    @property
    def seq_per_s(self) -> float:
        """Sequences embedded per second (0 when nothing was timed)."""
        return self.rows_embedded / self.seconds if self.seconds > 0 else 0.0

    @property
    def tokens_per_s(self) -> float:
        """Tokens embedded per second (0 when nothing was timed)."""
        return self.tokens / self.seconds if self.seconds > 0 else 0.0


def _as_list(x: Any) -> list[Any]:
    if isinstance(x, (str, Task)) or hasattr(x, "embed"):
        return [x]
    return list(x)


def _resolve_tasks(tasks: Any, data_dir: str | None) -> list[Task]:
    from geneb.tasks.folders import resolve_task

    out: list[Task] = []
    for t in _as_list(tasks):
        out.append(t if isinstance(t, Task) else resolve_task(str(t), data_dir))
    return out


#: ``extract``'s parameters, checked before any work (``validate_params``); a plan's
#: ``[[models]]`` / ``[extract]`` tables and ``geneb extract``'s options use the same ones.
#: The model options are the adapters' declaration (``MODEL_OPTION_PARAMS``), not re-spelled.
EXTRACT_PARAMS = {
    "splits": c.ListOf(c.SPLIT), "batch_tokens": c.BATCH_TOKENS,
    **{k: MODEL_OPTION_PARAMS[k] for k in ("device", "dtype", "max_length", "pooling", "layer",
                                           "layers", "truncation", "strands")},
    "weight_seed": MODEL_OPTION_PARAMS["seed"],  # the random: models' option ``seed``
    "storage_dtype": c.STORAGE_DTYPE, "block_rows": c.POSITIVE_INT, "overwrite": c.BOOL,
    "recipe": c.Nullable(c.StrOptions(RECIPES), null="None"),
}


@c.validate_params(EXTRACT_PARAMS)
def extract(
    store: FeatureStore | str,
    models: str | Embedder | Sequence[str | Embedder],
    tasks: str | Task | Sequence[str | Task],
    splits: Sequence[str] = ("train", "test"),
    *,
    batch_tokens: int | None = None,
    device: str = DEFAULT_DEVICE,
    dtype: str | None = None,
    max_length: int | None = None,
    pooling: str = DEFAULT_POOLING,
    layer: int = DEFAULT_LAYER,
    layers: Sequence[int] | None = None,
    name: str | None = None,
    trust_remote_code: bool | Sequence[str] = False,
    overwrite: bool = False,
    data_dir: str | None = None,
    storage_dtype: str = DEFAULT_STORAGE_DTYPE,
    progress: bool = False,
    truncation: str = DEFAULT_TRUNCATION,
    weight_seed: int | None = None,
    block_rows: int | None = None,
    strands: str = DEFAULT_STRANDS,
    on_block: Callable[[StoreKey, int, int], None] | None = None,
    on_warning: Callable[[str], None] | None = None,
    recipe: str | None = None,
) -> list[ExtractResult]:
    """Embed every split of every task with every model into ``store``; see module doc.

    Parameters
    ----------
    store : FeatureStore or str
        The store (opened with ``mode="a"``), or its path (created once a model has loaded).
    models : str, Embedder or sequence of them
        Model specs for ``geneb.get_embedder`` (``kmer-5``, a hub id, a folder, a plugin,
        ``random:...``), or already built embedders, whose own settings then apply.
    tasks : str, Task or sequence of them
        Task names or folders (``geneb.load_task``), or ``Task`` objects.
    splits : sequence of str
        The splits to embed (default ``("train", "test")``).
    batch_tokens : int or None
        Token budget of one batch (default ``default_batch_tokens(device)``: 4096 on CPU,
        65536 on CUDA).
    device : str
        ``auto`` (default: CUDA when visible), ``cpu``, ``cuda``, ``cuda:N`` or ``mps``.
    dtype : str or None
        Compute dtype (None: float32 on CPU, bfloat16 on CUDA).
    max_length : int or None
        Tokens per sequence at most (None: the model's context).
    pooling : str
        How token states become one vector (``geneb.vocabulary.POOLINGS``; default mean).
    layer : int
        The hidden layer pooled (-1, default: the last; 0: the embeddings).
    layers : sequence of int or None
        Several hidden layers from one forward, one entry each
        (``geneb.extract.layer_entries``); not with ``layer``.
    name : str or None
        The store key of the model's entries (default: the model's own name); one model only.
    trust_remote_code : bool or sequence of str
        True for every model, or the models (as given) whose own code may run (default False:
        none).
    overwrite : bool
        Replace stale, complete or incomplete entries (default False: skip identical complete
        entries, resume partial ones, refuse stale ones).
    data_dir : str or None
        Where task names are looked up (default: ``GENEB_DATA_DIR``).
    storage_dtype : str
        ``float32`` (default) or ``float16`` in the store.
    progress : bool
        Show a progress bar (default False).
    truncation : str
        Sequences longer than the context: ``truncate`` (default: cut) or ``window``
        (embedded as several windows, pooled).
    weight_seed : int or None
        The weight seed of ``random:`` controls.
    block_rows : int or None
        Rows per block (default: a block fits ``geneb.extract.batching.BLOCK_BYTES``).
    strands : str
        ``forward`` (default) or ``both``: the mean of the forward and reverse-complement
        embeddings (any model).
    on_block : callable or None
        ``on_block(key, rows_done, n_rows)``, called after each block is handed to the store
        (for progress reporting and tests).
    on_warning : callable or None
        Gets the one warning line about truncated rows (default: printed to stderr).
    recipe : str or None
        ``"geneb"``: as GENEB's code embedded each model (``geneb.extract.geneb_recipe``);
        None (default): geneb's own embedding.

    Returns
    -------
    list of ExtractResult
        One per (model, task, split): the action taken (write, resume, overwrite, skip), rows
        and tokens embedded, seconds, truncated rows, and the entry's provenance.
    """
    layers_t = check_layers(layers, layer)
    models = _as_list(models)
    trusted = trusted_models(trust_remote_code, models)
    splits = _as_list(splits)
    options = _checked_options(
        models, name, recipe,
        device=device, dtype=dtype, max_length=max_length, pooling=pooling, layer=layer,
        layers=None if layers_t is None else list(layers_t), truncation=truncation,
        strands=strands, weight_seed=weight_seed, trusted=trusted,
    )  # fmt: skip
    if isinstance(store, FeatureStore) and store.mode != "a":
        raise StoreError(f"store {store.path} is open read-only; open it with mode='a'")
    fs = store if isinstance(store, FeatureStore) else None
    task_list = _checked_tasks(tasks, data_dir, splits)  # before any model loads

    results: list[ExtractResult] = []
    for spec, trust in zip(models, trusted, strict=True):
        embedder = spec if hasattr(spec, "embed") else load_model(  # once for all tasks, splits
            spec, {**options, "trust_remote_code": trust}, recipe, get_embedder)
        kept = getattr(embedder, "layers", None)
        if layers_t is not None and embedder is not spec and kept != layers_t:
            # e.g. a wrapper that hides them: never store one layer under many keys
            raise ModelError(
                f"model {spec!r} ({type(embedder).__name__}) does not extract several "
                "layers from one forward; run it without layers"
            )
        if fs is None:  # created only once a model has loaded: a refused model writes nothing
            assert not isinstance(store, FeatureStore)  # an open store is fs from the start
            fs = FeatureStore(store, "a")
        results += _extract_model(
            fs, embedder, name or embedder.name, task_list, splits, batch_tokens, block_rows,
            storage_dtype, overwrite, progress, on_block,
        )  # fmt: skip
    line = truncation_warning(results)
    if line and on_warning is None:
        print(line, file=sys.stderr, flush=True)
    elif line and on_warning is not None:
        on_warning(line)
    return results


def _checked_options(
    models: list[Any],
    name: str | None,
    recipe: str | None,
    *,
    weight_seed: int | None,
    trusted: list[bool],
    **options: Any,
) -> dict[str, Any]:
    """Check the model specs before the store is touched (the arguments of
    :data:`EXTRACT_PARAMS` are checked by ``extract``'s declaration).

    Returns the keyword options handed to ``get_embedder``; hub ids that are not cached and
    code that is not allowed are refused here, before any work.
    """
    if not models:
        raise ModelError("models: no model given", param="models")
    if name is not None and len(models) != 1:
        raise ModelError(f"name: {name!r} names one model, but {len(models)} were given",
                         param="name")
    if weight_seed is not None:
        options["seed"] = weight_seed  # the adapter option of random: models
    for spec, trust in zip(models, trusted, strict=True):  # checked before the store is touched
        if not hasattr(spec, "embed"):
            check_spec(spec, **options, trust_remote_code=trust)
    for spec, trust in zip(models, trusted, strict=True):  # not cached, code not allowed:
        if isinstance(spec, str):  # refused before any work
            _preflight(spec, trust)
    check_recipe(models, options, recipe)
    return options


def _checked_tasks(tasks: Any, data_dir: str | None, splits: list[str]) -> list[Task]:
    """Resolve the tasks and their splits; bad task names fail before any model loads."""
    task_list = _resolve_tasks(tasks, data_dir)
    if not task_list:
        raise ModelError("tasks: no task given", param="tasks")
    for t in task_list:
        for s in splits:
            t.split(s)
    return task_list


def _extract_model(
    fs: FeatureStore,
    embedder: Embedder,
    model_key: str,
    task_list: list[Task],
    splits: list[str],
    batch_tokens: int | None,
    block_rows: int | None,
    storage_dtype: str,
    overwrite: bool,
    progress: bool,
    on_block: Callable[[StoreKey, int, int], None] | None,
) -> list[ExtractResult]:
    """Every task and split with one loaded model; stale entries refuse the whole model."""
    info = model_info(embedder)
    rows_per_block = block_rows_of(embedder, block_rows)
    budget = batch_tokens or default_batch_tokens(info.device)
    policy = policy_of(embedder)
    run_extra = {
        "batch_tokens": budget,
        "block_rows": rows_per_block,
        "batch_invariance": policy.describe(),
    }
    targets = entry_targets(embedder, info, model_key)  # one per layer of --layers
    jobs = []
    stale = []
    for task in task_list:
        for s in splits:
            split = task.split(s)
            entries = []
            counts: dict[str, int] | None = None
            for mkey, minfo in targets:
                key = StoreKey(mkey, task.spec.name, s)
                prov = build_provenance(minfo, mkey, task, split, storage_dtype, run_extra)
                plan = fs.plan(key, prov, overwrite=overwrite)
                if plan.action == "refuse":
                    stale.append(f"{key}: {plan.reason}")
                elif plan.action != "skip":
                    if counts is None:
                        counts = long_sequence_counts(embedder, split.sequences) or {}
                    if counts:
                        extra = dict(run_extra, long_sequences=counts)
                        prov = build_provenance(minfo, mkey, task, split, storage_dtype, extra)
                entries.append((key, prov, plan))
            jobs.append((split, entries, task.spec.label_names))
    if stale:
        raise StaleEntryError(
            f"refusing to touch stale entries in {fs.path} (nothing written for model "
            f"{model_key!r}):\n  " + "\n  ".join(stale)
        )
    results: list[ExtractResult] = []
    for split, entries, label_names in jobs:
        todo = [(key, prov) for key, prov, plan in entries if plan.action != "skip"]
        done = _extract_one(
            fs, embedder, todo, split, budget, rows_per_block, storage_dtype, overwrite,
            progress, on_block, policy, label_names,
        ) if todo else {}  # fmt: skip
        for key, prov, plan in entries:
            skip = ExtractResult(key, "skip", plan.reason, len(split), embedder.dim,
                                 provenance=prov)  # fmt: skip
            results.append(done.get(key, skip))
    return results


def _preflight(spec: str, trust_remote_code: bool) -> None:
    """Cheap checks of a folder / hub-id spec before anything is loaded or written."""
    from geneb.models.hub import resolve_source
    from geneb.models.spec import HUB_ID_RE
    from geneb.models.trust import enforce_trust

    bare = spec.strip().removeprefix("random:").removeprefix("hf:")
    if Path(bare).expanduser().is_dir() or HUB_ID_RE.match(bare):
        src = resolve_source(bare)
        enforce_trust(src.folder, bare, trust_remote_code)


def _extract_one(
    fs: FeatureStore,
    embedder: Embedder,
    entries: list[tuple[StoreKey, Provenance]],
    split: SplitData,
    batch_tokens: int,
    block_rows: int,
    storage_dtype: str,
    overwrite: bool,
    progress: bool,
    on_block: Callable[[StoreKey, int, int], None] | None,
    policy: BatchPolicy,
    label_names: Sequence[str],
) -> dict[StoreKey, ExtractResult]:
    """Write the entries of one split that one forward fills (one, or one per layer)."""
    prepare, cost, embed_prepared = prepared_api(embedder)
    embed_block = block_embedder(embedder, len(entries), embed_prepared)
    n, dim = len(split), embedder.dim
    t0 = time.perf_counter()
    with contextlib.ExitStack() as stack:
        ws = [
            stack.enter_context(fs.writer(
                key, provenance=prov, labels=split.labels, rows=split.rows, dim=dim,
                storage_dtype=storage_dtype, overwrite=overwrite, label_names=label_names,
            ))
            for key, prov in entries
        ]  # fmt: skip
        out = {k: _opened(w, k, p, n, dim) for w, (k, p) in zip(ws, entries, strict=True)}
        live = [i for i, w in enumerate(ws) if not w.done]
        if not live:
            return out
        start = min(ws[i].start_row for i in live)
        main = entries[live[0]][0]
        tokens = embedded = 0
        bar = _progress_bar(progress, main, n, start)
        try:
            # Blocks are aligned to multiples of block_rows counted from row 0, so a resumed
            # run forms exactly the batches an uninterrupted run would (bit-identical rows).
            for b0 in range((start // block_rows) * block_rows, n, block_rows):
                b1 = min(n, b0 + block_rows)
                items = prepare(split.sequences[b0:b1])
                costs = np.asarray(cost(items), dtype=np.int64)
                block = np.empty((len(entries), b1 - b0, dim), dtype=np.float32)
                for idx in embed_batches(embedder, costs, batch_tokens, policy):
                    block[:, idx] = embed_block([items[i] for i in idx])
                for i in live:  # an entry resumed further on skips rows it holds
                    skip = max(0, ws[i].start_row - b0)
                    if skip < b1 - b0:
                        ws[i].append(block[i, skip:])
                skip = max(0, start - b0)
                tokens += int(costs[skip:].sum())
                embedded += b1 - b0 - skip
                if bar is not None:
                    el = max(1e-9, time.perf_counter() - t0)
                    bar.update(b1 - b0 - skip)
                    bar.set_postfix_str(f"{embedded / el:.1f} seq/s, {tokens / el:.0f} tok/s")
                if on_block is not None:
                    for i in live:
                        on_block(entries[i][0], b1, n)
        finally:
            if bar is not None:
                bar.close()
    seconds = time.perf_counter() - t0
    for i in live:
        key, prov = entries[i]
        counts = prov.extra.get("long_sequences") or {}
        r = out[key]
        out[key] = dataclasses.replace(
            r, rows_embedded=n - ws[i].start_row, tokens=tokens, seconds=seconds,
            truncated_rows=int(counts.get("truncated_rows", 0)),
            dropped_tokens=int(counts.get("dropped_tokens", 0)),
        )  # fmt: skip
    return out


def _opened(w: Any, key: StoreKey, prov: Provenance, n: int, dim: int) -> ExtractResult:
    """What the store's plan says about an entry just opened for writing (no rows yet)."""
    action = w.plan.action if w.plan is not None else "write"
    reason = w.plan.reason if w.plan is not None else ""
    if w.done:
        action = "skip"
    elif action == "resume":
        reason = f"resumed at row {w.start_row} (rows before it verified on disk)"
    return ExtractResult(key, action, reason, n, dim, provenance=prov)


def _progress_bar(progress: bool, key: StoreKey, n: int, start: int) -> ProgressBar | None:
    if not progress:
        return None
    from geneb._progress import progress_bar

    return progress_bar(n, True, desc=str(key), unit="seq", initial=start)
