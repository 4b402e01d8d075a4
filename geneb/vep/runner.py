"""Score a variant task with a model: validate everything, then windows -> scores -> one table.

Work order: the task (every row validated), the window, the scorer names, the model and what it
can do (a headless model asked for ``llr`` is refused here, listing what it supports), the
store plan (a stale entry is refused) -- and only then any forward pass. Nothing is written
before all of that passed.

Embedding scorers keep their embeddings in the feature store when one is given (``store``):
task key ``<task>__vep_w<W>`` (``__first<N>`` appended with ``limit``), split ``ref`` (one row
per distinct reference window, label -1) and split ``alt`` (one row per scored variant, its
label; ``row`` = the variant's index in the task file). A second scorer, or a second run,
reads them back instead of recomputing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from geneb.constraints import BATCH_TOKENS, POSITIVE_INT, ListOf, StrOptions, validate_params
from geneb.errors import StaleEntryError
from geneb.models.embedder import Embedder
from geneb.tasks.variants import VariantTask, load_variant_task
from geneb.tasks.windows import OK, Windows, check_window, make_windows
from geneb.vep.capabilities import (
    EMBEDDING_SCORERS,
    HEADS,
    SCORERS,
    detect,
    require_scorer,
)
from geneb.vep.context import (
    check_reference_room,
    check_window_fits,
    embedder_context,
    lm_context,
    mark_unseeable,
)
from geneb.vep.scorers import ORIENTATION, distance_scores, llr_scores
from geneb.vocabulary import DEFAULT_DEVICE, DEFAULT_VEP_WINDOW

#: Token budget per batch on CPU for VEP (``--batch-tokens`` overrides it). Larger than the
#: extraction default (4096): windows of one length batch without padding, and batching is
#: what makes scoring fast -- tiny-llama-char-clm at 1,026 tokens, process CPU per window:
#: 0.29-0.55 s one at a time, 0.10-0.19 s at 4,096 tokens, 0.055 s at 16,384 (measured on
#: the shared 2-core machine). GPUs use the extraction default (65,536).
CPU_BATCH_TOKENS = 16384

#: Columns every score table starts with (then the task's own extra columns).
CORE = ["task", "variant", "chrom", "pos", "ref", "alt", "label", "model", "scorer", "window",
        "score", "status", "orientation", "head"]


@dataclass
class ScoreRun:
    """Bookkeeping of one scoring call (for the CLI summary and the benchmark)."""

    forwards: int = 0
    sequences: int = 0
    embedded: int = 0  # windows embedded now (not read back from the store)
    reused: int = 0  # windows read back from the store


def store_task_key(task: VariantTask, window: int, limit: int | None) -> str:
    """The store task id under which a task's VEP windows are kept."""
    return f"{task.name}__vep_w{window}" + (f"__first{limit}" if limit is not None else "")


#: The run limits every entry point that embeds windows declares (checked before any work).
LIMITS = {"limit": POSITIVE_INT, "batch_tokens": BATCH_TOKENS}
#: ``score_variants``' parameters (also the constraints of a plan's [vep] scorers)
SCORE_PARAMS = {"scorers": ListOf(StrOptions(SCORERS), unique=True), **LIMITS}


@validate_params(SCORE_PARAMS)
def score_variants(
    task: str | Path | VariantTask,
    model: str,
    scorers: Sequence[str],
    *,
    window: int = DEFAULT_VEP_WINDOW,
    store: str | Path | None = None,
    limit: int | None = None,
    name: str | None = None,
    device: str = DEFAULT_DEVICE,
    batch_tokens: int | None = None,
    trust_remote_code: bool = False,
    run: ScoreRun | None = None,
) -> pd.DataFrame:
    """One row per (variant, scorer): score and status (see module doc and docs/vep.md)."""
    from geneb.models.device import resolve_device

    vt = task if isinstance(task, VariantTask) else load_variant_task(task)
    scorers = list(scorers)
    vt, limit = cut_to_limit(vt, limit)
    check_reference_room(vt, check_window(window))
    dev = resolve_device(device)
    budget = batch_tokens or vep_batch_tokens(dev)
    run = run if run is not None else ScoreRun()
    want_lm = "llr" in scorers
    from geneb.models.registry import check_spec

    check_spec(model, device=dev, trust_remote_code=trust_remote_code)  # before heads load
    caps = detect(model, want_heads=want_lm, trust_remote_code=trust_remote_code, device=dev)
    for s in scorers:
        require_scorer(caps, s)
    embedder = None
    jobs: list[Any] = []
    emb_scorers = [s for s in scorers if s in EMBEDDING_SCORERS]
    if emb_scorers:
        from geneb.models.registry import get_embedder

        embedder = get_embedder(model, device=dev, trust_remote_code=trust_remote_code)
    model_key = name or (embedder.name if embedder is not None else _lm_name(model))
    lm = _lm_scorer(caps, dev, budget) if want_lm else None
    contexts = [embedder_context(embedder, model_key) if embedder is not None else None,
                lm_context(lm, model_key) if lm is not None else None]
    for ctx in contexts:  # before any window is built or any forward runs
        check_window_fits(ctx, vt, window)
    win = make_windows(vt, window)
    parts = []
    if embedder is not None:
        emb_win = mark_unseeable(contexts[0], win)
        if store is not None:
            jobs = _plan_store(store, embedder, name, vt, emb_win, limit)
        ref_emb, alt_emb, ok = _embeddings(embedder, emb_win, vt, jobs, budget, run)
        for s in emb_scorers:
            sc, st = distance_scores(emb_win, ok, ref_emb, alt_emb, s)
            parts.append(score_table(vt, emb_win, model_key, s, sc, st, ""))
    if lm is not None:
        kind = lm.kind
        alleles = list(zip(vt.table["ref"], vt.table["alt"], strict=True))
        sc, st = llr_scores(lm, win, alleles)
        run.forwards += lm.forwards
        run.sequences += lm.sequences
        parts.append(score_table(vt, win, model_key, "llr", sc, st, kind))
    order = {s: k for k, s in enumerate(scorers)}
    parts.sort(key=lambda df: order[str(df["scorer"].iloc[0])])
    return pd.concat(parts, ignore_index=True)


