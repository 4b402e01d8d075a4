"""Several layers from one forward: L layers cost <= 1.3x one layer (issue 18, item 6).

Measured in one process, on the same rows, with the same model loaded twice (once with the
default single last layer, once with ``layers``): geneb's runner embeds the rows into a
fresh store each time (tokenising, batching, pooling and store writes included; loading and
the load-time self-test excluded). The ratio is median(L-layer run) / median(1-layer run)
over ``--repeats`` interleaved runs, wall time and process CPU time (CPU time is less
sensitive to other load on a shared machine). Target: <= 1.3.

The model is the benchmark BERT of ``extract_throughput.py`` (hidden 384, 6 layers, seeded
random weights on the real DNABERT-2 tokenizer; cost does not depend on weight values):

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/extract_layers.py --data-dir ../shared/data \\
        [--layers -1,-2,-4,0] [--rows 256] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from extract_throughput import Clock, build_dna_bert, subset_task  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def run(embedder, task, batch_tokens: int) -> tuple[Clock, dict[str, np.ndarray]]:
    """geneb's runner on ``task`` into a fresh store: (clock, embeddings per store key)."""
    from geneb.extract.runner import extract
    from geneb.store import FeatureStore

    with tempfile.TemporaryDirectory() as d:
        with Clock() as c:
            res = extract(d, embedder, task, ("train",), batch_tokens=batch_tokens)
        fs = FeatureStore(d)
        embs = {r.key.model: np.asarray(fs.get(r.key.model, task.name, "train").embeddings)
                for r in res}  # fmt: skip
    return c, embs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", default=str(Path(__file__).resolve().parents[2] / "shared/data"))
    ap.add_argument("--tokenizers", default=None, help="default: <data-dir>/../models/tokenizers")
    ap.add_argument("--task", default="dhs_idhs_fflg")
    ap.add_argument("--rows", type=int, default=256)
    ap.add_argument("--layers", default="-1,-2,-4,0")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--batch-tokens", type=int, default=4096)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--json", default=None, help="also write the figures to this file")
    args = ap.parse_args()

    from geneb.models.adapters.hf import HFEmbedder
    from geneb.tasks.folders import resolve_task

    layers = [int(x) for x in args.layers.split(",")]
    tok_dir = Path(args.tokenizers or Path(args.data_dir).parent / "models" / "tokenizers")
    task = subset_task(resolve_task(str(Path(args.data_dir) / args.task)), "train", args.rows)
    with tempfile.TemporaryDirectory() as tmp:
        folder = build_dna_bert(Path(tmp), tok_dir)
        one = HFEmbedder(str(folder), device=args.device)
        many = HFEmbedder(str(folder), device=args.device, layers=layers)
        runs: dict[str, list[Clock]] = {"one": [], "many": []}
        for _ in range(args.repeats):  # interleaved, so drifting load hits both alike
            c1, e1 = run(one, task, args.batch_tokens)
            cl, el = run(many, task, args.batch_tokens)
            runs["one"].append(c1)
            runs["many"].append(cl)
    # the last layer of the L-layer run is the 1-layer entry, to the bit
    same = np.array_equal(e1[one.name], el[one.name])
    med = {k: {t: statistics.median(getattr(c, t) for c in v) for t in ("wall", "cpu")}
           for k, v in runs.items()}  # fmt: skip
    out = {
        "model": "bert384-dnabert2-tok (6 layers, hidden 384)",
        "task": args.task,
        "rows": len(task.split("train")),
        "layers": layers,
        "entries_written": len(el),
        "repeats": args.repeats,
        "one_layer_s": med["one"],
        "n_layers_s": med["many"],
        "ratio_wall": med["many"]["wall"] / med["one"]["wall"],
        "ratio_cpu": med["many"]["cpu"] / med["one"]["cpu"],
        "last_layer_bit_identical": bool(same),
        "target": "<= 1.3",
    }
    out["target_met"] = out["ratio_wall"] <= 1.3 and out["ratio_cpu"] <= 1.3
    print(json.dumps(out, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
