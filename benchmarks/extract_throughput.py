"""Extraction throughput: geneb's pipeline vs a naive loop and vs the bare model forward.

Measured in one run, on the same loaded model and the same rows (issue 3 benchmark):

1. variable-length task (default ``lncrna_ath_prelnc``, a few hundred rows, truncated to the
   model context): geneb's runner (length-bucketed, token budget, streamed into a store) vs a
   naive loop (fixed-order batches of 32 padded to the longest, same masked mean pooling).
   Target: >= 1.5x.
2. equal-length task (default ``gue_tf_0``): geneb's runner (tokenising, batching, pooling,
   store writes included) vs the bare model forward + pooling on pre-tokenised batches of the
   same size. Target: >= 0.95x (pipeline overhead under 5%).
3. peak RSS of a fresh process extracting 1x and 4x the rows (same model), and of kmer-8
   (256 KiB per row, so a non-streaming runner would grow by hundreds of MB): flat.
4. batch invariance (issue 11, ``--invariance``): the REAL HyenaDNA checkpoint (which ignores
   ``attention_mask`` and pads on the left) on a real variable-length task (default
   ``dhs_idhs_fflg`` test, 50-300 bp): geneb's length-bucketed path under the measured batch
   policy vs one sequence per forward vs the (wrong) batch padded the tokenizer's way, same
   batches. Throughput of the three, and each row's error against the row embedded alone.
   Target: bucketed >= 3x one-at-a-time, every row within 1e-4 of alone.

       HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/extract_throughput.py --invariance \
           --data-dir ../shared/data [--repeats 3]

Default model: a MiniLM-sized BERT (hidden 384, 6 layers) with seeded random weights on the
real DNABERT-2 BPE tokenizer, built in a temp folder (throughput does not depend on weight
values; a DNA tokenizer keeps the length spread that truncation to 512 tokens would flatten for
the spaced-6-mer MiniLM control, which can be measured with ``--model minilm-text-control``).
Wall and process-CPU times are medians of ``--repeats`` interleaved runs (CPU time is less
sensitive to other load). Run on an otherwise idle machine:

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/extract_throughput.py \\
        --data-dir ../shared/data [--model minilm-text-control] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


class Clock:
    """Wall time and this process's CPU time (less sensitive to other load on the machine)."""

    def __enter__(self) -> Clock:
        self.w0, self.c0 = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc) -> None:
        self.wall = time.perf_counter() - self.w0
        self.cpu = time.process_time() - self.c0


def subset_task(task, split: str, n: int, seed: int = 0):
    """A Task with one split ``train`` holding ``n`` random rows (file order kept)."""
    from geneb.tasks.spec import SplitData, Task, split_fingerprint

    s = task.split(split)
    rng = np.random.default_rng(seed)
    idx = np.sort(rng.choice(len(s), size=min(n, len(s)), replace=False))
    seqs = tuple(s.sequences[i] for i in idx)
    labels = s.labels[idx]
    sd = SplitData("train", seqs, labels, s.rows[idx], split_fingerprint(seqs, labels))
    return Task(task.spec, {"train": sd})


BUILT_MODEL = "bert384-dnabert2-tok"


def build_dna_bert(out: Path, tokenizers_dir: Path) -> Path:
    """A MiniLM-sized BERT (hidden 384, 6 layers, 512 positions) on the real DNABERT-2 BPE
    tokenizer, seeded random weights: the per-token cost of a real small encoder with a DNA
    tokenizer (~4-5 bp per token, so the task's length spread survives truncation)."""
    import torch
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    folder = out / BUILT_MODEL
    if (folder / "config.json").exists():
        return folder
    tok = PreTrainedTokenizerFast.from_pretrained(tokenizers_dir / "dnabert2-117m")
    tok.model_max_length = 512
    cfg = BertConfig(
        vocab_size=len(tok),
        hidden_size=384,
        num_hidden_layers=6,
        num_attention_heads=12,
        intermediate_size=1536,
        max_position_embeddings=512,
        pad_token_id=tok.pad_token_id,
    )
    torch.manual_seed(0)
    BertModel(cfg, add_pooling_layer=False).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def _med(clocks: list[Clock], kind: str) -> float:
    return statistics.median(getattr(c, kind) for c in clocks)