def _lm_scorer(caps: Any, device: str, budget: int) -> Any:
    """The LLR scorer of the model's preferred language-model head."""
    from geneb.vep.likelihood import LMScorer

    kind = next(k for k in HEADS if k in caps.heads)
    lm_model, tok = caps.heads[kind]
    return LMScorer(lm_model, tok, kind, device, budget)


def cut_to_limit(vt: VariantTask, limit: int | None) -> tuple[VariantTask, int | None]:
    """The task cut to its first ``limit`` variants, and the limit (None when not cut)."""
    if limit is not None and limit < len(vt):
        return _head(vt, limit), limit
    return vt, None


@dataclass(frozen=True, eq=False)
class WindowEmbeddings:
    """Mean-pooled embeddings of every distinct reference window and every scored variant's
    alternate window (``alt[j]`` belongs to variant ``ok[j]``)."""

    task: VariantTask  # cut to ``limit`` when one was given
    windows: Windows
    ref: np.ndarray  # (n distinct ref windows, d) float32
    alt: np.ndarray  # (len(ok), d) float32
    ok: np.ndarray  # int64 indices of the variants with a window
    model: str  # the model's name in tables and the store


@validate_params(LIMITS)
def window_embeddings(
    task: str | Path | VariantTask,
    model: str,
    *,
    window: int = DEFAULT_VEP_WINDOW,
    store: str | Path | None = None,
    limit: int | None = None,
    name: str | None = None,
    device: str = "cpu",
    batch_tokens: int | None = None,
    trust_remote_code: bool = False,
    run: ScoreRun | None = None,
) -> WindowEmbeddings:
    """Reference/alternate window embeddings of a task, kept in (and reused from) ``store``
    exactly as ``score_variants`` keeps them: the supervised probe reads the same entries."""
    from geneb.models.device import resolve_device
    from geneb.models.registry import get_embedder

    vt = task if isinstance(task, VariantTask) else load_variant_task(task)
    vt, limit = cut_to_limit(vt, limit)
    check_reference_room(vt, check_window(window))
    dev = resolve_device(device)
    budget = batch_tokens or vep_batch_tokens(dev)
    embedder = get_embedder(model, device=dev, trust_remote_code=trust_remote_code)
    ctx = embedder_context(embedder, name or embedder.name)
    check_window_fits(ctx, vt, window)
    win = mark_unseeable(ctx, make_windows(vt, window))
    jobs = _plan_store(store, embedder, name, vt, win, limit) if store is not None else []
    ref, alt, ok = _embeddings(embedder, win, vt, jobs, budget,
                               run if run is not None else ScoreRun())
    return WindowEmbeddings(vt, win, ref, alt, ok, name or embedder.name)


def vep_batch_tokens(device: str) -> int:
    """The token budget used when none is given (``CPU_BATCH_TOKENS`` on CPU)."""
    from geneb.extract.batching import default_batch_tokens

    return CPU_BATCH_TOKENS if device == "cpu" else default_batch_tokens(device)


def _lm_name(model: str) -> str:
    p = Path(model.removeprefix("hf:"))
    return p.resolve().name if p.is_dir() else model


def _head(vt: VariantTask, limit: int) -> VariantTask:
    return VariantTask(
        vt.name, vt.folder, vt.source, vt.table.iloc[:limit].reset_index(drop=True),
        vt.records, vt.fingerprint + f":first{limit}",
    )


