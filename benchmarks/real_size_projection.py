"""The GENEB probe phase (41 models x 100 tasks x 75 linear cells) projected from real-size pairs.

Input: the JSON of ``real_size.py`` (measured pairs). Per pair (model width d, task train size
n capped at 100,000, K classes) the projection is

    full regime  = ratio(n, d, K) x limit(n, d, K)
    limit        = K'^2 n d^2 / GEMM rate + 50 n d 4 bytes / pass rate
    1- and 10-shot regimes = a + b d (least squares over the measured pairs)

with the GEMM rate and the pass rate (bytes per second of one float32 pass) the medians
measured on the pairs with the largest limits (``--top``), and ratio(n, d, K) the measured
full-regime / limit ratio of the nearest measured shape (same binary / multi-class kind when
one was measured; nearest in log n and log d), all on the run's two threads. (Before
2026-12-02 one median ratio of the ``--top`` pairs served every pair.) Task sizes: GENEB's
task list (``geneb/tasks/geneb_list.json``) joined to the task catalogue's train sizes where
known; the median of the known ones elsewhere (counted and said).
Widths: ``GENEB_WIDTHS`` below (the model catalogue has no hidden sizes).

The MLP check (when the JSON has ``real_size.py --mlp`` figures): a pair's 15 MLP cells cost
``a + b n d`` seconds (least squares over the measured pairs: an epoch of the full regime is
~6 n d h multiply-adds for h = 256 hidden units, at most 200 epochs), and ``--mlp-pairs N``
pairs (default 143, the issue's "GENEB's 143 pairs", a set defined nowhere found: no MLP probe
and no such subset in GENEB's public material) are costed as N pairs of the mean 41 x 100
pair; the whole 41 x 100 MLP phase is given beside it.

    .venv/bin/python benchmarks/real_size_projection.py /tmp/after.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
ROW_CAP = 100_000
#: hidden size of each of the 41 leaderboard models (``task_mcc_full.csv`` names): the
#: ``hidden_size`` / ``d_model`` of the model's published hub ``config.json`` or model card,
#: written down from those sources (not fetched here: this machine has no hub access); the
#: ones marked ``est`` are estimates from the architecture class and parameter count.
GENEB_WIDTHS: dict[str, tuple[int, str]] = {
    "agro-nucleotide-transformer-1b": (1500, "InstaDeepAI/agro-nucleotide-transformer-1b config"),
    "BioFM-265M": (1280, "est: 265M encoder"),
    "caduceus-ph_seqlen-1k_d_model-256_n_layer-4_lr-8e-3": (256, "d_model in the hub name"),
    "caduceus-ps_seqlen-131k_d_model-256_n_layer-16": (256, "d_model in the hub name"),
    "deepgene": (768, "est: BERT-base, 85M"),
    "dna_gpt0.1b_h": (768, "DNAGPT 0.1B (GPT-2 small) paper"),
    "dna_gpt3b_m": (2560, "est: 3B decoder"),
    "DNABERT-S": (768, "zhihan1996/DNABERT-S config"),
    "dnabert2-no-flashattention": (768, "zhihan1996/DNABERT-2-117M config"),
    "eccdnamamba_weights": (1024, "est: 537M Mamba"),
    "enformer-official-rough": (3072, "Enformer trunk output (2 x 1536), paper"),
    "evo-1-131k-base": (4096, "togethercomputer/evo-1-131k-base config"),
    "gena-lm-bert-base": (768, "AIRI-Institute/gena-lm-bert-base config"),
    "gena-lm-bert-base-t2t-multi": (768, "AIRI-Institute/gena-lm-bert-base-t2t-multi config"),
    "gena-lm-bert-large-t2t": (1024, "AIRI-Institute/gena-lm-bert-large-t2t config"),
    "GENERator-eukaryote-1.2b-base": (2048, "GenerTeam/GENERator-eukaryote-1.2b-base config"),
    "GENERator-eukaryote-3b-base": (2560, "est: 3B Llama decoder"),
    "GenomeOcean-4B": (3072, "DOEJGI/GenomeOcean-4B config"),
    "GenomeOcean-500M": (1024, "est: 500M Mistral decoder"),
    "genomics-fm": (768, "est: 120M encoder"),
    "gpt2_gene_multi_v2_ft": (1024, "est: 200M GPT-2 medium"),
    "gpt2_gene_v1": (1024, "est: 200M GPT-2 medium"),
    "GROVER": (768, "PoetschLab/GROVER config"),
    "hyenadna-large-1m-seqlen-hf": (256, "LongSafari/hyenadna-large-1m-seqlen-hf config"),
    "hyenadna-medium-160k-seqlen-hf": (256, "LongSafari/hyenadna-medium-160k-seqlen-hf config"),
    "JanusDNA_72_w": (144, "est: 1.98M parameters"),
    "JanusDNA_72_wo": (144, "est: 1.98M parameters"),
    "LucaOne-default-step36M": (2560, "LucaOne paper (embedding 2560)"),
    "METAGENE-1": (4096, "metagene-ai/METAGENE-1 config (Llama-2 7B shape)"),
    "MutBERT": (768, "JadenLong/MutBERT config"),
    "nucleotide-transformer-2.5b-multi-species": (2560, "InstaDeepAI NT-2.5B-MS config"),
    "nucleotide-transformer-v2-100m-multi-species": (512, "InstaDeepAI NT-v2-100M config"),
    "nucleotide-transformer-v2-250m-multi-species": (768, "InstaDeepAI NT-v2-250M config"),
    "nucleotide-transformer-v2-50m-3mer-multi-species": (512, "InstaDeepAI NT-v2-50M-3mer config"),
    "nucleotide-transformer-v2-50m-multi-species": (512, "InstaDeepAI NT-v2-50M config"),
    "Omni-DNA-1B": (2048, "zehui127/Omni-DNA-1B config (OLMo 1B)"),
    "Omni-DNA-300M": (1024, "zehui127/Omni-DNA-300M config"),
    "OmniNA-220m": (1024, "est: 220M decoder"),
    "PlantCaduceus_l32": (1024, "kuleshov-group/PlantCaduceus_l32 config"),
    "space": (1536, "est: 589M"),
    "splicebert-1024nt": (512, "SpliceBERT paper (6 layers, 512)"),
}


def geneb_tasks() -> tuple[list[tuple[int, int]], int]:
    """(train rows capped at 100,000, classes) of GENEB's 100 tasks, and how many sizes the
    catalogue knows (the others get the median of the known ones)."""
    cat = {t["name"]: t for t in json.loads(
        (REPO / "geneb" / "tasks" / "catalogue.json").read_text())["tasks"]}
    listed = json.loads((REPO / "geneb" / "tasks" / "geneb_list.json").read_text())["tasks"]
    rows = [(cat.get(t.get("catalogue_name") or "", {}).get("n_train"),
             cat.get(t.get("catalogue_name") or "", {}).get("n_classes") or 2) for t in listed]
    known = [n for n, _ in rows if n]
    fill = int(np.median(known)) if known else 10_000
    return [(min(ROW_CAP, n or fill), int(k)) for n, k in rows], len(known)


def rates(measured: list[dict], top: int) -> dict[str, float]:
    """GEMM rate, pass rate and full-regime / limit ratio: medians over the ``top`` pairs with
    the largest limits (small pairs measure Python overhead, not the machine)."""
    big = sorted(measured, key=lambda r: -r["limit_s"])[:top]
    return {"gflops": float(np.median([r["gemm_gflops"] for r in big])),
            "pass_gbs": float(np.median([r["n_train"] * r["width"] * 4 / r["pass_s"] / 1e9
                                         for r in big])),
            "ratio_top": float(np.median([r["ratio"] for r in big]))}


def nearest_ratio(measured: list[dict], n: int, d: int, K: int) -> float:
    """The full-regime / limit ratio of the measured shape nearest to (n, d) in log n and
    log d among those with the same kind (binary or multi-class), all when none has it."""
    same = [m for m in measured if (m["classes"] > 2) == (K > 2)] or measured
    best = min(same, key=lambda m: np.hypot(np.log(m["n_train"] / n), np.log(m["width"] / d)))
    return float(best["ratio"])


def project(measured: list[dict], top: int = 3, **override: float) -> dict:
    """Hours of the 75-cell linear grid over 41 x 100 pairs (2 threads), and per core;
    ``override``: ``gflops`` / ``pass_gbs`` of another machine (the ratio is kept)."""
    r = {**rates(measured, top), **{k: v for k, v in override.items() if v}}
    ds = np.array([m["width"] for m in measured], dtype=np.float64)
    few = np.array([m["regime_1_s"] + m["regime_10_s"] for m in measured])
    b, a = np.polyfit(ds, few, 1) if len(set(ds)) > 1 else (0.0, float(few.mean()))
    tasks, n_known = geneb_tasks()
    total_full = total_few = 0.0
    for d, _src in GENEB_WIDTHS.values():
        for n, K in tasks:
            Kp = K - 1 if K > 2 else 1
            limit = Kp * Kp * n * d * d / (r["gflops"] * 1e9) + 50 * n * d * 4 / (
                r["pass_gbs"] * 1e9)
            total_full += nearest_ratio(measured, n, d, K) * limit
            total_few += max(0.0, a + b * d)
    hours = (total_full + total_few) / 3600
    return {**r, "few_shot_a_s": float(a), "few_shot_b_s_per_dim": float(b),
            "models": len(GENEB_WIDTHS), "tasks": len(tasks), "tasks_with_known_size": n_known,
            "full_h": total_full / 3600, "few_shot_h": total_few / 3600,
            "hours_2_cores": hours, "core_hours": 2 * hours,
            "hours_40x100_2_cores": hours * 40 / len(GENEB_WIDTHS)}


def project_mlp(measured: list[dict], pairs: int) -> dict:
    """Hours of the MLP check: ``pairs`` pairs at the mean fitted cost of GENEB's 41 x 100,
    and all 41 x 100 (see the module docstring); empty without MLP figures."""
    rows = [m for m in measured if "mlp" in m]
    if not rows:
        return {}
    nd = np.array([m["n_train"] * m["width"] for m in rows], dtype=np.float64)
    secs = np.array([m["mlp"]["seconds"] for m in rows])
    b, a = np.polyfit(nd, secs, 1) if len(set(nd)) > 1 else (float(secs.mean() / nd.mean()), 0.0)
    tasks, _ = geneb_tasks()
    per_pair = [max(0.0, a + b * n * d) for d, _src in GENEB_WIDTHS.values() for n, _K in tasks]
    mean = float(np.mean(per_pair))
    return {"mlp_a_s": float(a), "mlp_b_s_per_nd": float(b), "mlp_pair_mean_s": mean,
            "mlp_pairs": pairs, "mlp_check_h": pairs * mean / 3600,
            "mlp_all_pairs_h": float(np.sum(per_pair)) / 3600}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("measured", help="real_size.py --json output (or its printed log)")
    ap.add_argument("--top", type=int, default=3)
    ap.add_argument("--gflops", type=float, help="float32 GEMM rate of the target (2 cores)")
    ap.add_argument("--pass-gbs", type=float, help="float32 pass rate of the target, GB/s")
    ap.add_argument("--mlp-pairs", type=int, default=143,
                    help="pairs of the MLP check (costed as the mean pair)")
    args = ap.parse_args()
    text = Path(args.measured).read_text()
    try:
        measured = json.loads(text)
    except json.JSONDecodeError:  # the benchmark's log: one JSON object per measured shape
        measured = [json.loads(line) for line in text.splitlines()
                    if line.startswith("{") and '"n_train"' in line]
    print(json.dumps({**project(measured, args.top, gflops=args.gflops, pass_gbs=args.pass_gbs),
                      **project_mlp(measured, args.mlp_pairs)}, indent=1))


if __name__ == "__main__":
    main()