def run_pipeline(embedder, task, batch_tokens: int) -> tuple[Clock, np.ndarray]:
    """geneb's runner on ``task`` into a fresh store (embeddings returned)."""
    from geneb.extract.runner import extract
    from geneb.store import FeatureStore

    with tempfile.TemporaryDirectory() as d:
        with Clock() as c:
            extract(d, embedder, task, ("train",), batch_tokens=batch_tokens)
        emb = FeatureStore(d).get(embedder.name, task.name, "train").embeddings
    return c, emb


def _pool(hidden, mask):
    m = mask.unsqueeze(-1).to(hidden.dtype)
    return ((hidden * m).sum(1) / m.sum(1).clamp(min=1)).float().cpu().numpy()


def run_naive(embedder, seqs, batch: int = 32) -> tuple[Clock, np.ndarray]:
    """Fixed-order batches of ``batch``, padded to the longest, truncated to the context."""
    import torch

    tok, model, rules = embedder.tokenizer, embedder.model, embedder.rules
    texts = [rules.transform(s) for s in seqs]
    out = []
    with Clock() as c:
        for i in range(0, len(texts), batch):
            enc = tok(
                texts[i : i + batch],
                padding=True,
                truncation=True,
                max_length=embedder.max_length,
                return_tensors="pt",
            )
            if not rules.token_type_ids:
                enc.pop("token_type_ids", None)
            enc = {k: v.to(embedder.device) for k, v in enc.items()}
            with torch.inference_mode():
                out.append(_pool(model(**enc).last_hidden_state, enc["attention_mask"]))
    return c, np.concatenate(out)


def run_bare(embedder, batches) -> Clock:
    """Only the forward pass and pooling on pre-tokenised, pre-padded batches."""
    import torch

    model = embedder.model
    with Clock() as c:
        for enc in batches:
            with torch.inference_mode():
                _pool(model(**enc).last_hidden_state, enc["attention_mask"])
    return c


def pretokenise(embedder, seqs, rows_per_batch: int):
    tok, rules = embedder.tokenizer, embedder.rules
    texts = [rules.transform(s) for s in seqs]
    batches = []
    for i in range(0, len(texts), rows_per_batch):
        enc = tok(
            texts[i : i + rows_per_batch],
            padding=True,
            truncation=True,
            max_length=embedder.max_length,
            return_tensors="pt",
        )
        if not rules.token_type_ids:
            enc.pop("token_type_ids", None)
        batches.append({k: v.to(embedder.device) for k, v in enc.items()})
    return batches


def rss_child(model: str, task_name: str, data_dir: str, n: int, batch_tokens: int) -> None:
    """(Child process) extract ``n`` rows; print RSS before and peak RSS during, in MiB."""
    import gc
    import threading

    import psutil

    from geneb.extract.runner import extract
    from geneb.tasks.folders import resolve_task

    task = subset_task(resolve_task(task_name, data_dir), "train", n)
    gc.collect()
    proc = psutil.Process()
    before = proc.memory_info().rss
    peak = [before]
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], proc.memory_info().rss)
            stop.wait(0.005)

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        extract(d, model, task, ("train",), batch_tokens=batch_tokens or None, device="cpu")
        dt = time.perf_counter() - t0
    stop.set()
    th.join()
    mib = 1 << 20
    print(
        json.dumps(
            {
                "rows": n,
                "rss_before_mib": before / mib,
                "peak_rss_mib": peak[0] / mib,
                "growth_mib": (peak[0] - before) / mib,
                "seconds": dt,
            }
        )
    )