def score_table(
    vt: VariantTask, win: Windows, model: str, scorer: str, score: np.ndarray,
    status: np.ndarray, head: str,
) -> pd.DataFrame:
    """One row per variant of ``vt`` for one scorer (columns ``CORE``, then the task's own)."""
    t = vt.table
    df = pd.DataFrame({
        "task": vt.name, "variant": t["variant"].to_numpy(), "chrom": t["chrom"].to_numpy(),
        "pos": t["pos"].to_numpy(), "ref": t["ref"].to_numpy(), "alt": t["alt"].to_numpy(),
        "label": t["label"].to_numpy(), "model": model, "scorer": scorer,
        "window": np.int64(win.window), "score": score, "status": status.astype(str),
        "orientation": "higher=label1" if ORIENTATION[scorer] > 0 else "lower=label1",
        "head": head,
    })
    for c in t.columns:
        if c in ("variant", "chrom", "pos", "ref", "alt", "label", "record", "offset"):
            continue
        out = "task_score" if c == "score" else (f"task_{c}" if c in CORE else c)
        df[out] = t[c].to_numpy()
    return df


# ------------------------------------------------------------------ embeddings + store
def _fp(seqs: Sequence[str]) -> str:
    h = hashlib.sha256()
    for s in seqs:
        h.update(s.encode() + b"\0")
    return "sha256:" + h.hexdigest()


def _plan_store(
    store: str | Path, embedder: Embedder, name: str | None, vt: VariantTask, win: Windows,
    limit: int | None,
) -> list[Any]:
    """(key, provenance, sequences, labels, rows, plan) per split; stale entries refused."""
    from geneb.models.embedder import model_info
    from geneb.store import FeatureStore, Provenance, StoreKey

    fs = FeatureStore(store, "a")
    info = model_info(embedder)
    model_key = name or embedder.name
    task_key = store_task_key(vt, win.window, limit)
    ok = np.flatnonzero(win.status == OK)
    splits: dict[str, tuple[list[str], np.ndarray, np.ndarray]] = {
        "ref": (win.ref_windows, np.full(len(win.ref_windows), -1, dtype=np.int64),
                np.arange(len(win.ref_windows), dtype=np.int64)),
        "alt": (win.alts_of(ok), vt.table["label"].to_numpy()[ok],
                vt.table["variant"].to_numpy()[ok]),
    }
    jobs, stale = [], []
    for split, (seqs, labels, rows) in splits.items():
        key = StoreKey(model_key, task_key, split)
        extra = dict(info.extra)
        extra.update({"vep_window": win.window, "vep_split": split, "variant_task": vt.name,
                      "variant_task_fingerprint": vt.fingerprint})
        prov = Provenance(
            model_id=model_key, revision=info.revision, task_id=task_key,
            task_fingerprint=_fp(seqs), n_params=info.n_params, model_type=info.model_type,
            tokenizer=info.tokenizer, pooling=info.pooling, layer=info.layer,
            max_length=info.max_length, truncation=info.truncation, dtype=info.dtype,
            device=info.device, adapter=info.adapter, extra=extra,
        )
        plan = fs.plan(key, prov)
        if plan.action == "refuse":
            stale.append(f"{key}: {plan.reason}")
        jobs.append((fs, key, prov, seqs, labels, rows, plan))
    if stale:
        raise StaleEntryError(f"refusing to touch stale entries in {fs.path} (nothing written):"
                              "\n  " + "\n  ".join(stale))
    return jobs


def embed_equal_length(embedder: Embedder, seqs: Sequence[str], budget: int) -> np.ndarray:
    """Embeddings of ``seqs`` (row order kept), batching only inputs of one token length, so
    no row is ever padded and its embedding cannot depend on its batch neighbours."""
    from geneb.extract.batching import prepared_api
    from geneb.models.embedder import check_embedding
    from geneb.vep.likelihood import equal_length_batches

    prepare, cost, embed_prepared = prepared_api(embedder)
    items = prepare(list(seqs))
    out = np.empty((len(seqs), embedder.dim), dtype=np.float32)
    costs = np.asarray(cost(items), dtype=np.int64)
    for idx in equal_length_batches(costs, budget):
        emb = embed_prepared([items[i] for i in idx])
        out[idx] = check_embedding(emb, len(idx), embedder.dim, embedder.name)
    return out


def _embeddings(
    embedder: Embedder, win: Windows, vt: VariantTask, jobs: list[Any], budget: int,
    run: ScoreRun
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    ok = np.flatnonzero(win.status == OK)
    if not jobs:
        ref = embed_equal_length(embedder, win.ref_windows, budget)
        alt = embed_equal_length(embedder, win.alts_of(ok), budget)
        run.embedded += len(win.ref_windows) + len(ok)
        return ref, alt, ok
    got = []
    for fs, key, prov, seqs, labels, rows, plan in jobs:
        if not seqs:  # no window to keep (all outside the reference): no entry is written
            got.append(np.zeros((0, embedder.dim), dtype=np.float32))
            continue
        if plan.action == "skip":
            got.append(fs.get(key.model, key.task, key.split).embeddings.astype(np.float32))
            run.reused += len(seqs)
            continue
        emb = embed_equal_length(embedder, seqs, budget)
        run.embedded += len(seqs)
        with fs.writer(key, provenance=prov, labels=labels, rows=rows, dim=embedder.dim) as w:
            if not w.done:
                w.append(emb[w.start_row :])
        got.append(emb)
    return got[0], got[1], ok
