"""Variant-effect scoring speed: geneb's LLR scorers vs the naive loop (issue 12 benchmark).

On the real BRCA1 task (window 1024 by default) with the tiny causal LM
(``tiny-llama-char-clm``) and the tiny masked LM (``tiny-bert-char-mlm``), in one process, on
the same loaded model and the same variants (the first ``--variants`` rows of the task:
contiguous rows, so positions are shared as in the whole task, ~2.9 alleles per position):

- geneb: ``llr_scores`` (tokenising included): causal = one forward per distinct reference
  window + one per alternate window; masked = one forward per distinct position (masked
  reference window) serving every allele there; equal-length batches under the token budget.
- naive: two forwards per variant, one variant at a time (causal: ref window and alt window;
  masked: the masked ref window for log p(ref) and the masked alt window for log p(alt) -- the
  same inputs for an SNV, so the same scores).

Both must give the same scores (max |difference| is printed; it must be < 1e-4). Reported:
forward passes, windows (sequences) through the model, wall and process-CPU time (medians
of ``--repeats`` interleaved runs; CPU time is less sensitive to other load on a shared
machine), sequences/s, variants/s and the speed-ups. Targets: >= 4x (masked), >= 1.5x
(causal). Run on an otherwise idle machine:

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/vep.py --shared ../shared [--variants 300]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def naive(model, tok, kind: str, wins, half: int) -> tuple[np.ndarray, int]:
    """Two forwards per variant, one at a time; returns (scores, forwards)."""
    import torch

    out = np.empty(len(wins))
    fwd = 0
    for i, (ref_w, alt_w) in enumerate(wins):
        lls = []
        for w in (ref_w, alt_w):
            ids = torch.tensor([tok(w)["input_ids"]])
            if kind == "causal_lm":
                with torch.inference_mode():
                    lp = torch.log_softmax(model(input_ids=ids).logits.float(), -1)[0]
                fwd += 1
                lls.append(float(lp[:-1].gather(-1, ids[0, 1:, None]).double().sum()))
            else:
                k = 1 + half  # character tokens after [CLS]
                masked = ids.clone()
                masked[0, k] = tok.mask_token_id
                with torch.inference_mode():
                    lp = torch.log_softmax(model(input_ids=masked).logits.float(), -1)[0, k]
                fwd += 1
                lls.append(float(lp[int(ids[0, k])]))
        out[i] = lls[1] - lls[0]
    return out, fwd


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", default="../shared")
    ap.add_argument("--variants", type=int, default=300, help="first N variants of the task")
    ap.add_argument("--window", type=int, default=1024)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--batch-tokens", type=int, default=None)
    ap.add_argument("--json", default=None, help="also write the figures here")
    args = ap.parse_args()

    import torch
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM, AutoTokenizer

    from geneb.tasks.variants import load_variant_task
    from geneb.tasks.windows import make_windows
    from geneb.vep.likelihood import LMScorer
    from geneb.vep.runner import _head, vep_batch_tokens
    from geneb.vep.scorers import llr_scores

    shared = Path(args.shared)
    vt = load_variant_task(shared / "variants" / "brca1_findlay2018")
    if args.variants and args.variants < len(vt):
        vt = _head(vt, args.variants)
    win = make_windows(vt, args.window)
    assert (win.status == "ok").all()
    alleles = list(zip(vt.table["ref"], vt.table["alt"], strict=True))
    wins = [(win.ref_of(i), win.alt_windows[i]) for i in range(len(vt))]
    budget = args.batch_tokens or vep_batch_tokens("cpu")
    print(f"BRCA1: {len(vt)} variants at {len(win.ref_windows)} positions, window "
          f"{args.window}, torch threads {torch.get_num_threads()}, batch tokens {budget}")
    results = {}
    for folder, kind, cls in (("tiny-llama-char-clm", "causal_lm", AutoModelForCausalLM),
                              ("tiny-bert-char-mlm", "masked_lm", AutoModelForMaskedLM)):
        path = shared / "models" / "tiny-lm" / folder
        model = cls.from_pretrained(path, dtype=torch.float32).eval()
        tok = AutoTokenizer.from_pretrained(path)
        t_geneb, t_naive, c_geneb, c_naive = [], [], [], []
        for _ in range(args.repeats):  # interleaved, so load changes hit both alike
            lm = LMScorer(model, tok, kind, "cpu", budget)
            t0, c0 = time.perf_counter(), time.process_time()
            ours, _ = llr_scores(lm, win, alleles)
            t_geneb.append(time.perf_counter() - t0)
            c_geneb.append(time.process_time() - c0)
            t0, c0 = time.perf_counter(), time.process_time()
            ref, fwd_naive = naive(model, tok, kind, wins, args.window // 2)
            t_naive.append(time.perf_counter() - t0)
            c_naive.append(time.process_time() - c0)
        g, nv = statistics.median(t_geneb), statistics.median(t_naive)
        cg, cn = statistics.median(c_geneb), statistics.median(c_naive)
        diff = float(np.max(np.abs(ours - ref)))
        r = {
            "variants": len(vt), "positions": len(win.ref_windows),
            "geneb_forwards": lm.forwards, "geneb_sequences": lm.sequences,
            "naive_forwards": fwd_naive, "naive_sequences": fwd_naive,
            "geneb_s": g, "naive_s": nv, "speedup": nv / g,
            "geneb_seq_per_s": lm.sequences / g, "naive_seq_per_s": fwd_naive / nv,
            "geneb_variants_per_s": len(vt) / g, "naive_variants_per_s": len(vt) / nv,
            "geneb_cpu_s": cg, "naive_cpu_s": cn, "cpu_speedup": cn / cg,
            "max_abs_score_diff": diff,
        }
        results[kind] = r
        print(f"{kind} ({folder}): geneb {lm.forwards} forwards / {lm.sequences} sequences in "
              f"{g:.2f} s ({r['geneb_seq_per_s']:.1f} seq/s, {r['geneb_variants_per_s']:.1f} "
              f"variants/s); naive {fwd_naive} forwards in {nv:.2f} s ({r['naive_seq_per_s']:.1f}"
              f" seq/s, {r['naive_variants_per_s']:.1f} variants/s); speed-up {nv / g:.2f}x "
              f"wall, {cn / cg:.2f}x process CPU ({cg:.1f} vs {cn:.1f} s); "
              f"forward ratio {fwd_naive / lm.forwards:.1f}x, sequence ratio "
              f"{fwd_naive / lm.sequences:.2f}x; max |score diff| {diff:.2e}")
        assert diff < 1e-4, "geneb and the naive loop disagree"
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