def measure_rss(model: str, task: str, data_dir: str, n: int, batch_tokens: int) -> dict:
    cmd = [
        sys.executable,
        __file__,
        "--rss-child",
        model,
        task,
        data_dir,
        str(n),
        str(batch_tokens),
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def invariance_modes(args) -> dict:
    """Section 4: throughput and per-row error of three batchings of the real HyenaDNA."""
    from geneb.extract.batching import policy_batches, token_budget_batches
    from geneb.models.registry import get_embedder
    from geneb.models.selftest import row_errors
    from geneb.tasks.folders import resolve_task

    folder = Path(args.models_dir or Path(args.data_dir).parent / "models") / args.real_model
    emb = get_embedder(str(folder), device="cpu", trust_remote_code=True)
    seqs = resolve_task(args.inv_task, args.data_dir).split(args.inv_split).sequences
    seqs = seqs[: args.inv_rows] if args.inv_rows else seqs
    items = emb.prepare(seqs)
    costs = emb.cost(items)
    budget = args.batch_tokens or 4096
    n, tokens = len(items), int(costs.sum())

    def bucketed() -> np.ndarray:  # geneb's path: the measured policy decides the batches
        out = np.empty((n, emb.dim), np.float32)
        for idx in policy_batches(costs, budget, emb.batch_policy):
            out[idx] = emb.embed_prepared([items[i] for i in idx])
        return out

    def alone() -> np.ndarray:
        return np.vstack([emb.embed_prepared([p]) for p in items])

    def padded() -> np.ndarray:  # same batches, padded on the tokenizer's side (the old path)
        out = np.empty((n, emb.dim), np.float32)
        for idx in token_budget_batches(costs, budget):
            wins = [items[i].windows[0] for i in idx]
            out[idx] = emb._forward(wins, emb.rules.padding_side)[0]
        return out

    for p in items[:8]:  # warm-up (first forward passes allocate and plan)
        emb.embed_prepared([p])
    runs: dict[str, list[Clock]] = {"bucketed": [], "alone": [], "padded": []}
    embs: dict[str, np.ndarray] = {}
    for r in range(args.repeats):  # interleaved against drifting load
        order = list(runs) if r % 2 == 0 else list(reversed(runs))
        for which in order:
            with Clock() as c:
                embs[which] = {"bucketed": bucketed, "alone": alone, "padded": padded}[which]()
            runs[which].append(c)
    res: dict = {
        "model": emb.name,
        "task": f"{args.inv_task}/{args.inv_split}",
        "rows": n,
        "tokens": tokens,
        "batch_tokens": budget,
        "policy": emb.batch_policy.describe(),
    }
    for which, clocks in runs.items():
        wall, cpu = _med(clocks, "wall"), _med(clocks, "cpu")
        err = row_errors(embs[which], embs["alone"])
        res[which] = {
            "wall_s": wall,
            "cpu_s": cpu,
            "seq_per_s": n / wall,
            "tok_per_s": tokens / wall,
            "row_err_max": float(err.max()),
            "row_err_median": float(np.median(err)),
            "rows_over_1e-4": int((err > 1e-4).sum()),
        }
    a = res["alone"]
    res["bucketed_vs_alone_wall"] = a["wall_s"] / res["bucketed"]["wall_s"]
    res["bucketed_vs_alone_cpu"] = a["cpu_s"] / res["bucketed"]["cpu_s"]
    res["padded_vs_alone_wall"] = a["wall_s"] / res["padded"]["wall_s"]
    print(json.dumps(res, indent=1))
    b, p = res["bucketed"], res["padded"]
    print(
        f"\n{emb.name} on {res['task']} ({n} rows, {tokens:,} tokens): "
        f"bucketed {b['seq_per_s']:.1f} seq/s, one-at-a-time {a['seq_per_s']:.1f} seq/s, "
        f"padded (wrong) {p['seq_per_s']:.1f} seq/s; bucketed = "
        f"{res['bucketed_vs_alone_wall']:.2f}x one-at-a-time by wall time, "
        f"{res['bucketed_vs_alone_cpu']:.2f}x by CPU time (target >= 3x). Rows over 1e-4 of "
        f"alone: bucketed {b['rows_over_1e-4']}/{n} (max {b['row_err_max']:.2g}), padded "
        f"{p['rows_over_1e-4']}/{n} (max {p['row_err_max']:.2g}, median "
        f"{p['row_err_median']:.2g})"
    )
    return res


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--rss-child":
        m, t, d, n, bt = sys.argv[2:7]
        rss_child(m, t, d, int(n), int(bt))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=os.environ.get("GENEB_DATA_DIR", "../shared/data"))
    ap.add_argument(
        "--model",
        default=BUILT_MODEL,
        help=f"any --model spec, or {BUILT_MODEL} (built in a temp folder; see build_dna_bert)",
    )
    ap.add_argument("--models-dir", default=None, help="shared models (default: next to data)")
    ap.add_argument("--var-task", default="lncrna_ath_prelnc")
    ap.add_argument("--var-rows", type=int, default=200)
    ap.add_argument("--eq-task", default="gue_tf_0")
    ap.add_argument("--eq-rows", type=int, default=512)
    ap.add_argument("--rss-rows", type=int, default=1000, help="1x rows (4x also run)")
    ap.add_argument(
        "--batch-tokens", type=int, default=0, help="token budget (default: geneb's own)"
    )
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", default=None, help="also write the figures here")
    ap.add_argument("--invariance", action="store_true", help="run only section 4")
    ap.add_argument("--real-model", default="real/hyenadna-tiny-1k-anticapt")
    ap.add_argument("--inv-task", default="dhs_idhs_fflg")
    ap.add_argument("--inv-split", default="test")
    ap.add_argument("--inv-rows", type=int, default=0, help="first N rows (0: all)")
    args = ap.parse_args()
    if args.invariance:
        res = invariance_modes(args)
        if args.json:
            Path(args.json).write_text(json.dumps(res, indent=1))
        return

    import torch

    from geneb.models.registry import get_embedder
    from geneb.tasks.folders import resolve_task

    scratch = tempfile.TemporaryDirectory()
    if args.model == BUILT_MODEL:
        models_dir = Path(args.models_dir or Path(args.data_dir).parent / "models")
        args.model = str(build_dna_bert(Path(scratch.name), models_dir / "tokenizers"))
    emb = get_embedder(args.model, device="cpu")
    from geneb.extract.batching import default_batch_tokens

    args.batch_tokens = args.batch_tokens or default_batch_tokens(emb.device)
    print(
        f"model {emb.name}: dim {emb.dim}, context {emb.max_length} tokens, "
        f"{emb.info.n_params:,} params, torch threads {torch.get_num_threads()}"
    )
    res: dict = {"model": emb.name, "batch_tokens": args.batch_tokens, "repeats": args.repeats}

    # 1) variable length: pipeline vs naive fixed-order batches of 32
    vt = subset_task(resolve_task(args.var_task, args.data_dir), "train", args.var_rows)
    seqs = vt.split("train").sequences
    lens = [len(p.windows[0]) for p in emb.prepare(seqs)]
    run_pipeline(emb, subset_task(vt, "train", 8), args.batch_tokens)  # warm-up
    naive_t, pipe_t = [], []
    for r in range(args.repeats):  # interleaved, order alternating, against drifting load
        for which in ("naive", "pipe") if r % 2 == 0 else ("pipe", "naive"):
            if which == "naive":
                c, e_naive = run_naive(emb, seqs)
                naive_t.append(c)
            else:
                c, e_pipe = run_pipeline(emb, vt, args.batch_tokens)
                pipe_t.append(c)
    n_med, p_med = _med(naive_t, "wall"), _med(pipe_t, "wall")
    res["variable"] = {
        "task": args.var_task,
        "rows": len(seqs),
        "tokens_min": min(lens),
        "tokens_median": int(np.median(lens)),
        "tokens_max": max(lens),
        "naive_s": n_med,
        "pipeline_s": p_med,
        "speedup": n_med / p_med,
        "naive_cpu_s": _med(naive_t, "cpu"),
        "pipeline_cpu_s": _med(pipe_t, "cpu"),
        "speedup_cpu_time": _med(naive_t, "cpu") / _med(pipe_t, "cpu"),
        "pipeline_seq_per_s": len(seqs) / p_med,
        "pipeline_tok_per_s": sum(lens) / p_med,
        "max_abs_diff_vs_naive": float(np.abs(e_naive - e_pipe).max()),
    }
    print(json.dumps(res["variable"], indent=1))

    # 2) equal length: pipeline vs bare forward on pre-tokenised batches of the same size
    et = subset_task(resolve_task(args.eq_task, args.data_dir), "train", args.eq_rows)
    eseqs = et.split("train").sequences
    elens = [len(p.windows[0]) for p in emb.prepare(eseqs)]
    per_batch = max(1, args.batch_tokens // max(elens))
    batches = pretokenise(emb, eseqs, per_batch)
    bare_t, pipe_t = [], []
    for r in range(args.repeats):
        for which in ("bare", "pipe") if r % 2 == 0 else ("pipe", "bare"):
            if which == "bare":
                bare_t.append(run_bare(emb, batches))
            else:
                pipe_t.append(run_pipeline(emb, et, args.batch_tokens)[0])
    b_med, p_med = _med(bare_t, "wall"), _med(pipe_t, "wall")
    res["equal"] = {
        "task": args.eq_task,
        "rows": len(eseqs),
        "rows_per_batch": per_batch,
        "tokens_min": min(elens),
        "tokens_max": max(elens),
        "bare_s": b_med,
        "pipeline_s": p_med,
        "pipeline_vs_bare": b_med / p_med,
        "bare_cpu_s": _med(bare_t, "cpu"),
        "pipeline_cpu_s": _med(pipe_t, "cpu"),
        "pipeline_vs_bare_cpu_time": _med(bare_t, "cpu") / _med(pipe_t, "cpu"),
        "pipeline_seq_per_s": len(eseqs) / p_med,
    }
    print(json.dumps(res["equal"], indent=1))

    # 3) peak RSS, fresh processes, 1x and 4x rows
    rss = {}
    for model in (args.model, "kmer-8"):
        r1 = measure_rss(model, args.eq_task, args.data_dir, args.rss_rows, args.batch_tokens)
        r4 = measure_rss(model, args.eq_task, args.data_dir, 4 * args.rss_rows, args.batch_tokens)
        rss[model] = {
            "1x": r1,
            "4x": r4,
            "peak_4x_minus_1x_mib": r4["peak_rss_mib"] - r1["peak_rss_mib"],
        }
        print(model, json.dumps(rss[model]))
    res["rss"] = rss
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1))
    v, e = res["variable"], res["equal"]
    print(
        f"\nvariable-length ({v['task']}, {v['rows']} rows): pipeline {v['speedup']:.2f}x "
        f"the naive loop by wall time, {v['speedup_cpu_time']:.2f}x by CPU time "
        "(target >= 1.5x)"
    )
    print(
        f"equal-length ({e['task']}, {e['rows']} rows): pipeline {e['pipeline_vs_bare']:.3f}x "
        f"(wall), {e['pipeline_vs_bare_cpu_time']:.3f}x (CPU time) "
        f"the bare forward (target >= 0.95x)"
    )
    for model, r in rss.items():
        print(
            f"peak RSS {model}: {r['1x']['peak_rss_mib']:.0f} MiB ({r['1x']['rows']} rows) vs "
            f"{r['4x']['peak_rss_mib']:.0f} MiB ({r['4x']['rows']} rows)"
        )


if __name__ == "__main__":
    main()
